//! Every request counted and timed by method, route template and status, for the Prometheus
//! endpoint (`/metrics`): `ferry_http_requests_total` and
//! `ferry_http_request_duration_seconds`.
//!
//! The metric handles of each route, method and status are made once and kept. Making them
//! means building the label set and finding it in the recorder's registry, work that every
//! request would otherwise do again for the same few handles. The handles belong to
//! the process-wide recorder ([`super::metrics_handle`]), which is installed before any router
//! exists to call [`track`]: first thing in `server::run`, or else when the first
//! [`super::AppState`] is made.

use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Counter, Histogram};
use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// The route label of a request no route matched.
const UNMATCHED: &str = "unmatched";

/// Handles kept per route. Route templates are few, statuses too; only a client sending many
/// methods of its own could make more, and past this their handles are made per request
/// (counted all the same).
const KEPT_PER_ROUTE: usize = 64;

/// The handles of one route, method and status.
struct Handles {
    method: Method,
    status: StatusCode,
    requests: Counter,
    duration: Histogram,
}

impl Handles {
    fn new(method: &Method, route: &str, status: StatusCode) -> Self {
        let method_label = method.as_str().to_owned();
        let route_label = route.to_owned();
        Self {
            requests: metrics::counter!(
                "ferry_http_requests_total",
                "method" => method_label.clone(),
                "route" => route_label.clone(),
                "status" => status.as_str().to_owned()
            ),
            duration: metrics::histogram!(
                "ferry_http_request_duration_seconds",
                "method" => method_label,
                "route" => route_label
            ),
            method: method.clone(),
            status,
        }
    }

    fn record(&self, elapsed: Duration) {
        self.requests.increment(1);
        self.duration.record(elapsed.as_secs_f64());
    }
}

/// The handles made so far, by route template.
static KEPT: LazyLock<RwLock<HashMap<String, Vec<Handles>>>> = LazyLock::new(RwLock::default);

/// Counts and times every request by method, route template and status.
pub async fn track(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let elapsed = started.elapsed();
    let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let status = response.status();
    record(&method, route, status, elapsed);
    tracing::debug!(
        %method,
        route,
        status = status.as_u16(),
        elapsed_ms = elapsed.as_millis() as u64,
        "request"
    );
    response
}

/// Counts one request and records how long it took.
fn record(method: &Method, route: &str, status: StatusCode, elapsed: Duration) {
    let is_it = |handles: &&Handles| handles.method == *method && handles.status == status;
    {
        let kept = KEPT.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(handles) = kept.get(route).and_then(|all| all.iter().find(is_it)) {
            handles.record(elapsed);
            return;
        }
    }
    let handles = Handles::new(method, route, status);
    handles.record(elapsed);
    let mut kept = KEPT.write().unwrap_or_else(PoisonError::into_inner);
    let all = kept.entry(route.to_owned()).or_default();
    if all.len() < KEPT_PER_ROUTE && !all.iter().any(|kept| is_it(&kept)) {
        all.push(handles);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the series `series` (name and labels, as rendered) in `rendered`.
    fn value_of(rendered: &str, series: &str) -> Option<f64> {
        rendered.lines().find_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            (name == series).then(|| value.parse().ok())?
        })
    }

    #[test]
    fn each_route_method_and_status_is_counted_on_its_own_and_timed_by_route_and_method() {
        let metrics = super::super::metrics_handle();
        let route = "/test/request-metrics/{id}/";
        let millis = Duration::from_millis(3);
        record(&Method::POST, route, StatusCode::CREATED, millis);
        record(&Method::POST, route, StatusCode::CREATED, millis);
        record(&Method::POST, route, StatusCode::BAD_REQUEST, millis);
        record(&Method::GET, route, StatusCode::CREATED, millis);
        let rendered = metrics.render();
        let count = |method: &str, status: &str| {
            value_of(
                &rendered,
                &format!(
                    "ferry_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}}"
                ),
            )
        };
        assert_eq!(count("POST", "201"), Some(2.0), "{rendered}");
        assert_eq!(count("POST", "400"), Some(1.0), "{rendered}");
        assert_eq!(count("GET", "201"), Some(1.0), "{rendered}");
        assert_eq!(count("GET", "400"), None, "{rendered}");
        let timed = |method: &str| {
            value_of(
                &rendered,
                &format!(
                    "ferry_http_request_duration_seconds_count{{method=\"{method}\",route=\"{route}\"}}"
                ),
            )
        };
        assert_eq!(timed("POST"), Some(3.0), "{rendered}");
        assert_eq!(timed("GET"), Some(1.0), "{rendered}");
    }

    #[test]
    fn methods_past_those_kept_are_counted_all_the_same() {
        let metrics = super::super::metrics_handle();
        let route = "/test/request-metrics/many-methods/";
        let methods: Vec<Method> = (0..KEPT_PER_ROUTE + 6)
            .map(|i| Method::from_bytes(format!("M{i}").as_bytes()).expect("a method"))
            .collect();
        for _ in 0..2 {
            for method in &methods {
                record(
                    method,
                    route,
                    StatusCode::METHOD_NOT_ALLOWED,
                    Duration::ZERO,
                );
            }
        }
        let rendered = metrics.render();
        for method in &methods {
            let series = format!(
                "ferry_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"405\"}}"
            );
            assert_eq!(value_of(&rendered, &series), Some(2.0), "{series}");
        }
        let kept = KEPT.read().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(kept.get(route).map(Vec::len), Some(KEPT_PER_ROUTE));
    }
}
