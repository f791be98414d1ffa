//! Validating an account without writing anything: `validate-account/` (v1) and
//! `accounts/validate/` (v2). The account is read, the supplier's rules applied and their
//! answer read again, as staging does.

use super::Imports;
use crate::domain::account::AccountPayload;
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::schedules::v2_payload;
use crate::domain::validation::Reported;
use serde_json::Value;

impl Imports {
    /// Validates an account (and applies the supplier's rules) without writing anything.
    pub async fn validate(
        &self,
        key: &ApiKeyRecord,
        body: Value,
    ) -> Result<Reported<AccountPayload>, DomainError> {
        Ok(self
            .read(key, body)
            .await?
            .map(|(checked, _)| checked.account))
    }

    /// `POST /v2/data-import/accounts/validate/`: the account in `payload` (or the body
    /// itself, as the real document's own example sends it), validated; nothing is written.
    pub async fn validate_v2(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<AccountPayload>, DomainError> {
        let (account, at) = v2_payload(body);
        let validated = self.validate(key, account).await.map_err(|e| e.under(at))?;
        Ok(validated.under(at))
    }
}
