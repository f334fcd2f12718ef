//! What the arbiter holds back for a moment: a slide that may go on, a promotion whose piece is
//! not known, an illegal move that must stand before it counts, a takeback, a move waiting for
//! the clock button. Any input that cannot continue it settles it first, at the time the board
//! came to show it.

use shakmaty::attacks::between;
use shakmaty::{Bitboard, Move, Position, Role};

use super::arbiter::{Engine, Held, Hold, Phase};
use super::decoder::log::{own_squares, Trace};
use super::decoder::recognise::{self, classify, Verdict};
use super::event::{Event, Millis};
use super::revise::Revision;

impl Engine {
    /// Takes a held decision at the time the board came to show it, because the board went on
    /// (or the clock or a button came) in a way that cannot continue it. What the board did
    /// after that belongs to the next turn.
    pub(super) fn settle(&mut self, h: Hold, out: &mut Vec<Event>) {
        let after = self.turn.after(h.since);
        let plies = self.game.plies.len();
        let takeback = matches!(h.held, Held::Takeback(_));
        self.phase = Phase::Moving;
        match h.held {
            Held::Move(m) => self.at(h.since, |e| e.complete(m, true, out)),
            Held::Promotion(m) => {
                let role = self.promotion_piece();
                let m = with_promotion(m, role);
                self.at(h.since, |e| e.complete(m, true, out));
            }
            Held::Illegal(from, to) => self.at(h.since, |e| e.illegal_completed(from, to, out)),
            Held::Breach(m) => self.at(h.since, |e| e.refuse(m, out)),
            Held::Takeback(plan) => self.apply_takeback(plan, h.since, out),
        }
        if self.standing() {
            return;
        }
        if self.game.plies.len() != plies || takeback {
            // A new position: the board's later changes are read in it (the opponent's, after
            // a move).
            self.turn = after;
        } else {
            // Refused: what the board did after is part of what is to be put right, not touches.
            self.turn.reported = self.turn.seen.len();
        }
    }

    /// A complete move the engine holds back (a slide that may go on, or a takeback), or one
    /// whose piece was lifted again: not a promotion whose piece is unknown, nor a wait for the
    /// clock button.
    pub(super) fn held_move(&self) -> Option<&Hold> {
        let held = match &self.phase {
            Phase::Holding(h) if h.due.is_some() => Some(h),
            _ => self.alt.as_ref(),
        };
        held.filter(|h| matches!(h.held, Held::Move(_) | Held::Takeback(_)))
    }

    /// The board is explained once the held move is taken at its time, and what the board did
    /// after it read as the opponent's (never so for an illegal move: that must be put back).
    pub(super) fn explained_after(&self, h: &Hold) -> bool {
        let m = match h.held {
            Held::Move(m) => m,
            Held::Promotion(m) => with_promotion(m, self.promotion_piece()),
            Held::Illegal(..) | Held::Breach(_) | Held::Takeback(_) => return false,
        };
        let mut pos = self.game.pos.clone();
        pos.play_unchecked(m);
        let lifted: Bitboard = self
            .turn
            .seen
            .iter()
            .filter(|s| s.t > h.since && s.what == Trace::Lifted)
            .map(|s| s.square)
            .collect();
        let vacated = lifted & pos.board().occupied();
        // (An illegal move by the opponent at once is no explanation to prefer.)
        !matches!(
            classify(
                &pos,
                &recognise::Legal::of(&pos),
                &self.phys,
                vacated,
                self.last_change
            ),
            Verdict::Unexplained | Verdict::Illegal { .. }
        )
    }

    /// A held slide whose piece was lifted again, and a square further along its line
    /// flickered after: the slide went on and was set down there, the placement lost at once
    /// (Rc1-d1-e1-f1, f1 only a flicker: Rf1, not Re1 with the rook lifted by the opponent).
    /// The move to that square, held since the flicker.
    pub(super) fn slid_on(&self, h: &Hold) -> Option<Hold> {
        let Held::Move(m) = h.held else {
            return None;
        };
        let from = m.from()?;
        if !recognise::could_slide_on(&self.game.pos, &m) || self.phys.occupied().contains(m.to()) {
            return None;
        }
        let lifted = self.turn.last_seen(m.to(), Trace::Lifted)?;
        let flicker = self.turn.seen.iter().rev().find(|s| {
            s.what == Trace::Glitch && s.t > lifted && between(from, s.square).contains(m.to())
        })?;
        let on = self
            .game
            .legal()
            .iter()
            .copied()
            .find(|l| l.from() == Some(from) && l.to() == flicker.square && !l.is_capture())?;
        Some(Hold {
            held: Held::Move(on),
            since: flicker.t,
            ..h.clone()
        })
    }

    /// `m`'s piece was seen set down on its square longer than a board's scan before it was
    /// seen lifted (its lift's bounce not seen before): the move is made only if a reading
    /// came late ([`Turn::placed_before_lifted`](super::turn::Turn::placed_before_lifted); the
    /// stories charge the same).
    pub(super) fn made_late(&self, m: Move) -> bool {
        own_squares(m).is_some_and(|(from, to)| self.turn.placed_before_lifted(from, to))
    }

