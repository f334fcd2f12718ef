//! The UCI engine as a child process, against the real Stockfish (Debian's package,
//! /usr/games/stockfish) and against programs that are not chess engines (shell scripts
//! written here): the handshake, the options, searches in positions with castling, en passant
//! and promotion, a wrong path, garbage, silence, and an engine killed in the middle of a search.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chessboardd::opponent::uci::{Answer, Go, Score, Search, Uci, UciError};
use chessboardd::opponent::{OpponentSettings, Strength};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

const STOCKFISH: &str = "/usr/games/stockfish";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn stockfish(strength: Strength) -> OpponentSettings {
    assert!(
        Path::new(STOCKFISH).exists(),
        "{STOCKFISH} is missing: apt-get install stockfish (make deps)"
    );
    OpponentSettings {
        strength,
        ..OpponentSettings::default()
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("chessboardd-uci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A shell script as an "engine".
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

/// The next best move, skipping the engine's news (down, up).
async fn best(uci: &mut Uci, within: Duration) -> (u64, Option<String>, Option<Score>) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, uci.recv()).await {
            Ok(Some(Answer::Best {
                id,
                bestmove,
                score,
            })) => return (id, bestmove, score),
            Ok(Some(other)) => eprintln!("engine: {other:?}"),
            Ok(None) => panic!("the engine's task ended"),
            Err(_) => panic!("no bestmove within {within:?}"),
        }
    }
}

fn legal(pos: &Chess, uci: &str) -> Move {
    uci.parse::<UciMove>()
        .unwrap_or_else(|e| panic!("{uci}: {e}"))
        .to_move(pos)
        .unwrap_or_else(|e| {
            panic!(
                "{uci} is not legal in {}: {e}",
                Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
            )
        })
}

#[test]
fn stockfish_handshake_and_strength() {
    rt().block_on(async {
        let uci = Uci::start(&stockfish(Strength::Elo(1500))).await.unwrap();
        let info = uci.info();
        assert!(info.name.starts_with("Stockfish"), "{info:?}");
        assert!(info.options.iter().any(|o| o.name == "Skill Level"));
        assert_eq!(info.strength.as_deref(), Some("Elo 1500"));
        assert_eq!(info.pgn_name(), format!("{}, Elo 1500", info.name));
        assert!(uci.pid() > 0);
        let pid = uci.pid();
        uci.quit().await;
        // `quit` ends the process.
        std::thread::sleep(Duration::from_millis(200));
        assert!(!Path::new(&format!("/proc/{pid}")).exists() || zombie_or_gone(pid));

        // An Elo below the engine's range is raised to its lowest.
        let uci = Uci::start(&stockfish(Strength::Elo(800))).await.unwrap();
        assert_eq!(uci.info().strength.as_deref(), Some("Elo 1350"));
        uci.quit().await;
        let uci = Uci::start(&stockfish(Strength::Level(3))).await.unwrap();
        assert_eq!(
            uci.info().pgn_name(),
            format!("{}, level 3", uci.info().name)
        );
        uci.quit().await;
    });
}

fn zombie_or_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

/// A search's case: its name, the start (FEN, `None`: the initial position), the moves sent,
/// and the only answer when the position forces it.
type Case<'a> = (&'a str, Option<&'a str>, &'a [&'a str], Option<&'a str>);

