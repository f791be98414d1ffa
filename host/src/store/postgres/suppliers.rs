//! Suppliers, their API keys and the operations teams on PostgreSQL ([`SupplierStore`]): a
//! table each, the record as JSON beside the columns queries look up.

use super::{PgStore, classify, record};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::operations_team::OperationsTeam;
use crate::domain::storage::{StoreFuture, SupplierStore};
use crate::domain::supplier::Supplier;
use chrono::{DateTime, Utc};
use sqlx::types::Json;

impl SupplierStore for PgStore {
    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool> {
        self.bounded(self.insert_new(
            "INSERT INTO suppliers (code, record) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &supplier.code,
            supplier,
        ))
    }

    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>> {
        self.bounded(self.one("SELECT record FROM suppliers WHERE code = $1", code))
    }

    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>> {
        self.bounded(self.all("SELECT record FROM suppliers ORDER BY code"))
    }

    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(row) = sqlx::query("SELECT record FROM suppliers WHERE code = $1 FOR UPDATE")
                .bind(code)
                .fetch_optional(&mut *tx)
                .await
                .map_err(classify)?
            else {
                return Ok(None);
            };
            let mut supplier: Supplier = record(&row, code)?;
            change(&mut supplier);
            sqlx::query("UPDATE suppliers SET record = $2 WHERE code = $1")
                .bind(code)
                .bind(Json(&supplier))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(supplier))
        })
    }

    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool> {
        self.bounded(self.insert_new(
            "INSERT INTO operations_teams (name, record) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &team.name,
            team,
        ))
    }

    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.bounded(self.one("SELECT record FROM operations_teams WHERE name = $1", name))
    }

    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>> {
        self.bounded(self.all("SELECT record FROM operations_teams ORDER BY name"))
    }

    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.bounded(async move {
            self.health.check()?;
            sqlx::query("DELETE FROM operations_teams WHERE name = $1 RETURNING record")
                .bind(name)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)?
                .map(|row| record(&row, name))
                .transpose()
        })
    }

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            self.health.check()?;
            sqlx::query(
                "INSERT INTO api_keys (id, key_digest, revoked_at, record) VALUES ($1, $2, $3, $4)",
            )
            .bind(&key.id)
            .bind(&key.key_digest)
            .bind(key.revoked_at)
            .bind(Json(key))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
            Ok(())
        })
    }

    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(self.one("SELECT record FROM api_keys WHERE id = $1", id))
    }

    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(self.one(
            "SELECT record FROM api_keys WHERE key_digest = $1 AND revoked_at IS NULL",
            digest,
        ))
    }

    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(row) = sqlx::query("SELECT record FROM api_keys WHERE id = $1 FOR UPDATE")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(classify)?
            else {
                return Ok(None);
            };
            let mut key: ApiKeyRecord = record(&row, id)?;
            key.revoked_at.get_or_insert(at);
            sqlx::query("UPDATE api_keys SET revoked_at = $2, record = $3 WHERE id = $1")
                .bind(id)
                .bind(key.revoked_at)
                .bind(Json(&key))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(key))
        })
    }
}
