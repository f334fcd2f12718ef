//! The tracker: turns debounced square changes and button presses into game events, the way an
//! arbiter watching the board would (Art. 4, 5, 6, 7, 9 and Appendix F2.2-F2.3).
//!
//! The board is compared with the game as whole positions: a legal move is made when the board
//! shows the position after it and every piece it captured was seen leaving the board. The
//! order of lifts and placements therefore does not matter, which is how people really move.

use shakmaty::attacks;
use shakmaty::{
    Bitboard, Board, ByColor, CastlingSide, Chess, Color, File, Move, Piece, Position, Rank, Role,
    Square,
};

use super::clock::{Clock, ClockSwitch, TimeControl};
use super::debounce::{Change, Debouncer, SquareState, EMPTY, OCCUPIED};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::{fen_of, ply_number, Ending, Game};
use super::rules::{Mode, RuleProfile};
use super::touch::obligation;
use crate::speech::phrase::Phrases;

/// Everything the engine needs to know, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    pub rules: RuleProfile,
    pub mode: Mode,
    pub debounce_ms: Millis,
    /// How long a sliding piece may rest on a square it could still be passing, and how long
    /// an illegally placed piece stands before the illegal move counts.
    pub settle_ms: Millis,
    pub mismatch_ms: Millis,
    pub promotion_ms: Millis,
    pub promotion_default: Role,
    pub time_control: Option<TimeControl>,
    /// How a move is completed on the clock: at once (Appendix F2.3) or by a clock button
    /// (Art. 6.8).
    pub switch: ClockSwitch,
    /// A new game's clock stands until it is started (`start`).
    pub wait_for_start: bool,
    /// Time left at which a player is warned, largest first.
    pub time_warnings_ms: Vec<Millis>,
    /// The speech rate and volume at start; `rate up` and the like change them.
    pub voice: VoiceLevel,
    /// What `help` says, when the keys and buttons configured should be told; default: the
    /// language's list of commands.
    pub help: Option<String>,
    /// PGN tags of the games (Event, Round, White, Black and the like), from the config.
    pub pgn_tags: Vec<(String, String)>,
    pub phrases: Phrases,
}

/// The speech rate (words a minute) and volume (percent of normal).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VoiceLevel {
    pub rate: u32,
    pub volume: u32,
}

impl VoiceLevel {
    pub const RATES: std::ops::RangeInclusive<u32> = 80..=450;
    pub const VOLUMES: std::ops::RangeInclusive<u32> = 10..=200;
    pub const RATE_STEP: u32 = 25;
    pub const VOLUME_STEP: u32 = 10;
}

impl Default for VoiceLevel {
    fn default() -> VoiceLevel {
        VoiceLevel {
            rate: 175,
            volume: 100,
        }
    }
}

/// A change of the voice asked for by a command.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VoiceChange {
    Faster,
    Slower,
    Louder,
    Quieter,
}

/// The default low-time warnings: 5 minutes, 1 minute, 10 seconds.
pub const TIME_WARNINGS_MS: [Millis; 3] = [300_000, 60_000, 10_000];

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rules: RuleProfile::default(),
            mode: Mode::Tournament,
            debounce_ms: 30,
            settle_ms: 300,
            mismatch_ms: 3000,
            promotion_ms: 3000,
            promotion_default: Role::Queen,
            time_control: None,
            switch: ClockSwitch::Auto,
            wait_for_start: false,
            time_warnings_ms: TIME_WARNINGS_MS.to_vec(),
            voice: VoiceLevel::default(),
            help: None,
            pgn_tags: Vec::new(),
            phrases: Phrases::new(Default::default(), Default::default(), Default::default()),
        }
    }
}

/// A raw sensor input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// One square's state.
    Square(Square, SquareState),
    /// The whole board at once.
    Frame(Box<[SquareState; 64]>),
}

impl Reading {
    /// A whole-board occupancy frame (bit 0 = a1 ... bit 63 = h8).
    pub fn occupancy(mask: u64) -> Reading {
        let mut states = [EMPTY; 64];
        for (i, s) in states.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *s = OCCUPIED;
            }
        }
        Reading::Frame(Box::new(states))
    }
}

/// The state of a board's link, as its driver reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Not there yet at start-up: waited for.
    Waiting,
    Connected,
    Lost,
    Reconnected,
}

/// A control input (spec/replay.md `press`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Button {
    Clock,
    Repeat,
    Time,
    Position,
    Moves,
    Promote(Role),
    Draw,
    Claim,
    Resign,
    Adjust,
    NewGame,
    Takeback,
}

impl std::str::FromStr for Button {
    type Err = String;
    fn from_str(s: &str) -> Result<Button, String> {
        Ok(match s {
            "clock" => Button::Clock,
            "repeat" => Button::Repeat,
            "time" => Button::Time,
            "position" => Button::Position,
            "moves" => Button::Moves,
            "promote-queen" => Button::Promote(Role::Queen),
            "promote-rook" => Button::Promote(Role::Rook),
            "promote-bishop" => Button::Promote(Role::Bishop),
            "promote-knight" => Button::Promote(Role::Knight),
            "draw" => Button::Draw,
            "claim" => Button::Claim,
            "resign" => Button::Resign,
            "adjust" => Button::Adjust,
            "new-game" => Button::NewGame,
            "takeback" => Button::Takeback,
            _ => {
                return Err(format!(
                    "unknown button '{s}' (accepted: clock, repeat, time, position, moves, \
                     promote-queen, promote-rook, promote-bishop, promote-knight, draw, claim, \
                     resign, adjust, new-game, takeback)"
                ))
            }
        })
    }
}

/// A question or an order from the control socket, a keypad or the buttons.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// The last move again.
    Last,
    /// The last N moves.
    Moves(u32),
    /// F2.9d: moves made and both players' time.
    Time,
    /// Whose move it is.
    Turn,
    /// The whole position, or one side's pieces, or the pieces of one kind.
    Position(Option<Color>, Option<Role>),
    Rank(Rank),
    File(File),
    Square(Square),
    /// Art. 6.13: the clocks stopped for the arbiter, and started again.
    Pause,
    Resume,
    /// Pause when the clocks run, resume when they stand (one key for both).
    TogglePause,
    /// Starts the clocks (a game that waits for its start, or after a pause).
    Start,
    Help,
    /// A button; resign, new game and takeback want the same command again to confirm.
    Press(Button),
    /// Speech rate and volume.
    Voice(VoiceChange),
}

/// How long a confirmation (the same command again) is waited for.
pub const CONFIRM_MS: Millis = 5000;

/// The state code a board that identifies pieces reports for a piece.
pub fn piece_code(p: Piece) -> SquareState {
    let role = match p.role {
        Role::Pawn => 0,
        Role::Knight => 1,
        Role::Bishop => 2,
        Role::Rook => 3,
        Role::Queen => 4,
        Role::King => 5,
    };
    2 + role + if p.color == Color::White { 0 } else { 6 }
}

/// The piece behind a state code, for codes that name one.
pub fn code_piece(code: SquareState) -> Option<Piece> {
    if !(2..=13).contains(&code) {
        return None;
    }
    let c = code - 2;
    let color = if c < 6 { Color::White } else { Color::Black };
    let role = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ][usize::from(c % 6)];
    Some(Piece { color, role })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Play,
    /// A move was refused (illegal, or against touch-move): the board must show the game's
    /// position again. `diff` is how the board differed when it was refused.
    AwaitRestore {
        diff: (Bitboard, Bitboard),
    },
    /// Two boards: the opponent's move, made on his board, is to be executed on this one
    /// (Appendix F2.1).
    Replicate {
        m: Move,
    },
    Over,
}

/// Art. 4.6: a piece released where a legal move is not yet finished binds the player.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Commit {
    /// 4.6b: the king was released on its castling square: only that castling may follow.
    Castle { king: Square, king_to: Square },
    /// 4.6c: the pawn was released on its promotion square: only a promotion there.
    Promote { pawn: Square, to: Square },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pending {
    Move(Move),
    Illegal(Square, Square),
    /// A takeback, and when the board first showed the earlier position.
    Takeback(Takeback, Millis),
}

