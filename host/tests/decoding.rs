//! Bad input, property-tested: every endpoint that takes a body is sent arbitrary JSON values,
//! structurally mutated valid bodies (fields removed, wrong types, nulls, huge numbers, long
//! and unicode strings, deep nesting) and arbitrary bytes; the GET endpoints get arbitrary
//! path segments and query strings. The requests go through the real router, in process
//! (`tower::ServiceExt::oneshot`), over real sled files, a real file bucket and the real
//! sandbox payment vendor on a local port, so thousands of cases take seconds. Whatever
//! arrives, the service must not panic, must not answer 5xx, must answer JSON, and every
//! answer that is not a success must be the API's error format: `{detail, code, errors}`
//! with `errors[i] = {detail, code, attr}` (the transactions endpoint's own 400 body aside).

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use ferry_host::api::{self, AppState, Limits, sandbox};
use ferry_host::auth::Authenticator;
use ferry_host::documents::Bucket;
use ferry_host::plugins::{Plugins, Runtime};
use ferry_host::store::{SledStore, Store};
use ferry_host::vendors::{HttpVendors, VendorSettings};
use http_body_util::BodyExt;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Number, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tower::ServiceExt;

/// Cases per endpoint: enough to reach every branch of the readers many times over, few
/// enough that the whole file runs in seconds in a debug build.
const CASES: u32 = 400;

const OPERATOR_KEY: &str = "decoding-operator-key";
const SUPPLIER: &str = "OLD_CO";
const ACCOUNT: &str = "ACC-1";
const MAX_ITEMS: usize = 20;
const MAX_BODY_BYTES: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// The service under test.

/// Who sends a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    Supplier,
    Operator,
    Nobody,
}

/// One `ferry` service in process, over its own temporary directory, with a supplier
/// `OLD_CO` that has one imported account `ACC-1` (so the data-adding endpoints get past
/// their look-ups) and a document `statement.pdf` in its root.
struct Service {
    runtime: tokio::runtime::Runtime,
    router: Router,
    api_key: String,
    token: String,
    _dir: tempfile::TempDir,
}

/// An answer: status, headers and the body's bytes.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?} {}",
            self.status,
            self.headers.get(header::CONTENT_TYPE),
            String::from_utf8_lossy(&self.body)
        )
    }
}

