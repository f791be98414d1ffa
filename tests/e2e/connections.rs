//! Clients' connections: a client that sends nothing, or stops mid-request, is let go after
//! the server's client timeout (an idle connection closed, a stalled body answered 408
//! `request_timeout`, and a shutdown no longer waits for it for ever; one that stops reading
//! its answers has its connection closed, and so has an HTTP/2 client that answers nothing,
//! not even pings); past
//! `--max-connections` new clients wait until a connection closes;
//! and a flood of connections, however many, leaves the store the files it needs, so writes
//! go on (before, the flood took every descriptor, the journal found none for its next file,
//! and the server stopped for good). Raw sockets, so that the test controls every byte.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Far longer than the one-second client timeout these servers have: a connection still open
/// this long after its client went quiet was not let go.
const LET_GO_WITHIN: Duration = Duration::from_secs(20);

/// The address `server` listens on.
fn address_of_server(server: &Server) -> SocketAddr {
    server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("address")
}

/// A connection to `server` that sends nothing until told.
fn connect(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(address_of_server(server)).expect("connect");
    stream
        .set_read_timeout(Some(LET_GO_WITHIN))
        .expect("read timeout");
    stream
}

/// Everything the server sends on `stream` until it closes it; panics if it is still open
/// after [`LET_GO_WITHIN`].
fn read_until_closed(stream: &mut TcpStream) -> String {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return String::from_utf8_lossy(&received).into_owned(),
            Ok(read) => received.extend_from_slice(&buffer[..read]),
            Err(error) if error.kind() == ErrorKind::ConnectionReset => {
                return String::from_utf8_lossy(&received).into_owned();
            }
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!(
                    "the server kept a quiet client's connection open for {:?}; it sent {:?}",
                    started.elapsed(),
                    String::from_utf8_lossy(&received)
                )
            }
            Err(error) => panic!("read: {error}"),
        }
    }
}

fn quick_timeout() -> Options {
    Options {
        env: vec![("FERRY_CLIENT_TIMEOUT_SECONDS".into(), "1".into())],
        ..Options::default()
    }
}

