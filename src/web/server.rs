//! The HTTP server: the page, the state, the live PGN and the event stream.
//!
//! axum's routes on hyper's HTTP/1 connections, in a tokio runtime of its own on a thread of its
//! own, at a lower priority than the daemon's: however many viewers there are, the daemon's loop
//! (on its own runtime) never waits for them. The daemon hands over through [`Web`] only (a
//! snapshot swapped in whole, a channel of events that this thread sends on to every event
//! stream), and the server ends when the daemon drops it.
//!
//! Why axum and hyper rather than the hand-written server before them (64 viewers, 64 open
//! event streams blocked every other request): a well-kept HTTP/1 parser with its head limit and
//! header-read timeout, keep-alive and HEAD done right, and the bounds below added around it.
//!
//! The bounds (issue 17, "Many viewers"): at most [`MAX_CONNECTIONS`] connections at once, event
//! streams and polls alike (one more is answered 503 at once and closed); a request head within
//! [`HEAD_TIMEOUT`] (an idle kept-alive connection too) and [`HEAD_LIMIT`] bytes; a viewer that
//! reads nothing for [`WRITE_TIMEOUT`] is dropped.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::Stream;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{broadcast, mpsc, Semaphore};

use super::Web;

/// Connections served at once (event streams and polls), unless the process may open fewer
/// files (then that many less a reserve for the daemon).
pub const MAX_CONNECTIONS: usize = 2000;
/// A request's head (request line and headers) arrives within this time, counted from the
/// connection's start or the end of the request before it: a client that sends nothing, or its
/// head byte by byte, is dropped.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's head is at most this long (a longer one is answered 431).
pub const HEAD_LIMIT: usize = 16 * 1024;
/// A viewer that takes no data for this long is dropped.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// An event stream that has nothing to say for this long gets a comment (`: ping`), so that
/// proxies do not close it.
const PING: Duration = Duration::from_secs(15);
/// Connections waiting to be accepted.
const BACKLOG: u32 = 1024;
/// File descriptors kept for the daemon (its board, socket, journal, speech) when the limit of
/// open files bounds the connections.
const FD_RESERVE: usize = 128;
/// Refusals (503) being written at once; past that a connection over the bound is closed.
const MAX_REFUSING: usize = 64;

/// Starts serving on `addr` ("127.0.0.1:8080") on a thread of its own; returns the bound address
/// (port 0 picks one). The server stops when `web` is dropped by the daemon.
pub async fn serve(addr: &str, web: Arc<Web>) -> std::io::Result<SocketAddr> {
    let max = MAX_CONNECTIONS.min(fd_bound());
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let addr = addr.to_string();
    // The server holds the daemon's `Web` weakly; when the daemon drops it, the events' channel
    // closes and the server ends.
    let weak = Arc::downgrade(&web);
    let incoming = web
        .incoming
        .lock()
        .ok()
        .and_then(|mut i| i.take())
        .ok_or_else(|| std::io::Error::other("the web view is served already"))?;
    std::thread::Builder::new()
        .name("web view".into())
        .spawn(move || {
            behind_the_daemon();
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = bound_tx.send(Err(e));
                    return;
                }
            };
            rt.block_on(async move {
                let listener = match listen(&addr).await {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = bound_tx.send(Err(e));
                        return;
                    }
                };
                let _ = bound_tx.send(listener.local_addr());
                run(listener, weak, incoming, max).await;
            });
        })?;
    bound_rx
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("the web view's thread ended")))
}

/// This thread gives way to the daemon's when both want the processor: viewers wait a little,
/// the announcements do not.
fn behind_the_daemon() {
    // SAFETY: lowers this thread's own priority (a thread id is a process id to setpriority).
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10) };
    if r != 0 {
        tracing::debug!(
            "web view: priority not lowered: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Raises the limit of open files to what the system allows (each viewer holds one); returns
/// how many connections the limit leaves room for.
fn fd_bound() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct given, nothing else.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return MAX_CONNECTIONS;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    let files = usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX);
    let room = files.saturating_sub(FD_RESERVE).max(16);
    if room < MAX_CONNECTIONS {
        tracing::warn!(
            "web view: at most {room} viewers (the limit of open files is {files}; \
             LimitNOFILE= in the service raises it)"
        );
    }
    room
}

/// Binds `addr` with a backlog for many viewers connecting at once.
async fn listen(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = None;
    // An address as such is not looked up (which would take a thread of its own).
    let addrs: Vec<SocketAddr> = match addr.parse() {
        Ok(a) => vec![a],
        Err(_) => tokio::net::lookup_host(addr).await?.collect(),
    };
    for a in addrs {
        let socket = if a.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(a).and_then(|()| socket.listen(BACKLOG)) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{addr}: no address"),
        )
    }))
}

/// Sends the daemon's events on to every event stream until the daemon drops its `Web`; then
/// the streams end.
async fn fan_out(
    mut incoming: mpsc::UnboundedReceiver<String>,
    out: Arc<broadcast::Sender<String>>,
) {
    while let Some(json) = incoming.recv().await {
        // No viewer is no error.
        let _ = out.send(json);
    }
}

