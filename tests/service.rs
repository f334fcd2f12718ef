//! The daemon as systemd runs it: readiness, status and watchdog through the notification
//! socket, SIGTERM, SIGHUP reloading the config, and the journal read back at start-up (a torn
//! last entry dropped, a damaged journal kept beside the repaired one).

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::record::{line, Entry, JOURNAL};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-svc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Notifications until one contains `what`.
fn until(sock: &UnixDatagram, what: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        if let Ok(n) = sock.recv(&mut buf) {
            let msg = String::from_utf8_lossy(&buf[..n]).to_string();
            let found = msg.contains(what);
            seen.push(msg);
            if found {
                return seen;
            }
        }
    }
    panic!("no {what:?} from the daemon; got {seen:?}");
}

fn notify_socket(dir: &Path) -> (UnixDatagram, PathBuf) {
    let path = dir.join("notify");
    let sock = UnixDatagram::bind(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    (sock, path)
}

const SHORT_GAME: &str = "[Event \"t\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n";

#[test]
fn ready_status_watchdog_and_a_clean_stop() {
    let dir = scratch("notify");
    let (sock, path) = notify_socket(&dir);
    std::fs::write(dir.join("g.pgn"), SHORT_GAME).unwrap();
    let t0 = Instant::now();
    let mut d = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["run", "--speech", "text", "--speed", "4"])
        .arg("--board")
        .arg(format!("sim:{}", dir.join("g.pgn").display()))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .env("NOTIFY_SOCKET", &path)
        .env("WATCHDOG_USEC", "200000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let first = until(&sock, "READY=1");
    assert_eq!(first.len(), 1, "READY comes first: {first:?}");
    assert!(first[0].contains("STATUS=ready"), "{first:?}");
    eprintln!("READY after {:?}", t0.elapsed());
    // Pings at half the watchdog time, and the moves as status.
    until(&sock, "WATCHDOG=1");
    let seen = until(&sock, "STATUS=ply 4: Nc6");
    assert!(seen.iter().any(|m| m == "STATUS=ply 1: e4"), "{seen:?}");
    assert!(
        seen.iter().filter(|m| *m == "WATCHDOG=1").count() >= 1,
        "{seen:?}"
    );
    signal(&d, libc::SIGTERM);
    until(&sock, "STOPPING=1");
    assert!(d.wait().unwrap().success(), "exit 0 on SIGTERM");
    // The record is on disk: the four moves.
    let journal = std::fs::read_to_string(dir.join("state").join(JOURNAL)).unwrap();
    assert_eq!(journal.matches("\"k\":\"move\"").count(), 4, "{journal}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sighup_reads_the_config_again() {
    let dir = scratch("hup");
    let (sock, path) = notify_socket(&dir);
    let config = dir.join("config.toml");
    std::fs::write(&config, "[speech]\nlang = \"appendix-f\"\n").unwrap();
    let socket = dir.join("control.sock");
    let d = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "run",
            "--speech",
            "text",
            "--board",
            "dgt:/nonexistent/board",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .env("NOTIFY_SOCKET", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    until(&sock, "READY=1");
    let ctl = |cmd: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["ctl", "--socket", socket.to_str().unwrap(), cmd])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["text"].as_str().unwrap().to_string()
    };
    assert_eq!(ctl("turn"), "Weiß am Zug");
    // A config with an error is not taken: the daemon goes on as it was.
    std::fs::write(&config, "[speech]\nlang = \"klingon\"\n").unwrap();
    signal(&d, libc::SIGHUP);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(ctl("turn"), "Weiß am Zug");
    std::fs::write(&config, "[speech]\nlang = \"en\"\n").unwrap();
    signal(&d, libc::SIGHUP);
    until(&sock, "STATUS=config reloaded");
    assert_eq!(ctl("turn"), "White to move");
    signal(&d, libc::SIGTERM);
    let out = d.wait_with_output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the config was not reloaded") && err.contains("config.toml:2:8: speech.lang"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn journal_with(entries: &[Entry]) -> String {
    entries.iter().map(line).collect()
}

fn game_entries() -> Vec<Entry> {
    let start = Entry::Start {
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        date: "2026.11.30".into(),
        time: "09:00:00".into(),
        time_control: None,
        tags: Vec::new(),
        computer: None,
        lang: None,
    };
    // As an older version wrote them: no ply number, no position.
    let mv = |u: &str| Entry::Move {
        uci: u.into(),
        clocks: None,
        ply: None,
        fen: None,
        recovered: false,
    };
    vec![start, mv("e2e4"), mv("e7e5"), mv("g1f3")]
}

/// Starts the daemon on a board that is not there (it waits for it) with `state`, and returns
/// its events and log once it is ready and has been stopped.
fn start_on(state: &Path) -> (Vec<serde_json::Value>, String) {
    let dir = state.parent().unwrap();
    let (sock, path) = notify_socket(dir);
    let d = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["run", "--speech", "text", "--events-json"])
        .args(["--board", "dgt:/nonexistent/board"])
        .arg("--state-dir")
        .arg(state)
        .env("NOTIFY_SOCKET", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    until(&sock, "READY=1");
    signal(&d, libc::SIGTERM);
    let out = d.wait_with_output().unwrap();
    assert!(out.status.success());
    let _ = std::fs::remove_file(path);
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (events, String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn a_torn_last_entry_is_dropped_and_the_game_taken_up() {
    let dir = scratch("torn");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut text = journal_with(&game_entries());
    // A power cut in the middle of the fourth move's line.
    text.truncate(text.len() - 12);
    std::fs::write(state.join(JOURNAL), &text).unwrap();
    let (events, log) = start_on(&state);
    let resumed = events.iter().find(|e| e["type"] == "resumed").unwrap();
    assert_eq!(resumed["plies"], 2, "{events:?}");
    assert!(
        log.contains("cut short") && log.contains("dropped"),
        "{log}"
    );
    let said: Vec<&str> = events.iter().filter_map(|e| e["text"].as_str()).collect();
    assert!(said.contains(&"Partie fortgesetzt. Eva fünf"), "{said:?}");
    // The journal holds the two whole moves, and goes on from there.
    let journal = std::fs::read_to_string(state.join(JOURNAL)).unwrap();
    assert_eq!(journal.matches("\"k\":\"move\"").count(), 2, "{journal}");
    assert!(journal.ends_with('\n'));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Appendix A: a game adjourned when the daemon stopped is taken up adjourned (its board not
/// read for moves until it resumes), and `games --envelope` prints its envelope for the arbiter.
#[test]
fn an_adjourned_game_is_taken_up_adjourned_and_its_envelope_printed() {
    use chessboardd::record::Sealed;
    let dir = scratch("adjourned");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut entries = game_entries();
    entries.truncate(3);
    entries.push(Entry::Adjourned(Sealed {
        sealer: "white".into(),
        fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2".into(),
        uci: "g1f3".into(),
        move_number: 2,
        clocks: None,
        used: None,
        draw_offer: Some("black".into()),
        date: "2026.11.30".into(),
        time: "13:00:00".into(),
    }));
    std::fs::write(state.join(JOURNAL), journal_with(&entries)).unwrap();
    let (events, _) = start_on(&state);
    let resumed = events.iter().find(|e| e["type"] == "resumed").unwrap();
    assert_eq!(resumed["plies"], 2, "{events:?}");
    let said: Vec<&str> = events.iter().filter_map(|e| e["text"].as_str()).collect();
    assert!(
        said.contains(&"Partie fortgesetzt. Abgabezug versiegelt, die Uhren stehen. Die Partie ist abgebrochen"),
        "{said:?}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--envelope", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "d) Sealed by: White",
        "e) Sealed move number: 2.",
        "f) Draw offer: offered by Black",
        "c) Time used: no clock",
        "Inside: the sealed move 2. Nf3 (g1f3)",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    // The sealed move is in no PGN.
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--pgn", "1", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    let pgn = String::from_utf8(out.stdout).unwrap();
    assert!(pgn.contains("1. e4 e5") && !pgn.contains("Nf3"), "{pgn}");
    // Without an adjourned game, it says so.
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--envelope", "--state-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no adjourned game in"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A journal of an older version (no ply numbers) damaged in its first line: its moves cannot
/// be placed, so a new game starts; the journal as it was is kept beside it, and the player
/// hears how many entries were lost. Started again, the daemon has nothing more to repair.
#[test]
fn a_journal_damaged_at_its_start_is_kept_and_never_stops_the_daemon() {
    let dir = scratch("damaged");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut bytes = journal_with(&game_entries()).into_bytes();
    bytes[40] ^= 0x55;
    std::fs::write(state.join(JOURNAL), &bytes).unwrap();
    for round in 0..2 {
        let (events, log) = start_on(&state);
        assert!(
            events.iter().any(|e| e["type"] == "game_start"),
            "a new game: {events:?}"
        );
        assert!(!events.iter().any(|e| e["type"] == "resumed"));
        let said: Vec<&str> = events.iter().filter_map(|e| e["text"].as_str()).collect();
        if round == 0 {
            assert!(
                log.contains("repaired") && log.contains("journal.jsonl.damaged-1"),
                "{log}"
            );
            assert!(
                said.contains(&"Aufzeichnung repariert. 4 Einträge verloren"),
                "{said:?}"
            );
        } else {
            assert!(!log.contains("repaired"), "{log}");
        }
    }
    assert_eq!(
        std::fs::read(state.join("journal.jsonl.damaged-1")).unwrap(),
        bytes
    );
    assert!(!state.join("journal.jsonl.damaged-2").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
