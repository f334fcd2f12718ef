//! Taking moves back in casual play: the board put back to an earlier position of the game, a
//! rook move that turns out to be the first half of castling, or the `takeback` button.

use shakmaty::{Move, Position, Role};

use super::arbiter::{Engine, LastSaid, Takeback};
use super::decoder::recognise::{self, occupancy_after};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::ply_number;

impl Engine {
    /// Casual play: a rook move that turns out to be the first half of castling, or the board
    /// put back to an earlier position of the game, is a takeback.
    pub(super) fn takeback_plan(&self) -> Option<Takeback> {
        let occ = self.phys.occupied();
        // Against the computer, a takeback leaves the player to move (the computer's move is
        // taken back with his own).
        let computer = self.computer();
        if let Some(last) = self.game.plies.last() {
            if last.m.role() == Role::Rook && computer != Some(last.before.turn()) {
                let before = &last.before;
                let color = before.turn();
                let castle = before.legal_moves().into_iter().find(|m| match *m {
                    Move::Castle { rook, .. } => {
                        Some(rook) == last.m.from()
                            && occupancy_after(before.board().occupied(), color, m) == occ
                    }
                    _ => false,
                });
                if let Some(castle) = castle {
                    return Some(Takeback::CastleAfterRook(castle));
                }
            }
        }
        self.game
            .plies
            .iter()
            .rposition(|p| {
                computer != Some(p.before.turn())
                    && p.before.board().occupied() == occ
                    && self.phys.shows(p.before.board())
            })
            .map(Takeback::To)
    }

    /// Takes back as planned, dated when the board first showed the earlier position (or
    /// right after the last event, to keep events in time order).
    pub(super) fn apply_takeback(&mut self, plan: Takeback, shown: Millis, out: &mut Vec<Event>) {
        self.at(shown, |e| match plan {
            Takeback::CastleAfterRook(castle) => {
                e.take_back(out);
                e.complete(castle, false, out);
            }
            Takeback::To(k) => {
                while e.game.plies.len() > k {
                    e.take_back(out);
                }
            }
        });
    }

    /// How many plies the `takeback` button takes back: the last one; against the computer,
    /// as many as leave the player to move (his move and the computer's reply, or his move
    /// alone while the computer thinks). None when there is nothing to take back.
    pub(super) fn takeback_plies(&self) -> Option<usize> {
        let plies = &self.game.plies;
        let Some(computer) = self.computer() else {
            return (!plies.is_empty()).then_some(1);
        };
        // The last ply before which the player had the move.
        let k = plies.iter().rposition(|p| p.before.turn() != computer)?;
        Some(plies.len() - k)
    }

    /// Takes back the last move of the record.
    pub(super) fn take_back(&mut self, out: &mut Vec<Event>) {
        let Some(ply) = self.game.undo() else { return };
        self.takebacks += 1;
        // A move being sealed was the player's then to move: it is his no longer.
        self.sealing = None;
        // `last` is the move now last.
        self.last_said = if self.game.plies.is_empty() {
            LastSaid::Nothing
        } else {
            LastSaid::Move
        };
        self.computer_executing = false;
        let ply_no = ply_number(&ply.before);
        self.emit(
            out,
            EventKind::Takeback {
                ply: ply_no,
                san: recognise::san_text(ply.san),
            },
        );
        let said = self.s.phrases.announce(&ply.san, ply.m);
        let text = format!("{}: {said}", self.s.phrases.words.takeback);
        self.say(out, text, Priority::Info);
        if let Some(clock) = &mut self.clock {
            clock.start(ply.before.turn(), self.now);
        }
        self.new_turn();
        self.draw_offer = None;
        self.agree_on_the_record();
    }
}
