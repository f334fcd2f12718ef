//! Moves the board was not seen making: read afterwards from the board, when one story of legal
//! moves explains it (readings lost, a capture too quick for the sensors, moves made while the
//! board was away). The moves are taken as `recovered`, dated as well as the board allows.

use shakmaty::{Bitboard, Move, Position};

use super::arbiter::{Engine, Held, Hold, Phase, RECOVERY_PLIES};
use super::decoder::log::{Seen, Trace};
use super::decoder::recognise::{self, explanations, ply_times, Search, Timing};
use super::event::Event;
use super::turn::Turn;

impl Engine {
    /// One piece of the player to move is off the board, nothing else differs, and a capture it
    /// can make left a trace on the captured piece's square after it was lifted.
    pub(super) fn traced_capture_in_hand(&self) -> bool {
        if !self.turn.seen.iter().any(|s| s.what == Trace::Glitch) {
            return false;
        }
        let pos = &self.game.pos;
        let missing = pos.board().occupied() & !self.phys.occupied();
        let (Some(from), true) = (missing.first(), missing.count() == 1) else {
            return false;
        };
        if !pos.us().contains(from)
            || self.phys.occupied() & !pos.board().occupied() != Bitboard::EMPTY
        {
            return false;
        }
        let Some(lifted) = self.turn.last_change(from) else {
            return false;
        };
        self.game.legal().from(from).any(|m| {
            m.is_capture()
                && self
                    .turn
                    .seen
                    .iter()
                    .any(|s| s.square == m.to() && s.what == Trace::Glitch && s.t > lifted)
        })
    }

    /// Looks for legal moves the board was not seen making that explain it; takes them when
    /// they are one story (one sequence, or several with the same moves), and says what it
    /// found. A held move the story begins with was seen: it is taken at its time, not as
    /// recovered.
    pub(super) fn recover(
        &mut self,
        search: Search,
        lenient: bool,
        held: Option<&Hold>,
        out: &mut Vec<Event>,
    ) -> Recovery {
        // A turn that spans a lost link: squares may have changed unseen, in any order.
        let (search, lenient) = match search {
            Search::Seen(changed) if self.turn.gap => (Search::Gap(changed), true),
            s => (s, lenient || self.turn.gap),
        };
        if let Search::Seen(changed) = search {
            // A board changing everywhere is not a few moves.
            if changed.count() > 16 {
                return Recovery::Nothing;
            }
        }
        // Moves never add pieces (a board that shows the new square before the old one does,
        // for a moment).
        if self.phys.occupied().count() > self.game.pos.board().occupied().count() {
            return Recovery::Nothing;
        }
        let start = self.game.pos.clone();
        let mut budget = recognise::SEARCH_BUDGET;
        let mut stories: Vec<Story> = Vec::new();
        for depth in 1..=RECOVERY_PLIES {
            let promotion = self.turn.promo_choice.unwrap_or(self.s.promotion_default);
            // (Out of budget: what the shorter stories found stands.)
            let Some(found) =
                explanations(&start, &self.phys, search, promotion, depth, &mut budget)
            else {
                break;
            };
            let occ = self.phys.occupied();
            stories.extend(
                found
                    .into_iter()
                    .filter_map(|seq| {
                        ply_times(&start, &seq, &self.turn.seen, occ, true)
                            .map(|timing| Story { seq, timing })
                    })
                    // Read at once, a story must be one the board can have shown in its
                    // order, but for a reading or two lost on the way; a board that has long
                    // been unexplained takes any.
                    .filter(|s| {
                        lenient || s.timing.in_order || s.timing.lost <= MAX_LOST.min(s.seq.len())
                    }),
            );
            // A story the board showed whole, in order, leaving nothing unexplained: longer
            // ones could only add moves the board did not need.
            if stories
                .iter()
                .any(|s| s.timing.in_order && s.timing.lost == 0)
            {
                break;
            }
        }
        if stories.is_empty() {
            return Recovery::Nothing;
        }
        let Some(Story { seq, timing }) = one_story(stories) else {
            return Recovery::Ambiguous;
        };
        // What the board did that the moves do not account for, after them: the next player's
        // first steps, his touches. When it did something unaccounted for before the moves were
        // done, touches cannot be told apart: touch-move is not judged in the next turn. What
        // it did before stays in what the board was seen doing (not as touches): the story may
        // have taken a change that belongs to a later move.
        let done = timing.times.last().copied().unwrap_or(0);
        let (mut seen, rest): (Vec<Seen>, Vec<Seen>) = (0..self.turn.seen.len())
            .filter(|i| timing.matched.binary_search(i).is_err())
            .map(|i| self.turn.seen[i])
            .partition(|s| s.t <= done);
        let touch_unknown = seen.iter().any(|s| s.what == Trace::Lifted);
        let reported = seen.len();
        seen.extend(rest);
        // What the board showed after a gap and the moves leave unexplained is the next
        // player's, done unseen as well.
        let gap = self.turn.gap && !seen.is_empty();
        let mut next = Some(Turn {
            seen,
            reported,
            touch_unknown: touch_unknown || gap,
            gap,
            ..Turn::default()
        });
        for (i, (m, t)) in seq.iter().zip(timing.times).enumerate() {
            // A last move that a slider may still go on with, alone on the board, is left to
            // the board as any such move is.
            if i + 1 == seq.len()
                && recognise::could_slide_on(&self.game.pos, m)
                && self.phys.occupied()
                    == recognise::occupancy_after(
                        self.game.pos.board().occupied(),
                        self.game.pos.turn(),
                        m,
                    )
            {
                self.turn = next.take().unwrap_or_default();
                self.at(t.min(self.now), |e| {
                    e.report_touches(out);
                    e.evaluate(out);
                });
                return Recovery::Taken;
            }
            let seen_made = i == 0
                && held.is_some_and(|h| match h.held {
                    Held::Move(hm) => hm == *m,
                    Held::Promotion(hm) => hm.from() == m.from() && hm.to() == m.to(),
                    _ => false,
                });
            let t = match held {
                Some(h) if seen_made => h.since,
                _ => t,
            };
            self.at(t.min(self.now), |e| e.record(*m, !seen_made, out));
            if self.phase == Phase::Over {
                return Recovery::Taken;
            }
        }
        self.turn = next.take().unwrap_or_default();
        // The last change belongs to the moves: the next player has placed nothing yet.
        self.last_change = None;
        self.report_touches(out);
        self.evaluate(out);
        Recovery::Taken
    }
}

