//! Per-square debouncing of raw sensor readings.
//!
//! A reed switch bounces for about a millisecond and a sliding piece brushes squares it passes;
//! a square's new state counts only once it has held, unchanged, for the debounce time. The
//! state of a square is a small code (see [`SquareState`]) so that boards which identify pieces
//! are debounced the same way as occupancy-only boards.

use shakmaty::{Bitboard, Square};

use crate::engine::event::Millis;
pub use crate::engine::input::{SquareState, EMPTY, OCCUPIED};

/// A debounced change of one square.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub t: Millis,
    pub square: Square,
    pub state: SquareState,
    /// Read in a whole-board report: the change happened by `t - debounce`, perhaps before
    /// (a board that reports its whole board now and then shows a lost reading late).
    pub whole: bool,
}

/// A reading may come this late: a square read again as it stood this soon after a whole-board
/// report showed its change is that change's own reading.
pub const ECHO_LATE_MS: Millis = 3000;

#[derive(Clone, Debug)]
pub struct Debouncer {
    debounce: Millis,
    stable: [SquareState; 64],
    raw: [SquareState; 64],
    /// When the raw state of each pending square last changed.
    since: [Millis; 64],
    /// Squares whose raw state differs from the stable state.
    pending: Bitboard,
    /// Squares whose pending state came in a whole-board report.
    whole: Bitboard,
    /// Squares whose raw state changed and came back before the debounce time, and when:
    /// never a change, but a trace (a captured piece swept off as the capturing piece is set
    /// down leaves nothing else).
    glitches: Vec<(Millis, Square)>,
    /// Squares whose settled state came in a whole-board report, and when (a reading of the
    /// same state soon after it is the late reading the report already showed).
    settled_whole: Bitboard,
    settled_at: [Millis; 64],
    /// Squares whose raw state a whole-board report changed last, and when (a reading of the
    /// same state soon after it is the reading the report showed, even when the report only
    /// took back a change still settling).
    framed: Bitboard,
    framed_at: [Millis; 64],
    /// Single-square readings of the state the square already stood in, and when: the square
    /// changed and changed back unseen before (a placement lost, or overtaken by its lift).
    echoes: Vec<(Millis, Square, SquareState)>,
}

impl Debouncer {
    pub fn new(debounce: Millis) -> Debouncer {
        Debouncer {
            debounce,
            stable: [EMPTY; 64],
            raw: [EMPTY; 64],
            since: [0; 64],
            pending: Bitboard::EMPTY,
            whole: Bitboard::EMPTY,
            glitches: Vec::new(),
            settled_whole: Bitboard::EMPTY,
            settled_at: [0; 64],
            framed: Bitboard::EMPTY,
            framed_at: [0; 64],
            echoes: Vec::new(),
        }
    }

    /// Takes the given states as the settled truth, dropping anything pending.
    pub fn reset(&mut self, states: &[SquareState; 64]) {
        self.stable = *states;
        self.raw = *states;
        self.pending = Bitboard::EMPTY;
        self.whole = Bitboard::EMPTY;
        self.glitches.clear();
        self.settled_whole = Bitboard::EMPTY;
        self.framed = Bitboard::EMPTY;
        self.echoes.clear();
    }

    /// Gives every square the state `name` makes of it (a board found to name its pieces:
    /// what was taken as "occupied" becomes the piece there), in the settled and the raw
    /// state alike; a square whose raw state now is its settled state is no longer pending.
    pub fn rename(&mut self, name: impl Fn(Square, SquareState) -> SquareState) {
        for sq in Square::ALL {
            let i = sq as usize;
            self.stable[i] = name(sq, self.stable[i]);
            self.raw[i] = name(sq, self.raw[i]);
            if self.raw[i] == self.stable[i] {
                self.pending.discard(sq);
                self.whole.discard(sq);
            }
        }
    }

    /// The last raw reading of a square (before debouncing).
    pub fn raw(&self, sq: Square) -> SquareState {
        self.raw[sq as usize]
    }

    /// Records a raw reading. Nothing is reported until [`Debouncer::pop_due`] is asked.
    pub fn reading(&mut self, t: Millis, sq: Square, state: SquareState) {
        let i = sq as usize;
        if self.raw[i] == state {
            // Read again as it stood: unless the change is still settling, or a whole-board
            // report showed it a moment before (this is its reading, late), the square changed
            // and changed back without a reading.
            let reported = (self.settled_whole.contains(sq)
                && t.saturating_sub(self.settled_at[i]) <= ECHO_LATE_MS)
                || (self.framed.contains(sq)
                    && t.saturating_sub(self.framed_at[i]) <= ECHO_LATE_MS);
            if !self.pending.contains(sq) && !reported && self.echoes.len() < 4096 {
                self.echoes.push((t, sq, state));
            }
            return;
        }
        self.raw[i] = state;
        self.whole.discard(sq);
        self.framed.discard(sq);
        if state == self.stable[i] {
            if self.pending.contains(sq) {
                self.pending.discard(sq);
                // Bounded: a square that chatters without end is recorded once a millisecond.
                if self.glitches.last() != Some(&(t, sq)) && self.glitches.len() < 4096 {
                    self.glitches.push((t, sq));
                }
            }
        } else {
            self.pending.add(sq);
            self.since[i] = t;
        }
    }