/// Accepts connections until the daemon drops its `Web`, then gives the connections a moment to
/// end.
async fn run(
    listener: TcpListener,
    web: Weak<Web>,
    incoming: mpsc::UnboundedReceiver<String>,
    max: usize,
) {
    let events = Arc::new(broadcast::channel(256).0);
    let app = router(web, Arc::downgrade(&events));
    let fanning = fan_out(incoming, events);
    tokio::pin!(fanning);
    let places = Arc::new(Semaphore::new(max));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(HEAD_LIMIT)
        .keep_alive(true);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors, a connection aborted: the server goes on.
                Err(e) => {
                    tracing::debug!("web view: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut fanning => break,
        };
        let Ok(place) = places.clone().try_acquire_owned() else {
            if let Ok(r) = refusing.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    refuse(stream).await;
                    drop(r);
                });
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let conn = http.serve_connection(
            TokioIo::new(Stalling::new(stream, WRITE_TIMEOUT)),
            TowerToHyperService::new(app.clone()),
        );
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("web view: {e}");
            }
            drop(place);
        });
    }
    // The event streams end with the channel; the rest get a moment to finish.
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        places.acquire_many(u32::try_from(max).unwrap_or(u32::MAX)),
    )
    .await;
}

/// A connection over the bound: 503 at once, then closed (after reading what the client sent,
/// so that the close does not reset the answer away).
async fn refuse(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
        Content-Length: 27\r\nRetry-After: 10\r\nCache-Control: no-store\r\n\
        X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\ntoo many viewers, try later\n";
    let refused = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        let mut buf = [0u8; 1024];
        while stream.read(&mut buf).await? > 0 {}
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), refused).await;
}

/// What the handlers reach: the daemon's snapshot, the events (both gone when it stops).
#[derive(Clone)]
struct Shared {
    web: Weak<Web>,
    events: Weak<broadcast::Sender<String>>,
}

fn router(web: Weak<Web>, events: Weak<broadcast::Sender<String>>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/index.html", get(page))
        .route("/api/state", get(state))
        .route("/game.pgn", get(pgn))
        .route("/api/events", get(event_stream))
        .fallback(not_found)
        .method_not_allowed_fallback(only_get)
        .layer(axum::middleware::map_response(private))
        .with_state(Shared { web, events })
}

/// Every answer: not to be cached, its type as given.
async fn private(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn body(kind: &'static str, text: String) -> Response {
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}

/// The snapshot of the game: (state, PGN); `None` when the daemon is stopping.
fn snapshot(s: &Shared) -> Option<(String, String)> {
    s.web.upgrade().map(|w| w.snapshot())
}

fn stopping() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "stopping\n").into_response()
}

async fn page(State(s): State<Shared>) -> Response {
    match snapshot(&s) {
        Some((state, _)) => body("text/html; charset=utf-8", super::page::render(&state)),
        None => stopping(),
    }
}

async fn state(State(s): State<Shared>) -> Response {
    match snapshot(&s) {
        Some((state, _)) => body("application/json", state),
        None => stopping(),
    }
}

async fn pgn(State(s): State<Shared>) -> Response {
    match snapshot(&s) {
        Some((_, pgn)) => body("application/x-chess-pgn; charset=utf-8", pgn),
        None => stopping(),
    }
}

async fn not_found(method: Method) -> Response {
    if method == Method::GET || method == Method::HEAD {
        (StatusCode::NOT_FOUND, "not found\n").into_response()
    } else {
        only_get().await
    }
}

async fn only_get() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "GET, HEAD")],
        "only GET\n",
    )
        .into_response()
}

/// Server-sent events: every daemon event as one `data:` line, `: ping` after 15 s of silence;
/// a viewer too slow to follow gets `event: resync` (and reads the state again).
async fn event_stream(State(s): State<Shared>) -> Response {
    let Some(rx) = s.events.upgrade().map(|e| e.subscribe()) else {
        return stopping();
    };
    let hello = futures_util::stream::once(async { Ok(Event::default().comment("connected")) });
    let stream = futures_util::StreamExt::chain(hello, daemon_events(rx));
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(PING).text("ping"))
        .into_response()
}

fn daemon_events(
    rx: broadcast::Receiver<String>,
) -> impl Stream<Item = Result<Event, std::convert::Infallible>> {
    futures_util::stream::unfold(rx, |mut rx| async move {
        let event = match rx.recv().await {
            Ok(json) => Event::default().data(json),
            Err(broadcast::error::RecvError::Lagged(_)) => {
                Event::default().event("resync").data("{}")
            }
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(event), rx))
    })
}

/// A connection whose writes give up after [`WRITE_TIMEOUT`] without progress (a viewer that
/// reads nothing fills its socket's buffer, and is then dropped).
struct Stalling {
    io: TcpStream,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Stalling {
    fn new(io: TcpStream, timeout: Duration) -> Stalling {
        Stalling {
            io,
            timeout,
            stalled: None,
        }
    }

    /// A write made progress (or failed): the clock stops; else it runs, and runs out.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(self.timeout)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Stalling {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stalling {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        (a, l.accept().await.unwrap().0)
    }

    #[tokio::test]
    async fn a_writer_that_no_one_reads_gives_up() {
        let (a, _b) = pair().await;
        let mut w = Stalling::new(a, Duration::from_millis(300));
        let t = std::time::Instant::now();
        // Far more than the sockets' buffers hold: the peer reads nothing.
        let e = w.write_all(&vec![0u8; 64 << 20]).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[tokio::test]
    async fn a_writer_that_is_read_goes_on() {
        let (a, mut b) = pair().await;
        let mut w = Stalling::new(a, Duration::from_secs(1));
        let reader = tokio::spawn(async move {
            let mut n = 0;
            let mut buf = vec![0u8; 1 << 18];
            loop {
                // Slowly (a progress the writer sees as the kernel's buffer empties by a third),
                // but never a second without reading.
                tokio::time::sleep(Duration::from_millis(10)).await;
                match b.read(&mut buf).await.unwrap() {
                    0 => return n,
                    k => n += k,
                }
            }
        });
        w.write_all(&vec![1u8; 8 << 20]).await.unwrap();
        w.shutdown().await.unwrap();
        assert_eq!(reader.await.unwrap(), 8 << 20);
    }
}