/// What a search for moves the board was not seen making found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Recovery {
    /// One story: its moves are taken.
    Taken,
    /// Several stories of different moves explain the board: it cannot tell yet.
    Ambiguous,
    /// No story explains the board.
    Nothing,
}

/// A sequence of moves that explains the board, and when the board showed them.
#[derive(Clone, Debug)]
struct Story {
    seq: Vec<Move>,
    timing: Timing,
}

/// Readings a story may have lost and still be taken at once.
const MAX_LOST: usize = 2;

/// Of the sequences that explain the board, the one story, if there is one: a single
/// sequence; else the only one the board showed whole in its order; else the only one it
/// can have shown losing the fewest readings; else the only one whose captures all left a
/// trace on the board; else the only shortest one; else, when all are the same moves in
/// other orders, the first.
fn one_story(mut found: Vec<Story>) -> Option<Story> {
    found.dedup_by(|a, b| a.seq == b.seq);
    if found.len() > 1 && found.iter().any(|s| s.timing.in_order) {
        found.retain(|s| s.timing.in_order);
    }
    if let Some(fewest) = found.iter().map(|s| s.timing.lost).min() {
        found.retain(|s| s.timing.lost == fewest);
    }
    if let Some(fewest) = found.iter().map(|s| s.timing.untraced).min() {
        found.retain(|s| s.timing.untraced == fewest);
    }
    if let Some(shortest) = found.iter().map(|s| s.seq.len()).min() {
        found.retain(|s| s.seq.len() == shortest);
    }
    if found.len() <= 1 {
        return found.pop();
    }
    let key = |seq: &[Move]| {
        let mut v: Vec<String> = seq.iter().map(|m| format!("{m:?}")).collect();
        v.sort();
        v
    };
    let first = key(&found[0].seq);
    found
        .iter()
        .all(|s| key(&s.seq) == first)
        .then(|| found.swap_remove(0))
}
