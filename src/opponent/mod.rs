//! Playing against the computer: a UCI chess engine (Stockfish by default) run as a child
//! process, and an opening book.
//!
//! - [`uci`]: the engine as a tokio child process behind channels (start, handshake, options,
//!   searches, restarts when it dies, quit); never blocks the daemon's loop;
//! - [`book`]: a Polyglot `.bin` opening book, read by the daemon itself;
//! - [`OpponentSettings`]: `[opponent]` of the config, validated by `settings`.
//!
//! The engine side (whose move it is, the computer's move announced and executed on the
//! board) is the pure `engine`'s; the daemon ties the two together.

pub mod book;
pub mod uci;

use std::path::PathBuf;

/// Where Debian's `stockfish` package puts the engine.
pub const DEFAULT_ENGINE: &str = "/usr/games/stockfish";
/// The computer's thinking time per move without a time control.
pub const DEFAULT_MOVETIME_MS: u64 = 1000;
/// One thread and 16 MB of hash: friendly to a Raspberry Pi that also speaks.
pub const DEFAULT_THREADS: u32 = 1;
pub const DEFAULT_HASH_MB: u32 = 16;

/// Which colour the computer plays (`[opponent] color` is the colour of the computer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    White,
    #[default]
    Black,
    /// Drawn when the daemon starts a game (a game taken up from the journal keeps its colour).
    Random,
}

impl std::str::FromStr for ColorChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<ColorChoice, String> {
        match s {
            "white" => Ok(ColorChoice::White),
            "black" => Ok(ColorChoice::Black),
            "random" => Ok(ColorChoice::Random),
            other => Err(format!(
                "'{other}' is not a colour (accepted: white, black, random)"
            )),
        }
    }
}

impl ColorChoice {
    /// The colour for a new game; `seed` decides a random one.
    pub fn pick(self, seed: u64) -> shakmaty::Color {
        match self {
            ColorChoice::White => shakmaty::Color::White,
            ColorChoice::Black => shakmaty::Color::Black,
            ColorChoice::Random => shakmaty::Color::from_white(seed & 1 == 0),
        }
    }
}

/// How strong the computer plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strength {
    /// The engine's full strength.
    #[default]
    Full,
    /// `UCI_LimitStrength` and `UCI_Elo` (clamped to the engine's range).
    Elo(u32),
    /// 1 (weakest) to 20 (full strength), mapped onto the engine's `Skill Level`.
    Level(u32),
}

impl std::fmt::Display for Strength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strength::Full => f.write_str("full strength"),
            Strength::Elo(e) => write!(f, "Elo {e}"),
            Strength::Level(l) => write!(f, "level {l}"),
        }
    }
}

/// `[opponent]`: the computer the player plays against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpponentSettings {
    /// The UCI engine's program.
    pub engine: PathBuf,
    pub color: ColorChoice,
    pub strength: Strength,
    /// Thinking time per move when no time control is set (with one, the clocks are sent).
    pub movetime_ms: u64,
    pub threads: u32,
    pub hash_mb: u32,
    /// A Polyglot opening book.
    pub book: Option<PathBuf>,
    /// How long the engine may take to answer `uci` (and `isready`).
    pub handshake_ms: u64,
}

impl Default for OpponentSettings {
    fn default() -> OpponentSettings {
        OpponentSettings {
            engine: PathBuf::from(DEFAULT_ENGINE),
            color: ColorChoice::default(),
            strength: Strength::default(),
            movetime_ms: DEFAULT_MOVETIME_MS,
            threads: DEFAULT_THREADS,
            hash_mb: DEFAULT_HASH_MB,
            book: None,
            handshake_ms: 10_000,
        }
    }
}
