//! The web view's interface (the page itself is tested in a real browser, tests/web_browser.rs):
//! the state as JSON, the live PGN, the events as a server-sent event stream, and nothing else.

#[path = "support/clk.rs"]
#[allow(dead_code)]
mod clk;
use clk::without_clk;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request (closing the connection after it); the head and the body.
fn request(port: u16, path: &str, method: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// One GET; the status line and the body.
fn get(port: u16, path: &str, method: &str) -> Option<(String, String)> {
    let (head, body) = request(port, path, method)?;
    Some((head.lines().next()?.to_string(), body))
}

/// A header's value in a response head (names in any case).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The status line of the answer to `bytes` sent on a new connection, if any came within 5 s.
fn answer_to(port: u16, bytes: &[u8]) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The server may close before it has read everything.
    let _ = s.write_all(bytes);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    text.lines().next().map(str::to_string)
}

fn start(port: u16) -> Daemon {
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/molinari-bordais-1979.pgn"
    );
    let child = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["run", "--board", &format!("sim:{pgn}"), "--speech", "text"])
        .args(["--speed", "4", "--time-control", "300+2"])
        .args(["--web", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let d = Daemon(child);
    let t = Instant::now();
    while get(port, "/api/state", "GET").is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the web view did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    d
}

#[test]
fn state_pgn_and_events_follow_the_game() {
    let port = free_port();
    let _d = start(port);
    // The event stream: the moves as they are made.
    let mut events = TcpStream::connect(("127.0.0.1", port)).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(events, "GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut lines = BufReader::new(events).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "HTTP/1.1 200 OK");
    let mut moves = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(json) = line.strip_prefix("data: ") {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            if v["type"] == "move" {
                moves.push(v["san"].as_str().unwrap().to_string());
                if moves.len() == 4 {
                    break;
                }
            }
        }
    }
    assert_eq!(moves.len(), 4, "{moves:?}");
    // The state: the game so far, with the moves spoken and the clocks.
    let (status, body) = get(port, "/api/state", "GET").unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    let state: serde_json::Value = serde_json::from_str(&body).unwrap();
    let sans: Vec<&str> = state["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["san"].as_str().unwrap())
        .collect();
    assert!(
        sans.len() >= 4 && sans[..4] == ["e4", "c5", "c4", "Nc6"],
        "{sans:?}"
    );
    assert_eq!(state["moves"][0]["say"], "Eva vier");
    assert_eq!(state["lang"], "de");
    assert!(state["clock"]["white_ms"].as_i64().unwrap() > 290_000);
    assert!(state["fen"].as_str().unwrap().contains('/'));
    // The live PGN.
    let (status, pgn) = get(port, "/game.pgn", "GET").unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    let (moves, clocks) = without_clk(&pgn);
    assert!(
        pgn.contains("[TimeControl \"300+2\"]") && moves.contains("1. e4 c5 2. c4 Nc6"),
        "{pgn}"
    );
    assert_eq!(clocks, sans.len(), "a [%clk] after each move:\n{pgn}");
    // The page; nothing else.
    let (status, page) = get(port, "/", "GET").unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(page.contains("<html"));
    assert_eq!(
        get(port, "/etc/passwd", "GET").unwrap().0,
        "HTTP/1.1 404 Not Found"
    );
    assert_eq!(
        get(port, "/", "POST").unwrap().0,
        "HTTP/1.1 405 Method Not Allowed"
    );
    // The game's end reaches the state.
    let t = Instant::now();
    loop {
        let (_, body) = get(port, "/api/state", "GET").unwrap();
        let state: serde_json::Value = serde_json::from_str(&body).unwrap();
        if state["result"] == "0-1" {
            assert_eq!(state["reason"], "checkmate");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no result: {state}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn head_is_answered_without_a_body_and_nothing_is_cached() {
    let port = free_port();
    let _d = start(port);
    for path in ["/", "/api/state", "/game.pgn"] {
        let (get_head, get_body) = request(port, path, "GET").unwrap();
        assert!(get_head.starts_with("HTTP/1.1 200 OK"), "{get_head}");
        assert_eq!(header(&get_head, "cache-control"), Some("no-store"));
        assert_eq!(header(&get_head, "x-content-type-options"), Some("nosniff"));
        let (head, body) = request(port, path, "HEAD").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        assert_eq!(body, "", "HEAD {path}: a body");
        assert_eq!(
            header(&head, "content-type"),
            header(&get_head, "content-type")
        );
        // The page does not change; the state and the PGN may have between the two requests.
        if path == "/" {
            assert_eq!(
                header(&head, "content-length"),
                Some(get_body.len().to_string().as_str())
            );
        }
    }
    // The event stream's HEAD: its headers, and the connection ends.
    let (head, body) = request(port, "/api/events", "HEAD").unwrap();
    assert_eq!(header(&head, "content-type"), Some("text/event-stream"));
    assert_eq!(body, "");
}

#[test]
fn a_garbage_request_gets_nothing_and_hurts_nothing() {
    let port = free_port();
    let _d = start(port);
    // Binary junk: refused as a bad request (or the connection closed), nothing else.
    let junk = answer_to(port, &[0xff; 9000]);
    assert!(
        junk.as_deref()
            .is_none_or(|l| l.starts_with("HTTP/1.1 400")),
        "{junk:?}"
    );
    // A head too long.
    let big = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    let answer = answer_to(port, big.as_bytes());
    assert!(
        answer
            .as_deref()
            .is_none_or(|l| l.starts_with("HTTP/1.1 431")),
        "{answer:?}"
    );
    // A method that is not GET or HEAD.
    let brew = answer_to(
        port,
        b"BREW / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(brew.as_deref(), Some("HTTP/1.1 405 Method Not Allowed"));
    assert_eq!(get(port, "/api/state", "GET").unwrap().0, "HTTP/1.1 200 OK");
}

/// Raises this process's limit of open files to what the system allows.
fn more_files() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: the struct is ours.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

/// Whether the server closes `s` within `within` (reading nothing but the end).
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    matches!(s.read(&mut [0u8; 64]), Ok(0) | Err(_)) && {
        // A timeout is not a close.
        s.set_nonblocking(true).unwrap();
        !matches!(s.read(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }
}

#[test]
fn a_slow_head_is_dropped_and_does_not_stop_the_others() {
    let port = free_port();
    let _d = start(port);
    // Slowloris: a head that never ends, a byte every half second.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    let t = Instant::now();
    let mut dropped = None;
    while t.elapsed() < Duration::from_secs(20) {
        if slow.write_all(b"a").is_err() || closed_within(&mut slow, Duration::from_millis(500)) {
            dropped = Some(t.elapsed());
            break;
        }
        slow.set_nonblocking(false).unwrap();
        // The others are served meanwhile.
        assert_eq!(get(port, "/api/state", "GET").unwrap().0, "HTTP/1.1 200 OK");
    }
    let dropped = dropped.expect("a head that never ends was not dropped within 20 s");
    // The head timeout (10 s) dropped it, not an error before.
    assert!(
        dropped > Duration::from_secs(8),
        "dropped after {dropped:?}"
    );
}

#[test]
fn idle_connections_are_bounded_and_dropped() {
    more_files();
    let port = free_port();
    let _d = start(port);
    // 1,001 connections that send nothing: the others are served.
    let t = Instant::now();
    let mut idle: Vec<TcpStream> = (0..1001)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    assert_eq!(get(port, "/api/state", "GET").unwrap().0, "HTTP/1.1 200 OK");
    // 2,000 at once: one more is refused at once (503), not kept waiting.
    idle.extend((0..999).map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap()));
    let asked = Instant::now();
    let (status, _) = get(port, "/api/state", "GET").unwrap();
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    // The head timeout (10 s) closes them all, and the server serves again.
    for s in &mut idle {
        let left = Duration::from_secs(20).saturating_sub(t.elapsed());
        assert!(
            closed_within(s, left.max(Duration::from_millis(1))),
            "an idle connection open after {:?}",
            t.elapsed()
        );
    }
    assert!(t.elapsed() > Duration::from_secs(8), "{:?}", t.elapsed());
    drop(idle);
    let t = Instant::now();
    loop {
        let (status, _) = get(port, "/api/state", "GET").unwrap();
        if status == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "{status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
