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

use shakmaty::{Bitboard, ByColor, Chess, Color, Move, Position, Role, Square};

use super::clock::{Clock, ClockSwitch};
use super::debounce::{Change, Debouncer, EMPTY};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::{fen_of, ply_number, Game};
use super::input::{Command, LinkState, PortError, Reading, VoiceLevel};
use super::physical::{code_piece, Physical};
use super::recognise::{self, classify, Search, Verdict};
use super::recovery::Recovery;
use super::rules::Mode;
use super::settings::Settings;
use super::takeback::Takeback;
use super::timers::Warnings;
use super::turn::{Commit, Seen, Swap, Touch, Trace, Turn};

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
}

/// A decision held back, since when the board showed it, and when it is taken without more
/// input (`None`: when the clock is pressed, Art. 6.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hold {
    pub held: Held,
    pub since: Millis,
    pub due: Option<Millis>,
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
    /// Casual play: the board shows an earlier position of the game.
    Takeback(Takeback),
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

/// How far the search for moves the board was not seen making goes (plies).
pub const RECOVERY_PLIES: usize = 4;

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
    pub(super) last_say: Option<String>,
    /// The time of the last event, so that late decisions keep events in time order.
    pub(super) last_emit: Millis,
    /// A command that waits for its confirmation, and since when.
    pub(super) unconfirmed: Option<(Command, Millis)>,
    /// The clock button is being pressed: a move completes now.
    pub(super) pressing: bool,
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
    /// Takebacks made (a position's key: an answer for a position taken back is dropped).
    pub(super) takebacks: u64,
}

