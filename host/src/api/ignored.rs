//! Naming what a request carried that Ferry ignored. As on the real platform, a supplier's
//! request may carry fields Ferry does not know; unless the supplier is strict they are left
//! out, but never silently: a successful answer lists them in the `Ferry-Ignored-Fields`
//! header (dot paths, comma-separated, at most [`LISTED`] in [`LISTED_BYTES`] bytes,
//! percent-encoded where a name has
//! anything but letters, digits, `_`, `-` and `.`), gives their number in
//! `Ferry-Ignored-Field-Count`, and `/metrics` counts them in
//! `ferry_ignored_fields_total{endpoint}`.

use axum::http::HeaderValue;
use axum::response::{IntoResponseParts, ResponseParts};
use std::convert::Infallible;
use std::fmt::Write as _;

pub const IGNORED_FIELDS: &str = "ferry-ignored-fields";
pub const IGNORED_FIELD_COUNT: &str = "ferry-ignored-field-count";
/// Most paths the header lists, and most bytes it takes (proxies refuse large headers; the
/// count header still gives the total).
pub const LISTED: usize = 100;
pub const LISTED_BYTES: usize = 2048;

/// The fields an endpoint ignored in one request, as response headers.
#[derive(Debug)]
pub struct IgnoredFields(Vec<String>);

impl IgnoredFields {
    /// Counts `fields` for `endpoint` in `/metrics`.
    pub fn new(endpoint: &'static str, fields: Vec<String>) -> Self {
        if !fields.is_empty() {
            metrics::counter!("ferry_ignored_fields_total", "endpoint" => endpoint)
                .increment(fields.len() as u64);
        }
        Self(fields)
    }
}

impl IntoResponseParts for IgnoredFields {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        if self.0.is_empty() {
            return Ok(parts);
        }
        let mut listed = String::new();
        for path in self.0.iter().take(LISTED).map(|path| encode(path)) {
            let separator = if listed.is_empty() { "" } else { ", " };
            if listed.len() + separator.len() + path.len() > LISTED_BYTES {
                break;
            }
            listed.push_str(separator);
            listed.push_str(&path);
        }
        if let Ok(value) = HeaderValue::from_str(&listed) {
            parts.headers_mut().insert(IGNORED_FIELDS, value);
        }
        parts
            .headers_mut()
            .insert(IGNORED_FIELD_COUNT, HeaderValue::from(self.0.len()));
        Ok(parts)
    }
}

/// A path as a header can carry it: `%XX` for every byte but letters, digits, `_`, `-`, `.`.
fn encode(path: &str) -> String {
    let mut encoded = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.') {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    #[test]
    fn paths_are_listed_encoded_and_counted() {
        let fields = vec![
            "reference".to_owned(),
            "notes.0.colour, hue".to_owned(),
            "ünïcode".to_owned(),
        ];
        let response = (IgnoredFields::new("test", fields), "ok").into_response();
        assert_eq!(
            response.headers()[IGNORED_FIELDS],
            "reference, notes.0.colour%2C%20hue, %C3%BCn%C3%AFcode"
        );
        assert_eq!(response.headers()[IGNORED_FIELD_COUNT], "3");
        let many: Vec<String> = (0..250).map(|i| format!("f{i}")).collect();
        let response = (IgnoredFields::new("test", many), "ok").into_response();
        let listed = response.headers()[IGNORED_FIELDS]
            .to_str()
            .expect("ASCII")
            .split(", ")
            .count();
        assert_eq!(listed, LISTED);
        assert_eq!(response.headers()[IGNORED_FIELD_COUNT], "250");
        let long: Vec<String> = (0..60)
            .map(|i| format!("field_{i}_{}", "x".repeat(60)))
            .collect();
        let response = (IgnoredFields::new("test", long), "ok").into_response();
        assert!(response.headers()[IGNORED_FIELDS].len() <= LISTED_BYTES);
        assert_eq!(response.headers()[IGNORED_FIELD_COUNT], "60");
        let response = (IgnoredFields::new("test", Vec::new()), "ok").into_response();
        assert!(response.headers().get(IGNORED_FIELDS).is_none());
    }
}
