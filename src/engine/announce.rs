//! What the arbiter says besides moves: the words of a spoken event, the clocks, the mismatch
//! guidance.

use shakmaty::{Color, Position, Role, Square};

use super::arbiter::{Engine, Phase};
use super::event::{Event, EventKind, Priority};
use crate::words::sentences;

impl Engine {
    /// Says `text`, every sentence of it beginning with a capital letter, whatever the words
    /// it was put together from.
    pub(super) fn say(&mut self, out: &mut Vec<Event>, text: String, priority: Priority) {
        let text = sentences(&text);
        self.emit(out, EventKind::Say { text, priority });
    }

    /// Reports both clocks as they stand (a `clock` event), when there is a clock.
    pub(super) fn emit_clock(&mut self, out: &mut Vec<Event>) {
        let Some(c) = &self.clock else { return };
        let kind = EventKind::Clock {
            white_ms: c.remaining(Color::White, self.now),
            black_ms: c.remaining(Color::Black, self.now),
            running: c.running(),
        };
        self.emit(out, kind);
    }

    /// The board has stood unlike the game: which squares to put right, once for each way it
    /// differs.
    pub(super) fn report_mismatch(&mut self, out: &mut Vec<Event>) {
        let board = self.game.pos.board();
        let pos_occ = board.occupied();
        let occ = self.phys.occupied();
        // A wrong piece on a square counts as the right one missing there.
        let missing = (pos_occ & !occ) | self.phys.wrong_pieces(board);
        let extra = occ & !pos_occ;
        if (missing.is_empty() && extra.is_empty())
            || self.mismatch.reported == Some((missing, extra))
        {
            return;
        }
        self.mismatch.reported = Some((missing, extra));
        let named: Vec<(Square, Option<Role>)> = missing
            .into_iter()
            .map(|sq| (sq, board.role_at(sq)))
            .collect();
        let extra_sqs: Vec<Square> = extra.into_iter().collect();
        let text = match (&self.phase, self.game.plies.last()) {
            // F2.1: "Auf Ihrem Brett: Springer von Gustav eins nach Felix drei".
            (Phase::Replicating { m }, Some(_)) => self.s.phrases.on_your_board(*m),
            _ => self.s.phrases.mismatch(&named, &extra_sqs),
        };
        self.emit(
            out,
            EventKind::Mismatch {
                missing: missing.into_iter().collect(),
                extra: extra_sqs,
            },
        );
        self.say(out, text, Priority::Error);
    }
}
