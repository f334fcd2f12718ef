//! Games: a new game, a game taken up again from the record, and (two boards) the game as the
//! other board's engine has it.

use shakmaty::{Bitboard, ByColor, Chess, Color, Move, Position};

use super::arbiter::{Engine, LastSaid, Mismatch, Phase, Warnings};
use super::clock::Clock;
use super::event::{Event, EventKind, Millis, Priority};
use super::game::{fen_of, Envelope, Game};

/// A game brought back from the record after the daemon was down.
#[derive(Clone, Debug)]
pub struct Resumed {
    pub start: Chess,
    /// The moves, with the clocks after each.
    pub moves: Vec<(Move, Option<(i64, i64)>)>,
    /// Which of them were read from the board afterwards (`Ply::recovered`), by index; a
    /// move past its end was not.
    pub recovered: Vec<bool>,
    pub illegal: ByColor<u32>,
    /// Both clocks as last recorded (they stood while the daemon was down).
    pub clocks: Option<(i64, i64)>,
    /// The scoresheet's notes (`Game::notes`).
    pub notes: Vec<(usize, String)>,
    /// Adjourned: the envelope, the sealed move in it (Appendix A).
    pub adjourned: Option<Envelope>,
}

impl Engine {
    /// Starts a new game from `start`. With `board_holds_it` the physical board is taken to show
    /// the position (a `setup`); otherwise the board stays as it is and must be set up.
    pub fn new_game(
        &mut self,
        t: Millis,
        start: Chess,
        board_holds_it: bool,
        out: &mut Vec<Event>,
    ) {
        self.advance(t, out);
        self.now = self.now.max(t);
        // Whatever the last game held back belongs to it (a slider's mate set up again at once).
        self.settle_pending(out);
        if board_holds_it {
            self.assume_board(&start);
        }
        self.game = Game::new(start);
        self.games_started += 1;
        self.computer_executing = false;
        self.sealing = None;
        self.phase = Phase::Moving;
        self.illegal_counts = ByColor { white: 0, black: 0 };
        self.draw_offer = None;
        self.claim_with_move = None;
        self.win_claim = None;
        self.promo_ahead = None;
        self.touches_before.clear();
        self.mismatch = Mismatch::default();
        self.last_said = LastSaid::Nothing;
        self.last_change = None;
        self.new_turn();
        self.clock = self.s.time_control.clone().map(Clock::new);
        let fen = fen_of(&self.game.pos);
        self.emit(out, EventKind::GameStart { fen });
        let turn = self.game.pos.turn();
        if let Some(clock) = &mut self.clock {
            clock.start(turn, self.now);
            if self.s.wait_for_start {
                clock.pause(self.now);
            }
        }
        self.warnings = Warnings::default();
        self.arm_warnings();
        self.agree_on_the_record();
        self.emit_clock(out);
        if !board_holds_it {
            let text = self.s.phrases.words.new_game.clone();
            self.say(out, text, Priority::Info);
            self.evaluate(out);
        }
        // A position set up already mated, stalemated or dead ends at once.
        if let Some(ending) = self.game.automatic_ending(&self.s.rules) {
            self.end_game(ending, out);
        }
    }

    /// Takes the physical board to show `pos` (until readings say otherwise).
    pub(super) fn assume_board(&mut self, pos: &Chess) {
        let states = self.phys.states_of(pos.board());
        self.deb.reset(&states);
        self.phys.assume(&states);
    }

