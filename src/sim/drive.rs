//! One loop drives the engines of a game over timed inputs, in simulated time: `replay`'s
//! scripts, the simulated games of the tests, the benchmarks and the tempo table all go through
//! [`drive`]. (The daemon's loop is the same in real time, with the inputs as they come.)

use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

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
    /// The moves the record has right, from the first up to the first one it has wrong (a move
    /// in an order the board could not tell, marked, is not wrong: see `moves_unsure`).
    pub moves_exact: usize,
    /// The moves recorded in another order or by another route than they were played, where
    /// the record marks them as read from the board in an order it could not tell (after a
    /// gap or lost readings), and the game stands as it did at both ends of the marked moves.
    pub moves_unsure: usize,
    /// The record is the game, move for move, and nothing more.
    pub exact: bool,
    /// The record has as many moves as the game (right or not): the reader never lost its
    /// place for good.
    pub to_the_end: bool,
    /// The final record has a wrong move: it is not a beginning of the game (a move differs
    /// from the game's at its ply, or there are moves past the game's end), other than moves in
    /// an order the board could not tell, marked (`moves_unsure`).
    pub wrong_left: bool,
    /// The `correction` events the engine sent while reading it.
    pub corrections: usize,
}

/// Compares a record with the game that was played from `start` (no corrections counted).
/// `marked` says of each recorded move whether the record marks it as read in an order the
/// board could not tell (empty: none is).
pub fn compare(start: &Chess, played: &[Move], recorded: &[Move], marked: &[bool]) -> Read {
    let marked = |k: usize| marked.get(k).copied().unwrap_or(false);
    let (mut at_played, mut at_recorded) = (start.clone(), start.clone());
    let (mut k, mut moves_exact, mut moves_unsure) = (0, 0, 0);
    let mut wrong = recorded.len() > played.len();
    while k < recorded.len().min(played.len()) {
        if played[k] == recorded[k] {
            at_played.play_unchecked(played[k]);
            at_recorded.play_unchecked(recorded[k]);
            moves_exact += 1;
            k += 1;
            continue;
        }
        // The run of marked moves from here: the game must stand the same at its end.
        let end = (k..recorded.len())
            .find(|&j| !marked(j))
            .unwrap_or(recorded.len());
        if end == k || end > played.len() {
            wrong = true;
            break;
        }
        for j in k..end {
            at_played.play_unchecked(played[j]);
            at_recorded.play_unchecked(recorded[j]);
        }
        if !same_position(&at_played, &at_recorded) {
            wrong = true;
            break;
        }
        let right = (k..end).filter(|&j| played[j] == recorded[j]).count();
        moves_exact += right;
        moves_unsure += end - k - right;
        k = end;
    }
    Read {
        moves: played.len(),
        moves_exact,
        moves_unsure,
        exact: played == recorded,
        to_the_end: recorded.len() >= played.len(),
        wrong_left: wrong,
        corrections: 0,
    }
}

/// The same position as far as the moves from it go (the move counters aside).
fn same_position(a: &Chess, b: &Chess) -> bool {
    a.board() == b.board()
        && a.turn() == b.turn()
        && a.castles().castling_rights() == b.castles().castling_rights()
        && a.ep_square(EnPassantMode::Legal) == b.ep_square(EnPassantMode::Legal)
}

/// Plays a game on the simulated board with `gestures` and says how well the engine read it.
pub fn read_game(settings: &Settings, start: &Chess, moves: &[Move], gestures: &Gestures) -> Read {
    read_game_record(settings, start, moves, gestures).0
}

/// [`read_game`], with the record the engine kept: its moves, and which of them it marks.
fn read_game_record(
    settings: &Settings,
    start: &Chess,
    moves: &[Move],
    gestures: &Gestures,
) -> (Read, Vec<Move>, Vec<bool>) {
    let inputs = game_inputs(start, moves, gestures, 1000);
    let (engine, events) = run(settings.clone(), start, &inputs, 10_000);
    let plies = &engine.game().plies;
    let recorded: Vec<Move> = plies.iter().map(|p| p.m).collect();
    let marked: Vec<bool> = plies.iter().map(|p| p.uncertain).collect();
    let read = Read {
        corrections: events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Correction { .. }))
            .count(),
        ..compare(start, moves, &recorded, &marked)
    };
    (read, recorded, marked)
}

/// A game of [`tempo_table`] not read exactly: where its record first parts from the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misread {
    /// The game's number in the list (from 0).
    pub game: usize,
    pub read: Read,
    /// The first ply (from 1) at which the record is not the game.
    pub ply: usize,
    /// The game's moves from that ply on, at most five (UCI).
    pub played: Vec<String>,
    /// The record's moves from that ply on, at most five (UCI; a marked one ends in `?`).
    pub recorded: Vec<String>,
}

