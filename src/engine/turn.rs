//! One turn, as the arbiter watches it: what the board did since the last agreed position (the
//! observations), and the pieces the player to move has touched (Art. 4.2-4.6).

use shakmaty::{Bitboard, Piece, Role, Square};

use super::decoder::log::{lifted_late, Seen, Trace};
use super::event::Millis;

/// A piece touched by the player to move, with what stood there and when. Touches at the same
/// moment (one whole-board frame) are simultaneous.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    pub square: Square,
    pub piece: Piece,
    pub at: Millis,
}

/// Art. 4.6: a piece released where a legal move is not yet finished binds the player.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Commit {
    /// 4.6b: the king was released on its castling square: only that castling may follow.
    Castle { king: Square, king_to: Square },
    /// 4.6c: the pawn was released on its promotion square: only a promotion there.
    Promote { pawn: Square, to: Square },
}

/// A promotion completed with the pawn still on its square: lifting it to put the new piece in
/// its place is the promoting player's swap, not the opponent's touch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Swap {
    pub square: Square,
    /// It was lifted, at this time; the next change tells whose lift it was.
    pub lifted: Option<Millis>,
}

/// A turn with more observations than this keeps only the last of each kind on each square.
pub const SEEN_BOUND: usize = 512;

/// The state of one turn; a new turn starts empty.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    /// Pieces touched by the player to move, in order.
    pub touches: Vec<Touch>,
    pub touched: Bitboard,
    /// Touched squares whose piece was told put back (Appendix F2.9 (e)).
    pub told: Bitboard,
    /// Squares of the position that were seen empty during this turn.
    pub vacated: Bitboard,
    /// Everything the board did since the position was agreed, in time order (past
    /// [`SEEN_BOUND`] observations, the last of each kind on each square: [`Turn::compact`]).
    pub seen: Vec<Seen>,
    /// How many of `seen` have been read for touches.
    pub reported: usize,
    pub adjusting: bool,
    pub committed: Option<Commit>,
    pub promo_choice: Option<Role>,
    /// Casual play: the illegal move already pointed out.
    pub casual_illegal: Option<(Square, Square)>,
    pub swap: Option<Swap>,
    /// Touches could not be watched for this turn (its start was read from the board
    /// afterwards): touch-move is not judged.
    pub touch_unknown: bool,
    /// The board's link was lost during this turn: squares may have changed unseen, and what
    /// its report afterwards shows changed in an order nobody knows.
    pub gap: bool,
    /// The lifts are not read as touches yet: the board may still turn out to show the held
    /// move complete and these lifts the opponent's (or, after a promotion, the swap of the
    /// pawn for the new piece).
    pub touches_deferred: bool,
}

impl Turn {
    /// Starts the turn afresh (keeping what was allocated: a turn begins at every move).
    pub fn reset(&mut self) {
        let mut touches = std::mem::take(&mut self.touches);
        let mut seen = std::mem::take(&mut self.seen);
        touches.clear();
        seen.clear();
        *self = Turn {
            touches,
            seen,
            ..Turn::default()
        };
    }

    /// Adds a touch; among touches at the same moment, the player's own pieces count first
    /// (4.3c) and the king before a rook (king and rook together mean castling, 4.4).
    pub fn touch(&mut self, t: Touch, us: shakmaty::Color) {
        let rank = |x: &Touch| (x.piece.color != us, x.piece.role != Role::King);
        let at = self
            .touches
            .iter()
            .rposition(|x| x.at < t.at || (x.at == t.at && rank(x) <= rank(&t)))
            .map_or(0, |i| i + 1);
        self.touches.insert(at, t);
        self.touched.add(t.square);
    }

    /// Squares the board was seen changing since the position was agreed.
    pub fn changed(&self) -> Bitboard {
        self.seen
            .iter()
            .filter(|s| s.what != Trace::Glitch)
            .map(|s| s.square)
            .collect()
    }

    /// The last time `sq` was seen doing `what`, if it was.
    pub fn last_seen(&self, sq: Square, what: Trace) -> Option<Millis> {
        self.seen
            .iter()
            .rev()
            .find(|s| s.square == sq && s.what == what)
            .map(|s| s.t)
    }

    /// A piece was last seen set down on `to` longer than a board's scan before any lift from
    /// `from` was seen, the lift not begun before ([`lifted_late`]): a move from `from` to `to`
    /// is then made only if a reading came late.
    pub fn placed_before_lifted(&self, from: Square, to: Square) -> bool {
        let lifted = self
            .seen
            .iter()
            .find(|s| s.square == from && s.what == Trace::Lifted)
            .map(|s| s.t);
        let placed = self.last_seen(to, Trace::Placed);
        placed
            .zip(lifted)
            .is_some_and(|(p, l)| lifted_late(&self.seen, from, 0, p, l))
    }

    /// The last time `sq` changed, if it did.
    pub fn last_change(&self, sq: Square) -> Option<Millis> {
        self.seen
            .iter()
            .rev()
            .find(|s| s.square == sq && s.what != Trace::Glitch)
            .map(|s| s.t)
    }

