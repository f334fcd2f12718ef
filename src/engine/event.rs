//! Game events: what the engine tells the outside world. Their JSON form is the
//! `chessboardd replay` contract (docs/replay.md), so names here are part of the interface.

use serde::Serialize;
use shakmaty::{Color, Role, Square};

/// Simulated or monotonic time in milliseconds.
pub type Millis = u64;

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
    },
    Illegal {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        count: u32,
        reason: &'static str,
        penalty: &'static str,
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
        rule: &'static str,
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
    Say {
        text: String,
        priority: Priority,
    },
    Claim {
        #[serde(serialize_with = "ser_color")]
        color: Color,
        kind: &'static str,
        valid: bool,
    },
    GameOver {
        result: &'static str,
        reason: &'static str,
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
    /// Two boards: the opponent's move is executed on this board too (F2.1).
    Replicated {
        uci: String,
    },
    /// A game was taken up again from the record after the daemon was down (daemon only).
    Resumed {
        fen: String,
        plies: u32,
    },
    /// The board's link (daemon only): `waiting`, `connected`, `lost`, `reconnected`.
    Link {
        state: &'static str,
    },
}

impl EventKind {
    /// The `type` tag of this event, as printed.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::GameStart { .. } => "game_start",
            EventKind::Touched { .. } => "touched",
            EventKind::Move { .. } => "move",
            EventKind::Illegal { .. } => "illegal",
            EventKind::TouchMove { .. } => "touch_move",
            EventKind::Mismatch { .. } => "mismatch",
            EventKind::Restored { .. } => "restored",
            EventKind::Clock { .. } => "clock",
            EventKind::Takeback { .. } => "takeback",
            EventKind::Say { .. } => "say",
            EventKind::Claim { .. } => "claim",
            EventKind::GameOver { .. } => "game_over",
            EventKind::Link { .. } => "link",
            EventKind::TimeWarning { .. } => "time_warning",
            EventKind::Voice { .. } => "voice",
            EventKind::Resumed { .. } => "resumed",
            EventKind::Replicated { .. } => "replicated",
        }
    }

    /// The text to speak for this event, if it is an announcement.
    pub fn spoken(&self) -> Option<(&str, Priority)> {
        match self {
            EventKind::Move { say, .. } => Some((say, Priority::Result)),
            EventKind::Say { text, priority } => Some((text, *priority)),
            EventKind::TimeWarning { say, .. } => Some((say, Priority::Error)),
            _ => None,
        }
    }
}

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
        // Serializing plain owned data into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// One JSON line naming the board it happened on (when there are several).
    pub fn to_json_on(&self, board: Option<&str>) -> String {
        let mut json = self.to_json();
        if let (Some(name), Some('}')) = (board, json.chars().last()) {
            json.pop();
            json.push_str(&format!(",\"board\":{}}}", serde_json::Value::from(name)));
        }
        json
    }
}
