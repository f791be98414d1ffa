//! Serving the API's connections: a bounded number at a time, each let go once its client
//! goes quiet, so that no number of clients can take what the store needs to write.
//!
//! Every connection holds a file descriptor, as do the store's files, the database's and
//! Redis's connections, the document bucket's and the plugin cache's files. Connections let in
//! until the process had no descriptor left starved all of them: the journal found none for
//! its next file and failed for good, which stops the server. So the server raises its soft
//! open-files limit to the hard one as it starts ([`raise_open_files_limit`], as Go's runtime
//! does), and serves at most `max_connections` at once: by default that limit less
//! [`RESERVED_FILES`] for everything else, and at most [`DEFAULT_MAX_CONNECTIONS`]. Past it
//! the server stops accepting until a connection closes; new clients wait in the kernel's
//! backlog, and the server says so once a minute at most.
//!
//! A connection is closed once its client has sent nothing of a request for `client_timeout`
//! (hyper's header read timeout, which covers an idle keep-alive connection as well as headers
//! that never end), and a body that stops arriving for as long is answered 408
//! `request_timeout` ([`with_body_timeout`], [`is_body_timeout`]); one that takes nothing of
//! its answer for as long has its connection closed ([`StalledWrites`]). So a client that
//! opens connections and forgets them, or stalls mid-request, holds them for that long, not
//! for ever, and a shutdown waits for it no longer. An HTTP/2 connection is pinged once it has
//! been quiet for `client_timeout`, and closed when the ping is not answered within as long:
//! a client gone, or one that stopped reading, does not hold it for ever. (hyper has no idle
//! timeout for HTTP/2: a client that answers the pings keeps its connection.)

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use metrics::Gauge;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// File descriptors kept for everything but the API's connections: the store's files (sled's,
/// the journal's and its spare), PostgreSQL's pool (16), Redis, payment vendors, the document
/// bucket, the plugin cache, the plugin directory's watch, with room to spare.
pub const RESERVED_FILES: u64 = 256;

/// The most connections served at once unless told, however high the open-files limit: each
/// costs a task and its buffers, tens of KiB.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// How long a client may send nothing of a request before its connection is let go, unless
/// told.
pub const DEFAULT_CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the server says that it serves as many connections as it may, at most.
const AT_LIMIT_REPORT_EVERY: Duration = Duration::from_secs(60);

/// How long the server waits after an accept that failed for want of resources: the error
/// would come back at once.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Connections the kernel completes and keeps for the server to accept (capped by
/// `net.core.somaxconn`): where new clients wait while the server serves as many as it may.
/// Past it the kernel drops their handshakes, and clients try again a second later, then
/// three, then seven (the standard library listens with 128).
pub const LISTEN_BACKLOG: u32 = 1024;

/// Listens on `address` (`host:port`, the first of its addresses that can be bound) with
/// [`LISTEN_BACKLOG`].
pub async fn listen(address: &str) -> std::io::Result<TcpListener> {
    let mut last_error = None;
    for address in tokio::net::lookup_host(address).await? {
        let socket = if address.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        // As the standard library's bind does: a restart binds while the last one's
        // connections linger in TIME_WAIT.
        socket.set_reuseaddr(true)?;
        match socket.bind(address) {
            Ok(()) => return socket.listen(LISTEN_BACKLOG),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address resolves to nothing",
        )
    }))
}

/// How the server treats its clients' connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; past it the server accepts no more until one closes.
    pub max_connections: usize,
    /// How long a client may send nothing of a request (none: for ever).
    pub client_timeout: Option<Duration>,
}

/// Raises the process's soft limit of open files to its hard limit, where they differ: the
/// soft limit afterwards (none: unlimited, or unknown).
#[cfg(target_os = "linux")]
pub fn raise_open_files_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if let Err(error) = setrlimit(Resource::Nofile, raised) {
            tracing::warn!(%error, soft = ?limit.current, hard = ?limit.maximum, "the open-files limit could not be raised to the hard limit");
        }
    }
    getrlimit(Resource::Nofile).current
}

