//! The arbiter: one game on one board. It turns debounced square changes and button presses
//! into game events the way an arbiter watching the board would (Art. 4, 5, 6, 7, 9 and
//! Appendix F2.2-F2.3).
//!
//! Its state is one of a few named [`Phase`]s, and each input has one transition:
//! [`Engine::reading`] (through the debouncer, whole batches of simultaneous changes),
//! [`Engine::advance`] (deadlines: the clock, a held decision, a mismatch), [`Engine::press`],
//! [`Engine::command`], [`Engine::link`], [`Engine::new_game`], [`Engine::resume`] and
//! [`Engine::follow`].
//!
//! What the engine holds back for a moment (a slider that may slide on, a promotion whose
//! piece is not known, an illegal move that must stand before it counts, a takeback) is a
//! [`Hold`]. Any input that cannot continue it settles it first, at the time the board came to
//! show it (Art. 4.6, F2.3: a move counts at its release, not when the reply came), and the
//! input is then read in the new position: an opponent who answers within 100 ms loses nothing.
//! When the held piece is lifted again, the board may be the mover sliding on or the opponent
//! taking it: the hold is kept as an alternative (`alt`) and the touches wait, until the board
//! tells which.
//!
//! A board that nothing explains is read as a short sequence of legal moves when exactly one
//! explains it (moves made while readings were lost, or too fast to be seen one by one): the
//! moves are taken as `recovered`.

use shakmaty::{Bitboard, ByColor, CastlingSide, Chess, Color, Move, Position, Role, Square};

use super::clock::{Clock, ClockSwitch};
use super::decoder::debounce::{Change, Debouncer};
use super::decoder::log::{Seen, Trace};
use super::decoder::physical::Physical;
use super::decoder::recognise;
use super::decoder::stories::{self, Gap};
use super::event::{Event, EventKind, Millis, Priority, TouchRule};
use super::game::{fen_of, ply_number, Envelope, Game};
use super::input::{Command, LinkState, PortError, Reading, VoiceLevel};
use super::rules::Mode;
use super::settings::Settings;
use super::turn::{Swap, Touch, Turn};

/// What the arbiter is waiting for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// The player to move has the move: the board shows the position, or his move under way.
    Moving,
    /// The board shows something the arbiter holds back for a moment.
    Holding(Hold),
    /// A move was refused (illegal, or against touch-move): the board must show the game's
    /// position again. `diff` is how the board differed when it was refused.
    Restoring { diff: (Bitboard, Bitboard) },
    /// Two boards: the opponent's move, made on his board, is to be executed on this one
    /// (Appendix F2.1).
    Replicating { m: Move },
    /// The game is over; setting up the initial position starts the next.
    Over,
    /// The game is adjourned (Appendix A): the sealed move is in the envelope, the clocks
    /// stand, the board is not read until the game resumes. `opening`: it is to resume once
    /// the board shows the position before the sealed move (A5).
    Adjourned {
        envelope: Box<Envelope>,
        opening: bool,
    },
}

/// A decision held back, since when the board showed it, and when it is taken without more
/// input (`None`: when the clock is pressed, Art. 6.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hold {
    pub held: Held,
    pub since: Millis,
    pub due: Option<Millis>,
    /// A ruling already put off once because readings still to come might explain the board.
    pub deferred: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Held {
    /// A legal move on the board: a queen, rook or bishop that could still slide on, or any
    /// move waiting for the clock button.
    Move(Move),
    /// A pawn on its last rank whose new piece is not known yet (any of the promotions).
    Promotion(Move),
    /// An illegal move standing on the board (tournament).
    Illegal(Square, Square),
    /// A legal move against touch-move (tournament): refused once it has stood, or the board
    /// went on (a late reading may still tell another story).
    Breach(Move),
    /// Casual play: the board shows an earlier position of the game.
    Takeback(Takeback),
}

/// What putting pieces back means.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Takeback {
    /// The rook move just made was the first half of castling.
    CastleAfterRook(Move),
    /// Back to the position before ply `k` of the record.
    To(usize),
}

/// Low-time warnings given, per player (bit i: the i-th threshold of `Settings::warnings`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Warnings {
    pub(super) warned: ByColor<u32>,
}

impl Default for Warnings {
    fn default() -> Warnings {
        Warnings {
            warned: ByColor { white: 0, black: 0 },
        }
    }
}

/// The agreed point: how many plies of the record every explanation of the board agrees on,
/// and since when the observation log runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Agreed {
    pub plies: usize,
    pub t: Millis,
}

/// The arbiter's state at the start of a turn since the agreed point: what a correction goes
/// back to (the clock with every penalty given since, the illegal moves counted, offers).
#[derive(Clone, Debug)]
pub(super) struct Checkpoint {
    pub plies: usize,
    pub clock: Option<Clock>,
    pub illegal_counts: ByColor<u32>,
    pub draw_offer: Option<Color>,
    pub claim_with_move: Option<Color>,
    pub win_claim: Option<Color>,
    pub warnings: Warnings,
}

/// A ruling given since the agreed point: what (`illegal`, `touch_move`), in which turn (the
/// plies of the record then), and the placement it was given on (an index into the log).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Ruling {
    pub kind: &'static str,
    pub plies: usize,
    pub placed: Option<usize>,
}

/// The nodes left to search with, and when it was last filled.
#[derive(Copy, Clone, Debug)]
pub(super) struct Credit {
    pub(super) nodes: usize,
    pub(super) at: Millis,
}

/// A search that found no story: where, and how much the log must grow before the next.
#[derive(Copy, Clone, Debug)]
pub(super) struct Fruitless {
    pub(super) agreed: Agreed,
    pub(super) log_len: usize,
    pub(super) step: usize,
    /// What else the search was given: the board heard no differently since, it finds nothing
    /// again (time going on only makes readings owed dearer).
    pub(super) heard: (usize, usize, Option<(Square, bool)>),
}

