//! The HTTP server: the page, the state, the live PGN and the event stream.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::broadcast;

use super::Web;

/// Viewers served at once.
const MAX_CLIENTS: usize = 64;
/// A viewer that takes no data for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts serving on `addr` ("127.0.0.1:8080"); returns the bound address (port 0 picks one).
pub async fn serve(addr: &str, web: Arc<Web>) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    // At most this many viewers at once; more wait for a place.
    let places = Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS));
    tokio::spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(c) => c,
                // Out of descriptors, a connection aborted: the server goes on.
                Err(e) => {
                    tracing::debug!("web view: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Ok(place) = places.clone().acquire_owned().await else {
                break;
            };
            let web = web.clone();
            tokio::spawn(async move {
                let _ = handle(stream, web).await;
                drop(place);
            });
        }
    });
    Ok(bound)
}

fn response(status: &str, kind: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

async fn handle(mut stream: tokio::net::TcpStream, web: Arc<Web>) -> std::io::Result<()> {
    // The request head, at most 8 KiB, within 10 s.
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read_head = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(())
    };
    if tokio::time::timeout(Duration::from_secs(10), read_head)
        .await
        .is_err()
    {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if method != "GET" && method != "HEAD" {
        let r = response("405 Method Not Allowed", "text/plain", b"only GET\n");
        return write(&mut stream, &r).await;
    }
    let (state, pgn) = web.snapshot();
    let r = match path {
        "/" | "/index.html" => response(
            "200 OK",
            "text/html; charset=utf-8",
            super::page::render(&state).as_bytes(),
        ),
        "/api/state" => response("200 OK", "application/json", state.as_bytes()),
        "/game.pgn" => response(
            "200 OK",
            "application/x-chess-pgn; charset=utf-8",
            pgn.as_bytes(),
        ),
        "/api/events" => return events(stream, web).await,
        _ => response("404 Not Found", "text/plain", b"not found\n"),
    };
    write(&mut stream, &r).await
}

/// Writes, giving up on a viewer that does not read.
async fn write(stream: &mut tokio::net::TcpStream, data: &[u8]) -> std::io::Result<()> {
    match tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(data)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

/// Server-sent events: every daemon event as one `data:` line, a comment every 15 s to keep
/// proxies from closing the stream.
async fn events(mut stream: tokio::net::TcpStream, web: Arc<Web>) -> std::io::Result<()> {
    let mut rx = web.events.subscribe();
    write(
        &mut stream,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\n: connected\n\n",
    )
    .await?;
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(15), rx.recv()).await;
        let chunk = match msg {
            Err(_) => ": ping\n\n".to_string(),
            Ok(Ok(json)) => format!("data: {json}\n\n"),
            // Too slow to follow: tell it to read the state again.
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                "event: resync\ndata: {}\n\n".to_string()
            }
            Ok(Err(broadcast::error::RecvError::Closed)) => return Ok(()),
        };
        write(&mut stream, chunk.as_bytes()).await?;
    }
}
