//! The console's state in plain structs: which screen is shown, what each screen has loaded
//! and selected, the open dialog, and how the host is doing.
//!
//! State changes in two ways only: key handling (see [`crate::keys`]) and answers from the host
//! ([`App::apply`]). Neither does any I/O; both return the admin calls to make next. The
//! Campaign screen's state is in [`campaign`].

mod campaign;

pub use campaign::{CampaignState, GroupAccounts};

use crate::api::{
    AccountDetail, ClientError, Event, ImportPage, ImportQuery, ImportState, Migration, Plugin,
    RelayStatus, StorageStatus, Supplier, SupplierStatus,
};
use crate::calls::{ApiCall, ApiReply, Completed};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Rows asked for per page of imports.
pub const IMPORTS_PAGE_SIZE: u32 = 50;
/// Events kept in memory for the live tail; older ones are dropped.
pub const EVENTS_KEPT: usize = 500;

/// The five screens, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Suppliers,
    Imports,
    Events,
    Plugins,
    Campaign,
}

impl Screen {
    pub const ALL: [Screen; 5] = [
        Self::Suppliers,
        Self::Imports,
        Self::Events,
        Self::Plugins,
        Self::Campaign,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Self::Suppliers => "Suppliers",
            Self::Imports => "Imports",
            Self::Events => "Events",
            Self::Plugins => "Plugins",
            Self::Campaign => "Campaign",
        }
    }

    fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|screen| *screen == self)
            .unwrap_or(0)
    }

    pub fn next(self) -> Self {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn previous(self) -> Self {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

/// What key handling asks the event loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Make one admin call.
    Call(ApiCall),
    /// Reload what the current screen shows (every call of [`App::refresh_calls`]).
    Refresh,
}

/// How the host answered most recently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostStatus {
    /// No answer yet.
    Connecting,
    Connected,
    /// The last call got no answer at all.
    Unreachable(String),
    /// The host refused the operator key.
    Unauthorized(String),
}

/// Something loaded from the host, or why it is not there.
#[derive(Debug, Clone, PartialEq)]
pub enum Loadable<T> {
    Loading,
    Ready(T),
    /// Nothing to show, for an expected reason (the endpoint is not deployed yet, no plugin).
    Unavailable(String),
    /// The host answered with an error.
    Failed(String),
}

impl<T> Loadable<T> {
    pub fn ready(&self) -> Option<&T> {
        match self {
            Self::Ready(value) => Some(value),
            _ => None,
        }
    }
}

/// A question the operator must answer before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dialog {
    ConfirmStatus {
        code: String,
        name: String,
        from: SupplierStatus,
        to: SupplierStatus,
    },
    ConfirmMigration {
        code: String,
        name: String,
        pending: u64,
    },
}

/// How long an informational message stays on screen.
pub const INFO_LIFETIME: Duration = Duration::from_secs(10);
/// How long an error message stays on screen (unless it is about the host being unreachable).
pub const ERROR_LIFETIME: Duration = Duration::from_secs(30);

/// What a message is about, which decides how it looks and when it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// Goes after [`INFO_LIFETIME`].
    Info,
    /// Goes after [`ERROR_LIFETIME`].
    Error,
    /// A request got no answer because the host was unreachable: goes as soon as the host
    /// answers again.
    HostUnreachable,
}

/// A one-line message about the last thing done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub kind: MessageKind,
    /// When it was shown ([`App::now`] then); it ages from there.
    pub shown_at: Instant,
}

impl Message {
    pub fn is_error(&self) -> bool {
        self.kind != MessageKind::Info
    }

    /// Whether it has been on screen long enough by `now`.
    fn has_aged_out(&self, now: Instant) -> bool {
        let shown_for = now.saturating_duration_since(self.shown_at);
        match self.kind {
            MessageKind::Info => shown_for >= INFO_LIFETIME,
            MessageKind::Error => shown_for >= ERROR_LIFETIME,
            MessageKind::HostUnreachable => false,
        }
    }
}

