//! PGN as people write it (issue 17), from `tests/data/games/annotated.pgn` (glyphs, NAGs,
//! comments, nested variations, `%` lines, a study from a FEN): `demo --game-pgn FILE --game N`
//! plays the Nth game's main line, `simulate --pgn FILE --game N` starts from its FEN, the
//! errors name the game, and no text makes the reader panic.
//!
//! The expected moves are the main lines written out below and played by shakmaty, not what the
//! reader makes of the file.

#[path = "support/clk.rs"]
#[allow(dead_code)]
mod clk;
use clk::without_clk;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use chessboardd::board::dgt;
use chessboardd::pgn;
use proptest::prelude::*;
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess, Position};

/// Game 1 of annotated.pgn, Morphy's Opera game, its main line.
const OPERA: &str = "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 \
Nxb5 cxb5 Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#";
/// Game 2, Réti–Tartakower, Vienna 1910.
const RETI: &str =
    "e4 c6 d4 d5 Nc3 dxe4 Nxe4 Nf6 Qd3 e5 dxe5 Qa5+ Bd2 Qxe5 O-O-O Nxe4 Qd8+ Kxd8 Bg5+ Kc7 Bd8#";
/// Game 3, the Saavedra position.
const SAAVEDRA_FEN: &str = "8/8/1KP5/3r4/8/8/8/k7 w - - 0 1";
const SAAVEDRA: &str = "c7 Rd6+ Kb5 Rd5+ Kb4 Rd4+ Kb3 Rd3+ Kc2 Rd4 c8=R Ra4 Kb3";

fn annotated() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/annotated.pgn")
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-pgn-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The position after playing `sans` (every one legal) from `start`.
fn play(start: &Chess, sans: &str) -> Chess {
    let mut pos = start.clone();
    for s in sans.split_whitespace() {
        let m = s
            .parse::<SanPlus>()
            .unwrap()
            .san
            .to_move(&pos)
            .unwrap_or_else(|e| panic!("{s}: {e}"));
        pos.play_unchecked(m);
    }
    pos
}

/// `sans` as shakmaty writes them (the suffixes checked by playing them).
fn canonical(start: &Chess, sans: &str) -> Vec<String> {
    let mut pos = start.clone();
    sans.split_whitespace()
        .map(|s| {
            let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
            SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string()
        })
        .collect()
}

/// The moves of the record the demo prints at its end: the movetext without tags, comments
/// (the clock's and the ending's), move numbers and result.
fn record_moves(stdout: &str) -> (Vec<String>, String) {
    let record = &stdout[stdout.rfind("[Event ").expect("a record at the end")..];
    let result = record
        .lines()
        .find_map(|l| l.strip_prefix("[Result \""))
        .and_then(|r| r.strip_suffix("\"]"))
        .expect("a Result tag")
        .to_string();
    let movetext: Vec<&str> = record.lines().filter(|l| !l.starts_with('[')).collect();
    let (mut text, _) = without_clk(&movetext.join("\n"));
    while let Some(open) = text.find('{') {
        let close = open + text[open..].find('}').expect("a closed comment");
        text.replace_range(open..=close, " ");
    }
    let moves = text
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && !matches!(*t, "1-0" | "0-1" | "1/2-1/2" | "*"))
        .map(str::to_string)
        .collect();
    (moves, result)
}