impl Service {
    fn start() -> Service {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let router = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("vendor port");
            let vendor_address = listener.local_addr().expect("vendor address");
            tokio::spawn(async move { axum::serve(listener, sandbox::router()).await });

            let store: Arc<dyn Store> =
                Arc::new(SledStore::open(&dir.path().join("db")).expect("store"));
            let auth = Authenticator::new(store.clone(), OPERATOR_KEY)
                .await
                .expect("auth");
            let bucket_dir = dir.path().join("bucket");
            std::fs::create_dir_all(bucket_dir.join("old-co")).expect("bucket");
            std::fs::write(bucket_dir.join("old-co/statement.pdf"), b"%PDF-1.4").expect("doc");
            let bucket = Bucket::open(
                &format!("file://{}", bucket_dir.display()),
                ferry_host::documents::DEFAULT_BUCKET_DEADLINE,
            )
            .expect("bucket");
            let vendors = HttpVendors::new(
                &BTreeMap::from([(
                    sandbox::VENDOR_CODE.to_owned(),
                    VendorSettings {
                        url: format!("http://{vendor_address}{}", sandbox::BASE_PATH),
                        key: Some(sandbox::VENDOR_KEY.to_owned()),
                    },
                )]),
                Duration::from_secs(10),
            )
            .expect("vendors");
            let plugin_runtime = Runtime::new(Default::default(), None).expect("plugin runtime");
            let plugins = Arc::new(
                Plugins::open(Arc::new(plugin_runtime), store.clone())
                    .await
                    .expect("plugins"),
            );
            let limits = Limits {
                max_body_bytes: MAX_BODY_BYTES,
                max_items: MAX_ITEMS,
                requests_per_second: 0,
                request_burst: 0,
                max_concurrent_processes: 0,
                ..Limits::default()
            };
            api::router(AppState::new(
                store,
                auth,
                limits,
                Arc::new(bucket),
                Arc::new(vendors),
                plugins,
            ))
        });
        let mut service = Service {
            runtime,
            router,
            api_key: String::new(),
            token: String::new(),
            _dir: dir,
        };
        service.provision();
        service
    }

    /// The suppliers, the API key, the token and the imported account the cases start from.
    fn provision(&mut self) {
        for (code, root) in [
            (SUPPLIER, "old-co/"),
            ("PATCH_ME", "patch-me/"),
            ("MIGRATE_ME", ""),
            ("PLUGIN_ME", ""),
        ] {
            let answer = self.send_json(
                Method::POST,
                "/admin/v1/suppliers",
                Caller::Operator,
                &json!({"code": code, "name": format!("{code} Energy"), "document_root": root}),
            );
            assert_eq!(answer.status, StatusCode::CREATED, "{answer:?}");
        }
        let answer = self.send_json(
            Method::POST,
            "/admin/v1/api-keys",
            Caller::Operator,
            &json!({"organisation": "Old Co Ltd", "suppliers": [SUPPLIER]}),
        );
        assert_eq!(answer.status, StatusCode::CREATED, "{answer:?}");
        self.api_key = answer.json()["key"].as_str().expect("key").to_owned();
        let answer = self.send_json(
            Method::POST,
            "/v1/graphql/",
            Caller::Nobody,
            &graphql_body(&self.api_key),
        );
        assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
        self.token = answer.json()["data"]["obtainPlatformToken"]["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer:?}"))
            .to_owned();
        let answer = self.send_json(
            Method::POST,
            "/v1/data-import/account-import-process/create-or-update/",
            Caller::Supplier,
            &account(ACCOUNT),
        );
        assert_eq!(answer.status, StatusCode::CREATED, "{answer:?}");
        let answer = self.send_json(
            Method::POST,
            "/v1/data-import/account-import-process/process/",
            Caller::Supplier,
            &json!({"import_supplier_code": SUPPLIER, "external_account_number": ACCOUNT}),
        );
        assert_eq!(answer.status, StatusCode::CREATED, "{answer:?}");
    }

    fn send(
        &self,
        method: Method,
        path: &str,
        caller: Caller,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Answer {
        self.send_body(method, path, caller, content_type, Body::from(body))
    }

    /// As [`Service::send`], with any body: one of unknown length arrives as chunked
    /// encoding would.
    fn send_body(
        &self,
        method: Method,
        path: &str,
        caller: Caller,
        content_type: Option<&str>,
        body: Body,
    ) -> Answer {
        let mut request = Request::builder().method(method).uri(path);
        match caller {
            Caller::Supplier => {
                request = request.header(header::AUTHORIZATION, format!("Token {}", self.token));
            }
            Caller::Operator => {
                request = request.header(header::AUTHORIZATION, format!("Token {OPERATOR_KEY}"));
            }
            Caller::Nobody => {}
        }
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let request = request.body(body).expect("request");
        self.runtime.block_on(async {
            let response = self
                .router
                .clone()
                .oneshot(request)
                .await
                .expect("infallible");
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes()
                .to_vec();
            Answer {
                status,
                headers,
                body,
            }
        })
    }

    fn send_json(&self, method: Method, path: &str, caller: Caller, body: &Value) -> Answer {
        self.send(
            method,
            path,
            caller,
            Some("application/json"),
            serde_json::to_vec(body).expect("json"),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// What every answer must be.

fn is_string(value: &Value) -> bool {
    value.is_string()
}

fn is_code(value: &Value) -> bool {
    value.as_str().is_some_and(|code| !code.is_empty())
}

/// What an `account_import_process_already_imported` answer adds: the account it names.
const ACCOUNT_NUMBERS: [&str; 4] = [
    "account_number",
    "external_account_number",
    "kraken_account_number",
    "platform_account_number",
];

/// `{detail, code, errors: [{detail, code, attr}]}`, and nothing else but, in an
/// `account_import_process_already_imported` answer, the account's numbers.
fn check_error_format(body: &Value) -> Result<(), String> {
    let object = body.as_object().ok_or("the error body is not an object")?;
    let already_imported = body["code"] == "account_import_process_already_imported";
    let mut keys: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|key| !(already_imported && ACCOUNT_NUMBERS.contains(key)))
        .collect();
    keys.sort_unstable();
    if keys != ["code", "detail", "errors"] {
        return Err(format!("the error body has the keys {keys:?}"));
    }
    if already_imported && !ACCOUNT_NUMBERS.iter().all(|key| body[key].is_string()) {
        return Err("an already-imported answer does not name the account".into());
    }
    if !is_string(&body["detail"]) || !is_code(&body["code"]) {
        return Err("detail or code is not a string".into());
    }
    let errors = body["errors"].as_array().ok_or("errors is not an array")?;
    for error in errors {
        check_field_error(error)?;
    }
    Ok(())
}

fn check_field_error(error: &Value) -> Result<(), String> {
    let object = error
        .as_object()
        .ok_or("an element of errors is not an object")?;
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    if keys != ["attr", "code", "detail"] {
        return Err(format!("an element of errors has the keys {keys:?}"));
    }
    if !is_string(&error["detail"]) || !is_code(&error["code"]) {
        return Err("an element's detail or code is not a string".into());
    }
    if !(error["attr"].is_string() || error["attr"].is_null()) {
        return Err("an element's attr is neither a path nor null".into());
    }
    Ok(())
}

/// The transactions endpoint's own 400 body.
fn check_transaction_error(body: &Value) -> Result<(), String> {
    if !is_string(&body["error_detail"]) || body.get("transaction_data").is_none() {
        return Err("error_detail or transaction_data is missing".into());
    }
    let errors = body["errors"].as_array().ok_or("errors is not an array")?;
    errors.iter().try_for_each(check_field_error)
}

/// How an endpoint answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rest,
    /// The transactions endpoint: its per-transaction 400 has its own body.
    Transactions,
    /// GraphQL: 200 with `data` and/or `errors`; transport failures in the error format.
    GraphQl,
}

fn check_answer(kind: Kind, answer: &Answer) -> Result<(), TestCaseError> {
    prop_assert!(!answer.status.is_server_error(), "server error: {answer:?}");
    let content_type = answer
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    prop_assert!(
        content_type.starts_with("application/json")
            || (kind == Kind::GraphQl && content_type == "application/graphql-response+json"),
        "not a JSON answer: {answer:?}"
    );
    let body: Value = serde_json::from_slice(&answer.body)
        .map_err(|error| TestCaseError::fail(format!("unreadable JSON ({error}): {answer:?}")))?;
    if answer.status.is_success() {
        if kind == Kind::GraphQl {
            prop_assert!(
                body.get("data").is_some() || body.get("errors").is_some(),
                "a GraphQL answer without data or errors: {answer:?}"
            );
        }
        return Ok(());
    }
    let checked = if kind == Kind::Transactions && body["status"] == "TRANSACTION_IMPORT_ERROR" {
        prop_assert_eq!(answer.status, StatusCode::BAD_REQUEST);
        check_transaction_error(&body)
    } else {
        check_error_format(&body)
    };
    checked.map_err(|problem| TestCaseError::fail(format!("{problem}: {answer:?}")))
}

// ---------------------------------------------------------------------------------------------
// Valid bodies, the starting points of the mutations.

fn account(external: &str) -> Value {
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external,
        "account_type": "DOMESTIC",
        "billing_name": "Ada Lovelace",
        "billing_address": {
            "street_address": "1 Analytical Street\nFlat 2", "locality": "London",
            "postal_code": "N1 1AA", "country": "GB"
        },
        "customers": [
            {"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com",
             "mobile": "07700 900123", "landline": "020 7946 0000", "date_of_birth": "1980-02-01"},
            {"given_name": "Charles", "family_name": "Babbage", "email": null}
        ],
        "supply_addresses": [{
            "supply_address1": "1 Analytical Street", "supply_postcode": "N1 1AA",
            "customer_at_supply_address_from_date": "2020-01-01",
            "meter_points": [{"supply_type": "ELECTRICITY", "identifier": "1200023305967",
                              "mpid": "TENT", "supply_start_date": "2020-01-01",
                              "agreements": [{"tariff_code": "VAR-22", "effective_from": "2020-01-01"}]}]
        }],
        "last_billed_to_date": "2023-12-31",
        "transfer_balance": "0.00"
    })
}

