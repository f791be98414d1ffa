//! The document bucket, through `object_store`: a local folder (`file://PATH`, the default
//! under the data directory) or S3 (`s3://bucket[/prefix]`, credentials from the usual AWS
//! environment variables).

use crate::domain::ports::{DocumentStoreError, Documents};
use futures_util::future::BoxFuture;
use object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    #[error("cannot open bucket {url}: {detail}")]
    Open { url: String, detail: String },
    #[error("unsupported bucket URL {0}: use file://PATH or s3://BUCKET[/PREFIX]")]
    Unsupported(String),
}

/// The bucket holding suppliers' documents.
#[derive(Clone)]
pub struct Bucket {
    store: Arc<dyn ObjectStore>,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({})", self.store)
    }
}

impl Bucket {
    pub fn open(url: &str) -> Result<Self, BucketError> {
        let open_error = |detail: String| BucketError::Open {
            url: url.to_owned(),
            detail,
        };
        if let Some(path) = url.strip_prefix("file://") {
            std::fs::create_dir_all(path).map_err(|error| open_error(error.to_string()))?;
            let local = LocalFileSystem::new_with_prefix(path)
                .map_err(|error| open_error(error.to_string()))?;
            return Ok(Self {
                store: Arc::new(local),
            });
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            let s3 = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map_err(|error| open_error(error.to_string()))?;
            let store: Arc<dyn ObjectStore> = if prefix.trim_matches('/').is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(PrefixStore::new(s3, prefix.trim_matches('/')))
            };
            return Ok(Self { store });
        }
        Err(BucketError::Unsupported(url.to_owned()))
    }
}

impl Documents for Bucket {
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DocumentStoreError>> {
        Box::pin(async move {
            match self.store.head(&Path::from(key)).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(error) if names_no_file(&error) => Ok(false),
                Err(error) => Err(DocumentStoreError(error.to_string())),
            }
        })
    }
}

/// Whether a local bucket failed because the key cannot name a file there (a segment longer
/// than the file system allows, or a "folder" that is a file): the document does not exist,
/// and the store is fine.
fn names_no_file(error: &object_store::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::NotADirectory
                    | std::io::ErrorKind::InvalidFilename
            );
        }
        cause = current.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finds_files_in_a_local_bucket() {
        let dir = tempfile::tempdir().expect("temp");
        std::fs::create_dir_all(dir.path().join("old-co/notes")).expect("dirs");
        std::fs::write(dir.path().join("old-co/notes/a.pdf"), b"%PDF").expect("file");
        let bucket = Bucket::open(&format!("file://{}", dir.path().display())).expect("bucket");
        assert!(bucket.exists("old-co/notes/a.pdf").await.expect("head"));
        assert!(!bucket.exists("old-co/notes/b.pdf").await.expect("head"));
        // Keys no file can have: a name too long for the file system, a file as a folder.
        let long = format!("old-co/{}", "x".repeat(300));
        assert!(!bucket.exists(&long).await.expect("head"));
        assert!(
            !bucket
                .exists("old-co/notes/a.pdf/b.pdf")
                .await
                .expect("head")
        );
        assert!(matches!(
            Bucket::open("ftp://x"),
            Err(BucketError::Unsupported(_))
        ));
    }
}
