//! Plugins on PostgreSQL ([`PluginStore`]): a row per supplier's plugin, and the components
//! by their SHA-256. The changes to plugins take one advisory lock, so that a component is
//! removed only once no plugin runs it.

use super::{PgStore, classify, record};
use crate::domain::plugin::PluginRecord;
use crate::domain::storage::{PluginStore, StoreError, StoreFuture};
use sqlx::types::Json;
use std::collections::BTreeMap;

/// A key of `pg_advisory_xact_lock` that serializes the changes to plugins: a component is
/// removed once no plugin runs it, which a change made at the same moment could not see.
const PLUGIN_CHANGES_LOCK: i64 = 0x6665_7272_795f_706c; // "ferry_pl"

/// Waits for the changes to plugins made at the same moment (the lock is held to the end of
/// the transaction); the supplier's plugin as it stands then.
async fn plugins_changing(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    supplier: &str,
) -> Result<Option<PluginRecord>, StoreError> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(PLUGIN_CHANGES_LOCK)
        .execute(&mut **tx)
        .await
        .map_err(classify)?;
    sqlx::query("SELECT record FROM plugins WHERE supplier = $1")
        .bind(supplier)
        .fetch_optional(&mut **tx)
        .await
        .map_err(classify)?
        .map(|row| record(&row, supplier))
        .transpose()
}

/// Removes the component `replaced` (a supplier's plugin being replaced or removed) ran,
/// unless a plugin still runs it (the replacement's own, or another supplier's).
async fn remove_component_unless_used(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    replaced: &PluginRecord,
) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM plugin_components WHERE sha256 = $1 \
         AND NOT EXISTS (SELECT 1 FROM plugins WHERE sha256 = $1)",
    )
    .bind(&replaced.sha256)
    .execute(&mut **tx)
    .await
    .map_err(classify)?;
    Ok(())
}

impl PluginStore for PgStore {
    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let replaced = plugins_changing(&mut tx, &record.supplier).await?;
            sqlx::query(
                "INSERT INTO plugin_components (sha256, component) VALUES ($1, $2) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(&record.sha256)
            .bind(component)
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            sqlx::query(
                "INSERT INTO plugins (supplier, sha256, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (supplier) DO UPDATE SET sha256 = EXCLUDED.sha256, \
                 record = EXCLUDED.record",
            )
            .bind(&record.supplier)
            .bind(&record.sha256)
            .bind(Json(record))
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            if let Some(replaced) = replaced {
                remove_component_unless_used(&mut tx, &replaced).await?;
            }
            tx.commit().await.map_err(classify)?;
            Ok(())
        })
    }

    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(mut plugin) = plugins_changing(&mut tx, supplier).await? else {
                return Ok(None);
            };
            if plugin.sha256 != sha256 {
                return Err(StoreError::Conflict);
            }
            plugin.config = config.clone();
            sqlx::query("UPDATE plugins SET record = $2 WHERE supplier = $1")
                .bind(supplier)
                .bind(Json(&plugin))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(plugin))
        })
    }

    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(self.one("SELECT record FROM plugins WHERE supplier = $1", supplier))
    }

    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>> {
        self.bounded(self.all("SELECT record FROM plugins ORDER BY supplier"))
    }

    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        self.bounded(async move {
            sqlx::query_scalar("SELECT component FROM plugin_components WHERE sha256 = $1")
                .bind(sha256)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)
        })
    }

    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let removed = plugins_changing(&mut tx, supplier).await?;
            sqlx::query("DELETE FROM plugins WHERE supplier = $1")
                .bind(supplier)
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            if let Some(removed) = &removed {
                remove_component_unless_used(&mut tx, removed).await?;
            }
            tx.commit().await.map_err(classify)?;
            Ok(removed)
        })
    }
}