/// The suppliers list, shared by the Suppliers and Plugins screens (one selection for both).
#[derive(Debug, Clone, PartialEq)]
pub struct SuppliersState {
    pub list: Loadable<Vec<Supplier>>,
    pub selected: usize,
    /// The newest migration of each supplier looked at (`None`: it never had one).
    pub migrations: BTreeMap<String, Loadable<Option<Migration>>>,
}

impl SuppliersState {
    pub fn all(&self) -> &[Supplier] {
        self.list.ready().map(Vec::as_slice).unwrap_or_default()
    }

    pub fn selected(&self) -> Option<&Supplier> {
        self.all().get(self.selected)
    }

    fn replace(&mut self, supplier: Supplier) {
        if let Loadable::Ready(list) = &mut self.list
            && let Some(slot) = list.iter_mut().find(|s| s.code == supplier.code)
        {
            *slot = supplier;
        }
    }
}

/// Where a list read page by page stands: the `after` cursors of the pages before this one,
/// first page first, and this page's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pages {
    pub previous: Vec<Option<String>>,
    pub after: Option<String>,
}

impl Pages {
    /// 1 for the first page.
    pub fn number(&self) -> usize {
        self.previous.len() + 1
    }

    pub fn is_first(&self) -> bool {
        self.previous.is_empty()
    }

    /// On to the page after the row `next`.
    fn forward(&mut self, next: String) {
        self.previous.push(self.after.take());
        self.after = Some(next);
    }

    /// Back to the page before; false on the first page.
    fn back(&mut self) -> bool {
        match self.previous.pop() {
            Some(previous) => {
                self.after = previous;
                true
            }
            None => false,
        }
    }
}

/// The Imports screen: one page of one supplier's import processes.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportsState {
    /// The supplier shown (chosen from the Suppliers screen).
    pub supplier: Option<String>,
    pub state_filter: Option<ImportState>,
    /// The search applied (substring of the external account number).
    pub search: String,
    /// The search being typed after `/`.
    pub search_input: Option<String>,
    pub pages: Pages,
    pub page: Loadable<ImportPage>,
    pub selected: usize,
    /// The account opened with Enter.
    pub detail: Option<AccountView>,
}

impl ImportsState {
    pub fn query(&self) -> ImportQuery {
        ImportQuery {
            state: self.state_filter,
            search: self.search.clone(),
            after: self.pages.after.clone(),
            limit: IMPORTS_PAGE_SIZE,
        }
    }

    /// The call that loads the current page.
    pub fn call(&self) -> Option<ApiCall> {
        self.supplier.as_ref().map(|code| ApiCall::Imports {
            code: code.clone(),
            query: self.query(),
        })
    }

    /// 1 for the first page.
    pub fn page_number(&self) -> usize {
        self.pages.number()
    }

    pub fn rows(&self) -> &[crate::api::ImportItem] {
        self.page
            .ready()
            .map(|page| page.items.as_slice())
            .unwrap_or_default()
    }

    /// Back to the first page (after the filter or search changed).
    fn restart(&mut self) {
        self.pages = Pages::default();
        self.selected = 0;
        self.page = Loadable::Loading;
    }

    /// Shows another supplier, with no filter.
    pub fn show_supplier(&mut self, code: &str) {
        if self.supplier.as_deref() != Some(code) {
            self.supplier = Some(code.to_owned());
            self.state_filter = None;
            self.search.clear();
            self.search_input = None;
            self.detail = None;
            self.restart();
        }
    }

    /// Sets the filter and search and goes back to the first page.
    pub fn filter(&mut self, state: Option<ImportState>, search: String) -> Option<ApiCall> {
        self.state_filter = state;
        self.search = search;
        self.restart();
        self.call()
    }

    pub fn next_page(&mut self) -> Option<ApiCall> {
        let next = self.page.ready()?.next_after.clone()?;
        self.pages.forward(next);
        self.selected = 0;
        self.page = Loadable::Loading;
        self.call()
    }

    pub fn previous_page(&mut self) -> Option<ApiCall> {
        if !self.pages.back() {
            return None;
        }
        self.selected = 0;
        self.page = Loadable::Loading;
        self.call()
    }
}

/// An account opened from the Imports or the Campaign screen.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountView {
    pub number: String,
    pub account: Loadable<Box<AccountDetail>>,
    /// First line shown.
    pub scroll: u16,
}

