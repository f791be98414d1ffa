//! What a supplier reads of its imports: one account's import state (the v1 transfer status,
//! the v2 status) and the lists of its import processes.

use super::Imports;
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::import_process::{ImportListing, ImportProcess, ImportState, is_pending};
use crate::domain::storage::ListingStream;
use futures_util::StreamExt;

/// Which import processes a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFilter {
    /// Pending or imported (not cancelled).
    All,
    /// Staged without a platform account.
    Pending,
    /// With a platform account.
    Imported,
    /// Exactly this state (operators).
    State(ImportState),
}

impl ListFilter {
    pub fn admits(self, state: ImportState) -> bool {
        match self {
            Self::All => state != ImportState::Cancelled,
            Self::Pending => is_pending(state),
            Self::Imported => state == ImportState::Processed,
            Self::State(wanted) => state == wanted,
        }
    }
}

/// Keeps the processes that pass `filter`.
pub fn filtered(listings: ListingStream, filter: ListFilter) -> ListingStream {
    listings
        .filter(move |item| {
            std::future::ready(
                item.as_ref()
                    .map_or(true, |listing| filter.admits(listing.state)),
            )
        })
        .boxed()
}

impl Imports {
    /// What the lists show of one account's import process (its state and account), for the
    /// v1 transfer status: the account document is not read.
    pub async fn import_listing(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        external: &str,
    ) -> Result<ImportListing, DomainError> {
        if !key.can_see(supplier_code) {
            return Err(DomainError::SupplierNotFound);
        }
        let (_, listing) = self
            .store
            .supplier_and_listing(supplier_code, external)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        listing.ok_or(DomainError::AccountNotFound)
    }

    /// The import process of one account, for the v2 status endpoint.
    pub async fn import_process(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        external: &str,
    ) -> Result<ImportProcess, DomainError> {
        let supplier = self.visible_supplier(key, supplier_code).await?;
        self.store
            .import_process(&supplier.code, external)
            .await?
            .ok_or(DomainError::AccountNotFound)
    }

    /// The supplier's import processes that pass `filter`, streamed from the store.
    pub async fn list(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        filter: ListFilter,
    ) -> Result<ListingStream, DomainError> {
        let supplier = self.visible_supplier(key, supplier_code).await?;
        Ok(filtered(
            self.store.import_listings(&supplier.code, None),
            filter,
        ))
    }
}
