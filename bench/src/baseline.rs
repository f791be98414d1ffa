//! The baseline: a bare axum server on the same paths as Ferry's API. Its POST handlers parse
//! the JSON body into a `serde_json::Value` and answer 201; the status read answers a fixed
//! body; the lists build their whole array in memory (the plain way) and answer it. No
//! authentication, storage, validation or plugin: what is left is HTTP, JSON and the runtime,
//! the floor any real handler stands on.

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

/// Announced on stdout once the baseline listens; the address follows.
pub const ANNOUNCEMENT: &str = "baseline listening on ";

/// Ferry's default body limit, so both refuse the same bodies.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

#[derive(Debug, Clone, clap::Args)]
pub struct BaselineArgs {
    /// Address to listen on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
    /// Elements of the list answers (the benchmark passes its pending-account count).
    #[arg(long, default_value_t = 100_000)]
    pub list_items: usize,
}

/// One element of the list answers, shaped like Ferry's.
#[derive(Debug, Serialize)]
struct ListItem {
    external_account_number: String,
    platform_account_number: Option<String>,
    kraken_account_number: Option<String>,
    account_created_at: Option<String>,
}

pub async fn serve(args: BaselineArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let address = listener.local_addr()?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{ANNOUNCEMENT}http://{address}")?;
    stdout.flush()?;
    axum::serve(listener, router(args.list_items)).await?;
    Ok(())
}

fn router(list_items: usize) -> Router {
    let accepting = [
        "/v1/data-import/notes/create/",
        "/v1/data-import/transactions/create/",
        "/v1/data-import/account-import-process/create-or-update/",
        "/v1/data-import/account-import-process/process/",
    ];
    let mut router = Router::new();
    for path in accepting {
        router = router.route(path, post(accept));
    }
    router
        .route(
            "/v1/data-import/account-transfer-status/{supplier}/{external}/",
            get(transfer_status),
        )
        .route(
            "/v1/data-import/pending-account-import-processes/{supplier}/",
            get(pending_list),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(list_items)
}

/// Parses the JSON body (axum's `Json` checks the content type and the syntax) and answers 201.
async fn accept(Json(_body): Json<Value>) -> (StatusCode, Json<Value>) {
    (StatusCode::CREATED, Json(Value::Array(Vec::new())))
}

async fn transfer_status(Path((_supplier, _external)): Path<(String, String)>) -> Json<Value> {
    Json(serde_json::json!({"status": "COMPLETED", "platform_account_number": "A-00000000"}))
}

async fn pending_list(
    State(list_items): State<usize>,
    Path(_supplier): Path<String>,
) -> Json<Vec<ListItem>> {
    Json(
        (0..list_items)
            .map(|index| ListItem {
                external_account_number: format!("OE-{index}"),
                platform_account_number: None,
                kraken_account_number: None,
                account_created_at: None,
            })
            .collect(),
    )
}