/// The Events screen: a live tail of the event log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventsState {
    /// The newest [`EVENTS_KEPT`] events seen, oldest first.
    pub events: Vec<Event>,
    /// Where the next poll starts (`None`: from the start of the log).
    pub after: Option<String>,
    pub selected: usize,
    /// Keep the newest event selected as events arrive.
    pub follow: bool,
    pub relay: Option<RelayStatus>,
    /// Why there is nothing to show (endpoint missing, error answer).
    pub problem: Option<String>,
    /// Whether the log has answered at least once.
    pub loaded: bool,
}

impl AccountView {
    /// The account `number`, loading.
    pub fn new(number: String) -> Self {
        Self {
            number,
            account: Loadable::Loading,
            scroll: 0,
        }
    }
}

impl EventsState {
    pub fn selected(&self) -> Option<&Event> {
        self.events.get(self.selected)
    }
}

/// The Plugins screen: details of the selected supplier's plugin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PluginsState {
    pub details: BTreeMap<String, Loadable<Plugin>>,
}

/// Everything the console knows.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub host_url: String,
    pub refresh_seconds: u64,
    pub screen: Screen,
    pub show_help: bool,
    pub dialog: Option<Dialog>,
    pub host: HostStatus,
    pub message: Option<Message>,
    /// The time as the event loop last gave it ([`App::tick`]); messages age by it.
    pub now: Instant,
    pub suppliers: SuppliersState,
    pub imports: ImportsState,
    pub events: EventsState,
    pub plugins: PluginsState,
    pub campaign: CampaignState,
    /// Whether the host's store takes writes (shown on the Suppliers screen).
    pub storage: Loadable<StorageStatus>,
}

impl App {
    pub fn new(host_url: impl Into<String>, refresh_seconds: u64) -> Self {
        Self {
            host_url: host_url.into(),
            refresh_seconds,
            screen: Screen::Suppliers,
            show_help: false,
            dialog: None,
            host: HostStatus::Connecting,
            message: None,
            now: Instant::now(),
            suppliers: SuppliersState {
                list: Loadable::Loading,
                selected: 0,
                migrations: BTreeMap::new(),
            },
            imports: ImportsState {
                supplier: None,
                state_filter: None,
                search: String::new(),
                search_input: None,
                pages: Pages::default(),
                page: Loadable::Loading,
                selected: 0,
                detail: None,
            },
            events: EventsState {
                follow: true,
                ..EventsState::default()
            },
            plugins: PluginsState::default(),
            campaign: CampaignState::new(),
            storage: Loadable::Loading,
        }
    }

    /// The calls that bring the current screen up to date; made every refresh interval.
    pub fn refresh_calls(&self) -> Vec<ApiCall> {
        let selected_code = self.suppliers.selected().map(|s| s.code.clone());
        match self.screen {
            Screen::Suppliers => {
                let mut calls = vec![ApiCall::Suppliers, ApiCall::Storage];
                calls.extend(selected_code.map(|code| self.migration_call(&code)));
                calls
            }
            Screen::Imports => {
                if let Some(detail) = &self.imports.detail {
                    return vec![ApiCall::Account {
                        number: detail.number.clone(),
                    }];
                }
                match self.imports.call() {
                    Some(call) => vec![call],
                    // No supplier chosen yet: the suppliers list provides one.
                    None => vec![ApiCall::Suppliers],
                }
            }
            Screen::Events => vec![ApiCall::Events {
                after: self.events.after.clone(),
            }],
            Screen::Plugins => {
                let mut calls = vec![ApiCall::Suppliers];
                calls.extend(selected_code.map(|code| ApiCall::Plugin { code }));
                calls
            }
            Screen::Campaign => {
                let campaign = &self.campaign;
                if let Some(detail) = &campaign.detail {
                    return vec![ApiCall::Account {
                        number: detail.number.clone(),
                    }];
                }
                match campaign.report_call() {
                    Some(report) => {
                        let mut calls = vec![report];
                        calls.extend(campaign.accounts_call());
                        calls
                    }
                    // No supplier chosen yet: the suppliers list provides one.
                    None => vec![ApiCall::Suppliers],
                }
            }
        }
    }

