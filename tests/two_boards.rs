//! Two boards in the live daemon (Appendix F1): two drivers feed one game; the player to move
//! moves on his board, the other executes it on his.

use chessboardd::daemon::{self, Source};
use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::{EventKind, LinkState, Reading, Settings};
use chessboardd::sim::SimInput;
use shakmaty::{Color, Square};

fn lift(t: u64, sq: Square) -> (u64, SimInput) {
    (t, SimInput::Reading(Reading::Square(sq, EMPTY)))
}

fn place(t: u64, sq: Square) -> (u64, SimInput) {
    (t, SimInput::Reading(Reading::Square(sq, OCCUPIED)))
}

#[test]
fn two_drivers_one_game() {
    use Square::*;
    // White's pegged board: 1.e4, then black's e5 executed, then 2.Nf3.
    let peg = vec![
        lift(300, E2),
        place(500, E4),
        lift(1600, E7),
        place(1800, E5),
        lift(2200, G1),
        place(2400, F3),
    ];
    // Black's board: white's e4 executed (first wrongly to e3, then put right), then 1...e5.
    let std = vec![
        lift(700, E2),
        place(800, E3),
        lift(900, E3),
        place(1000, E4),
        lift(1200, E7),
        place(1400, E5),
    ];
    let seen = play(peg, std);
    assert_eq!(
        seen,
        [
            "0 touched e2",
            "0 move e4",
            "1 replicated e2e4",
            "1 touched e7",
            "1 move e5",
            "0 replicated e7e5",
            "0 touched g1",
            "0 move Nf3",
        ]
    );
}

/// Runs a game on two simulated boards (white's, black's) and returns what happened on which.
fn play(peg: Vec<(u64, SimInput)>, std: Vec<(u64, SimInput)>) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut seen = Vec::new();
    rt.block_on(daemon::run_boards(
        Settings::default(),
        vec![
            (Source::Simulated(peg, Box::default()), Some(Color::White)),
            (Source::Simulated(std, Box::default()), Some(Color::Black)),
        ],
        daemon::RunOptions {
            until_board_done: true,
            speed: 4.0,
            ..Default::default()
        },
        |b, e| match &e.kind {
            EventKind::Move { san, .. } => seen.push(format!("{b} move {san}")),
            EventKind::Replicated { uci } => seen.push(format!("{b} replicated {uci}")),
            EventKind::Link { state } => seen.push(format!("{b} link {state}")),
            EventKind::Touched { square, .. } => seen.push(format!("{b} touched {square}")),
            EventKind::Mismatch { .. } => seen.push(format!("{b} mismatch")),
            _ => {}
        },
        std::future::pending(),
    ));
    seen
}

fn without_touches(seen: Vec<String>) -> Vec<String> {
    seen.into_iter()
        .filter(|s| !s.contains("touched"))
        .collect()
}

/// The start position's occupancy with e2 moved to e4.
const AFTER_E4: u64 = 0xFFFF_0000_1000_EFFF;

#[test]
fn a_board_whose_link_is_lost_and_back_catches_up() {
    use Square::*;
    // Black's board is switched off while white plays e4; black executes it meanwhile, and his
    // board, back, reports the whole position: the move is found executed.
    let peg = vec![lift(300, E2), place(500, E4)];
    let std = vec![
        (200, SimInput::Link(LinkState::Lost)),
        (1000, SimInput::Link(LinkState::Reconnected)),
        (1050, SimInput::Reading(Reading::occupancy(AFTER_E4))),
        lift(1400, E7),
        place(1600, E5),
    ];
    assert_eq!(
        without_touches(play(peg, std)),
        [
            "1 link lost",
            "0 move e4",
            "1 link reconnected",
            "1 replicated e2e4",
            "1 move e5",
        ]
    );
}

#[test]
fn a_board_back_without_the_move_is_told_to_execute_it() {
    use Square::*;
    // Back with the old position, and the player starts his own move: he is told.
    let peg = vec![lift(300, E2), place(500, E4)];
    let std = vec![
        (200, SimInput::Link(LinkState::Lost)),
        (1000, SimInput::Link(LinkState::Reconnected)),
        (
            1050,
            SimInput::Reading(Reading::occupancy(0xFFFF_0000_0000_FFFF)),
        ),
        lift(1400, E7),
        place(1600, E5),
        lift(5000, E5),
        place(5200, E7),
        lift(5400, E2),
        place(5600, E4),
    ];
    assert_eq!(
        without_touches(play(peg, std)),
        [
            "1 link lost",
            "0 move e4",
            "1 link reconnected",
            "1 mismatch",
            "1 replicated e2e4",
        ]
    );
}

#[test]
fn a_capture_executed_while_the_link_was_lost_counts() {
    use Square::*;
    let peg = vec![
        lift(300, E2),
        place(500, E4),
        lift(1600, D7),
        place(1800, D5),
        lift(2000, D5),
        lift(2100, E4),
        place(2300, D5),
    ];
    // Black's board sees only occupancy: back after exd5 was executed on it, its first report
    // shows the position after the capture, which a capturing pawn still in the hand would
    // show as well. Back from a lost link, it is the move done.
    let after_exd5 = (0xFFFF_0000_0000_FFFFu64 & !(1 << 12) & !(1 << 51)) | (1 << 35);
    let std = vec![
        lift(700, E2),
        place(900, E4),
        lift(1100, D7),
        place(1300, D5),
        (1900, SimInput::Link(LinkState::Lost)),
        (2600, SimInput::Link(LinkState::Reconnected)),
        (2650, SimInput::Reading(Reading::occupancy(after_exd5))),
    ];
    assert_eq!(
        without_touches(play(peg, std)),
        [
            "0 move e4",
            "1 replicated e2e4",
            "1 move d5",
            "0 replicated d7d5",
            "1 link lost",
            "0 move exd5",
            "1 link reconnected",
            "1 replicated e4d5",
        ]
    );
}
