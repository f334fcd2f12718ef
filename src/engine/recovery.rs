//! Moves the board was not seen making: read afterwards from the board, when one story of legal
//! moves explains it (readings lost, a capture too quick for the sensors, moves made while the
//! board was away). The moves are taken as `recovered`, dated as well as the board allows.

use shakmaty::{Bitboard, Move, Position};

use super::arbiter::{Engine, Held, Hold, Phase, RECOVERY_PLIES};
use super::event::Event;
use super::recognise::{self, explanations, ply_times, Search, Timing};
use super::turn::{Seen, Trace, Turn};

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
    /// they are one story (one sequence, or several with the same moves), and says whether it
    /// did. A held move the story begins with was seen: it is taken at its time, not as
    /// recovered.
    pub(super) fn recover(
        &mut self,
        search: Search,
        lenient: bool,
        held: Option<&Hold>,
        out: &mut Vec<Event>,
    ) -> bool {
        if let Search::Seen(changed) = search {
            // A board changing everywhere is not a few moves.
            if changed.count() > 16 {
                return false;
            }
        }
        // Moves never add pieces (a board that shows the new square before the old one does,
        // for a moment).
        if self.phys.occupied().count() > self.game.pos.board().occupied().count() {
            return false;
        }
        let start = self.game.pos.clone();
        let mut budget = recognise::SEARCH_BUDGET;
        let mut story = None;
        for depth in 1..=RECOVERY_PLIES {
            let promotion = self.turn.promo_choice.unwrap_or(self.s.promotion_default);
            let Some(found) =
                explanations(&start, &self.phys, search, promotion, depth, &mut budget)
            else {
                return false;
            };
            let timed: Vec<Story> = found
                .into_iter()
                .filter_map(|seq| {
                    let occ = self.phys.occupied();
                    ply_times(&start, &seq, &self.turn.seen, occ, lenient)
                        .map(|timing| Story { seq, timing })
                })
                // Read at once, a story must be one the board can have shown in its order; a
                // board that has long been unexplained takes any.
                .filter(|s: &Story| lenient || s.timing.in_order)
                .collect();
            if !timed.is_empty() {
                story = one_story(timed);
                break;
            }
        }
        let Some(Story { seq, timing }) = story else {
            return false;
        };
        // What the board did that the moves do not account for, after them: the next player's
        // first steps, his touches. When it did something unaccounted for before the moves were
        // done, touches cannot be told apart: touch-move is not judged in the next turn.
        let done = timing.times.last().copied().unwrap_or(0);
        let unmatched: Vec<Seen> = (0..self.turn.seen.len())
            .filter(|i| timing.matched.binary_search(i).is_err())
            .map(|i| self.turn.seen[i])
            .collect();
        let touch_unknown = unmatched
            .iter()
            .any(|s| s.what == Trace::Lifted && s.t <= done);
        let rest: Vec<Seen> = unmatched.into_iter().filter(|s| s.t > done).collect();
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
                self.turn = Turn {
                    seen: rest,
                    touch_unknown,
                    ..Turn::default()
                };
                self.at(t.min(self.now), |e| {
                    e.report_touches(out);
                    e.evaluate(out);
                });
                return true;
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
                return true;
            }
        }
        self.turn = Turn {
            seen: rest,
            touch_unknown,
            ..Turn::default()
        };
        // The last change belongs to the moves: the next player has placed nothing yet.
        self.last_change = None;
        self.report_touches(out);
        self.evaluate(out);
        true
    }
}

/// A sequence of moves that explains the board, and when the board showed them.
#[derive(Clone, Debug)]
struct Story {
    seq: Vec<Move>,
    timing: Timing,
}

/// Of the sequences that explain the board, the one story, if there is one: a single
/// sequence; else the only one the board showed in its order; else the only one whose
/// captures all left a trace on the board; else, when all are the same moves in other orders,
/// the first.
fn one_story(mut found: Vec<Story>) -> Option<Story> {
    found.dedup_by(|a, b| a.seq == b.seq);
    if found.len() > 1 && found.iter().any(|s| s.timing.in_order) {
        found.retain(|s| s.timing.in_order);
    }
    if let Some(fewest) = found.iter().map(|s| s.timing.untraced).min() {
        found.retain(|s| s.timing.untraced == fewest);
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
