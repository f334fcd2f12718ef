//! Game events: what the engine tells the outside world. Their JSON form is the
//! `chessboardd replay` contract (docs/replay.md), so names here are part of the interface.

use serde::Serialize;
use shakmaty::{Color, Role, Square};

use crate::named;
use crate::words::{Names, Words};

/// Simulated or monotonic time in milliseconds.
pub type Millis = u64;

/// Why a game ended: the `reason` of a `game_over` event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Checkmate,
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    SeventyfiveMoves,
    ThreefoldRepetition,
    FiftyMoves,
    Agreement,
    Resignation,
    TimeForfeit,
    /// Lost by illegal moves (Art. 7.5b).
    IllegalMoves,
}

impl EndReason {
    pub const NAMES: Names<EndReason> = Names {
        what: "reason",
        table: &[
            (EndReason::Checkmate, "checkmate"),
            (EndReason::Stalemate, "stalemate"),
            (EndReason::DeadPosition, "dead_position"),
            (EndReason::FivefoldRepetition, "fivefold_repetition"),
            (EndReason::SeventyfiveMoves, "seventyfive_moves"),
            (EndReason::ThreefoldRepetition, "threefold_repetition"),
            (EndReason::FiftyMoves, "fifty_moves"),
            (EndReason::Agreement, "agreement"),
            (EndReason::Resignation, "resignation"),
            (EndReason::TimeForfeit, "time_forfeit"),
            (EndReason::IllegalMoves, "illegal_moves"),
        ],
    };

    /// The name in JSON, the record and the PGN comment.
    pub fn name(self) -> &'static str {
        EndReason::NAMES.name(self)
    }

    /// The words that say it.
    pub fn words(self, w: &Words) -> &str {
        match self {
            EndReason::Checkmate => &w.checkmate,
            EndReason::Stalemate => &w.stalemate,
            EndReason::DeadPosition => &w.dead_position,
            EndReason::FivefoldRepetition => &w.fivefold,
            EndReason::SeventyfiveMoves => &w.seventyfive,
            EndReason::ThreefoldRepetition => &w.threefold,
            EndReason::FiftyMoves => &w.fifty_moves,
            EndReason::Agreement => &w.agreement,
            EndReason::Resignation => &w.resignation,
            EndReason::TimeForfeit => &w.time_forfeit,
            EndReason::IllegalMoves => &w.illegal_moves,
        }
    }
}

named!(EndReason);

/// Why a move is not legal: the `reason` of an `illegal` event.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IllegalReason {
    /// Nothing stood on the from-square.
    NotAMove,
    OpponentPiece,
    OwnPieceOnSquare,
    CastlingNotAllowed,
    NotALegalMove,
    KingInCheck,
    LeavesKingInCheck,
}

impl IllegalReason {
    pub const NAMES: Names<IllegalReason> = Names {
        what: "illegal move reason",
        table: &[
            (IllegalReason::NotAMove, "not_a_move"),
            (IllegalReason::OpponentPiece, "opponent_piece"),
            (IllegalReason::OwnPieceOnSquare, "own_piece_on_square"),
            (IllegalReason::CastlingNotAllowed, "castling_not_allowed"),
            (IllegalReason::NotALegalMove, "not_a_legal_move"),
            (IllegalReason::KingInCheck, "king_in_check"),
            (IllegalReason::LeavesKingInCheck, "leaves_king_in_check"),
        ],
    };

    pub fn name(self) -> &'static str {
        IllegalReason::NAMES.name(self)
    }
}

named!(IllegalReason);

/// What a completed illegal move costs: the `penalty` of an `illegal` event (Art. 7.5,
/// Appendices A4, B, C3).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Penalty {
    /// Nothing (casual mode, or the edition has none).
    None,
    /// A warning, there being no clock to give the opponent time on.
    Warning,
    /// Time added to the opponent's clock (the event's `extra_ms`).
    ExtraTime,
    /// The game is lost.
    Loss,
    /// The opponent may claim the win (blitz, Appendix C3).
    ClaimWin,
}