/// Casual play: what putting pieces back means.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Takeback {
    /// The rook move just made was the first half of castling.
    CastleAfterRook(Move),
    /// Back to the position before ply `k` of the record.
    To(usize),
}

/// Squares a legal move empties and fills, and the square of the piece it captures.
fn footprint(color: Color, m: &Move) -> (Bitboard, Bitboard, Option<Square>) {
    match *m {
        Move::Normal {
            from, to, capture, ..
        } => (
            Bitboard::from_square(from),
            Bitboard::from_square(to),
            capture.map(|_| to),
        ),
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            (
                Bitboard::from_square(from) | Bitboard::from_square(victim),
                Bitboard::from_square(to),
                Some(victim),
            )
        }
        Move::Castle { king, rook } => {
            let side = if rook > king {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            let filled = Bitboard::from_square(side.king_to(color))
                | Bitboard::from_square(side.rook_to(color));
            (
                (Bitboard::from_square(king) | Bitboard::from_square(rook)) & !filled,
                filled & !Bitboard::from_square(king) & !Bitboard::from_square(rook),
                None,
            )
        }
        Move::Put { to, .. } => (Bitboard::EMPTY, Bitboard::from_square(to), None),
    }
}

fn occupancy_after(occ: Bitboard, color: Color, m: &Move) -> Bitboard {
    let (emptied, filled, _) = footprint(color, m);
    (occ & !emptied) | filled
}

/// A queen, rook or bishop that stopped on a square from which it could slide on along the same
/// line may still be moving: the move waits for the settle time.
fn could_slide_on(pos: &Chess, m: &Move) -> bool {
    let Move::Normal {
        role,
        from,
        to,
        capture: None,
        promotion: None,
    } = *m
    else {
        return false;
    };
    if !matches!(role, Role::Queen | Role::Rook | Role::Bishop) {
        return false;
    }
    let step = |a: u32, b: u32| (b as i32 - a as i32).signum();
    let df = step(u32::from(from.file()), u32::from(to.file()));
    let dr = step(u32::from(from.rank()), u32::from(to.rank()));
    let nf = u32::from(to.file()) as i32 + df;
    let nr = u32::from(to.rank()) as i32 + dr;
    if !(0..8).contains(&nf) || !(0..8).contains(&nr) {
        return false;
    }
    let next = Square::from_coords(File::new(nf as u32), Rank::new(nr as u32));
    !pos.board().occupied().contains(next)
}

fn castle_side(m: &Move) -> Option<CastlingSide> {
    match *m {
        Move::Castle { king, rook } => Some(if rook > king {
            CastlingSide::KingSide
        } else {
            CastlingSide::QueenSide
        }),
        _ => None,
    }
}

/// Why moving the piece on `from` to `to` is not legal.
fn illegal_reason(pos: &Chess, from: Square, to: Square) -> &'static str {
    let board = pos.board();
    let Some(piece) = board.piece_at(from) else {
        return "not_a_move";
    };
    if piece.color != pos.turn() {
        return "opponent_piece";
    }
    if board.color_at(to) == Some(piece.color) {
        return "own_piece_on_square";
    }
    if piece.role == Role::King && from.rank() == to.rank() && from.distance(to) == 2 {
        return "castling_not_allowed";
    }
    let occupied = board.occupied();
    let reachable = match piece.role {
        Role::Pawn => {
            let forward = if piece.color == Color::White { 8 } else { -8 };
            let one = from.offset(forward);
            let start_rank = if piece.color == Color::White {
                Rank::Second
            } else {
                Rank::Seventh
            };
            let pushes = one == Some(to) && !occupied.contains(to)
                || (from.rank() == start_rank
                    && one.is_some_and(|o| !occupied.contains(o))
                    && from.offset(2 * forward) == Some(to)
                    && !occupied.contains(to));
            let capture_target = board.color_at(to) == Some(!piece.color)
                || pos.ep_square(shakmaty::EnPassantMode::Legal) == Some(to);
            pushes || (attacks::pawn_attacks(piece.color, from).contains(to) && capture_target)
        }
        _ => attacks::attacks(from, piece, occupied).contains(to),
    };
    if !reachable {
        return "not_a_legal_move";
    }
    let mut after: Board = board.clone();
    after.discard_piece_at(to);
    after.discard_piece_at(from);
    after.set_piece_at(to, piece);
    if let Some(king) = after.king_of(piece.color) {
        if after.attacks_to(king, !piece.color, after.occupied()).any() {
            return if pos.is_check() {
                "king_in_check"
            } else {
                "leaves_king_in_check"
            };
        }
    }
    "not_a_legal_move"
}

/// The engine: one game on one board. Pure and synchronous: every input carries its time, and
/// the caller asks [`Engine::next_deadline`] when to call [`Engine::advance`] next.
pub struct Engine {
    s: Settings,
    deb: Debouncer,
    game: Game,
    clock: Option<Clock>,
    now: Millis,
    phase: Phase,

    /// The debounced board: state per square and the occupancy.
    phys: [SquareState; 64],
    occ: Bitboard,
    /// The board reports piece identities.
    ids_known: bool,
    last_change: Option<(Square, bool)>,

    /// Pieces touched by the player to move, in order, with what stood there.
    touches: Vec<(Square, Piece)>,
    /// When each touch was seen (touches at the same moment: own pieces count first, 4.3c).
    touch_times: Vec<Millis>,
    touched: Bitboard,
    /// Squares of the position that were seen empty during this move.
    vacated: Bitboard,
    promo_choice: Option<Role>,
    adjusting: bool,
    /// A promotion was just completed with the pawn still standing there: lifting it to put the
    /// new piece in its place is the promoting player's swap, not the opponent's touch.
    swap_square: Option<Square>,
    swap_lifted: bool,

    settle: Option<(Millis, Pending)>,
    committed: Option<Commit>,
    promo_due: Option<Millis>,
    mismatch_due: Option<Millis>,
    mismatch_reported: Option<(Bitboard, Bitboard)>,
    /// An illegal move or a mismatch was reported: say so when the board is right again.
    owe_restored: bool,
    casual_illegal: Option<(Square, Square)>,
    illegal_counts: ByColor<u32>,
    draw_offer: Option<Color>,
    last_say: Option<String>,
    /// The time of the last event, so that late decisions keep events in time order.
    last_emit: Millis,
    /// A command that waits for its confirmation, and since when.
    unconfirmed: Option<(Button, Millis)>,
    /// Clock button mode: what the board shows, completed when the clock is pressed.
    awaiting_clock: Option<Pending>,
    /// The clock button is being pressed: a move completes now.
    pressing: bool,
    /// Low-time warnings given, per player (bit i: `time_warnings_ms[i]`).
    warned: ByColor<u32>,
    voice: VoiceLevel,
    /// Games started so far (a new game, or a game restored): the record's writer follows it.
    games_started: u64,
    /// Two boards: the player who plays on this board (his opponent plays on the other).
    player: Option<Color>,
    /// The link came back: the board's next report may show a capture executed meanwhile.
    relinked: bool,
}

/// A game brought back from the record after the daemon was down.
#[derive(Clone, Debug)]
pub struct Resumed {
    pub start: Chess,
    /// The moves, with the clocks after each.
    pub moves: Vec<(Move, Option<(i64, i64)>)>,
    pub illegal: ByColor<u32>,
    /// Both clocks as last recorded (they stood while the daemon was down).
    pub clocks: Option<(i64, i64)>,
}