    /// Settles a hold the engine chose to wait for (not the clock button's), and an
    /// alternative still open, at their times: a new game.
    pub(super) fn settle_pending(&mut self, out: &mut Vec<Event>) {
        if let Some(h) = self.alt.take() {
            self.turn.touches_deferred = false;
            self.settle(h, out);
            self.report_touches(out);
            return;
        }
        self.settle_hold(out);
    }

    /// Settles a hold the engine chose to wait for: a button or a link change came.
    pub(super) fn settle_hold(&mut self, out: &mut Vec<Event>) {
        if let Phase::Holding(h) = &self.phase {
            if h.due.is_some() {
                let h = h.clone();
                self.settle(h, out);
                self.report_touches(out);
            }
        }
    }

    /// A button or a command came while the held piece was in the hand again: the mover is
    /// taken to be still at work.
    pub(super) fn resolve_alt_as_continued(&mut self, out: &mut Vec<Event>) {
        if self.alt.take().is_some() {
            self.turn.touches_deferred = false;
            self.report_touches(out);
        }
    }

    /// The move seen made that is held back a moment, for its piece may slide on.
    pub(super) fn held_slide(&self) -> Option<Move> {
        match &self.phase {
            Phase::Holding(Hold {
                held: Held::Move(m),
                due: Some(_),
                ..
            }) => Some(*m),
            _ => None,
        }
    }

    /// A promotion is held back, its piece not known yet.
    pub(super) fn holding_promotion(&self) -> bool {
        matches!(
            self.phase,
            Phase::Holding(Hold {
                held: Held::Promotion(_),
                ..
            })
        )
    }

    /// A hold's time has come.
    pub(super) fn hold_due(&mut self, out: &mut Vec<Event>) {
        let Phase::Holding(h) = self.phase.clone() else {
            return;
        };
        // A slide may have gone on where nobody heard it: it waits until the board is heard
        // again (its report after the gap tells where the piece went).
        if (self.link_down || self.gap_pending || self.gap_reading.is_some())
            && self.held_slide().is_some()
        {
            self.hold_again(h);
            return;
        }
        self.phase = Phase::Moving;
        if matches!(h.held, Held::Illegal(..) | Held::Breach(_)) {
            // A ruling: only when no story of legal moves, with readings still to come,
            // explains the board better (once put off, it is given when the board has stood
            // still since for the mismatch delay).
            match self.revise(h.deferred, Some(&h), out) {
                Revision::Taken => return,
                Revision::Waiting if !h.deferred => {
                    self.defer(h);
                    return;
                }
                _ => self.phase = Phase::Moving,
            }
        }
        if let Held::Move(m) = h.held {
            if self.made_late(m) || self.both_may_have_moved() {
                // The board shows the move, but its piece was seen set down long before it was
                // seen lifted: a reading came late, and another story whose reading is still owed
                // may explain the board as well (the reply's first lift, after a move whose
                // own lift is late). Or the board showed, besides, a piece set down where the
                // record has none and a piece of the last mover lifted: both players may have
                // moved, more than once (Bg4 Bd5 Bd7 Bb3 leave the board as Bd7 alone). Not
                // taken while the stories wait, until the board has stood for the mismatch
                // delay.
                let still = self.now >= h.since.saturating_add(self.s.mismatch_ms);
                match self.revise(still, Some(&h), out) {
                    Revision::Taken => return,
                    Revision::Waiting if !still => {
                        self.hold_again(h);
                        return;
                    }
                    _ => self.phase = Phase::Moving,
                }
            }
        }
        match h.held {
            Held::Move(m) => self.complete(m, false, out),
            Held::Promotion(_) => self.promotion_timeout(out),
            Held::Illegal(from, to) => self.illegal_completed(from, to, out),
            // (Refused as of its release, when the offence was complete.)
            Held::Breach(m) => self.at(h.since, |e| e.refuse(m, out)),
            Held::Takeback(plan) => {
                if self.takeback_plan() == Some(plan) {
                    self.apply_takeback(plan, h.since, out);
                }
            }
        }
    }

    /// Holds `h` on for the settle time: the board is read again then.
    fn hold_again(&mut self, h: Hold) {
        self.phase = Phase::Holding(Hold {
            due: Some(self.now.saturating_add(self.s.settle_ms)),
            ..h
        });
    }

    /// A ruling held back that legal moves may still explain: given once the board has stood
    /// for the mismatch delay since the move's release.
    pub(super) fn defer(&mut self, h: Hold) {
        self.phase = Phase::Holding(Hold {
            due: Some(h.since.saturating_add(self.s.mismatch_ms).max(self.now + 1)),
            deferred: true,
            ..h
        });
    }

    pub(super) fn hold(&mut self, held: Held, wait: Option<Millis>) {
        self.phase = Phase::Holding(Hold {
            held,
            since: self.now,
            due: wait.map(|w| self.now.saturating_add(w)),
            deferred: false,
        });
    }

    /// Refuses a move held back for breaking touch-move (its hold is over).
    pub(super) fn refuse(&mut self, m: Move, out: &mut Vec<Event>) {
        self.refusing = true;
        self.complete(m, true, out);
        self.refusing = false;
    }
}

/// `m` promoting to `role` instead.
fn with_promotion(m: Move, role: Role) -> Move {
    match m {
        Move::Normal {
            role: r,
            from,
            capture,
            to,
            promotion: Some(_),
        } => Move::Normal {
            role: r,
            from,
            capture,
            to,
            promotion: Some(role),
        },
        other => other,
    }
}