fn graphql_body(api_key: &str) -> Value {
    json!({
        "query": "mutation Obtain($input: ObtainJSONWebTokenInput!) { obtainPlatformToken(input: $input) { token refreshToken refreshExpiresIn payload } }",
        "operationName": "Obtain",
        "variables": {"input": {"APIKey": api_key}}
    })
}

fn external_number() -> BoxedStrategy<String> {
    "[A-Z]{1,3}-[0-9]{1,3}".boxed()
}

fn transaction() -> BoxedStrategy<Value> {
    let id = "T-[0-9]{1,6}";
    prop_oneof![
        id.prop_map(|id| json!({
            "transaction_id": id, "transaction_date": "2025-01-05", "amount": 42.10,
            "type": "CHARGE", "reason": "IMPORTED_CHARGE", "display_note": "Old balance",
            "note": "Imported"
        })),
        id.prop_map(|id| json!({
            "transaction_id": id, "transaction_date": "2023-06-30", "amount": "10.00",
            "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "reference": "P-1",
            "payment_type": "DD_REGULAR_COLLECTION"
        })),
        id.prop_map(|id| json!({
            "transaction_id": id, "transaction_date": "2025-02-01", "amount": 31.66,
            "type": "SUPPLY_CHARGE", "product_code": "VAR-22", "display_note": "January",
            "line_items": [{"rate_band": "CONSUMPTION_STANDARD", "start_date": "2025-01-01",
                            "end_date": "2025-01-31", "number_of_units": 100.5,
                            "net_amount": 30.15, "price_per_unit": 0.3, "units": [1.5, 2]}],
            "tax_items": [{"amount": 1.51, "tax_type": "VAT", "value_taxed": 30.15,
                           "rate": 0.05, "unit_type": "PROPORTION"}]
        })),
    ]
    .boxed()
}

fn reference(body: Value) -> Value {
    let mut body = body;
    body["import_supplier"] = json!(SUPPLIER);
    body["external_account_number"] = json!(ACCOUNT);
    body
}

// ---------------------------------------------------------------------------------------------
// Generators of bad input.

/// Field names of every body, so that arbitrary objects often hit real fields: every property
/// the OpenAPI document names (the real platform's request documents, the checks run against,
/// and Ferry's own bodies), so that a field added to a body is fuzzed without a list to keep.
static FIELDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    fn collect(value: &Value, names: &mut BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    names.extend(properties.keys().cloned());
                }
                map.values().for_each(|item| collect(item, names));
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, names)),
            _ => {}
        }
    }
    let mut names = BTreeSet::new();
    collect(&api::openapi::document()["components"], &mut names);
    names.into_iter().collect()
});

/// Strings the readers treat specially: codes, choices, dates, numbers, paths.
const STRINGS: &[&str] = &[
    "",
    " ",
    "OLD_CO",
    "ACC-1",
    "SANDBOX",
    "CARD",
    "CHARGE",
    "SUPPLY_CHARGE",
    "PAYMENT",
    "IMPORTED_CHARGE",
    "VAT",
    "ONGOING",
    "PAUSED",
    "COMPLETE",
    "ELECTRICITY",
    "GB",
    "2024-02-29",
    "2023-02-29",
    "9999-12-31",
    "0000-01-01",
    "2262-04-12",
    "1969-12-31",
    "+10000-01-01",
    "2024-1-1",
    "2024-01-01T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
    "0000-01-01T00:00:00+23:59",
    "2024-01-01T00:00:60Z",
    "2024-01-01T00:00:00.999999999999Z",
    "1e400",
    "-1e-400",
    "79228162514264337593543950335",
    "1.005",
    "NaN",
    "-0",
    "0x10",
    "1_000",
    "statement.pdf",
    "/statement.pdf",
    "statement.pdf/x",
    "../etc/passwd",
    "a//b",
    "s3://x/y",
    "C:\\x",
    "%2e%2e/x",
    "missing-1",
    "..",
    "ferry_",
    "Token",
    "null",
    "{}",
    "[]",
    "\u{0}",
    "\u{202e}",
    "\u{feff}",
    "a\u{301}",
    "\u{10ffff}",
    "🦀",
    "\n",
    "\t",
];

