//! The admin API (`/admin/v1/...`) for the operator console and CLI, behind the operator key.
//! Its request and answer shapes are `ferry-admin-api`'s (shared with the CLI and the
//! console); each handler turns the domain's records into them.

pub(crate) mod accounts;
pub(crate) mod api_keys;
pub(crate) mod events;
pub(crate) mod imports;
pub(crate) mod migrations;
pub(crate) mod operations_teams;
pub mod plugins;
pub(crate) mod reports;
pub(crate) mod storage;
pub(crate) mod suppliers;

use super::AppState;
use axum::Router;
use chrono::{DateTime, SecondsFormat, Utc};

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(suppliers::router())
        .merge(api_keys::router())
        .merge(operations_teams::router())
        .merge(accounts::router())
        .merge(imports::router())
        .merge(migrations::router())
        .merge(plugins::router())
        .merge(reports::router())
        .merge(events::router())
        .merge(storage::router())
}

/// A moment as the admin API writes it: RFC 3339 in UTC, with a fraction of a second only
/// when there is one.
pub(crate) fn moment(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}
