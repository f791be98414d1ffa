//! The admin API (`/admin/v1/...`) for the operator console and CLI, behind the operator key.

pub(crate) mod accounts;
pub(crate) mod api_keys;
pub(crate) mod events;
pub(crate) mod imports;
pub(crate) mod migrations;
pub(crate) mod plugins;
pub(crate) mod suppliers;

pub use api_keys::{ApiKeyBody, IssuedApiKeyBody};
pub use suppliers::SupplierBody;

use super::AppState;
use axum::Router;

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(suppliers::router())
        .merge(api_keys::router())
        .merge(accounts::router())
        .merge(imports::router())
        .merge(migrations::router())
        .merge(plugins::router())
        .merge(events::router())
}