/// JSON numbers Rust's integer, float and decimal types cannot hold.
const HUGE_NUMBERS: &[&str] = &[
    "1e400",
    "-1e400",
    "1e-400",
    "1E+2147483648",
    "1e-2147483649",
    "1e18446744073709551616",
    "79228162514264337593543950335",
    "79228162514264337593543950336",
    "-79228162514264337593543950335",
    "18446744073709551616",
    "-9223372036854775809",
    "0.0000000000000000000000000001",
    "0.00000000000000000000000000001",
    "123456789012345678901234567890.123456789",
    "99999999999999999999999999999.99",
    "1.0000000000000000000000000000001",
    "-0",
    "-0.0",
    "0e0",
    "4e28",
    "7.9228162514264337593543950335e28",
];

fn huge_number() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => prop::sample::select(HUGE_NUMBERS).prop_map(str::to_owned),
        1 => "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,30})?([eE][+-]?[0-9]{1,5})?",
    ]
    .prop_filter_map("a JSON number", |text| {
        text.parse::<Number>().ok().map(Value::Number)
    })
    .boxed()
}

fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        2 => (-100_000i64..100_000, 0u32..4).prop_map(|(units, scale)| {
            let text = rust_decimal::Decimal::new(units, scale).to_string();
            Value::Number(text.parse().unwrap_or_else(|_| Number::from(0)))
        }),
        3 => huge_number(),
    ]
    .boxed()
}

fn string() -> BoxedStrategy<String> {
    prop_oneof![
        3 => any::<String>(),
        3 => prop::sample::select(STRINGS).prop_map(str::to_owned),
        1 => "[A-Z][A-Z0-9_]{0,70}",
        1 => (prop::sample::select(&["x", "é", "🦀", "\u{202e}", "\u{0}", "中", "a\u{301}", "/a"][..]), 1usize..5_000)
            .prop_map(|(piece, count)| piece.repeat(count)),
        1 => (1usize..100_000).prop_map(|length| "x".repeat(length)),
    ]
    .boxed()
}

/// `value` wrapped in `depth` arrays and objects.
fn nest(value: Value, depth: usize) -> Value {
    let mut value = value;
    for level in 0..depth {
        value = if level % 2 == 0 {
            Value::Array(vec![value])
        } else {
            Value::Object(Map::from_iter([("a".to_owned(), value)]))
        };
    }
    value
}

fn arbitrary_json() -> BoxedStrategy<Value> {
    let key = prop_oneof![
        3 => prop::sample::select(FIELDS.clone()),
        1 => any::<String>(),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
    .boxed()
}

/// One change to one place of a body.
#[derive(Debug, Clone)]
enum Mutation {
    Remove,
    Replace(Value),
    /// Wrapped in this many arrays and objects.
    Nest(usize),
    AddField(String, Value),
    /// An array grown (or anything else turned into an array) of this many copies.
    Repeat(usize),
    /// One of the numbers of the body (picked by the index) replaced, the shape kept.
    Renumber(Index, Value),
    /// One of the strings of the body replaced, the shape kept.
    Restring(Index, String),
}

fn mutation() -> BoxedStrategy<Mutation> {
    prop_oneof![
        3 => Just(Mutation::Remove),
        2 => Just(Mutation::Replace(Value::Null)),
        2 => number().prop_map(Mutation::Replace),
        2 => huge_number().prop_map(Mutation::Replace),
        3 => string().prop_map(|text| Mutation::Replace(Value::String(text))),
        1 => any::<bool>().prop_map(|flag| Mutation::Replace(Value::Bool(flag))),
        1 => Just(Mutation::Replace(json!([]))),
        1 => Just(Mutation::Replace(json!({}))),
        2 => arbitrary_json().prop_map(Mutation::Replace),
        2 => (1usize..200).prop_map(Mutation::Nest),
        2 => (prop_oneof![prop::sample::select(FIELDS.clone()), any::<String>()], arbitrary_json())
            .prop_map(|(name, value)| Mutation::AddField(name, value)),
        1 => (0usize..2 * MAX_ITEMS).prop_map(Mutation::Repeat),
        4 => (any::<Index>(), number()).prop_map(|(at, value)| Mutation::Renumber(at, value)),
        4 => (any::<Index>(), string()).prop_map(|(at, text)| Mutation::Restring(at, text)),
    ]
    .boxed()
}

/// Every JSON pointer into `value`, the root first.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// Applies `mutation` at one of the places of `body`, picked by `place` (or, for the
/// mutations that keep the shape, by their own index among the leaves of their kind).
fn apply(body: &mut Value, place: &Index, mutation: Mutation) {
    let mut all = Vec::new();
    pointers(body, String::new(), &mut all);
    let leaves = |wanted: fn(&Value) -> bool| -> Vec<String> {
        all.iter()
            .filter(|pointer| body.pointer(pointer).is_some_and(wanted))
            .cloned()
            .collect()
    };
    let (pointer, mutation) = match mutation {
        Mutation::Renumber(at, value) => {
            let numbers = leaves(Value::is_number);
            if numbers.is_empty() {
                return;
            }
            (at.get(&numbers).clone(), Mutation::Replace(value))
        }
        Mutation::Restring(at, text) => {
            let strings = leaves(Value::is_string);
            if strings.is_empty() {
                return;
            }
            (
                at.get(&strings).clone(),
                Mutation::Replace(Value::String(text)),
            )
        }
        other => (place.get(&all).clone(), other),
    };
    apply_at(body, &pointer, mutation);
}

fn apply_at(body: &mut Value, pointer: &str, mutation: Mutation) {
    let Some(target) = body.pointer_mut(pointer) else {
        return;
    };
    match mutation {
        Mutation::Replace(value) | Mutation::Renumber(_, value) => *target = value,
        Mutation::Restring(_, text) => *target = Value::String(text),
        Mutation::Nest(depth) => *target = nest(target.take(), depth),
        Mutation::AddField(name, value) => match target {
            Value::Object(map) => {
                map.insert(name, value);
            }
            other => *other = Value::Object(Map::from_iter([(name, value)])),
        },
        Mutation::Repeat(count) => {
            let item = match &*target {
                Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
                other => other.clone(),
            };
            *target = Value::Array(vec![item; count]);
        }
        Mutation::Remove => {
            let Some((parent, last)) = pointer.rsplit_once('/') else {
                *target = json!({});
                return;
            };
            let last = last.replace("~1", "/").replace("~0", "~");
            match body.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.shift_remove(&last);
                }
                Some(Value::Array(items)) => {
                    if let Ok(index) = last.parse::<usize>()
                        && index < items.len()
                    {
                        items.remove(index);
                    }
                }
                _ => {}
            }
        }
    }
}