impl Penalty {
    pub const NAMES: Names<Penalty> = Names {
        what: "penalty",
        table: &[
            (Penalty::None, "none"),
            (Penalty::Warning, "warning"),
            (Penalty::ExtraTime, "extra_time"),
            (Penalty::Loss, "loss"),
            (Penalty::ClaimWin, "claim_win"),
        ],
    };

    pub fn name(self) -> &'static str {
        Penalty::NAMES.name(self)
    }
}

named!(Penalty);

/// The article of the touch-move rule a player has to follow: the `rule` of a `touch_move`
/// event.
#[allow(non_camel_case_types)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum TouchRule {
    /// An own piece touched: move it.
    #[serde(rename = "4.3a")]
    Art4_3a,
    /// An opponent's piece touched: capture it.
    #[serde(rename = "4.3b")]
    Art4_3b,
    /// One piece of each colour touched: capture the one with the other.
    #[serde(rename = "4.3c")]
    Art4_3c,
    /// The king, then a rook: castle on that side.
    #[serde(rename = "4.4a")]
    Art4_4a,
    /// A rook, then the king: no castling; move the rook.
    #[serde(rename = "4.4b")]
    Art4_4b,
    /// The king, then a rook, castling illegal: another king move.
    #[serde(rename = "4.4c")]
    Art4_4c,
    /// The king released on its castling square: the castling.
    #[serde(rename = "4.6b")]
    Art4_6b,
    /// A pawn released on its promotion square: the promotion.
    #[serde(rename = "4.6c")]
    Art4_6c,
}

impl TouchRule {
    pub const NAMES: Names<TouchRule> = Names {
        what: "touch-move rule",
        table: &[
            (TouchRule::Art4_3a, "4.3a"),
            (TouchRule::Art4_3b, "4.3b"),
            (TouchRule::Art4_3c, "4.3c"),
            (TouchRule::Art4_4a, "4.4a"),
            (TouchRule::Art4_4b, "4.4b"),
            (TouchRule::Art4_4c, "4.4c"),
            (TouchRule::Art4_6b, "4.6b"),
            (TouchRule::Art4_6c, "4.6c"),
        ],
    };

    pub fn name(self) -> &'static str {
        TouchRule::NAMES.name(self)
    }
}

named!(TouchRule);

/// Identifies a position of the game: the games started, the plies, the takebacks made. An
/// answer carrying another key is for a position that is gone, and dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct PositionKey {
    games_started: u64,
    plies: usize,
    takebacks: u64,
}

impl PositionKey {
    pub(in crate::engine) fn new(games_started: u64, plies: usize, takebacks: u64) -> PositionKey {
        PositionKey {
            games_started,
            plies,
            takebacks,
        }
    }

    pub fn games_started(&self) -> u64 {
        self.games_started
    }

    pub fn plies(&self) -> usize {
        self.plies
    }

    pub fn takebacks(&self) -> u64 {
        self.takebacks
    }
}

/// What the player asked the computer (the `what` of a `computer_ask` event).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Asked {
    Hint,
    Evaluate,
}

impl Asked {
    pub fn name(self) -> &'static str {
        match self {
            Asked::Hint => "hint",
            Asked::Evaluate => "evaluate",
        }
    }
}

/// How urgent a spoken message is; the speech queue orders by it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// An answer to a query: never interrupts a move.
    Query,
    /// Status and information (restored, new game, draw offer).
    Info,
    /// A game result or a claim.
    Result,
    /// Illegal move, touch-move obligation, board mismatch: interrupts queries.
    Error,
}

