//! The game record against the cases a review found: a game taken back after its end goes on
//! being recorded, and a game taken up again warns of low time it had not yet reached.

#[path = "support/clk.rs"]
#[allow(dead_code)]
mod clk;
use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::rules::Mode;
use chessboardd::engine::Resumed;
use chessboardd::engine::{Button, Engine, Event, EventKind, Reading, Settings};
use chessboardd::record::Journal;
use clk::clk_seconds;
use shakmaty::{ByColor, Chess, Square};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-rec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A casual game with `settings` begun on the engine and in a journal at `dir`.
fn begin(dir: &std::path::Path, settings: Settings) -> (Journal, Engine) {
    let mut j = Journal::open(dir).unwrap().journal;
    let mut e = Engine::new(Settings {
        mode: Mode::Casual,
        ..settings
    });
    let mut out = Vec::new();
    e.new_game(0, Chess::default(), true, &mut out);
    j.sync(&e, &out).unwrap();
    (j, e)
}

/// Moves pieces on the engine's board, recording after each step as the daemon does.
fn step(e: &mut Engine, j: &mut Journal, t: &mut u64, changes: &[(Square, bool)]) {
    for &(sq, placed) in changes {
        *t += 250;
        let mut out: Vec<Event> = Vec::new();
        let state = if placed { OCCUPIED } else { EMPTY };
        e.reading(*t, Reading::Square(sq, state), &mut out);
        e.advance(*t + 100, &mut out);
        j.sync(e, &out).unwrap();
    }
}

