//! The state directory: one daemon per state directory and per control socket (a second `run`
//! beside the service must not take over the journal or the socket of the first: its moves would
//! be lost), and `games` lists every game it can read.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::pgn;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

fn sans(pgn_text: &str) -> Vec<String> {
    let game = pgn::parse(pgn_text).unwrap().remove(0);
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .map(|m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
        .collect()
}

/// A second `run` beside the service (issue: two daemons on one state directory): it must not
/// take over the journal or the socket of the first. It is refused with exit status 75 and a
/// message naming the directory (or the socket); the first one records its game to the end.
#[test]
fn a_second_daemon_on_the_same_state_directory_is_refused() {
    let dir = std::env::temp_dir().join(format!("chessboardd-twice-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state");
    let socket = dir.join("control.sock");
    let game = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/selfplay-10-mate.pgn");
    let played = sans(&std::fs::read_to_string(&game).unwrap());
    let run = |state: &Path, socket: &Path| {
        let mut c = bin();
        c.args(["run", "--board", &format!("sim:{}", game.display())])
            .args(["--speed", "10", "--speech", "text", "--events-json"])
            .arg("--state-dir")
            .arg(state)
            .arg("--socket")
            .arg(socket);
        c
    };
    let mut first = run(&state, &socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first one is up when its socket answers.
    let t0 = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the first daemon did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = run(&state, &dir.join("other.sock")).output().unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(75), "{err}");
    assert!(
        err.contains("another chessboardd") && err.contains(&state.display().to_string()),
        "{err}"
    );
    // Another state directory but the same socket: refused too, and the socket still answers.
    let third = run(&dir.join("state2"), &socket).output().unwrap();
    let err = String::from_utf8_lossy(&third.stderr);
    assert_eq!(third.status.code(), Some(75), "{err}");
    assert!(err.contains("control socket"), "{err}");
    assert!(std::os::unix::net::UnixStream::connect(&socket).is_ok());
    // The first daemon records the whole game.
    let t0 = Instant::now();
    let recorded = loop {
        let out = bin()
            .args([
                "games",
                "--state-dir",
                state.to_str().unwrap(),
                "--pgn",
                "1",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if text.contains("1-0") || text.contains("0-1") || t0.elapsed() > Duration::from_secs(60) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(first.id() as i32, libc::SIGTERM) };
    assert!(first.wait().unwrap().success());
    assert_eq!(sans(&recorded), played, "{recorded}");
    // Once the first has gone, the directory is free again.
    let mut again = run(&state, &socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        again.try_wait().unwrap().is_none(),
        "refused after the first had gone"
    );
    unsafe { libc::kill(again.id() as i32, libc::SIGTERM) };
    let _ = again.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `games` goes on past a kept game it cannot read, naming it, instead of failing for all.
#[test]
fn games_lists_the_games_it_can_read_and_names_the_others() {
    let dir = std::env::temp_dir().join(format!("chessboardd-games-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let games = dir.join("games");
    std::fs::create_dir_all(&games).unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/selfplay-10-mate.pgn");
    std::fs::copy(&good, games.join("2026-11-30_100000.pgn")).unwrap();
    // Not text, and a directory where a file should be: unreadable even for root.
    std::fs::write(
        games.join("2026-11-30_110000.pgn"),
        b"[Event \"\xff\xfe\"]\n",
    )
    .unwrap();
    std::fs::create_dir_all(games.join("2026-11-30_120000.pgn")).unwrap();
    let o = bin()
        .args(["games", "--state-dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("2026-11-30_110000.pgn") && err.contains("2026-11-30_120000.pgn"),
        "{err}"
    );
    assert_eq!(
        out.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{out}"
    );
    let one = bin()
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--pgn", "1"])
        .output()
        .unwrap();
    assert!(one.status.success());
    assert_eq!(
        sans(&String::from_utf8_lossy(&one.stdout)),
        sans(&std::fs::read_to_string(&good).unwrap())
    );
    let _ = std::fs::remove_dir_all(&dir);
}