/// One event with the time it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    pub t: Millis,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened. Serialized with a `type` tag in snake case.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    GameStart {
        fen: String,
    },
    Touched {
        #[serde(serialize_with = "ser_square")]
        square: Square,
        #[serde(serialize_with = "ser_role")]
        piece: Role,
        #[serde(serialize_with = "ser_color")]
        color: Color,
    },
    /// A piece touched and put back on its square, not part of the move (Appendix F2.9 (e):
    /// the sighted player's touches told to the blind player): `by` touched it.
    PutBack {
        #[serde(serialize_with = "ser_square")]
        square: Square,
        #[serde(serialize_with = "ser_role")]
        piece: Role,
        #[serde(serialize_with = "ser_color")]
        color: Color,
        #[serde(serialize_with = "ser_color")]
        by: Color,
    },
    Move {
        ply: u32,
        #[serde(serialize_with = "ser_color")]
        color: Color,
        uci: String,
        san: String,
        fen: String,
        say: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        white_ms: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        black_ms: Option<i64>,
        /// Not seen being made: read from the board afterwards (readings lost, a capture too
        /// quick for the sensors, moves made while the board was away).
        recovered: bool,
        /// Touch-move was judged for this move (tournament mode, the move seen being made).
        touch_checked: bool,
        /// One of the moves of a correction: said in the correction's `say` already (written
        /// only when true).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        corrected: bool,
    },
    Illegal {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        count: u32,
        reason: IllegalReason,
        penalty: Penalty,
        #[serde(skip_serializing_if = "Option::is_none")]
        extra_ms: Option<i64>,
        /// The attempted move, from-square then to-square.
        attempted: String,
    },
    TouchMove {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        #[serde(serialize_with = "ser_square")]
        square: Square,
        rule: TouchRule,
    },
    Mismatch {
        #[serde(serialize_with = "ser_squares")]
        missing: Vec<Square>,
        #[serde(serialize_with = "ser_squares")]
        extra: Vec<Square>,
    },
    Restored {
        fen: String,
    },
    Clock {
        white_ms: i64,
        black_ms: i64,
        #[serde(serialize_with = "ser_opt_color")]
        running: Option<Color>,
    },
    Takeback {
        ply: u32,
        san: String,
    },
    /// Later readings showed that moves already announced, or a ruling already given, were not
    /// what happened: every ply from `ply` on is withdrawn (like a takeback), the rulings
    /// withdrawn with them no longer count, and the `move` events of the story the board now
    /// shows follow (`recovered`).
    Correction {
        /// The first ply withdrawn (1 = white's first move).
        ply: u32,
        /// The SAN of every withdrawn ply, in order (possibly none).
        withdrawn: Vec<String>,
        /// The rulings withdrawn with them, in order: `illegal`, `touch_move`.
        rulings: Vec<&'static str>,
        /// The spoken correction ("Korrektur: ...").
        say: String,
    },
    Say {
        text: String,
        priority: Priority,
    },
    Claim {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        kind: &'static str,
        valid: bool,
        /// Claimed before the move that makes it (9.2a, 9.3a), judged after that move.
        with_move: bool,
    },
    GameOver {
        result: &'static str,
        reason: EndReason,
    },
    /// A player's clock has come down to a warning threshold (5 minutes, 1 minute, 10 s).
    TimeWarning {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        remaining_ms: i64,
        say: String,
    },
    /// The speech rate or volume was changed by a command (daemon only).
    Voice {
        rate: u32,
        volume: u32,
    },
    /// The speech is to stop the sentence being said, and the answers waiting (daemon only:
    /// the `silence` command).
    Silence,
    /// Two boards: the opponent's move is executed on this board too (F2.1).
    Replicated {
        uci: String,
    },
    /// Appendix A1: the player to move sealed his move; the clocks stand until the game is
    /// resumed. The sealed move is in no event until then (it goes to the journal only).
    Adjourned {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        /// The number of the sealed move (A2e).
        move_number: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        white_ms: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        black_ms: Option<i64>,
    },
    /// A game was taken up again from the record after the daemon was down (daemon only).
    Resumed {
        fen: String,
        plies: u32,
    },
    /// The board's link (daemon only): `waiting`, `connected`, `lost`, `silent`, `reconnected`.
    Link {
        state: &'static str,
    },
    /// The board keeps reporting a square without end: its sensor flickers (daemon only).
    Flicker {
        #[serde(serialize_with = "ser_square")]
        square: Square,
    },
    /// Playing against the computer: the player asked for a hint or an evaluation of the
    /// position `key`; the daemon has the UCI engine search and answers with
    /// `Engine::computer_answer` (daemon only).
    ComputerAsk {
        what: Asked,
        key: PositionKey,
    },
}

