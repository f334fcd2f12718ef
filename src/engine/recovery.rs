//! A capture the board may have shown only as a trace: the piece in the hand of the player to
//! move could have made it, and a flicker on the captured piece's square says it did (the
//! captured piece swept off quicker than the debounce time). The stories that take such moves
//! are the decoder's (`revise`).

use shakmaty::{Bitboard, Position};

use super::arbiter::Engine;
use super::decoder::log::Trace;

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
}
