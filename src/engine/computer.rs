//! Playing against the computer: a UCI engine that the daemon runs (`opponent`) plays one
//! colour, the player the other, on one physical board.
//!
//! The engine here stays pure. It says when the computer is to move and what the UCI engine
//! must be told ([`Engine::computer_request`]); the daemon answers with the computer's move
//! ([`Engine::computer_move`]), which is recorded and announced like any move, and which the
//! player then executes on the board for the computer, checked as a move made on the other
//! board of two-board play is (`Phase::Replicating`: lifting the computer's pieces is no touch;
//! a wrong execution is told "Auf Ihrem Brett: ..." with the squares to put right; `replicated`
//! when it stands). Every request and answer carries a [`PositionKey`], so that an answer for a
//! position that is gone (a takeback, a new game) is dropped.
//!
//! # The clocks (and why, against Appendix F2.3)
//!
//! F2.3 starts the opponent's clock when a move is *executed* on the board and announced. The
//! computer cannot execute its move: the player does it for it. So:
//!
//! - the computer's clock runs from the player's completed move until its move is given
//!   ([`Engine::computer_move`]): the time it thinks;
//! - while the player executes the computer's move, no clock runs: the move is announced but
//!   not yet executed (F2.3 b), and the time the player needs to listen, find the pieces and
//!   place them is the computer's execution, not his reflection;
//! - the player's clock starts when the computer's move stands on the board (the `replicated`
//!   event): then the move is executed and announced, as F2.3 asks; or, at the latest,
//!   `Settings::execution_ms` after the move was announced (the move said again), so that a
//!   move left unexecuted is no free time to think.
//!
//! A player could think while executing; but a blind player executing by touch, and a sighted
//! player reading the move from a speaker, would otherwise lose time the computer does not, and
//! a slow, correct execution would cost the same as a fast one. The execution is checked, so
//! this time cannot be used for anything but putting the computer's move on the board.

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};

use super::arbiter::{Engine, Phase};
use super::decoder::recognise;
pub use super::event::{Asked, PositionKey};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::fen_of;
use super::rules::Mode;

/// The clocks as UCI's `go` gives them (ms), when a time control is set.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UciClocks {
    pub wtime: i64,
    pub btime: i64,
    pub winc: i64,
    pub binc: i64,
    /// Moves to the next time control of the side to move, when its period has a move count
    /// (UCI `movestogo`).
    pub movestogo: Option<u32>,
    /// The longest the computer may think on this move (ms): twice its average time a move
    /// (its time over the moves to go, 20 when the period has no count) and its increment,
    /// never its whole clock. The engine manages its own time below that; the daemon stops a
    /// search that goes past it.
    pub budget_ms: i64,
}

impl UciClocks {
    /// The budget of a move: twice `own`'s share over the moves to go, and the increment; at
    /// most `own` less half a second, at least 100 ms.
    pub fn budget(own: i64, inc: i64, movestogo: Option<u32>) -> i64 {
        let share = own / i64::from(movestogo.unwrap_or(20).clamp(1, 40));
        (2 * share + inc).min(own.saturating_sub(500)).max(100)
    }

    /// The `go` command's clock arguments: "wtime 300000 btime 300000 winc 2000 binc 2000".
    pub fn go_args(&self) -> String {
        let mut s = format!(
            "wtime {} btime {} winc {} binc {}",
            self.wtime.max(0),
            self.btime.max(0),
            self.winc.max(0),
            self.binc.max(0)
        );
        if let Some(n) = self.movestogo {
            s.push_str(&format!(" movestogo {n}"));
        }
        s
    }
}

/// What the daemon sends to the UCI engine for the computer's move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputerRequest {
    pub key: PositionKey,
    /// The game's start position in FEN.
    pub start_fen: String,
    /// The moves since, in UCI notation (castling as the king's move, `e1g1`).
    pub moves_uci: Vec<String>,
    /// The clocks, when a time control is set.
    pub clocks: Option<UciClocks>,
}

/// How long the computer has the move before "Computer denkt" is said.
pub const THINKING_TOLD_MS: Millis = 3000;

/// The FEN of the standard start position.
const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

impl ComputerRequest {
    /// The UCI `position` command for this request: `position startpos moves e2e4 ...` or
    /// `position fen FEN moves ...`.
    pub fn position_command(&self) -> String {
        let mut s = if self.start_fen == START_FEN {
            "position startpos".to_string()
        } else {
            format!("position fen {}", self.start_fen)
        };
        if !self.moves_uci.is_empty() {
            s.push_str(" moves");
            for m in &self.moves_uci {
                s.push(' ');
                s.push_str(m);
            }
        }
        s
    }
}

