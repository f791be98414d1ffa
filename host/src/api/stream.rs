//! Streaming a long answer straight from a store's stream, in chunks, so that a list of a
//! million records never holds a million objects in memory: a JSON array ([`json_array`]) or
//! a CSV table with its header row ([`csv_table`], RFC 4180).

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use std::fmt::Display;
use std::io;
use tokio::sync::mpsc::Sender;

/// How much of the answer is sent at a time. Each chunk wakes the task that writes the
/// response, so smaller chunks cost wake-ups between the thread writing the answer and the
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
    let format = Format {
        opening: b"[".to_vec(),
        closing: b"]",
        write: |buffer: &mut Vec<u8>, item: &T, first: bool| {
            if !first {
                buffer.push(b',');
            }
            serde_json::to_writer(buffer, item).map_err(io::Error::other)
        },
    };
    streamed("application/json", items, format)
}

/// A 200 `text/csv` response: the `header` row, then one row of `values` for each of `items`,
/// each field quoted where RFC 4180 asks for it ([`write_csv_row`]), lines ending in CRLF.
/// Produced and sent as [`json_array`] is; a store error part-way ends the body early.
pub fn csv_table<T, E, S, const N: usize>(
    header: [&'static str; N],
    values: fn(&T) -> [&str; N],
    items: S,
) -> Response
where
    T: Send + 'static,
    E: Display,
    S: Stream<Item = Result<T, E>> + Send + 'static,
{
    let mut opening = Vec::new();
    write_csv_row(&mut opening, &header);
    let format = Format {
        opening,
        closing: b"",
        write: move |buffer: &mut Vec<u8>, item: &T, _first: bool| {
            write_csv_row(buffer, &values(item));
            Ok(())
        },
    };
    streamed("text/csv; charset=utf-8", items, format)
}

/// One CSV record of `fields` and its CRLF (RFC 4180): a field with a comma, a double quote,
/// a carriage return or a line feed is written in double quotes, its double quotes doubled;
/// the others as they are.
pub fn write_csv_row(buffer: &mut Vec<u8>, fields: &[&str]) {
    for (index, field) in fields.iter().enumerate() {
        if index > 0 {
            buffer.push(b',');
        }
        if field.contains([',', '"', '\r', '\n']) {
            buffer.push(b'"');
            buffer.extend_from_slice(field.replace('"', "\"\"").as_bytes());
            buffer.push(b'"');
        } else {
            buffer.extend_from_slice(field.as_bytes());
        }
    }
    buffer.extend_from_slice(b"\r\n");
}

/// How a streamed answer is written: what opens it, each item (told whether it is the
/// first), what closes it.
struct Format<W> {
    opening: Vec<u8>,
    closing: &'static [u8],
    write: W,
}

/// A 200 response of `content_type` whose body `format` writes from `items` on a blocking
/// thread, sent as it is written.
fn streamed<T, E, S, W>(content_type: &'static str, items: S, format: Format<W>) -> Response
where
    E: Display,
    S: Stream<Item = Result<T, E>> + Send + 'static,
    W: FnMut(&mut Vec<u8>, &T, bool) -> io::Result<()> + Send + 'static,
{
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Result<Bytes, io::Error>>(4);
    // Written on a blocking thread, off the workers that serve requests: a list of 100 000
    // accounts is about a tenth of a second of CPU.
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(write_all(items, format, sender)));
    let stream = futures_util::stream::poll_fn(move |context| receiver.poll_recv(context));
    let mut response = Response::new(Body::from_stream(stream));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn write_all<T, E, S, W>(
    items: S,
    mut format: Format<W>,
    sender: Sender<Result<Bytes, io::Error>>,
) where
    E: Display,
    S: Stream<Item = Result<T, E>>,
    W: FnMut(&mut Vec<u8>, &T, bool) -> io::Result<()>,
{
    let mut items = std::pin::pin!(items);
    let mut buffer = Vec::with_capacity(CHUNK_BYTES + 1024);
    buffer.append(&mut format.opening);
    let mut first = true;
    while let Some(item) = items.next().await {
        let item = match item {
            Ok(item) => item,
            Err(error) => {
                tracing::error!(%error, "list aborted by a store error");
                let _ = sender.send(Err(io::Error::other(error.to_string()))).await;
                return;
            }
        };
        if let Err(error) = (format.write)(&mut buffer, &item, first) {
            let _ = sender.send(Err(error)).await;
            return;
        }
        first = false;
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
    buffer.extend_from_slice(format.closing);
    let _ = sender.send(Ok(Bytes::from(buffer))).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn row(fields: &[&str]) -> String {
        let mut buffer = Vec::new();
        write_csv_row(&mut buffer, fields);
        String::from_utf8(buffer).expect("UTF-8")
    }

    #[test]
    fn csv_fields_are_quoted_only_where_rfc_4180_asks() {
        assert_eq!(row(&["ACC-1", "", "-35.00"]), "ACC-1,,-35.00\r\n");
        assert_eq!(
            row(&["a,b", "say \"hi\"", "two\nlines", "cr\r"]),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\r\"\r\n"
        );
        assert_eq!(row(&["it's; fine"]), "it's; fine\r\n");
    }

    async fn body_of(response: Response) -> (String, Option<String>) {
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let bytes = response
            .into_body()
            .collect()
            .await
            .map(|body| body.to_bytes())
            .unwrap_or_default();
        (String::from_utf8_lossy(&bytes).into_owned(), content_type)
    }

    #[tokio::test]
    async fn a_table_has_its_header_even_without_rows_and_each_row_after_it() {
        let rows = |items: Vec<[&'static str; 2]>| {
            futures_util::stream::iter(items.into_iter().map(Ok::<_, String>))
        };
        let values = |row: &[&'static str; 2]| *row;
        let (text, content_type) = body_of(csv_table(["a", "b"], values, rows(vec![]))).await;
        assert_eq!(text, "a,b\r\n");
        assert_eq!(content_type.as_deref(), Some("text/csv; charset=utf-8"));
        let (text, _) = body_of(csv_table(
            ["a", "b"],
            values,
            rows(vec![["1", "x,y"], ["2", ""]]),
        ))
        .await;
        assert_eq!(text, "a,b\r\n1,\"x,y\"\r\n2,\r\n");
    }

    #[tokio::test]
    async fn an_array_is_written_with_its_commas() {
        let items = futures_util::stream::iter([Ok::<_, String>(1), Ok(2), Ok(3)]);
        let (text, content_type) = body_of(json_array(items)).await;
        assert_eq!(text, "[1,2,3]");
        assert_eq!(content_type.as_deref(), Some("application/json"));
    }

    #[tokio::test]
    async fn a_store_error_part_way_ends_the_body_in_error() {
        let items = futures_util::stream::iter([Ok(["1"]), Err("the store failed".to_owned())]);
        let response = csv_table(["a"], |row: &[&'static str; 1]| *row, items);
        assert!(response.into_body().collect().await.is_err());
    }
}
