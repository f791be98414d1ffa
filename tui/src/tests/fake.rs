//! A recording fake of the admin API: it answers from the fixtures, keeps status changes (as
//! the host persists them), and records every request as the HTTP request the real client
//! would send, so tests can assert exactly what went to the host.

use super::fixtures;
use crate::api::{
    AccountDetail, AccountReportPage, AccountReportQuery, AdminApi, CampaignReport, ClientError,
    Event, EventPage, ImportItem, ImportPage, ImportQuery, Migration, Plugin, StorageState,
    StorageStatus, Supplier, SupplierStatus,
};
use crate::app::{Action, App};
use crate::calls::{ApiCall, perform};
use crate::keys::handle_key;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use serde_json::{Value, json};
use std::sync::Mutex;

/// One request as it would go over HTTP.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
}

impl Request {
    fn new(method: &'static str, path: impl Into<String>, body: Option<Value>) -> Self {
        Self {
            method,
            path: path.into(),
            body,
        }
    }
}

/// How the fake host behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Everything of the contract is deployed.
    Complete,
    /// Only today's endpoints exist: the others answer a plain 404.
    Today,
    /// Nothing answers.
    Down,
}

pub struct FakeApi {
    host: Host,
    suppliers: Mutex<Vec<Supplier>>,
    imports: Vec<ImportItem>,
    events: Mutex<Vec<Event>>,
    storage: Mutex<StorageStatus>,
    requests: Mutex<Vec<Request>>,
}

fn missing() -> ClientError {
    ClientError::Refused {
        status: 404,
        code: "not_found".to_owned(),
        detail: "Not found.".to_owned(),
        errors: Vec::new(),
    }
}

impl FakeApi {
    pub fn new(host: Host) -> Self {
        Self::with(host, fixtures::suppliers(), fixtures::events())
    }

    /// A host whose suppliers have long codes and whose events have long types.
    pub fn with_long_names(host: Host) -> Self {
        Self::with(
            host,
            fixtures::long_named_suppliers(),
            fixtures::long_typed_events(),
        )
    }

    fn with(host: Host, suppliers: Vec<Supplier>, events: Vec<Event>) -> Self {
        Self {
            host,
            suppliers: Mutex::new(suppliers),
            imports: fixtures::imports(),
            events: Mutex::new(events),
            storage: Mutex::new(StorageStatus {
                state: StorageState::Writable,
                free_bytes: Some(44_263_538_688),
                watermark_bytes: 256 * 1024 * 1024,
                reason: None,
            }),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// The host's store from now on: below its watermark, with the server's own reason.
    pub fn fill_disk(&self) {
        *self.storage.lock().expect("lock") = StorageStatus {
            state: StorageState::ReadOnly,
            free_bytes: Some(120 * 1024 * 1024),
            watermark_bytes: 256 * 1024 * 1024,
            reason: Some(
                "The server's data directory has 120.0 MiB free, below its watermark of 256.0 MiB: writes are refused until an operator frees space there or grows the volume, and are taken again by themselves once it is back above the mark. Reads still work.".to_owned(),
            ),
        };
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("lock").clone()
    }

    /// The requests that change something on the host.
    pub fn changes(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|request| request.method != "GET")
            .collect()
    }

    pub fn supplier(&self, code: &str) -> Supplier {
        self.suppliers
            .lock()
            .expect("lock")
            .iter()
            .find(|s| s.code == code)
            .cloned()
            .expect("a fixture supplier")
    }

    /// Records the request; fails the way the host is set up to.
    /// The host's retention takes its oldest events out of the log, through `seq`.
    pub fn take_out_events_through(&self, seq: u64) {
        self.events
            .lock()
            .expect("lock")
            .retain(|event| event.seq > seq);
    }

    /// The host logs another event.
    pub fn log_event(&self, event: Event) {
        self.events.lock().expect("lock").push(event);
    }

    fn known_supplier(&self, code: &str) -> Result<Supplier, ClientError> {
        let suppliers = self.suppliers.lock().expect("lock");
        suppliers
            .iter()
            .find(|s| s.code == code)
            .cloned()
            .ok_or_else(|| ClientError::Refused {
                status: 404,
                code: "import_supplier_not_found".to_owned(),
                detail: "Import supplier not found.".to_owned(),
                errors: Vec::new(),
            })
    }

    fn receive(&self, request: Request, deployed_today: bool) -> Result<(), ClientError> {
        self.requests.lock().expect("lock").push(request);
        match self.host {
            Host::Down => Err(ClientError::Unreachable("connection refused".to_owned())),
            Host::Today if !deployed_today => Err(missing()),
            Host::Today | Host::Complete => Ok(()),
        }
    }
}

impl AdminApi for FakeApi {
    async fn suppliers(&self) -> Result<Vec<Supplier>, ClientError> {
        self.receive(Request::new("GET", "/admin/v1/suppliers", None), true)?;
        Ok(self.suppliers.lock().expect("lock").clone())
    }

