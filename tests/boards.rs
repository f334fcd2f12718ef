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
    simulator_at(protocol, link, pgn, "4")
}

/// The same, its players `speed` times quicker than people.
fn simulator_at(protocol: &str, link: &Path, pgn: &Path, speed: &str) -> Command {
    let mut c = bin();
    c.args([
        "simulate",
        "--protocol",
        protocol,
        "--link",
        link.to_str().unwrap(),
    ])
    .args(["--pgn", pgn.to_str().unwrap(), "--speed", speed]);
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
    game_ucis_at(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/games")
            .join(file),
    )
}

fn game_ucis_at(path: &Path) -> (PathBuf, Vec<String>, String) {
    let path = path.to_path_buf();
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
    let (pgn_path, _, _) = game_ucis(file);
    play_at(protocol, &pgn_path, "4", &extra.len().to_string(), extra)
}

/// Plays the game of `pgn_path` at `speed`; `tag` tells this test's files from the others'.
fn play_at(
    protocol: &str,
    pgn_path: &Path,
    speed: &str,
    tag: &str,
    extra: &[&str],
) -> (Vec<serde_json::Value>, String, Vec<String>) {
    play_with(protocol, pgn_path, speed, tag, extra, &[])
}

/// The same, with `run_extra` flags for `run`.
fn play_with(
    protocol: &str,
    pgn_path: &Path,
    speed: &str,
    tag: &str,
    extra: &[&str],
    run_extra: &[&str],
) -> (Vec<serde_json::Value>, String, Vec<String>) {
    let (pgn_path, ucis, fen) = game_ucis_at(pgn_path);
    let dir = std::env::temp_dir().join(format!(
        "chessboardd-boards-{}-{protocol}-{tag}",
        std::process::id(),
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("board");
    let sim = simulator_at(protocol, &link, &pgn_path, speed)
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
        .args(run_extra)
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
    check_events(protocol, extra, events, &sim, &ucis)
}

fn check_events(
    protocol: &str,
    extra: &[&str],
    events: Vec<serde_json::Value>,
    sim: &str,
    ucis: &[String],
) -> Vec<serde_json::Value> {
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
fn diy_board_with_late_lost_and_swapped_readings_is_read_move_for_move() {
    // The simulator's fault models through a real pseudo-terminal and the real daemon: 5% of
    // the reports lost (shown by the board's once-a-second frame), 5% late by 0.2 to 2.5 s,
    // 5% of the captures swapped quicker than the debounce time (`simulate --faults combined`).
    let (events, sim, ucis) = play(
        "diy",
        "seed-example.pgn",
        &["--faults", "combined", "--fault-rate", "50"],
    );
    // (The faults struck: the simulator counts them.)
    let count = |what: &str| {
        sim.split([',', ':'])
            .find_map(|part| {
                let (n, rest) = part.trim().split_once(' ')?;
                rest.starts_with(what)
                    .then(|| n.parse::<u32>().ok())
                    .flatten()
            })
            .unwrap_or(0)
    };
    assert!(count("reports lost") > 0 && count("late") > 0, "{sim}");
    check_events("diy", &["--faults"], events, &sim, &ucis);
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

/// Ten plies: the fifth (`Bb5`, quiet, one way to show it on any board) is made while a silent
/// board says nothing; captures and castling follow.
const SHORT_GAME: &str =
    "[Event \"board link\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6 *\n";

/// `SHORT_GAME` in a file of the test's own.
fn short_game(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "chessboardd-boards-{}-game-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("game.pgn");
    std::fs::write(&path, SHORT_GAME).unwrap();
    path
}

fn says<'a>(events: &'a [serde_json::Value], text: &str) -> Vec<&'a serde_json::Value> {
    events
        .iter()
        .filter(|e| e["type"] == "say" && e["text"] == text)
        .collect()
}

fn time_of(e: &serde_json::Value) -> i64 {
    e["t"].as_i64().unwrap()
}

/// The board hangs a second after the fourth ply, for 4.5 s, its port open: `run` says so
/// within 3-4 s of the last thing the board sent, marks the link, opens the port again until the
/// board answers, and reads every move: the one made during the silence and the rest.
fn a_silent_board_is_reported_and_reconnected(protocol: &str) {
    let tag = format!("silent-{protocol}");
    let extra = ["--silence", "4:4.5"];
    let (events, sim, ucis) = play_at(protocol, &short_game(&tag), "8", &tag, &extra);
    let events = check_events(protocol, &extra, events, &sim, &ucis);
    assert!(sim.contains("goes silent after 4 moves"), "{sim}");
    assert!(sim.contains("the board talks again"), "{sim}");
    // Until the game's end (the simulator then goes, and the link with it).
    let last = events.iter().rfind(|e| e["type"] == "move").unwrap();
    let during: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| time_of(e) <= time_of(last))
        .cloned()
        .collect();
    assert_eq!(
        links(&during),
        ["connected", "silent", "reconnected"],
        "{protocol}: no other link change (a silent board is not a pulled cable)"
    );
    let silent = says(&during, "Brett antwortet nicht");
    assert_eq!(silent.len(), 1, "{protocol}: said once: {events:?}");
    assert_eq!(says(&during, "Brett wieder verbunden").len(), 1);
    assert!(says(&during, "Brett getrennt").is_empty());
    // The silence begins a second after the fourth move was read (its last report): it is
    // reported 3 s after the last thing the board sent, which is at most a second earlier.
    let fourth = events
        .iter()
        .find(|e| e["type"] == "move" && e["ply"] == 4)
        .unwrap();
    let after = time_of(silent[0]) - time_of(fourth);
    assert!(
        (2500..=4500).contains(&after),
        "{protocol}: 'Brett antwortet nicht' {after} ms after the fourth move"
    );
    let link_at = |state: &str| {
        events
            .iter()
            .find(|e| e["type"] == "link" && e["state"] == state)
            .map(time_of)
            .unwrap()
    };
    assert!(link_at("silent") < link_at("reconnected"));
    // Back once the board talks again (4.5 s after the silence began), not before.
    assert!(link_at("reconnected") - time_of(fourth) >= 4500);
    let fifth = events
        .iter()
        .find(|e| e["type"] == "move" && e["ply"] == 5)
        .unwrap();
    assert!(time_of(fifth) > link_at("reconnected"));
}

#[test]
fn a_silent_diy_board_is_reported_and_reconnected() {
    a_silent_board_is_reported_and_reconnected("diy");
}

#[test]
fn a_silent_dgt_board_is_reported_and_reconnected() {
    a_silent_board_is_reported_and_reconnected("dgt");
}

#[test]
fn a_silent_chesslink_board_is_reported_and_reconnected() {
    a_silent_board_is_reported_and_reconnected("chesslink");
}

#[test]
fn healthy_idle_boards_are_never_called_silent() {
    // No game: the boards stand in the start position and nobody moves. A DGT board in update
    // mode sends nothing then, unless it is asked; the daemon asks.
    let runs: Vec<_> = ["diy", "dgt", "chesslink"]
        .into_iter()
        .map(|protocol| {
            let dir = std::env::temp_dir().join(format!(
                "chessboardd-boards-{}-idle-{protocol}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let link = dir.join("board");
            let _ = std::fs::remove_file(&link);
            let sim = bin()
                .args(["simulate", "--protocol", protocol, "--link"])
                .arg(&link)
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            wait_for(&link);
            let run = bin()
                .args([
                    "run",
                    "--board",
                    &format!("{protocol}:{}", link.display()),
                    "--speech",
                    "text",
                    "--events-json",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            (protocol, sim, run)
        })
        .collect();
    std::thread::sleep(Duration::from_secs(6));
    for (protocol, mut sim, mut run) in runs {
        stop(&mut run);
        let out = run.wait_with_output().unwrap();
        stop(&mut sim);
        let _ = sim.wait();
        let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(links(&events), ["connected"], "{protocol}: {events:?}");
        assert!(says(&events, "Brett antwortet nicht").is_empty());
    }
}

#[test]
fn dgt_flicker_does_not_stop_moves_being_read() {
    // The sensor under h4 (empty all game) reports it every 200 ms throughout: the board is
    // read at least every half second all the same, and the square is reported once.
    let extra = ["--flicker", "h4"];
    let (events, sim, ucis) = play_at("dgt", &short_game("flicker"), "8", "flicker", &extra);
    let events = check_events("dgt", &extra, events, &sim, &ucis);
    let flickers: Vec<_> = events.iter().filter(|e| e["type"] == "flicker").collect();
    assert_eq!(flickers.len(), 1, "{flickers:?}");
    assert_eq!(flickers[0]["square"], "h4");
    assert_eq!(says(&events, "Feld Hector vier flackert").len(), 1);
    // Reported after 3 s of flicker, not at once.
    let start = events.iter().find(|e| e["type"] == "link").unwrap();
    assert!(time_of(flickers[0]) - time_of(start) >= 3000);
}

/// `run` on a port that cannot be opened, for two and a half seconds (about eight retries): its
/// events and its log.
fn run_on_bad_port(port: &str) -> (Vec<serde_json::Value>, String) {
    let dir = std::env::temp_dir().join(format!(
        "chessboardd-boards-{}-bad-{}",
        std::process::id(),
        port.replace('/', "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut run = bin()
        .args(["run", "--board", &format!("diy:{port}")])
        .args(["--speech", "text", "--events-json", "--lang", "en"])
        .arg("--state-dir")
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    stop(&mut run);
    let out = run.wait_with_output().unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (events, String::from_utf8_lossy(&out.stderr).to_string())
}

fn said(events: &[serde_json::Value], text: &str) -> usize {
    events
        .iter()
        .filter(|e| e["type"] == "say" && e["text"] == text)
        .count()
}

#[test]
fn a_missing_port_is_named_in_the_log_once_and_waited_for() {
    let (events, log) = run_on_bad_port("/nonexistent/ttyUSB9");
    assert_eq!(links(&events), &["waiting"], "{events:?}");
    assert_eq!(said(&events, "Waiting for the board"), 1, "{events:?}");
    let named = log
        .lines()
        .filter(|l| l.contains("/nonexistent/ttyUSB9: cannot open the port: No such file"))
        .count();
    assert_eq!(named, 1, "{log}");
}

#[test]
fn a_port_that_is_not_a_tty_is_said_once_and_logged_once() {
    let (events, log) = run_on_bad_port("/dev/null");
    assert_eq!(links(&events), &["not_a_tty"], "{events:?}");
    assert_eq!(
        said(&events, "The board's port is not a serial device"),
        1,
        "{events:?}"
    );
    let named = log
        .lines()
        .filter(|l| {
            l.contains("/dev/null: cannot open the port") && l.contains("not a serial port")
        })
        .count();
    assert_eq!(named, 1, "{log}");
}

/// A middlegame: Kasparov - Deep Blue 1997, game 1, from move 13 (after 12...Bc7), `plies`
/// plies of it, written as a PGN file with its FEN; the path.
fn middlegame(tag: &str, plies: usize) -> PathBuf {
    let (path, _, _) = game_ucis("kasparov-deep-blue-1997.pgn");
    let game = pgn::parse(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .remove(0);
    let mut pos = game.start.clone();
    for m in &game.moves[..24] {
        pos.play_unchecked(*m);
    }
    let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
    let mut text = format!("[Event \"middlegame\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n\n");
    for m in &game.moves[24..24 + plies] {
        if pos.turn() == shakmaty::Color::White {
            text.push_str(&format!("{}. ", pos.fullmoves()));
        }
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m);
        text.push_str(&format!("{san} "));
    }
    text.push_str("*\n");
    let dir = std::env::temp_dir().join(format!(
        "chessboardd-boards-{}-mid-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("middlegame.pgn");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn dgt_board_turned_round_is_read_from_a_middlegame_fen() {
    // No start position to learn the way round from: the game's position, reversed, tells.
    let pgn_path = middlegame("dgt", 25);
    let (events, sim, ucis) = play_at("dgt", &pgn_path, "4", "mid", &["--rotated"]);
    check_events("dgt", &["--rotated"], events, &sim, &ucis);
}

#[test]
fn chesslink_board_turned_round_is_read_from_a_middlegame_fen() {
    let pgn_path = middlegame("chesslink", 25);
    let (events, sim, ucis) = play_at("chesslink", &pgn_path, "4", "mid", &["--rotated"]);
    check_events("chesslink", &["--rotated"], events, &sim, &ucis);
}

#[test]
fn orientation_reversed_reads_a_turned_board_from_a_middlegame_fen() {
    let pgn_path = middlegame("reversed", 8);
    let (events, sim, ucis) = play_with(
        "dgt",
        &pgn_path,
        "4",
        "reversed",
        &["--rotated"],
        &["--orientation", "reversed"],
    );
    check_events("dgt", &["--rotated"], events, &sim, &ucis);
}

#[test]
fn orientation_normal_does_not_guess_on_a_turned_board() {
    // Told the board reports squares in the documented order, the host does not turn it round,
    // neither for the game's position nor for a start position: it reads no move.
    let pgn_path = middlegame("normal", 4);
    let (events, sim, _) = play_with(
        "chesslink",
        &pgn_path,
        "4",
        "normal",
        &["--rotated"],
        &["--orientation", "normal"],
    );
    assert!(sim.contains(" 4 moves played"), "{sim}");
    assert!(moves(&events).is_empty(), "{:?}", moves(&events));
}

#[test]
fn a_game_resumed_on_a_turned_board_is_read_on() {
    // The first daemon learns the way round from the start position; it is killed, and the one
    // that takes the game up from the journal sees only a middlegame position, turned round.
    let dir =
        std::env::temp_dir().join(format!("chessboardd-boards-{}-resume", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("game.pgn");
    std::fs::write(
        &source,
        "1. d4 d5 2. Nf3 Nf6 3. e3 Bf5 4. c4 Nc6 5. cxd5 Qxd5 6. Nc3 Qd6 7. Nb5 Qd8 8. Bd2 g6 *\n",
    )
    .unwrap();
    let (_, ucis, _) = game_ucis_at(&source);
    let link = dir.join("board");
    let state = dir.join("state");
    let mut sim = bin()
        .args(["simulate", "--protocol", "dgt", "--rotated", "--link"])
        .arg(&link)
        .arg("--pgn")
        .arg(&source)
        .args(["--speed", "20"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&link);
    let daemon = |out: &str| {
        let log = std::fs::File::create(dir.join(out)).unwrap();
        bin()
            .args(["run", "--board", &format!("dgt:{}", link.display())])
            .args(["--speech", "text", "--events-json", "--state-dir"])
            .arg(&state)
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let read = |out: &str| {
        let text = std::fs::read_to_string(dir.join(out)).unwrap_or_default();
        let events: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        moves(&events)
    };
    let mut d = daemon("first.jsonl");
    let t = Instant::now();
    while read("first.jsonl").len() < 6 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    d.kill().unwrap();
    d.wait().unwrap();
    let first = read("first.jsonl");
    assert!(first.len() >= 6, "the first daemon read {first:?}");
    let mut d = daemon("second.jsonl");
    let t = Instant::now();
    while sim.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(sim.try_wait().unwrap().is_some(), "the game did not end");
    std::thread::sleep(Duration::from_millis(500));
    stop(&mut d);
    d.wait().unwrap();
    let second = read("second.jsonl");
    // The moves read by the first daemon (a kill may leave the last one unrecorded), then the
    // second's: the whole game, in order.
    let all: Vec<String> = first
        .iter()
        .take(ucis.len() - second.len())
        .chain(&second)
        .cloned()
        .collect();
    assert_eq!(all, ucis, "first {first:?}, second {second:?}");
    assert!(second.len() >= 8, "the second daemon read {second:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