impl Misread {
    fn of(game: usize, read: Read, played: &[Move], recorded: &[Move], marked: &[bool]) -> Self {
        let k = played
            .iter()
            .zip(recorded)
            .take_while(|(a, b)| a == b)
            .count();
        let uci = |m: &Move| m.to_uci(CastlingMode::Standard).to_string();
        Misread {
            game,
            read,
            ply: k + 1,
            played: played.iter().skip(k).take(5).map(uci).collect(),
            recorded: recorded
                .iter()
                .enumerate()
                .skip(k)
                .take(5)
                .map(|(i, m)| {
                    let q = if marked.get(i).copied().unwrap_or(false) {
                        "?"
                    } else {
                        ""
                    };
                    format!("{}{q}", uci(m))
                })
                .collect(),
        }
    }
}

/// How well the engine reads games at people's tempo, for one fault model and one minimum
/// reply time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TempoRow {
    pub faults: Faults,
    pub min_reply_ms: Millis,
    pub games: usize,
    pub games_exact: usize,
    /// Games recorded to their end, every move right or not (none stalled).
    pub games_to_the_end: usize,
    /// Games whose final record has a wrong move ([`Read::wrong_left`]).
    pub games_wrong_left: usize,
    /// Games with moves recorded in an order (or by a route) the board could not tell, marked
    /// ([`Read::moves_unsure`]).
    pub games_unsure: usize,
    /// `correction` events over all the games.
    pub corrections: usize,
    pub moves: usize,
    pub moves_exact: usize,
    pub moves_unsure: usize,
    /// The games not read exactly, in the list's order.
    pub misread: Vec<Misread>,
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
                let (read, recorded, marked) =
                    read_game_record(settings, start, moves, &people(i, min, faults));
                if !read.exact {
                    row.misread
                        .push(Misread::of(i, read, moves, &recorded, &marked));
                }
                row.games += 1;
                row.games_exact += usize::from(read.exact);
                row.games_to_the_end += usize::from(read.to_the_end);
                row.games_wrong_left += usize::from(read.wrong_left);
                row.games_unsure += usize::from(read.moves_unsure > 0);
                row.moves_unsure += read.moves_unsure;
                row.corrections += read.corrections;
                row.moves += read.moves;
                row.moves_exact += read.moves_exact;
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn moves(sans: &str) -> Vec<Move> {
        let mut pos = Chess::default();
        sans.split_whitespace()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn a_game_misread_is_told_from_the_first_move_its_record_parts_from() {
        let start = Chess::default();
        let played = moves("e4 e5 Nf3 Nc6 Bc4 Bc5 c3");
        let recorded = moves("e4 e5 Bc4 Nc6 Nf3 Bc5");
        let marked = [false, false, true, true, true, false];
        let read = compare(&start, &played, &recorded, &marked);
        let m = Misread::of(7, read, &played, &recorded, &marked);
        assert_eq!((m.game, m.ply), (7, 3));
        assert_eq!(m.played, ["g1f3", "b8c6", "f1c4", "f8c5", "c2c3"]);
        assert_eq!(m.recorded, ["f1c4?", "b8c6?", "g1f3?", "f8c5"]);
        // A record that stops early parts from the game where it stops.
        let m = Misread::of(0, read, &played, &played[..2], &[]);
        assert_eq!(m.ply, 3);
        assert!(m.recorded.is_empty());
    }

    #[test]
    fn moves_in_an_order_the_board_cannot_tell_are_not_wrong_only_when_marked() {
        let start = Chess::default();
        let played = moves("e4 e5 Nf3 Nc6 Bc4 Bc5 c3");
        // White's 2nd and 3rd moves swapped: the same position after 3...Bc5.
        let swapped = moves("e4 e5 Bc4 Nc6 Nf3 Bc5 c3");
        let marked = [false, false, true, true, true, true, false];
        let read = compare(&start, &played, &swapped, &marked);
        assert!(!read.wrong_left && !read.exact && read.to_the_end);
        assert_eq!((read.moves_exact, read.moves_unsure), (5, 2));
        // Not marked: wrong from the first move that differs.
        let read = compare(&start, &played, &swapped, &[]);
        assert!(read.wrong_left);
        assert_eq!((read.moves_exact, read.moves_unsure), (2, 0));
        // Marked, but the run ends elsewhere (another move, not another order): wrong.
        let other = moves("e4 e5 Bc4 Nc6 Nf3 Nf6 c3");
        let read = compare(&start, &played, &other, &marked);
        assert!(read.wrong_left);
        assert_eq!((read.moves_exact, read.moves_unsure), (2, 0));
        // The game itself: exact.
        let read = compare(&start, &played, &played, &[]);
        assert!(read.exact && !read.wrong_left);
        assert_eq!((read.moves_exact, read.moves_unsure), (7, 0));
        // A record that stops early is not wrong, nor to the end; one beyond the game is.
        let read = compare(&start, &played, &played[..4], &[]);
        assert!(!read.wrong_left && !read.to_the_end);
        let mut longer = played.clone();
        longer.extend(moves("e4 e5 Nf3 Nc6 Bc4 Bc5 c3 Nf6").last());
        assert!(compare(&start, &played, &longer, &[]).wrong_left);
    }
}