fn demo(args: &[&str]) -> Output {
    bin()
        .arg("demo")
        .arg("--game-pgn")
        .arg(annotated())
        .args(["--speed", "1000", "--speech", "text", "--lang", "en"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn demo_plays_the_main_line_of_the_game_that_game_names() {
    let o = demo(&["--game", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let (moves, result) = record_moves(&out);
    assert_eq!(moves, canonical(&Chess::default(), RETI), "{out}");
    assert_eq!(result, "1-0", "11. Bd8# is mate: {out}");
    assert!(stderr(&o).contains("21 moves"), "{}", stderr(&o));

    // Without --game: the first game.
    let o = demo(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let (moves, result) = record_moves(&out);
    assert_eq!(moves, canonical(&Chess::default(), OPERA), "{out}");
    assert_eq!(result, "1-0", "{out}");
}

#[test]
fn the_games_of_the_file_are_its_main_lines() {
    let text = std::fs::read_to_string(annotated()).unwrap();
    let games = pgn::parse(&text).unwrap();
    let saavedra = Fen::from_ascii(SAAVEDRA_FEN.as_bytes())
        .unwrap()
        .into_position::<Chess>(CastlingMode::Standard)
        .unwrap();
    let expected = [
        (Chess::default(), OPERA, "1-0"),
        (Chess::default(), RETI, "1-0"),
        (saavedra, SAAVEDRA, "*"),
    ];
    assert_eq!(games.len(), expected.len());
    for (i, (g, (start, line, result))) in games.iter().zip(&expected).enumerate() {
        assert_eq!(&g.start, start, "game {}", i + 1);
        assert_eq!(g.result, *result, "game {}", i + 1);
        let mut pos = start.clone();
        let sans: Vec<String> = g
            .moves
            .iter()
            .map(|m| SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
            .collect();
        assert_eq!(sans, canonical(start, line), "game {}", i + 1);
        let nth = pgn::nth(&text, i + 1).unwrap();
        assert_eq!(
            (&nth.moves, &nth.tags),
            (&g.moves, &g.tags),
            "nth {}",
            i + 1
        );
    }
}

/// `simulate --protocol dgt --pgn annotated.pgn --game 3`, the test as its host: the board's
/// first dump is the FEN's position, its last the position after the study's main line.
#[test]
fn simulate_starts_the_game_that_game_names_from_its_fen() {
    let dir = temp_dir("simulate");
    let link = dir.join("board");
    let _ = std::fs::remove_file(&link);
    let sim = bin()
        .args(["simulate", "--protocol", "dgt", "--link"])
        .arg(&link)
        .arg("--pgn")
        .arg(annotated())
        .args(["--game", "3", "--speed", "20"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !link.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut port = serialport::new(link.to_string_lossy(), 9600)
        .timeout(Duration::from_millis(10))
        .open_native()
        .unwrap_or_else(|e| panic!("{}: {e}", link.display()));
    port.write_all(&[
        dgt::RESET,
        dgt::SEND_VERSION,
        dgt::SEND_BOARD,
        dgt::UPDATE_BOARD,
    ])
    .unwrap();
    let start = Fen::from_ascii(SAAVEDRA_FEN.as_bytes())
        .unwrap()
        .into_position::<Chess>(CastlingMode::Standard)
        .unwrap();
    let mut decoder = dgt::Decoder::default();
    let mut first: Option<Vec<u8>> = None;
    let mut view: Option<Vec<u8>> = None;
    let t = Instant::now();
    loop {
        assert!(t.elapsed() < Duration::from_secs(60), "no end of the game");
        let mut buf = [0u8; 512];
        let n = match port.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break, // the simulator has finished and closed its end
        };
        let mut msgs = Vec::new();
        decoder.feed(&buf[..n], &mut msgs);
        for (id, payload) in msgs {
            match id {
                dgt::MSG_BOARD_DUMP => {
                    first.get_or_insert_with(|| payload.clone());
                    view = Some(payload);
                }
                dgt::MSG_FIELD_UPDATE => {
                    let v = view.as_mut().expect("a field update before the dump");
                    v[payload[0] as usize] = payload[1];
                }
                _ => {}
            }
        }
    }
    let out = sim.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        first.as_deref(),
        Some(&dgt::dump(start.board())[3..]),
        "the board starts from the FEN"
    );
    assert_ne!(
        first.as_deref(),
        Some(&dgt::dump(Chess::default().board())[3..])
    );
    let end = play(&start, SAAVEDRA);
    assert_eq!(
        view.as_deref(),
        Some(&dgt::dump(end.board())[3..]),
        "the board ends after 7. Kb3 (with a rook promoted on c8)"
    );
    assert!(stderr(&out).contains("13 moves played"), "{}", stderr(&out));
}

#[test]
fn a_game_beyond_the_file_an_illegal_move_and_a_bad_fen_are_named() {
    let o = demo(&["--game", "4"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("annotated.pgn: game 4: no such game: the file holds 3 games"),
        "{}",
        stderr(&o)
    );
    let o = bin()
        .args(["simulate", "--protocol", "dgt", "--link"])
        .arg(temp_dir("beyond").join("board"))
        .arg("--pgn")
        .arg(annotated())
        .args(["--game", "9"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("game 9: no such game: the file holds 3 games"),
        "{}",
        stderr(&o)
    );
    for bad in [&["--game", "0"][..], &["--game", "two"][..]] {
        let o = demo(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--game"), "{}", stderr(&o));
    }
    // --game names a game of a file: without the file it is a usage error.
    let o = bin().args(["demo", "--game", "2"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--game-pgn"), "{}", stderr(&o));

    let dir = temp_dir("errors");
    let illegal = dir.join("illegal.pgn");
    std::fs::write(
        &illegal,
        "[Event \"one\"]\n\n1. e4 e5 *\n\n[Event \"two\"]\n\n1. e4 {fine} e5 2. Nf3 Nc6 3. Bb5 a6 \
         4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 11. Nbd2 Bb7 \
         12. Bc2 Re8 13. Nf1 Bf8 14. Nf3 *\n",
    )
    .unwrap();
    for n in ["2", "1"] {
        let o = bin()
            .arg("demo")
            .arg("--game-pgn")
            .arg(&illegal)
            .args(["--game", n, "--speed", "1000", "--speech", "text"])
            .output()
            .unwrap();
        if n == "2" {
            assert_eq!(o.status.code(), Some(1));
            assert!(
                stderr(&o).contains("game 2: move 14. Nf3: illegal in this position"),
                "{}",
                stderr(&o)
            );
        } else {
            // The mistake is in game 2: game 1 plays.
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    let bad_fen = dir.join("fen.pgn");
    std::fs::write(
        &bad_fen,
        "[SetUp \"1\"]\n[FEN \"8/8/1KP5/3r4/8/8/8/k8 w - - 0 1\"]\n\n1. c7 *\n",
    )
    .unwrap();
    let o = bin()
        .args(["simulate", "--protocol", "dgt", "--link"])
        .arg(dir.join("board"))
        .arg("--pgn")
        .arg(&bad_fen)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("game 1: bad FEN tag \"8/8/1KP5/3r4/8/8/8/k8 w - - 0 1\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn every_prefix_of_a_real_file_reads_or_fails_cleanly() {
    let text = std::fs::read_to_string(annotated()).unwrap();
    let mut ok = 0;
    for (i, _) in text.char_indices() {
        let prefix = &text[..i];
        if let Ok(games) = pgn::parse(prefix) {
            ok += 1;
            assert!(games.len() <= 3);
        }
        let _ = pgn::nth(prefix, 2);
    }
    // Most cuts fall between moves or inside a comment of the last game read so far.
    assert!(ok > text.len() / 2, "{ok} of {} prefixes read", text.len());
}

/// Text that looks like PGN: its tokens, mixed.
fn pgn_ish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(";".to_string()),
        Just("\n".to_string()),
        Just("\n%".to_string()),
        Just(" ".to_string()),
        Just("$".to_string()),
        Just("!?".to_string()),
        Just("1-0".to_string()),
        Just("1/2-1/2".to_string()),
        Just("*".to_string()),
        Just("--".to_string()),
        Just("O-O-O".to_string()),
        Just("[FEN \"".to_string()),
        Just("[SetUp \"1\"]".to_string()),
        "[a-hKQRBNx1-8=+#.]{1,6}",
        "\\PC{0,4}",
    ];
    prop::collection::vec(token, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_text_makes_the_reader_panic(text in "\\PC{0,300}") {
        let _ = pgn::parse(&text);
        let _ = pgn::nth(&text, 2);
    }

    #[test]
    fn no_pgn_like_text_makes_the_reader_panic(text in pgn_ish()) {
        let _ = pgn::parse(&text);
        let _ = pgn::nth(&text, 1);
    }

    /// The real file with a piece cut out and some PGN-like text put in its place.
    #[test]
    fn a_damaged_real_file_reads_or_fails_cleanly(
        at in 0usize..4000, len in 0usize..40, patch in pgn_ish()
    ) {
        let text = std::fs::read_to_string(annotated()).unwrap();
        let mut at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + len).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let damaged = format!("{}{patch}{}", &text[..at], &text[end..]);
        match pgn::parse(&damaged) {
            Ok(games) => {
                for g in &games {
                    // Every move read is legal where it stands.
                    let mut pos = g.start.clone();
                    for m in &g.moves {
                        prop_assert!(pos.is_legal(*m));
                        pos.play_unchecked(*m);
                    }
                }
            }
            Err(e) => prop_assert!(e.game >= 1 && !e.msg.is_empty()),
        }
    }
}