/// "White" or "Black", as the scoresheet's notes name a side.
pub fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

impl EventKind {
    /// What the scoresheet notes of this event (F2.5, a PGN comment): a claim and its
    /// verdict, an illegal move's penalty. None for every other event.
    pub fn scoresheet_note(&self) -> Option<String> {
        match self {
            EventKind::Claim {
                color,
                kind,
                valid,
                with_move,
            } => {
                let what = match *kind {
                    "threefold" => "a draw by threefold repetition",
                    "fifty_moves" => "a draw by the fifty-move rule",
                    "illegal_move" => "the win after an illegal move",
                    other => other,
                };
                let with = if *with_move {
                    " with the move made"
                } else {
                    ""
                };
                let verdict = if *valid { "valid" } else { "refused" };
                Some(format!(
                    "{} claims {what}{with}: {verdict}",
                    side_name(*color)
                ))
            }
            EventKind::Illegal {
                color,
                count,
                penalty,
                extra_ms,
                ..
            } => {
                let them = side_name(!*color);
                let cost = match penalty {
                    Penalty::None => return None,
                    Penalty::Warning => "a warning".to_string(),
                    Penalty::ExtraTime => {
                        let s = extra_ms.unwrap_or(0) / 1000;
                        format!("{} s added to {them}'s clock", s)
                    }
                    Penalty::Loss => "the game lost".to_string(),
                    Penalty::ClaimWin => format!("{them} may claim the win"),
                };
                Some(format!(
                    "Illegal move by {} ({count}): {cost}",
                    side_name(*color)
                ))
            }
            _ => None,
        }
    }

    /// The `type` tag of this event, as printed.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::GameStart { .. } => "game_start",
            EventKind::Touched { .. } => "touched",
            EventKind::PutBack { .. } => "put_back",
            EventKind::Move { .. } => "move",
            EventKind::Illegal { .. } => "illegal",
            EventKind::TouchMove { .. } => "touch_move",
            EventKind::Mismatch { .. } => "mismatch",
            EventKind::Restored { .. } => "restored",
            EventKind::Clock { .. } => "clock",
            EventKind::Takeback { .. } => "takeback",
            EventKind::Correction { .. } => "correction",
            EventKind::Say { .. } => "say",
            EventKind::Claim { .. } => "claim",
            EventKind::GameOver { .. } => "game_over",
            EventKind::Link { .. } => "link",
            EventKind::Flicker { .. } => "flicker",
            EventKind::TimeWarning { .. } => "time_warning",
            EventKind::Voice { .. } => "voice",
            EventKind::Silence => "silence",
            EventKind::Adjourned { .. } => "adjourned",
            EventKind::Resumed { .. } => "resumed",
            EventKind::Replicated { .. } => "replicated",
            EventKind::ComputerAsk { .. } => "computer_ask",
        }
    }

    /// The text to speak for this event, if it is an announcement.
    pub fn spoken(&self) -> Option<(&str, Priority)> {
        match self {
            EventKind::Move { say, .. } => Some((say, Priority::Result)),
            EventKind::Say { text, priority } => Some((text, *priority)),
            EventKind::TimeWarning { say, .. } => Some((say, Priority::Error)),
            EventKind::Correction { say, .. } => Some((say, Priority::Error)),
            _ => None,
        }
    }
}

/// A side's name in JSON: shakmaty's name of the colour (its `Display`, which allocates), as a
/// `&'static str` for the JSON written by hand. Names are read with shakmaty's `FromStr`.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

