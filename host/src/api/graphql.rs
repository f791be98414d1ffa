//! `POST /v1/graphql/`: the `obtainPlatformToken` mutation that turns an organisation API key
//! (or a refresh token) into a platform token.
//!
//! The request is read like every other body ([`JsonBody`]: JSON content type, size limit,
//! syntax), so a request that is not a GraphQL request answers in the API's error format;
//! what GraphQL itself refuses (syntax, validation, credentials) is a GraphQL answer. A query
//! nested deeper than [`MAX_NESTING`] is refused before it is parsed: the parser recurses once
//! per level and would run out of stack.

use super::AppState;
use super::error::ApiError;
use super::extract::JsonBody;
use super::schemas::{GraphQlAnswer, GraphQlRequest};
use crate::auth::{AuthError, Authenticator, Claims};
use async_graphql::{
    Context, EmptySubscription, ErrorExtensions, InputObject, Json, Object, Schema, SimpleObject,
};
use async_graphql_axum::GraphQLResponse;
use axum::Router;
use axum::extract::State;
use axum::routing::post;

pub type PlatformSchema = Schema<Query, Mutation, EmptySubscription>;

pub fn schema(auth: Authenticator) -> PlatformSchema {
    Schema::build(Query, Mutation, EmptySubscription)
        .data(auth)
        .finish()
}

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/graphql/", post(execute))
}

/// Deepest nesting of `{`, `[` and `(` a query may have (the parser's own limit for
/// selection sets).
pub const MAX_NESTING: usize = 64;

/// `obtainPlatformToken(input: {APIKey} or {refreshToken}) { token refreshToken
/// refreshExpiresIn payload }`. What GraphQL refuses (a wrong key, an expired refresh token,
/// a query that does not parse or validate) is a 200 with `errors[].extensions.errorCode`.
#[utoipa::path(post, path = "/v1/graphql/", tag = "auth",
    request_body = GraphQlRequest,
    responses((status = 200, description = "The GraphQL answer", content_type = "application/graphql-response+json", body = GraphQlAnswer)))]
pub async fn execute(
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<GraphQLResponse, ApiError> {
    if !body.is_object() {
        return Err(ApiError::Parse(
            "not a GraphQL request: expected a JSON object".to_owned(),
        ));
    }
    let request: async_graphql::Request = serde_json::from_value(body)
        .map_err(|error| ApiError::Parse(format!("not a GraphQL request: {error}")))?;
    if nesting(&request.query) > MAX_NESTING {
        let mut error = async_graphql::ServerError::new(
            format!("The query is nested more than {MAX_NESTING} levels deep."),
            None,
        );
        error
            .extensions
            .get_or_insert_with(Default::default)
            .set("errorCode", "query_too_deep");
        return Ok(async_graphql::Response::from_errors(vec![error]).into());
    }
    Ok(state.graphql.execute(request).await.into())
}

/// The deepest nesting of brackets in a GraphQL document, outside strings and comments.
fn nesting(query: &str) -> usize {
    let mut deepest = 0;
    let mut depth = 0usize;
    let mut chars = query.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '[' | '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' | ']' | ')' => depth = depth.saturating_sub(1),
            '#' => while chars.next_if(|&c| c != '\n' && c != '\r').is_some() {},
            '"' => {
                let block = chars.next_if_eq(&'"').is_some();
                if block && chars.next_if_eq(&'"').is_none() {
                    continue; // the empty string `""`
                }
                skip_string(&mut chars, block);
            }
            _ => {}
        }
    }
    deepest
}

/// Skips the rest of a string (`"…"`, or `"""…"""` when `block`), escapes included.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, block: bool) {
    let mut quotes = 0;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
                quotes = 0;
            }
            '"' if !block => return,
            '"' => {
                quotes += 1;
                if quotes == 3 {
                    return;
                }
            }
            _ => quotes = 0,
        }
    }
}

#[derive(Debug, Default)]
pub struct Query;

#[Object]
impl Query {
    /// The version of this API.
    async fn api_version(&self) -> &'static str {
        "v1"
    }
}

#[derive(Debug, Default)]
pub struct Mutation;

/// Either an organisation API key or a refresh token.
#[derive(Debug, InputObject)]
#[graphql(name = "ObtainJSONWebTokenInput")]
pub struct ObtainJsonWebTokenInput {
    #[graphql(name = "APIKey")]
    pub api_key: Option<String>,
    #[graphql(name = "refreshToken")]
    pub refresh_token: Option<String>,
}

#[derive(Debug, SimpleObject)]
#[graphql(name = "ObtainJSONWebToken")]
pub struct ObtainJsonWebToken {
    /// The platform token: `Authorization: <token>` or `Authorization: Token <token>`, valid
    /// 60 minutes.
    pub token: String,
    /// Valid 7 days; exchange it for a new token.
    pub refresh_token: String,
    /// Unix time at which the refresh token expires.
    pub refresh_expires_in: i64,
    /// The token's claims.
    pub payload: Json<Claims>,
}

#[Object]
impl Mutation {
    async fn obtain_platform_token(
        &self,
        context: &Context<'_>,
        input: ObtainJsonWebTokenInput,
    ) -> async_graphql::Result<ObtainJsonWebToken> {
        let auth = context.data::<Authenticator>()?;
        let pair = match (input.api_key, input.refresh_token) {
            (Some(key), None) => auth.obtain_with_api_key(&key).await,
            (None, Some(token)) => auth.obtain_with_refresh_token(&token).await,
            _ => Err(AuthError::MissingCredentials),
        }
        .map_err(|error| {
            let code = error.code();
            async_graphql::Error::new(error.to_string())
                .extend_with(|_, extensions| extensions.set("errorCode", code))
        })?;
        Ok(ObtainJsonWebToken {
            token: pair.token,
            refresh_token: pair.refresh_token,
            refresh_expires_in: pair.refresh_expires_in,
            payload: Json(pair.payload),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_outside_strings_and_comments() {
        assert_eq!(nesting("{ apiVersion }"), 1);
        assert_eq!(
            nesting("mutation($i: X!) { obtainPlatformToken(input: {APIKey: \"k\"}) { token } }"),
            3
        );
        assert_eq!(nesting("{ a(s: \"{{{[[[\\\"((\") }"), 2);
        assert_eq!(nesting("{ a(s: \"\"\"{{{ \\\"\"\" [[[ \"\"\") }"), 2);
        assert_eq!(nesting("{ a(s: \"\") # {{{{\n b }"), 2);
        assert_eq!(nesting(&"[".repeat(10_000)), 10_000);
    }
}
