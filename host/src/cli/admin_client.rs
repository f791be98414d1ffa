//! A small HTTP client for the admin API, used by the operator commands.

use super::Connection;
use anyhow::Context;
use reqwest::Method;
use serde_json::Value;

#[derive(Debug)]
pub struct AdminClient {
    http: reqwest::Client,
    base: String,
    operator_key: String,
}

impl AdminClient {
    pub fn connect(connection: &Connection) -> anyhow::Result<Self> {
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
        Ok(Self {
            http: reqwest::Client::new(),
            base: connection.url.trim_end_matches('/').to_owned(),
            operator_key,
        })
    }

    /// Calls the admin API; a non-2xx answer becomes an error that carries the error body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .http
            .request(method.clone(), &url)
            .header("Authorization", format!("Token {}", self.operator_key));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach the Ferry server at {}", self.base))?;
        let status = response.status();
        let text = response.text().await.context("cannot read the answer")?;
        let value: Value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if !status.is_success() {
            anyhow::bail!(
                "{method} {path} answered {status}:\n{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
        Ok(value)
    }
}

impl AdminClient {
    /// `PUT`s raw bytes (a component) with query parameters.
    pub async fn upload(
        &self,
        path: &str,
        query: &[(&str, String)],
        bytes: Vec<u8>,
    ) -> anyhow::Result<Value> {
        let response = self
            .http
            .put(format!("{}{path}", self.base))
            .query(query)
            .header("Authorization", format!("Token {}", self.operator_key))
            .header("Content-Type", "application/wasm")
            .body(bytes)
            .send()
            .await
            .with_context(|| format!("cannot reach the Ferry server at {}", self.base))?;
        let status = response.status();
        let text = response.text().await.context("cannot read the answer")?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if !status.is_success() {
            anyhow::bail!(
                "PUT {path} answered {status}:\n{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
        Ok(value)
    }
}

/// Prints a JSON answer for people (and `jq`).
pub fn print(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}