/// At most `max_connections` served at once, a client quiet for `client_timeout_seconds` let
/// go (0: never).
fn limited(max_connections: usize, client_timeout_seconds: u64) -> Options {
    Options {
        env: vec![
            ("FERRY_MAX_CONNECTIONS".into(), max_connections.to_string()),
            (
                "FERRY_CLIENT_TIMEOUT_SECONDS".into(),
                client_timeout_seconds.to_string(),
            ),
        ],
        ..Options::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_sends_nothing_is_let_go_and_a_stalled_body_is_answered_408() {
    let server = Server::start_with(quick_timeout()).await;
    let host = address_of_server(&server).to_string();

    // A connection that never sends a byte.
    let mut silent = connect(&server);
    assert_eq!(read_until_closed(&mut silent), "");

    // Headers that never end.
    let mut unfinished = connect(&server);
    write!(unfinished, "GET /healthz HTTP/1.1\r\nHost: {host}\r\n").expect("write");
    read_until_closed(&mut unfinished);

    // A keep-alive connection after its request: answered, then let go once idle.
    let mut kept = connect(&server);
    write!(kept, "GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").expect("write");
    let answered = read_until_closed(&mut kept);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");

    // A body that stops arriving: 408 in the error format, and the connection closed.
    let mut stalled = connect(&server);
    write!(
        stalled,
        "POST /admin/v1/suppliers HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {OPERATOR_KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"code\": \"STALLED\""
    )
    .expect("write");
    let answer = read_until_closed(&mut stalled);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or_default())
        .unwrap_or_else(|error| panic!("{error}: {answer}"));
    assert_error(&body, "request_timeout");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("1 seconds"),
        "{body}"
    );
    // Nothing of the stalled request was made.
    let (status, _) = server
        .admin(Method::GET, "/admin/v1/suppliers/STALLED", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A client that keeps sending is served whatever the timeout: a body sent in pieces,
    // each within it, over more than the timeout in all.
    let mut patient = connect(&server);
    let body = br#"{"code": "PATIENT", "name": "Patient", "document_root": ""}"#;
    write!(
        patient,
        "POST /admin/v1/suppliers HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {OPERATOR_KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .expect("write");
    for piece in body.chunks(body.len() / 4 + 1) {
        std::thread::sleep(Duration::from_millis(400));
        patient.write_all(piece).expect("write");
    }
    let answer = read_until_closed(&mut patient);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
}

/// An HTTP/2 client (prior knowledge, as h2c) that opens its connection and then answers
/// nothing, not even the server's pings, is let go: the server pings a connection quiet for
/// the client timeout and closes it when the ping goes unanswered as long.
#[tokio::test(flavor = "multi_thread")]
async fn an_http2_client_that_answers_nothing_is_let_go() {
    let server = Server::start_with(quick_timeout()).await;
    let mut client = connect(&server);
    // The connection preface, then an empty SETTINGS frame (length 0, type 4, no flags,
    // stream 0); never an acknowledgement of the server's settings or pings.
    client
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .expect("preface");
    client
        .write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0])
        .expect("settings");
    let sent = read_until_closed(&mut client);
    // The server's SETTINGS frame came first: the connection was served as HTTP/2.
    assert_eq!(sent.as_bytes().get(3), Some(&4u8), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_connection_limit_a_client_waits_for_a_connection_to_close() {
    // Quiet connections are kept: only the limit is at work here.
    let server = Server::start_with(limited(3, 0)).await;
    let mut idle: Vec<TcpStream> = (0..3).map(|_| connect(&server)).collect();
    // The server has accepted them (each answers once asked, below); a fourth client waits.
    let url = server.url("/healthz");
    let waiting = tokio::spawn(async move {
        reqwest::Client::new()
            .get(url)
            .timeout(REQUEST_TIMEOUT)
            .send()
            .await
            .map(|response| response.status())
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !waiting.is_finished(),
        "a fourth connection was served while three were open, past --max-connections 3"
    );
    // One of the three is served, and closes: the fourth's turn.
    let host = address_of_server(&server).to_string();
    let mut first = idle.remove(0);
    write!(
        first,
        "GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let answer = read_until_closed(&mut first);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let status = tokio::time::timeout(LET_GO_WITHIN, waiting)
        .await
        .expect("the waiting client was not served once a connection closed")
        .expect("task")
        .expect("request");
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_past_the_limit_wait_in_a_backlog_deeper_than_the_default() {
    let server = Server::start_with(limited(1, 0)).await;
    let address = address_of_server(&server);
    // One served, the rest waiting to be accepted: each connects at once (its handshake done
    // by the kernel), past the standard library's backlog of 128.
    let waiting: Vec<TcpStream> = (0..300)
        .map(|client| {
            TcpStream::connect_timeout(&address, Duration::from_secs(2)).unwrap_or_else(|error| {
                panic!("client {client} could not even wait for its turn: {error}")
            })
        })
        .collect();
    assert_eq!(waiting.len(), 300);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_stops_reading_its_answers_is_let_go() {
    let server = Server::start_with(limited(1, 1)).await;
    let address = address_of_server(&server);
    let host = address.to_string();
    // A client with a small receive buffer asks for the OpenAPI document (hundreds of KiB)
    // many times over, and reads none of it: the server's writes wait.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("receive buffer");
    let mut reader = socket.connect(address).await.expect("connect");
    let requests = format!("GET /v1/openapi.json HTTP/1.1\r\nHost: {host}\r\n\r\n").repeat(20);
    tokio::io::AsyncWriteExt::write_all(&mut reader, requests.as_bytes())
        .await
        .expect("write");
    // It holds the server's one connection until the server gives up on it; then the next
    // client is served.
    let (status, _) = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    drop(reader);
}

/// Every file descriptor the server process has open.
fn open_files_of(server: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.pid()))
        .expect("the server's descriptors")
        .count()
}

/// The server's soft limit of open files, as the kernel has it.
fn soft_open_files_limit(server: &Server) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).expect("limits");
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .expect("the open-files line");
    line.split_whitespace()
        .nth(3)
        .and_then(|soft| soft.parse().ok())
        .unwrap_or_else(|| panic!("no soft limit in {line:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_open_files_limit_is_raised_to_the_hard_limit() {
    let server = Server::start_with(Options {
        open_files: Some((256, 4096)),
        ..Options::default()
    })
    .await;
    assert_eq!(soft_open_files_limit(&server), 4096);
}

/// `count` random letters: text that does not compress.
fn random_letters(rng: &mut impl rand::Rng, count: usize) -> String {
    (0..count)
        .map(|_| char::from(rng.gen_range(b'a'..=b'z')))
        .collect()
}

/// The journal's files on sled (none on PostgreSQL).
fn journal_files(server: &Server) -> Vec<String> {
    std::fs::read_dir(server.data_dir.join("db").join("journal"))
        .map(|files| {
            files
                .filter_map(Result::ok)
                .map(|file| file.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_connections_leaves_the_store_the_files_it_needs() {
    const OPEN_FILES: u64 = 256;
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
            // The flood is never let go by the timeout: the limit alone protects the store.
            ("FERRY_CLIENT_TIMEOUT_SECONDS".into(), "0".into()),
        ],
        open_files: Some((OPEN_FILES, OPEN_FILES)),
        ..Options::default()
    })
    .await;
    let (token, _) = server.imported_account("FLOOD", "FL-1", "2025-01-01").await;
    // The test's client keeps the connection these calls made.
    let address = address_of_server(&server);
    let free_before = OPEN_FILES - open_files_of(&server) as u64;
    // Past the server's limit the kernel's backlog takes connections, until it is full.
    let mut flood = Vec::new();
    while let Ok(stream) = TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
        flood.push(stream);
    }
    assert!(
        flood.len() as u64 >= free_before,
        "only {} connections, for {free_before} free descriptors",
        flood.len()
    );
    let held = open_files_of(&server);
    assert!(
        held as u64 <= OPEN_FILES - 64,
        "the flood took {held} of the server's {OPEN_FILES} descriptors"
    );

    // Notes, some 25 MiB of them in the journal on sled: past a journal file's 16 MiB, so the
    // journal must open its next file while the flood is on.
    let journal_before = journal_files(&server);
    let mut rng = rand::thread_rng();
    for request in 0..30 {
        let notes: Vec<Value> = (0..150)
            .map(|_| json!({"body": random_letters(&mut rng, 8_000)}))
            .collect();
        let (status, body) = server
            .post(
                "/v1/data-import/notes/create/",
                &token,
                &json!({"import_supplier": "FLOOD", "external_account_number": "FL-1", "notes": notes}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "request {request}: {body}");
    }
    if backend() == Backend::Sled {
        let journal_after = journal_files(&server);
        assert!(
            journal_after
                .iter()
                .any(|file| !journal_before.contains(file)),
            "the journal never needed a new file: {journal_before:?} then {journal_after:?}"
        );
    }
    drop(flood);
    let (status, body) = server.get("/readyz", &token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_stalled_mid_request_does_not_hold_the_server_at_shutdown() {
    let server = Server::start_with(quick_timeout()).await;
    let host = address_of_server(&server).to_string();
    let mut stalled = connect(&server);
    write!(
        stalled,
        "POST /admin/v1/suppliers HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {OPERATOR_KEY}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"code\": "
    )
    .expect("write");
    let mut idle = connect(&server);
    // The server has both (a request it answers on the idle one shows it serves).
    write!(idle, "GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n").expect("write");
    let mut head = [0u8; 12];
    idle.read_exact(&mut head).expect("answer");
    assert_eq!(&head, b"HTTP/1.1 200");
    // SIGTERM: the stalled request is given up after the client timeout, and the server
    // exits cleanly (`terminate` allows it 30 s).
    assert!(server.terminate(), "the server did not exit cleanly");
    drop((stalled, idle));
}
