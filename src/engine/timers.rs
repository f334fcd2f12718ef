//! Time without input: what falls due next (a flag, a low-time warning, a debounced change, a
//! held decision, the mismatch guidance), and the low-time warnings' bookkeeping.

use shakmaty::{Color, Position};

use super::arbiter::{Engine, Phase};
use super::decoder::recognise::Verdict;
use super::event::{Event, EventKind, Millis, Priority};
use super::revise::Revision;

/// What falls due. When several fall due at once, they are handled in this order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Due {
    Flag,
    Warning,
    /// A change of the board has held for the debounce time.
    Board,
    Hold,
    Mismatch,
    /// The computer has thought a while: it is said.
    Thinking,
    /// The computer's move has waited long enough to be executed: the player's clock starts.
    Execution,
}

impl Engine {
    /// The earliest time at which something happens without new input.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.next_due().map(|(t, _)| t)
    }

    pub(super) fn next_due(&self) -> Option<(Millis, Due)> {
        // In the order of `Due`: the first of equal times wins.
        let mut next: Option<(Millis, Due)> = None;
        let mut consider = |t: Option<Millis>, what: Due| {
            if let Some(t) = t {
                if next.is_none_or(|(n, _)| t < n) {
                    next = Some((t, what));
                }
            }
        };
        if self.clock.is_some() && self.phase != Phase::Over {
            consider(self.clock.as_ref().and_then(|c| c.flag_time()), Due::Flag);
            consider(self.warning_due().map(|(t, _)| t), Due::Warning);
        }
        consider(self.deb.next_due(), Due::Board);
        if let Phase::Holding(h) = &self.phase {
            consider(h.due, Due::Hold);
        }
        consider(self.mismatch.due, Due::Mismatch);
        if self.phase != Phase::Over {
            let thinking = super::computer::THINKING_TOLD_MS;
            consider(
                self.computer_since.map(|t| t.saturating_add(thinking)),
                Due::Thinking,
            );
            consider(self.execution_due, Due::Execution);
        }
        next
    }

    /// Handles what fell due at `self.now`.
    pub(super) fn on_due(&mut self, what: Due, out: &mut Vec<Event>) {
        match what {
            Due::Flag | Due::Warning => {
                // A move on the board that the engine held back (a slide that might have gone
                // on) was made before the clock came down: it counts first, at its time. A
                // promotion whose piece is not known is no move yet (4.6c), nor is an illegal
                // move that has not stood.
                if self.held_move().is_some() {
                    self.settle_pending(out);
                    self.evaluate(out);
                } else if what == Due::Flag {
                    self.flag_falls(out);
                } else {
                    self.warn_low_time(out);
                }
            }
            Due::Board => {
                let mut batch = std::mem::take(&mut self.batch);
                self.deb.pop_due_into(self.now, &mut batch);
                if !batch.is_empty() {
                    self.on_batch(&batch, out);
                }
                self.batch = batch;
            }
            Due::Hold => self.hold_due(out),
            Due::Thinking => self.tell_thinking(out),
            Due::Execution => self.execution_over(out),
            Due::Mismatch => {
                self.mismatch.due = None;
                // A board that is away shows nothing new: it is judged when it is back (looked
                // at again until then, for it may come back showing what it showed).
                if self.link_down {
                    self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
                    return;
                }
                // A claim waits for its move and the player has touched nothing.
                let untouched = self.turn.touches.is_empty()
                    && self.phys.occupied() == self.game.pos.board().occupied();
                if self.claim_with_move.is_some() && untouched {
                    let text = self.s.phrases.words.waiting_for_move.clone();
                    self.say(out, text, Priority::Info);
                    return;
                }
                // A board that stood unexplained: moves made unseen, if one story explains it.
                // (A ruling the board does not bear out is a story too: its moves read on.)
                let recoverable = matches!(self.phase, Phase::Moving | Phase::Restoring { .. })
                    && self.alt.is_none()
                    && !self.passive();
                if recoverable && self.revise(true, None, out) == Revision::Taken {
                    return;
                }
                // (A piece in the hand that stood with a trace of a capture is no mismatch.)
                if !(recoverable
                    && self.phase == Phase::Moving
                    && self.verdict() == Verdict::InProgress)
                {
                    self.report_mismatch(out);
                }
            }
        }
    }

    /// The next low-time warning of the running clock: when, and which threshold.
    fn warning_due(&self) -> Option<(Millis, usize)> {
        if self.phase == Phase::Over {
            return None;
        }
        let clock = self.clock.as_ref()?;
        let color = clock.running()?;
        let flag = clock.flag_time()?;
        self.s
            .warnings()
            .iter()
            .enumerate()
            .filter(|(i, _)| self.warnings.warned[color] & (1 << i) == 0)
            .map(|(i, &x)| (flag.saturating_sub(x), i))
            .min()
    }

    /// Warnings are given once; one is given again only after the clock has stood at more
    /// than twice its threshold (a new period's time), so that a player living on his
    /// increment is not told at every move. At the start, thresholds the clock does not
    /// exceed are not warned of (a one-minute game does not begin with "one minute").
    pub(super) fn arm_warnings(&mut self) {
        if self.clock.is_none() {
            return;
        }
        for color in [Color::White, Color::Black] {
            let left = self.time_left(color).max(0) as Millis;
            for (i, &x) in self.s.warnings().iter().enumerate().take(32) {
                let bit = 1 << i;
                if self.warnings.warned[color] & bit != 0 && left > 2 * x {
                    self.warnings.warned[color] &= !bit;
                }
            }
            if self.game.plies.is_empty() {
                self.mark_warned(color);
            }
        }
    }

    /// What `color`'s clock shows now (nothing without a clock).
    fn time_left(&self, color: Color) -> i64 {
        self.clock
            .as_ref()
            .map_or(0, |c| c.remaining(color, self.now))
    }

    /// Takes every warning at or above what `color`'s clock shows as given.
    pub(super) fn mark_warned(&mut self, color: Color) {
        let left = self.time_left(color).max(0) as Millis;
        for (i, &x) in self.s.warnings().iter().enumerate().take(32) {
            if left <= x {
                self.warnings.warned[color] |= 1 << i;
            }
        }
    }

    /// The running clock has reached a warning threshold.
    fn warn_low_time(&mut self, out: &mut Vec<Event>) {
        let Some(color) = self.clock.as_ref().and_then(|c| c.running()) else {
            return;
        };
        let left = self.time_left(color);
        // Every threshold the clock has come down to is done with (a penalty may cross several).
        self.mark_warned(color);
        let say = self.s.phrases.low_time(color, left);
        self.emit(
            out,
            EventKind::TimeWarning {
                color,
                remaining_ms: left,
                say,
            },
        );
    }
}
