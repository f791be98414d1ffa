//! The document bucket, through `object_store`: a local folder (`file://PATH`, the default
//! under the data directory) or S3 (`s3://bucket[/prefix]`, credentials from the usual AWS
//! environment variables). A document's check takes at most the bucket's deadline, retries
//! included: an S3 that fails or stops answering is reported by then, not after
//! object_store's own minutes (30 s an attempt, retries for up to three minutes).

use crate::domain::ports::{DocumentStoreError, Documents};
use futures_util::future::BoxFuture;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// How long a document's check may take, retries included, unless told otherwise.
pub const DEFAULT_BUCKET_DEADLINE: Duration = Duration::from_secs(5);

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
    deadline: Duration,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({})", self.store)
    }
}

impl Bucket {
    /// The bucket at `url`, each document's check given at most `deadline`.
    pub fn open(url: &str, deadline: Duration) -> Result<Self, BucketError> {
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
                deadline,
            });
        }
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            // No retry starts after half the deadline, so that an S3 that keeps failing is
            // reported by its last failure, mostly, rather than by the deadline. (The client's
            // options are left as the environment set them: `with_client_options` would
            // replace them, `AWS_ALLOW_HTTP` and proxies with them.)
            let s3 = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .with_retry(RetryConfig {
                    retry_timeout: deadline / 2,
                    ..RetryConfig::default()
                })
                .build()
                .map_err(|error| open_error(error.to_string()))?;
            let store: Arc<dyn ObjectStore> = if prefix.trim_matches('/').is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(PrefixStore::new(s3, prefix.trim_matches('/')))
            };
            return Ok(Self { store, deadline });
        }
        Err(BucketError::Unsupported(url.to_owned()))
    }
}

impl Documents for Bucket {
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DocumentStoreError>> {
        Box::pin(async move {
            let key = Path::from(key);
            let Ok(answer) = tokio::time::timeout(self.deadline, self.store.head(&key)).await
            else {
                return Err(DocumentStoreError(format!(
                    "no answer within {} ms",
                    self.deadline.as_millis()
                )));
            };
            match answer {
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
        let bucket = Bucket::open(
            &format!("file://{}", dir.path().display()),
            DEFAULT_BUCKET_DEADLINE,
        )
        .expect("bucket");
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
            Bucket::open("ftp://x", DEFAULT_BUCKET_DEADLINE),
            Err(BucketError::Unsupported(_))
        ));
    }
}
