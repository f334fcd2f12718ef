//! The observation log: what the board was seen doing, square by square, since the last point
//! every explanation agrees on. The stories of `stories` are read from it.

use shakmaty::Square;

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