/// The mismatch guidance: when it is due, what was said, and whether "restored" is owed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Mismatch {
    pub due: Option<Millis>,
    /// Since when nothing explains the board (in the player to move's turn).
    pub since: Option<Millis>,
    pub reported: Option<(Bitboard, Bitboard)>,
    /// An illegal move or a mismatch was reported: say so when the board is right again.
    pub owe_restored: bool,
}

/// What was said last of the game's moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum LastSaid {
    Nothing,
    /// The last move's announcement (made again from the record when asked: it is asked for
    /// far less often than a move is made).
    Move,
    /// Another sentence: a correction's.
    Text(String),
}

/// A story is agreed at the latest once it is this many plies old...
pub const AGREE_AFTER_PLIES: usize = 12;
/// ... or the log since the agreed point is this long.
pub const AGREE_AFTER_OBSERVATIONS: usize = 600;
/// A log this long (a piece held for an hour while a switch chatters) takes nothing more and
/// tells no stories until a move is agreed: the board is read as it stands, in a time that
/// does not grow with the length of the turn.
pub const LOG_BOUND: usize = 4 * AGREE_AFTER_OBSERVATIONS;

/// The engine: one game on one board. Pure and synchronous: every input carries its time, and
/// the caller asks [`Engine::next_deadline`] when to call [`Engine::advance`] next.
pub struct Engine {
    pub(super) s: Settings,
    pub(super) deb: Debouncer,
    pub(super) game: Game,
    pub(super) clock: Option<Clock>,
    pub(super) now: Millis,
    pub(super) phase: Phase,
    /// The debounced board.
    pub(super) phys: Physical,
    /// The board's last change: a square, and whether it was a placement.
    pub(super) last_change: Option<(Square, bool)>,
    pub(super) turn: Turn,
    /// A promotion's piece chosen ahead, in the opponent's turn, and the player whose it is:
    /// by his own keypad, or on a shared control while the opponent, who could not promote,
    /// was still moving. It is his next move's.
    pub(super) promo_ahead: Option<(Color, Role)>,
    /// The pieces touched in the last turn and put back (not the move's), with who touched
    /// each: the `touches` question asks for them while the turn after it goes on.
    pub(super) touches_before: Vec<(Touch, Color)>,
    /// A hold whose piece was lifted again: the board may still show it was complete.
    pub(super) alt: Option<Hold>,
    pub(super) mismatch: Mismatch,
    pub(super) illegal_counts: ByColor<u32>,
    pub(super) draw_offer: Option<Color>,
    /// A draw claim made before the move that is to make it (9.2a, 9.3a): whose.
    pub(super) claim_with_move: Option<Color>,
    /// Blitz (Appendix C3): the player who may claim the win after the opponent's illegal
    /// move, until he makes his own move.
    pub(super) win_claim: Option<Color>,
    /// What was said last of the game's moves (`last` says it again).
    pub(super) last_said: LastSaid,
    /// The time of the last event, so that late decisions keep events in time order.
    pub(super) last_emit: Millis,
    /// A command that waits for its confirmation, and since when.
    pub(super) unconfirmed: Option<(Command, Millis)>,
    /// The clock button is being pressed: a move completes now.
    pub(super) pressing: bool,
    /// Whose command is being carried out, when the control it came from belongs to a player
    /// (the keypad of a blind player): see [`Engine::command_by`].
    pub(super) by: Option<Color>,
    /// The square the player explores the board from (see `explore`), once he has moved it;
    /// and whether he said `explore` (a step from the socket alone begins no exploration, so
    /// that the keypad's own mode and this one stay together).
    pub(super) cursor: Option<Square>,
    pub(super) exploring: bool,
    pub(super) warnings: Warnings,
    pub(super) voice: VoiceLevel,
    /// Games started so far (a new game, or a game restored): the record's writer follows it.
    pub(super) games_started: u64,
    /// Two boards: the player who plays on this board (his opponent plays on the other).
    pub(super) player: Option<Color>,
    /// The link came back: the board's next report may show a capture executed meanwhile.
    pub(super) relinked: bool,
    /// The board's link is lost, silent or not there yet: what it shows is not what is on it.
    pub(super) link_down: bool,
    /// The link came back (or the board was first connected): its next reading that changes
    /// something reports the board after a gap.
    pub(super) gap_pending: bool,
    /// The time of the reading that reported the board after a gap: the changes it made are
    /// the first batch due after it.
    pub(super) gap_reading: Option<Millis>,
    /// The changes being read (kept, not made anew for every batch).
    pub(super) batch: Vec<Change>,
    /// Playing against the computer: its colour and its name in the PGN.
    pub(super) computer: Option<(Color, String)>,
    /// The computer's move is being recorded: its clock stops, the player's does not start.
    pub(super) computer_moving: bool,
    /// The computer's move is being executed on the board (`Phase::Replicating`): the player's
    /// clock starts when it stands there.
    pub(super) computer_executing: bool,
    /// Since when the computer has had the move without answering, until "Computer denkt" is
    /// said (a few seconds on).
    pub(super) computer_since: Option<Millis>,
    /// When the player's clock starts though the computer's move is not executed yet
    /// (`Settings::execution_ms` after it was announced).
    pub(super) execution_due: Option<Millis>,
    /// Appendix A1: `adjourn` was given, and this player's next move is his sealed move.
    pub(super) sealing: Option<Color>,
    /// Takebacks made (a position's key: an answer for a position taken back is dropped).
    pub(super) takebacks: u64,
    /// What the board was seen doing since the agreed point, in time order: the stories of
    /// the decoder are read from it.
    pub(super) log: Vec<Seen>,
    pub(super) agreed: Agreed,
    /// The state at the start of each turn since the agreed point, oldest first.
    pub(super) checkpoints: Vec<Checkpoint>,
    /// The rulings given since the agreed point.
    pub(super) rulings: Vec<Ruling>,
    /// Plies recorded as the board showed them, one after the other, since a story was last
    /// taken: after two, the agreed point follows the record.
    pub(super) plain_run: u32,
    /// The agreed point does not follow the record before this time: a move recorded may
    /// still be part of a castling whose other readings are late (see
    /// [`Engine::in_a_castling`]).
    pub(super) agree_after: Millis,
    /// Nor before this time: a story cheaper than the record's told its moves otherwise, if
    /// not by the margin a correction wants (the readings to come may still tell them apart).
    pub(super) rival_until: Millis,
    /// Nor before the record has this many plies: a story was taken that a rival as cheap,
    /// ending elsewhere, told otherwise (a rook and a queen that swapped squares while the
    /// board was not heard), and the moves after it may still tell them apart (the first
    /// move only one of them can make), read again from before it.
    pub(super) rival_plies: usize,
    /// The record as it stood (its plies) at this time would have been agreed on but for
    /// `rival_plies`: it is, when the board is lost before the next move (the stories from
    /// before the gap to come would grow too dear to be found).
    pub(super) rival_held: Option<(usize, Millis)>,
    /// A move being recorded was complete at this time (a story's move taken afterwards): its
    /// clock is charged to then.
    pub(super) moving_at: Option<Millis>,
    /// The moves being recorded are those of a correction.
    pub(super) correcting: bool,
    /// A move against touch-move is being refused (its hold is over).
    pub(super) refusing: bool,
    /// The times since the agreed point when the board was not heard (for the stories).
    pub(super) gaps: Vec<Gap>,
    /// The board is not heard since this time (its link lost, or the daemon was down).
    pub(super) gap_from: Option<Millis>,
    /// When the board last reported its whole board (the last few, since the agreed point).
    pub(super) reports: Vec<Millis>,
    /// The last search the board's going on asked for found no story (revise.rs).
    pub(super) fruitless: Option<Fruitless>,
    /// The nodes the stories may still be searched with (revise.rs).
    pub(super) credit: std::cell::Cell<Credit>,
    /// The cheapest stories of the last search, from this agreed point (revise.rs).
    pub(super) open: (Agreed, Vec<Vec<Move>>),
    /// The point agreed before the last, and what the last agreement forgot since: read again
    /// when the board tells no plain story from the agreed point (revise.rs).
    pub(super) prior: Option<Prior>,
}

