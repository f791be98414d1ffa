//! What the operator commands print on stdout, and how they stop quietly when the reader
//! goes away (`ferry plugin check FILE | head -1`): every print is a fallible write, a closed
//! pipe travels up as an error, and `main` ends the command without a word
//! ([`is_reader_gone`]).

use serde::Serialize;
use std::fmt::Display;
use std::io::{self, Write};

/// Prints a JSON answer for people (and `jq`), pretty.
pub fn print_json(value: &impl Serialize) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    print_line(text)
}

/// Prints one line and flushes it (so a follower such as `events tail` is read at once).
pub fn print_line(line: impl Display) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()
}

/// The command failed only because whoever read its output stopped reading.
pub fn is_reader_gone(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|error| error.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_anywhere_in_the_chain_means_the_reader_went_away() {
        let closed = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe))
            .context("cannot print the answer");
        assert!(is_reader_gone(&closed));
        let other = anyhow::Error::new(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(!is_reader_gone(&other));
        assert!(!is_reader_gone(&anyhow::anyhow!("the server refused")));
    }
}
