//! Document paths: where in the bucket a payload's `document_path` or `statement_path` points.
//!
//! Key = supplier `document_root` + payload path (one leading `/` accepted). A path with a
//! scheme, `..`, `.`, empty segments, backslashes or control characters is refused, so no
//! path can reach outside the supplier's root.

use super::error::DomainError;
use super::ports::Documents;
use super::validation::{FieldError, FieldErrors};

/// Why a payload path was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidPath;

pub const INVALID_PATH_CODE: &str = "invalid_document_path";
pub const INVALID_PATH_DETAIL: &str = "Use a relative path inside the supplier's document root: no scheme, no `..`, `.` or empty segments.";

fn segments(path: &str) -> Result<Vec<&str>, InvalidPath> {
    if path.contains("://") || path.contains('\\') || path.chars().any(char::is_control) {
        return Err(InvalidPath);
    }
    let segments: Vec<&str> = path.split('/').collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == "..")
    {
        return Err(InvalidPath);
    }
    Ok(segments)
}

/// Checks a payload path on its own (before the supplier is known).
pub fn check_payload_path(path: &str) -> Result<(), InvalidPath> {
    segments(path.strip_prefix('/').unwrap_or(path)).map(|_| ())
}

/// The bucket key of `path` under the supplier's `root`.
pub fn document_key(root: &str, path: &str) -> Result<String, InvalidPath> {
    let path = path.strip_prefix('/').unwrap_or(path);
    let mut parts: Vec<&str> = Vec::new();
    let root = root.trim_matches('/');
    if !root.is_empty() {
        parts.extend(segments(root)?);
    }
    parts.extend(segments(path)?);
    Ok(parts.join("/"))
}

/// Checks that the document at the payload `path` is in the bucket under the supplier's
/// `root`, as every endpoint that names documents does: a path that is not one, or names
/// nothing there, is recorded as an error at `attr`. A bucket that cannot answer is an error.
pub async fn check_document(
    documents: &dyn Documents,
    root: &str,
    path: &str,
    attr: String,
    errors: &mut FieldErrors,
) -> Result<(), DomainError> {
    let Ok(key) = document_key(root, path) else {
        errors.push(FieldError::new(
            attr,
            INVALID_PATH_CODE,
            INVALID_PATH_DETAIL,
        ));
        return Ok(());
    };
    let exists = documents
        .exists(&key)
        .await
        .map_err(|error| DomainError::DocumentStore(error.to_string()))?;
    if !exists {
        errors.push(FieldError::new(
            attr,
            "path_does_not_exist_in_file_store",
            format!("No document at {path} in the supplier's document store."),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_inside_the_root() {
        assert_eq!(
            document_key("old-co/", "/notes/a.pdf"),
            Ok("old-co/notes/a.pdf".into())
        );
        assert_eq!(document_key("", "a.pdf"), Ok("a.pdf".into()));
        assert_eq!(
            document_key("/deep/root/", "x/y.pdf"),
            Ok("deep/root/x/y.pdf".into())
        );
        for bad in [
            "../secret",
            "a/../../b",
            "a//b",
            "//a",
            "s3://bucket/a",
            "a/./b",
            "a\\b",
            "",
            "/",
            "a/",
            "a\nb",
        ] {
            assert_eq!(document_key("old-co", bad), Err(InvalidPath), "{bad:?}");
        }
    }
}