    async fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> Result<Supplier, ClientError> {
        let body = json!({"status": status.as_str()});
        let path = format!("/admin/v1/suppliers/{code}");
        self.receive(Request::new("PATCH", path, Some(body)), true)?;
        let mut suppliers = self.suppliers.lock().expect("lock");
        let supplier = suppliers
            .iter_mut()
            .find(|s| s.code == code)
            .ok_or_else(|| ClientError::Refused {
                status: 404,
                code: "import_supplier_not_found".to_owned(),
                detail: "Import supplier not found.".to_owned(),
                errors: Vec::new(),
            })?;
        supplier.status = status;
        Ok(supplier.clone())
    }

    async fn imports(&self, code: &str, query: &ImportQuery) -> Result<ImportPage, ClientError> {
        let mut path = format!("/admin/v1/suppliers/{code}/imports?limit={}", query.limit);
        if let Some(state) = query.state {
            path.push_str(&format!("&state={}", state.as_str()));
        }
        if !query.search.is_empty() {
            path.push_str(&format!("&q={}", query.search));
        }
        if let Some(after) = &query.after {
            path.push_str(&format!("&after={after}"));
        }
        self.receive(Request::new("GET", path, None), false)?;
        let rows = if code == "OLD_CO" {
            &self.imports[..]
        } else {
            &[]
        };
        let search = query.search.to_lowercase();
        let matching: Vec<ImportItem> = rows
            .iter()
            .filter(|row| query.state.is_none_or(|state| row.state == state))
            .filter(|row| row.external_account_number.to_lowercase().contains(&search))
            .cloned()
            .collect();
        let (items, next_after) = page_after(
            matching,
            |row| &row.external_account_number,
            query.after.as_deref(),
            query.limit,
        );
        Ok(ImportPage { items, next_after })
    }

    async fn account(&self, number: &str) -> Result<AccountDetail, ClientError> {
        let path = format!("/admin/v1/accounts/{number}");
        self.receive(Request::new("GET", path, None), true)?;
        [fixtures::account(), fixtures::mismatched_account()]
            .into_iter()
            .find(|account| account.platform_account_number == number)
            .ok_or_else(|| ClientError::Refused {
                status: 404,
                code: "account_not_found".to_owned(),
                detail: "Account not found.".to_owned(),
                errors: Vec::new(),
            })
    }

    async fn start_migration(&self, code: &str) -> Result<Migration, ClientError> {
        let path = format!("/admin/v1/suppliers/{code}/migrations");
        self.receive(Request::new("POST", path, Some(json!({}))), false)?;
        let mut migration = fixtures::running_migration();
        migration.processed = 0;
        migration.failed = 0;
        Ok(migration)
    }

    async fn migrations(&self, code: &str) -> Result<Vec<Migration>, ClientError> {
        let path = format!("/admin/v1/suppliers/{code}/migrations");
        self.receive(Request::new("GET", path, None), false)?;
        Ok(if code == "OLD_CO" {
            vec![fixtures::running_migration()]
        } else {
            Vec::new()
        })
    }

    async fn migration(&self, code: &str, id: &str) -> Result<Migration, ClientError> {
        let path = format!("/admin/v1/suppliers/{code}/migrations/{id}");
        self.receive(Request::new("GET", path, None), false)?;
        Ok(fixtures::running_migration())
    }

    async fn plugin(&self, code: &str) -> Result<Plugin, ClientError> {
        let path = format!("/admin/v1/suppliers/{code}/plugin");
        self.receive(Request::new("GET", path, None), false)?;
        let supplier = self.suppliers.lock().expect("lock");
        supplier
            .iter()
            .find(|s| s.code == code)
            .and_then(fixtures::plugin_of)
            .ok_or_else(|| ClientError::Refused {
                status: 404,
                code: "plugin_not_found".to_owned(),
                detail: "This supplier has no plugin.".to_owned(),
                errors: Vec::new(),
            })
    }

