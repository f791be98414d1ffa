//! Streaming a JSON array straight from a store's stream, in chunks, so that a list of a
//! million records never holds a million objects in memory.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use std::fmt::Display;
use tokio::sync::mpsc::Sender;

/// How much of the array is sent at a time. Each chunk wakes the task that writes the
/// response, so smaller chunks cost wake-ups between the thread writing the array and the
/// worker sending it: at 32 KiB a long list takes about twice as long as at 128 KiB. At most
/// five chunks per list are held (the channel's and the one filling).
const CHUNK_BYTES: usize = 128 * 1024;

/// A 200 response whose body is the JSON array of `items`, produced on a blocking thread and
/// sent as it is written. A store error part-way ends the body early (the client sees a
/// truncated array rather than a wrong one).
pub fn json_array<T, E, S>(items: S) -> Response
where
    T: Serialize,
    E: Display,
    S: Stream<Item = Result<T, E>> + Send + 'static,
{
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    // Written on a blocking thread, off the workers that serve requests: a list of 100 000
    // accounts is about a tenth of a second of CPU.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(write_array(items, sender)));
    let stream = futures_util::stream::poll_fn(move |context| receiver.poll_recv(context));
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

async fn write_array<T, E, S>(items: S, sender: Sender<Result<Bytes, std::io::Error>>)
where
    T: Serialize,
    E: Display,
    S: Stream<Item = Result<T, E>>,
{
    let mut items = std::pin::pin!(items);
    let mut buffer = Vec::with_capacity(CHUNK_BYTES + 1024);
    buffer.push(b'[');
    let mut first = true;
    while let Some(item) = items.next().await {
        let item = match item {
            Ok(item) => item,
            Err(error) => {
                tracing::error!(%error, "list aborted by a store error");
                let _ = sender
                    .send(Err(std::io::Error::other(error.to_string())))
                    .await;
                return;
            }
        };
        if !first {
            buffer.push(b',');
        }
        first = false;
        if let Err(error) = serde_json::to_writer(&mut buffer, &item) {
            let _ = sender.send(Err(std::io::Error::other(error))).await;
            return;
        }
        if buffer.len() >= CHUNK_BYTES {
            let chunk = Bytes::from(std::mem::replace(
                &mut buffer,
                Vec::with_capacity(CHUNK_BYTES + 1024),
            ));
            if sender.send(Ok(chunk)).await.is_err() {
                return; // the client went away
            }
        }
    }
    buffer.push(b']');
    let _ = sender.send(Ok(Bytes::from(buffer))).await;
}
