//! The game record survives anything: the daemon is killed with SIGKILL at random points of a
//! game played on a simulated DGT board (a pseudo-terminal), 50 times, and started again each
//! time; the game it finally records must be the game that was played, move for move. And a
//! daemon that comes back 5 s after a crash, as the service does, while the players went on
//! on an occupancy board, takes up the moves they made meanwhile.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::pgn;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

/// A small deterministic generator for the kill times.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A daemon on the simulated board; the events and log of every daemon go, one after the
/// other, into `daemons.log` beside the state directory, for a failure to show.
fn daemon(link: &Path, state: &Path) -> Child {
    daemon_on(&format!("dgt:{}", link.display()), state)
}

/// A daemon on `board` (as `run --board` takes it), logging as [`daemon`] does.
fn daemon_on(board: &str, state: &Path) -> Child {
    let log = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state.with_file_name("daemons.log"))
            .unwrap()
    };
    bin()
        .args(["run", "--board", board])
        .args(["--speech", "text", "--events-json"])
        .arg("--state-dir")
        .arg(state)
        .stdout(log())
        .stderr(log())
        .spawn()
        .unwrap()
}

/// The end of the daemons' events and logs.
fn daemons_log(state: &Path) -> String {
    let text = std::fs::read_to_string(state.with_file_name("daemons.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}

fn sans(pgn_text: &str) -> Vec<String> {
    let game = pgn::parse(pgn_text).unwrap().remove(0);
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .map(|m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
        .collect()
}

#[test]
fn fifty_kills_lose_no_move() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/selfplay-10-mate.pgn");
    let played = sans(&std::fs::read_to_string(&source).unwrap());
    let dir = std::env::temp_dir().join(format!("chessboardd-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("board");
    let state = dir.join("state");
    let mut sim = bin()
        .args([
            "simulate",
            "--protocol",
            "dgt",
            "--link",
            link.to_str().unwrap(),
        ])
        .args(["--pgn", source.to_str().unwrap(), "--speed", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !link.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut recorded_before_last_kill = 0;
    for kill in 0..50 {
        let mut d = daemon(&link, &state);
        std::thread::sleep(Duration::from_millis(150 + rng.below(1200)));
        d.kill().unwrap();
        d.wait().unwrap();
        // Whatever the journal holds is a prefix of the game played.
        let kept = chessboardd::record::games(&state).unwrap();
        if let Some(g) = kept.first() {
            let so_far = sans(&g.pgn);
            assert!(
                played.starts_with(&so_far),
                "after kill {kill}: the record {so_far:?} is not the game played"
            );
            assert!(
                so_far.len() >= recorded_before_last_kill,
                "after kill {kill}: moves lost"
            );
            recorded_before_last_kill = so_far.len();
        }
    }
    assert!(
        recorded_before_last_kill > 5 && recorded_before_last_kill < played.len(),
        "the kills did not fall inside the game ({recorded_before_last_kill} of {} plies)",
        played.len()
    );
    // The last daemon lives to the end of the game.
    let mut d = daemon(&link, &state);
    let t = Instant::now();
    while sim.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        sim.try_wait().unwrap().is_some(),
        "the simulated game did not end"
    );
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
    assert!(d.wait().unwrap().success(), "SIGTERM: exit 0");
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
    assert!(out.status.success());
    let pgn_text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        sans(&pgn_text),
        played,
        "{pgn_text}\nthe daemons' last events and log lines:\n{}",
        daemons_log(&state)
    );
    assert!(pgn_text.contains("[Result \"1-0\"]"), "{pgn_text}");
    let listed = bin()
        .args(["games", "--state-dir", state.to_str().unwrap()])
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(listed.lines().count(), 1, "one game kept: {listed}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The plies the journal in `state` holds (0 when it holds no game yet).
fn plies_kept(state: &Path) -> usize {
    chessboardd::record::games(state)
        .ok()
        .and_then(|g| g.first().map(|g| sans(&g.pgn).len()))
        .unwrap_or(0)
}

#[test]
fn a_restart_five_seconds_later_takes_up_the_moves_played_meanwhile() {
    // Sixteen plies on a DIY board (occupancy only). The daemon is killed after the eighth;
    // the service would start it again 5 s later (RestartSec=5), and the players do not stop:
    // they make three more moves before they wait (the third after the kill is the last one
    // they would make unheard: `simulate --play-on 3`).
    let dir = std::env::temp_dir().join(format!("chessboardd-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("game.pgn");
    std::fs::write(
        &source,
        "1. d4 d5 2. Nf3 Nf6 3. e3 Bf5 4. c4 Nc6 5. cxd5 Qxd5 6. Nc3 Qd6 7. Nb5 Qd8 8. Bd2 g6 *\n",
    )
    .unwrap();
    let played = sans(&std::fs::read_to_string(&source).unwrap());
    let link = dir.join("board");
    let state = dir.join("state");
    let mut sim = bin()
        .args(["simulate", "--protocol", "diy", "--link"])
        .arg(&link)
        .arg("--pgn")
        .arg(&source)
        .args(["--speed", "30", "--play-on", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !link.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let board = format!("diy:{}", link.display());
    let mut d = daemon_on(&board, &state);
    let t = Instant::now();
    while plies_kept(&state) < 8 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    d.kill().unwrap();
    d.wait().unwrap();
    let before = plies_kept(&state);
    assert!(before >= 8, "the first daemon recorded {before} plies");
    std::thread::sleep(Duration::from_secs(5));
    let mut d = daemon_on(&board, &state);
    let t = Instant::now();
    while sim.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(sim.try_wait().unwrap().is_some(), "the game did not end");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
    assert!(d.wait().unwrap().success(), "SIGTERM: exit 0");
    let out = bin()
        .args(["games", "--state-dir"])
        .arg(&state)
        .args(["--pgn", "1"])
        .output()
        .unwrap();
    let pgn_text = String::from_utf8(out.stdout).unwrap();
    let log = daemons_log(&state);
    assert_eq!(
        sans(&pgn_text),
        played,
        "{pgn_text}\nthe daemons' last events and log lines:\n{log}"
    );
    // The moves made while no daemon ran were read from the board afterwards.
    let all = std::fs::read_to_string(state.with_file_name("daemons.log")).unwrap();
    let recovered = all
        .lines()
        .filter(|l| l.contains("\"type\":\"move\"") && l.contains("\"recovered\":true"))
        .count();
    assert!(
        (2..=4).contains(&recovered),
        "{recovered} moves taken up from the board\n{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
