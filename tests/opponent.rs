//! A game against the real Stockfish through `chessboardd run`, on a simulated ChessLink board
//! (a pseudo-terminal; `sim::live`): the test is the player. It makes White's moves with
//! people's timing, reads the computer's moves from the daemon's events and executes them on
//! the board for it: the first wrongly (a wrong square: the guidance "Auf Ihrem Brett ..." is
//! heard) then put right, the others correctly. Before one of the computer's moves its engine
//! is killed (`kill -9`): the move still comes. The game is played to its end (the position
//! is lost for White), and the record holds every move and names the engine.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chessboardd::board::PROTOCOLS;
use chessboardd::sim::live::LiveBoard;
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position, Square};

const STOCKFISH: &str = "/usr/games/stockfish";
/// White is lost: mate in 18 against the best defence, sooner against the test's moves.
const LOST: &str = "4k3/8/8/3q4/8/8/PP6/K7 w - - 0 1";

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chessboardd-opp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The daemon's events, one JSON object per line, with the time each was read.
struct Events {
    rx: mpsc::Receiver<(Instant, Value)>,
    seen: Vec<Value>,
}

impl Events {
    fn start(child: &mut Child) -> Events {
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send((Instant::now(), v)).is_err() {
                        return;
                    }
                }
            }
        });
        Events {
            rx,
            seen: Vec::new(),
        }
    }

    /// The next event that `pred` accepts, within `within`.
    fn wait(
        &mut self,
        within: Duration,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> (Instant, Value) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((t, v)) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return (t, v);
                    }
                }
                Err(_) => panic!(
                    "no {what} within {within:?}; the last events:\n{}",
                    self.tail()
                ),
            }
        }
    }

    fn tail(&self) -> String {
        let n = self.seen.len().saturating_sub(30);
        self.seen[n..]
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn kind(v: &Value) -> &str {
    v["type"].as_str().unwrap_or("")
}

/// The daemon, stopped (SIGTERM, then SIGKILL) when the test ends, passed or failed.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: a signal to the daemon this test started.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        for _ in 0..50 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The engine process the daemon runs (its child named stockfish).
fn engine_of(daemon: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{daemon}/task")).ok()?;
    for t in tasks.flatten() {
        let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "stockfish" {
                return Some(pid);
            }
        }
    }
    None
}

fn daemon(link: &Path, state: &Path, config: &Path) -> Child {
    daemon_with(link, state, config, &["--fen", LOST])
}

fn daemon_with(link: &Path, state: &Path, config: &Path, more: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "run",
            "--speech",
            "text",
            "--events-json",
            "--opponent",
            "engine",
        ])
        .arg("--board")
        .arg(format!("chesslink:{}", link.display()))
        .arg("--config")
        .arg(config)
        .arg("--state-dir")
        .arg(state)
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// An empty square near `to`, other than `from`: where a careless hand puts the piece.
fn wrong_square(board: &shakmaty::Board, from: Square, to: Square) -> Square {
    let mut near: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|s| *s != from && *s != to && board.piece_at(*s).is_none())
        .collect();
    near.sort_by_key(|s| s.distance(to));
    near[0]
}