    /// Records a square's state read in a whole-board report.
    pub fn frame_reading(&mut self, t: Millis, sq: Square, state: SquareState) {
        // (A report that shows a square as it stood is no echo: reports show every square.)
        if self.raw[sq as usize] != state {
            self.reading(t, sq, state);
            if self.pending.contains(sq) {
                self.whole.add(sq);
            }
            self.framed.add(sq);
            self.framed_at[sq as usize] = t;
        }
    }

    /// The earliest time a pending change becomes stable.
    pub fn next_due(&self) -> Option<Millis> {
        self.pending
            .into_iter()
            .map(|sq| self.since[sq as usize].saturating_add(self.debounce))
            .min()
    }

    /// Removes and returns every change that becomes stable at the earliest due time, if that
    /// is at `now` or before: changes read at the same moment (a whole-board frame) come out
    /// together, in square order, for they happened at once.
    pub fn pop_due_batch(&mut self, now: Millis) -> Vec<Change> {
        let mut batch = Vec::new();
        self.pop_due_into(now, &mut batch);
        batch
    }

    /// [`Debouncer::pop_due_batch`] into `batch` (cleared first).
    pub fn pop_due_into(&mut self, now: Millis, batch: &mut Vec<Change>) {
        batch.clear();
        let Some(due) = self.next_due().filter(|d| *d <= now) else {
            return;
        };
        for sq in self.pending {
            let i = sq as usize;
            if self.since[i].saturating_add(self.debounce) != due {
                continue;
            }
            self.settle(sq);
            batch.push(Change {
                t: due,
                square: sq,
                state: self.raw[i],
                whole: self.whole.contains(sq),
            });
        }
    }

    /// `sq`'s pending state is its settled state now.
    fn settle(&mut self, sq: Square) {
        let i = sq as usize;
        self.pending.discard(sq);
        self.stable[i] = self.raw[i];
        self.settled_whole.set(sq, self.whole.contains(sq));
        self.settled_at[i] = self.since[i];
    }