fn ser_square<S: serde::Serializer>(sq: &Square, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(sq)
}

fn ser_squares<S: serde::Serializer>(sqs: &[Square], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(sqs.iter().map(|sq| sq.to_string()))
}

fn ser_role<S: serde::Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_char(r.upper_char())
}

fn ser_color<S: serde::Serializer>(c: &Color, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(color_name(*c))
}

fn ser_opt_color<S: serde::Serializer>(c: &Option<Color>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(color_name(*c)),
        None => s.serialize_none(),
    }
}

impl Event {
    /// One JSON line, as `chessboardd replay` prints it.
    pub fn to_json(&self) -> String {
        self.to_json_on(None)
    }

    /// One JSON line naming the board it happened on (when there are several).
    pub fn to_json_on(&self, board: Option<&str>) -> String {
        let mut out = Vec::with_capacity(256);
        self.write_json(&mut out, board);
        // Only UTF-8 is written: the strings as they are, escapes in ASCII.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the JSON object (no newline) to `out`: `t`, `type`, the kind's fields in their
    /// order, then `board` when given. Written by hand, for `replay` writes one for every
    /// reading that means something; the `Serialize` derive, which says the same, checks it in
    /// the tests.
    pub fn write_json(&self, out: &mut Vec<u8>, board: Option<&str>) {
        let mut j = Json { out };
        j.out.extend_from_slice(b"{\"t\":");
        j.raw_num(self.t);
        j.str("type", self.kind.type_name());
        match &self.kind {
            EventKind::GameStart { fen } | EventKind::Restored { fen } => j.str("fen", fen),
            EventKind::Touched {
                square,
                piece,
                color,
            } => {
                j.square("square", *square);
                j.role("piece", *piece);
                j.color("color", *color);
            }
            EventKind::PutBack {
                square,
                piece,
                color,
                by,
            } => {
                j.square("square", *square);
                j.role("piece", *piece);
                j.color("color", *color);
                j.color("by", *by);
            }
            EventKind::Move {
                ply,
                color,
                uci,
                san,
                fen,
                say,
                white_ms,
                black_ms,
                recovered,
                touch_checked,
                corrected,
            } => {
                j.num("ply", *ply);
                j.color("color", *color);
                j.str("uci", uci);
                j.str("san", san);
                j.str("fen", fen);
                j.str("say", say);
                if let Some(w) = white_ms {
                    j.int("white_ms", *w);
                }
                if let Some(b) = black_ms {
                    j.int("black_ms", *b);
                }
                j.bool("recovered", *recovered);
                j.bool("touch_checked", *touch_checked);
                if *corrected {
                    j.bool("corrected", true);
                }
            }
            EventKind::Illegal {
                color,
                count,
                reason,
                penalty,
                extra_ms,
                attempted,
            } => {
                j.color("color", *color);
                j.num("count", *count);
                j.str("reason", reason.name());
                j.str("penalty", penalty.name());
                if let Some(x) = extra_ms {
                    j.int("extra_ms", *x);
                }
                j.str("attempted", attempted);
            }
            EventKind::TouchMove {
                color,
                square,
                rule,
            } => {
                j.color("color", *color);
                j.square("square", *square);
                j.str("rule", rule.name());
            }
            EventKind::Mismatch { missing, extra } => {
                j.squares("missing", missing);
                j.squares("extra", extra);
            }
            EventKind::Clock {
                white_ms,
                black_ms,
                running,
            } => {
                j.int("white_ms", *white_ms);
                j.int("black_ms", *black_ms);
                match running {
                    Some(c) => j.color("running", *c),
                    None => {
                        j.key("running");
                        j.out.extend_from_slice(b"null");
                    }
                }
            }
            EventKind::Takeback { ply, san } => {
                j.num("ply", *ply);
                j.str("san", san);
            }
            EventKind::Correction {
                ply,
                withdrawn,
                rulings,
                say,
            } => {
                j.num("ply", *ply);
                j.strs("withdrawn", withdrawn);
                j.strs("rulings", rulings);
                j.str("say", say);
            }
            EventKind::Say { text, priority } => {
                j.str("text", text);
                j.str("priority", priority.name());
            }
            EventKind::Claim {
                color,
                kind,
                valid,
                with_move,
            } => {
                j.color("color", *color);
                j.str("kind", kind);
                j.bool("valid", *valid);
                j.bool("with_move", *with_move);
            }
            EventKind::GameOver { result, reason } => {
                j.str("result", result);
                j.str("reason", reason.name());
            }
            EventKind::TimeWarning {
                color,
                remaining_ms,
                say,
            } => {
                j.color("color", *color);
                j.int("remaining_ms", *remaining_ms);
                j.str("say", say);
            }
            EventKind::Voice { rate, volume } => {
                j.num("rate", *rate);
                j.num("volume", *volume);
            }
            EventKind::Silence => {}
            EventKind::Replicated { uci } => j.str("uci", uci),
            EventKind::Adjourned {
                color,
                move_number,
                white_ms,
                black_ms,
            } => {
                j.color("color", *color);
                j.num("move_number", *move_number);
                if let Some(ms) = white_ms {
                    j.int("white_ms", *ms);
                }
                if let Some(ms) = black_ms {
                    j.int("black_ms", *ms);
                }
            }
            EventKind::Resumed { fen, plies } => {
                j.str("fen", fen);
                j.num("plies", *plies);
            }
            EventKind::Link { state } => j.str("state", state),
            EventKind::Flicker { square } => j.square("square", *square),
            EventKind::ComputerAsk { what, key } => {
                j.str("what", what.name());
                j.key("key");
                j.out.extend_from_slice(b"{\"games_started\":");
                j.raw_num(key.games_started());
                j.out.extend_from_slice(b",\"plies\":");
                j.raw_num(key.plies() as u64);
                j.out.extend_from_slice(b",\"takebacks\":");
                j.raw_num(key.takebacks());
                j.out.push(b'}');
            }
        }
        if let Some(name) = board {
            j.str("board", name);
        }
        j.out.push(b'}');
    }
}

impl Priority {
    /// The name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Priority::Query => "query",
            Priority::Info => "info",
            Priority::Result => "result",
            Priority::Error => "error",
        }
    }
}

