//! `POST /v1/graphql/`: the `obtainPlatformToken` mutation that turns an organisation API key
//! (or a refresh token) into a platform token.

use super::AppState;
use crate::auth::{AuthError, Authenticator, Claims};
use async_graphql::{
    Context, EmptySubscription, ErrorExtensions, InputObject, Json, Object, Schema, SimpleObject,
};
use async_graphql_axum::{GraphQLRequest, GraphQLResponse};
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

async fn execute(State(state): State<AppState>, request: GraphQLRequest) -> GraphQLResponse {
    state.graphql.execute(request.into_inner()).await.into()
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
    /// The platform token: `Authorization: Token <token>`, valid 60 minutes.
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
            (Some(key), None) => auth.obtain_with_api_key(&key),
            (None, Some(token)) => auth.obtain_with_refresh_token(&token),
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
