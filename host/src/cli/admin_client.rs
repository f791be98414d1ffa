//! The operator commands' connection to the admin API: the shared typed client
//! (`ferry_admin_api::AdminClient`) with the operator key from the flag, the environment or a
//! local server's `operator.key`.

use super::Connection;
use anyhow::Context;
pub use ferry_admin_api::AdminClient;
use ferry_admin_api::ClientError;

/// A client of the server `connection` names.
pub fn connect(connection: &Connection) -> anyhow::Result<AdminClient> {
    let operator_key = match &connection.operator_key {
        Some(key) => key.clone(),
        None => {
            let path = connection.data_dir.join("operator.key");
            std::fs::read_to_string(&path)
                .with_context(|| {
                    format!(
                        "no operator key: pass --operator-key or FERRY_OPERATOR_KEY, or run next to a server whose {} exists",
                        path.display()
                    )
                })?
                .trim()
                .to_owned()
        }
    };
    Ok(AdminClient::new(&connection.url, &operator_key)?)
}

/// A failed admin call as the command's error: what the server said, field by field.
pub fn failed(client: &AdminClient, error: ClientError) -> anyhow::Error {
    match error {
        ClientError::Unreachable(reason) => {
            anyhow::anyhow!(
                "cannot reach the Ferry server at {}: {reason}",
                client.base_url()
            )
        }
        other => anyhow::anyhow!("the Ferry server refused: {}", other.explain()),
    }
}