/// A valid body with one to four mutations.
fn mutated(template: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    (
        template,
        prop::collection::vec((any::<Index>(), mutation()), 1..5),
    )
        .prop_map(|(mut body, mutations)| {
            for (place, mutation) in mutations {
                apply(&mut body, &place, mutation);
            }
            body
        })
        .boxed()
}

/// Byte sequences that are not JSON, or barely: broken syntax, lone surrogates, a BOM,
/// duplicate keys, nesting past any stack.
const RAW: &[&str] = &[
    "",
    " ",
    "\u{feff}{}",
    "{",
    "}",
    "{\"a\" 1}",
    "{\"a\":1,}",
    "{} {}",
    "[1,2",
    "nul",
    "NaN",
    "Infinity",
    "-",
    "1e99999999999999999999",
    "\"\\ud800\"",
    "{\"import_supplier\":\"\\udc00\"}",
    "{\"import_supplier\":\"OLD_CO\",\"import_supplier\":\"OTHER\"}",
    "{\"\\u0000\":0}",
    "'single'",
    "{\"query\":\"{ apiVersion }\"}",
    "{\"query\":\"query { __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }\"}",
    "[{\"query\":\"{ apiVersion }\"},{\"query\":\"{ apiVersion }\"}]",
];

/// Text that nests `depth` times, as JSON arrays and objects or as GraphQL selections,
/// lists and objects.
fn deep_text() -> BoxedStrategy<String> {
    (1usize..20_000, 0usize..6)
        .prop_map(|(depth, shape)| match shape {
            0 => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            1 => format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth)),
            2 => "[".repeat(depth),
            3 => json!({"query": format!("{{ {} }}", "apiVersion {".repeat(depth) + &"}".repeat(depth))}).to_string(),
            4 => json!({"query": format!(
                "mutation {{ obtainPlatformToken(input: {{APIKey: {}\"k\"{}}}) {{ token }} }}",
                "[".repeat(depth), "]".repeat(depth))}).to_string(),
            _ => json!({"query": format!(
                "mutation {{ obtainPlatformToken(input: {}{{APIKey: \"k\"}}{}) {{ token }} }}",
                "{a: ".repeat(depth), "}".repeat(depth))}).to_string(),
        })
        .boxed()
}

fn raw_bytes(template: BoxedStrategy<Value>) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        2 => prop::collection::vec(any::<u8>(), 0..400),
        2 => (template.clone(), any::<Index>()).prop_map(|(body, cut)| {
            let bytes = serde_json::to_vec(&body).unwrap_or_default();
            bytes[..cut.index(bytes.len() + 1)].to_vec()
        }),
        2 => (template, any::<Index>(), any::<u8>()).prop_map(|(body, at, byte)| {
            let mut bytes = serde_json::to_vec(&body).unwrap_or_default();
            if !bytes.is_empty() {
                let index = at.index(bytes.len());
                bytes[index] = byte;
            }
            bytes
        }),
        2 => prop::sample::select(RAW).prop_map(|text| text.as_bytes().to_vec()),
        1 => deep_text().prop_map(String::into_bytes),
    ]
    .boxed()
}

/// A request body with its content type.
#[derive(Clone)]
struct Payload {
    content_type: Option<&'static str>,
    bytes: Vec<u8>,
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = String::from_utf8_lossy(&self.bytes);
        let shown: String = text.chars().take(2_000).collect();
        write!(
            f,
            "Content-Type: {:?}, {} bytes: {shown}",
            self.content_type,
            self.bytes.len()
        )
    }
}

fn content_type() -> BoxedStrategy<Option<&'static str>> {
    prop_oneof![
        24 => Just(Some("application/json")),
        1 => Just(Some("application/json; charset=utf-8")),
        1 => Just(Some("application/problem+json")),
        1 => Just(Some("text/plain")),
        1 => Just(Some("multipart/form-data; boundary=x")),
        1 => Just(Some("application/x-www-form-urlencoded")),
        1 => Just(Some("application/wasm")),
        1 => Just(None),
    ]
    .boxed()
}

