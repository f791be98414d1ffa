//! Payment vendors over HTTP: `GET {base}/instructions/{reference}` with
//! `Authorization: Bearer <key>`. A 404 or other 4xx is final; 5xx, 429, time-outs and
//! unreadable answers are retried with exponential backoff until the deadline.

use crate::domain::ports::{PaymentVendors, VendorError};
use futures_util::future::BoxFuture;
use reqwest::{StatusCode, Url};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Where one vendor is and how to authenticate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VendorSettings {
    pub url: String,
    #[serde(default)]
    pub key: Option<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("payment vendor {code}: invalid URL {url}")]
pub struct VendorUrlError {
    code: String,
    url: String,
}

#[derive(Debug, Clone)]
struct Vendor {
    base: Url,
    key: Option<String>,
}

/// The configured vendors, by upper-case code.
#[derive(Debug, Clone)]
pub struct HttpVendors {
    http: reqwest::Client,
    vendors: BTreeMap<String, Vendor>,
    deadline: Duration,
}

impl HttpVendors {
    pub fn new(
        settings: &BTreeMap<String, VendorSettings>,
        deadline: Duration,
    ) -> Result<Self, VendorUrlError> {
        let mut vendors = BTreeMap::new();
        for (code, vendor) in settings {
            let base = Url::parse(&vendor.url)
                .ok()
                .filter(|url| !url.cannot_be_a_base())
                .ok_or_else(|| VendorUrlError {
                    code: code.clone(),
                    url: vendor.url.clone(),
                })?;
            vendors.insert(
                code.to_uppercase(),
                Vendor {
                    base,
                    key: vendor.key.clone(),
                },
            );
        }
        Ok(Self {
            http: reqwest::Client::new(),
            vendors,
            deadline,
        })
    }

    fn instruction_url(vendor: &Vendor, reference: &str) -> Url {
        let mut url = vendor.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push("instructions").push(reference);
        }
        url
    }

    async fn fetch(&self, vendor: &Vendor, reference: &str) -> Result<Value, VendorError> {
        let url = Self::instruction_url(vendor, reference);
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let remaining = self.deadline.saturating_sub(started.elapsed());
            let mut request = self
                .http
                .get(url.clone())
                .timeout(remaining.max(Duration::from_millis(1)));
            if let Some(key) = &vendor.key {
                request = request.bearer_auth(key);
            }
            let problem = match request.send().await {
                Ok(response) => match response.status() {
                    status if status.is_success() => match response.json::<Value>().await {
                        Ok(details) if details.is_object() => return Ok(details),
                        Ok(_) => "the answer is not a JSON object".to_owned(),
                        Err(error) => format!("unreadable answer: {error}"),
                    },
                    StatusCode::NOT_FOUND => return Err(VendorError::NotFound),
                    StatusCode::TOO_MANY_REQUESTS | StatusCode::REQUEST_TIMEOUT => {
                        format!("HTTP {}", response.status())
                    }
                    status if status.is_client_error() => {
                        return Err(VendorError::Refused {
                            status: status.as_u16(),
                        });
                    }
                    status => format!("HTTP {status}"),
                },
                Err(error) => error.to_string(),
            };
            let remaining = self.deadline.saturating_sub(started.elapsed());
            tracing::warn!(%url, attempts, %problem, "payment vendor attempt failed");
            metrics::counter!("ferry_vendor_failures_total").increment(1);
            if remaining <= backoff {
                return Err(VendorError::Unavailable(format!(
                    "{problem} after {attempts} attempts"
                )));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

impl PaymentVendors for HttpVendors {
    fn knows(&self, vendor: &str) -> bool {
        self.vendors.contains_key(&vendor.to_uppercase())
    }

    fn fetch_instruction<'a>(
        &'a self,
        vendor: &'a str,
        reference: &'a str,
    ) -> BoxFuture<'a, Result<Value, VendorError>> {
        Box::pin(async move {
            let Some(config) = self.vendors.get(&vendor.to_uppercase()) else {
                return Err(VendorError::Refused { status: 404 });
            };
            self.fetch(config, reference).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_one_escaped_path_segment() {
        let vendor = Vendor {
            base: Url::parse("http://vendor.test/api/").expect("url"),
            key: None,
        };
        let url = HttpVendors::instruction_url(&vendor, "a/b ../c");
        assert_eq!(
            url.as_str(),
            "http://vendor.test/api/instructions/a%2Fb%20..%2Fc"
        );
    }
}
