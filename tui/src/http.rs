//! The real [`AdminApi`]: the shared admin client (`ferry_admin_api::AdminClient`), which
//! speaks the server's admin API over HTTP with the operator key.

use crate::api::{
    AccountDetail, AccountReportPage, AccountReportQuery, AdminApi, CampaignReport, ClientError,
    EventPage, ImportPage, ImportQuery, Migration, Plugin, StorageStatus, Supplier, SupplierStatus,
};
pub use ferry_admin_api::AdminClient;

impl AdminApi for AdminClient {
    async fn suppliers(&self) -> Result<Vec<Supplier>, ClientError> {
        AdminClient::suppliers(self).await
    }

    async fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> Result<Supplier, ClientError> {
        AdminClient::set_supplier_status(self, code, status).await
    }

    async fn imports(&self, code: &str, query: &ImportQuery) -> Result<ImportPage, ClientError> {
        AdminClient::imports(self, code, query).await
    }

    async fn account(&self, platform_account_number: &str) -> Result<AccountDetail, ClientError> {
        AdminClient::account(self, platform_account_number).await
    }

    async fn start_migration(&self, code: &str) -> Result<Migration, ClientError> {
        AdminClient::start_migration(self, code).await
    }

    async fn migrations(&self, code: &str) -> Result<Vec<Migration>, ClientError> {
        AdminClient::migrations(self, code).await
    }

    async fn migration(&self, code: &str, id: &str) -> Result<Migration, ClientError> {
        AdminClient::migration(self, code, id).await
    }

    async fn plugin(&self, code: &str) -> Result<Plugin, ClientError> {
        AdminClient::plugin(self, code).await
    }

    async fn events(&self, after: Option<&str>, limit: u32) -> Result<EventPage, ClientError> {
        AdminClient::events(self, after, limit).await
    }

    async fn storage(&self) -> Result<StorageStatus, ClientError> {
        AdminClient::storage(self).await
    }

    async fn campaign_report(&self, code: &str) -> Result<CampaignReport, ClientError> {
        AdminClient::campaign_report(self, code).await
    }

    async fn report_accounts(
        &self,
        code: &str,
        query: &AccountReportQuery,
    ) -> Result<AccountReportPage, ClientError> {
        AdminClient::report_accounts(self, code, query).await
    }
}
