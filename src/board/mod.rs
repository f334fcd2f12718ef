//! Board drivers: each reads a board and sends the daemon timestamped raw readings and link
//! states. Serial boards speak one of three protocols ([`diy`], [`dgt`], [`chesslink`]); each has
//! a simulator ([`simulate`]) that behaves like the board on a pseudo-terminal.

pub mod chesslink;
pub mod dgt;
pub mod discover;
pub mod diy;
pub mod gpio;
pub mod serial;
pub mod simulate;

use std::path::PathBuf;
use std::str::FromStr;

use crate::engine::{Button, LinkState, Millis, Reading};

/// What a driver tells the daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverMsg {
    Reading(Reading),
    Press(Button),
    Link(LinkState),
    /// The board keeps reporting this square without end (a flickering sensor): said once an
    /// episode, so that someone sees to it.
    Flicker(shakmaty::Square),
}

/// A driver's messages, stamped with the daemon clock's time when the board was read.
pub type DriverTx = tokio::sync::mpsc::UnboundedSender<(Millis, DriverMsg)>;

/// Which board to read (`run --board`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardSpec {
    Diy(PathBuf),
    Dgt(PathBuf),
    ChessLink(PathBuf),
    /// A reed-switch board on GPIO lines, wired as the config's `[gpio]` says.
    Gpio,
    /// The built-in simulated board playing a game from a PGN file.
    Sim(PathBuf),
}

impl std::fmt::Display for BoardSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardSpec::Diy(p) => write!(f, "diy:{}", p.display()),
            BoardSpec::Dgt(p) => write!(f, "dgt:{}", p.display()),
            BoardSpec::ChessLink(p) => write!(f, "chesslink:{}", p.display()),
            BoardSpec::Gpio => f.write_str("gpio"),
            BoardSpec::Sim(p) => write!(f, "sim:{}", p.display()),
        }
    }
}

impl FromStr for BoardSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<BoardSpec, String> {
        if s == "gpio" {
            return Ok(BoardSpec::Gpio);
        }
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let path = || {
            if arg.is_empty() {
                Err(format!("'{kind}' needs a path: {kind}:PATH"))
            } else {
                Ok(PathBuf::from(arg))
            }
        };
        Ok(match kind {
            "diy" => BoardSpec::Diy(path()?),
            "dgt" => BoardSpec::Dgt(path()?),
            "chesslink" => BoardSpec::ChessLink(path()?),
            "sim" => BoardSpec::Sim(path()?),
            _ => {
                return Err(format!(
                "unknown board '{s}' (accepted: diy:PATH, dgt:PATH, chesslink:PATH, gpio, sim:GAME.pgn)"
            ))
            }
        })
    }
}

/// Which way round a board that identifies pieces stands, when it shows the start position:
/// `Some(false)` the right way, `Some(true)` turned round, `None` not a start position. Boards
/// report squares in their own order, so this is checked on every whole-board frame.
pub fn start_orientation(normal: &[u8; 64], turned: &[u8; 64]) -> Option<bool> {
    let start = {
        let mut s = [0u8; 64];
        for (sq, p) in shakmaty::Board::default().iter() {
            s[sq as usize] = crate::engine::piece_code(p);
        }
        s
    };
    if *normal == start {
        Some(false)
    } else if *turned == start {
        Some(true)
    } else {
        None
    }
}

/// Counters a driver keeps about its link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames dropped for a bad checksum or broken framing.
    pub dropped: u64,
    pub frames: u64,
    pub reconnects: u64,
    /// Times the board stopped answering with its port open.
    pub silences: u64,
}
