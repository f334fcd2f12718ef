//! Adjourned games (Appendix A of the 1997 and 2005 Laws; Appendix F2.9 (f): the blind
//! player's assistant seals the move). The player to move makes his sealed move on the board,
//! unseen by the opponent: it goes into the envelope (the journal), not into the record, and is
//! not announced; the clocks stand. When the game resumes the position before the sealed move
//! is set up (A5), the envelope opened, the sealed move announced and executed on the board,
//! and the opponent's clock started (A9a). The 2023 Laws no longer adjourn.

use shakmaty::{Color, Move, Position};

use super::arbiter::{Engine, Mismatch, Phase};
use super::event::{side_name, Event, EventKind, Priority};
use super::game::Envelope;

impl Engine {
    /// The envelope of the adjourned game, if the game is adjourned.
    pub fn envelope(&self) -> Option<&Envelope> {
        match &self.phase {
            Phase::Adjourned { envelope, .. } => Some(envelope),
            _ => None,
        }
    }

    /// Why `adjourn` is not to be given now, in words: the Laws (2023) have no adjournment, the
    /// game is over, a computer or a second board takes part, or the control's owner is not the
    /// player to move (A1a: the player to move seals).
    pub(super) fn adjourn_refused(&self) -> Option<String> {
        let w = &self.s.phrases.words;
        if !self.s.rules.adjournment
            || self.phase == Phase::Over
            || self.computer.is_some()
            || self.player.is_some()
        {
            return Some(w.no_adjournment.clone());
        }
        let turn = self.game.pos.turn();
        self.actor()
            .filter(|&a| a != turn && self.sealing.is_none() && !self.adjourned())
            .map(|a| w.not_to_move.replace("{side}", w.color(a)))
    }

    /// `adjourn`: the player to move is to make his sealed move on the board; said again while
    /// it is awaited, and once it is sealed.
    pub(super) fn adjourn_button(&mut self, out: &mut Vec<Event>) {
        if let Some(text) = self.adjourn_refused() {
            self.say(out, text, Priority::Info);
            return;
        }
        let w = &self.s.phrases.words;
        let sealing = |c: Color| w.adjourn_seal.replace("{side}", w.color(c));
        let text = if self.adjourned() {
            w.adjourned.clone()
        } else if let Some(c) = self.sealing {
            sealing(c)
        } else {
            let turn = self.game.pos.turn();
            let text = sealing(turn);
            self.sealing = Some(turn);
            // A1a: until his clock stops he may change his sealed move; no touch binds him, and
            // none is told (the opponent is not to know which piece it is).
            self.turn.touch_unknown = true;
            // What the board showed before is the record: the sealed move is read after it.
            self.agree_on_the_record();
            text
        };
        self.say(out, text, Priority::Info);
    }

    /// The sealed move is complete on the board: it goes into the envelope, not the record;
    /// the sealer's clock stops and his opponent's does not start (A1a).
    pub(super) fn seal(&mut self, m: Move, out: &mut Vec<Event>) {
        let color = self.game.pos.turn();
        let t = self.moving_at.unwrap_or(self.now).min(self.now);
        let (clocks, used) = match &mut self.clock {
            Some(c) => {
                c.halt(t);
                (
                    Some((c.remaining(Color::White, t), c.remaining(Color::Black, t))),
                    Some((c.used(Color::White, t), c.used(Color::Black, t))),
                )
            }
            None => (None, None),
        };
        let move_number = self.game.pos.fullmoves().get();
        self.sealing = None;
        self.phase = Phase::Adjourned {
            envelope: Box::new(Envelope {
                sealer: color,
                sealed: m,
                move_number,
                clocks,
                used,
                draw_offer: self.draw_offer,
            }),
            opening: false,
        };
        self.new_turn();
        self.mismatch = Mismatch::default();
        self.agree_on_the_record();
        self.game.note(format!(
            "Adjourned: {} sealed move {move_number}",
            side_name(color)
        ));
        self.emit(
            out,
            EventKind::Adjourned {
                color,
                move_number,
                white_ms: clocks.map(|c| c.0),
                black_ms: clocks.map(|c| c.1),
            },
        );
        let text = self.s.phrases.words.adjourned.clone();
        self.say(out, text, Priority::Info);
        self.emit_clock(out);
    }

    /// `resume` (confirmed) while the game is adjourned: the envelope is opened once the board
    /// shows the position before the sealed move (A5), at once if it does already.
    pub(super) fn resume_adjourned(&mut self, out: &mut Vec<Event>) {
        if let Phase::Adjourned { opening, .. } = &mut self.phase {
            *opening = true;
        }
        if self.phys.shows(self.game.pos.board()) {
            self.open_envelope(out);
        } else {
            let text = self.s.phrases.words.adjourn_set_up.clone();
            self.say(out, text, Priority::Info);
        }
    }

    /// The board changed while the game is adjourned: once the game is to resume and the
    /// position before the sealed move stands there, the envelope is opened.
    pub(super) fn adjourned_board(&mut self, out: &mut Vec<Event>) {
        let opening = matches!(self.phase, Phase::Adjourned { opening: true, .. });
        if opening && self.phys.shows(self.game.pos.board()) {
            self.open_envelope(out);
        }
    }

    /// A9a: the envelope opened, the sealed move announced and recorded; it is then executed
    /// on the board, and the opponent's clock starts when it stands there (or after the
    /// execution time, as for the computer's move).
    fn open_envelope(&mut self, out: &mut Vec<Event>) {
        if !self.adjourned() {
            return;
        }
        let Phase::Adjourned { envelope, .. } = std::mem::replace(&mut self.phase, Phase::Moving)
        else {
            return;
        };
        self.new_turn();
        let text = self.s.phrases.words.envelope_opened.clone();
        self.say(out, text, Priority::Info);
        self.record_to_execute(envelope.sealed, out);
    }

    /// A game taken up again after the daemon was down, adjourned: the envelope is kept, the
    /// clocks stand as they stood when the move was sealed. False when the envelope does not
    /// fit the position (a record of another version).
    pub(super) fn take_up_adjourned(&mut self, envelope: &Envelope) -> bool {
        let fits =
            envelope.sealer == self.game.pos.turn() && self.game.pos.is_legal(envelope.sealed);
        if !fits {
            return false;
        }
        if let Some(c) = &mut self.clock {
            if let Some((w, b)) = envelope.clocks {
                c.set(Color::White, w, self.now);
                c.set(Color::Black, b, self.now);
            }
            c.halt(self.now);
        }
        self.draw_offer = envelope.draw_offer;
        self.phase = Phase::Adjourned {
            envelope: Box::new(envelope.clone()),
            opening: false,
        };
        true
    }
}
