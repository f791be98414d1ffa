//! The rules of account migration, free of HTTP and of any one database.
//!
//! Payload readers turn JSON into typed, validated values (reporting every field error at
//! once); entities carry their own state rules; the use cases combine them with the storage
//! port ([`storage::Store`]), which a backend implements (`store`): [`imports`] (staging,
//! migrating and reading accounts), [`additions`] (data added to migrated accounts),
//! [`migrations`] (bulk migrations) and [`schedules`] (scheduled ones), [`admin`] (what
//! operators manage) and [`event_log`] (the event log as operators read it). [`background`]
//! owns the tasks that outlive a request. Nothing here imports the backends, HTTP or the
//! relay.

pub mod account;
pub mod account_ledger;
pub mod additions;
pub mod admin;
pub mod api_key;
pub mod background;
pub mod campaign;
pub mod catalogue;
pub mod documents;
pub mod error;
pub mod event_log;
pub mod events;
pub mod import_process;
pub mod imports;
pub mod ledger;
pub mod meter_points;
pub mod migrations;
pub mod money;
pub mod notes;
pub mod opening;
pub mod operations_team;
pub mod payment_instruction;
pub mod plugin;
pub mod ports;
pub mod reference;
pub mod report;
pub mod request_document;
pub mod rules;
pub mod schedules;
pub mod statements;
pub mod storage;
pub mod supplier;
pub mod validation;
