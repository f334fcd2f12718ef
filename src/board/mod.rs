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
pub mod timebase;

use std::path::PathBuf;
use std::str::FromStr;

use crate::engine::{Button, LinkState, Millis, Reading};
pub use timebase::Timebase;

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

/// Which way round a DGT or ChessLink board's squares come (`board.orientation`, `run
/// --orientation`): found from positions the game explains (`Auto`), or fixed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Orientation {
    #[default]
    Auto,
    /// Squares in the documented order (a8 first).
    Normal,
    /// Squares in reverse order (h1 first): a board turned round, or a third-party board that
    /// sends them that way.
    Reversed,
}

impl FromStr for Orientation {
    type Err = String;
    fn from_str(s: &str) -> Result<Orientation, String> {
        match s {
            "auto" => Ok(Orientation::Auto),
            "normal" => Ok(Orientation::Normal),
            "reversed" => Ok(Orientation::Reversed),
            _ => Err(format!(
                "'{s}' is not an orientation (accepted: auto, normal, reversed)"
            )),
        }
    }
}

/// How a serial board's link is read (per board, from the config and `run`'s flags).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkSettings {
    pub orientation: Orientation,
    /// DGT: how long the board must be quiet before the host asks for a dump (250 ms over USB,
    /// 500 ms over Bluetooth).
    pub dgt_settle_ms: u64,
}

impl Default for LinkSettings {
    fn default() -> LinkSettings {
        LinkSettings {
            orientation: Orientation::Auto,
            dgt_settle_ms: dgt::SETTLE.as_millis() as u64,
        }
    }
}

/// A position as a board that identifies pieces reports it (piece codes by square).
pub fn codes_of(board: &shakmaty::Board) -> [u8; 64] {
    let mut s = [0u8; 64];
    for (sq, p) in board.iter() {
        s[sq as usize] = crate::engine::piece_code(p);
    }
    s
}

/// Which way round to read a whole-board report, read both ways (`normal`, `turned`): with
/// `Auto`, `Some(true)` when it shows the start position, or one of `expected` (the positions the
/// game can explain: the one it stands in, and those one move on) only turned round;
/// `Some(false)` when the right way round only; `None` when it tells nothing (neither, or a
/// symmetric position that reads the same both ways). A fixed orientation is never guessed.
pub fn learn_orientation(
    setting: Orientation,
    normal: &[u8; 64],
    turned: &[u8; 64],
    expected: &[[u8; 64]],
) -> Option<bool> {
    match setting {
        Orientation::Normal => return Some(false),
        Orientation::Reversed => return Some(true),
        Orientation::Auto => {}
    }
    if let Some(r) = start_orientation(normal, turned) {
        return Some(r);
    }
    match (expected.contains(normal), expected.contains(turned)) {
        (true, false) => Some(false),
        (false, true) => Some(true),
        _ => None,
    }
}

/// The positions a game standing in `pos` can explain, as a board reports them: `pos` and every
/// position one legal move on (a move made while nobody read the board).
pub fn explained(pos: &shakmaty::Chess) -> Vec<[u8; 64]> {
    use shakmaty::Position;
    let mut v = vec![codes_of(pos.board())];
    for m in pos.legal_moves() {
        let mut p = pos.clone();
        p.play_unchecked(m);
        v.push(codes_of(p.board()));
    }
    v
}

/// Which way round a board that identifies pieces stands, when it shows the start position:
/// `Some(false)` the right way, `Some(true)` turned round, `None` not a start position. Boards
/// report squares in their own order, so this is checked on every whole-board frame.
pub fn start_orientation(normal: &[u8; 64], turned: &[u8; 64]) -> Option<bool> {
    let start = codes_of(&shakmaty::Board::default());
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

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    fn turned(c: &[u8; 64]) -> [u8; 64] {
        let mut t = *c;
        t.reverse();
        t
    }

    #[test]
    fn the_way_round_is_learned_from_positions_the_game_explains() {
        let pos: Chess = "r4rk1/ppbn1pp1/2p1pn1p/q2p3b/8/PP1PPNPP/1BPN1PB1/R3QRK1 w - - 1 13"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let expected = explained(&pos);
        let seen = codes_of(shakmaty::Position::board(&pos));
        let auto = Orientation::Auto;
        assert_eq!(
            learn_orientation(auto, &seen, &turned(&seen), &expected),
            Some(false)
        );
        assert_eq!(
            learn_orientation(auto, &turned(&seen), &seen, &expected),
            Some(true)
        );
        // A move made meanwhile is explained too.
        let one_on = expected[5];
        assert_eq!(
            learn_orientation(auto, &turned(&one_on), &one_on, &expected),
            Some(true)
        );
        // Nothing to go by: no guess.
        assert_eq!(learn_orientation(auto, &seen, &turned(&seen), &[]), None);
        // A report that the game explains either way round tells nothing either.
        let both = [seen, turned(&seen)];
        assert_eq!(learn_orientation(auto, &seen, &turned(&seen), &both), None);
        // Fixed: never guessed, not even from the start position.
        let start = codes_of(&shakmaty::Board::default());
        assert_eq!(
            learn_orientation(Orientation::Normal, &turned(&start), &start, &[]),
            Some(false)
        );
        assert_eq!(
            learn_orientation(Orientation::Reversed, &seen, &turned(&seen), &expected),
            Some(true)
        );
    }
}