    async fn events(&self, after: Option<&str>, limit: u32) -> Result<EventPage, ClientError> {
        let mut path = format!("/admin/v1/events?limit={limit}");
        if let Some(after) = after {
            path.push_str(&format!("&after={after}"));
        }
        self.receive(Request::new("GET", path, None), false)?;
        fixtures::events_after(
            &self.events.lock().expect("lock"),
            after,
            usize::try_from(limit).expect("limit"),
        )
    }

    async fn storage(&self) -> Result<StorageStatus, ClientError> {
        self.receive(Request::new("GET", "/admin/v1/storage", None), false)?;
        Ok(self.storage.lock().expect("lock").clone())
    }

    async fn campaign_report(&self, code: &str) -> Result<CampaignReport, ClientError> {
        let path = format!("/admin/v1/suppliers/{code}/report");
        self.receive(Request::new("GET", path, None), false)?;
        Ok(fixtures::campaign_report(&self.known_supplier(code)?))
    }

    async fn report_accounts(
        &self,
        code: &str,
        query: &AccountReportQuery,
    ) -> Result<AccountReportPage, ClientError> {
        let pairs: Vec<String> = query
            .pairs()
            .into_iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let path = format!(
            "/admin/v1/suppliers/{code}/report/accounts?{}",
            pairs.join("&")
        );
        self.receive(Request::new("GET", path, None), false)?;
        let rows = fixtures::report_rows(&self.known_supplier(code)?);
        let matches =
            |wanted: &Option<String>, value: &Option<String>| wanted.is_none() || wanted == value;
        let matching: Vec<_> = rows
            .into_iter()
            .filter(|row| query.state.as_ref().is_none_or(|state| row.state == *state))
            .filter(|row| matches(&query.reconciliation, &row.reconciliation))
            .filter(|row| matches(&query.error_code, &row.error_code))
            .collect();
        let (accounts, next_after) = page_after(
            matching,
            |row| &row.external_account_number,
            query.after.as_deref(),
            query.limit,
        );
        Ok(AccountReportPage {
            accounts,
            next_after,
        })
    }
}

/// The page of `rows` (ordered by external account number, which `number` reads) after the
/// row `after`, `limit` rows at most (100 for 0), with the cursor of the next page when more
/// follow: as the host pages its lists.
fn page_after<T>(
    rows: Vec<T>,
    number: impl Fn(&T) -> &String,
    after: Option<&str>,
    limit: u32,
) -> (Vec<T>, Option<String>) {
    let limit = match limit {
        0 => 100,
        limit => usize::try_from(limit).expect("limit"),
    };
    let mut rest: Vec<T> = rows
        .into_iter()
        .filter(|row| after.is_none_or(|after| number(row).as_str() > after))
        .collect();
    let more = rest.len() > limit;
    rest.truncate(limit);
    let next_after = rest.last().filter(|_| more).map(|row| number(row).clone());
    (rest, next_after)
}

/// Does what the event loop does with an action: makes the calls (and the calls that follow
/// from their answers) and feeds the answers into the state. Returns whether it was Quit.
pub async fn settle(app: &mut App, api: &FakeApi, action: Option<Action>) -> bool {
    let mut calls: Vec<ApiCall> = match action {
        Some(Action::Quit) => return true,
        Some(Action::Call(call)) => vec![call],
        Some(Action::Refresh) => app.refresh_calls(),
        None => Vec::new(),
    };
    let mut made = 0;
    while !calls.is_empty() {
        made += 1;
        assert!(made < 100, "calls keep coming: {calls:?}");
        let call = calls.remove(0);
        let done = perform(api, call).await;
        calls.extend(app.apply(done));
    }
    false
}

/// Presses each key in turn, settling after each.
pub async fn press(app: &mut App, api: &FakeApi, keys: &[KeyCode]) {
    for code in keys {
        let action = handle_key(app, KeyEvent::from(*code));
        settle(app, api, action).await;
    }
}

/// A fresh console that has loaded its first screen from `api`.
pub async fn started(api: &FakeApi) -> App {
    let mut app = App::new("http://127.0.0.1:8080", 3);
    settle(&mut app, api, Some(Action::Refresh)).await;
    app
}

/// The keys of a string, one `Char` each.
pub fn typed(text: &str) -> Vec<KeyCode> {
    text.chars().map(KeyCode::Char).collect()
}