    /// Takes up a game the record kept while the daemon was down: the position, the clocks as
    /// they stood (no time passed for anyone while it was down), the illegal-move counts. Says
    /// so; the board is then checked against the position (a mismatch is reported as usual).
    /// Moves that are not legal in turn are dropped from that point on (a record from another
    /// version); returns how many were taken.
    pub fn resume(&mut self, t: Millis, game: &Resumed, out: &mut Vec<Event>) -> usize {
        self.advance(t, out);
        self.now = self.now.max(t);
        self.game = Game::new(game.start.clone());
        self.games_started += 1;
        self.computer_executing = false;
        self.sealing = None;
        let mut taken = 0;
        for (i, (m, clocks)) in game.moves.iter().enumerate() {
            if !self.game.pos.is_legal(*m) {
                break;
            }
            self.game.play(*m, self.now);
            if let Some(last) = self.game.plies.last_mut() {
                last.clocks = *clocks;
                last.recovered = game.recovered.get(i).copied().unwrap_or(false);
            }
            taken += 1;
        }
        self.game.notes = game
            .notes
            .iter()
            .filter(|(after, _)| *after <= taken)
            .cloned()
            .collect();
        let pos = self.game.pos.clone();
        self.assume_board(&pos);
        self.phase = Phase::Moving;
        self.illegal_counts = game.illegal;
        self.draw_offer = None;
        self.claim_with_move = None;
        self.win_claim = None;
        self.promo_ahead = None;
        self.touches_before.clear();
        self.mismatch = Mismatch::default();
        self.last_said = if self.game.plies.is_empty() {
            LastSaid::Nothing
        } else {
            LastSaid::Move
        };
        self.last_change = None;
        self.new_turn();
        let turn = self.game.pos.turn();
        self.clock = self.s.time_control.clone().map(|tc| {
            let mut c = Clock::new(tc);
            c.replay_moves(
                &self
                    .game
                    .plies
                    .iter()
                    .map(|p| p.before.turn())
                    .collect::<Vec<_>>(),
            );
            if let Some((w, b)) = game.clocks {
                c.set(Color::White, w, self.now);
                c.set(Color::Black, b, self.now);
            }
            c.start(turn, self.now);
            c
        });
        // Whether a warning was given before is not recorded: a threshold the clock is already
        // below is taken as given (no warning just for coming back).
        self.warnings = Warnings::default();
        self.mark_warned(Color::White);
        self.mark_warned(Color::Black);
        // An adjourned game stays adjourned: its board is not read until it resumes.
        let adjourned = taken == game.moves.len()
            && game
                .adjourned
                .as_ref()
                .is_some_and(|e| self.take_up_adjourned(e));
        self.agree_on_the_record();
        // Nobody heard the board while the daemon was down.
        self.gap_from = Some(self.now);
        self.emit(
            out,
            EventKind::Resumed {
                fen: fen_of(&self.game.pos),
                plies: self.game.plies.len() as u32,
            },
        );
        let w = &self.s.phrases.words;
        let last = if adjourned {
            w.adjourned.clone()
        } else {
            self.last_say().unwrap_or_else(|| w.no_move_yet.clone())
        };
        let text = format!("{}. {last}", w.game_resumed);
        self.say(out, text, Priority::Info);
        self.emit_clock(out);
        self.evaluate(out);
        taken
    }

    /// Two boards: takes the game as `leader` (the board where the last move was made) has it.
    /// A move made there since is to be executed on this board (the game record is the truth,
    /// F2.7); anything else that changed the position (a takeback, a new game) is to be put
    /// right on this board. With `clock`, this board's engine keeps the clock from now on (its
    /// player has the move); without, it has none (only one engine runs the clock).
    pub fn follow(&mut self, t: Millis, leader: &Engine, clock: bool, out: &mut Vec<Event>) {
        self.advance(t, out);
        self.now = self.now.max(t);
        let before = self.game.plies.len();
        // This board's record is the start of the leader's (the same game, no takeback since).
        let prefix = self.games_started == leader.games_started
            && self
                .game
                .plies
                .iter()
                .zip(&leader.game.plies)
                .all(|(a, b)| a.m == b.m);
        let one_more = prefix && leader.game.plies.len() == before + 1;
        let unchanged = prefix && leader.game.plies.len() == before;
        self.game = leader.game.clone();
        self.games_started = leader.games_started;
        self.takebacks = leader.takebacks;
        self.computer_executing = false;
        self.sealing = None;
        self.computer = leader.computer.clone();
        self.illegal_counts = leader.illegal_counts;
        self.draw_offer = leader.draw_offer;
        self.last_said = leader.last_said.clone();
        self.voice = leader.voice;
        self.clock = if clock { leader.clock.clone() } else { None };
        self.warnings = leader.warnings;
        self.agree_on_the_record();
        if leader.phase == Phase::Over {
            self.phase = Phase::Over;
            self.new_turn();
            return;
        }
        if unchanged {
            if self.phase == Phase::Over {
                self.phase = Phase::Moving;
            }
            return;
        }
        self.new_turn();
        self.mismatch.reported = None;
        // A link back before this move does not vouch for it.
        self.relinked = false;
        self.phase = match (one_more, self.game.plies.last()) {
            (true, Some(ply)) => Phase::Replicating { m: ply.m },
            _ => Phase::Restoring {
                diff: (Bitboard::EMPTY, Bitboard::EMPTY),
            },
        };
        self.evaluate(out);
    }
}
