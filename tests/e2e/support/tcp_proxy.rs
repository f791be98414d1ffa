//! A TCP proxy in front of a real server that a test can cut and restore, or freeze and thaw:
//! the network between Ferry and its database going down and coming back, with the database
//! itself untouched (other tests share it). Cut, its port refuses connections and every
//! connection through it is closed; restored, it listens on the same port again. Frozen, it
//! keeps every connection open and takes new ones but passes nothing on, either way, as a
//! network that drops packets without a word does; thawed, it passes on what it held. Hanging
//! up, it takes each connection and closes it at once, as a load balancer or a connection
//! pooler with no database behind it does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct TcpProxy {
    address: SocketAddr,
    target: String,
    /// The task taking connections, while it listens.
    listening: Mutex<Option<JoinHandle<()>>>,
    /// A task forwarding each connection taken.
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    frozen: watch::Sender<bool>,
    hanging_up: Arc<AtomicBool>,
}

impl TcpProxy {
    /// Listens on a free port of 127.0.0.1 and forwards each connection to `target`
    /// (`host:port`).
    pub async fn start(target: &str) -> TcpProxy {
        let listener = listen(SocketAddr::from(([127, 0, 0, 1], 0))).expect("a free port");
        let proxy = TcpProxy {
            address: listener.local_addr().expect("the proxy's address"),
            target: target.to_owned(),
            listening: Mutex::default(),
            connections: Arc::default(),
            frozen: watch::Sender::new(false),
            hanging_up: Arc::default(),
        };
        proxy.serve(listener);
        proxy
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Stops listening (connecting is refused) and closes every connection made through it.
    pub fn cut(&self) {
        if let Some(listening) = self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            listening.abort();
        }
        self.close_connections();
    }

    fn close_connections(&self) {
        for task in self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }

    /// Passes nothing on, either way, until [`Self::thaw`]: every connection stays open.
    pub fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    /// Passes on again what it held and what comes.
    pub fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    /// Closes every connection made through it, and from now on each new one as soon as it is
    /// taken, until [`Self::stop_hanging_up`].
    pub fn hang_up(&self) {
        self.hanging_up.store(true, Ordering::SeqCst);
        self.close_connections();
    }

    /// Forwards new connections again.
    pub fn stop_hanging_up(&self) {
        self.hanging_up.store(false, Ordering::SeqCst);
    }

    /// Listens on the same port again.
    pub async fn restore(&self) {
        let mut tries = 0;
        let listener = loop {
            match listen(self.address) {
                Ok(listener) => break listener,
                Err(error) if tries < 50 => {
                    tries += 1;
                    eprintln!("proxy: cannot listen again yet: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => panic!("the proxy cannot listen on {} again: {error}", self.address),
            }
        };
        self.serve(listener);
    }

    fn serve(&self, listener: TcpListener) {
        let target = self.target.clone();
        let connections = self.connections.clone();
        let frozen = self.frozen.clone();
        let hanging_up = self.hanging_up.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if hanging_up.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let target = target.clone();
                let frozen = frozen.clone();
                let forwarding = tokio::spawn(async move {
                    if thawed(&mut frozen.subscribe()).await
                        && let Ok(server) = TcpStream::connect(&target).await
                    {
                        let (client_read, client_write) = client.into_split();
                        let (server_read, server_write) = server.into_split();
                        tokio::join!(
                            pass_on(client_read, server_write, frozen.subscribe()),
                            pass_on(server_read, client_write, frozen.subscribe()),
                        );
                    }
                });
                connections
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(forwarding);
            }
        });
        *self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(accepting);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Whether the proxy is not frozen, once it is not (false: the proxy is gone).
async fn thawed(frozen: &mut watch::Receiver<bool>) -> bool {
    frozen.wait_for(|frozen| !frozen).await.is_ok()
}

/// Copies `from` to `to` until either ends, holding what it read, and its end, while the proxy
/// is frozen.
async fn pass_on(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    mut frozen: watch::Receiver<bool>,
) {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if !thawed(&mut frozen).await || to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
    if thawed(&mut frozen).await {
        let _ = to.shutdown().await;
    }
}

/// A listener on `address` that may take the port again while connections closed through it
/// linger in TIME_WAIT.
fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(128)
}
