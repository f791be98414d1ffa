//! `historical-statements/create/`: statements kept on an imported account, all or none.

use super::{Additions, Request};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::campaign::{Counts, counter};
use crate::domain::error::DomainError;
use crate::domain::ports::Hook;
use crate::domain::statements::{Statement, read_statements};
use crate::domain::storage::retrying;
use crate::domain::validation::{FieldError, FieldErrors, Reported};
use serde_json::Value;

pub use crate::domain::statements::STATEMENT_EXISTS;

/// Historical statements kept on an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedStatements {
    pub import_supplier: String,
    pub external_account_number: String,
    pub statements: Vec<Statement>,
}

impl Additions {
    fn parse_statements(
        &self,
        body: &Value,
    ) -> Result<(String, String, Vec<Statement>), DomainError> {
        let posted = read_statements(body, self.limits.max_items).map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        let statements = posted.statements.into_iter().map(Statement::from).collect();
        Ok((posted.account.import_supplier, external, statements))
    }

    pub async fn add_statements(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<AddedStatements>, DomainError> {
        let Request {
            target,
            posted: statements,
            ignored,
            ..
        } = self
            .read_request(key, body, Hook::MapStatements, Some("statements"), |body| {
                self.parse_statements(body)
            })
            .await?;
        let mut errors = FieldErrors::default();
        for (index, statement) in statements.iter().enumerate() {
            if let Some(path) = &statement.statement_path {
                let attr = format!("statements.{index}.statement_path");
                self.check_document(&target.supplier, path, attr, &mut errors)
                    .await?;
            }
        }
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        retrying(|| async {
            let mut unit = self.store.account_unit(&target.account.number).await?;
            // As on the real platform, a statement the account already has (or one sent
            // twice) refuses the whole request.
            let mut errors = FieldErrors::default();
            let mut seen = std::collections::HashSet::new();
            for (index, statement) in statements.iter().enumerate() {
                let id = statement.statement_id.as_str();
                if !seen.insert(id) || unit.has_statement(id).await? {
                    errors.push(FieldError::new(
                        format!("statements.{index}.statement_id"),
                        STATEMENT_EXISTS,
                        format!("The account already has a historical statement {id:?}."),
                    ));
                }
            }
            if !errors.is_empty() {
                return Err(DomainError::Invalid {
                    code: STATEMENT_EXISTS,
                    detail: "Historical statements already exist on the account.",
                    errors,
                });
            }
            let mut summary = unit.summary().await?;
            for statement in &statements {
                unit.add_statement(statement).await?;
                let to = statement.bill_period_to_date;
                summary.latest_statement_to = Some(
                    summary
                        .latest_statement_to
                        .map_or(to, |latest| latest.max(to)),
                );
            }
            unit.set_summary(&summary)?;
            let mut counts = Counts::default();
            counts.add(
                counter::STATEMENTS,
                i64::try_from(statements.len()).unwrap_or(i64::MAX),
            );
            unit.count(&target.supplier.code, &counts)?;
            unit.commit().await?;
            Ok(())
        })
        .await?;
        Ok(Reported {
            value: AddedStatements {
                import_supplier: target.supplier.code,
                external_account_number: target.account.external_account_number,
                statements,
            },
            ignored,
        })
    }
}
