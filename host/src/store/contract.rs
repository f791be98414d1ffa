//! The storage port's contract, as tests every backend runs: a change is all or nothing,
//! concurrent changes of one key keep exactly one, ids are never handed out twice, the
//! outbox keeps the order changes committed in, an import change carries its account, counts
//! and events together, and what was flushed is there after the store is opened again.
//!
//! A backend runs the whole suite with [`contract_tests!`], given a constructor of a fresh,
//! empty [`Backend`]:
//!
//! ```ignore
//! contract_tests!(SledBackend::new);
//! ```

use crate::domain::account::{AccountLimits, read_account};
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::import_process::{ImportProcess, ImportState, PlatformAccount};
use crate::domain::storage::{AccountTable, ImportChange, Store};
use chrono::Utc;
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A place a backend keeps its data in, for the length of one test.
pub trait Backend {
    /// Opens the store on this backend's data; again after every handle was dropped, the
    /// same data.
    fn open(&self) -> Arc<dyn Store>;
}

/// One test per scenario of the contract, for the backend `$fresh()` makes.
#[macro_export]
#[doc(hidden)]
macro_rules! contract_tests {
    ($fresh:expr) => {
        mod contract {
            use super::*;
            use $crate::store::contract as scenario;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_failed_change_leaves_nothing() {
                scenario::a_failed_change_leaves_nothing(&$fresh()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn concurrent_inserts_of_one_key_keep_one() {
                scenario::concurrent_inserts_of_one_key_keep_one(&$fresh()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn ids_are_never_handed_out_twice() {
                scenario::ids_are_never_handed_out_twice(&$fresh()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_outbox_keeps_the_order_of_commits() {
                scenario::the_outbox_keeps_the_order_of_commits(&$fresh()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_import_change_carries_its_account_counts_and_events() {
                scenario::an_import_change_carries_its_account_counts_and_events(&$fresh()).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn flushed_changes_are_there_after_a_reopen() {
                scenario::flushed_changes_are_there_after_a_reopen(&$fresh()).await;
            }
        }
    };
}

pub use contract_tests;

fn event(account: &str) -> Event {
    Event::new(
        "account.occupied",
        "v1",
        Some(account),
        json!({"account_number": account}),
    )
    .expect("a catalogued event")
}

/// The events in the log, oldest first.
fn logged(store: &dyn Store) -> Vec<Event> {
    store.events_after(None, 100_000).expect("the event log")
}

pub async fn a_failed_change_leaves_nothing(backend: &dyn Backend) {
    let store = backend.open();
    let refused = store.change_account_records("A-00000001", &mut |tx| {
        tx.put(AccountTable::Notes, "1", &json!({"body": "half"}))?;
        tx.publish(&event("A-00000001"))?;
        Err(DomainError::AccountNotFound)
    });
    assert!(
        matches!(refused, Err(DomainError::AccountNotFound)),
        "{refused:?}"
    );
    let staged = store.change_import("OLD_CO", "ACC-1", &mut |_| {
        Err(DomainError::ImportInProgress)
    });
    assert!(
        matches!(staged, Err(DomainError::ImportInProgress)),
        "{staged:?}"
    );
    store.flush().await.expect("flush");
    assert_eq!(
        store
            .account_records("A-00000001", AccountTable::Notes)
            .expect("records"),
        Vec::<serde_json::Value>::new()
    );
    assert!(logged(store.as_ref()).is_empty());
    assert_eq!(store.outbox_len().expect("outbox"), 0);
    assert!(
        store
            .import_process("OLD_CO", "ACC-1")
            .expect("read")
            .is_none()
    );
    assert_eq!(
        store
            .import_counts("OLD_CO")
            .expect("counts")
            .get(ImportState::Pending),
        0
    );
}

pub async fn concurrent_inserts_of_one_key_keep_one(backend: &dyn Backend) {
    let store = backend.open();
    let writers = 16;
    let inserted: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|writer| {
                let store = store.clone();
                scope.spawn(move || {
                    // The change may run more than once: what counts is its last run.
                    let inserted = AtomicBool::new(false);
                    store
                        .change_account_records("A-00000001", &mut |tx| {
                            let here = tx.get(AccountTable::Transactions, "T-1")?.is_none();
                            inserted.store(here, Ordering::SeqCst);
                            if here {
                                tx.put(
                                    AccountTable::Transactions,
                                    "T-1",
                                    &json!({"writer": writer}),
                                )?;
                                tx.publish(&event("A-00000001"))?;
                            }
                            Ok(())
                        })
                        .expect("the change");
                    inserted.load(Ordering::SeqCst)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("writer"))
            .collect()
    });
    assert_eq!(inserted.iter().filter(|inserted| **inserted).count(), 1);
    let kept = store
        .account_records("A-00000001", AccountTable::Transactions)
        .expect("records");
    assert_eq!(kept.len(), 1);
    assert_eq!(
        logged(store.as_ref()).len(),
        1,
        "one event, with the one insert"
    );
}

pub async fn ids_are_never_handed_out_twice(backend: &dyn Backend) {
    let store = backend.open();
    let ids: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|writer| {
                let store = store.clone();
                scope.spawn(move || {
                    let mut ids = Vec::new();
                    for _ in 0..50 {
                        let mut id = 0;
                        store
                            .change_account_records(&format!("A-{writer:08X}"), &mut |tx| {
                                id = tx.next_id()?;
                                Ok(())
                            })
                            .expect("the change");
                        ids.push(id);
                    }
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("writer"))
            .collect()
    });
    let distinct: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len());
}

pub async fn the_outbox_keeps_the_order_of_commits(backend: &dyn Backend) {
    let store = backend.open();
    let per_account = 40;
    // Each writer's events, in the order it committed them.
    let committed: BTreeMap<String, Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|writer| {
                let store = store.clone();
                scope.spawn(move || {
                    let account = format!("A-{writer:08X}");
                    let mut ids = Vec::new();
                    for index in 0..per_account {
                        let event = event(&account);
                        store
                            .change_account_records(&account, &mut |tx| {
                                tx.put(AccountTable::Notes, &format!("{index:04}"), &json!(index))?;
                                tx.publish(&event).map_err(DomainError::from)
                            })
                            .expect("the change");
                        ids.push(event.id);
                    }
                    (account, ids)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("writer"))
            .collect()
    });
    let log = store.events_after(None, 100_000).expect("the event log");
    assert_eq!(log.len(), 4 * per_account);
    assert!(
        log.windows(2).all(|pair| pair[0].seq < pair[1].seq),
        "in seq order"
    );
    for (account, ids) in &committed {
        let logged: Vec<&str> = log
            .iter()
            .filter(|event| event.subject.as_deref() == Some(account.as_str()))
            .map(|event| event.id.as_str())
            .collect();
        assert_eq!(
            &logged, ids,
            "{account}: its events in the order of its changes"
        );
    }
    // The outbox holds every one of them for the relay.
    assert_eq!(store.outbox_len().expect("outbox"), log.len());
}

pub async fn an_import_change_carries_its_account_counts_and_events(backend: &dyn Backend) {
    let store = backend.open();
    let body = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                      "billing_name": "Ada Lovelace"});
    let payload = read_account(&body, AccountLimits { max_items: 100 }).expect("an account");
    let now = Utc::now();
    let staged = store
        .change_import("OLD_CO", "ACC-1", &mut |current| {
            let (process, _) = ImportProcess::stage(current, payload.clone(), now)?;
            Ok(ImportChange {
                process,
                account: None,
                events: vec![event("ACC-1")],
            })
        })
        .expect("staged");
    assert_eq!(staged.process.state, ImportState::Pending);
    let counts = store.import_counts("OLD_CO").expect("counts");
    assert_eq!(counts.get(ImportState::Pending), 1);

    let migrated = store
        .change_import("OLD_CO", "ACC-1", &mut |current| {
            let current = current.ok_or(DomainError::AccountNotFound)?;
            let account = PlatformAccount::open(current, None, now);
            Ok(ImportChange {
                process: current.processed(&account),
                account: Some(account),
                events: vec![event("ACC-1")],
            })
        })
        .expect("migrated");
    let number = migrated
        .account
        .as_ref()
        .map(|account| account.number.clone())
        .expect("an account");
    store.flush().await.expect("flush");
    assert!(store.account(&number).expect("read").is_some());
    let counts = store.import_counts("OLD_CO").expect("counts");
    assert_eq!(
        (
            counts.get(ImportState::Pending),
            counts.get(ImportState::Processed)
        ),
        (0, 1)
    );
    assert_eq!(
        store
            .import_process("OLD_CO", "ACC-1")
            .expect("read")
            .and_then(|process| process.platform_account_number),
        Some(number)
    );
    assert_eq!(logged(store.as_ref()).len(), 2);
}

pub async fn flushed_changes_are_there_after_a_reopen(backend: &dyn Backend) {
    {
        let store = backend.open();
        store
            .change_account_records("A-00000001", &mut |tx| {
                tx.put(AccountTable::Notes, "1", &json!({"body": "kept"}))?;
                tx.publish(&event("A-00000001")).map_err(DomainError::from)
            })
            .expect("the change");
        store.flush().await.expect("flush");
    }
    let store = backend.open();
    assert_eq!(
        store
            .account_records("A-00000001", AccountTable::Notes)
            .expect("records"),
        [json!({"body": "kept"})]
    );
    assert_eq!(logged(store.as_ref()).len(), 1);
    assert_eq!(store.outbox_len().expect("outbox"), 1);
}
