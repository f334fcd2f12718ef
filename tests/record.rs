//! The game record against the cases a review found: a game taken back after its end goes on
//! being recorded, and a game taken up again warns of low time it had not yet reached.

use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::rules::Mode;
use chessboardd::engine::Resumed;
use chessboardd::engine::{Button, Engine, Event, EventKind, Reading, Settings};
use chessboardd::record::Journal;
use shakmaty::{ByColor, Chess, Square};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-rec-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
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
    let mut j = Journal::open(&dir).unwrap().journal;
    let mut e = Engine::new(Settings {
        mode: Mode::Casual,
        ..Settings::default()
    });
    let mut out = Vec::new();
    e.new_game(0, Chess::default(), true, &mut out);
    j.sync(&e, &out).unwrap();
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
        illegal: ByColor { white: 0, black: 0 },
        // Black had 100 s left when the power went.
        clocks: Some((250_000, 100_000)),
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