impl Engine {
    pub fn new(s: Settings) -> Engine {
        let deb = Debouncer::new(s.debounce_ms);
        Engine {
            deb,
            game: Game::new(Chess::default()),
            clock: None,
            now: 0,
            phase: Phase::Play,
            phys: [EMPTY; 64],
            occ: Bitboard::EMPTY,
            ids_known: false,
            last_change: None,
            touches: Vec::new(),
            touch_times: Vec::new(),
            touched: Bitboard::EMPTY,
            vacated: Bitboard::EMPTY,
            promo_choice: None,
            adjusting: false,
            swap_square: None,
            swap_lifted: false,
            settle: None,
            committed: None,
            promo_due: None,
            mismatch_due: None,
            mismatch_reported: None,
            owe_restored: false,
            casual_illegal: None,
            illegal_counts: ByColor { white: 0, black: 0 },
            draw_offer: None,
            last_say: None,
            last_emit: 0,
            unconfirmed: None,
            awaiting_clock: None,
            pressing: false,
            warned: ByColor { white: 0, black: 0 },
            voice: s.voice,
            games_started: 0,
            player: None,
            relinked: false,
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

    /// The opponent has the move, and makes it on his own board: this board is only watched.
    fn passive(&self) -> bool {
        self.phase == Phase::Play && self.player.is_some_and(|p| p != self.game.pos.turn())
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
        self.illegal_counts = leader.illegal_counts;
        self.draw_offer = leader.draw_offer;
        self.last_say = leader.last_say.clone();
        self.voice = leader.voice;
        self.clock = if clock { leader.clock.clone() } else { None };
        self.warned = leader.warned;
        if leader.phase == Phase::Over {
            self.phase = Phase::Over;
            self.settle = None;
            self.promo_due = None;
            self.mismatch_due = None;
            return;
        }
        if unchanged {
            if self.phase == Phase::Over {
                self.phase = Phase::Play;
            }
            return;
        }
        self.new_turn();
        self.mismatch_reported = None;
        // A link back before this move does not vouch for it.
        self.relinked = false;
        self.phase = match (one_more, self.game.plies.last()) {
            (true, Some(ply)) => Phase::Replicate { m: ply.m },
            _ => Phase::AwaitRestore {
                diff: (Bitboard::EMPTY, Bitboard::EMPTY),
            },
        };
        self.evaluate(out);
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

    /// The game in PGN with the config's tags, the time control and `extra` (the date, which
    /// the engine does not know); `extra` wins over the config's.
    pub fn pgn_with(&self, extra: &[(&str, String)]) -> String {
        let mut tags: Vec<(&str, String)> = extra.to_vec();
        for (k, v) in &self.s.pgn_tags {
            if !tags.iter().any(|(t, _)| t == k) {
                tags.push((k.as_str(), v.clone()));
            }
        }
        if let Some(tc) = &self.s.time_control {
            tags.push(("TimeControl", tc.to_string()));
        }
        self.game.to_pgn(&tags)
    }

    fn emit(&mut self, out: &mut Vec<Event>, kind: EventKind) {
        self.last_emit = self.now;
        out.push(Event { t: self.now, kind });
    }

    fn say(&mut self, out: &mut Vec<Event>, text: String, priority: Priority) {
        self.emit(out, EventKind::Say { text, priority });
    }

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
        if board_holds_it {
            self.assume_board(start.board());
        }
        self.game = Game::new(start);
        self.games_started += 1;
        self.phase = Phase::Play;
        self.illegal_counts = ByColor { white: 0, black: 0 };
        self.draw_offer = None;
        self.mismatch_reported = None;
        self.owe_restored = false;
        self.last_say = None;
        self.last_change = None;
        self.swap_square = None;
        self.swap_lifted = false;
        self.adjusting = false;
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
        self.warned = ByColor { white: 0, black: 0 };
        self.arm_warnings();
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

    /// Takes the physical board to show `board` (until readings say otherwise).
    fn assume_board(&mut self, board: &Board) {
        let mut states = [EMPTY; 64];
        for (sq, p) in board.iter() {
            states[sq as usize] = if self.ids_known {
                piece_code(p)
            } else {
                OCCUPIED
            };
        }
        self.deb.reset(&states);
        self.phys = states;
        self.occ = board.occupied();
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
        let mut taken = 0;
        for (m, clocks) in &game.moves {
            if !self.game.pos.is_legal(*m) {
                break;
            }
            self.game.play(*m, self.now);
            if let Some(last) = self.game.plies.last_mut() {
                last.clocks = *clocks;
            }
            taken += 1;
        }
        let board = self.game.pos.board().clone();
        self.assume_board(&board);
        self.phase = Phase::Play;
        self.illegal_counts = game.illegal;
        self.draw_offer = None;
        self.mismatch_reported = None;
        self.owe_restored = false;
        self.last_say = self
            .game
            .plies
            .last()
            .map(|p| self.s.phrases.announce(&p.san, p.m));
        self.last_change = None;
        self.swap_square = None;
        self.swap_lifted = false;
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
        self.warned = ByColor { white: 0, black: 0 };
        self.mark_warned(Color::White);
        self.mark_warned(Color::Black);
        self.emit(
            out,
            EventKind::Resumed {
                fen: fen_of(&self.game.pos),
                plies: self.game.plies.len() as u32,
            },
        );
        let text = format!(
            "{}. {}",
            self.s.phrases.words.game_resumed,
            self.last_say
                .clone()
                .unwrap_or_else(|| self.s.phrases.words.no_move_yet.clone())
        );
        self.say(out, text, Priority::Info);
        self.emit_clock(out);
        self.evaluate(out);
        taken
    }

    fn new_turn(&mut self) {
        self.touches.clear();
        self.touch_times.clear();
        self.adjusting = false;
        self.committed = None;
        self.touched = Bitboard::EMPTY;
        self.vacated = Bitboard::EMPTY;
        self.promo_choice = None;
        self.settle = None;
        self.promo_due = None;
        self.mismatch_due = None;
        self.casual_illegal = None;
        self.awaiting_clock = None;
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
            .time_warnings_ms
            .iter()
            .enumerate()
            .filter(|(i, _)| self.warned[color] & (1 << i) == 0)
            .map(|(i, &x)| (flag.saturating_sub(x), i))
            .min()
    }

    /// Warnings are given once; one is given again only after the clock has stood at more
    /// than twice its threshold (a new period's time), so that a player living on his
    /// increment is not told at every move. At the start, thresholds the clock does not
    /// exceed are not warned of (a one-minute game does not begin with "one minute").
    fn arm_warnings(&mut self) {
        if self.clock.is_none() {
            return;
        }
        for color in [Color::White, Color::Black] {
            let left = self.time_left(color).max(0) as Millis;
            for (i, &x) in self.s.time_warnings_ms.iter().enumerate().take(32) {
                let bit = 1 << i;
                if self.warned[color] & bit != 0 && left > 2 * x {
                    self.warned[color] &= !bit;
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
    fn mark_warned(&mut self, color: Color) {
        let left = self.time_left(color).max(0) as Millis;
        for (i, &x) in self.s.time_warnings_ms.iter().enumerate().take(32) {
            if left <= x {
                self.warned[color] |= 1 << i;
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

    /// The earliest time at which something happens without new input.
    pub fn next_deadline(&self) -> Option<Millis> {
        let flag = match self.phase {
            Phase::Over => None,
            _ => self.clock.as_ref().and_then(|c| c.flag_time()),
        };
        [
            self.deb.next_due(),
            self.settle.map(|(t, _)| t),
            self.promo_due,
            self.mismatch_due,
            flag,
            self.warning_due().map(|(t, _)| t),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Lets simulated time pass up to `t`, handling everything that falls due on the way.
    pub fn advance(&mut self, t: Millis, out: &mut Vec<Event>) {
        while let Some(due) = self.next_deadline() {
            if due > t {
                break;
            }
            self.now = self.now.max(due);
            let flag = match self.phase {
                Phase::Over => None,
                _ => self.clock.as_ref().and_then(|c| c.flag_time()),
            };
            if flag == Some(due) {
                self.flag_falls(out);
            } else if self.warning_due().map(|(t, _)| t) == Some(due) {
                self.warn_low_time(out);
            } else if self.deb.next_due() == Some(due) {
                if let Some(change) = self.deb.pop_due(due) {
                    self.on_change(change, out);
                }
            } else if self.settle.map(|(t, _)| t) == Some(due) {
                if let Some((_, pending)) = self.settle.take() {
                    self.settled(pending, out);
                }
            } else if self.promo_due == Some(due) {
                self.promo_due = None;
                self.promotion_timeout(out);
            } else if self.mismatch_due == Some(due) {
                self.mismatch_due = None;
                self.report_mismatch(out);
            }
        }
        self.now = self.now.max(t);
    }

    /// A raw reading from the board at time `t`.
    pub fn reading(&mut self, t: Millis, r: Reading, out: &mut Vec<Event>) {
        self.advance(t, out);
        match r {
            Reading::Square(sq, state) => self.deb.reading(t, sq, state),
            Reading::Frame(states) => {
                for (i, &state) in states.iter().enumerate() {
                    if self.deb.raw(Square::new(i as u32)) != state {
                        self.deb.reading(t, Square::new(i as u32), state);
                    }
                }
            }
        }
        // With no debounce a change is due at once.
        self.advance(t, out);
    }

    fn on_change(&mut self, c: Change, out: &mut Vec<Event>) {
        let placed = c.state != EMPTY;
        self.phys[c.square as usize] = c.state;
        self.occ.set(c.square, placed);
        if c.state >= 2 && !self.ids_known {
            self.ids_known = true;
        }
        self.last_change = Some((c.square, placed));
        if self.phase == Phase::Over {
            if self.board_shows(Chess::default().board()) {
                self.new_game(self.now, Chess::default(), false, out);
            }
            return;
        }
        if let Some(sq) = self.swap_square {
            if sq == c.square && !placed {
                // Either the promoting player swaps the pawn for the new piece, or the opponent
                // takes the new piece: the next change tells which.
                self.swap_lifted = true;
                return;
            }
            self.swap_square = None;
            if std::mem::take(&mut self.swap_lifted) {
                if sq == c.square {
                    return;
                }
                // Another square moved first: the lift was the opponent's. It is reported now,
                // so that events stay in time order.
                self.on_lift(sq, out);
            }
        }
        // A takeback waits for the settle time; a change before that either completes a move
        // of the current position (the earlier position was a sensor's moment: no takeback) or
        // shows the earlier position stood until now: take back first, then read the change.
        if let Some((_, Pending::Takeback(plan, shown))) = self.settle {
            if self.matching_moves().is_empty() {
                self.settle = None;
                self.apply_takeback(plan, shown, out);
            }
        }
        if !placed {
            self.on_lift(c.square, out);
        }
        self.evaluate(out);
    }

    fn on_lift(&mut self, sq: Square, out: &mut Vec<Event>) {
        // Executing the opponent's move, or a board watched while the opponent moves on his:
        // no touches here.
        if self.passive() || matches!(self.phase, Phase::Replicate { .. }) {
            // (A captured piece's square seen empty: the capture is being executed.)
            self.vacated.add(sq);
            return;
        }
        let Some(piece) = self.game.pos.board().piece_at(sq) else {
            return;
        };
        self.vacated.add(sq);
        if self.adjusting || self.touched.contains(sq) {
            return;
        }
        self.touched.add(sq);
        let us = self.game.pos.turn();
        let mut at = self.touches.len();
        while at > 0
            && self.touch_times[at - 1] == self.now
            && piece.color == us
            && self.touches[at - 1].1.color != us
        {
            at -= 1;
        }
        self.touches.insert(at, (sq, piece));
        self.touch_times.insert(at, self.now);
        self.emit(
            out,
            EventKind::Touched {
                square: sq,
                piece: piece.role,
                color: piece.color,
            },
        );
        if self.draw_offer.is_some_and(|by| by != self.game.pos.turn()) {
            self.draw_offer = None;
            let text = self.s.phrases.words.draw_offer_lapsed.clone();
            self.say(out, text, Priority::Info);
        }
    }

    /// The physical board shows exactly `board` (piece identities compared where reported).
    fn board_shows(&self, board: &Board) -> bool {
        if self.occ != board.occupied() {
            return false;
        }
        !self.ids_known
            || board.iter().all(|(sq, p)| {
                let code = self.phys[sq as usize];
                code < 2 || code == piece_code(p)
            })
    }

    /// Legal moves whose result the board shows, with every captured piece seen removed.
    fn matching_moves(&self) -> Vec<Move> {
        let pos = &self.game.pos;
        let occ0 = pos.board().occupied();
        let turn = pos.turn();
        let mut found = Vec::new();
        for m in pos.legal_moves() {
            if occupancy_after(occ0, turn, &m) != self.occ {
                continue;
            }
            if let Move::Normal {
                capture: Some(_),
                to,
                ..
            } = m
            {
                let mover_code = piece_code(Piece {
                    color: turn,
                    role: m.role(),
                });
                if !self.vacated.contains(to) && self.phys[to as usize] != mover_code {
                    continue;
                }
            }
            if self.ids_known {
                let mut after = pos.clone();
                after.play_unchecked(m);
                let (_, filled, _) = footprint(turn, &m);
                let pawn_on_last = m.is_promotion()
                    && self.phys[m.to() as usize]
                        == piece_code(Piece {
                            color: turn,
                            role: Role::Pawn,
                        });
                let ok = filled.into_iter().all(|sq| {
                    let code = self.phys[sq as usize];
                    code < 2
                        || pawn_on_last
                        || after.board().piece_at(sq).map(piece_code) == Some(code)
                });
                if !ok {
                    continue;
                }
            }
            found.push(m);
        }
        found
    }

    /// Looks at the board after a change and decides what it means.
    fn evaluate(&mut self, out: &mut Vec<Event>) {
        self.settle = None;
        self.awaiting_clock = None;
        let pos_occ = self.game.pos.board().occupied();
        let diff = (pos_occ & !self.occ, self.occ & !pos_occ);
        if let Phase::Replicate { m } = self.phase {
            self.evaluate_replication(m, out);
            return;
        }
        if self.passive() {
            // The opponent's turn, on his board: this one must keep the position.
            if self.board_shows(self.game.pos.board()) {
                self.mismatch_due = None;
                if self.owe_restored || self.mismatch_reported.is_some() {
                    self.restored(out);
                }
            } else {
                self.mismatch_due = Some(self.now.saturating_add(self.s.mismatch_ms));
            }
            return;
        }
        if let Phase::AwaitRestore { diff: refused } = self.phase {
            if self.board_shows(self.game.pos.board()) {
                self.phase = Phase::Play;
                self.restored(out);
            } else if diff != refused && !self.in_progress() {
                self.mismatch_due = Some(self.now.saturating_add(self.s.mismatch_ms));
            } else {
                self.mismatch_due = None;
            }
            return;
        }
        if self.board_shows(self.game.pos.board()) {
            // Everything is home: pieces lifted and put back cannot be the victims of a
            // capture any more (else lifting the capturer alone would complete it).
            self.vacated = Bitboard::EMPTY;
            self.promo_due = None;
            self.mismatch_due = None;
            self.casual_illegal = None;
            self.adjusting = false;
            if self.owe_restored || self.mismatch_reported.is_some() {
                self.restored(out);
            }
            return;
        }
        let candidates = self.matching_moves();
        if !candidates.is_empty() {
            self.mismatch_due = None;
            self.on_candidates(candidates, out);
            return;
        }
        self.promo_due = None;
        // Casual play: the board put back to an earlier position takes moves back, once it has
        // stood for the settle time (a board that reports a new square before the old one
        // shows an earlier position for a moment).
        if self.s.mode == Mode::Casual && self.last_change.is_some_and(|(_, placed)| placed) {
            if let Some(plan) = self.takeback_plan() {
                self.settle = Some((
                    self.now.saturating_add(self.s.settle_ms),
                    Pending::Takeback(plan, self.now),
                ));
                return;
            }
        }
        if let Some((from, to)) = self.attempted_move() {
            self.mismatch_due = None;
            if self.partial_move(from, to) {
                // 4.6b binds only a castling the touched pieces allow (not after 4.4b).
                let pos = &self.game.pos;
                let castle = pos.legal_moves().into_iter().find(|m| {
                    m.from() == Some(from)
                        && castle_side(m).map(|s| s.king_to(pos.turn())) == Some(to)
                });
                if let (None, Some(castle)) = (self.committed, castle) {
                    if self.breach(castle).is_none() {
                        self.committed = Some(Commit::Castle {
                            king: from,
                            king_to: to,
                        });
                    }
                }
                return;
            }
            match self.s.mode {
                // An illegal move is completed when the clock is pressed (with a clock button),
                // or when it has stood for the settle time.
                Mode::Tournament if self.s.switch == ClockSwitch::Button => {
                    self.awaiting_clock = Some(Pending::Illegal(from, to));
                }
                Mode::Tournament => {
                    self.settle = Some((
                        self.now.saturating_add(self.s.settle_ms),
                        Pending::Illegal(from, to),
                    ));
                }
                Mode::Casual => {
                    if self.casual_illegal != Some((from, to)) {
                        self.casual_illegal = Some((from, to));
                        self.owe_restored = true;
                        let reason = illegal_reason(&self.game.pos, from, to);
                        let color = self.game.pos.turn();
                        self.emit(
                            out,
                            EventKind::Illegal {
                                color,
                                count: self.illegal_counts[color],
                                reason,
                                penalty: "none",
                                extra_ms: None,
                                attempted: format!("{from}{to}"),
                            },
                        );
                        let text = self.s.phrases.words.illegal_move.clone();
                        self.say(out, text, Priority::Error);
                    }
                }
            }
            return;
        }
        if self.in_progress() {
            self.mismatch_due = None;
        } else {
            self.mismatch_due = Some(self.now.saturating_add(self.s.mismatch_ms));
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
        ) || self.ids_known
            // (A board back from a lost link reports the position as it is: done meanwhile.)
            || self.relinked
            || self.vacated.contains(m.to());
        if capture_seen && self.board_shows(self.game.pos.board()) {
            self.relinked = false;
            self.phase = Phase::Play;
            self.mismatch_due = None;
            self.mismatch_reported = None;
            self.owe_restored = false;
            let color = !self.game.pos.turn();
            self.emit(out, EventKind::Replicated { uci: uci(m, color) });
            return;
        }
        // Not yet, or half done: the board differs from the position before the move only on
        // the move's own squares (a piece in the hand). Not begun at all is no error either:
        // the player may still be listening.
        let Some(before) = self.game.plies.last().map(|p| p.before.clone()) else {
            return;
        };
        let (emptied, filled, victim) = footprint(before.turn(), &m);
        let involved = emptied | filled | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let off = before.board().occupied() ^ self.occ;
        if (off & !involved).is_empty() && self.wrong_pieces().is_empty() {
            self.mismatch_due = None;
        } else {
            self.mismatch_due = Some(self.now.saturating_add(self.s.mismatch_ms));
        }
    }

    fn restored(&mut self, out: &mut Vec<Event>) {
        self.vacated = Bitboard::EMPTY;
        self.owe_restored = false;
        self.mismatch_reported = None;
        self.mismatch_due = None;
        self.casual_illegal = None;
        let fen = fen_of(&self.game.pos);
        self.emit(out, EventKind::Restored { fen });
        let text = self.s.phrases.words.restored.clone();
        self.say(out, text, Priority::Info);
    }

    fn on_candidates(&mut self, candidates: Vec<Move>, out: &mut Vec<Event>) {
        let m = candidates[0];
        if m.is_promotion() {
            let turn = self.game.pos.turn();
            let code = self.phys[m.to() as usize];
            let shown = code_piece(code).filter(|p| p.color == turn && p.role != Role::Pawn);
            let chosen = shown.map(|p| p.role).or(self.promo_choice);
            if let Some(role) = chosen {
                if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
                    self.complete(*m, out);
                    return;
                }
            }
            // 4.6c binds the pawn to this square, if the touched pieces allow it to go there.
            if let (None, Some(pawn)) = (self.committed, m.from()) {
                if self.breach(m).is_none() {
                    self.committed = Some(Commit::Promote { pawn, to: m.to() });
                }
            }
            self.promo_due = Some(self.now.saturating_add(self.s.promotion_ms));
            return;
        }
        if could_slide_on(&self.game.pos, &m) {
            self.settle = Some((self.now.saturating_add(self.s.settle_ms), Pending::Move(m)));
            return;
        }
        self.complete(m, out);
    }

    fn promotion_timeout(&mut self, out: &mut Vec<Event>) {
        let candidates = self.matching_moves();
        let role = self.promo_choice.unwrap_or(self.s.promotion_default);
        if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
            self.complete(*m, out);
        }
    }

    fn settled(&mut self, pending: Pending, out: &mut Vec<Event>) {
        match pending {
            Pending::Move(m) => self.complete(m, out),
            Pending::Illegal(from, to) => self.illegal_completed(from, to, out),
            Pending::Takeback(plan, shown) => {
                if self.takeback_plan() == Some(plan) {
                    self.apply_takeback(plan, shown, out);
                }
            }
        }
    }

    /// The board shows a piece moved from one square to another (possibly onto a square whose
    /// piece was lifted), and that is not a legal move: the attempted move.
    fn attempted_move(&self) -> Option<(Square, Square)> {
        let (to, placed) = self.last_change?;
        if !placed {
            return None;
        }
        let pos = &self.game.pos;
        let pos_occ = pos.board().occupied();
        let missing = pos_occ & !self.occ;
        let extra = self.occ & !pos_occ;
        // Only the player's own pieces make moves; an enemy piece moved is a displacement.
        let from = if extra == Bitboard::from_square(to) {
            match missing.count() {
                1 => (missing & pos.us()).first()?,
                2 => {
                    // A piece of the player moved while an enemy piece is off the board.
                    let ours = missing & pos.us();
                    if ours.count() != 1 {
                        return None;
                    }
                    ours.first()?
                }
                _ => return None,
            }
        } else if extra.is_empty()
            && missing.count() == 1
            && self.vacated.contains(to)
            && pos.them().contains(to)
        {
            // Set down on the square of an enemy piece that was taken off: a capture attempt.
            (missing & pos.us()).first()?
        } else {
            return None;
        };
        // A legal move with something else off the board is not an illegal move: the board
        // must be put right (mismatch), and the move is then made.
        let legal = pos
            .legal_moves()
            .iter()
            .any(|m| matches!(m, Move::Normal { .. }) && m.from() == Some(from) && m.to() == to);
        (from != to && !legal).then_some((from, to))
    }

    /// The piece stands where a legal move that is not finished yet puts it: the king on its
    /// castling square with the rook still to come (Art. 4.6b), or a pawn on its en passant
    /// square with the captured pawn still to be removed. Not an illegal move, not yet a move.
    fn partial_move(&self, from: Square, to: Square) -> bool {
        let pos = &self.game.pos;
        pos.legal_moves().iter().any(|m| match *m {
            Move::Castle { king, .. } => {
                king == from && castle_side(m).map(|s| s.king_to(pos.turn())) == Some(to)
            }
            Move::EnPassant { from: f, to: t } => f == from && t == to,
            _ => false,
        })
    }

    /// The board differs from the game only by pieces of the player to move in his hand
    /// (with or without an enemy piece he can capture), or by a castling in progress.
    fn in_progress(&self) -> bool {
        let pos = &self.game.pos;
        let pos_occ = pos.board().occupied();
        let missing = pos_occ & !self.occ;
        let extra = self.occ & !pos_occ;
        if self.wrong_pieces().any() {
            return false;
        }
        let legal = pos.legal_moves();
        let castling_in_progress = |king_to: Option<Square>| {
            legal.iter().any(|m| match *m {
                Move::Castle { king, rook } => {
                    let side = castle_side(m).map(|s| s.king_to(pos.turn()));
                    let in_hand = Bitboard::from_square(king) | Bitboard::from_square(rook);
                    (missing & !in_hand).is_empty()
                        && missing.contains(king)
                        && king_to.is_none_or(|k| side == Some(k))
                }
                _ => false,
            })
        };
        if extra.any() {
            return extra.count() == 1 && castling_in_progress(extra.first());
        }
        let ours = missing & pos.us();
        let theirs = missing & pos.them();
        if ours.count() > 2 || theirs.count() > 1 {
            return false;
        }
        if ours.count() == 2 && (theirs.any() || !castling_in_progress(None)) {
            return false;
        }
        if let Some(victim) = theirs.first() {
            return legal.iter().any(|m| {
                footprint(pos.turn(), m).2 == Some(victim)
                    && (ours.is_empty() || m.from().is_some_and(|f| ours.contains(f)))
            });
        }
        true
    }

    /// Casual play: a rook move that turns out to be the first half of castling, or the board
    /// put back to an earlier position of the game, is a takeback.
    fn takeback_plan(&self) -> Option<Takeback> {
        if let Some(last) = self.game.plies.last() {
            if last.m.role() == Role::Rook {
                let before = &last.before;
                let color = before.turn();
                let castle = before.legal_moves().into_iter().find(|m| match *m {
                    Move::Castle { rook, .. } => {
                        Some(rook) == last.m.from()
                            && occupancy_after(before.board().occupied(), color, m) == self.occ
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
                p.before.board().occupied() == self.occ && self.board_shows(p.before.board())
            })
            .map(Takeback::To)
    }

    /// Takes back as planned, dated when the board first showed the earlier position (or
    /// right after the last event, to keep events in time order).
    fn apply_takeback(&mut self, plan: Takeback, shown: Millis, out: &mut Vec<Event>) {
        let now = self.now;
        self.now = shown.max(self.last_emit).min(now);
        match plan {
            Takeback::CastleAfterRook(castle) => {
                self.take_back(out);
                self.complete(castle, out);
            }
            Takeback::To(k) => {
                while self.game.plies.len() > k {
                    self.take_back(out);
                }
            }
        }
        self.now = now;
    }

    /// Takes back the last move of the record.
    fn take_back(&mut self, out: &mut Vec<Event>) {
        let Some(ply) = self.game.undo() else { return };
        self.swap_square = None;
        self.swap_lifted = false;
        let ply_no = ply_number(&ply.before);
        self.emit(
            out,
            EventKind::Takeback {
                ply: ply_no,
                san: ply.san.to_string(),
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
    }

    /// The rule a completed move breaks, with the square of the piece concerned (tournament).
    fn breach(&self, m: Move) -> Option<(&'static str, Square)> {
        let pos = &self.game.pos;
        // Art. 4.6b/c: a king released on its castling square, a pawn on its promotion square,
        // binds the move, whatever is touched after that.
        match self.committed {
            Some(Commit::Castle { king, king_to }) => {
                let castles_there = m.from() == Some(king)
                    && castle_side(&m).map(|s| s.king_to(pos.turn())) == Some(king_to);
                return (!castles_there).then_some(("4.6b", king));
            }
            Some(Commit::Promote { pawn, to }) => {
                let promotes_there = m.from() == Some(pawn) && m.to() == to && m.is_promotion();
                return (!promotes_there).then_some(("4.6c", pawn));
            }
            None => {}
        }
        // The obligation stands from the touches made before the player began this move
        // (touching a piece to move it is not what obliges him), and from all touches (a king
        // touched, then the rook, must castle even if the king moves).
        let (emptied, _, victim) = footprint(pos.turn(), &m);
        let involved = emptied | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let began = self
            .touches
            .iter()
            .position(|(sq, _)| involved.contains(*sq))
            .unwrap_or(self.touches.len());
        obligation(pos, &self.touches[..began])
            .filter(|o| !o.allows(m))
            .or_else(|| obligation(pos, &self.touches).filter(|o| !o.allows(m)))
            .map(|o| (o.rule, o.square))
    }

    /// A legal move's last physical step is done: record it, unless it breaks touch-move.
    fn complete(&mut self, m: Move, out: &mut Vec<Event>) {
        if self.s.mode == Mode::Tournament {
            if let Some((rule, square)) = self.breach(m) {
                self.refuse_touch_move(rule, square, out);
                return;
            }
        }
        // Art. 6.8: with a clock button the move is complete when the clock is pressed,
        // unless it ends the game.
        if self.s.switch == ClockSwitch::Button && !self.pressing && !self.move_ends_game(m) {
            self.awaiting_clock = Some(Pending::Move(m));
            return;
        }
        let color = self.game.pos.turn();
        let ply = ply_number(&self.game.pos);
        let san = self.game.play(m, self.now);
        let say = self.s.phrases.announce(&san, m);
        let clocks = self.clock.as_mut().map(|c| {
            c.complete_move(color, self.now);
            (
                c.remaining(Color::White, self.now),
                c.remaining(Color::Black, self.now),
            )
        });
        if let Some(last) = self.game.plies.last_mut() {
            last.clocks = clocks;
        }
        self.arm_warnings();
        self.new_turn();
        self.swap_square = m.is_promotion().then(|| m.to());
        self.swap_lifted = false;
        self.owe_restored = false;
        self.mismatch_reported = None;
        self.last_say = Some(say.clone());
        self.emit(
            out,
            EventKind::Move {
                ply,
                color,
                uci: uci(m, color),
                san: san.to_string(),
                fen: fen_of(&self.game.pos),
                say,
                white_ms: clocks.map(|c| c.0),
                black_ms: clocks.map(|c| c.1),
            },
        );
        if let Some((w, b)) = clocks {
            self.emit(
                out,
                EventKind::Clock {
                    white_ms: w,
                    black_ms: b,
                    running: Some(!color),
                },
            );
        }
        if let Some(ending) = self.game.automatic_ending(&self.s.rules) {
            self.end_game(ending, out);
        }
    }

    /// The move would end the game at once (mate, stalemate, dead position...).
    fn move_ends_game(&self, m: Move) -> bool {
        let mut game = self.game.clone();
        game.play(m, self.now);
        game.automatic_ending(&self.s.rules).is_some()
    }

    fn refuse_touch_move(&mut self, rule: &'static str, square: Square, out: &mut Vec<Event>) {
        let pos = &self.game.pos;
        let color = pos.turn();
        let pos_occ = pos.board().occupied();
        self.phase = Phase::AwaitRestore {
            diff: (pos_occ & !self.occ, self.occ & !pos_occ),
        };
        self.settle = None;
        self.promo_due = None;
        self.emit(
            out,
            EventKind::TouchMove {
                color,
                square,
                rule,
            },
        );
        let what = match (rule, self.game.pos.board().piece_at(square)) {
            ("4.4a", _) => self.s.phrases.words.must_castle.clone(),
            (_, Some(p)) => self.s.phrases.piece_on(p.role, square),
            (_, None) => self.s.phrases.square(square),
        };
        let text = format!("{}: {what}", self.s.phrases.words.touch_move);
        self.say(out, text, Priority::Error);
    }

    fn illegal_completed(&mut self, from: Square, to: Square, out: &mut Vec<Event>) {
        let pos = &self.game.pos;
        let color = pos.turn();
        let reason = illegal_reason(pos, from, to);
        let pos_occ = pos.board().occupied();
        self.phase = Phase::AwaitRestore {
            diff: (pos_occ & !self.occ, self.occ & !pos_occ),
        };
        self.owe_restored = true;
        self.illegal_counts[color] += 1;
        let count = self.illegal_counts[color];
        let penalty = self.s.rules.illegal_penalty(self.s.time_control.as_ref());
        let loses = penalty.loses_at.is_some_and(|n| count >= n);
        let (penalty_name, extra_ms) = if loses {
            ("loss", None)
        } else if penalty.loses_at.is_none() && penalty.extra_ms == 0 {
            ("none", None)
        } else if let Some(clock) = &mut self.clock {
            clock.add(!color, penalty.extra_ms);
            ("extra_time", Some(penalty.extra_ms))
        } else {
            ("warning", None)
        };
        self.emit(
            out,
            EventKind::Illegal {
                color,
                count,
                reason,
                penalty: penalty_name,
                extra_ms,
                attempted: format!("{from}{to}"),
            },
        );
        let piece = self.game.pos.board().piece_at(from);
        let mut text = self.s.phrases.words.illegal_move.clone();
        if let Some(p) = piece {
            text = format!("{text}. {}", self.s.phrases.piece_on(p.role, from));
        }
        self.say(out, text, Priority::Error);
        if loses {
            // Art. 7.4b: lost, unless the opponent cannot mate by any series of legal moves.
            let winner = (!self.game.pos.has_insufficient_material(!color)).then_some(!color);
            self.end_game(
                Ending {
                    winner,
                    reason: "illegal_moves",
                },
                out,
            );
        }
    }

    /// Squares where a board that identifies pieces shows another piece than the game has.
    fn wrong_pieces(&self) -> Bitboard {
        if !self.ids_known {
            return Bitboard::EMPTY;
        }
        let board = self.game.pos.board();
        (board.occupied() & self.occ)
            .into_iter()
            .filter(|sq| {
                let code = self.phys[*sq as usize];
                code >= 2 && board.piece_at(*sq).map(piece_code) != Some(code)
            })
            .collect()
    }

    fn report_mismatch(&mut self, out: &mut Vec<Event>) {
        let pos_occ = self.game.pos.board().occupied();
        // A wrong piece on a square counts as the right one missing there.
        let missing = (pos_occ & !self.occ) | self.wrong_pieces();
        let extra = self.occ & !pos_occ;
        if (missing.is_empty() && extra.is_empty())
            || self.mismatch_reported == Some((missing, extra))
        {
            return;
        }
        self.mismatch_reported = Some((missing, extra));
        let board = self.game.pos.board();
        let named: Vec<(Square, Option<Role>)> = missing
            .into_iter()
            .map(|sq| (sq, board.role_at(sq)))
            .collect();
        let extra_sqs: Vec<Square> = extra.into_iter().collect();
        let text = match (self.phase, self.game.plies.last()) {
            // F2.1: "Auf Ihrem Brett: Springer von Gustav eins nach Felix drei".
            (Phase::Replicate { m }, Some(_)) => self.s.phrases.on_your_board(m),
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

    fn flag_falls(&mut self, out: &mut Vec<Event>) {
        let Some(flagged) = self.clock.as_ref().and_then(|c| c.running()) else {
            return;
        };
        // Art. 6.10: a draw when the opponent could not mate by any series of legal moves.
        let winner = (!self.game.pos.has_insufficient_material(!flagged)).then_some(!flagged);
        self.end_game(
            Ending {
                winner,
                reason: "time_forfeit",
            },
            out,
        );
    }

    fn end_game(&mut self, ending: Ending, out: &mut Vec<Event>) {
        self.game.ending = Some(ending);
        self.phase = Phase::Over;
        self.settle = None;
        self.promo_due = None;
        self.mismatch_due = None;
        self.draw_offer = None;
        self.emit(
            out,
            EventKind::GameOver {
                result: ending.result(),
                reason: ending.reason,
            },
        );
        let text = self.s.phrases.game_over(ending.winner, ending.reason);
        self.say(out, text, Priority::Result);
        if let Some(clock) = &mut self.clock {
            clock.stop(self.now);
        }
        self.emit_clock(out);
    }

    /// Reports both clocks as they stand (a `clock` event), when there is a clock.
    fn emit_clock(&mut self, out: &mut Vec<Event>) {
        let Some(c) = &self.clock else { return };
        let kind = EventKind::Clock {
            white_ms: c.remaining(Color::White, self.now),
            black_ms: c.remaining(Color::Black, self.now),
            running: c.running(),
        };
        self.emit(out, kind);
    }

    /// The board's link changed (a driver reports it): said, so a blind player knows.
    pub fn link(&mut self, t: Millis, state: LinkState, out: &mut Vec<Event>) {
        self.advance(t, out);
        let w = &self.s.phrases.words;
        let (name, text) = match state {
            LinkState::Waiting => ("waiting", w.board_waiting.clone()),
            LinkState::Connected => ("connected", w.board_connected.clone()),
            LinkState::Lost => ("lost", w.board_lost.clone()),
            LinkState::Reconnected => ("reconnected", w.board_reconnected.clone()),
        };
        self.relinked = matches!(state, LinkState::Reconnected | LinkState::Connected);
        self.emit(out, EventKind::Link { state: name });
        self.say(out, text, Priority::Error);
    }

    /// A control input at time `t`.
    pub fn press(&mut self, t: Millis, button: Button, out: &mut Vec<Event>) {
        self.advance(t, out);
        let over = self.phase == Phase::Over;
        let w = &self.s.phrases.words;
        match button {
            Button::Clock => {
                // Pressing the clock completes whatever the player left standing.
                if !over {
                    self.pressing = true;
                    if let Some((_, pending)) = self.settle.take() {
                        self.settled(pending, out);
                    } else if self.promo_due.take().is_some() {
                        self.promotion_timeout(out);
                    } else if let Some(pending) = self.awaiting_clock.take() {
                        self.settled(pending, out);
                    }
                    self.pressing = false;
                }
            }
            Button::Repeat => {
                let text = self
                    .last_say
                    .clone()
                    .unwrap_or_else(|| w.no_move_yet.clone());
                self.say(out, text, Priority::Query);
            }
            Button::Time => {
                let text = self.time_text();
                self.emit_clock(out);
                self.say(out, text, Priority::Query);
            }
            Button::Moves => {
                let text = self.time_text();
                self.say(out, text, Priority::Query);
            }
            Button::Position => {
                let text = self.pieces_text(None, None, Bitboard::FULL);
                self.say(out, text, Priority::Query);
            }
            Button::Promote(role) => {
                if !over {
                    self.promo_choice = Some(role);
                    if self.promo_due.is_some() {
                        let candidates = self.matching_moves();
                        if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role)) {
                            self.complete(*m, out);
                        }
                    }
                }
            }
            Button::Draw => {
                if !over {
                    self.draw_button(out);
                }
            }
            Button::Claim => {
                if !over {
                    self.claim(out);
                }
            }
            Button::Resign => {
                if !over {
                    let loser = self.game.pos.turn();
                    self.end_game(
                        Ending {
                            winner: Some(!loser),
                            reason: "resignation",
                        },
                        out,
                    );
                }
            }
            Button::Adjust => {
                if !over {
                    self.adjusting = true;
                    let text = w.adjust.clone();
                    self.say(out, text, Priority::Info);
                }
            }
            Button::NewGame => self.new_game(self.now, Chess::default(), false, out),
            Button::Takeback => {
                if self.s.mode == Mode::Casual && !self.game.plies.is_empty() {
                    // The record goes back at once; the board is still to be put back (the
                    // move standing there is not made again), and is reported if it is not.
                    self.take_back(out);
                    self.phase = Phase::AwaitRestore {
                        diff: (Bitboard::EMPTY, Bitboard::EMPTY),
                    };
                    self.owe_restored = true;
                    self.evaluate(out);
                } else {
                    let text = if self.s.mode == Mode::Casual {
                        w.no_move_yet.clone()
                    } else {
                        w.no_takeback.clone()
                    };
                    self.say(out, text, Priority::Info);
                }
            }
        }
    }

    fn draw_button(&mut self, out: &mut Vec<Event>) {
        let to_move = self.game.pos.turn();
        match self.draw_offer {
            Some(_) => self.end_game(
                Ending {
                    winner: None,
                    reason: "agreement",
                },
                out,
            ),
            None => {
                // Art. 9.1a: the offer belongs to the player who has just moved, while the
                // opponent has not touched a piece; otherwise to the player to move.
                let by = if self.touches.is_empty() && !self.game.plies.is_empty() {
                    !to_move
                } else {
                    to_move
                };
                self.draw_offer = Some(by);
                let w = &self.s.phrases.words;
                let text = format!("{} {}", w.color(by), w.draw_offer);
                self.say(out, text, Priority::Info);
            }
        }
    }

    fn claim(&mut self, out: &mut Vec<Event>) {
        let color = self.game.pos.turn();
        let (kind, valid, reason) = if self.game.repetitions() >= 3 {
            ("threefold", true, "threefold_repetition")
        } else if self.game.pos.halfmoves() >= 100 {
            ("fifty_moves", true, "fifty_moves")
        } else if self.game.pos.halfmoves() >= 50 && self.game.repetitions() < 2 {
            ("fifty_moves", false, "")
        } else {
            ("threefold", false, "")
        };
        self.emit(out, EventKind::Claim { color, kind, valid });
        let w = &self.s.phrases.words;
        if valid {
            let text = w.claim_valid.clone();
            self.say(out, text, Priority::Result);
            self.end_game(
                Ending {
                    winner: None,
                    reason,
                },
                out,
            );
            return;
        }
        let text = w.claim_invalid.clone();
        self.say(out, text, Priority::Result);
        if let Some(clock) = &mut self.clock {
            let (claimant, bonus) = self
                .s
                .rules
                .wrong_claim_times(clock.remaining(color, self.now));
            clock.set(color, claimant, self.now);
            clock.add(!color, bonus);
        }
        self.arm_warnings();
        self.emit_clock(out);
    }

    /// Answers a command (spoken with query priority) and carries out orders. Returns the text
    /// said, for the control socket's answer.
    pub fn command(&mut self, t: Millis, cmd: Command, out: &mut Vec<Event>) -> String {
        self.advance(t, out);
        let p = self.s.phrases.clone();
        let w = &p.words;
        let board = self.game.pos.board().clone();
        let text = match cmd {
            Command::Last => self
                .last_say
                .clone()
                .unwrap_or_else(|| w.no_move_yet.clone()),
            Command::Moves(n) => {
                let plies = &self.game.plies;
                let from = plies.len().saturating_sub(n.max(1) as usize);
                let said: Vec<String> = plies[from..]
                    .iter()
                    .map(|ply| {
                        let number = ply.before.fullmoves().get();
                        let dots = if ply.before.turn() == Color::White {
                            "."
                        } else {
                            "..."
                        };
                        format!("{number}{dots} {}", p.announce(&ply.san, ply.m))
                    })
                    .collect();
                if said.is_empty() {
                    w.no_move_yet.clone()
                } else {
                    said.join(", ")
                }
            }
            Command::Time => self.time_text(),
            Command::Turn => format!("{} {}", w.color(self.game.pos.turn()), w.to_move),
            Command::Position(color, role) => self.pieces_text(color, role, Bitboard::FULL),
            Command::Rank(r) => {
                let text = self.pieces_text(None, None, Bitboard::from_rank(r));
                format!("{} {}: {text}", w.rank, w.rank(r))
            }
            Command::File(f) => {
                let text = self.pieces_text(None, None, Bitboard::from_file(f));
                format!("{} {}: {text}", w.file_word, w.file(f))
            }
            Command::Square(sq) => match board.piece_at(sq) {
                Some(pc) => format!("{} {} {}", w.color(pc.color), w.piece(pc.role), {
                    let mut s = w.on.clone();
                    p.push_square(&mut s, sq);
                    s
                }),
                None => format!("{} {}", p.square(sq), w.empty),
            },
            Command::Pause | Command::Resume | Command::TogglePause | Command::Start => {
                let standing = self.clock.as_ref().is_some_and(|c| c.is_paused());
                let pause = match cmd {
                    Command::Pause => true,
                    Command::TogglePause => !standing,
                    _ => false,
                };
                let turn = self.game.pos.turn();
                let over = self.phase == Phase::Over;
                if let Some(c) = &mut self.clock {
                    if pause {
                        c.pause(self.now);
                    } else if standing {
                        c.resume(self.now);
                    } else if cmd == Command::Start && c.running().is_none() && !over {
                        c.start(turn, self.now);
                    }
                }
                self.emit_clock(out);
                if pause {
                    w.paused.clone()
                } else if cmd == Command::Start {
                    w.clock_started.clone()
                } else {
                    w.resumed.clone()
                }
            }
            Command::Help => self.s.help.clone().unwrap_or_else(|| w.help.clone()),
            Command::Voice(change) => {
                let v = self.voice;
                let (rate, volume) = match change {
                    VoiceChange::Faster => (v.rate + VoiceLevel::RATE_STEP, v.volume),
                    VoiceChange::Slower => (v.rate.saturating_sub(VoiceLevel::RATE_STEP), v.volume),
                    VoiceChange::Louder => (v.rate, v.volume + VoiceLevel::VOLUME_STEP),
                    VoiceChange::Quieter => {
                        (v.rate, v.volume.saturating_sub(VoiceLevel::VOLUME_STEP))
                    }
                };
                let next = VoiceLevel {
                    rate: rate.clamp(*VoiceLevel::RATES.start(), *VoiceLevel::RATES.end()),
                    volume: volume.clamp(*VoiceLevel::VOLUMES.start(), *VoiceLevel::VOLUMES.end()),
                };
                let text = if next == v {
                    w.voice_limit.clone()
                } else {
                    match change {
                        VoiceChange::Faster => w.faster.clone(),
                        VoiceChange::Slower => w.slower.clone(),
                        VoiceChange::Louder => w.louder.clone(),
                        VoiceChange::Quieter => w.quieter.clone(),
                    }
                };
                self.voice = next;
                // The new voice speaks its own confirmation.
                self.emit(
                    out,
                    EventKind::Voice {
                        rate: next.rate,
                        volume: next.volume,
                    },
                );
                text
            }
            Command::Press(b @ (Button::Resign | Button::NewGame | Button::Takeback)) => {
                let confirmed = self
                    .unconfirmed
                    .take()
                    .is_some_and(|(u, at)| u == b && self.now.saturating_sub(at) <= CONFIRM_MS);
                if !confirmed {
                    self.unconfirmed = Some((b, self.now));
                    let text = w.confirm.clone();
                    self.say(out, text.clone(), Priority::Query);
                    return text;
                }
                let before = out.len();
                self.press(self.now, b, out);
                return said_since(out, before);
            }
            Command::Press(b) => {
                let before = out.len();
                self.press(self.now, b, out);
                return said_since(out, before);
            }
        };
        self.say(out, text.clone(), Priority::Query);
        text
    }

    /// The pieces on `squares`, of one side or kind if asked, white first, kings first.
    fn pieces_text(&self, color: Option<Color>, role: Option<Role>, squares: Bitboard) -> String {
        let p = &self.s.phrases;
        let board = self.game.pos.board();
        let mut parts = Vec::new();
        for c in [Color::White, Color::Black]
            .into_iter()
            .filter(|c| color.is_none_or(|x| x == *c))
        {
            let mut side = Vec::new();
            for r in [
                Role::King,
                Role::Queen,
                Role::Rook,
                Role::Bishop,
                Role::Knight,
                Role::Pawn,
            ] {
                if role.is_some_and(|x| x != r) {
                    continue;
                }
                for sq in board.by_piece(Piece { color: c, role: r }) & squares {
                    side.push(p.piece_on(r, sq));
                }
            }
            if !side.is_empty() {
                parts.push(format!("{}: {}", p.words.color(c), side.join(", ")));
            }
        }
        if parts.is_empty() {
            p.words.empty.clone()
        } else {
            parts.join(". ")
        }
    }

    /// F2.9d: the number of moves made and the time of both players.
    fn time_text(&self) -> String {
        let w = &self.s.phrases.words;
        let moves = self.game.plies.len().div_ceil(2);
        let mut text = match moves {
            1 => w.one_move.clone(),
            n => format!("{n} {}", w.moves_made),
        };
        if let Some(c) = &self.clock {
            let p = &self.s.phrases;
            text = format!(
                "{text}. {} {}. {} {}",
                w.white,
                p.duration(c.remaining(Color::White, self.now)),
                w.black,
                p.duration(c.remaining(Color::Black, self.now))
            );
        }
        format!("{text}. {} {}", w.color(self.game.pos.turn()), w.to_move)
    }
}

/// What was said by the events from `from` on (the answer to an order).
fn said_since(out: &[Event], from: usize) -> String {
    let said: Vec<&str> = out[from..]
        .iter()
        .filter_map(|e| e.kind.spoken().map(|(t, _)| t))
        .collect();
    said.join(". ")
}

/// UCI notation of a move, castling as the king's two-square move.
fn uci(m: Move, color: Color) -> String {
    let (from, to) = match m {
        Move::Castle { king, .. } => (king, castle_side(&m).map_or(king, |s| s.king_to(color))),
        _ => (m.from().unwrap_or(m.to()), m.to()),
    };
    let mut s = format!("{from}{to}");
    if let Some(p) = m.promotion() {
        s.push(p.char());
    }
    s
}
