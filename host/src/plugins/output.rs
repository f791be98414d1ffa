//! Where a plugin's stdout and stderr go: one buffer per call that keeps the first bytes up to
//! a cap and counts the rest. Writing past the cap still succeeds for the guest, so a chatty
//! plugin loses output, never its request (wasmtime-wasi's `MemoryOutputPipe` refuses such
//! writes, which makes Rust's `println!` panic and the call trap).

use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// What is kept of a call's output (stdout and stderr interleaved) and how much was not.
#[derive(Debug, Default)]
struct Kept {
    bytes: Vec<u8>,
    dropped: usize,
}

/// A capped in-memory stdout/stderr; clones write to the same buffer.
#[derive(Debug, Clone)]
pub struct CappedOutput {
    kept: Arc<Mutex<Kept>>,
    capacity: usize,
}

impl CappedOutput {
    pub fn new(capacity: usize) -> Self {
        Self {
            kept: Arc::default(),
            capacity,
        }
    }

    fn write(&self, bytes: &[u8]) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let room = self.capacity.saturating_sub(kept.bytes.len());
        let (now, later) = bytes.split_at(bytes.len().min(room));
        kept.bytes.extend_from_slice(now);
        kept.dropped += later.len();
    }

    /// The output as text, with a last line saying how many bytes were not kept.
    pub fn contents(&self) -> String {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let mut text = String::from_utf8_lossy(&kept.bytes).into_owned();
        if kept.dropped > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[{} more bytes not kept: output is capped at {} bytes per call]",
                kept.dropped, self.capacity
            ));
        }
        text
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        CappedOutput::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        // Always ready: what does not fit is counted, not refused.
        Ok(64 << 10)
    }
}

impl AsyncWrite for CappedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        CappedOutput::write(&self, bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_cap_is_counted_not_refused() {
        let output = CappedOutput::new(8);
        let mut stream = output.p2_stream();
        stream.write(Bytes::from_static(b"hello ")).expect("write");
        stream.write(Bytes::from_static(b"world\n")).expect("write");
        assert!(stream.check_write().expect("check") > 0);
        assert_eq!(
            output.contents(),
            "hello wo\n[4 more bytes not kept: output is capped at 8 bytes per call]"
        );
    }

    #[test]
    fn output_within_the_cap_is_kept_whole() {
        let output = CappedOutput::new(64);
        output.write(b"one\n");
        output.clone().write(b"two\n");
        assert_eq!(output.contents(), "one\ntwo\n");
    }
}