    /// The glitches recorded since the last call, oldest first (taken out as they are read;
    /// the list keeps its room).
    pub fn drain_glitches(&mut self) -> std::vec::Drain<'_, (Millis, Square)> {
        self.glitches.drain(..)
    }

    /// The echoes recorded since the last call (the square, and the state it was read in
    /// again), oldest first.
    pub fn drain_echoes(&mut self) -> std::vec::Drain<'_, (Millis, Square, SquareState)> {
        self.echoes.drain(..)
    }

    /// Removes and returns the earliest change that is stable at time `now`, if any.
    pub fn pop_due(&mut self, now: Millis) -> Option<Change> {
        let sq = self
            .pending
            .into_iter()
            .filter(|&sq| self.since[sq as usize].saturating_add(self.debounce) <= now)
            .min_by_key(|&sq| (self.since[sq as usize], sq as usize))?;
        let i = sq as usize;
        self.settle(sq);
        Some(Change {
            t: self.since[i].saturating_add(self.debounce),
            square: sq,
            state: self.raw[i],
            whole: self.whole.contains(sq),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_the_pieces_is_no_change_but_a_move_still_is() {
        let mut d = Debouncer::new(30);
        d.reset(&[OCCUPIED; 64]);
        // A reading that names the piece on e2 (8) and one that empties d2, not yet settled.
        d.reading(100, Square::E2, 8);
        d.reading(100, Square::D2, EMPTY);
        d.rename(|sq, s| {
            if s == OCCUPIED && sq == Square::E2 {
                8
            } else {
                s
            }
        });
        assert_eq!(d.raw(Square::E2), 8);
        let changes: Vec<Square> = std::iter::from_fn(|| d.pop_due(1000))
            .map(|c| c.square)
            .collect();
        assert_eq!(changes, [Square::D2]);
    }

    #[test]
    fn bounce_shorter_than_debounce_is_never_seen() {
        let mut d = Debouncer::new(30);
        d.reset(&[OCCUPIED; 64]);
        d.reading(100, Square::E2, EMPTY);
        d.reading(102, Square::E2, OCCUPIED);
        assert_eq!(d.next_due(), None);
        assert_eq!(d.pop_due(1000), None);
    }

    #[test]
    fn stable_change_is_reported_at_debounce_time() {
        let mut d = Debouncer::new(30);
        d.reset(&[OCCUPIED; 64]);
        d.reading(100, Square::E2, EMPTY);
        d.reading(110, Square::E2, OCCUPIED);
        d.reading(120, Square::E2, EMPTY);
        assert_eq!(d.next_due(), Some(150));
        assert_eq!(d.pop_due(149), None);
        assert_eq!(
            d.pop_due(150),
            Some(Change {
                t: 150,
                square: Square::E2,
                state: EMPTY,
                whole: false,
            })
        );
        assert_eq!(d.pop_due(10_000), None);
    }

    #[test]
    fn a_frame_comes_out_as_one_batch_and_a_bounce_leaves_a_glitch() {
        let mut d = Debouncer::new(30);
        d.reset(&[OCCUPIED; 64]);
        d.frame_reading(100, Square::E1, EMPTY);
        d.frame_reading(100, Square::A1, EMPTY);
        d.reading(101, Square::H1, EMPTY);
        d.reading(105, Square::H2, EMPTY);
        d.reading(110, Square::H2, OCCUPIED);
        assert_eq!(d.pop_due_batch(129), vec![]);
        let batch = d.pop_due_batch(1000);
        let squares: Vec<Square> = batch.iter().map(|c| c.square).collect();
        assert_eq!(squares, vec![Square::A1, Square::E1]);
        assert!(batch.iter().all(|c| c.whole));
        assert_eq!(
            d.pop_due_batch(1000),
            vec![Change {
                t: 131,
                square: Square::H1,
                state: EMPTY,
                whole: false
            }]
        );
        assert_eq!(d.pop_due_batch(1000), vec![]);
        assert_eq!(
            d.drain_glitches().collect::<Vec<_>>(),
            vec![(110, Square::H2)]
        );
        assert_eq!(d.drain_glitches().collect::<Vec<_>>(), vec![]);
    }

    /// A flicker whose return a whole-board report shows first: the flicker's own reading of
    /// the return, just after, is no echo (property 2 found a flicker that changed the events).
    #[test]
    fn a_flicker_taken_back_by_a_report_leaves_no_echo() {
        let mut d = Debouncer::new(30);
        d.reset(&[OCCUPIED; 64]);
        d.reading(141_750, Square::B5, EMPTY);
        d.frame_reading(141_767, Square::B5, OCCUPIED);
        d.reading(141_767, Square::B5, OCCUPIED);
        assert_eq!(d.pop_due_batch(200_000), vec![]);
        assert_eq!(
            d.drain_glitches().collect::<Vec<_>>(),
            vec![(141_767, Square::B5)]
        );
        assert_eq!(d.drain_echoes().collect::<Vec<_>>(), vec![]);
        // Read again much later, as it stood: that is an echo.
        d.reading(141_767 + ECHO_LATE_MS + 1, Square::B5, OCCUPIED);
        assert_eq!(d.drain_echoes().collect::<Vec<_>>().len(), 1);
    }

    #[test]
    fn a_square_read_again_as_it_stood_is_an_echo_unless_a_report_showed_it_first() {
        let mut d = Debouncer::new(30);
        d.reset(&[EMPTY; 64]);
        // b3 read empty again: it was filled and emptied unseen.
        d.reading(100, Square::B3, EMPTY);
        // c4 settling: its reading again is no echo.
        d.reading(100, Square::C4, OCCUPIED);
        d.reading(110, Square::C4, OCCUPIED);
        // d5 shown filled by a whole-board report, then its own reading, late.
        d.frame_reading(100, Square::D5, OCCUPIED);
        assert_eq!(d.pop_due_batch(1000).len(), 2);
        d.reading(900, Square::D5, OCCUPIED);
        // e6 filled by its own reading, then read filled again: an echo.
        d.reading(200, Square::E6, OCCUPIED);
        assert_eq!(d.pop_due_batch(1000).len(), 1);
        d.reading(950, Square::E6, OCCUPIED);
        // d5 read filled again long after the report: an echo.
        d.reading(100 + ECHO_LATE_MS + 500, Square::D5, OCCUPIED);
        assert_eq!(
            d.drain_echoes().collect::<Vec<_>>(),
            vec![
                (100, Square::B3, EMPTY),
                (950, Square::E6, OCCUPIED),
                (100 + ECHO_LATE_MS + 500, Square::D5, OCCUPIED)
            ]
        );
        assert_eq!(d.drain_echoes().collect::<Vec<_>>(), vec![]);
    }

    #[test]
    fn changes_come_out_in_time_order() {
        let mut d = Debouncer::new(30);
        d.reset(&[EMPTY; 64]);
        d.reading(200, Square::A1, OCCUPIED);
        d.reading(100, Square::H8, OCCUPIED);
        assert_eq!(d.pop_due(1000).map(|c| c.square), Some(Square::H8));
        assert_eq!(d.pop_due(1000).map(|c| c.square), Some(Square::A1));
    }
}