/// Elsewhere the limit is left as it is, and taken as unknown.
#[cfg(not(target_os = "linux"))]
pub fn raise_open_files_limit() -> Option<u64> {
    None
}

/// The connections served at once unless told, under an open-files limit of `open_files`
/// (none: unlimited).
pub fn default_max_connections(open_files: Option<u64>) -> usize {
    let Some(limit) = open_files else {
        return DEFAULT_MAX_CONNECTIONS;
    };
    // Below twice the reserve, half the descriptors go to connections.
    let for_connections = if limit > 2 * RESERVED_FILES {
        limit - RESERVED_FILES
    } else {
        limit / 2
    };
    usize::try_from(for_connections)
        .unwrap_or(usize::MAX)
        .clamp(1, DEFAULT_MAX_CONNECTIONS)
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves; then accepts no more
/// connections, lets each finish the request it is in, and returns once all are closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let (closing, closing_seen) = watch::channel(false);
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.client_timeout);
    if let Some(quiet) = limits.client_timeout {
        builder
            .http2()
            .timer(TokioTimer::new())
            .keep_alive_interval(quiet)
            .keep_alive_timeout(quiet);
    }
    let open = metrics::gauge!("ferry_http_connections");
    metrics::gauge!("ferry_http_connections_max").set(limits.max_connections as f64);
    let mut last_report: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if last_report.is_none_or(|at| at.elapsed() >= AT_LIMIT_REPORT_EVERY) {
                    last_report = Some(Instant::now());
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        "serving as many connections as allowed: new clients wait until one closes (--max-connections, --client-timeout-seconds)"
                    );
                }
                tokio::select! {
                    permit = permits.clone().acquire_owned() => match permit {
                        Ok(permit) => permit,
                        Err(_) => break,
                    },
                    () = &mut shutdown => break,
                }
            }
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    if !is_connection_error(&error) {
                        // Out of descriptors or memory: the error would come back at once.
                        tracing::error!(%error, "cannot accept a connection");
                        tokio::time::sleep(ACCEPT_RETRY).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        open.increment(1.0);
        tokio::spawn(serve_connection(
            stream,
            app.clone(),
            builder.clone(),
            limits.client_timeout,
            closing_seen.clone(),
            Served {
                _permit: permit,
                open: open.clone(),
            },
        ));
    }
    drop(listener);
    let _ = closing.send(true);
    // Every permit back: every connection closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
}

/// A connection's place among those served: given back, and counted out, when it closes.
struct Served {
    _permit: OwnedSemaphorePermit,
    open: Gauge,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.open.decrement(1.0);
    }
}

/// Serves one connection; `_served` is given back as it closes.
async fn serve_connection(
    stream: TcpStream,
    app: Router,
    builder: Builder<TokioExecutor>,
    client_timeout: Option<Duration>,
    mut closing: watch::Receiver<bool>,
    _served: Served,
) {
    // hyper's timeout starts once a connection's protocol is known, from its first bytes: a
    // client that sends none is let go here.
    if let Some(timeout) = client_timeout {
        let mut first_byte = [0u8; 1];
        tokio::select! {
            first = tokio::time::timeout(timeout, stream.peek(&mut first_byte)) => {
                if first.is_err() {
                    tracing::debug!("a client sent nothing: its connection is closed");
                    return;
                }
            }
            _ = closing.wait_for(|closing| *closing) => return,
        }
    }
    let service = TowerToHyperService::new(app);
    let stream = StalledWrites::new(stream, client_timeout);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended");
            }
            return;
        }
        _ = closing.wait_for(|closing| *closing) => {}
    }
    connection.as_mut().graceful_shutdown();
    if let Err(error) = connection.await {
        tracing::debug!(%error, "connection ended at shutdown");
    }
}

/// A connection whose writes fail once the client has taken nothing of them for `timeout`
/// (none: never): a client that stops reading its answer, its socket's buffers full, is let
/// go, as hyper has no write timeout of its own. The timer is armed only when a write has to
/// wait.
struct StalledWrites {
    stream: TcpStream,
    /// None: writes wait for ever.
    quiet: Option<QuietTimer>,
}