/// The point agreed before the last, and what came after it that the last agreement forgot.
#[derive(Clone, Debug, Default)]
pub(super) struct Prior {
    agreed: Agreed,
    log: Vec<Seen>,
    gaps: Vec<Gap>,
    reports: Vec<Millis>,
    checkpoints: Vec<Checkpoint>,
    rulings: Vec<Ruling>,
}

impl Engine {
    /// What was said last of the game's moves, to say again.
    pub(super) fn last_say(&self) -> Option<String> {
        match &self.last_said {
            LastSaid::Nothing => None,
            LastSaid::Move => self
                .game
                .plies
                .last()
                .map(|p| self.s.phrases.announce(&p.san, p.m)),
            LastSaid::Text(text) => Some(text.clone()),
        }
    }

    pub fn new(s: Settings) -> Engine {
        Engine {
            deb: Debouncer::new(s.debounce_ms),
            game: Game::new(Chess::default()),
            clock: None,
            now: 0,
            phase: Phase::Moving,
            phys: Physical::default(),
            last_change: None,
            turn: Turn::default(),
            promo_ahead: None,
            touches_before: Vec::new(),
            alt: None,
            mismatch: Mismatch::default(),
            illegal_counts: ByColor { white: 0, black: 0 },
            draw_offer: None,
            claim_with_move: None,
            win_claim: None,
            last_said: LastSaid::Nothing,
            last_emit: 0,
            unconfirmed: None,
            pressing: false,
            by: None,
            cursor: None,
            exploring: false,
            warnings: Warnings::default(),
            voice: s.voice,
            games_started: 0,
            player: None,
            relinked: false,
            link_down: false,
            gap_pending: false,
            gap_reading: None,
            batch: Vec::new(),
            computer: None,
            computer_moving: false,
            computer_executing: false,
            computer_since: None,
            execution_due: None,
            sealing: None,
            takebacks: 0,
            log: Vec::new(),
            agreed: Agreed::default(),
            checkpoints: Vec::new(),
            rulings: Vec::new(),
            plain_run: 0,
            agree_after: 0,
            rival_until: 0,
            rival_plies: 0,
            rival_held: None,
            moving_at: None,
            correcting: false,
            refusing: false,
            gaps: Vec::new(),
            gap_from: None,
            reports: Vec::new(),
            fruitless: None,
            credit: Default::default(),
            open: Default::default(),
            prior: None,
            s,
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.s
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game stands: over, or adjourned (the board is not read for moves).
    pub(super) fn standing(&self) -> bool {
        matches!(self.phase, Phase::Over | Phase::Adjourned { .. })
    }

    /// The game is adjourned: the move is sealed, the game not resumed yet.
    pub(super) fn adjourned(&self) -> bool {
        matches!(self.phase, Phase::Adjourned { .. })
    }

    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }

    /// Takes new settings (the config read again): words, announcements, rules and modes at
    /// once; a new time control and debounce time from the next game and the next start.
    pub fn reconfigure(&mut self, s: Settings) {
        self.s = s;
        self.arm_warnings();
    }

    /// Two boards: who plays on this board. While his opponent has the move, this board is only
    /// watched (it must keep showing the position); the opponent's move is then executed here.
    pub fn set_player(&mut self, player: Option<Color>) {
        self.player = player;
    }

    pub fn player(&self) -> Option<Color> {
        self.player
    }

    /// The opponent has the move, and makes it on his own board, or the computer has it and
    /// is thinking: this board is only watched.
    pub(super) fn passive(&self) -> bool {
        let turn = self.game.pos.turn();
        matches!(self.phase, Phase::Moving | Phase::Holding(_))
            && (self.player.is_some_and(|p| p != turn)
                || self.computer.as_ref().is_some_and(|(c, _)| *c == turn))
    }

    /// How many games have been started (new or restored); a new game changes it.
    pub fn games_started(&self) -> u64 {
        self.games_started
    }

    pub fn illegal_count(&self, c: Color) -> u32 {
        self.illegal_counts[c]
    }

    /// Whose clock runs, if one does.
    pub fn running_clock(&self) -> Option<Color> {
        self.clock.as_ref().and_then(|c| c.running())
    }

    /// Both clocks at `now`, if there is a clock.
    pub fn clocks(&self, now: Millis) -> Option<(i64, i64)> {
        self.clock.as_ref().map(|c| {
            (
                c.remaining(Color::White, now),
                c.remaining(Color::Black, now),
            )
        })
    }

    /// The game record as PGN.
    pub fn pgn(&self) -> String {
        self.pgn_with(&[])
    }

    /// The game in PGN with the config's tags, the game's time control (a new one in the
    /// config is the next game's) and `extra` (the date, which the engine does not know);
    /// `extra` wins over the config's.
    pub fn pgn_with(&self, extra: &[(&str, String)]) -> String {
        let mut tags = super::game::tag_set(
            &self.s.pgn_tags,
            extra,
            self.clock.as_ref().map(|c| c.time_control().to_string()),
        );
        // The computer's side is named by the computer, whatever the config says.
        if let Some((color, name)) = &self.computer {
            let key = super::event::side_name(*color);
            tags.retain(|(k, _)| *k != key);
            tags.push((key, name.clone()));
        }
        self.game.to_pgn(&tags)
    }

    pub(super) fn emit(&mut self, out: &mut Vec<Event>, kind: EventKind) {
        // The scoresheet notes claims and penalties (F2.5).
        if let Some(note) = kind.scoresheet_note() {
            self.game.note(note);
        }
        let t = self.now.max(self.last_emit);
        self.last_emit = t;
        out.push(Event { t, kind });
    }

    /// Runs `f` as if it were time `t` (no earlier than the last event, no later than now):
    /// a decision taken late is dated when it happened.
    pub(super) fn at<R>(&mut self, t: Millis, f: impl FnOnce(&mut Engine) -> R) -> R {
        let now = self.now;
        self.now = t.max(self.last_emit).min(now);
        let r = f(self);
        self.now = now;
        r
    }

    /// Starts a new turn: nothing touched, nothing held.
    /// The player a command or a button acts for, when it is known: the owner of the control it
    /// came from, or, against the computer, the player. `None`: a shared control, which acts
    /// for the player to move.
    pub(super) fn actor(&self) -> Option<Color> {
        self.by.or_else(|| self.computer.as_ref().map(|(c, _)| !*c))
    }

    /// The piece a promotion takes: as chosen (in this turn, or ahead), else the default.
    pub(super) fn promotion_piece(&self) -> Role {
        self.promotion_chosen().unwrap_or(self.s.promotion_default)
    }

    /// The piece the player to move chose for a promotion, in this turn or ahead.
    pub(super) fn promotion_chosen(&self) -> Option<Role> {
        let turn = self.game.pos.turn();
        let ahead = self.promo_ahead.filter(|(c, _)| *c == turn).map(|(_, r)| r);
        self.turn.promo_choice.or(ahead)
    }

    pub(super) fn new_turn(&mut self) {
        self.turn.reset();
        self.alt = None;
        self.mismatch.due = None;
        self.execution_due = None;
        self.computer_since = self.computer_to_move().then_some(self.now);
        if let Phase::Holding(_) = self.phase {
            self.phase = Phase::Moving;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Inputs (and in `games`: a new game, a game resumed, a game followed on another board)

    /// Lets simulated time pass up to `t`, handling everything that falls due on the way.
    pub fn advance(&mut self, t: Millis, out: &mut Vec<Event>) {
        while let Some((due, what)) = self.next_due() {
            if due > t {
                break;
            }
            self.now = self.now.max(due);
            self.on_due(what, out);
        }
        self.now = self.now.max(t);
    }

    /// A raw reading from the board at time `t`.
    pub fn reading(&mut self, t: Millis, r: Reading, out: &mut Vec<Event>) {
        self.advance(t, out);
        if !self.phys.ids() && r.names_pieces() {
            // The board names its pieces, which the engine learns from its first reading: the
            // pieces it took to stand by occupancy alone (at start-up, a resumed game) are the
            // game's, named, so that naming them is no change of the board.
            let board = self.game.pos.board();
            self.phys.name_pieces(board);
            self.deb
                .rename(|sq, state| super::decoder::physical::named(board, sq, state));
        }
        if self.gap_pending {
            // The first reading after the link came back: the board as it is now, after
            // whatever was done while nobody saw it (nothing, when it shows no change).
            let changes = match &r {
                Reading::Square(sq, state) => self.deb.raw(*sq) != *state,
                Reading::Frame(states) => states
                    .iter()
                    .enumerate()
                    .any(|(i, st)| self.deb.raw(Square::new(i as u32)) != *st),
            };
            self.gap_pending = false;
            if changes {
                self.gap_reading = Some(t);
            } else if let Some(from) = self.gap_from.take() {
                // No change shows, yet a move may have been made unseen: a capture by the
                // piece in the hand shows nothing on a square that stays full.
                self.gaps.push(super::decoder::stories::Gap {
                    from: from.min(t),
                    to: t,
                    changed: shakmaty::Bitboard::EMPTY,
                });
            }
        }
        match r {
            Reading::Square(sq, state) => self.deb.reading(t, sq, state),
            Reading::Frame(states) => {
                // (Its changes are due a debounce time later; the report is of then.)
                let at = t.saturating_add(self.s.debounce_ms);
                if self.reports.len() >= 4 {
                    self.reports.remove(0);
                }
                self.reports.push(at);
                for (i, &state) in states.iter().enumerate() {
                    self.deb.frame_reading(t, Square::new(i as u32), state);
                }
            }
        }
        // With no debounce a change is due at once.
        if self.deb.next_due().is_some_and(|d| d <= t) {
            self.advance(t, out);
        }
        // A trace with no change: it may say that the piece in the hand made its capture.
        if self.note_glitches()
            && self.phase == Phase::Moving
            && self.alt.is_none()
            && self.mismatch.due.is_none()
            && !self.passive()
            && self.traced_capture_in_hand()
        {
            self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
        }
        // A square read again as it stood: a change the board never showed, which may tell
        // that a move was not what the record has.
        if self.note_echoes()
            && matches!(self.phase, Phase::Moving | Phase::Restoring { .. })
            && self.alt.is_none()
        {
            self.revise(false, None, out);
        }
    }

    /// The board's link changed (a driver reports it): said, so a blind player knows.
    pub fn link(&mut self, t: Millis, state: LinkState, out: &mut Vec<Event>) {
        self.advance(t, out);
        // A slide held back may have gone on while nobody hears the board: it waits for the
        // board's report when it is back (see `hold_due`). A promotion waits for its piece,
        // which is pressed, not read from the board. Any other hold is settled now.
        if self.held_slide().is_none() && !self.holding_promotion() {
            self.settle_hold(out);
        }
        self.resolve_alt_as_continued(out);
        let w = &self.s.phrases.words;
        let text = match state {
            LinkState::Waiting => w.board_waiting.clone(),
            LinkState::Connected => w.board_connected.clone(),
            LinkState::Lost => w.board_lost.clone(),
            LinkState::Silent => w.board_silent.clone(),
            LinkState::Reconnected => w.board_reconnected.clone(),
            LinkState::Unusable(PortError::NoPermission) => w.board_no_permission.clone(),
            LinkState::Unusable(PortError::NotATty) => w.board_not_a_tty.clone(),
            LinkState::Unusable(PortError::Other) => w.board_port_error.clone(),
        };
        self.relinked = matches!(state, LinkState::Reconnected | LinkState::Connected);
        self.link_down = state.is_down();
        // Whatever was done while the board was away is read from its next report.
        self.gap_pending = matches!(state, LinkState::Reconnected | LinkState::Connected);
        if self.link_down || self.gap_pending {
            self.gap_from.get_or_insert(t);
            self.agree_held();
        }
        self.emit(
            out,
            EventKind::Link {
                state: state.name(),
            },
        );
        self.say(out, text, Priority::Error);
    }

    /// The board keeps reporting `square` (its driver says so): said, so that someone sees to
    /// the sensor. The game goes on.
    pub fn flicker(&mut self, t: Millis, square: Square, out: &mut Vec<Event>) {
        self.advance(t, out);
        self.emit(out, EventKind::Flicker { square });
        let text = self.s.phrases.square_flickers(square);
        self.say(out, text, Priority::Info);
    }

    // -----------------------------------------------------------------------------------------
    // Moves

    /// A legal move's last physical step is done: record it, unless it breaks touch-move.
    /// `forced`: the board went on, so the move is complete even where the clock button would
    /// be awaited.
    pub(super) fn complete(&mut self, m: Move, forced: bool, out: &mut Vec<Event>) {
        if self.s.mode == Mode::Tournament && !self.turn.touch_unknown && self.breach(m).is_some() {
            if self.refusing {
                let (rule, square) = self.breach(m).unwrap_or((TouchRule::Art4_3a, m.to()));
                self.refuse_touch_move(rule, square, out);
            } else {
                self.hold(Held::Breach(m), Some(self.s.settle_ms));
            }
            return;
        }
        // Art. 6.8: with a clock button the move is complete when the clock is pressed,
        // unless it ends the game.
        if self.s.switch == ClockSwitch::Button
            && !self.pressing
            && !forced
            && !self.move_ends_game(m)
        {
            self.hold(Held::Move(m), None);
            return;
        }
        self.record(m, false, out);
    }

    /// Records a move, announces it, runs the clock; the opponent's turn begins.
    pub(super) fn record(&mut self, m: Move, recovered: bool, out: &mut Vec<Event>) {
        let touch_checked =
            !recovered && !self.turn.touch_unknown && self.s.mode == Mode::Tournament;
        let color = self.game.pos.turn();
        if self.sealing == Some(color) {
            self.seal(m, out);
            return;
        }
        let ply = ply_number(&self.game.pos);
        let part_of_castling = self.part_of_castling(m);
        // (A rook's move a castling's squares hold is a rook's move once complete, Art. 4.4b:
        // it is not read again as the castling.)
        let castling_rook = self.castling_around(m).is_some();
        if self.in_a_castling(m) {
            self.agree_after = self.agree_after.max(self.now + stories::OWED_PATIENCE_MS);
        }
        let echoed_capture = !recovered && self.echoed_capture(m);
        // A choice pressed in a turn whose player could not promote is the opponent's, ahead;
        // one made ahead by the opponent stays his (and through his own moves read from the
        // board afterwards, recovered: the press may have come after them).
        let pressed = self.turn.promo_choice.filter(|_| {
            !m.is_promotion() && !self.game.pos.legal_moves().iter().any(|l| l.is_promotion())
        });
        // One pressed in the turn of a move the board did not show being made (recovered, a
        // reading late or a gap), which is no promotion: the press may have come after the
        // move, for the same player's promotion still to come; it stays his, ahead.
        let unseen = self
            .turn
            .promo_choice
            .filter(|_| recovered && !m.is_promotion())
            .map(|r| (color, r));
        let ahead = pressed
            .map(|r| (!color, r))
            .or(unseen)
            .or(self.promo_ahead.filter(|(c, _)| *c == !color || recovered));
        // (A move read afterwards is charged to when the board shows it was complete.)
        let t = self.moving_at.unwrap_or(self.now).min(self.now);
        // Pieces touched and put back in this turn, not the move's: told before it, and kept
        // for the `touches` question. (Most moves touch only their own pieces: nothing is.)
        let (emptied, _, victim) = recognise::footprint(color, &m);
        let involved = emptied | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let kept: Vec<(Touch, Color)> = self
            .turn
            .touches
            .iter()
            .filter(|x| !involved.contains(x.square))
            .map(|x| (*x, self.toucher(x)))
            .collect();
        if !kept.is_empty() && !recovered && !self.turn.touch_unknown && !self.correcting {
            self.tell_put_back(involved, out);
        }
        self.touches_before = kept;
        let san = self.game.play(m, t);
        let say = self.s.phrases.announce(&san, m);
        let computer_moving = self.computer_moving;
        let clocks = self.clock.as_mut().map(|c| {
            c.complete_move(color, t);
            if computer_moving && !c.is_paused() {
                // The player's clock starts when the computer's move stands on the board.
                c.stop(t);
            }
            (c.remaining(Color::White, t), c.remaining(Color::Black, t))
        });
        if let Some(last) = self.game.plies.last_mut() {
            last.clocks = clocks;
            last.recovered = recovered;
        }
        self.arm_warnings();
        self.phase = Phase::Moving;
        self.new_turn();
        self.promo_ahead = ahead;
        self.turn.swap = (m.is_promotion() && !self.phys.ids()).then_some(Swap {
            square: m.to(),
            lifted: None,
        });
        self.mismatch = Mismatch::default();
        self.last_said = LastSaid::Move;
        self.emit(
            out,
            EventKind::Move {
                ply,
                color,
                uci: recognise::uci(m),
                san: recognise::san_text(san),
                fen: fen_of(&self.game.pos),
                say,
                white_ms: clocks.map(|c| c.0),
                black_ms: clocks.map(|c| c.1),
                recovered,
                touch_checked,
                corrected: self.correcting,
            },
        );
        self.recorded(
            recovered || part_of_castling || echoed_capture,
            !castling_rook,
            t,
        );
        if let Some((w, b)) = clocks {
            self.emit(
                out,
                EventKind::Clock {
                    white_ms: w,
                    black_ms: b,
                    running: (!computer_moving).then_some(!color),
                },
            );
        }
        if let Some(ending) = self.game.automatic_ending(&self.s.rules) {
            self.end_game(ending, out);
            return;
        }
        if self.win_claim == Some(color) {
            // C3: the claim of the win lapses with the claimant's own move.
            self.win_claim = None;
        }
        if self.claim_with_move == Some(color) {
            self.judge_claim_with_move(color, out);
        }
    }

    /// `m` moves the king or the rook the way a castling the position allows does, on squares
    /// of it, and the board showed its piece set down before it showed it lifted: the castling,
    /// the king's readings late, shows as that move at first (the king's placement on g8 read,
    /// then the rook's lift from h8). It is not agreed on until the board has shown more (see
    /// [`Engine::recorded`]).
    fn part_of_castling(&self, m: Move) -> bool {
        let color = self.game.pos.turn();
        let (left, reached, _) = recognise::footprint(color, &m);
        let lifted = left
            .into_iter()
            .filter_map(|sq| self.turn.last_seen(sq, Trace::Lifted))
            .max();
        let placed = reached
            .into_iter()
            .filter_map(|sq| self.turn.last_seen(sq, Trace::Placed))
            .min();
        let out_of_order = matches!((placed, lifted), (Some(p), Some(l)) if p < l);
        out_of_order && self.castling_around(m).is_some()
    }

    /// The side of a castling the position allows whose squares hold all of `m`'s changes (`m`
    /// not that castling itself): what the castling, some of its readings late, shows as.
    fn castling_around(&self, m: Move) -> Option<CastlingSide> {
        if m.is_castle() {
            return None;
        }
        let color = self.game.pos.turn();
        let (left, reached, _) = recognise::footprint(color, &m);
        self.game.legal().iter().find_map(|c| {
            let side = c.castling_side()?;
            let (c_left, c_reached, _) = recognise::footprint(color, c);
            (c_left.is_superset(left) && (c_left | c_reached).is_superset(reached)).then_some(side)
        })
    }

    /// `m` moves the king on squares of a castling the position allows, or a rook onto the
    /// square the king castles to: the castling, its other readings late, shows as `m` at
    /// first (the king's placement on c1 and the rook's lift from a1 read seconds later show
    /// Kd1 at first; the king's lift and the rook's placement late show Rg1). The agreed point
    /// waits for those readings (see [`Engine::recorded`]). (A rook's own castling move made
    /// first is a rook's move: in casual play the first half of a castling that the king's
    /// move then takes back.)
    fn in_a_castling(&self, m: Move) -> bool {
        let color = self.game.pos.turn();
        self.castling_around(m).is_some_and(|side| match m.role() {
            Role::King => true,
            Role::Rook => m.to() == side.king_to(color),
            _ => false,
        })
    }

    /// While `m`'s piece was in the hand, the board read a square it could capture on again as
    /// it stood, occupied, or saw it flicker: perhaps the piece set down there, the captured
    /// piece's lift lost or swept off faster than the debounce time, and the placement `m` was
    /// read from the opponent's next move begun (its piece set down before its lift was read).
    /// `m` is then not agreed on until the board has shown more (see [`Engine::recorded`]).
    fn echoed_capture(&self, m: Move) -> bool {
        let Some(from) = m.from() else {
            return false;
        };
        let Some(lifted) = self.turn.last_seen(from, Trace::Lifted) else {
            return false;
        };
        self.log
            .iter()
            .rev()
            .take_while(|s| s.t >= lifted)
            .any(|s| {
                matches!(s.what, Trace::Echo { occupied: true } | Trace::Glitch)
                    && s.square != m.to()
                    && self
                        .game
                        .legal()
                        .iter()
                        .any(|l| l.from() == Some(from) && l.to() == s.square && l.is_capture())
            })
    }

    /// After a move is recorded: the agreed point follows the record when the board showed it
    /// plainly (every ply since the agreed point so, or two in a row since a story was taken)
    /// and no move in doubt may still be owed a late reading (`agree_after`), and the next
    /// turn's state is kept to go back to. What the agreement forgets of the move before is
    /// kept aside (`prior`): a reading lost on its way in may still tell another story of it
    /// (the opponent's first placement read as the mover's, the mover's own lost). (Not for
    /// the computer's moves, which are not read.)
    fn recorded(&mut self, recovered: bool, read_again: bool, t: Millis) {
        let since = self.game.plies.len().saturating_sub(self.agreed.plies);
        let plain = !recovered && !self.correcting;
        self.plain_run = if plain { self.plain_run + 1 } else { 0 };
        let clean = self.plain_run as usize >= since && self.rulings.is_empty();
        // (Bounded: a story older than this many plies, or a log this long, is agreed.)
        let old = since > AGREE_AFTER_PLIES || self.log.len() > AGREE_AFTER_OBSERVATIONS;
        let doubted = t < self.agree_after || t < self.rival_until;
        let due = plain && (clean || self.plain_run >= 2) && !doubted;
        let rivalled = due && !old && self.game.plies.len() < self.rival_plies;
        self.rival_held = rivalled.then_some((self.game.plies.len(), t));
        if due && !rivalled || old {
            // (The point before kept, to read again from: see `prior`.)
            let len = self.game.plies.len();
            // (Made in the room of the one before: one for every move.)
            let room = self.prior.take().unwrap_or_default();
            let prior = (!old && !self.computer_moving && read_again && len >= 1).then(|| {
                let plies = len - 1;
                let since = match plies.checked_sub(1) {
                    Some(i) if plies > self.agreed.plies => self.game.plies[i].t,
                    _ => self.agreed.t,
                };
                self.prior_at(plies, since, t, room)
            });
            self.agree(t);
            self.prior = prior;
        }
        self.checkpoint();
    }

    /// The record held back from the agreement by a rival (`rival_held`), no move since: agreed
    /// on as it was then (the state kept at the start of this turn stays).
    fn agree_held(&mut self) {
        let plies = self.game.plies.len();
        if let Some((_, t)) = self.rival_held.take().filter(|&(p, _)| p == plies) {
            self.agree_in_turn(t);
        }
    }

    /// Every explanation agrees on the record up to now: the log starts afresh after `t`.
    pub(super) fn agree(&mut self, t: Millis) {
        self.prior = None;
        self.agreed = Agreed {
            plies: self.game.plies.len(),
            t,
        };
        self.log.retain(|s| s.t > t);
        self.gaps.retain(|g| g.to > t);
        self.reports.retain(|&r| r > t);
        self.checkpoints.clear();
        self.rulings.clear();
    }

    /// The log has reached [`LOG_BOUND`]: it takes nothing more, and tells no stories.
    pub(super) fn log_full(&self) -> bool {
        self.log.len() >= LOG_BOUND
    }

    /// The board shows the record again after a long turn: agreed on as it stands, now (the
    /// state kept at the start of this turn stays, for a correction of its move).
    pub(super) fn agree_standing(&mut self) {
        self.agree_in_turn(self.now);
    }

    /// Agreed on the record at `t`, in the turn after its last ply: the state kept at the start
    /// of this turn stays.
    fn agree_in_turn(&mut self, t: Millis) {
        let plies = self.game.plies.len();
        let mut kept = std::mem::take(&mut self.checkpoints);
        kept.retain(|c| c.plies >= plies);
        self.agree(t);
        self.checkpoints = kept;
    }

    /// What agreeing at `t` on the record forgets of what came after the point `plies`,
    /// `since` (in the room of `p`).
    fn prior_at(&self, plies: usize, since: Millis, t: Millis, mut p: Prior) -> Prior {
        let upto = self.game.plies.len();
        let before = self.log.iter().filter(|s| s.t <= since).count();
        let within = |x: Millis| since < x && x <= t;
        p.agreed = Agreed { plies, t: since };
        p.log.clear();
        p.log.extend(self.log.iter().filter(|s| within(s.t)));
        p.gaps.clear();
        p.gaps.extend(self.gaps.iter().filter(|g| within(g.to)));
        p.reports.clear();
        p.reports
            .extend(self.reports.iter().filter(|&&r| within(r)));
        p.checkpoints.clear();
        p.checkpoints.extend(
            self.checkpoints
                .iter()
                .filter(|c| (plies..upto).contains(&c.plies))
                .cloned(),
        );
        p.rulings.clear();
        p.rulings.extend(
            self.rulings
                .iter()
                .filter(|r| (plies..upto).contains(&r.plies))
                .map(|r| Ruling {
                    placed: r.placed.and_then(|i| i.checked_sub(before)),
                    ..*r
                }),
        );
        p
    }

    /// Goes back to the point agreed before the last: what was forgotten read again.
    pub(super) fn unagree(&mut self) -> bool {
        let Some(p) = self.prior.take() else {
            return false;
        };
        let k = p.log.len();
        for r in &mut self.rulings {
            r.placed = r.placed.map(|i| i + k);
        }
        self.log.splice(0..0, p.log);
        self.gaps.splice(0..0, p.gaps);
        self.reports.splice(0..0, p.reports);
        self.checkpoints.splice(0..0, p.checkpoints);
        self.rulings.splice(0..0, p.rulings);
        self.agreed = p.agreed;
        true
    }

    /// Back to the point `agreed` after [`Engine::unagree`] went back from it to `prior`'s.
    pub(super) fn reagree(&mut self, agreed: Agreed, prior: Prior) {
        let k = prior.log.len();
        self.log.drain(..k);
        self.gaps.drain(..prior.gaps.len());
        self.reports.drain(..prior.reports.len());
        self.checkpoints.drain(..prior.checkpoints.len());
        self.rulings.drain(..prior.rulings.len());
        for r in &mut self.rulings {
            r.placed = r.placed.and_then(|i| i.checked_sub(k));
        }
        self.agreed = agreed;
        self.prior = Some(prior);
    }

    /// Keeps the state at the start of this turn (replacing one kept for the same turn).
    pub(super) fn checkpoint(&mut self) {
        let plies = self.game.plies.len();
        self.checkpoints.retain(|c| c.plies < plies);
        self.checkpoints.push(Checkpoint {
            plies,
            clock: self.clock.clone(),
            illegal_counts: self.illegal_counts,
            draw_offer: self.draw_offer,
            claim_with_move: self.claim_with_move,
            win_claim: self.win_claim,
            warnings: self.warnings,
        });
    }

    /// A new game, a game resumed or followed, a takeback: the record is agreed as it stands.
    pub(super) fn agree_on_the_record(&mut self) {
        self.log.clear();
        self.plain_run = 0;
        self.agree_after = 0;
        self.rival_until = 0;
        self.rival_plies = 0;
        self.rival_held = None;
        self.agree(self.now);
        self.checkpoint();
    }

    /// The move would end the game at once (mate, stalemate, dead position...).
    fn move_ends_game(&self, m: Move) -> bool {
        let mut game = self.game.clone();
        game.play(m, self.now);
        game.automatic_ending(&self.s.rules).is_some()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Chess, Square};

    use crate::engine::input::{Reading, EMPTY, OCCUPIED};
    use crate::engine::{Engine, Settings};

    /// What the readings since the agreed point are, as the searches see them.
    fn reading_state(e: &Engine) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            e.agreed, e.log, e.gaps, e.reports, e.rulings, e.prior
        )
    }

    #[test]
    fn going_back_to_the_point_before_and_again_leaves_the_readings_as_they_were() {
        let mut e = Engine::new(Settings::default());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        for (t, sq, state) in [
            (1000, Square::E2, EMPTY),
            (1300, Square::E4, OCCUPIED),
            (2000, Square::E7, EMPTY),
            (2300, Square::E5, OCCUPIED),
            (3000, Square::G1, EMPTY),
        ] {
            e.reading(t, Reading::Square(sq, state), &mut out);
        }
        assert_eq!(e.game.plies.len(), 2, "{out:?}");
        // White's knight set down where it cannot go, and the board left so: a ruling, whose
        // placement is an index into the log.
        e.reading(3200, Reading::Square(Square::G4, OCCUPIED), &mut out);
        e.advance(9000, &mut out);
        assert!(
            e.rulings.iter().any(|r| r.placed.is_some()),
            "{:?} {out:?}",
            e.rulings
        );
        let prior = e.prior.clone().expect("the point before e5 kept");
        let (agreed, before) = (e.agreed, reading_state(&e));
        let placed = |e: &Engine| e.rulings.iter().rev().find_map(|r| r.placed);
        let at = placed(&e);
        assert!(e.unagree());
        assert!(e.agreed.plies < agreed.plies);
        assert!(e.log.len() > 1 && e.prior.is_none());
        // (The ruling's placement is where it was in the longer log.)
        assert_eq!(placed(&e), at.map(|i| i + prior.log.len()));
        assert!(!prior.log.is_empty());
        e.reagree(agreed, prior);
        assert_eq!(reading_state(&e), before);
    }

    /// Plays `flicks` lifts and put-backs of the e-pawn, then, with it held, as many readings
    /// of a switch chattering on h5, then e4 and e5: what the engine said (without
    /// times), and the longest log and turn it kept meanwhile.
    fn long_turn(flicks: usize) -> (Vec<String>, usize, usize) {
        let mut e = Engine::new(Settings::default());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        let (mut t, mut longest_log, mut longest_turn) = (1000, 0, 0);
        let mut read = |e: &mut Engine, sq, state, out: &mut Vec<_>| {
            e.reading(t, Reading::Square(sq, state), out);
            t += 300;
            longest_log = longest_log.max(e.log.len());
            longest_turn = longest_turn.max(e.turn.seen.len());
        };
        for _ in 0..flicks {
            read(&mut e, Square::E2, EMPTY, &mut out);
            read(&mut e, Square::E2, OCCUPIED, &mut out);
        }
        read(&mut e, Square::E2, EMPTY, &mut out);
        for _ in 0..flicks {
            read(&mut e, Square::H5, OCCUPIED, &mut out);
            read(&mut e, Square::H5, EMPTY, &mut out);
        }
        for (sq, state) in [
            (Square::E4, OCCUPIED),
            (Square::E7, EMPTY),
            (Square::E5, OCCUPIED),
        ] {
            read(&mut e, sq, state, &mut out);
        }
        e.advance(t + 10_000, &mut out);
        let said = out.iter().map(|ev| format!("{:?}", ev.kind)).collect();
        (said, longest_log, longest_turn)
    }

    #[test]
    fn a_turn_of_many_readings_is_read_as_a_short_one_in_a_log_of_bounded_length() {
        let (short, ..) = long_turn(3);
        let (long, longest_log, longest_turn) = long_turn(20_000);
        assert_eq!(long, short);
        assert!(
            short.iter().any(|s| s.contains("e2e4")) && short.iter().any(|s| s.contains("e7e5")),
            "{short:?}"
        );
        // (Each reading reads the log and the turn: their length bounds its time. The turn
        // had 80,000 readings.)
        assert!(longest_log <= 4_000, "{longest_log}");
        assert!(longest_turn <= 1_000, "{longest_turn}");
    }
}
