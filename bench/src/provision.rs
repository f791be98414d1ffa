//! Setting up the server through its own APIs, as an operator and an integration would: the
//! supplier, its example plugin and settings (unless the run is without it), an API key, a
//! platform token (GraphQL `obtainPlatformToken`), and migrated accounts to add notes and
//! transactions to; with several instances over one database, waiting until each one uses
//! the plugin.

use crate::load::{self, Stop, Target};
use crate::processes::OPERATOR_KEY;
use crate::scenarios::{self, SUPPLIER};
use anyhow::{Context, bail};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an instance may take to use a plugin installed through another one.
const PLUGIN_PICKUP_TIMEOUT: Duration = Duration::from_secs(30);
const PLUGIN_PICKUP_POLL: Duration = Duration::from_millis(200);
/// Where a validated account's first tariff is (`OLDVAR` staged, `VAR-22` once mapped).
const FIRST_TARIFF: &str = "/supply_addresses/0/meter_points/0/agreements/0/tariff_code";

/// The supplier's document root: its documents are under this folder of the bucket.
pub const DOCUMENT_ROOT: &str = "bench/";

/// An admin API call as the operator; the answer's JSON.
async fn admin(
    client: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let mut request = client
        .request(method, format!("{base}{path}"))
        .header(AUTHORIZATION, format!("Token {OPERATOR_KEY}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    answer(request.send().await?, path).await
}

async fn answer(response: reqwest::Response, what: &str) -> anyhow::Result<Value> {
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        bail!("{what}: {status} {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Creates the supplier, with the example plugin and its settings at `plugin` unless that is
/// `None`; returns a platform token.
pub async fn supplier(base: &str, plugin: Option<&Path>) -> anyhow::Result<String> {
    let client = load::client(1)?;
    admin(
        &client,
        base,
        reqwest::Method::POST,
        "/admin/v1/suppliers",
        Some(json!({"code": SUPPLIER, "name": "Benchmark Energy", "document_root": DOCUMENT_ROOT})),
    )
    .await?;
    if let Some(component) = plugin {
        install_example_plugin(&client, base, component).await?;
    }

    let key = admin(
        &client,
        base,
        reqwest::Method::POST,
        "/admin/v1/api-keys",
        Some(json!({"organisation": "Benchmark Ltd", "suppliers": [SUPPLIER]})),
    )
    .await?;
    let key = key["key"]
        .as_str()
        .context("no key in the API key answer")?;

    let query = "mutation Obtain($input: ObtainJSONWebTokenInput!) { obtainPlatformToken(input: $input) { token } }";
    let response = client
        .post(format!("{base}/v1/graphql/"))
        .json(&json!({"query": query, "variables": {"input": {"APIKey": key}}}))
        .send()
        .await?;
    let body = answer(response, "obtainPlatformToken").await?;
    body["data"]["obtainPlatformToken"]["token"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no token in {body}"))
}

/// Installs the example plugin `component` for the supplier, with its settings.
async fn install_example_plugin(
    client: &reqwest::Client,
    base: &str,
    component: &Path,
) -> anyhow::Result<()> {
    let bytes = std::fs::read(component).with_context(|| {
        format!(
            "cannot read {} (build it with `just plugins`)",
            component.display()
        )
    })?;
    let install =
        format!("/admin/v1/suppliers/{SUPPLIER}/plugin?name=example_plugin&version=0.1.0");
    let response = client
        .put(format!("{base}{install}"))
        .header(AUTHORIZATION, format!("Token {OPERATOR_KEY}"))
        .header(CONTENT_TYPE, "application/wasm")
        .body(bytes)
        .send()
        .await?;
    answer(response, &install).await?;
    admin(
        client,
        base,
        reqwest::Method::PUT,
        &format!("/admin/v1/suppliers/{SUPPLIER}/plugin/config"),
        Some(scenarios::plugin_config()),
    )
    .await?;
    Ok(())
}

/// Waits until the instance at `base` validates accounts with the example plugin and its
/// settings (`POST /v1/data-import/validate-account/`, which writes nothing, answers the tariff
/// `OLDVAR` mapped to `VAR-22`): an instance over a shared database takes up a plugin
/// installed through another one within a second or two.
pub async fn wait_for_plugin(base: &str, authorization: &HeaderValue) -> anyhow::Result<()> {
    let client = load::client(1)?;
    let account = scenarios::account(&scenarios::external(scenarios::MIGRATED_ACCOUNTS_FROM));
    let started = Instant::now();
    loop {
        let response = client
            .post(format!("{base}{}", scenarios::VALIDATE))
            .header(AUTHORIZATION, authorization.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(account.clone())
            .send()
            .await?;
        let seen = match answer(response, scenarios::VALIDATE).await {
            Ok(validated) => match validated.pointer(FIRST_TARIFF).and_then(Value::as_str) {
                Some("VAR-22") => return Ok(()),
                Some(tariff) => format!("the tariff {tariff}"),
                None => validated.to_string(),
            },
            Err(error) => format!("{error:#}"),
        };
        if started.elapsed() > PLUGIN_PICKUP_TIMEOUT {
            bail!(
                "{base} does not use the example plugin after {} s (its validation answered {seen})",
                PLUGIN_PICKUP_TIMEOUT.as_secs()
            );
        }
        tokio::time::sleep(PLUGIN_PICKUP_POLL).await;
    }
}

/// Stages and migrates `count` accounts (`OE-10000000`, ...); returns their external numbers.
pub async fn migrated_accounts(ferry: &Target, count: usize) -> anyhow::Result<Vec<String>> {
    let generator: load::Generator = Arc::new(|op| {
        let number = scenarios::external(scenarios::MIGRATED_ACCOUNTS_FROM + op.sequence);
        vec![
            load::Step::Post {
                path: scenarios::STAGE.into(),
                body: scenarios::account(&number),
            },
            load::Step::Post {
                path: scenarios::PROCESS.into(),
                body: scenarios::process(&number),
            },
        ]
    });
    let done = load::measure(ferry, &generator, 8, Stop::Count(count as u64)).await?;
    if done.errors > 0 {
        bail!(
            "migrating the benchmark's accounts failed: {}",
            done.first_error.unwrap_or_default()
        );
    }
    Ok((0..count as u64)
        .map(|index| scenarios::external(scenarios::MIGRATED_ACCOUNTS_FROM + index))
        .collect())
}

/// The relay's state from `GET /admin/v1/events` (`state`, `last_error`, `published` since
/// start, `lag`: events waiting in the outbox).
pub async fn relay_state(client: &reqwest::Client, base: &str) -> anyhow::Result<Value> {
    let page = admin(
        client,
        base,
        reqwest::Method::GET,
        "/admin/v1/events?limit=1",
        None,
    )
    .await?;
    Ok(page["relay"].clone())
}

/// The relay's counters: (published since start, outbox length).
pub async fn relay_counters(client: &reqwest::Client, base: &str) -> anyhow::Result<(u64, u64)> {
    let relay = relay_state(client, base).await?;
    match (relay["published"].as_u64(), relay["lag"].as_u64()) {
        (Some(published), Some(lag)) => Ok((published, lag)),
        _ => bail!("no relay counters in {relay}"),
    }
}
