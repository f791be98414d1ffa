//! `ferry serve --plugin-dir DIR`: for development, installs `DIR/<SUPPLIER>.wasm` for its
//! supplier whenever the file appears or changes, and removes the plugin when it goes.

use super::registry::Plugins;
use crate::domain::error::DomainError;
use crate::domain::supplier::is_valid_code;
use notify::{RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Files settle this long before they are read (editors and builds write in steps).
const SETTLE: Duration = Duration::from_millis(150);

/// Watches `dir` (created if missing): the watch is set up at once, and the task to run in
/// the background, until `stop` fires, is returned.
pub fn watching(
    dir: PathBuf,
    plugins: Arc<Plugins>,
    stop: CancellationToken,
) -> Result<impl Future<Output = ()> + Send + 'static, notify::Error> {
    std::fs::create_dir_all(&dir).map_err(notify::Error::io)?;
    let (changed, mut changes) = mpsc::unbounded_channel::<PathBuf>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            for path in event.paths {
                let _ = changed.send(path);
            }
        }
    })?;
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    Ok(async move {
        let _watcher = watcher;
        let mut pending: BTreeSet<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .collect()
            })
            .unwrap_or_default();
        loop {
            tokio::time::sleep(SETTLE).await;
            while let Ok(path) = changes.try_recv() {
                pending.insert(path);
            }
            for path in std::mem::take(&mut pending) {
                sync(&plugins, &path).await;
            }
            tokio::select! {
                Some(path) = changes.recv() => { pending.insert(path); }
                () = stop.cancelled() => return,
            }
        }
    })
}

fn supplier_of(path: &Path) -> Option<String> {
    if path.extension()? != "wasm" {
        return None;
    }
    let code = path.file_stem()?.to_str()?.to_owned();
    is_valid_code(&code).then_some(code)
}

async fn sync(plugins: &Plugins, path: &Path) {
    let Some(supplier) = supplier_of(path) else {
        return;
    };
    match tokio::fs::read(path).await {
        Ok(bytes) => {
            let unchanged = plugins
                .view(&supplier)
                .await
                .is_ok_and(|view| view.record.sha256 == super::sha256_hex(&bytes));
            if unchanged {
                return;
            }
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            match plugins.install(&supplier, bytes, name, None, None).await {
                Ok(record) => {
                    tracing::info!(%supplier, sha256 = %record.sha256, "plugin reloaded from the plugin directory")
                }
                Err(error) => {
                    tracing::warn!(%supplier, path = %path.display(), %error, "plugin from the plugin directory refused")
                }
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            match plugins.remove(&supplier).await {
                Ok(_) | Err(DomainError::PluginNotFound) => {}
                Err(error) => tracing::warn!(%supplier, %error, "cannot remove the plugin"),
            }
        }
        Err(error) => tracing::warn!(path = %path.display(), %error, "cannot read a plugin file"),
    }
}