#[test]
fn a_game_against_stockfish_on_a_simulated_chesslink_board() {
    assert!(
        Path::new(STOCKFISH).exists(),
        "{STOCKFISH} is missing: apt-get install stockfish (make deps)"
    );
    let dir = temp_dir("game");
    let link = dir.join("board");
    let state = dir.join("state");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[speech]\nlang = \"de\"\n[opponent]\ncolor = \"black\"\nmovetime_ms = 1000\n\
         elo = 2850\n",
    )
    .unwrap();
    let mut pos: Chess = LOST
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let board = LiveBoard::open(
        PROTOCOLS.iter().find(|p| p.name == "chesslink").unwrap(),
        &link,
        pos.board().clone(),
    )
    .unwrap();
    let mut child = Daemon(daemon(&link, &state, &config));
    let pid = child.0.id();
    let mut events = Events::start(&mut child.0);
    events.wait(Duration::from_secs(20), "the game's start", |v| {
        kind(v) == "game_start"
    });
    let mut hands = board.hands(7, 2.0);
    let mut rng = chessboardd::sim::Rng::new(11);
    let mut played: Vec<String> = Vec::new();
    let mut computer_moves = 0;
    let mut wrong_done = false;
    let mut killed = false;
    let mut latencies = Vec::new();
    let over = loop {
        // White: a legal move that does not allow a mate in one (the game is to last a few
        // moves); any legal move when there is none.
        let legal = pos.legal_moves();
        let safe: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| {
                let after = pos.clone().play(*m).unwrap();
                !after
                    .legal_moves()
                    .iter()
                    .any(|r| after.clone().play(*r).unwrap().is_checkmate())
            })
            .collect();
        let from = if safe.is_empty() {
            legal.to_vec()
        } else {
            safe
        };
        let m = from[rng.range(0, from.len() as u64 - 1) as usize];
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        hands.play(&pos, m);
        let (t_player, _) = events.wait(Duration::from_secs(15), "the player's move", |v| {
            kind(v) == "move" && v["uci"] == uci.as_str()
        });
        pos.play_unchecked(m);
        played.push(uci);
        if pos.is_game_over() {
            break events
                .wait(Duration::from_secs(10), "the end", |v| {
                    kind(v) == "game_over"
                })
                .1;
        }
        // The second computer move: its engine killed while it thinks.
        if computer_moves == 1 && !killed {
            let engine = (0..50)
                .find_map(|_| {
                    std::thread::sleep(Duration::from_millis(20));
                    engine_of(pid)
                })
                .expect("the daemon runs stockfish");
            // SAFETY: a signal to a process of this test's daemon.
            assert_eq!(unsafe { libc::kill(engine as i32, libc::SIGKILL) }, 0);
            killed = true;
        }
        let (t_computer, mv) = events.wait(Duration::from_secs(30), "the computer's move", |v| {
            kind(v) == "move" && v["color"] == "black"
        });
        if computer_moves != 1 {
            latencies.push(t_computer - t_player);
        }
        computer_moves += 1;
        let uci = mv["uci"].as_str().unwrap().to_string();
        let say = mv["say"].as_str().unwrap_or("");
        assert!(!say.is_empty(), "the computer's move is announced: {mv}");
        let m: Move = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        let before = pos.clone();
        pos.play_unchecked(m);
        played.push(uci.clone());
        if pos.is_game_over() {
            break events
                .wait(Duration::from_secs(10), "the end", |v| {
                    kind(v) == "game_over"
                })
                .1;
        }
        let simple = matches!(
            m,
            Move::Normal {
                promotion: None,
                ..
            }
        );
        if !wrong_done && simple {
            // Executed wrongly: the piece on a wrong square, then put right after the guidance.
            let (from, to) = (m.from().unwrap(), m.to());
            let piece = before.board().piece_at(from).unwrap();
            let wrong = wrong_square(before.board(), from, to);
            if before.board().piece_at(to).is_some() {
                board.lift(to);
                std::thread::sleep(Duration::from_millis(400));
            }
            board.lift(from);
            std::thread::sleep(Duration::from_millis(400));
            board.place(wrong, piece);
            let (_, guided) = events.wait(Duration::from_secs(15), "the guidance", |v| {
                kind(v) == "say"
                    && v["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("Ihrem Brett"))
            });
            eprintln!("guidance: {}", guided["text"]);
            board.lift(wrong);
            std::thread::sleep(Duration::from_millis(400));
            board.place(to, piece);
            wrong_done = true;
        } else {
            hands.play(&before, m);
        }
        events.wait(Duration::from_secs(15), "the execution", |v| {
            kind(v) == "replicated" && v["uci"] == uci.as_str()
        });
        assert_eq!(board.board(), *pos.board(), "the board shows the game");
    };
    assert!(wrong_done && killed, "wrong {wrong_done}, killed {killed}");
    assert!(computer_moves >= 3, "{computer_moves} computer moves");
    // The ChessLink's lights were sent a pattern for the moves (the computer's until executed).
    assert!(
        board.leds() >= computer_moves,
        "{} LED patterns for {computer_moves} computer moves",
        board.leds()
    );
    eprintln!(
        "game over: {over}; {} plies; computer's answers: {latencies:?}",
        played.len()
    );
    // SAFETY: the daemon this test started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status}");
    // The record: every move, and the engine named.
    let games: Vec<PathBuf> = std::fs::read_dir(state.join("games"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(games.len(), 1, "{games:?}");
    let text = std::fs::read_to_string(&games[0]).unwrap();
    assert!(text.contains("[Black \"Stockfish"), "{text}");
    assert!(text.contains(", Elo 2850\"]"), "{text}");
    let game = chessboardd::pgn::parse(&text).unwrap().remove(0);
    let recorded: Vec<String> = game
        .moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(recorded, played);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A wrong engine path, and an engine that never answers: `run` stops at once with exit 78
/// and a message naming the setting; no hang.
#[test]
fn run_with_a_bad_engine_is_a_config_error() {
    let dir = temp_dir("bad");
    let silent = dir.join("silent");
    std::fs::write(&silent, "#!/bin/sh\nexec sleep 600\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&silent, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (engine, expected, within) in [
        ("/nonexistent/stockfish", "no such program", 5),
        (silent.to_str().unwrap(), "no `uciok` within 10 s", 20),
    ] {
        let config = dir.join("config.toml");
        std::fs::write(
            &config,
            format!("[opponent]\nenabled = true\nengine = \"{engine}\"\n"),
        )
        .unwrap();
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args([
                "run",
                "--speech",
                "text",
                "--board",
                "sim:tests/data/games/seed-example.pgn",
            ])
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(78), "{err}");
        assert!(
            err.contains("[opponent] engine") && err.contains(engine) && err.contains(expected),
            "{err}"
        );
        assert!(
            t.elapsed() < Duration::from_secs(within),
            "{:?}",
            t.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The engine's CPU time so far (user and system), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's name in parentheses: fields 14 and 15 are utime and stime.
    let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// The figures of the README (`make bench-opponent`): for each strength, the time from the
/// player's move completed (its `move` event) to the computer's move announced, p50 over the
/// computer's moves of a game from the initial position (movetime 1000 ms), and the engine's
/// CPU use while the player executes the computer's move and makes his own.
#[test]
#[ignore = "a measurement of some minutes: make bench-opponent"]
fn answer_times_and_idle_cpu_by_strength() {
    const MOVES: usize = 8;
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut rows = Vec::new();
    for strength in [
        "level = 1",
        "level = 10",
        "level = 20",
        "elo = 1350",
        "elo = 2000",
        "elo = 2850",
    ] {
        let dir = temp_dir("bench");
        let (link, state, config) = (dir.join("board"), dir.join("state"), dir.join("c.toml"));
        std::fs::write(
            &config,
            format!("[opponent]\n{strength}\nmovetime_ms = 1000\n"),
        )
        .unwrap();
        let mut pos = Chess::default();
        let proto = PROTOCOLS.iter().find(|p| p.name == "chesslink").unwrap();
        let board = LiveBoard::open(proto, &link, pos.board().clone()).unwrap();
        let mut child = Daemon(daemon_with(&link, &state, &config, &[]));
        let pid = child.0.id();
        let mut events = Events::start(&mut child.0);
        events.wait(Duration::from_secs(20), "the start", |v| {
            kind(v) == "game_start"
        });
        let mut hands = board.hands(3, 3.0);
        let mut rng = chessboardd::sim::Rng::new(5);
        let (mut lat, mut idle) = (Vec::new(), Vec::new());
        let mut last: Option<(Instant, u64)> = None;
        for _ in 0..MOVES {
            let legal = pos.legal_moves();
            let m = legal[rng.range(0, legal.len() as u64 - 1) as usize];
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            hands.play(&pos, m);
            let (t0, _) = events.wait(Duration::from_secs(15), "the move", |v| {
                kind(v) == "move" && v["uci"] == uci.as_str()
            });
            let engine = engine_of(pid).unwrap();
            if let Some((t, c)) = last {
                let used = (cpu_ticks(engine) - c) as f64 / ticks;
                idle.push(100.0 * used / (t0 - t).as_secs_f64());
            }
            pos.play_unchecked(m);
            if pos.is_game_over() {
                break;
            }
            let (t1, mv) = events.wait(Duration::from_secs(30), "the reply", |v| {
                kind(v) == "move" && v["color"] == "black"
            });
            lat.push((t1 - t0).as_secs_f64() * 1000.0);
            last = Some((t1, cpu_ticks(engine)));
            let reply = mv["uci"].as_str().unwrap().to_string();
            let r = reply.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            let before = pos.clone();
            pos.play_unchecked(r);
            if pos.is_game_over() {
                break;
            }
            hands.play(&before, r);
            events.wait(Duration::from_secs(15), "the execution", |v| {
                kind(v) == "replicated" && v["uci"] == reply.as_str()
            });
        }
        drop(child);
        drop(board);
        lat.sort_by(f64::total_cmp);
        let p50 = lat.get(lat.len() / 2).copied().unwrap_or(f64::NAN);
        let cpu = idle.iter().sum::<f64>() / idle.len().max(1) as f64;
        rows.push(format!(
            "{strength:<12} answer p50 {p50:>6.0} ms over {} moves, engine CPU between moves {cpu:.1} %",
            lat.len()
        ));
        assert!(
            cpu < 5.0,
            "{strength}: the engine works between moves: {cpu:.1} %"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    for r in rows {
        println!("{r}");
    }
}

/// A Polyglot book written here: one entry, h7h5 after 1. e4 (a move Stockfish would not
/// choose). The computer answers 1. e4 from the book at once; then, in casual mode, the
/// player's `hint` on the control socket is answered by the engine and spoken.
#[test]
fn the_book_answers_and_a_hint_is_spoken() {
    let dir = temp_dir("book");
    let (link, state, config) = (dir.join("board"), dir.join("state"), dir.join("c.toml"));
    let socket = dir.join("ctl.sock");
    let start = Chess::default();
    let e4m = "e2e4".parse::<UciMove>().unwrap().to_move(&start).unwrap();
    let e4 = start.clone().play(e4m).unwrap();
    // h7h5: to h5 (file 7, rank 4), from h7 (file 7, rank 6).
    let raw: u16 = (7 | (4 << 3)) | ((7 | (6 << 3)) << 6);
    let mut entry = chessboardd::opponent::book::key(&e4).to_be_bytes().to_vec();
    entry.extend_from_slice(&raw.to_be_bytes());
    entry.extend_from_slice(&1u16.to_be_bytes());
    entry.extend_from_slice(&0u32.to_be_bytes());
    let book = dir.join("book.bin");
    std::fs::write(&book, entry).unwrap();
    std::fs::write(
        &config,
        format!(
            "[rules]\nmode = \"casual\"\n[speech]\nlang = \"de\"\n[opponent]\n\
             movetime_ms = 300\nbook = \"{}\"\n",
            book.display()
        ),
    )
    .unwrap();
    let proto = PROTOCOLS.iter().find(|p| p.name == "chesslink").unwrap();
    let board = LiveBoard::open(proto, &link, start.board().clone()).unwrap();
    let mut child = Daemon(daemon_with(
        &link,
        &state,
        &config,
        &["--socket", socket.to_str().unwrap()],
    ));
    let mut events = Events::start(&mut child.0);
    events.wait(Duration::from_secs(20), "the start", |v| {
        kind(v) == "game_start"
    });
    let mut hands = board.hands(1, 2.0);
    hands.play(&start, e4m);
    let (t0, _) = events.wait(Duration::from_secs(15), "1. e4", |v| {
        kind(v) == "move" && v["uci"] == "e2e4"
    });
    let (t1, _) = events.wait(Duration::from_secs(15), "the book's move", |v| {
        kind(v) == "move" && v["color"] == "black"
    });
    let last = events.seen.last().unwrap().clone();
    assert_eq!(last["uci"], "h7h5", "{last}");
    // From the book: no 300 ms of thinking.
    assert!(t1 - t0 < Duration::from_millis(250), "{:?}", t1 - t0);
    let h5m = "h7h5".parse::<UciMove>().unwrap().to_move(&e4).unwrap();
    hands.play(&e4, h5m);
    events.wait(Duration::from_secs(15), "the execution", |v| {
        kind(v) == "replicated"
    });
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["ctl", "--socket", socket.to_str().unwrap(), "hint"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, hint) = events.wait(Duration::from_secs(15), "the hint", |v| {
        kind(v) == "say" && v["text"].as_str().is_some_and(|t| t.starts_with("Hinweis"))
    });
    eprintln!("{}", hint["text"]);
    drop(child);
    drop(board);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crash (SIGKILL of the daemon) after the computer's reply: the daemon started again takes
/// the game up from its journal, against the computer of the same colour (even though the config
/// now says another), whose engine is given the position and answers the player's next move.
#[test]
fn a_game_against_the_computer_survives_a_crash() {
    let dir = temp_dir("crash");
    let (link, state, config) = (dir.join("board"), dir.join("state"), dir.join("c.toml"));
    let write = |color: &str| {
        std::fs::write(
            &config,
            format!("[opponent]\ncolor = \"{color}\"\nmovetime_ms = 200\n"),
        )
        .unwrap()
    };
    write("black");
    let mut pos = Chess::default();
    let proto = PROTOCOLS.iter().find(|p| p.name == "chesslink").unwrap();
    let board = LiveBoard::open(proto, &link, pos.board().clone()).unwrap();
    let mut hands = board.hands(2, 2.0);
    let mut played = Vec::new();
    let mut child = Daemon(daemon_with(&link, &state, &config, &[]));
    for round in 0..2 {
        let mut events = Events::start(&mut child.0);
        events.wait(Duration::from_secs(20), "the start", |v| {
            matches!(kind(v), "game_start" | "resumed")
        });
        let m = pos.legal_moves()[round * 3];
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        hands.play(&pos, m);
        events.wait(Duration::from_secs(15), "the player's move", |v| {
            kind(v) == "move" && v["uci"] == uci.as_str()
        });
        pos.play_unchecked(m);
        played.push(uci);
        let (_, mv) = events.wait(Duration::from_secs(30), "the computer's move", |v| {
            kind(v) == "move" && v["color"] == "black"
        });
        let reply = mv["uci"].as_str().unwrap().to_string();
        let r = reply.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        let before = pos.clone();
        pos.play_unchecked(r);
        played.push(reply.clone());
        hands.play(&before, r);
        events.wait(Duration::from_secs(15), "the execution", |v| {
            kind(v) == "replicated" && v["uci"] == reply.as_str()
        });
        if round == 0 {
            // The crash; the config now names the other colour for the computer.
            let _ = child.0.kill();
            let _ = child.0.wait();
            write("white");
            child = Daemon(daemon_with(&link, &state, &config, &[]));
        }
    }
    // SAFETY: the daemon this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let _ = child.0.wait();
    let journal = std::fs::read_to_string(state.join("journal.jsonl")).unwrap();
    assert!(
        journal.contains("\"computer\":[\"black\",\"Stockfish"),
        "{journal}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "games",
            "--state-dir",
            state.to_str().unwrap(),
            "--pgn",
            "1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[Black \"Stockfish"), "{text}");
    let game = chessboardd::pgn::parse(&text).unwrap().remove(0);
    let recorded: Vec<String> = game
        .moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(recorded, played);
    drop(board);
    let _ = std::fs::remove_dir_all(&dir);
}