    /// Polls a running migration by id, otherwise asks for the newest.
    pub fn migration_call(&self, code: &str) -> ApiCall {
        match self.suppliers.migrations.get(code) {
            Some(Loadable::Ready(Some(migration))) if migration.is_running() => {
                ApiCall::Migration {
                    code: code.to_owned(),
                    id: migration.id.clone(),
                }
            }
            _ => ApiCall::LatestMigration {
                code: code.to_owned(),
            },
        }
    }

    /// Moves the clock to `now` and drops a message that has been shown long enough.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        if self.message.as_ref().is_some_and(|m| m.has_aged_out(now)) {
            self.message = None;
        }
    }

    /// Shows a message of `kind`, from now.
    pub fn say(&mut self, kind: MessageKind, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            kind,
            shown_at: self.now,
        });
    }

    /// Shows an informational message.
    pub fn say_info(&mut self, text: impl Into<String>) {
        self.say(MessageKind::Info, text);
    }

    /// Shows an error message.
    pub fn say_error(&mut self, text: impl Into<String>) {
        self.say(MessageKind::Error, text);
    }

    /// The host answered (whatever the answer): it is reachable, so a message about it being
    /// unreachable no longer holds.
    fn host_answered(&mut self, status: HostStatus) {
        self.host = status;
        if self
            .message
            .as_ref()
            .is_some_and(|m| m.kind == MessageKind::HostUnreachable)
        {
            self.message = None;
        }
    }

    /// Switches screen; the event loop then refreshes it.
    pub fn show(&mut self, screen: Screen) -> Option<Action> {
        self.screen = screen;
        self.dialog = None;
        self.message = None;
        let code = self.suppliers.selected().map(|s| s.code.clone());
        if let Some(code) = code {
            match screen {
                Screen::Imports if self.imports.supplier.is_none() => {
                    self.imports.show_supplier(&code);
                }
                Screen::Campaign if self.campaign.supplier.is_none() => {
                    self.campaign.show_supplier(&code);
                }
                _ => {}
            }
        }
        Some(Action::Refresh)
    }

    /// Takes in an answer; returns the calls that should follow it.
    pub fn apply(&mut self, done: Completed) -> Vec<ApiCall> {
        let Completed { call, result } = done;
        match result {
            Ok(reply) => {
                self.host_answered(HostStatus::Connected);
                self.apply_reply(call, reply)
            }
            Err(ClientError::Unreachable(reason)) => {
                if let Some(what) = operator_request(&call) {
                    self.say(
                        MessageKind::HostUnreachable,
                        format!(
                            "{what}: no answer from the host ({reason}). Refresh (r) once it is back to see the outcome."
                        ),
                    );
                }
                self.host = HostStatus::Unreachable(reason);
                Vec::new()
            }
            Err(error) if error.is_unauthorized() => {
                self.host_answered(HostStatus::Unauthorized(error.to_string()));
                Vec::new()
            }
            Err(error) => {
                self.host_answered(HostStatus::Connected);
                self.apply_error(call, error)
            }
        }
    }

    fn apply_reply(&mut self, call: ApiCall, reply: ApiReply) -> Vec<ApiCall> {
        match (call, reply) {
            (ApiCall::Suppliers, ApiReply::Suppliers(list)) => {
                let selected_code = self.suppliers.selected().map(|s| s.code.clone());
                self.suppliers.selected = selected_code
                    .and_then(|code| list.iter().position(|s| s.code == code))
                    .unwrap_or(self.suppliers.selected)
                    .min(list.len().saturating_sub(1));
                self.suppliers.list = Loadable::Ready(list);
                let Some(code) = self.suppliers.selected().map(|s| s.code.clone()) else {
                    return Vec::new();
                };
                // What the screen shows about the selected supplier, if not known yet.
                match self.screen {
                    Screen::Suppliers if !self.suppliers.migrations.contains_key(&code) => {
                        vec![self.migration_call(&code)]
                    }
                    Screen::Plugins if !self.plugins.details.contains_key(&code) => {
                        vec![ApiCall::Plugin { code }]
                    }
                    Screen::Imports if self.imports.supplier.is_none() => {
                        self.imports.show_supplier(&code);
                        self.imports.call().into_iter().collect()
                    }
                    Screen::Campaign if self.campaign.supplier.is_none() => {
                        self.campaign.show_supplier(&code);
                        self.campaign.report_call().into_iter().collect()
                    }
                    _ => Vec::new(),
                }
            }
            (ApiCall::SetStatus { code, status }, ApiReply::Supplier(supplier)) => {
                self.say_info(format!(
                    "{code} is now {}. {}",
                    supplier.status,
                    crate::api::consequence(status)
                ));
                self.suppliers.replace(supplier);
                Vec::new()
            }
            (ApiCall::StartMigration { code }, ApiReply::Migration(migration)) => {
                if let Some(migration) = &migration {
                    self.say_info(format!(
                        "Migration started for the {} pending accounts of {code}.",
                        migration.total
                    ));
                }
                self.suppliers
                    .migrations
                    .insert(code, Loadable::Ready(migration));
                vec![ApiCall::Suppliers]
            }
            (
                ApiCall::LatestMigration { code } | ApiCall::Migration { code, .. },
                ApiReply::Migration(migration),
            ) => {
                let was_running = matches!(
                    self.suppliers.migrations.get(&code),
                    Some(Loadable::Ready(Some(previous))) if previous.is_running()
                );
                let now_finished = migration.as_ref().is_some_and(|m| !m.is_running());
                self.suppliers
                    .migrations
                    .insert(code, Loadable::Ready(migration));
                if was_running && now_finished {
                    // The counts per state changed: show them.
                    vec![ApiCall::Suppliers]
                } else {
                    Vec::new()
                }
            }
            (ApiCall::Imports { code, query }, ApiReply::Imports(page)) => {
                if self.imports.supplier.as_deref() == Some(code.as_str())
                    && query == self.imports.query()
                {
                    self.imports.selected = self
                        .imports
                        .selected
                        .min(page.items.len().saturating_sub(1));
                    self.imports.page = Loadable::Ready(page);
                }
                Vec::new()
            }
            (ApiCall::Account { number }, ApiReply::Account(account)) => {
                for detail in self.account_views(&number) {
                    detail.account = Loadable::Ready(account.clone());
                }
                Vec::new()
            }
            (ApiCall::Report { code }, ApiReply::Report(report)) => {
                self.campaign.take_report(&code, *report);
                Vec::new()
            }
            (ApiCall::ReportAccounts { code, group, after }, ApiReply::ReportAccounts(page)) => {
                self.campaign.take_page(&code, &group, &after, page);
                Vec::new()
            }
            (ApiCall::Plugin { code }, ApiReply::Plugin(plugin)) => {
                self.plugins.details.insert(code, Loadable::Ready(plugin));
                Vec::new()
            }
            (ApiCall::Events { after }, ApiReply::Events(page)) => self.take_events(after, page),
            (ApiCall::Storage, ApiReply::Storage(status)) => {
                self.storage = Loadable::Ready(status);
                Vec::new()
            }
            // A reply that does not belong to its call: nothing to do with it.
            _ => Vec::new(),
        }
    }

    /// The open account views (on the Imports and Campaign screens) of the account `number`.
    fn account_views(&mut self, number: &str) -> impl Iterator<Item = &mut AccountView> {
        [&mut self.imports.detail, &mut self.campaign.detail]
            .into_iter()
            .flatten()
            .filter(move |detail| detail.number == number)
    }

    fn take_events(&mut self, after: Option<String>, page: crate::api::EventPage) -> Vec<ApiCall> {
        let events = &mut self.events;
        if after != events.after {
            // An answer to an older poll; a newer one is under way or done.
            return Vec::new();
        }
        events.loaded = true;
        events.problem = None;
        events.relay = Some(page.relay);
        let arrived = !page.events.is_empty();
        // By `seq`, not id: the host's retention may take the last event seen out of the log,
        // and then its id finds nothing (400), where its `seq` still reads on from there.
        if let Some(last) = page.events.last() {
            events.after = Some(last.seq.to_string());
        }
        events.events.extend(page.events);
        let excess = events.events.len().saturating_sub(EVENTS_KEPT);
        if excess > 0 {
            events.events.drain(..excess);
            events.selected = events.selected.saturating_sub(excess);
        }
        if events.follow {
            events.selected = events.events.len().saturating_sub(1);
        }
        match page.next_after {
            // More are waiting: catch up at once rather than one page per refresh.
            Some(next) if arrived => {
                events.after = Some(next.clone());
                vec![ApiCall::Events { after: Some(next) }]
            }
            _ => Vec::new(),
        }
    }

    fn apply_error(&mut self, call: ApiCall, error: ClientError) -> Vec<ApiCall> {
        match call {
            ApiCall::Suppliers => {
                if self.suppliers.list.ready().is_some() {
                    self.say_error(format!("Refreshing the suppliers failed: {error}"));
                } else {
                    self.suppliers.list = Loadable::Failed(error.to_string());
                }
                Vec::new()
            }
            ApiCall::SetStatus { code, status } => {
                self.say_error(format!(
                    "Could not set {code} to {}: {error}",
                    status.as_str()
                ));
                Vec::new()
            }
            ApiCall::StartMigration { code } => {
                if error.code() == "migration_already_running" {
                    self.say_error(format!("A migration is already running for {code}."));
                    return vec![ApiCall::LatestMigration { code }];
                }
                self.say_error(if error.is_missing_endpoint() {
                    "Bulk migration is not available on this host yet.".to_owned()
                } else {
                    format!("Could not start the migration of {code}: {error}")
                });
                Vec::new()
            }
            ApiCall::LatestMigration { code } | ApiCall::Migration { code, .. } => {
                let state = if error.is_missing_endpoint() {
                    Loadable::Unavailable(
                        "Bulk migration is not available on this host yet.".to_owned(),
                    )
                } else {
                    Loadable::Failed(error.to_string())
                };
                self.suppliers.migrations.insert(code, state);
                Vec::new()
            }
            ApiCall::Imports { code, query } => {
                if self.imports.supplier.as_deref() == Some(code.as_str())
                    && query == self.imports.query()
                {
                    self.imports.page = if error.is_missing_endpoint() {
                        Loadable::Unavailable(
                            "Listing imports is not available on this host yet.".to_owned(),
                        )
                    } else {
                        Loadable::Failed(error.to_string())
                    };
                }
                Vec::new()
            }
            ApiCall::Account { number } => {
                for detail in self.account_views(&number) {
                    detail.account = Loadable::Failed(error.to_string());
                }
                Vec::new()
            }
            ApiCall::Report { code } => {
                if let Some(text) = self.campaign.take_report_failure(&code, &error) {
                    self.say_error(text);
                }
                Vec::new()
            }
            ApiCall::ReportAccounts { code, group, after } => {
                self.campaign
                    .take_page_failure(&code, &group, &after, &error);
                Vec::new()
            }
            ApiCall::Plugin { code } => {
                let state = if error.code() == "plugin_not_found" {
                    Loadable::Unavailable(format!("{code} has no plugin installed."))
                } else if error.is_missing_endpoint() {
                    Loadable::Unavailable("Plugins are not available on this host yet.".to_owned())
                } else {
                    Loadable::Failed(error.to_string())
                };
                self.plugins.details.insert(code, state);
                Vec::new()
            }
            ApiCall::Storage => {
                self.storage = if error.is_missing_endpoint() {
                    Loadable::Unavailable("not reported by this host".to_owned())
                } else {
                    Loadable::Failed(error.to_string())
                };
                Vec::new()
            }
            ApiCall::Events { after } => {
                if after == self.events.after {
                    self.events.problem = Some(if error.is_missing_endpoint() {
                        "The event log is not available on this host yet.".to_owned()
                    } else {
                        error.to_string()
                    });
                }
                Vec::new()
            }
        }
    }
}

/// The operator's own requests (as opposed to background loads), described for messages.
fn operator_request(call: &ApiCall) -> Option<String> {
    match call {
        ApiCall::SetStatus { code, status } => {
            Some(format!("Could not set {code} to {}", status.as_str()))
        }
        ApiCall::StartMigration { code } => Some(format!("Could not start migrating {code}")),
        _ => None,
    }
}
