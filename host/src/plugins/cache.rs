//! Compiled components cached on disk by the SHA-256 of their bytes, so a plugin is compiled
//! once, also across restarts.

use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use wasmtime::Engine;
use wasmtime::component::Component;

/// Hex SHA-256 of a component's bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[derive(Debug, Clone)]
pub struct ArtifactCache {
    dir: PathBuf,
}

impl ArtifactCache {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn path(&self, engine: &Engine, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}{}", Self::suffix(engine)))
    }

    /// What ends the name of a component compiled by `engine`: its compatibility hash.
    fn suffix(engine: &Engine) -> String {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        format!("-{:016x}.cwasm", hasher.finish())
    }

    /// Removes every compiled component but those of `kept` (SHA-256s of sources) compiled by
    /// `engine`: a replaced or removed plugin's, and those an earlier Ferry's engine made,
    /// which nothing loads again. Files being written (`.tmp`) and any other file are left.
    pub fn retain(&self, engine: &Engine, kept: &HashSet<&str>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let suffix = Self::suffix(engine);
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let in_use = name
                .strip_suffix(&suffix)
                .is_some_and(|sha256| kept.contains(sha256));
            if name.ends_with(".cwasm") && !in_use {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => {
                        tracing::info!(file = name, "removed a compiled plugin no longer in use")
                    }
                    Err(error) => {
                        tracing::warn!(file = name, %error, "cannot remove a compiled plugin no longer in use")
                    }
                }
            }
        }
    }

    /// The compiled component of `bytes`: from the cache when it is there, else compiled and
    /// written to the cache.
    pub fn component(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> wasmtime::Result<Component> {
        let path = self.path(engine, sha256);
        if path.exists() {
            // SAFETY: the file was written by `engine.precompile_component` below, into Ferry's
            // own data directory, under a name made of the source's SHA-256 and the engine's
            // compatibility hash; nothing else writes there.
            #[allow(unsafe_code)]
            let cached = unsafe { Component::deserialize_file(engine, &path) };
            match cached {
                Ok(component) => return Ok(component),
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "discarding an unreadable compiled plugin");
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        let artifact = engine.precompile_component(bytes)?;
        if std::fs::create_dir_all(&self.dir).is_ok() {
            let temporary = path.with_extension("tmp");
            if std::fs::write(&temporary, &artifact).is_ok() {
                let _ = std::fs::rename(&temporary, &path);
            }
        }
        // SAFETY: `artifact` was produced just above by this engine's `precompile_component`.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, &artifact) };
        component
    }
}
