//! A TCP proxy in front of a real server that a test can cut and restore: the network between
//! Ferry and its database going down and coming back, with the database itself untouched
//! (other tests share it). Cut, its port refuses connections and every connection through it
//! is closed; restored, it listens on the same port again.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;

pub struct TcpProxy {
    address: SocketAddr,
    target: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl TcpProxy {
    /// Listens on a free port of 127.0.0.1 and forwards each connection to `target`
    /// (`host:port`).
    pub async fn start(target: &str) -> TcpProxy {
        let listener = listen(SocketAddr::from(([127, 0, 0, 1], 0))).expect("a free port");
        let proxy = TcpProxy {
            address: listener.local_addr().expect("the proxy's address"),
            target: target.to_owned(),
            tasks: Arc::default(),
        };
        proxy.serve(listener);
        proxy
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Stops listening (connecting is refused) and closes every connection made through it.
    pub fn cut(&self) {
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
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
        let tasks = self.tasks.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                let forwarding = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                tasks
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(forwarding);
            }
        });
        self.tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(accepting);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut();
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
