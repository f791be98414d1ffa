//! Who is calling: platform tokens for supplier integrations, the operator key for the admin
//! API.
//!
//! A token is an HS256 JWT naming the API key it was issued for; every request looks the key
//! up again, so revoking a key invalidates its tokens at once. Access tokens live 60 minutes,
//! refresh tokens 7 days (the real platform's lifetimes). A supplier sends its token or key in
//! `Authorization` in either of the real platform's forms, bare or after `Token `; the
//! operator sends `Token <operator key>`.
//!
//! A token's signature is checked once: the claims of the tokens seen are kept
//! ([`VerifiedTokens`]), and a token seen again is only checked for its expiry and kind.

use crate::bounded_map::BoundedMap;
use crate::domain::api_key::{self, ApiKeyRecord};
use crate::store::{Store, StoreError};
use chrono::{Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub const ACCESS_TOKEN_LIFETIME: Duration = Duration::minutes(60);
pub const REFRESH_TOKEN_LIFETIME: Duration = Duration::days(7);
const ISSUER: &str = "ferry";
/// At most this many verified tokens are kept; when full, the cache starts again empty.
const VERIFIED_TOKENS_KEPT: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    Access,
    Refresh,
}

/// The claims of a platform token; also the `payload` returned by `obtainPlatformToken`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The API key's id.
    pub sub: String,
    pub organisation: String,
    pub iss: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    pub token_type: TokenKind,
}

/// What `obtainPlatformToken` answers.
#[derive(Debug, Clone)]
pub struct TokenPair {
    pub token: String,
    pub refresh_token: String,
    /// Unix time at which the refresh token expires.
    pub refresh_expires_in: i64,
    pub payload: Claims,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("Authentication credentials were not provided.")]
    NotAuthenticated,
    #[error("Invalid or expired token.")]
    AuthenticationFailed,
    #[error("This credential may not use this API.")]
    PermissionDenied,
    #[error("The API key is not valid.")]
    InvalidApiKey,
    #[error("The refresh token is not valid or has expired.")]
    InvalidRefreshToken,
    #[error("Provide either APIKey or refreshToken.")]
    MissingCredentials,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AuthError {
    /// Stable code (REST error `code`, GraphQL `extensions.errorCode`).
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotAuthenticated => "not_authenticated",
            Self::AuthenticationFailed => "authentication_failed",
            Self::PermissionDenied => "permission_denied",
            Self::InvalidApiKey => "invalid_api_key",
            Self::InvalidRefreshToken => "invalid_refresh_token",
            Self::MissingCredentials => "missing_credentials",
            Self::Store(error) if error.is_unavailable() => "storage_unavailable",
            Self::Store(_) => "server_error",
        }
    }
}

/// Issues and checks tokens and keys.
#[derive(Clone)]
pub struct Authenticator {
    store: Arc<dyn Store>,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Arc<Validation>,
    verified: Arc<VerifiedTokens>,
    operator_key_digest: [u8; 32],
}

/// The claims of tokens whose signature and issuer have been checked, by token. Checking a
/// token again gives the same answer (its signing key does not change while Ferry runs), so a
/// token found here needs only its expiry and kind checked; the check was a thirtieth of a
/// note's CPU. Tokens that failed are not kept.
type VerifiedTokens = BoundedMap<String, Claims>;

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").finish_non_exhaustive()
    }
}

impl Authenticator {
    /// Uses the signing secret kept in the store (created on first start).
    pub async fn new(store: Arc<dyn Store>, operator_key: &str) -> Result<Self, StoreError> {
        let secret = store
            .secret("jwt-signing-key", &mut || {
                let mut bytes = vec![0u8; 32];
                rand::thread_rng().fill_bytes(&mut bytes);
                bytes
            })
            .await?;
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        Ok(Self {
            store,
            encoding: EncodingKey::from_secret(&secret),
            decoding: DecodingKey::from_secret(&secret),
            validation: Arc::new(validation),
            verified: Arc::new(BoundedMap::new(VERIFIED_TOKENS_KEPT)),
            operator_key_digest: Sha256::digest(operator_key.as_bytes()).into(),
        })
    }