/// Positions written by hand where the best (or only sensible) move is castling, en passant, a
/// promotion; each answer must be legal, and where the move is forced, that move.
#[test]
fn searches_with_castling_en_passant_and_promotion() {
    rt().block_on(async {
        let mut uci = Uci::start(&stockfish(Strength::Full)).await.unwrap();
        let cases: &[Case] = &[
            // After 1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5: White may castle.
            (
                "start",
                None,
                &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5"],
                None,
            ),
            // Both sides castle (short, long) in the moves sent.
            (
                "castled",
                Some("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1"),
                &["e1g1", "e8c8"],
                None,
            ),
            // En passant is the only legal move: b7b5 checks the king on a4, whose squares are
            // all covered (rook b1, bishop c1); axb6 e.p. takes the checking pawn.
            (
                "en passant",
                Some("7k/1p6/8/P7/K7/8/8/1rb5 b - - 0 1"),
                &["b7b5"],
                Some("a5b6"),
            ),
            // The pawn on b7 promotes and captures the rook on a8: mate in one.
            (
                "promotion",
                Some("r5k1/1P3ppp/8/8/8/8/6PP/6K1 w - - 0 1"),
                &[],
                Some("b7a8q"),
            ),
        ];
        for (i, (name, fen, moves, forced)) in cases.iter().enumerate() {
            let mut pos = fen.map_or_else(Chess::default, position);
            for m in *moves {
                let mv = legal(&pos, m);
                pos.play_unchecked(mv);
            }
            uci.search(Search {
                id: i as u64,
                fen: fen.map(str::to_string),
                moves: moves.iter().map(|m| m.to_string()).collect(),
                go: Go::MoveTime(200),
            });
            let (id, bestmove, score) = best(&mut uci, Duration::from_secs(10)).await;
            assert_eq!(id, i as u64, "{name}");
            let bestmove = bestmove.unwrap_or_else(|| panic!("{name}: no move"));
            legal(&pos, &bestmove);
            if let Some(f) = forced {
                assert_eq!(&bestmove, f, "{name}");
            }
            assert!(score.is_some(), "{name}: no score");
            if *name == "promotion" {
                assert_eq!(score, Some(Score::Mate(1)), "{name}");
            }
        }
        // Clocks instead of a move time.
        uci.search(Search {
            id: 99,
            fen: None,
            moves: vec!["e2e4".into()],
            go: Go::Clocks {
                wtime: 3000,
                btime: 3000,
                winc: 0,
                binc: 0,
                movestogo: Some(20),
                budget: 2000,
            },
        });
        let (id, m, _) = best(&mut uci, Duration::from_secs(10)).await;
        assert_eq!(id, 99);
        let pos = Chess::default()
            .play(legal(&Chess::default(), "e2e4"))
            .unwrap();
        legal(&pos, &m.unwrap());
        // A position without moves: mate.
        uci.search(Search {
            id: 100,
            fen: Some("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1".into()),
            moves: vec![],
            go: Go::MoveTime(100),
        });
        let (id, m, _) = best(&mut uci, Duration::from_secs(10)).await;
        assert_eq!((id, m), (100, None));
        uci.quit().await;
    });
}

#[test]
fn a_new_search_stops_the_running_one() {
    rt().block_on(async {
        let mut uci = Uci::start(&stockfish(Strength::Full)).await.unwrap();
        let search = |id, ms| Search {
            id,
            fen: None,
            moves: vec![],
            go: Go::MoveTime(ms),
        };
        let t = Instant::now();
        uci.search(search(1, 60_000));
        tokio::time::sleep(Duration::from_millis(100)).await;
        uci.search(search(2, 100));
        let (id, m, _) = best(&mut uci, Duration::from_secs(10)).await;
        assert_eq!(id, 1);
        assert!(m.is_some());
        let (id, _, _) = best(&mut uci, Duration::from_secs(10)).await;
        assert_eq!(id, 2);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        uci.quit().await;
    });
}

