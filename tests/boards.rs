//! Serial boards end to end: `chessboardd simulate` pretends to be a DIY, DGT or ChessLink board
//! on a pseudo-terminal, `chessboardd run` reads it through its driver and engine, and every move
//! of the game must come out, through glitches, a board turned round and pulled cables.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::pgn;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Position};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

/// `chessboardd simulate`: a `protocol` board at `link` playing the game of `pgn`.
fn simulator(protocol: &str, link: &Path, pgn: &Path) -> Command {
    let mut c = bin();
    c.args([
        "simulate",
        "--protocol",
        protocol,
        "--link",
        link.to_str().unwrap(),
    ])
    .args(["--pgn", pgn.to_str().unwrap(), "--speed", "4"]);
    c
}

/// Waits until the simulator has made its link.
fn wait_for(link: &Path) {
    let t = Instant::now();
    while !link.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn game_ucis(file: &str) -> (PathBuf, Vec<String>, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(file);
    let game = pgn::parse(&std::fs::read_to_string(&path).unwrap())
        .unwrap()
        .remove(0);
    let mut pos = game.start.clone();
    let ucis = game
        .moves
        .iter()
        .map(|m| {
            let u = UciMove::from_move(*m, CastlingMode::Standard).to_string();
            pos.play_unchecked(*m);
            u
        })
        .collect();
    let fen =
        shakmaty::fen::Fen::from_position(&game.start, shakmaty::EnPassantMode::Legal).to_string();
    (path, ucis, fen)
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
}

/// Plays `file` on a simulated `protocol` board with `extra` simulator flags; returns the `run`
/// events and the simulator's report.
fn play(
    protocol: &str,
    file: &str,
    extra: &[&str],
) -> (Vec<serde_json::Value>, String, Vec<String>) {
    let (pgn_path, ucis, fen) = game_ucis(file);
    let dir = std::env::temp_dir().join(format!(
        "chessboardd-boards-{}-{protocol}-{}",
        std::process::id(),
        extra.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("board");
    let sim = simulator(protocol, &link, &pgn_path)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&link);
    let mut run = bin()
        .args([
            "run",
            "--board",
            &format!("{protocol}:{}", link.display()),
            "--speech",
            "text",
            "--events-json",
        ])
        .args(["--fen", &fen])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sim_out = sim.wait_with_output().unwrap();
    assert!(sim_out.status.success());
    std::thread::sleep(Duration::from_millis(500));
    stop(&mut run);
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    (
        events,
        String::from_utf8_lossy(&sim_out.stderr).to_string(),
        ucis,
    )
}

fn moves(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "move")
        .map(|e| e["uci"].as_str().unwrap().to_string())
        .collect()
}

fn check(protocol: &str, file: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let (events, sim, ucis) = play(protocol, file, extra);
    assert_eq!(
        moves(&events),
        ucis,
        "{protocol} {extra:?}: every move, once, in order\nsimulator: {sim}"
    );
    let problems: Vec<_> = events
        .iter()
        .filter(|e| {
            ["illegal", "touch_move", "takeback"].contains(&e["type"].as_str().unwrap_or(""))
        })
        .collect();
    assert!(problems.is_empty(), "{protocol}: {problems:?}");
    events
}

fn links(events: &[serde_json::Value]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e["type"] == "link")
        .map(|e| e["state"].as_str().unwrap())
        .collect()
}

#[test]
fn diy_board_with_glitches_and_twenty_pulled_cables() {
    let events = check(
        "diy",
        "seed-example.pgn",
        &["--glitch", "--reconnects", "20"],
    );
    let l = links(&events);
    assert_eq!(l[0], "connected");
    assert_eq!(l.iter().filter(|s| **s == "lost").count(), 21, "{l:?}");
    assert_eq!(
        l.iter().filter(|s| **s == "reconnected").count(),
        20,
        "{l:?}"
    );
    assert!(events
        .iter()
        .any(|e| e["type"] == "say" && e["text"] == "Brett getrennt"));
}

#[test]
fn dgt_board_turned_round_with_glitches_and_pulled_cables() {
    check(
        "dgt",
        "seed-example.pgn",
        &["--glitch", "--rotated", "--reconnects", "5"],
    );
}

#[test]
fn dgt_board_promotions_are_read_from_the_pieces() {
    // Promotions and underpromotions: the board shows which piece stands there.
    check("dgt", "promotions.pgn", &[]);
}

#[test]
fn chesslink_board_promotions_are_read_from_the_pieces_and_its_lights_show_the_moves() {
    let (events, sim, ucis) = play("chesslink", "promotions.pgn", &[]);
    assert_eq!(moves(&events), ucis);
    // Every move lit on the board (the last move's squares), the lights put out at the start.
    let leds: u64 = sim
        .split(", ")
        .find_map(|p| {
            p.strip_suffix(" LED patterns")
                .or_else(|| p.trim().strip_suffix(" LED patterns"))
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{sim}"));
    assert!(
        leds >= ucis.len() as u64,
        "{leds} LED patterns for {} moves",
        ucis.len()
    );
}

#[test]
fn diy_board_promotions_come_from_its_buttons() {
    check("diy", "promotions.pgn", &[]);
}

#[test]
fn chesslink_board_turned_round_with_glitches_and_pulled_cables() {
    check(
        "chesslink",
        "seed-example.pgn",
        &["--glitch", "--rotated", "--reconnects", "5"],
    );
}

#[test]
fn a_board_that_is_off_at_start_up_is_waited_for() {
    let dir = std::env::temp_dir().join(format!("chessboardd-boards-{}-late", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("board");
    let _ = std::fs::remove_file(&link);
    let mut run = bin()
        .args([
            "run",
            "--board",
            &format!("diy:{}", link.display()),
            "--speech",
            "text",
            "--events-json",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let (pgn_path, ucis, _) = game_ucis("molinari-bordais-1979.pgn");
    let sim = simulator("diy", &link, &pgn_path).output().unwrap();
    assert!(sim.status.success());
    stop(&mut run);
    let out = run.wait_with_output().unwrap();
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(&links(&events)[..2], &["waiting", "connected"]);
    assert_eq!(moves(&events), ucis);
    assert!(events
        .iter()
        .any(|e| e["type"] == "game_over" && e["reason"] == "checkmate"));
}

#[test]
fn board_test_shows_the_live_board_as_a_grid() {
    let dir = std::env::temp_dir().join(format!("chessboardd-boards-{}-grid", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("board");
    let (pgn_path, _, _) = game_ucis("molinari-bordais-1979.pgn");
    let mut sim = simulator("chesslink", &link, &pgn_path)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&link);
    let out = bin()
        .args([
            "board-test",
            "--board",
            &format!("chesslink:{}", link.display()),
            "--seconds",
            "3",
        ])
        .output()
        .unwrap();
    stop(&mut sim);
    let _ = sim.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("board Connected"), "{text}");
    assert!(text.contains("32 pieces"), "{text}");
    assert!(
        text.contains("8  r n b q k b n r\n7  p p p p p p p p\n"),
        "{text}"
    );
    assert!(text.contains("   a b c d e f g h"), "{text}");
    // After 1.e4 the pawn shows on e4.
    assert!(text.contains("4  . . . . P . . ."), "{text}");
}