impl Engine {
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
            alt: None,
            mismatch: Mismatch::default(),
            illegal_counts: ByColor { white: 0, black: 0 },
            draw_offer: None,
            claim_with_move: None,
            win_claim: None,
            last_say: None,
            last_emit: 0,
            unconfirmed: None,
            pressing: false,
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
            takebacks: 0,
            s,
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.s
    }

    pub fn game(&self) -> &Game {
        &self.game
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
            let key = match color {
                Color::White => "White",
                Color::Black => "Black",
            };
            tags.retain(|(k, _)| *k != key);
            tags.push((key, name.clone()));
        }
        self.game.to_pgn(&tags)
    }

    pub(super) fn emit(&mut self, out: &mut Vec<Event>, kind: EventKind) {
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
    pub(super) fn new_turn(&mut self) {
        self.turn.reset();
        self.alt = None;
        self.mismatch.due = None;
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
            }
        }
        match r {
            Reading::Square(sq, state) => self.deb.reading(t, sq, state),
            Reading::Frame(states) => {
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
    }

    /// The board's link changed (a driver reports it): said, so a blind player knows.
    pub fn link(&mut self, t: Millis, state: LinkState, out: &mut Vec<Event>) {
        self.advance(t, out);
        self.settle_hold(out);
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
        self.link_down = matches!(
            state,
            LinkState::Lost | LinkState::Silent | LinkState::Waiting | LinkState::Unusable(_)
        );
        // Whatever was done while the board was away is read from its next report.
        self.gap_pending = matches!(state, LinkState::Reconnected | LinkState::Connected);
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

    /// Changes that became stable at the same moment: what the board did, and what it means.
    pub(super) fn on_batch(&mut self, batch: &[Change], out: &mut Vec<Event>) {
        self.observe(batch);
        if self
            .gap_reading
            .is_some_and(|g| batch.first().is_some_and(|c| c.t >= g))
        {
            // The board after its link came back: what it shows was done while nobody saw,
            // in an order nobody knows. It is read as after lost readings (the moves that
            // explain it), and touches are not judged this turn.
            self.gap_reading = None;
            self.turn.gap = true;
            self.turn.touch_unknown = true;
        }
        if self.phase == Phase::Over {
            if self.phys.shows(Chess::default().board()) {
                self.new_game(self.now, Chess::default(), false, out);
            }
            return;
        }
        if self.swap(batch) {
            return;
        }
        // A takeback waits for the settle time; a change before that either completes a move
        // of the current position (the earlier position was a sensor's moment: no takeback) or
        // shows the earlier position stood until now: take back first, then read the change.
        if let Phase::Holding(
            h @ Hold {
                held: Held::Takeback(_),
                ..
            },
        ) = self.phase.clone()
        {
            self.phase = Phase::Moving;
            if !matches!(self.verdict(), Verdict::Moves(_)) {
                self.settle(h, out);
            }
        }
        // The board goes on from a held move (or one whose piece was lifted again): the mover
        // still at work, or the move complete and the change the opponent's?
        let held = match &self.phase {
            Phase::Holding(h) if h.due.is_some() => Some(h.clone()),
            _ => None,
        };
        let mut verdict = self.verdict();
        if let Some(h) = held.or_else(|| self.alt.clone()) {
            match verdict {
                Verdict::Unexplained => {
                    self.alt = None;
                    self.turn.touches_deferred = false;
                    self.phase = Phase::Moving;
                    // The held move complete and the opponent at work, if that is what the board
                    // shows; else the moves that explain it from the last agreed position (the
                    // held move need not be among them: a reading lost on its way on, or what
                    // looked like an illegal move made of two legal ones).
                    if !self.explained_after(&h) {
                        let changed = self.turn.changed();
                        match self.recover(Search::Seen(changed), false, Some(&h), out) {
                            Recovery::Taken => return,
                            // Legal moves explain it, but not one story yet: no illegal move
                            // is ruled while the board may still tell which.
                            Recovery::Ambiguous if matches!(h.held, Held::Illegal(..)) => {
                                self.report_touches(out);
                                self.evaluate_as(Some(Verdict::Unexplained), out);
                                return;
                            }
                            _ => {}
                        }
                    }
                    self.settle(h, out);
                    self.report_touches(out);
                    self.evaluate(out);
                    return;
                }
                Verdict::InProgress => {
                    // The held piece in the hand again: sliding on, or taken by the opponent.
                    self.phase = Phase::Moving;
                    self.turn.touches_deferred = true;
                    self.alt = Some(h);
                    self.mismatch.due = None;
                    return;
                }
                _ => {
                    // The mover went on: his touches since are his.
                    self.alt = None;
                    self.turn.touches_deferred = false;
                }
            }
        }
        // Moves the board was not seen making, before its lifts are read as the player to
        // move's touches: a legal explanation comes before an illegal one. Once nothing has
        // explained the board for the mismatch delay, while the players go on, a story need
        // not be one the board showed in its order.
        if self.phase == Phase::Moving && self.alt.is_none() && !self.passive() {
            let long = self
                .mismatch
                .since
                .is_some_and(|t| self.now.saturating_sub(t) >= self.s.mismatch_ms);
            if matches!(verdict, Verdict::Unexplained | Verdict::Illegal { .. }) {
                match self.recover(Search::Seen(self.turn.changed()), long, None, out) {
                    Recovery::Taken => return,
                    // Legal moves explain it, only not one story yet: no illegal move.
                    Recovery::Ambiguous => verdict = Verdict::Unexplained,
                    Recovery::Nothing => {}
                }
            }
        }
        self.report_touches(out);
        // (Reading the lifts as touches leaves what the board shows as it was.)
        self.evaluate_as(Some(verdict), out);
    }

    /// Takes the debouncer's glitches into the turn's observations; says whether there were any.
    fn note_glitches(&mut self) -> bool {
        let glitches = self.deb.take_glitches();
        for &(t, sq) in &glitches {
            // (Never before what was read already: a glitch is no touch.)
            let at = self
                .turn
                .seen
                .partition_point(|s| s.t <= t)
                .max(self.turn.reported);
            self.turn.seen.insert(
                at,
                Seen {
                    t,
                    square: sq,
                    what: Trace::Glitch,
                    late: false,
                },
            );
        }
        !glitches.is_empty()
    }

    /// Takes a batch of changes into the physical board and the turn's observations.
    fn observe(&mut self, batch: &[Change]) {
        self.note_glitches();
        for c in batch {
            self.phys.apply(c);
            self.turn.seen.push(Seen {
                t: c.t,
                square: c.square,
                what: if c.state == EMPTY {
                    Trace::Lifted
                } else {
                    Trace::Placed
                },
                late: c.whole,
            });
        }
        // What the board did last: a placement when the batch has one (the end of a move shown
        // in one frame), else a lift.
        let last = batch
            .iter()
            .rev()
            .find(|c| c.state != EMPTY)
            .or(batch.last());
        if let Some(c) = last {
            self.last_change = Some((c.square, c.state != EMPTY));
        }
        // J'adoube (4.2) covers the pieces adjusted after it, until a piece is set down on a
        // square it did not stand on: that is a move.
        let home = self.game.pos.board().occupied();
        if batch
            .iter()
            .any(|c| c.state != EMPTY && !home.contains(c.square))
        {
            self.turn.adjusting = false;
        }
    }

    /// After a promotion made with the pawn still on its square, the next change tells whether
    /// lifting the piece there was the promoting player's swap or the opponent's touch. Returns
    /// true when the batch is taken care of.
    fn swap(&mut self, batch: &[Change]) -> bool {
        let Some(swap) = self.turn.swap else {
            return false;
        };
        let only_there = batch.len() == 1 && batch[0].square == swap.square;
        if swap.lifted.is_none() && only_there && batch[0].state == EMPTY {
            self.turn.swap = Some(Swap {
                lifted: Some(self.now),
                ..swap
            });
            // Not the opponent's touch (yet).
            self.turn.touches_deferred = true;
            return true;
        }
        self.turn.swap = None;
        if swap.lifted.is_some() {
            self.turn.touches_deferred = false;
            if only_there && batch[0].state != EMPTY {
                // The swap is done: the promoting player's, nothing to read.
                self.turn.reported = self.turn.seen.len();
                return true;
            }
        }
        false
    }

    /// What the board shows now in the game's position, counting the lifts not yet read.
    pub(super) fn verdict(&self) -> Verdict {
        let pos = &self.game.pos;
        let pending: Bitboard = self.turn.seen[self.turn.reported.min(self.turn.seen.len())..]
            .iter()
            .filter(|s| s.what == Trace::Lifted)
            .map(|s| s.square)
            .collect();
        let vacated = self.turn.vacated | (pending & pos.board().occupied());
        classify(
            pos,
            self.game.legal(),
            &self.phys,
            vacated,
            self.last_change,
        )
    }

    /// Reads the lifts not read yet as touches of the player to move, each at its time.
    pub(super) fn report_touches(&mut self, out: &mut Vec<Event>) {
        if self.turn.touches_deferred {
            return;
        }
        while self.turn.reported < self.turn.seen.len() {
            let s = self.turn.seen[self.turn.reported];
            self.turn.reported += 1;
            if s.what == Trace::Lifted {
                self.at(s.t, |e| e.on_lift(s.square, s.t, out));
            }
        }
    }

    fn on_lift(&mut self, sq: Square, t: Millis, out: &mut Vec<Event>) {
        // Executing the opponent's move, or a board watched while the opponent moves on his:
        // no touches here.
        if self.passive() || matches!(self.phase, Phase::Replicating { .. }) {
            // (A captured piece's square seen empty: the capture is being executed.)
            self.turn.vacated.add(sq);
            return;
        }
        let Some(piece) = self.game.pos.board().piece_at(sq) else {
            return;
        };
        self.turn.vacated.add(sq);
        if self.turn.adjusting || self.turn.touched.contains(sq) || self.turn.touch_unknown {
            return;
        }
        let us = self.game.pos.turn();
        self.turn.touch(
            Touch {
                square: sq,
                piece,
                at: t,
            },
            us,
        );
        self.emit(
            out,
            EventKind::Touched {
                square: sq,
                piece: piece.role,
                color: piece.color,
            },
        );
        if self.draw_offer.is_some_and(|by| by != us) {
            self.draw_offer = None;
            let text = self.s.phrases.words.draw_offer_lapsed.clone();
            self.say(out, text, Priority::Info);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Reading the board (what is held back: `holds`; moves not seen made: `recovery`)

    /// Looks at the board after a change and decides what it means.
    pub(super) fn evaluate(&mut self, out: &mut Vec<Event>) {
        self.evaluate_as(None, out);
    }

    /// [`Engine::evaluate`], with what the board shows when it is known already.
    fn evaluate_as(&mut self, known: Option<Verdict>, out: &mut Vec<Event>) {
        match self.phase.clone() {
            Phase::Over => return,
            Phase::Replicating { m } => {
                self.evaluate_replication(m, out);
                return;
            }
            Phase::Restoring { diff: refused } => {
                let pos_occ = self.game.pos.board().occupied();
                let occ = self.phys.occupied();
                let diff = (pos_occ & !occ, occ & !pos_occ);
                if self.phys.shows(self.game.pos.board()) {
                    self.phase = Phase::Moving;
                    self.restored(out);
                } else if diff != refused
                    && !recognise::in_progress(&self.game.pos, self.game.legal(), &self.phys)
                {
                    self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
                } else {
                    self.mismatch.due = None;
                }
                return;
            }
            Phase::Moving | Phase::Holding(_) => {}
        }
        self.phase = Phase::Moving;
        if self.passive() {
            // The opponent's turn, on his board: this one must keep the position.
            if self.phys.shows(self.game.pos.board()) {
                self.mismatch.due = None;
                if self.mismatch.owe_restored || self.mismatch.reported.is_some() {
                    self.restored(out);
                }
            } else {
                self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
            }
            return;
        }
        if self.alt.is_some() {
            // Still the held piece in the hand: wait for the board to tell.
            return;
        }
        let verdict = known.unwrap_or_else(|| self.verdict());
        match verdict {
            Verdict::Home => {
                // Everything is home: pieces lifted and put back cannot be the victims of a
                // capture any more (else lifting the capturer alone would complete it).
                self.turn.vacated = Bitboard::EMPTY;
                self.mismatch.due = None;
                self.turn.casual_illegal = None;
                if self.mismatch.owe_restored || self.mismatch.reported.is_some() {
                    self.restored(out);
                }
                return;
            }
            Verdict::Moves(candidates) => {
                self.mismatch.due = None;
                self.on_candidates(candidates, out);
                return;
            }
            _ => {}
        }
        // Casual play: the board put back to an earlier position takes moves back, once it has
        // stood for the settle time (a board that reports a new square before the old one
        // shows an earlier position for a moment).
        if self.s.mode == Mode::Casual && self.last_change.is_some_and(|(_, placed)| placed) {
            if let Some(plan) = self.takeback_plan() {
                self.hold(Held::Takeback(plan), Some(self.s.settle_ms));
                return;
            }
        }
        if verdict == Verdict::Unexplained {
            self.mismatch.since.get_or_insert(self.now);
        } else {
            self.mismatch.since = None;
        }
        match verdict {
            Verdict::Partial { from, to } => {
                self.mismatch.due = None;
                // 4.6b binds only a castling the touched pieces allow (not after 4.4b).
                let pos = &self.game.pos;
                let castle = self.game.legal().iter().copied().find(|m| {
                    m.from() == Some(from) && recognise::king_to(pos.turn(), m) == Some(to)
                });
                if let (None, Some(castle)) = (self.turn.committed, castle) {
                    if self.breach(castle).is_none() {
                        self.turn.committed = Some(Commit::Castle {
                            king: from,
                            king_to: to,
                        });
                    }
                }
            }
            Verdict::Illegal { from, to } => {
                self.mismatch.due = None;
                self.illegal_attempt(from, to, out);
            }
            Verdict::InProgress => {
                // A piece in the hand is no mismatch, however long; but one whose capture left
                // a trace (the captured piece swept off quicker than the debounce time) is
                // taken as made once the board has stood so.
                self.mismatch.due = self
                    .traced_capture_in_hand()
                    .then(|| self.now.saturating_add(self.s.mismatch_ms));
            }
            _ => self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms)),
        }
    }

    /// Two boards: is the opponent's move `m` executed on this board yet?
    fn evaluate_replication(&mut self, m: Move, out: &mut Vec<Event>) {
        // A capture on a board that sees only occupancy is executed when the captured piece's
        // square has been seen empty (before that, lifting the capturing piece alone looks the
        // same).
        let capture_seen = !matches!(
            m,
            Move::Normal {
                capture: Some(_),
                ..
            }
        ) || self.phys.ids()
            // (A board back from a lost link reports the position as it is: done meanwhile.)
            || self.relinked
            || self.turn.vacated.contains(m.to());
        if capture_seen && self.phys.shows(self.game.pos.board()) {
            self.relinked = false;
            self.phase = Phase::Moving;
            self.mismatch = Mismatch::default();
            self.emit(
                out,
                EventKind::Replicated {
                    uci: recognise::uci(m),
                },
            );
            if std::mem::take(&mut self.computer_executing) {
                self.computer_move_executed(out);
            }
            return;
        }
        // Not yet, or half done: the board differs from the position before the move only on
        // the move's own squares (a piece in the hand). Not begun at all is no error either:
        // the player may still be listening.
        let Some(before) = self.game.plies.last().map(|p| p.before.clone()) else {
            return;
        };
        let (emptied, filled, victim) = recognise::footprint(before.turn(), &m);
        let involved = emptied | filled | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let off = before.board().occupied() ^ self.phys.occupied();
        if (off & !involved).is_empty() && self.phys.wrong_pieces(self.game.pos.board()).is_empty()
        {
            self.mismatch.due = None;
        } else {
            self.mismatch.due = Some(self.now.saturating_add(self.s.mismatch_ms));
        }
    }

    fn on_candidates(&mut self, candidates: Vec<Move>, out: &mut Vec<Event>) {
        let m = candidates[0];
        if m.is_promotion() {
            let turn = self.game.pos.turn();
            let shown = code_piece(self.phys.code(m.to()))
                .filter(|p| p.color == turn && p.role != Role::Pawn);
            let chosen = shown.map(|p| p.role).or(self.turn.promo_choice);
            if let Some(role) = chosen {
                if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
                    self.complete(*m, false, out);
                    return;
                }
            }
            // 4.6c binds the pawn to this square, if the touched pieces allow it to go there.
            if let (None, Some(pawn)) = (self.turn.committed, m.from()) {
                if self.breach(m).is_none() {
                    self.turn.committed = Some(Commit::Promote { pawn, to: m.to() });
                }
            }
            self.hold(Held::Promotion(m), Some(self.s.promotion_ms));
            return;
        }
        if recognise::could_slide_on(&self.game.pos, &m) {
            self.hold(Held::Move(m), Some(self.s.settle_ms));
            return;
        }
        self.complete(m, false, out);
    }

    pub(super) fn promotion_timeout(&mut self, out: &mut Vec<Event>) {
        let candidates = self.matching_moves();
        let role = self.turn.promo_choice.unwrap_or(self.s.promotion_default);
        if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
            self.complete(*m, false, out);
        }
    }

    pub(super) fn matching_moves(&self) -> Vec<Move> {
        recognise::matching_moves(
            &self.game.pos,
            self.game.legal(),
            &self.phys,
            self.turn.vacated,
        )
    }

    /// A piece released where no legal move takes it.
    fn illegal_attempt(&mut self, from: Square, to: Square, out: &mut Vec<Event>) {
        match self.s.mode {
            // An illegal move is completed when the clock is pressed (with a clock button),
            // or when it has stood for the settle time.
            Mode::Tournament if self.s.switch == ClockSwitch::Button => {
                self.hold(Held::Illegal(from, to), None);
            }
            Mode::Tournament => self.hold(Held::Illegal(from, to), Some(self.s.settle_ms)),
            Mode::Casual => {
                if self.turn.casual_illegal != Some((from, to)) {
                    self.turn.casual_illegal = Some((from, to));
                    self.mismatch.owe_restored = true;
                    let reason = super::rulings::illegal_reason(&self.game.pos, from, to);
                    let color = self.game.pos.turn();
                    self.emit(
                        out,
                        EventKind::Illegal {
                            color,
                            count: self.illegal_counts[color],
                            reason,
                            penalty: super::event::Penalty::None,
                            extra_ms: None,
                            attempted: format!("{from}{to}"),
                        },
                    );
                    let text = self.s.phrases.words.illegal_move.clone();
                    self.say(out, text, Priority::Error);
                }
            }
        }
    }

    pub(super) fn restored(&mut self, out: &mut Vec<Event>) {
        self.turn.vacated = Bitboard::EMPTY;
        self.mismatch = Mismatch::default();
        self.turn.casual_illegal = None;
        let fen = fen_of(&self.game.pos);
        self.emit(out, EventKind::Restored { fen });
        let text = self.s.phrases.words.restored.clone();
        self.say(out, text, Priority::Info);
    }

    // -----------------------------------------------------------------------------------------
    // Moves

    /// A legal move's last physical step is done: record it, unless it breaks touch-move.
    /// `forced`: the board went on, so the move is complete even where the clock button would
    /// be awaited.
    pub(super) fn complete(&mut self, m: Move, forced: bool, out: &mut Vec<Event>) {
        if self.s.mode == Mode::Tournament && !self.turn.touch_unknown {
            if let Some((rule, square)) = self.breach(m) {
                self.refuse_touch_move(rule, square, out);
                return;
            }
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
        let ply = ply_number(&self.game.pos);
        let san = self.game.play(m, self.now);
        let say = self.s.phrases.announce(&san, m);
        let computer_moving = self.computer_moving;
        let clocks = self.clock.as_mut().map(|c| {
            c.complete_move(color, self.now);
            if computer_moving && !c.is_paused() {
                // The player's clock starts when the computer's move stands on the board.
                c.stop(self.now);
            }
            (
                c.remaining(Color::White, self.now),
                c.remaining(Color::Black, self.now),
            )
        });
        if let Some(last) = self.game.plies.last_mut() {
            last.clocks = clocks;
            last.recovered = recovered;
        }
        self.arm_warnings();
        self.phase = Phase::Moving;
        self.new_turn();
        self.turn.swap = (m.is_promotion() && !self.phys.ids()).then_some(Swap {
            square: m.to(),
            lifted: None,
        });
        self.mismatch = Mismatch::default();
        self.last_say = Some(say.clone());
        self.emit(
            out,
            EventKind::Move {
                ply,
                color,
                uci: recognise::uci(m),
                san: san.to_string(),
                fen: fen_of(&self.game.pos),
                say,
                white_ms: clocks.map(|c| c.0),
                black_ms: clocks.map(|c| c.1),
                recovered,
                touch_checked,
                corrected: false,
            },
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

    /// The move would end the game at once (mate, stalemate, dead position...).
    fn move_ends_game(&self, m: Move) -> bool {
        let mut game = self.game.clone();
        game.play(m, self.now);
        game.automatic_ending(&self.s.rules).is_some()
    }
}
