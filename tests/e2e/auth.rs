//! Tokens, refresh, revocation and tenant isolation.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn api_key_gives_a_token_and_a_refresh_token() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let (key_id, key) = server.create_api_key(&["OLD_CO"]).await;

    let before = chrono::Utc::now().timestamp();
    let body = server.obtain_token(json!({"APIKey": key})).await;
    let answer = &body["data"]["obtainPlatformToken"];
    let token = answer["token"].as_str().expect("token");
    let refresh = answer["refreshToken"].as_str().expect("refresh token");
    let refresh_expires = answer["refreshExpiresIn"]
        .as_i64()
        .expect("refreshExpiresIn");
    let seven_days = 7 * 24 * 3600;
    assert!((before + seven_days - 5..=before + seven_days + 60).contains(&refresh_expires));
    let payload = &answer["payload"];
    assert_eq!(payload["sub"], key_id.as_str());
    let lifetime = payload["exp"].as_i64().expect("exp") - payload["iat"].as_i64().expect("iat");
    assert_eq!(lifetime, 3600);

    let (status, _) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            token,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // The refresh token is not an access token ...
    let (status, body) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            refresh,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "authentication_failed");
    // ... but it buys a new one.
    let body = server.obtain_token(json!({"refreshToken": refresh})).await;
    let fresh = body["data"]["obtainPlatformToken"]["token"]
        .as_str()
        .expect("token");
    let (status, _) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            fresh,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn bad_credentials_give_graphql_errors_with_stable_codes() {
    let server = Server::start().await;
    for (input, code) in [
        (json!({"APIKey": "ferry_nope"}), "invalid_api_key"),
        (
            json!({"refreshToken": "not.a.token"}),
            "invalid_refresh_token",
        ),
        (json!({}), "missing_credentials"),
    ] {
        let body = server.obtain_token(input).await;
        assert!(
            body["data"].is_null() || body["data"]["obtainPlatformToken"].is_null(),
            "{body}"
        );
        assert_eq!(body["errors"][0]["extensions"]["errorCode"], code, "{body}");
    }
}

#[tokio::test]
async fn missing_forged_and_malformed_tokens_are_refused() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let path = "/v1/data-import/all-account-import-processes/OLD_CO/";

    let response = reqwest::get(server.url(path)).await.expect("request");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], "Token");
    let body: serde_json::Value = response.json().await.expect("json");
    assert_error(&body, "not_authenticated");

    // A token signed by someone else (same claims, other key).
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    parts[2] = "AAAA".repeat(10);
    let forged = parts.join(".");
    for bad in [forged.as_str(), "garbage", ""] {
        let (status, body) = server.get(path, bad).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{bad}");
        assert_error(&body, "authentication_failed");
    }
    let response = reqwest::Client::new()
        .get(server.url(path))
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn revoking_a_key_invalidates_its_tokens() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let (id, key) = server.create_api_key(&["OLD_CO"]).await;
    let body = server.obtain_token(json!({"APIKey": key})).await;
    let token = body["data"]["obtainPlatformToken"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let refresh = body["data"]["obtainPlatformToken"]["refreshToken"]
        .as_str()
        .expect("refresh")
        .to_owned();
    let path = "/v1/data-import/all-account-import-processes/OLD_CO/";
    assert_eq!(server.get(path, &token).await.0, StatusCode::OK);

    let (status, revoked) = server
        .admin(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert!(revoked["revoked_at"].is_string());

    let (status, body) = server.get(path, &token).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "authentication_failed");
    let body = server.obtain_token(json!({"refreshToken": refresh})).await;
    assert_eq!(
        body["errors"][0]["extensions"]["errorCode"],
        "invalid_refresh_token"
    );
    let body = server.obtain_token(json!({"APIKey": key})).await;
    assert_eq!(
        body["errors"][0]["extensions"]["errorCode"],
        "invalid_api_key"
    );
}

#[tokio::test]
async fn another_suppliers_data_answers_as_if_it_did_not_exist() {
    let server = Server::start().await;
    let token_a = server.supplier_with_token("SUPPLIER_A").await;
    let token_b = server.supplier_with_token("SUPPLIER_B").await;
    server.stage(&token_b, &account("SUPPLIER_B", "B-1")).await;
    server.migrate(&token_b, "SUPPLIER_B", "B-1").await;

    // A sees B exactly as it sees a supplier that does not exist.
    for supplier in ["SUPPLIER_B", "NO_SUCH_SUPPLIER"] {
        let paths = [
            format!("/v1/data-import/account-transfer-status/{supplier}/B-1/"),
            format!("/v1/data-import/all-account-import-processes/{supplier}/"),
            format!("/v1/data-import/pending-account-import-processes/{supplier}/"),
            format!("/v1/data-import/imported-account-import-processes/{supplier}/"),
        ];
        for path in paths {
            let (status, body) = server.get(&path, &token_a).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert_error(&body, "import_supplier_not_found");
        }
        for (path, body) in [
            (STAGE, account(supplier, "X-1")),
            (VALIDATE, account(supplier, "X-1")),
            (
                PROCESS,
                json!({"import_supplier_code": supplier, "external_account_number": "B-1"}),
            ),
        ] {
            let (status, answer) = server.post(path, &token_a, &body).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path} {answer}");
            assert_error(&answer, "import_supplier_not_found");
        }
    }
    // And B's account is untouched.
    let (_, status) = server
        .get(
            "/v1/data-import/account-transfer-status/SUPPLIER_B/B-1/",
            &token_b,
        )
        .await;
    assert_eq!(status["status"], "COMPLETED");
}

