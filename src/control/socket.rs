//! The control socket's server: one command a line, one JSON answer a line, for the members of
//! the daemon's group, who may be careless or hostile. What one client may take is bounded:
//!
//! - at most [`MAX_CONNECTIONS`] connections at once; a new one over the limit closes another
//!   (told so in one line, after the answer to a command it had already sent): one that sent a
//!   line too long or not text, else the one that has gone longest without a command. Clients
//!   that hold connections open cannot shut out the arbiter's `ctl`, which sends its command at
//!   once;
//! - a line is at most [`MAX_LINE`] bytes: a longer one is answered with an error naming the
//!   limit, and the rest of it is read and thrown away up to its newline, never kept;
//! - a line that is not UTF-8 text is answered with an error, and the connection stays;
//! - a connection without a command for [`IDLE`] is closed, and so is one that does not take
//!   its answers within [`WRITE_TIMEOUT`].
//!
//! Error answers never repeat what the client sent.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::{sleep_until, timeout, Instant};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 32;

/// How long a connection told to close may still take to hand over what it already sent.
const LAST_READ: Duration = Duration::from_millis(10);
/// The longest command line, in bytes (without its newline).
pub const MAX_LINE: usize = 4096;
/// A connection without a command this long is closed.
pub const IDLE: Duration = Duration::from_secs(60);
/// A client that does not take an answer within this time is cut off.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A command line, where its answer goes (keys and buttons want none: it is spoken), and the
/// player whose control it came from, if it is one player's (a blind player's keypad).
#[derive(Debug)]
pub struct Request {
    pub line: String,
    pub reply: Option<oneshot::Sender<String>>,
    pub by: Option<shakmaty::Color>,
}

/// What a connection's bytes come to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A command line, without its newline (and a carriage return before it).
    Text(String),
    /// A line longer than the limit; the rest of it, up to its newline, is skipped.
    TooLong,
    /// A line that is not UTF-8 text.
    NotUtf8,
}

/// Cuts a byte stream into lines of at most `limit` bytes, keeping no more than `limit` bytes
/// of a line however long it is. Pure.
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    limit: usize,
    /// In a line that was too long: its bytes are thrown away until its newline.
    skipping: bool,
}

impl Splitter {
    pub fn new(limit: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            limit,
            skipping: false,
        }
    }

    /// The bytes of a line kept so far (never more than the limit).
    pub fn held(&self) -> usize {
        self.buf.len()
    }

    /// Takes the bytes read; the lines they complete, and each line found too long (at once,
    /// not at its end), go to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Line>) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n');
            let part = &bytes[..end.unwrap_or(bytes.len())];
            if !self.skipping {
                if self.buf.len() + part.len() > self.limit {
                    out.push(Line::TooLong);
                    self.buf = Vec::new();
                    self.skipping = true;
                } else {
                    self.buf.extend_from_slice(part);
                }
            }
            let Some(end) = end else { return };
            if !std::mem::take(&mut self.skipping) {
                let mut line = std::mem::take(&mut self.buf);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                out.push(match String::from_utf8(line) {
                    Ok(text) => Line::Text(text),
                    Err(_) => Line::NotUtf8,
                });
            }
            bytes = &bytes[end + 1..];
        }
    }
}

/// An open connection: when it last gave a command, whether it sent a line too long or not
/// text, and how to close it.
struct Open {
    active: Instant,
    careless: bool,
    close: Arc<Notify>,
}

/// The open connections.
#[derive(Default)]
struct Connections {
    next: u64,
    open: HashMap<u64, Open>,
}

impl Connections {
    /// Makes room for one more: over the limit, a careless connection, else the one longest
    /// without a command, is told to close. Returns the new connection's number and its
    /// closing signal.
    fn add(&mut self, now: Instant) -> (u64, Arc<Notify>) {
        while self.open.len() >= MAX_CONNECTIONS {
            let Some(first) = self
                .open
                .iter()
                .min_by_key(|(_, o)| (!o.careless, o.active))
                .map(|(id, _)| *id)
            else {
                break;
            };
            if let Some(o) = self.open.remove(&first) {
                o.close.notify_one();
            }
        }
        self.next += 1;
        let close = Arc::new(Notify::new());
        self.open.insert(
            self.next,
            Open {
                active: now,
                careless: false,
                close: close.clone(),
            },
        );
        (self.next, close)
    }
}