/// Arbitrary JSON, mutated valid bodies and arbitrary bytes, with mostly JSON content types.
fn payloads(template: BoxedStrategy<Value>) -> BoxedStrategy<Payload> {
    let json_value = prop_oneof![
        4 => mutated(template.clone()),
        2 => arbitrary_json(),
        1 => template.clone(),
    ]
    .prop_map(|value| serde_json::to_vec(&value).unwrap_or_default());
    let bytes = prop_oneof![3 => json_value, 1 => raw_bytes(template)];
    (content_type(), bytes)
        .prop_map(|(content_type, bytes)| Payload {
            content_type,
            bytes,
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// The runs.

/// `CASES` per endpoint, or `PROPTEST_CASES` when set (for longer runs by hand).
fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(CASES),
        max_shrink_iters: 2_000,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Sends `CASES` payloads to one endpoint; panics with the smallest failing one.
fn fuzz(
    service: &Service,
    method: Method,
    path: &str,
    caller: Caller,
    kind: Kind,
    strategy: BoxedStrategy<Payload>,
) {
    let mut runner = TestRunner::new(config());
    let seen = std::cell::RefCell::new(BTreeMap::<String, usize>::new());
    let result = runner.run(&strategy, |payload| {
        let answer = service.send(
            method.clone(),
            path,
            caller,
            payload.content_type,
            payload.bytes,
        );
        *seen.borrow_mut().entry(outcome(&answer)).or_default() += 1;
        check_answer(kind, &answer)
    });
    if let Err(error) = result {
        panic!("{method} {path}: {error}");
    }
    // What the cases reached (shown with `--nocapture`).
    println!("{method} {path}: {:?}", seen.into_inner());
}

/// The status and error code of an answer, to see what a run reached.
fn outcome(answer: &Answer) -> String {
    if answer.status.is_success() {
        return answer.status.as_u16().to_string();
    }
    let body = answer.json();
    let code = body["code"]
        .as_str()
        .or_else(|| body["error_code"].as_str())
        .or_else(|| body["errors"][0]["extensions"]["errorCode"].as_str())
        .unwrap_or("");
    format!("{} {code}", answer.status.as_u16())
}

#[test]
fn staging_bodies() {
    let service = Service::start();
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/validate-account/",
        Caller::Supplier,
        Kind::Rest,
        payloads(Just(account("VAL-1")).boxed()),
    );
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/account-import-process/create-or-update/",
        Caller::Supplier,
        Kind::Rest,
        payloads(
            external_number()
                .prop_map(|number| account(&number))
                .boxed(),
        ),
    );
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/account-import-process/process/",
        Caller::Supplier,
        Kind::Rest,
        payloads(
            (external_number(), any::<bool>())
                .prop_map(|(number, dry_run)| {
                    json!({"import_supplier_code": SUPPLIER, "external_account_number": number, "dry_run": dry_run})
                })
                .boxed(),
        ),
    );
}

#[test]
fn notes_bodies() {
    let service = Service::start();
    let template = Just(reference(json!({
        "notes": [
            {"body": "Prefers e-mail.", "created_at": "2024-01-01T10:00:00Z", "is_pinned": true,
             "unpin_at": "2030-01-01T00:00:00Z"},
            {"document_paths": [{"document_path": "/statement.pdf"}]}
        ]
    })));
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/notes/create/",
        Caller::Supplier,
        Kind::Rest,
        payloads(template.boxed()),
    );
}

#[test]
fn transactions_bodies() {
    let service = Service::start();
    let template = prop::collection::vec(transaction(), 1..4)
        .prop_map(|transactions| reference(json!({"transactions": transactions})))
        .boxed();
    for query in [
        "",
        "?check_previously_added=false",
        "?force_add_to_current_statement=0&check_previously_added=TRUE",
    ] {
        fuzz(
            &service,
            Method::POST,
            &format!("/v1/data-import/transactions/create/{query}"),
            Caller::Supplier,
            Kind::Transactions,
            payloads(template.clone()),
        );
    }
}

#[test]
fn statements_bodies() {
    let service = Service::start();
    let template = "S-[0-9]{1,4}"
        .prop_map(|id| {
            reference(json!({"statements": [{
                "bill_period_from_date": "2024-01-01", "bill_period_to_date": "2024-01-31",
                "statement_id": id, "issued_date": "2024-02-01", "number": "0001",
                "gross_amount": 12050, "statement_path": "statement.pdf"
            }]}))
        })
        .boxed();
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/historical-statements/create/",
        Caller::Supplier,
        Kind::Rest,
        payloads(template),
    );
}

#[test]
fn payment_instruction_bodies() {
    let service = Service::start();
    let template = prop_oneof!["REF-[0-9]{1,4}", Just("missing-1".to_owned())]
        .prop_map(|reference_text| {
            reference(json!({"vendor": "SANDBOX", "reference": reference_text, "type": "CARD"}))
        })
        .boxed();
    fuzz(
        &service,
        Method::POST,
        "/v1/data-import/payment-instruction/create/",
        Caller::Supplier,
        Kind::Rest,
        payloads(template),
    );
}

#[test]
fn graphql_bodies() {
    let service = Service::start();
    let key = service.api_key.clone();
    let template = prop_oneof![
        Just(graphql_body(&key)),
        Just(json!({
            "query": "mutation { obtainPlatformToken(input: {refreshToken: \"x\"}) { token } }"
        })),
        Just(json!({"query": "{ apiVersion }", "variables": {}})),
    ]
    .boxed();
    fuzz(
        &service,
        Method::POST,
        "/v1/graphql/",
        Caller::Nobody,
        Kind::GraphQl,
        payloads(template),
    );
}