/// The daemon's answer to a `computer_ask` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComputerAnswer {
    /// The engine's best move for the player.
    Hint(Move),
    /// The score, from the side to move's view, as UCI gives it: centipawns, or mate in N
    /// moves (negative: the side to move is mated).
    Evaluation { cp: Option<i32>, mate: Option<i32> },
}

impl Engine {
    /// Plays against the computer: `Some((color, pgn_name))` (`pgn_name` e.g. "Stockfish 16,
    /// Elo 1500": the PGN's White or Black tag for that colour), or `None` (no computer).
    /// May be set before or after a game is started or resumed.
    pub fn set_computer(&mut self, computer: Option<(Color, String)>) {
        self.computer = computer;
        self.computer_since = self.computer_to_move().then_some(self.now);
    }

    /// The computer's colour, if the player plays against the computer.
    pub fn computer(&self) -> Option<Color> {
        self.computer.as_ref().map(|(c, _)| *c)
    }

    /// The name the PGN gives the computer.
    pub fn computer_name(&self) -> Option<&str> {
        self.computer.as_ref().map(|(_, n)| n.as_str())
    }

    /// The key of the position as it stands.
    pub fn position_key(&self) -> PositionKey {
        PositionKey::new(self.games_started, self.game.plies.len(), self.takebacks)
    }

    /// The computer has the move and its move is not given yet (the game goes on, nothing is
    /// being put right).
    pub(super) fn computer_to_move(&self) -> bool {
        self.computer() == Some(self.game.pos.turn()) && self.phase == Phase::Moving
    }

    /// `Some(request)` when the computer has the move and no move of its is pending: what the
    /// daemon sends to the UCI engine. Not while the clocks are paused (a move asked for before
    /// is still taken), nor before the board shows the start of a new game (the computer's
    /// first move would have nowhere to go). The same position gives the same key: the daemon
    /// asks once for each key.
    pub fn computer_request(&self, now: Millis) -> Option<ComputerRequest> {
        if !self.computer_to_move() {
            return None;
        }
        if self.clock.as_ref().is_some_and(|c| c.is_paused()) {
            return None;
        }
        if self.game.plies.is_empty() && !self.phys.shows(self.game.pos.board()) {
            return None;
        }
        let now = now.max(self.now);
        let clocks = self.clock.as_ref().map(|c| {
            let turn = self.game.pos.turn();
            UciClocks {
                wtime: c.remaining(Color::White, now),
                btime: c.remaining(Color::Black, now),
                winc: c.increment(Color::White),
                binc: c.increment(Color::Black),
                movestogo: c.moves_to_go(turn),
                budget_ms: UciClocks::budget(
                    c.remaining(turn, now),
                    c.increment(turn),
                    c.moves_to_go(turn),
                ),
            }
        });
        Some(ComputerRequest {
            key: self.position_key(),
            start_fen: fen_of(&self.game.start),
            moves_uci: self
                .game
                .plies
                .iter()
                .map(|p| recognise::uci(p.m))
                .collect(),
            clocks,
        })
    }

    /// The computer's move for the position `key`: recorded, announced like a move, the
    /// computer's clock stopped at `t`; then the board must show it (the player executes it:
    /// guided when he does it wrongly); the player's clock starts when it stands there. Returns
    /// false (and does nothing with the move; time passes up to `t` all the same) if `key` is
    /// stale, the computer does not have the move, or the move is illegal.
    pub fn computer_move(
        &mut self,
        t: Millis,
        key: PositionKey,
        m: Move,
        out: &mut Vec<Event>,
    ) -> bool {
        self.advance(t, out);
        if !self.computer_to_move() || key != self.position_key() || !self.game.pos.is_legal(m) {
            return false;
        }
        self.record_to_execute(m, out);
        true
    }

    /// A move not made on this board (the computer's, or the sealed move of an adjourned game)
    /// is recorded and announced, the mover's clock stopped; then the board must show it (the
    /// player executes it: guided when he does it wrongly); the opponent's clock starts when it
    /// stands there, or after [`Settings::execution_ms`].
    ///
    /// [`Settings::execution_ms`]: super::Settings::execution_ms
    pub(super) fn record_to_execute(&mut self, m: Move, out: &mut Vec<Event>) {
        // Not the player's: no touch is judged.
        self.turn.touch_unknown = true;
        self.computer_moving = true;
        self.record(m, false, out);
        self.computer_moving = false;
        if self.phase == Phase::Over {
            return;
        }
        // The player's lifts are the execution of this move, not a promotion's swap.
        self.turn.swap = None;
        self.relinked = false;
        self.phase = Phase::Replicating { m };
        self.computer_executing = true;
        self.computer_since = None;
        self.execution_due = (self.clock.is_some() && self.s.execution_ms > 0)
            .then(|| self.now.saturating_add(self.s.execution_ms));
        self.evaluate(out);
    }

