//! One loop drives the engines of a game over timed inputs, in simulated time: `replay`'s
//! scripts, the simulated games of the tests, the benchmarks and the tempo table all go through
//! [`drive`]. (The daemon's loop is the same in real time, with the inputs as they come.)

use shakmaty::{Chess, Move};

use super::faults::Faults;
use super::sensors::{game_inputs, Gestures, SimInput, Tempo};
use crate::engine::table::Table;
use crate::engine::{Engine, Event, EventKind, Millis, Settings};

/// One timed input to the engines of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A new game from this position (the boards show it).
    Setup(Chess),
    /// What board number `.0` (or, for a button, its player) did.
    Input(usize, SimInput),
    /// Time passes this long from the step's time.
    Wait(Millis),
}

/// Drives `table` over `steps`, in their order (times never go back), and lets `tail` ms pass
/// after the last; every event goes to `sink` with its board, as soon as it happens.
pub fn drive(
    table: &mut Table,
    steps: impl IntoIterator<Item = (Millis, Step)>,
    tail: Millis,
    mut sink: impl FnMut(usize, Event),
) {
    let mut out = Vec::new();
    let boards = table.boards();
    let mut end: Millis = 0;
    for (t, step) in steps {
        match step {
            Step::Setup(pos) => table.new_game(t, pos, true, &mut out),
            Step::Input(board, input) => {
                let board = board.min(boards - 1);
                match input {
                    SimInput::Reading(r) => table.reading(board, t, r, &mut out),
                    SimInput::Press(b) => table.press(t, b, &mut out),
                    SimInput::Link(l) => table.link(board, t, l, &mut out),
                }
            }
            Step::Wait(ms) => {
                table.advance(t + ms, &mut out);
                end = end.max(t + ms);
            }
        }
        end = end.max(t);
        for (b, e) in out.drain(..) {
            sink(b, e);
        }
    }
    table.advance(end + tail, &mut out);
    for (b, e) in out.drain(..) {
        sink(b, e);
    }
}

/// Plays simulated inputs through a fresh engine in simulated time, starting a game from
/// `start` at time 0, and lets `tail` milliseconds pass after the last input.
pub fn run(
    settings: Settings,
    start: &Chess,
    inputs: &[(Millis, SimInput)],
    tail: Millis,
) -> (Engine, Vec<Event>) {
    let mut table = Table::new(settings, &[None]);
    let mut events = Vec::new();
    let steps = std::iter::once((0, Step::Setup(start.clone())))
        .chain(inputs.iter().map(|(t, i)| (*t, Step::Input(0, i.clone()))));
    drive(&mut table, steps, tail, |_, e| events.push(e));
    (table.into_leader(), events)
}

/// How well a game played on the simulated board was read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// The moves of the game.
    pub moves: usize,
    /// The moves the record has right, from the first up to the first one it has wrong.
    pub moves_exact: usize,
    /// The record is the game, move for move, and nothing more.
    pub exact: bool,
    /// The record has as many moves as the game (right or not): the reader never lost its
    /// place for good.
    pub to_the_end: bool,
    /// The final record has a wrong move: it is not a beginning of the game (a move differs
    /// from the game's at its ply, or there are moves past the game's end).
    pub wrong_left: bool,
    /// The `correction` events the engine sent while reading it.
    pub corrections: usize,
}

/// Compares a record with the game that was played (no corrections counted).
pub fn compare(played: &[Move], recorded: &[Move]) -> Read {
    let moves_exact = played
        .iter()
        .zip(recorded)
        .take_while(|(a, b)| a == b)
        .count();
    Read {
        moves: played.len(),
        moves_exact,
        exact: played == recorded,
        to_the_end: recorded.len() >= played.len(),
        wrong_left: !played.starts_with(recorded),
        corrections: 0,
    }
}

/// Plays a game on the simulated board with `gestures` and says how well the engine read it.
pub fn read_game(settings: &Settings, start: &Chess, moves: &[Move], gestures: &Gestures) -> Read {
    let inputs = game_inputs(start, moves, gestures, 1000);
    let (engine, events) = run(settings.clone(), start, &inputs, 10_000);
    let recorded: Vec<Move> = engine.game().plies.iter().map(|p| p.m).collect();
    Read {
        corrections: events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Correction { .. }))
            .count(),
        ..compare(moves, &recorded)
    }
}

/// How well the engine reads games at people's tempo, for one fault model and one minimum
/// reply time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TempoRow {
    pub faults: Faults,
    pub min_reply_ms: Millis,
    pub games: usize,
    pub games_exact: usize,
    /// Games recorded to their end, every move right or not (none stalled).
    pub games_to_the_end: usize,
    /// Games whose final record has a wrong move ([`Read::wrong_left`]).
    pub games_wrong_left: usize,
    /// `correction` events over all the games.
    pub corrections: usize,
    pub moves: usize,
    pub moves_exact: usize,
}

/// The gestures of game number `i` at people's tempo: every physical order, bounce and sensor
/// quirk, the opponent answering from `min_reply_ms` on, and the `faults` asked for.
pub fn people(i: usize, min_reply_ms: Millis, faults: Faults) -> Gestures {
    Gestures {
        seed: i as u64,
        vary_order: true,
        bounce: true,
        quirks: true,
        tempo: Some(Tempo::people(min_reply_ms)),
        faults,
    }
}

/// Plays every game at people's tempo with each minimum reply time and the fault models
/// `faults`, and counts what the engine read (the README's table).
pub fn tempo_table(
    settings: &Settings,
    games: &[(Chess, Vec<Move>)],
    min_replies: &[Millis],
    faults: Faults,
) -> Vec<TempoRow> {
    min_replies
        .iter()
        .map(|&min| {
            let mut row = TempoRow {
                faults,
                min_reply_ms: min,
                ..TempoRow::default()
            };
            for (i, (start, moves)) in games.iter().enumerate() {
                let read = read_game(settings, start, moves, &people(i, min, faults));
                row.games += 1;
                row.games_exact += usize::from(read.exact);
                row.games_to_the_end += usize::from(read.to_the_end);
                row.games_wrong_left += usize::from(read.wrong_left);
                row.corrections += read.corrections;
                row.moves += read.moves;
                row.moves_exact += read.moves_exact;
            }
            row
        })
        .collect()
}