impl StalledWrites {
    fn new(stream: TcpStream, timeout: Option<Duration>) -> Self {
        Self {
            stream,
            quiet: timeout.map(QuietTimer::new),
        }
    }

    /// `written`, a write's poll: once it has waited for the timeout, an error.
    fn bounded<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        let Some(quiet) = &mut self.quiet else {
            return written;
        };
        quiet.bound(cx, written).map(|written| {
            written.unwrap_or_else(|timeout| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("the client took nothing of the answer for {timeout:?}"),
                ))
            })
        })
    }
}

/// A timer armed only while a poll is pending, and dropped as soon as it is ready: how long
/// a body's client or a connection's reader may stay quiet ([`IdleTimeoutBody`],
/// [`StalledWrites`]). A poll that is ready at once costs no timer.
struct QuietTimer {
    timeout: Duration,
    waiting: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl QuietTimer {
    fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            waiting: None,
        }
    }

    /// `polled`, as it came; or, once polls have been pending for the timeout since the last
    /// one that was ready, `Err` with the timeout.
    fn bound<T>(&mut self, cx: &mut Context<'_>, polled: Poll<T>) -> Poll<Result<T, Duration>> {
        if let Poll::Ready(value) = polled {
            self.waiting = None;
            return Poll::Ready(Ok(value));
        }
        let timeout = self.timeout;
        let waiting = self
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        waiting.as_mut().poll(cx).map(|()| Err(timeout))
    }
}

impl tokio::io::AsyncRead for StalledWrites {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for StalledWrites {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.bounded(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.bounded(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.stream).poll_flush(cx);
        self.bounded(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Errors of one connection that the client caused or ended, not of the listener.
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// The request's body, failing with [`BodyTimedOut`] once its client has sent nothing of it
/// for `timeout`: a layer of the router ([`tower::util::MapRequestLayer`], no future of its
/// own).
pub fn with_body_timeout(timeout: Duration, request: Request) -> Request {
    request.map(|body| Body::new(IdleTimeoutBody::new(body, timeout)))
}

/// Why a body could not be read: nothing of it came for the client timeout.
#[derive(Debug, thiserror::Error)]
#[error("nothing of the request body came for {0:?}")]
pub struct BodyTimedOut(Duration);

/// A body that fails once nothing of it has come for `timeout`, from one piece to the next.
/// tower-http's `TimeoutBody` does as much, but arms a timer before each poll of the body, data
/// waiting or not; this one arms it only once the body has to wait (most bodies never do), and
/// is a plain map of the request rather than a middleware with a future of its own: no work
/// for a request whose body is already there.
struct IdleTimeoutBody {
    inner: Body,
    quiet: QuietTimer,
}

impl IdleTimeoutBody {
    fn new(inner: Body, timeout: Duration) -> Self {
        Self {
            inner,
            quiet: QuietTimer::new(timeout),
        }
    }
}

impl http_body::Body for IdleTimeoutBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let frame = Pin::new(&mut this.inner).poll_frame(cx);
        this.quiet.bound(cx, frame).map(|frame| {
            frame.unwrap_or_else(|timeout| Some(Err(axum::Error::new(BodyTimedOut(timeout)))))
        })
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Whether reading a body failed because its client stopped sending it
/// ([`with_body_timeout`]).
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<BodyTimedOut>() {
            return true;
        }
        cause = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_leave_the_reserve_to_the_rest_of_the_server() {
        assert_eq!(default_max_connections(Some(1024)), 1024 - 256);
        assert_eq!(default_max_connections(Some(4096)), 4096 - 256);
        assert_eq!(default_max_connections(Some(300)), 150);
        assert_eq!(default_max_connections(Some(1)), 1);
        assert_eq!(
            default_max_connections(Some(1 << 20)),
            DEFAULT_MAX_CONNECTIONS
        );
        assert_eq!(default_max_connections(None), DEFAULT_MAX_CONNECTIONS);
    }
}