#[test]
fn a_game_taken_back_after_its_end_is_recorded_as_it_goes_on() {
    use Square::*;
    let dir = scratch("reopen");
    let (mut j, mut e) = begin(&dir, Settings::default());
    let mut t = 0;
    // Fool's mate.
    step(
        &mut e,
        &mut j,
        &mut t,
        &[(F2, false), (F3, true), (E7, false), (E5, true)],
    );
    step(
        &mut e,
        &mut j,
        &mut t,
        &[(G2, false), (G4, true), (D8, false), (H4, true)],
    );
    assert!(e.is_over());
    // Taken back (casual play), the queen put back, and another move instead.
    t += 250;
    let mut out = Vec::new();
    e.press(t, Button::Takeback, &mut out);
    j.sync(&e, &out).unwrap();
    assert!(!e.is_over());
    step(&mut e, &mut j, &mut t, &[(H4, false), (D8, true)]);
    step(&mut e, &mut j, &mut t, &[(B8, false), (C6, true)]);
    assert_eq!(e.game().plies.len(), 4);
    // After a crash the game as it went on is taken up again, not the mated one.
    drop(j);
    let opened = Journal::open(&dir).unwrap();
    let (recorded, _) = opened.resume.expect("the game goes on");
    let ucis: Vec<&str> = recorded.moves.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(ucis, ["f2f3", "e7e5", "g2g4", "b8c6"]);
    assert!(recorded.ended.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_resumed_game_still_warns_of_low_time() {
    let settings = Settings {
        time_control: Some("300".parse().unwrap()),
        time_warnings_ms: Some(vec![300_000, 60_000, 10_000]),
        ..Settings::default()
    };
    let mut e = Engine::new(settings);
    let mut out = Vec::new();
    let start = Chess::default();
    let e2e4 = shakmaty::uci::UciMove::from_ascii(b"e2e4")
        .unwrap()
        .to_move(&start)
        .unwrap();
    let game = Resumed {
        start,
        moves: vec![(e2e4, Some((250_000, 300_000)))],
        recovered: Vec::new(),
        illegal: ByColor { white: 0, black: 0 },
        // Black had 100 s left when the power went.
        clocks: Some((250_000, 100_000)),
        notes: Vec::new(),
        adjourned: None,
    };
    e.resume(1000, &game, &mut out);
    e.advance(1000 + 45_000, &mut out);
    let warnings: Vec<i64> = out
        .iter()
        .filter_map(|ev| match &ev.kind {
            EventKind::TimeWarning { remaining_ms, .. } => Some(*remaining_ms),
            _ => None,
        })
        .collect();
    assert_eq!(warnings, [60_000], "the one-minute warning comes");
}

/// The tag lines of a PGN (without `Time`, which only the record carries as it began).
fn tag_lines(pgn: &str) -> Vec<String> {
    pgn.lines()
        .take_while(|l| l.starts_with('['))
        .map(str::to_string)
        .collect()
}

/// Moves pieces with `wait` ms of thought before each move, recording as the daemon does;
/// returns the mover's clock after each move, from the `clock` events.
fn timed_moves(
    e: &mut Engine,
    j: &mut Journal,
    t: &mut u64,
    moves: &[(Square, Square, u64)],
) -> Vec<i64> {
    let mut times = Vec::new();
    for &(from, to, wait) in moves {
        *t += wait;
        let mover = shakmaty::Position::turn(&e.game().pos);
        let mut all: Vec<Event> = Vec::new();
        for (sq, placed) in [(from, false), (to, true)] {
            *t += 250;
            let mut out: Vec<Event> = Vec::new();
            let state = if placed { OCCUPIED } else { EMPTY };
            e.reading(*t, Reading::Square(sq, state), &mut out);
            e.advance(*t + 100, &mut out);
            j.sync(e, &out).unwrap();
            all.extend(out);
        }
        let clock = all
            .iter()
            .find_map(|ev| match &ev.kind {
                EventKind::Clock {
                    white_ms, black_ms, ..
                } => Some(if mover == shakmaty::Color::White {
                    *white_ms
                } else {
                    *black_ms
                }),
                _ => None,
            })
            .expect("a clock event after the move");
        times.push(clock / 1000);
    }
    times
}

#[test]
fn every_pgn_carries_the_clock_times_and_the_same_tags() {
    use Square::*;
    let dir = scratch("clk");
    let (mut j, mut e) = begin(
        &dir,
        Settings {
            time_control: Some("300+2".parse().unwrap()),
            pgn_tags: vec![
                ("Event".into(), "Club night".into()),
                ("White".into(), "Ann".into()),
                ("Black".into(), "Bob".into()),
            ],
            ..Settings::default()
        },
    );
    let mut t = 0;
    let mut times = timed_moves(
        &mut e,
        &mut j,
        &mut t,
        &[(F2, F3, 3_000), (E7, E5, 9_500), (G2, G4, 61_000)],
    );
    // Thought for different times, the clocks differ: the comparison below could fail.
    assert!(times.windows(2).any(|w| w[0] != w[1]), "{times:?}");

    // The journal's unfinished game (what `games --pgn N` prints, what is kept at a new game
    // or printed at SIGTERM) and the engine's PGN (the live one, MQTT, the broadcast).
    let kept = chessboardd::record::games(&dir).unwrap();
    let unfinished = kept
        .iter()
        .find(|k| k.unfinished)
        .expect("the game in the journal");
    let (date, time) = unfinished.started.split_once(' ').unwrap();
    let live = e.pgn_with(&[("Date", date.to_string()), ("Time", time.to_string())]);
    assert_eq!(clk_seconds(&live), times, "{live}");
    assert_eq!(clk_seconds(&unfinished.pgn), times, "{}", unfinished.pgn);
    assert_eq!(tag_lines(&live), tag_lines(&unfinished.pgn));
    assert_ne!(date, "????.??.??");

    // The mate: the finished game's file has them too.
    times.extend(timed_moves(&mut e, &mut j, &mut t, &[(D8, H4, 4_000)]));
    assert!(e.is_over());
    let kept = chessboardd::record::games(&dir).unwrap();
    let finished = kept
        .iter()
        .find(|k| !k.unfinished)
        .expect("the finished game");
    let live = e.pgn_with(&[("Date", date.to_string()), ("Time", time.to_string())]);
    assert_eq!(clk_seconds(&finished.pgn), times, "{}", finished.pgn);
    assert_eq!(clk_seconds(&live), times);
    assert_eq!(tag_lines(&live), tag_lines(&finished.pgn));
    let names: Vec<String> = tag_lines(&finished.pgn)
        .iter()
        .map(|l| l[1..l.find(' ').unwrap()].to_string())
        .collect();
    assert_eq!(
        names[..9],
        [
            "Event",
            "Site",
            "Date",
            "Round",
            "White",
            "Black",
            "Result",
            "TimeControl",
            "Termination"
        ]
    );
    assert!(finished.pgn.contains("[White \"Ann\"]"), "{}", finished.pgn);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_game_without_a_clock_has_no_clk_comment() {
    use Square::*;
    let dir = scratch("noclk");
    let (mut j, mut e) = begin(&dir, Settings::default());
    let mut t = 0;
    step(&mut e, &mut j, &mut t, &[(E2, false), (E4, true)]);
    assert_eq!(e.game().plies.len(), 1);
    assert!(!e.pgn().contains("%clk"), "{}", e.pgn());
    let kept = chessboardd::record::games(&dir).unwrap();
    assert!(!kept[0].pgn.contains("%clk"), "{}", kept[0].pgn);
    let _ = std::fs::remove_dir_all(&dir);
}
