//! The web view's interface (the page itself is tested in a real browser, tests/web_browser.rs):
//! the state as JSON, the live PGN, the events as a server-sent event stream, and nothing else.

#[path = "support/clk.rs"]
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

/// One GET; the status line and the body.
fn get(port: u16, path: &str, method: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "{method} {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
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
fn a_garbage_request_gets_nothing_and_hurts_nothing() {
    let port = free_port();
    let _d = start(port);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(&[0xff; 9000]).unwrap();
    let _ = s.read(&mut [0u8; 64]);
    drop(s);
    assert_eq!(get(port, "/api/state", "GET").unwrap().0, "HTTP/1.1 200 OK");
}
