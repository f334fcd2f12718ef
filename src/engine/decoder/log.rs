//! The observation log: what the board was seen doing, square by square, since the last point
//! every explanation agrees on. The stories of `stories` are read from it.

use shakmaty::{Move, Square};

use crate::engine::event::Millis;

/// What the board did: a square seen changing, or a trace of a change too short to count.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub t: Millis,
    pub square: Square,
    pub what: Trace,
    /// Seen together with other changes (a whole-board report): it happened by `t`, perhaps
    /// well before (a reading lost and reported again with the next whole board).
    pub late: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Trace {
    Lifted,
    Placed,
    /// Changed and came back within the debounce time.
    Glitch,
    /// Read again in the state it stood in (`occupied` or not): it changed and changed back
    /// before, and the board showed neither (a placement whose reading was lost, or came so
    /// late that the lift overtook it; a capture whose lift was lost).
    Echo {
        occupied: bool,
    },
}

/// A board may read a move's placement before its lift by up to a full scan of the board: a
/// DGT board scans square by square, its scan taking up to 250 ms (docs/boards.md). A move's
/// piece seen set down longer than this before it was seen lifted needs the lift's reading late.
pub const SET_DOWN_FIRST_MS: Millis = 300;

/// A piece seen set down at `placed` and lifted from `from` at `lifted` was lifted late: set
/// down longer than a board's scan before, and no flicker on `from` in `log` from `since` to
/// the placement (the contact bounce of a lift begun then, its settled reading late).
pub fn lifted_late(
    log: &[Seen],
    from: Square,
    since: Millis,
    placed: Millis,
    lifted: Millis,
) -> bool {
    placed + SET_DOWN_FIRST_MS < lifted
        && !log
            .iter()
            .any(|s| s.square == from && s.what == Trace::Glitch && since <= s.t && s.t <= placed)
}

/// The squares a move's own piece leaves and is set down on (not castling's two pieces).
pub fn own_squares(m: Move) -> Option<(Square, Square)> {
    match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => Some((from, to)),
        _ => None,
    }
}