/// Appends `n` in decimal (for the JSON lines and the FEN, written for every move).
pub(super) fn push_number(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The bytes a JSON string escapes: control characters, the quote, the backslash.
const ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Writes the members of a JSON object after its first one.
struct Json<'a> {
    out: &'a mut Vec<u8>,
}

impl Json<'_> {
    /// A member's name: the engine's own, never in need of escapes.
    fn key(&mut self, key: &str) {
        self.out.extend_from_slice(b",\"");
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn raw_num(&mut self, n: u64) {
        push_number(self.out, n);
    }

    /// A JSON string: quotes, backslashes and control characters escaped as serde_json does.
    fn raw_str(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.push(b'"');
        let bytes = s.as_bytes();
        if !bytes.iter().any(|&b| ESCAPED[usize::from(b)]) {
            self.out.extend_from_slice(bytes);
            self.out.push(b'"');
            return;
        }
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let escape: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..=0x1f => &[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ],
                _ => continue,
            };
            self.out.extend_from_slice(&bytes[start..i]);
            self.out.extend_from_slice(escape);
            start = i + 1;
        }
        self.out.extend_from_slice(&bytes[start..]);
        self.out.push(b'"');
    }

    fn str(&mut self, key: &str, value: &str) {
        self.key(key);
        self.raw_str(value);
    }

    fn strs<S: AsRef<str>>(&mut self, key: &str, values: &[S]) {
        self.key(key);
        self.out.push(b'[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.raw_str(v.as_ref());
        }
        self.out.push(b']');
    }

    fn num(&mut self, key: &str, n: impl Into<u64>) {
        self.key(key);
        self.raw_num(n.into());
    }

    fn int(&mut self, key: &str, n: i64) {
        self.key(key);
        if n < 0 {
            self.out.push(b'-');
        }
        self.raw_num(n.unsigned_abs());
    }

    fn bool(&mut self, key: &str, b: bool) {
        self.key(key);
        self.out
            .extend_from_slice(if b { b"true" as &[u8] } else { b"false" });
    }

    fn square(&mut self, key: &str, sq: Square) {
        self.key(key);
        self.out
            .extend_from_slice(&[b'"', sq.file().char() as u8, sq.rank().char() as u8, b'"']);
    }

    fn squares(&mut self, key: &str, sqs: &[Square]) {
        self.key(key);
        self.out.push(b'[');
        for (i, sq) in sqs.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_slice(&[
                b'"',
                sq.file().char() as u8,
                sq.rank().char() as u8,
                b'"',
            ]);
        }
        self.out.push(b']');
    }

    fn role(&mut self, key: &str, r: Role) {
        self.key(key);
        self.out
            .extend_from_slice(&[b'"', r.upper_char() as u8, b'"']);
    }

    fn color(&mut self, key: &str, c: Color) {
        self.str(key, color_name(c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_line_puts_the_time_first_then_the_kind_then_the_board() {
        let e = Event {
            t: 530,
            kind: EventKind::Touched {
                square: Square::E2,
                piece: Role::Pawn,
                color: Color::White,
            },
        };
        assert_eq!(
            e.to_json(),
            r#"{"t":530,"type":"touched","square":"e2","piece":"P","color":"white"}"#
        );
        assert_eq!(
            e.to_json_on(Some("blind \"1\"")),
            r#"{"t":530,"type":"touched","square":"e2","piece":"P","color":"white","board":"blind \"1\""}"#
        );
        let say = Event {
            t: 7,
            kind: EventKind::Say {
                text: "Brett prüfen: \"x\"".into(),
                priority: Priority::Error,
            },
        };
        let v: serde_json::Value = serde_json::from_str(&say.to_json()).unwrap();
        assert_eq!(v["t"], 7);
        assert_eq!(v["text"], "Brett prüfen: \"x\"");
        assert_eq!(v["priority"], "error");
    }

    /// The hand-written JSON is what the `Serialize` derive writes, byte for byte, for every
    /// kind of event (with and without the optional fields, and awkward strings).
    #[test]
    fn the_json_is_the_derives_json() {
        let odd = "a\"b\\c\nd\te\u{1}f\u{7f}ü€".to_string();
        let kinds = vec![
            EventKind::GameStart { fen: odd.clone() },
            EventKind::Touched {
                square: Square::H8,
                piece: Role::Knight,
                color: Color::Black,
            },
            EventKind::PutBack {
                square: Square::G1,
                piece: Role::Knight,
                color: Color::White,
                by: Color::Black,
            },
            EventKind::Move {
                ply: 12,
                color: Color::White,
                uci: "e7e8q".into(),
                san: "e8=Q+".into(),
                fen: odd.clone(),
                say: "Eva acht Dame Schach".into(),
                white_ms: Some(-5),
                black_ms: Some(299_000),
                recovered: true,
                touch_checked: false,
                corrected: true,
            },
            EventKind::Move {
                ply: 1,
                color: Color::Black,
                uci: "e2e4".into(),
                san: "e4".into(),
                fen: String::new(),
                say: String::new(),
                white_ms: None,
                black_ms: None,
                recovered: false,
                touch_checked: true,
                corrected: false,
            },
            EventKind::Illegal {
                color: Color::White,
                count: 2,
                reason: IllegalReason::NotALegalMove,
                penalty: Penalty::ExtraTime,
                extra_ms: Some(120_000),
                attempted: "g1g3".into(),
            },
            EventKind::Illegal {
                color: Color::Black,
                count: 0,
                reason: IllegalReason::OpponentPiece,
                penalty: Penalty::None,
                extra_ms: None,
                attempted: "a1a2".into(),
            },
            EventKind::TouchMove {
                color: Color::White,
                square: Square::A1,
                rule: TouchRule::Art4_4b,
            },
            EventKind::Mismatch {
                missing: vec![Square::B1, Square::H1],
                extra: vec![],
            },
            EventKind::Restored { fen: "x".into() },
            EventKind::Clock {
                white_ms: 1,
                black_ms: 2,
                running: Some(Color::Black),
            },
            EventKind::Clock {
                white_ms: 0,
                black_ms: 0,
                running: None,
            },
            EventKind::Takeback {
                ply: 3,
                san: "O-O-O".into(),
            },
            EventKind::Correction {
                ply: 5,
                withdrawn: vec!["Qxf6+".into(), odd.clone()],
                rulings: vec!["illegal"],
                say: "Korrektur: Dame Felix vier".into(),
            },
            EventKind::Correction {
                ply: 1,
                withdrawn: vec![],
                rulings: vec![],
                say: odd.clone(),
            },
            EventKind::Say {
                text: odd.clone(),
                priority: Priority::Query,
            },
            EventKind::Claim {
                color: Color::Black,
                kind: "threefold",
                valid: false,
                with_move: true,
            },
            EventKind::GameOver {
                result: "1/2-1/2",
                reason: EndReason::DeadPosition,
            },
            EventKind::TimeWarning {
                color: Color::White,
                remaining_ms: 60_000,
                say: "Weiß eine Minute".into(),
            },
            EventKind::Voice {
                rate: 200,
                volume: 90,
            },
            EventKind::Silence,
            EventKind::Replicated { uci: "e1g1".into() },
            EventKind::Adjourned {
                color: Color::Black,
                move_number: 41,
                white_ms: Some(1_000),
                black_ms: Some(2_000),
            },
            EventKind::Adjourned {
                color: Color::White,
                move_number: 1,
                white_ms: None,
                black_ms: None,
            },
            EventKind::Resumed {
                fen: "y".into(),
                plies: 40,
            },
            EventKind::Link { state: "lost" },
            EventKind::Flicker { square: Square::H4 },
            EventKind::ComputerAsk {
                what: Asked::Hint,
                key: PositionKey::new(3, 41, 2),
            },
            EventKind::ComputerAsk {
                what: Asked::Evaluate,
                key: PositionKey::new(1, 0, 0),
            },
        ];
        for kind in kinds {
            let e = Event { t: 123_456, kind };
            assert_eq!(e.to_json(), serde_json::to_string(&e).unwrap());
            let mut with_board = serde_json::to_value(&e).unwrap();
            with_board["board"] = serde_json::Value::from(odd.as_str());
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&e.to_json_on(Some(&odd))).unwrap(),
                with_board
            );
        }
    }

    #[test]
    fn sides_are_named_as_shakmaty_names_them() {
        for c in Color::ALL {
            assert_eq!(color_name(c), c.to_string());
            assert_eq!(color_name(c).parse::<Color>().ok(), Some(c));
        }
    }

    /// Every reason and rule is written in JSON by its table's name, which is the serde name.
    #[test]
    fn reasons_are_named_in_json_as_serde_names_them() {
        fn check<T: Copy + PartialEq + Serialize>(names: &Names<T>) {
            for (value, name) in names.table {
                assert_eq!(serde_json::to_value(value).unwrap(), *name);
            }
        }
        check(&EndReason::NAMES);
        check(&IllegalReason::NAMES);
        check(&TouchRule::NAMES);
        check(&Penalty::NAMES);
        assert_eq!(EndReason::NAMES.values().count(), 11);
        assert_eq!(IllegalReason::NAMES.values().count(), 7);
        assert_eq!(TouchRule::NAMES.values().count(), 8);
        assert_eq!(Penalty::NAMES.values().count(), 5);
    }
}