#[test]
fn a_wrong_path_is_a_clear_error() {
    rt().block_on(async {
        let s = OpponentSettings {
            engine: "/nonexistent/stockfish".into(),
            ..OpponentSettings::default()
        };
        let e = Uci::start(&s).await.err().unwrap();
        assert!(matches!(e, UciError::NotFound { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("[opponent] engine") && text.contains("/nonexistent/stockfish"),
            "{text}"
        );
        // A file that is not a program.
        let dir = temp_dir("notexec");
        let f = dir.join("book.txt");
        std::fs::write(&f, "hello").unwrap();
        let s = OpponentSettings {
            engine: f,
            ..OpponentSettings::default()
        };
        let e = Uci::start(&s).await.err().unwrap();
        assert!(matches!(e, UciError::CannotStart { .. }), "{e:?}");
        assert!(e.to_string().contains("[opponent] engine"), "{e}");
    });
}

/// Programs that are no chess engines: each a clear error within the handshake's time.
#[test]
fn garbage_silence_and_floods_are_clear_errors() {
    let dir = temp_dir("garbage");
    let cases = [
        // Prints junk and ends.
        (
            script(&dir, "junk", "echo hello; echo world; exit 3"),
            "ended",
        ),
        // Prints junk and waits for ever.
        (
            script(&dir, "silent", "echo not a chess engine; exec sleep 600"),
            "no `uciok`",
        ),
        // Floods its output with one endless line, then more lines.
        (script(&dir, "flood", "exec cat /dev/zero"), "no `uciok`"),
        (script(&dir, "yes", "exec yes garbage"), "no `uciok`"),
        // Answers uciok but never readyok.
        (
            script(
                &dir,
                "noready",
                "read a; echo 'id name Half'; echo uciok; exec sleep 600",
            ),
            "no `readyok`",
        ),
    ];
    rt().block_on(async {
        for (path, expected) in cases {
            let s = OpponentSettings {
                engine: path.clone(),
                handshake_ms: 1500,
                ..OpponentSettings::default()
            };
            let t = Instant::now();
            let e = Uci::start(&s)
                .await
                .err()
                .unwrap_or_else(|| panic!("{path:?} started"));
            let text = e.to_string();
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{path:?}: {:?}",
                t.elapsed()
            );
            assert!(
                text.contains(expected) && text.contains("[opponent] engine"),
                "{path:?}: {text}"
            );
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kill -9` of the engine in the middle of a long search: it is started again and the search
/// is answered.
#[test]
fn a_killed_engine_is_started_again_and_the_search_answered() {
    rt().block_on(async {
        let mut uci = Uci::start(&stockfish(Strength::Full)).await.unwrap();
        let first = uci.pid();
        uci.search(Search {
            id: 7,
            fen: None,
            moves: vec!["e2e4".into(), "c7c5".into()],
            go: Go::MoveTime(1500),
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: a signal to the child process this test started.
        assert_eq!(unsafe { libc::kill(first as i32, libc::SIGKILL) }, 0);
        let t = Instant::now();
        let mut down = false;
        let mut up = false;
        let answer = loop {
            match tokio::time::timeout(Duration::from_secs(15), uci.recv()).await {
                Ok(Some(Answer::Down { .. })) => down = true,
                Ok(Some(Answer::Up { .. })) => up = true,
                Ok(Some(Answer::Best { id, bestmove, .. })) => break (id, bestmove),
                other => panic!("no answer after the kill: {other:?}"),
            }
        };
        assert!(down && up, "down {down}, up {up}");
        assert_eq!(answer.0, 7);
        let pos = ["e2e4", "c7c5"].iter().fold(Chess::default(), |p, m| {
            let mv = legal(&p, m);
            p.play(mv).unwrap()
        });
        legal(&pos, &answer.1.unwrap());
        // Back after the first wait (1 s) and a search of 1.5 s.
        assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
        assert_ne!(uci.pid(), first);
        assert!(uci.pid() > 0);
        uci.quit().await;
    });
}

/// Under a clock the computer thinks within its move's budget: an engine that would think on
/// (it answers only `stop`) is stopped when the budget is spent, and its move is taken.
#[test]
fn a_search_under_a_clock_is_stopped_when_its_budget_is_spent() {
    let dir = temp_dir("budget");
    let engine = script(
        &dir,
        "ponders",
        "while read line; do case \"$line\" in \
         uci) echo 'id name Ponders'; echo uciok;; \
         isready) echo readyok;; \
         stop) echo 'bestmove e7e5';; \
         quit) exit 0;; \
         esac; done",
    );
    rt().block_on(async {
        let settings = OpponentSettings {
            engine,
            ..OpponentSettings::default()
        };
        let mut uci = Uci::start(&settings).await.unwrap();
        let t = Instant::now();
        uci.search(Search {
            id: 7,
            fen: None,
            moves: vec!["e2e4".into()],
            go: Go::Clocks {
                wtime: 600_000,
                btime: 600_000,
                winc: 0,
                binc: 0,
                movestogo: None,
                budget: 400,
            },
        });
        let (id, m, _) = best(&mut uci, Duration::from_secs(10)).await;
        let took = t.elapsed();
        assert_eq!((id, m.as_deref()), (7, Some("e7e5")));
        assert!(
            took >= Duration::from_millis(400) && took < Duration::from_secs(3),
            "{took:?}"
        );
        uci.quit().await;
    });
}