#[test]
fn admin_bodies() {
    let service = Service::start();
    let supplier = ("[A-Z][A-Z0-9_]{0,8}", any::<bool>())
        .prop_map(|(code, emails)| {
            json!({"code": code, "name": "New Energy", "document_root": "new/",
                   "send_migration_emails": emails, "status": "ONGOING", "expiry_window_days": 30})
        })
        .boxed();
    fuzz(
        &service,
        Method::POST,
        "/admin/v1/suppliers",
        Caller::Operator,
        Kind::Rest,
        payloads(supplier),
    );
    let change = prop::sample::select(&["ONGOING", "PAUSED", "COMPLETE"][..])
        .prop_map(|status| {
            json!({"name": "Renamed", "document_root": "renamed/", "send_migration_emails": false,
                   "status": status, "expiry_window_days": 7})
        })
        .boxed();
    fuzz(
        &service,
        Method::PATCH,
        "/admin/v1/suppliers/PATCH_ME",
        Caller::Operator,
        Kind::Rest,
        payloads(change),
    );
    fuzz(
        &service,
        Method::POST,
        "/admin/v1/api-keys",
        Caller::Operator,
        Kind::Rest,
        payloads(Just(json!({"organisation": "Org", "suppliers": [SUPPLIER, "PATCH_ME"]})).boxed()),
    );
    fuzz(
        &service,
        Method::PUT,
        "/admin/v1/suppliers/PLUGIN_ME/plugin/config",
        Caller::Operator,
        Kind::Rest,
        payloads(Just(json!({"default_country_code": "44", "strict": "true"})).boxed()),
    );
    let events = prop_oneof![
        Just(json!({"type": "account.occupied", "version": "v1", "subject": "A-00000001",
                    "data": {"account_number": "A-00000001"}})),
        Just(json!({"type": "billing.ledger.entry_posted", "version": "v2", "subject": "A-00000001",
            "data": {
                "ledger": {"account": {"number": "A-00000001"}, "number": "L-00000001", "id": "L-00000001"},
                "entry": {"id": 1, "is_charge": true, "is_credit": false, "is_payment": false,
                          "is_repayment": false, "is_reversal": false, "is_reversed": false,
                          "source_id": 1, "source_type": "IMPORTED_TRANSACTION"}
            }})),
    ]
    .boxed();
    fuzz(
        &service,
        Method::POST,
        "/admin/v1/events",
        Caller::Operator,
        Kind::Rest,
        payloads(events),
    );
    // An optional selection of the accounts to migrate.
    let selections = prop_oneof![
        Just(json!({})),
        Just(json!({"only": "errored", "error_code": "account_failed_validation"})),
        Just(json!({"accounts": ["ACC-1", "ACC-2"]})),
    ]
    .boxed();
    fuzz(
        &service,
        Method::POST,
        "/admin/v1/suppliers/MIGRATE_ME/migrations",
        Caller::Operator,
        Kind::Rest,
        payloads(selections),
    );
}

/// The plugin upload takes the component's bytes: never a component here, so always refused,
/// in the error format.
#[test]
fn plugin_upload_bodies() {
    let service = Service::start();
    let component_header = Just(Value::String("\0asm\r\0\u{1}\0".to_owned())).boxed();
    let bytes = prop_oneof![
        raw_bytes(component_header),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|tail| {
            let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
            bytes.extend(tail);
            bytes
        }),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(|tail| {
            let mut bytes = b"\0asm\x01\0\0\0".to_vec();
            bytes.extend(tail);
            bytes
        }),
    ];
    let strategy = (
        prop_oneof![
            Just(Some("application/wasm")),
            Just(Some("application/octet-stream")),
            content_type()
        ],
        bytes,
    )
        .prop_map(|(content_type, bytes)| Payload {
            content_type,
            bytes,
        })
        .boxed();
    fuzz(
        &service,
        Method::PUT,
        "/admin/v1/suppliers/PLUGIN_ME/plugin?name=fuzz&version=0.0.1",
        Caller::Operator,
        Kind::Rest,
        strategy,
    );
}

/// A body over the limit answers 413 `payload_too_large` in the error format on every route
/// that takes a body (the list is read from the service's own OpenAPI document, so a new route
/// is covered by itself), whether its length is announced or it arrives in chunks.
#[test]
fn bodies_over_the_limit_are_refused_in_the_error_format_on_every_route() {
    let service = Service::start();
    let document = service
        .send(
            Method::GET,
            "/v1/openapi.json",
            Caller::Nobody,
            None,
            Vec::new(),
        )
        .json();
    let paths = document["paths"].as_object().expect("paths");
    let mut routes = Vec::new();
    for (path, operations) in paths {
        for (method, operation) in operations.as_object().expect("operations") {
            if operation.get("requestBody").is_none() {
                continue;
            }
            let method: Method = method.to_uppercase().parse().expect("a method");
            let path = path
                .replace("{code}", "PLUGIN_ME")
                .replace("{id}", "nothing")
                .replace("{number}", "A-00000000");
            routes.push((method, path));
        }
    }
    assert!(
        routes.len() >= 14 && routes.iter().any(|(_, path)| path.ends_with("/plugin")),
        "{routes:?}"
    );
    for (method, path) in routes {
        let caller = if path.starts_with("/admin/") {
            Caller::Operator
        } else {
            Caller::Supplier
        };
        let limit = if path.ends_with("/plugin") {
            api::admin::plugins::MAX_COMPONENT_BYTES
        } else {
            MAX_BODY_BYTES
        };
        let content_type = if path.ends_with("/plugin") {
            "application/wasm"
        } else {
            "application/json"
        };
        let oversized = vec![b' '; limit + 1];
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = oversized
            .chunks(64 * 1024)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        for (framing, body) in [
            ("sized", Body::from(oversized.clone())),
            (
                "chunked",
                Body::from_stream(futures_util::stream::iter(chunks)),
            ),
        ] {
            let answer = service.send_body(method.clone(), &path, caller, Some(content_type), body);
            assert_eq!(
                answer.status,
                StatusCode::PAYLOAD_TOO_LARGE,
                "{method} {path} ({framing}): {answer:?}"
            );
            assert_eq!(
                answer.headers[header::CONTENT_TYPE],
                "application/json",
                "{method} {path} ({framing})"
            );
            let body = answer.json();
            check_error_format(&body)
                .unwrap_or_else(|problem| panic!("{method} {path} ({framing}): {problem}: {body}"));
            assert_eq!(
                body["code"], "payload_too_large",
                "{method} {path} ({framing})"
            );
        }
    }
}