    fn sign(&self, key: &ApiKeyRecord, kind: TokenKind, lifetime: Duration) -> (String, Claims) {
        let now = Utc::now();
        let claims = Claims {
            sub: key.id.clone(),
            organisation: key.organisation.clone(),
            iss: ISSUER.to_owned(),
            iat: now.timestamp(),
            exp: (now + lifetime).timestamp(),
            jti: uuid::Uuid::new_v4().to_string(),
            token_type: kind,
        };
        // HS256 over a plain struct cannot fail.
        let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .unwrap_or_default();
        (token, claims)
    }

    fn pair(&self, key: &ApiKeyRecord) -> TokenPair {
        let (token, payload) = self.sign(key, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        let (refresh_token, refresh) = self.sign(key, TokenKind::Refresh, REFRESH_TOKEN_LIFETIME);
        TokenPair {
            token,
            refresh_token,
            refresh_expires_in: refresh.exp,
            payload,
        }
    }

    /// The claims of `token` if it is a valid, unexpired token of `kind`.
    fn decode(&self, token: &str, kind: TokenKind) -> Option<Claims> {
        let claims = match self.verified.get(token) {
            // As jsonwebtoken checks it (with no leeway): expired once `exp` is past.
            Some(claims) => (claims.exp >= Utc::now().timestamp()).then_some(claims)?,
            None => {
                let claims =
                    jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
                        .ok()?
                        .claims;
                self.verified.keep(token.to_owned(), claims.clone());
                claims
            }
        };
        (claims.token_type == kind).then_some(claims)
    }

    async fn active_key(&self, claims: &Claims) -> Result<Option<ApiKeyRecord>, AuthError> {
        Ok(self
            .store
            .api_key(&claims.sub)
            .await?
            .filter(ApiKeyRecord::is_active))
    }

    /// `obtainPlatformToken` with an organisation API key.
    pub async fn obtain_with_api_key(&self, key: &str) -> Result<TokenPair, AuthError> {
        let record = self
            .store
            .api_key_by_digest(&api_key::digest(key))
            .await?
            .filter(ApiKeyRecord::is_active)
            .ok_or(AuthError::InvalidApiKey)?;
        Ok(self.pair(&record))
    }

    /// `obtainPlatformToken` with a refresh token.
    pub async fn obtain_with_refresh_token(&self, token: &str) -> Result<TokenPair, AuthError> {
        let claims = self
            .decode(token, TokenKind::Refresh)
            .ok_or(AuthError::InvalidRefreshToken)?;
        let record = self
            .active_key(&claims)
            .await?
            .ok_or(AuthError::InvalidRefreshToken)?;
        Ok(self.pair(&record))
    }

    /// The API key behind an `Authorization` header value: a platform token or, as on the real
    /// platform, the API key itself, each bare or after `Token ` (`supplier_credential_of`).
    /// A revoked key is refused either way.
    pub async fn supplier_caller(&self, header: Option<&str>) -> Result<ApiKeyRecord, AuthError> {
        let token = supplier_credential_of(header)?;
        if is_api_key(token) {
            return self
                .store
                .api_key_by_digest(&api_key::digest(token))
                .await?
                .filter(ApiKeyRecord::is_active)
                .ok_or(AuthError::AuthenticationFailed);
        }
        let claims = self
            .decode(token, TokenKind::Access)
            .ok_or(AuthError::AuthenticationFailed)?;
        self.active_key(&claims)
            .await?
            .ok_or(AuthError::AuthenticationFailed)
    }

    /// Checks an `Authorization` header for the operator key, `Token <operator key>` only (the
    /// admin API is Ferry's own, with no real platform's scheme to follow). A valid supplier
    /// token or API key is refused with `permission_denied`.
    pub async fn operator_caller(&self, header: Option<&str>) -> Result<(), AuthError> {
        let token = token_of(header)?;
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if constant_time_eq(&digest, &self.operator_key_digest) {
            return Ok(());
        }
        let supplier_credential = if is_api_key(token) {
            self.store
                .api_key_by_digest(&api_key::digest(token))
                .await?
                .is_some_and(|key| key.is_active())
        } else {
            self.decode(token, TokenKind::Access).is_some()
        };
        if supplier_credential {
            return Err(AuthError::PermissionDenied);
        }
        Err(AuthError::AuthenticationFailed)
    }
}

/// An API key rather than a platform token: a JWT is three dot-separated parts, a key has
/// none.
fn is_api_key(token: &str) -> bool {
    !token.contains('.')
}

/// What follows the `Token ` prefix (any case) of an `Authorization` value; None without it.
fn after_token_prefix(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("token").then(|| rest.trim())
}

/// The token of `Authorization: Token <token>`.
fn token_of(header: Option<&str>) -> Result<&str, AuthError> {
    let header = header.ok_or(AuthError::NotAuthenticated)?;
    match after_token_prefix(header.trim()) {
        Some(token) if !token.is_empty() => Ok(token),
        _ => Err(AuthError::AuthenticationFailed),
    }
}

/// The credential of a supplier's `Authorization` value, in either of the real platform's
/// forms: the credential alone (its `DRFKrakenTokenAuthentication` takes the header's value as
/// the token) or after the prefix `Token ` (its `DataImportViewerAPIKeyAuthentication`, and
/// the spec's example). Either form carries either credential. A value of another scheme
/// (`Bearer …`) or with spaces inside is no credential.
fn supplier_credential_of(header: Option<&str>) -> Result<&str, AuthError> {
    let header = header.ok_or(AuthError::NotAuthenticated)?.trim();
    let credential = after_token_prefix(header).unwrap_or(header);
    if credential.is_empty() || credential.contains(char::is_whitespace) {
        return Err(AuthError::AuthenticationFailed);
    }
    Ok(credential)
}

fn constant_time_eq(left: &[u8; 32], right: &[u8; 32]) -> bool {
    left.iter()
        .zip(right)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// A fresh operator key, for a first start without `FERRY_OPERATOR_KEY`.
pub fn generate_operator_key() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("ferry_op_{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SledStore, SupplierStore};

    async fn authenticator() -> (tempfile::TempDir, Arc<SledStore>, Authenticator) {
        let dir = tempfile::tempdir().expect("temp");
        let store = Arc::new(SledStore::open(dir.path()).expect("store"));
        let auth = Authenticator::new(store.clone(), "operator")
            .await
            .expect("auth");
        (dir, store, auth)
    }

    async fn key(store: &SledStore) -> ApiKeyRecord {
        let record = ApiKeyRecord {
            id: "key-1".into(),
            organisation: "Org".into(),
            suppliers: vec!["OLD_CO".into()],
            key_digest: api_key::digest("ferry_secret"),
            created_at: Utc::now(),
            revoked_at: None,
        };
        store.insert_api_key(&record).await.expect("insert");
        record
    }

    #[tokio::test]
    async fn expired_tokens_are_refused() {
        let (_dir, store, auth) = authenticator().await;
        let record = key(&store).await;
        let (fresh, _) = auth.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        let header = format!("Token {fresh}");
        assert_eq!(
            auth.supplier_caller(Some(&header)).await.map(|k| k.id).ok(),
            Some("key-1".into())
        );

        let (expired, _) = auth.sign(&record, TokenKind::Access, Duration::seconds(-1));
        for header in [format!("Token {expired}"), expired] {
            assert!(matches!(
                auth.supplier_caller(Some(&header)).await,
                Err(AuthError::AuthenticationFailed)
            ));
        }

        let (expired_refresh, _) = auth.sign(&record, TokenKind::Refresh, Duration::seconds(-1));
        assert!(matches!(
            auth.obtain_with_refresh_token(&expired_refresh).await,
            Err(AuthError::InvalidRefreshToken)
        ));
    }

    #[tokio::test]
    async fn a_token_checked_before_is_refused_once_it_expires_or_its_key_is_revoked() {
        let (_dir, store, auth) = authenticator().await;
        let record = key(&store).await;
        let (token, mut claims) = auth.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        let header = format!("Token {token}");
        assert!(auth.supplier_caller(Some(&header)).await.is_ok());
        assert_eq!(auth.verified.get(&token), Some(claims.clone()));

        // A refresh token is not an access token, checked before or not.
        let (refresh, _) = auth.sign(&record, TokenKind::Refresh, REFRESH_TOKEN_LIFETIME);
        for _ in 0..2 {
            assert!(matches!(
                auth.supplier_caller(Some(&format!("Token {refresh}")))
                    .await,
                Err(AuthError::AuthenticationFailed)
            ));
        }

        // The kept claims as they will be an hour from now: past their expiry.
        claims.exp = Utc::now().timestamp() - 1;
        auth.verified.keep(token.clone(), claims);
        assert!(matches!(
            auth.supplier_caller(Some(&header)).await,
            Err(AuthError::AuthenticationFailed)
        ));

        let (token, _) = auth.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        let header = format!("Token {token}");
        assert!(auth.supplier_caller(Some(&header)).await.is_ok());
        store
            .revoke_api_key(&record.id, Utc::now())
            .await
            .expect("revoke");
        assert!(matches!(
            auth.supplier_caller(Some(&header)).await,
            Err(AuthError::AuthenticationFailed)
        ));
    }

    #[tokio::test]
    async fn tokens_of_another_secret_are_refused() {
        let (_dir, store, auth) = authenticator().await;
        let record = key(&store).await;
        let (_other_dir, _other_store, other) = authenticator().await;
        let (token, _) = other.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        let header = format!("Token {token}");
        assert!(matches!(
            auth.supplier_caller(Some(&header)).await,
            Err(AuthError::AuthenticationFailed)
        ));
    }

    #[tokio::test]
    async fn a_supplier_credential_is_taken_bare_or_after_token() {
        let (_dir, store, auth) = authenticator().await;
        let record = key(&store).await;
        let (token, _) = auth.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        for credential in [token.as_str(), "ferry_secret"] {
            for header in [
                credential.to_owned(),
                format!("Token {credential}"),
                format!("token {credential}"),
                format!("  TOKEN   {credential}  "),
            ] {
                assert_eq!(
                    auth.supplier_caller(Some(&header)).await.map(|k| k.id).ok(),
                    Some("key-1".into()),
                    "{header}"
                );
            }
        }
        assert!(matches!(
            auth.supplier_caller(None).await,
            Err(AuthError::NotAuthenticated)
        ));
        for header in [
            String::new(),
            "Token".to_owned(),
            "Token ".to_owned(),
            "ferry_wrong".to_owned(),
            format!("Bearer {token}"),
            format!("JWT {token}"),
            format!("Token Token {token}"),
            format!("{token} ferry_secret"),
        ] {
            assert!(
                matches!(
                    auth.supplier_caller(Some(&header)).await,
                    Err(AuthError::AuthenticationFailed)
                ),
                "{header}"
            );
        }
    }

    #[tokio::test]
    async fn operator_key_checks() {
        let (_dir, store, auth) = authenticator().await;
        assert!(auth.operator_caller(Some("Token operator")).await.is_ok());
        assert!(matches!(
            auth.operator_caller(None).await,
            Err(AuthError::NotAuthenticated)
        ));
        assert!(matches!(
            auth.operator_caller(Some("Token operato")).await,
            Err(AuthError::AuthenticationFailed)
        ));
        // The operator key keeps its one form.
        assert!(matches!(
            auth.operator_caller(Some("operator")).await,
            Err(AuthError::AuthenticationFailed)
        ));
        let record = key(&store).await;
        let (token, _) = auth.sign(&record, TokenKind::Access, ACCESS_TOKEN_LIFETIME);
        assert!(matches!(
            auth.operator_caller(Some(&format!("Token {token}"))).await,
            Err(AuthError::PermissionDenied)
        ));
    }
}