#[tokio::test]
async fn the_admin_api_is_for_the_operator_only() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let (status, body) = server
        .call(Method::GET, "/admin/v1/suppliers", None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "not_authenticated");
    let (status, body) = server
        .call(Method::GET, "/admin/v1/suppliers", Some("wrong-key"), None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error(&body, "authentication_failed");
    let (status, body) = server
        .call(Method::GET, "/admin/v1/suppliers", Some(&token), None)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_error(&body, "permission_denied");
    // The operator key is no platform token either.
    let (status, _) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            OPERATOR_KEY,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// As on the real platform, `Authorization: Token <API key>` works on the supplier API like a
/// platform token, within the key's suppliers; a revoked or unknown key is refused.
#[tokio::test]
async fn the_api_key_itself_is_accepted_as_the_token() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    server.create_supplier("OTHER").await;
    let (id, key) = server.create_api_key(&["OLD_CO"]).await;

    assert_eq!(
        server.stage(&key, &account("OLD_CO", "ACC-1")).await,
        StatusCode::CREATED
    );
    let (status, body) = server
        .get("/v1/data-import/all-account-import-processes/OLD_CO/", &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body[0]["external_account_number"], "ACC-1");
    let (status, body) = server
        .get("/v1/data-import/all-account-import-processes/OTHER/", &key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // The operator key is not a supplier key, and the admin API does not take a supplier key.
    let (status, body) = reqwest::Client::new()
        .get(server.url("/admin/v1/suppliers"))
        .header("Authorization", format!("Token {key}"))
        .send()
        .await
        .map(|response| response.status())
        .map(|status| (status, ()))
        .expect("request");
    assert_eq!(status, StatusCode::FORBIDDEN, "{body:?}");
    let (status, body) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            OPERATOR_KEY,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let (status, body) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            "ferry_0000000000000000000000000000000000000000000000000000000000000000",
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_error(&body, "authentication_failed");

    let (status, _) = server
        .admin(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server
        .get("/v1/data-import/all-account-import-processes/OLD_CO/", &key)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_error(&body, "authentication_failed");
}

/// The status, `WWW-Authenticate` and body of a GET with `authorization` as the header's value.
async fn get_with(
    server: &Server,
    path: &str,
    authorization: Option<&str>,
) -> (StatusCode, Option<String>, serde_json::Value) {
    let mut request = reqwest::Client::new().get(server.url(path));
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    let response = request.send().await.expect("request");
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    (status, challenge, response.json().await.expect("json"))
}

/// As the real platform's `DRFKrakenTokenAuthentication` takes it, the `Authorization` header
/// may carry the credential alone; as its `DataImportViewerAPIKeyAuthentication` (and the
/// spec's example) take it, after `Token `. Both forms take the platform token and the API
/// key; anything else is refused as before.
#[tokio::test]
async fn the_credential_is_taken_bare_or_after_token() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let (id, key) = server.create_api_key(&["OLD_CO"]).await;
    let token = server.token_for(&key).await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    let path = "/v1/data-import/all-account-import-processes/OLD_CO/";

    for credential in [token.as_str(), key.as_str()] {
        for header in [
            credential.to_owned(),
            format!("Token {credential}"),
            format!("token {credential}"),
            format!("TOKEN {credential}"),
        ] {
            let (status, _, body) = get_with(&server, path, Some(&header)).await;
            assert_eq!(status, StatusCode::OK, "{header}: {body}");
            assert_eq!(body[0]["external_account_number"], "ACC-1", "{header}");
        }
    }
    // A bare credential works on a write too.
    let status = reqwest::Client::new()
        .post(server.url(STAGE))
        .header("Authorization", token.as_str())
        .json(&account("OLD_CO", "ACC-2"))
        .send()
        .await
        .expect("request")
        .status();
    assert_eq!(status, StatusCode::CREATED);

    // Refused as before: nothing, a forged token, a stranger's key, another scheme, the prefix
    // alone, or the operator key.
    let (status, challenge, body) = get_with(&server, path, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(challenge.as_deref(), Some("Token"));
    assert_error(&body, "not_authenticated");
    let mut parts: Vec<&str> = token.split('.').collect();
    let forged_signature = "AAAA".repeat(10);
    parts[2] = &forged_signature;
    let forged = parts.join(".");
    for header in [
        forged.clone(),
        format!("Token {forged}"),
        "ferry_0000000000000000000000000000000000000000000000000000000000000000".to_owned(),
        format!("Bearer {token}"),
        format!("JWT {token}"),
        format!("Token Token {token}"),
        "Token".to_owned(),
        String::new(),
        OPERATOR_KEY.to_owned(),
    ] {
        let (status, challenge, body) = get_with(&server, path, Some(&header)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{header:?}: {body}");
        assert_eq!(challenge.as_deref(), Some("Token"), "{header:?}");
        assert_error(&body, "authentication_failed");
    }

    // The admin API keeps its one form: `Token <operator key>`.
    let (status, _, body) = get_with(&server, "/admin/v1/suppliers", Some(OPERATOR_KEY)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_error(&body, "authentication_failed");
    let operator = format!("Token {OPERATOR_KEY}");
    let (status, _, body) = get_with(&server, "/admin/v1/suppliers", Some(&operator)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A revoked key is refused bare too, and so are its tokens.
    let (status, _) = server
        .admin(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    for header in [token.as_str(), key.as_str()] {
        let (status, _, body) = get_with(&server, path, Some(header)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{header}: {body}");
        assert_error(&body, "authentication_failed");
    }
}