/// Percent-encodes everything but unreserved characters.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A path segment or query value: arbitrary text, encoded, or raw bytes that decode to
/// invalid UTF-8 or are no percent-encoding at all.
fn segment() -> BoxedStrategy<String> {
    prop_oneof![
        4 => string().prop_map(|text| encode(&text.chars().take(300).collect::<String>())),
        1 => prop::sample::select(&["%FF", "%C3%28", "%", "%zz", "%00", "..", ".", "%2F", "A-00000001", "OLD_CO", "ACC-1"][..])
            .prop_map(str::to_owned),
        1 => number().prop_map(|number| encode(&number.to_string())),
    ]
    .boxed()
}

fn query() -> BoxedStrategy<String> {
    let names = prop::sample::select(
        &[
            "state",
            "q",
            "limit",
            "after",
            "name",
            "version",
            "check_previously_added",
            "x",
            "",
        ][..],
    );
    prop::collection::vec((names, segment()), 0..4)
        .prop_map(|pairs| {
            let pairs: Vec<String> = pairs
                .into_iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            format!("?{}", pairs.join("&"))
        })
        .boxed()
}

/// The GET (and DELETE) endpoints: their path parameters and query strings are input too.
#[test]
fn paths_and_queries() {
    let service = Service::start();
    let templates: &[(Method, &str, Caller)] = &[
        (
            Method::GET,
            "/v1/data-import/account-transfer-status/{a}/{b}/",
            Caller::Supplier,
        ),
        (
            Method::GET,
            "/v1/data-import/all-account-import-processes/{a}/",
            Caller::Supplier,
        ),
        (
            Method::GET,
            "/v1/data-import/pending-account-import-processes/{a}/",
            Caller::Supplier,
        ),
        (
            Method::GET,
            "/v1/data-import/imported-account-import-processes/{a}/",
            Caller::Supplier,
        ),
        (Method::GET, "/admin/v1/suppliers/{a}", Caller::Operator),
        (
            Method::GET,
            "/admin/v1/suppliers/{a}/imports",
            Caller::Operator,
        ),
        (
            Method::GET,
            "/admin/v1/suppliers/{a}/migrations/{b}",
            Caller::Operator,
        ),
        (
            Method::GET,
            "/admin/v1/suppliers/{a}/plugin",
            Caller::Operator,
        ),
        (Method::GET, "/admin/v1/accounts/{a}", Caller::Operator),
        (Method::GET, "/admin/v1/events", Caller::Operator),
        (Method::DELETE, "/admin/v1/api-keys/{a}", Caller::Operator),
    ];
    let strategy = (
        prop::sample::select(templates),
        prop_oneof![Just(SUPPLIER.to_owned()), segment()],
        prop_oneof![Just(ACCOUNT.to_owned()), segment()],
        prop_oneof![Just(String::new()), query()],
    );
    let mut runner = TestRunner::new(config());
    let seen = std::cell::RefCell::new(BTreeMap::<String, usize>::new());
    let result = runner.run(&strategy, |((method, template, caller), a, b, query)| {
        let path = format!("{}{query}", template.replace("{a}", &a).replace("{b}", &b));
        let answer = service.send(method.clone(), &path, caller, None, Vec::new());
        *seen.borrow_mut().entry(outcome(&answer)).or_default() += 1;
        check_answer(Kind::Rest, &answer)
            .map_err(|error| TestCaseError::fail(format!("{method} {path}: {error}")))
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    println!("paths and queries: {:?}", seen.into_inner());
}

/// The generators themselves: mutations do reach deep fields, and the property does refuse
/// what is not the error format (so that a passing run means something).
#[test]
fn the_generators_and_the_property_can_fail() {
    let mut body = account("X-1");
    let mut all = Vec::new();
    pointers(&body, String::new(), &mut all);
    assert!(all.contains(&"/customers/1/email".to_owned()), "{all:?}");
    apply_at(&mut body, "/customers/1/email", Mutation::Remove);
    assert!(body["customers"][1].get("email").is_none());
    apply_at(&mut body, "/billing_address", Mutation::Nest(3));
    assert!(body["billing_address"][0]["a"][0].is_object());

    let answer = |status: StatusCode, body: Value| Answer {
        status,
        headers: HeaderMap::from_iter([(
            header::CONTENT_TYPE,
            "application/json".parse().expect("header"),
        )]),
        body: serde_json::to_vec(&body).expect("json"),
    };
    let good = json!({"detail": "x", "code": "parse_error", "errors": [{"detail": "d", "code": "c", "attr": null}]});
    assert!(check_answer(Kind::Rest, &answer(StatusCode::BAD_REQUEST, good.clone())).is_ok());
    assert!(check_answer(Kind::Rest, &answer(StatusCode::INTERNAL_SERVER_ERROR, good)).is_err());
    for bad in [
        json!({"detail": "x", "code": "c"}),
        json!({"detail": "x", "code": "c", "errors": [{"detail": "d", "code": "c"}]}),
        json!({"detail": "x", "code": "", "errors": []}),
        json!({"message": "x"}),
        json!("Failed to parse the request body as JSON"),
    ] {
        assert!(
            check_answer(Kind::Rest, &answer(StatusCode::BAD_REQUEST, bad.clone())).is_err(),
            "{bad}"
        );
    }
    let text = Answer {
        status: StatusCode::BAD_REQUEST,
        headers: HeaderMap::new(),
        body: b"Invalid URL".to_vec(),
    };
    assert!(check_answer(Kind::Rest, &text).is_err());
}