/// Takes a connection out of the table when its task ends, however it ends.
struct Registered(Arc<Mutex<Connections>>, u64);

impl Registered {
    /// It gave a command (`true`), or sent a line too long or not text.
    fn gave(&self, command: bool) {
        if let Some(o) = self.0.lock().expect("not poisoned").open.get_mut(&self.1) {
            if command {
                o.active = Instant::now();
            } else {
                o.careless = true;
            }
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut c) = self.0.lock() {
            c.open.remove(&self.1);
        }
    }
}

/// The socket file, removed when the daemon stops (if it is still the one bound).
pub struct SocketFile {
    path: PathBuf,
    id: Option<(u64, u64)>,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let now = std::fs::symlink_metadata(&self.path).ok();
        if now.is_some_and(|m| Some((m.dev(), m.ino())) == self.id) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// An error answer, in the form of the commands' answers (without a command).
pub fn error_answer(error: &str) -> String {
    serde_json::json!({"ok": false, "error": error, "text": error}).to_string()
}

/// Writes one answer line; false when the client is gone or does not take it in time.
async fn reply(write: &mut OwnedWriteHalf, answer: &str) -> bool {
    let line = format!("{answer}\n");
    matches!(
        timeout(WRITE_TIMEOUT, write.write_all(line.as_bytes())).await,
        Ok(Ok(()))
    )
}

/// Serves one connection until it ends, is idle too long or is closed for a newer one.
async fn session(
    stream: UnixStream,
    tx: mpsc::UnboundedSender<Request>,
    me: Registered,
    close: Arc<Notify>,
) {
    let (mut read, mut write) = stream.into_split();
    let mut splitter = Splitter::new(MAX_LINE);
    let mut buf = [0u8; 4096];
    let mut lines = Vec::new();
    let mut idle_until = Instant::now() + IDLE;
    loop {
        let (n, closing) = tokio::select! {
            r = read.read(&mut buf) => match r {
                Ok(0) | Err(_) => return,
                Ok(n) => (n, false),
            },
            _ = close.notified() => {
                // What the client sent before it was told to close is still read and
                // answered (a busy machine may not have read it yet): a connection is closed
                // for what it has not done. One buffer at the most, and a moment's wait.
                let n = match read.try_read(&mut buf) {
                    Ok(n) => n,
                    Err(_) => timeout(LAST_READ, read.read(&mut buf))
                        .await
                        .map_or(0, |r| r.unwrap_or(0)),
                };
                (n, true)
            }
            _ = sleep_until(idle_until) => {
                let _ = reply(&mut write, &error_answer(&format!(
                    "closed: no command for {} s", IDLE.as_secs()
                ))).await;
                return;
            }
        };
        splitter.feed(&buf[..n], &mut lines);
        for line in lines.drain(..) {
            let answer = match line {
                Line::Text(text) => {
                    idle_until = Instant::now() + IDLE;
                    me.gave(true);
                    let (answer_tx, answer_rx) = oneshot::channel();
                    let request = Request {
                        line: text,
                        reply: Some(answer_tx),
                        by: None,
                    };
                    if tx.send(request).is_err() {
                        return;
                    }
                    let Ok(answer) = answer_rx.await else { return };
                    answer
                }
                Line::TooLong => {
                    me.gave(false);
                    error_answer(&format!(
                        "a command line is at most {MAX_LINE} bytes; the rest of this one is \
                         skipped"
                    ))
                }
                Line::NotUtf8 => {
                    me.gave(false);
                    error_answer("a command line must be UTF-8 text")
                }
            };
            if !reply(&mut write, &answer).await {
                return;
            }
        }
        if closing {
            let _ = reply(
                &mut write,
                &error_answer(&format!(
                    "closed: {MAX_CONNECTIONS} connections at once are the limit, and this one \
                     had gone longest without a command"
                )),
            )
            .await;
            return;
        }
    }
}

/// Listens on the control socket at `path` (mode 0660: the daemon's group may use it); the
/// command lines go to `tx`. The file is removed when the returned guard is dropped.
pub fn serve(
    path: &Path,
    tx: mpsc::UnboundedSender<Request>,
) -> std::io::Result<(tokio::task::JoinHandle<()>, SocketFile)> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    // A socket left by a daemon that died is in the way.
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(path);
    }
    let listener = tokio::net::UnixListener::bind(path)?;
    let file = SocketFile {
        path: path.to_path_buf(),
        id: std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino())),
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660))?;
    let connections = Arc::new(Mutex::new(Connections::default()));
    let task = tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((s, _)) => s,
                // Out of descriptors, a client gone: the socket stays.
                Err(e) => {
                    tracing::debug!("control socket: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (id, close) = connections
                .lock()
                .expect("not poisoned")
                .add(Instant::now());
            let me = Registered(connections.clone(), id);
            tokio::spawn(session(stream, tx.clone(), me, close));
            // A burst of connections does not keep those accepted from reading their first
            // line before the next ones push them out.
            tokio::task::yield_now().await;
        }
    });
    Ok((task, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(limit: usize, chunks: &[&[u8]]) -> (Vec<Line>, Splitter) {
        let mut s = Splitter::new(limit);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        (out, s)
    }

    fn text(s: &str) -> Line {
        Line::Text(s.to_string())
    }

    #[test]
    fn lines_are_cut_at_newlines_across_reads() {
        let (out, s) = split(16, &[b"ti", b"me\nmoves 2\r\nla", b"st"]);
        assert_eq!(out, vec![text("time"), text("moves 2")]);
        assert_eq!(s.held(), "last".len());
        let (out, _) = split(16, &[b"\n\nlast\n"]);
        assert_eq!(out, vec![text(""), text(""), text("last")]);
    }

    #[test]
    fn a_line_at_the_limit_is_taken_and_one_byte_more_is_not() {
        let line = "x".repeat(MAX_LINE);
        let (out, _) = split(MAX_LINE, &[line.as_bytes(), b"\n"]);
        assert_eq!(out, vec![Line::Text(line.clone())]);
        let (out, _) = split(MAX_LINE, &[line.as_bytes(), b"y\ntime\n"]);
        assert_eq!(out, vec![Line::TooLong, text("time")]);
    }

    #[test]
    fn a_long_line_is_reported_at_once_and_its_rest_is_not_kept() {
        let mut s = Splitter::new(MAX_LINE);
        let mut out = Vec::new();
        let chunk = [b'a'; 1000];
        // A megabyte without a newline: one error, as soon as the limit is passed, and never
        // more than the limit held.
        for _ in 0..1000 {
            s.feed(&chunk, &mut out);
            assert!(s.held() <= MAX_LINE);
        }
        assert_eq!(out, vec![Line::TooLong]);
        assert_eq!(s.held(), 0);
        // Its end, and the next line is read as usual.
        s.feed(b"aaaa\nturn\n", &mut out);
        assert_eq!(out, vec![Line::TooLong, text("turn")]);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_and_the_next_is_read() {
        let (out, _) = split(MAX_LINE, &[b"ti\xffme\n", b"\xc3\n", b"square e4\n"]);
        assert_eq!(out, vec![Line::NotUtf8, Line::NotUtf8, text("square e4")]);
    }

    #[test]
    fn a_connection_over_the_limit_closes_the_one_longest_without_a_command() {
        let mut c = Connections::default();
        let t0 = Instant::now();
        let mut closes = Vec::new();
        for i in 0..MAX_CONNECTIONS {
            closes.push(c.add(t0 + Duration::from_millis(i as u64)));
        }
        // The first one gave a command a moment ago: the second is the idlest.
        c.open.get_mut(&closes[0].0).unwrap().active = t0 + Duration::from_secs(1);
        let (new, _) = c.add(t0 + Duration::from_secs(2));
        assert_eq!(c.open.len(), MAX_CONNECTIONS);
        assert!(!c.open.contains_key(&closes[1].0));
        assert!(c.open.contains_key(&closes[0].0));
        // One that sent a line too long goes first, however recent.
        c.open.get_mut(&new).unwrap().careless = true;
        c.add(t0 + Duration::from_secs(3));
        assert!(!c.open.contains_key(&new));
        assert!(c.open.contains_key(&closes[2].0));
    }
}
