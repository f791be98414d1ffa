//! Leases, bulk-migration records and secrets on PostgreSQL ([`LeaseStore`]): leases are rows
//! with an expiry, taken or kept by one conditional upsert (no advisory locks, which not every
//! PostgreSQL-compatible database has).

use super::{PgStore, classify, record};
use crate::domain::migrations::MigrationView;
use crate::domain::storage::{LeaseStore, StoreFuture};
use sqlx::types::Json;

impl LeaseStore for PgStore {
    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            sqlx::query(
                "INSERT INTO migrations (supplier, id, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (supplier, id) DO UPDATE SET record = EXCLUDED.record",
            )
            .bind(&migration.supplier)
            .bind(&migration.id)
            .bind(Json(migration))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
            Ok(())
        })
    }

    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>> {
        self.bounded(async move {
            sqlx::query("SELECT record FROM migrations WHERE supplier = $1 ORDER BY id")
                .bind(supplier)
                .fetch_all(&self.pool)
                .await
                .map_err(classify)?
                .iter()
                .map(|row| record(row, supplier))
                .collect()
        })
    }

    fn hold_lease<'a>(
        &'a self,
        name: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool> {
        self.bounded(async move {
            // The database's clock decides: instances' clocks may differ.
            let held: Option<String> = sqlx::query_scalar(
                "INSERT INTO leases (name, holder, expires_at)                  VALUES ($1, $2, now() + $3 * interval '1 millisecond')                  ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder,                  expires_at = EXCLUDED.expires_at                  WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < now()                  RETURNING holder",
            )
            .bind(name)
            .bind(holder)
            .bind(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
            Ok(held.is_some())
        })
    }

    fn release_lease<'a>(&'a self, name: &'a str, holder: &'a str) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                .bind(name)
                .bind(holder)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            Ok(())
        })
    }

    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>> {
        self.bounded(async move {
            let existing: Option<Vec<u8>> =
                sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(classify)?;
            if let Some(existing) = existing {
                return Ok(existing);
            }
            self.health.check()?;
            // The first instance to write it wins; the others read what it wrote.
            let fresh = make();
            sqlx::query("INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(name)
                .bind(&fresh)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1")
                .bind(name)
                .fetch_one(&self.pool)
                .await
                .map_err(classify)
        })
    }
}