    /// The computer has had the move for [`THINKING_TOLD_MS`]: "Computer denkt", once (told
    /// later when it cannot be asked yet: the board not set up, the clocks paused).
    pub(super) fn tell_thinking(&mut self, out: &mut Vec<Event>) {
        self.computer_since = None;
        if self.computer_request(self.now).is_some() {
            let text = self.s.phrases.words.computer_thinking.clone();
            self.say(out, text, Priority::Info);
        } else if self.computer_to_move() {
            self.computer_since = Some(self.now);
        }
    }

    /// The computer's move has waited [`Settings::execution_ms`] to be executed: the player's
    /// clock starts, and the move is said again.
    ///
    /// [`Settings::execution_ms`]: super::Settings::execution_ms
    pub(super) fn execution_over(&mut self, out: &mut Vec<Event>) {
        self.execution_due = None;
        let Phase::Replicating { m } = self.phase else {
            return;
        };
        if !self.computer_executing {
            return;
        }
        let turn = self.game.pos.turn();
        let started = self.clock.as_mut().is_some_and(|c| {
            let start = c.running().is_none() && !c.is_paused();
            if start {
                c.start(turn, self.now);
            }
            start
        });
        if started {
            self.emit_clock(out);
            let text = self.s.phrases.on_your_board(m);
            self.say(out, text, Priority::Info);
        }
    }

    /// The computer's move stands on the board: the player's turn begins, and his clock.
    pub(super) fn computer_move_executed(&mut self, out: &mut Vec<Event>) {
        self.new_turn();
        let turn = self.game.pos.turn();
        if let Some(c) = &mut self.clock {
            if c.running().is_none() && !c.is_paused() {
                c.start(turn, self.now);
            }
        }
        self.emit_clock(out);
    }

    /// The daemon's answer to a `computer_ask` (hint or evaluation), spoken; an answer for a
    /// position that is gone is dropped.
    pub fn computer_answer(
        &mut self,
        t: Millis,
        key: PositionKey,
        answer: ComputerAnswer,
        out: &mut Vec<Event>,
    ) {
        self.advance(t, out);
        if key != self.position_key() || self.phase == Phase::Over {
            return;
        }
        let pos = self.game.pos.clone();
        let p = &self.s.phrases;
        let text = match answer {
            ComputerAnswer::Hint(m) => {
                if !pos.is_legal(m) {
                    return;
                }
                let san = SanPlus::from_move(pos.clone(), m);
                format!("{}: {}", p.words.hint, p.announce(&san, m))
            }
            ComputerAnswer::Evaluation { cp, mate } => p.evaluation(pos.turn(), cp, mate),
        };
        self.say(out, text, Priority::Query);
    }

    /// `hint` or `evaluate` asked: the daemon is asked to search (a `computer_ask` event), or
    /// the reason it is refused is said. Returns the text said (empty when the answer follows).
    pub(super) fn ask_computer(&mut self, what: Asked, out: &mut Vec<Event>) -> String {
        let w = &self.s.phrases.words;
        let refusal = if self.s.mode == Mode::Tournament {
            Some(w.training_only.clone())
        } else if self.computer.is_none() {
            Some(w.no_computer.clone())
        } else if let Some(e) = self.game.ending {
            // The game is over: its result instead.
            Some(e.say(&self.s.phrases))
        } else if what == Asked::Hint && self.computer_to_move() {
            // A hint is for the player's move: the computer is thinking ("Schwarz am Zug").
            let turn = self.game.pos.turn();
            Some(format!("{} {}", w.color(turn), w.to_move))
        } else {
            None
        };
        if let Some(text) = refusal {
            let text = crate::words::sentences(&text);
            self.say(out, text.clone(), Priority::Query);
            return text;
        }
        let key = self.position_key();
        self.emit(out, EventKind::ComputerAsk { what, key });
        String::new()
    }

    /// `switch`: a new game with the colours swapped (the computer plays the other colour).
    pub(super) fn switch_colours(&mut self, out: &mut Vec<Event>) -> bool {
        let Some((color, name)) = self.computer.take() else {
            return false;
        };
        self.computer = Some((!color, name));
        self.new_game(self.now, Chess::default(), false, out);
        let text = self
            .s
            .phrases
            .words
            .you_play
            .replace("{side}", self.s.phrases.words.color(color));
        self.say(out, text, Priority::Info);
        true
    }
}
