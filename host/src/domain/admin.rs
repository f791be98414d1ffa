//! What operators do: create and configure suppliers, issue and revoke API keys, manage the
//! operations teams accounts are allocated to.

use super::api_key::{self, ApiKeyRecord, read_new_api_key};
use super::error::DomainError;
use super::operations_team::{OperationsTeam, read_new_team};
use super::supplier::{Supplier, read_new_supplier, read_supplier_change};
use super::validation::{FieldError, FieldErrors};
use crate::domain::storage::{ImportCounts, Store};
use chrono::Utc;
use futures_util::StreamExt;
use serde_json::Value;
use std::sync::Arc;

/// A supplier with the number of its import processes in each state.
#[derive(Debug, Clone)]
pub struct SupplierView {
    pub supplier: Supplier,
    pub counts: ImportCounts,
    pub plugin: Option<crate::domain::plugin::PluginRecord>,
}

/// A key just created: the only time the key itself is known.
#[derive(Debug, Clone)]
pub struct IssuedApiKey {
    pub record: ApiKeyRecord,
    pub key: String,
}

/// One page of a supplier's import processes.
#[derive(Debug, Clone)]
pub struct ImportPage {
    pub items: Vec<crate::domain::import_process::ImportProcess>,
    /// Pass as `after` for the next page; `None` on the last one.
    pub next_after: Option<String>,
}

/// What to page through.
#[derive(Debug, Clone, Default)]
pub struct ImportQuery {
    pub state: Option<crate::domain::import_process::ImportState>,
    /// Case-insensitive substring of the external account number.
    pub search: Option<String>,
    pub limit: usize,
    pub after: Option<String>,
}

#[derive(Clone)]
pub struct Admin {
    store: Arc<dyn Store>,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

impl Admin {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    async fn view(&self, supplier: Supplier) -> Result<SupplierView, DomainError> {
        let counts = self.store.import_counts(&supplier.code).await?;
        let plugin = self.store.plugin(&supplier.code).await?;
        Ok(SupplierView {
            supplier,
            counts,
            plugin,
        })
    }

    /// Whether the store answers a read (for readiness): it is asked for a supplier no code
    /// names.
    pub async fn store_answers(&self) -> Result<(), DomainError> {
        self.store.supplier("").await?;
        Ok(())
    }

    pub async fn create_supplier(&self, body: &Value) -> Result<SupplierView, DomainError> {
        let supplier = read_new_supplier(body, Utc::now()).map_err(DomainError::invalid)?;
        if !self.store.create_supplier(&supplier).await? {
            return Err(DomainError::SupplierExists(supplier.code));
        }
        self.store.flush().await?;
        self.view(supplier).await
    }

    pub async fn suppliers(&self) -> Result<Vec<SupplierView>, DomainError> {
        let mut views = Vec::new();
        for supplier in self.store.suppliers().await? {
            views.push(self.view(supplier).await?);
        }
        Ok(views)
    }

    pub async fn supplier(&self, code: &str) -> Result<SupplierView, DomainError> {
        let supplier = self
            .store
            .supplier(code)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        self.view(supplier).await
    }

    pub async fn update_supplier(
        &self,
        code: &str,
        body: &Value,
    ) -> Result<SupplierView, DomainError> {
        let change = read_supplier_change(body).map_err(DomainError::invalid)?;
        let now = Utc::now();
        let updated = self
            .store
            .update_supplier(code, &mut |supplier| supplier.apply(change.clone(), now))
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        self.store.flush().await?;
        self.view(updated).await
    }

    /// A page of the supplier's import processes, in external-account-number order.
    pub async fn import_page(
        &self,
        code: &str,
        query: &ImportQuery,
    ) -> Result<ImportPage, DomainError> {
        self.store
            .supplier(code)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let needle = query.search.as_ref().map(|text| text.to_lowercase());
        let mut items = Vec::with_capacity(query.limit + 1);
        let mut processes = self.store.import_processes(code, query.after.as_deref());
        while let Some(process) = processes.next().await {
            let process = process?;
            let state_ok = query.state.is_none_or(|state| state == process.state);
            let search_ok = needle.as_ref().is_none_or(|needle| {
                process
                    .external_account_number
                    .to_lowercase()
                    .contains(needle)
            });
            if state_ok && search_ok {
                items.push(process);
                if items.len() > query.limit {
                    break;
                }
            }
        }
        let next_after = if items.len() > query.limit {
            items.truncate(query.limit);
            items
                .last()
                .map(|process| process.external_account_number.clone())
        } else {
            None
        };
        Ok(ImportPage { items, next_after })
    }

    pub async fn create_api_key(&self, body: &Value) -> Result<IssuedApiKey, DomainError> {
        let request = read_new_api_key(body).map_err(DomainError::invalid)?;
        let mut errors = FieldErrors::default();
        for (index, code) in request.suppliers.iter().enumerate() {
            if self.store.supplier(code).await?.is_none() {
                errors.push(FieldError::new(
                    format!("suppliers.{index}"),
                    "does_not_exist",
                    format!("Import supplier \"{code}\" does not exist."),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        let key = api_key::generate_key();
        let record = ApiKeyRecord {
            id: uuid::Uuid::new_v4().to_string(),
            organisation: request.organisation,
            suppliers: request.suppliers,
            key_digest: api_key::digest(&key),
            created_at: Utc::now(),
            revoked_at: None,
        };
        self.store.insert_api_key(&record).await?;
        self.store.flush().await?;
        Ok(IssuedApiKey { record, key })
    }

    pub async fn revoke_api_key(&self, id: &str) -> Result<ApiKeyRecord, DomainError> {
        let record = self
            .store
            .revoke_api_key(id, Utc::now())
            .await?
            .ok_or(DomainError::ApiKeyNotFound)?;
        self.store.flush().await?;
        Ok(record)
    }

    pub async fn create_team(&self, body: &Value) -> Result<OperationsTeam, DomainError> {
        let team = read_new_team(body, Utc::now()).map_err(DomainError::invalid)?;
        if !self.store.create_team(&team).await? {
            return Err(DomainError::TeamExists(team.name));
        }
        self.store.flush().await?;
        Ok(team)
    }

    pub async fn teams(&self) -> Result<Vec<OperationsTeam>, DomainError> {
        Ok(self.store.teams().await?)
    }

    /// Removes a team; accounts already allocated to it keep its name.
    pub async fn delete_team(&self, name: &str) -> Result<OperationsTeam, DomainError> {
        let team = self
            .store
            .delete_team(name)
            .await?
            .ok_or(DomainError::TeamNotFound)?;
        self.store.flush().await?;
        Ok(team)
    }
}