    /// Forgets the board's older comings and goings on each square, once every one has been
    /// read for touches: of each square, only the last lift, placement and flicker stay. What
    /// the turn is asked (the last time a square changed or flickered, the squares that
    /// changed) keeps its answer, and a turn in which a piece is lifted and put back for an
    /// hour stays as quick to read as a short one.
    pub fn compact(&mut self) {
        if self.reported < self.seen.len() {
            return;
        }
        let mut kept = [[false; 64]; 3];
        let mut keep = vec![false; self.seen.len()];
        for (i, s) in self.seen.iter().enumerate().rev() {
            let k = match s.what {
                Trace::Lifted => 0,
                Trace::Placed => 1,
                _ => 2,
            };
            let slot = &mut kept[k][usize::from(s.square)];
            keep[i] = !*slot;
            *slot = true;
        }
        let mut i = 0;
        self.seen.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        self.reported = self.seen.len();
    }

    /// A new turn that keeps what the board did after `t` (the opponent's first steps, when a
    /// move is taken at its release after the board went on).
    pub fn after(&self, t: Millis) -> Turn {
        Turn {
            seen: self.seen.iter().filter(|s| s.t > t).copied().collect(),
            ..Turn::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Color;

    fn touch(sq: Square, color: Color, role: Role, at: Millis) -> Touch {
        Touch {
            square: sq,
            piece: Piece { color, role },
            at,
        }
    }

    #[test]
    fn a_piece_set_down_long_before_its_lift_is_told_unless_its_lift_flickered() {
        let seen = |t, square, what| Seen {
            t,
            square,
            what,
            late: false,
        };
        let turn = |seen: Vec<Seen>| Turn {
            seen,
            ..Turn::default()
        };
        let (b8, b6) = (Square::B8, Square::B6);
        // Set down on b6, lifted from b8 600 ms later: a reading came late.
        let late = turn(vec![
            seen(1142, b6, Trace::Placed),
            seen(1768, b8, Trace::Lifted),
        ]);
        assert!(late.placed_before_lifted(b8, b6));
        // Within a DGT board's scan: its order of reading.
        let scan = turn(vec![
            seen(1142, b6, Trace::Placed),
            seen(1392, b8, Trace::Lifted),
        ]);
        assert!(!scan.placed_before_lifted(b8, b6));
        // Lifted first, or its lift's bounce seen before the placement.
        let plain = turn(vec![
            seen(1100, b8, Trace::Lifted),
            seen(1768, b6, Trace::Placed),
        ]);
        assert!(!plain.placed_before_lifted(b8, b6));
        let bounced = turn(vec![
            seen(1000, b8, Trace::Glitch),
            seen(1142, b6, Trace::Placed),
            seen(1768, b8, Trace::Lifted),
        ]);
        assert!(!bounced.placed_before_lifted(b8, b6));
        // No lift seen at all (lifted in the turn before): nothing to tell.
        let unseen = turn(vec![seen(1142, b6, Trace::Placed)]);
        assert!(!unseen.placed_before_lifted(b8, b6));
    }

    #[test]
    fn simultaneous_touches_put_own_pieces_and_the_king_first() {
        let mut t = Turn::default();
        t.touch(
            touch(Square::D5, Color::Black, Role::Pawn, 10),
            Color::White,
        );
        t.touch(
            touch(Square::A1, Color::White, Role::Rook, 10),
            Color::White,
        );
        t.touch(
            touch(Square::E1, Color::White, Role::King, 10),
            Color::White,
        );
        t.touch(
            touch(Square::G1, Color::White, Role::Knight, 20),
            Color::White,
        );
        let order: Vec<Square> = t.touches.iter().map(|x| x.square).collect();
        assert_eq!(order, vec![Square::E1, Square::A1, Square::D5, Square::G1]);
        // A later touch never goes before an earlier one, whatever it is.
        t.touch(
            touch(Square::E8, Color::Black, Role::King, 30),
            Color::White,
        );
        assert_eq!(t.touches.last().map(|x| x.square), Some(Square::E8));
    }

    #[test]
    fn a_compacted_turn_answers_as_before() {
        let seen = |t, square, what| Seen {
            t,
            square,
            what,
            late: false,
        };
        let mut turn = Turn::default();
        for i in 0..300 {
            let t = 1000 + 10 * i;
            turn.seen.push(seen(t, Square::E2, Trace::Lifted));
            turn.seen.push(seen(t + 1, Square::E2, Trace::Placed));
            turn.seen.push(seen(t + 2, Square::D5, Trace::Glitch));
        }
        turn.seen.push(seen(5000, Square::G1, Trace::Lifted));
        let answers = |turn: &Turn| {
            (
                turn.changed(),
                turn.last_change(Square::E2),
                turn.last_seen(Square::E2, Trace::Lifted),
                turn.last_seen(Square::D5, Trace::Glitch),
                turn.last_change(Square::G1),
                turn.last_change(Square::D5),
            )
        };
        let before = answers(&turn);
        // (Not while a reading is still to be read for touches.)
        turn.reported = 10;
        turn.compact();
        assert_eq!(turn.seen.len(), 901);
        turn.reported = turn.seen.len();
        turn.compact();
        assert_eq!(turn.seen.len(), 4);
        assert_eq!(turn.reported, 4);
        assert_eq!(answers(&turn), before);
        assert!(turn.seen.windows(2).all(|w| w[0].t <= w[1].t));
    }
}
