//! Board drivers: each reads a board and sends the daemon timestamped raw readings and link
//! states. Serial boards speak one of the protocols of [`PROTOCOLS`] ([`diy`], [`dgt`],
//! [`chesslink`]); each protocol module holds both ends of its link: the host side the driver
//! runs, and the board side ([`Device`]) the simulator (`crate::sim`) speaks on a
//! pseudo-terminal.

pub mod chesslink;
pub mod dgt;
pub mod discover;
pub mod diy;
pub mod gpio;
pub mod gpio_settings;
pub mod serial;
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

/// One serial board protocol: its name, its host side (what the driver runs) and its board side
/// (what the simulator speaks). Adding a protocol is one module and one row of [`PROTOCOLS`].
pub struct BoardProtocol {
    /// As written in `--board NAME:PATH`, the config's `driver` and `simulate --protocol`.
    pub name: &'static str,
    /// As the simulator names it on standard error.
    pub label: &'static str,
    /// The host side, reading a board as `link` says.
    pub host: fn(&LinkSettings) -> Box<dyn serial::Protocol>,
    /// The board side, standing the other way round when `rotated`.
    pub device: fn(rotated: bool) -> Box<dyn Device>,
    /// The board reports a square by itself, so a flickering sensor can be simulated.
    pub flickers: bool,
    /// The board scans square by square and reports what changed as it finds it: a moved piece
    /// may show on its new square before its old one is empty.
    pub scan_order: bool,
}

/// Every serial board protocol (one row each).
pub const PROTOCOLS: &[BoardProtocol] = &[
    BoardProtocol {
        name: "diy",
        label: "Diy",
        host: |_| Box::new(diy::DiyHost::default()),
        device: |_| Box::new(diy::device::Board::default()),
        flickers: false,
        scan_order: false,
    },
    BoardProtocol {
        name: "dgt",
        label: "Dgt",
        host: |link| Box::new(dgt::DgtHost::new(link)),
        device: |rotated| Box::new(dgt::device::Board::new(rotated)),
        flickers: true,
        scan_order: true,
    },
    BoardProtocol {
        name: "chesslink",
        label: "ChessLink",
        host: |link| Box::new(chesslink::ChessLinkHost::new(link)),
        device: |rotated| Box::new(chesslink::device::Board::new(rotated)),
        flickers: false,
        scan_order: false,
    },
];

impl BoardProtocol {
    /// The protocol called `name`.
    pub fn named(name: &str) -> Option<&'static BoardProtocol> {
        PROTOCOLS.iter().find(|p| p.name == name)
    }

    /// The protocol called `name`, or an error naming the accepted ones.
    pub fn parse(name: &str) -> Result<&'static BoardProtocol, ParseError> {
        BoardProtocol::named(name).ok_or_else(|| ParseError::UnknownProtocol(name.to_string()))
    }
}

/// A protocol, a board or an orientation that is not one (`--board`, `--protocol`,
/// `--orientation` and the config's board settings); each names what is accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not the name of one of the [`PROTOCOLS`].
    #[error("unknown protocol '{0}' (accepted: {accepted})", accepted = protocol_names(", "))]
    UnknownProtocol(String),
    /// A board of this kind given without its path.
    #[error("'{0}' needs a path: {0}:PATH")]
    NeedsPath(String),
    /// Not a board spec.
    #[error(
        "unknown board '{0}' (accepted: {accepted}:PATH, gpio, sim:GAME.pgn)",
        accepted = protocol_names(":PATH, ")
    )]
    UnknownBoard(String),
    /// Not an [`Orientation`].
    #[error("'{0}' is not an orientation (accepted: auto, normal, reversed)")]
    NotAnOrientation(String),
}

/// The protocols' names, joined by `sep`.
pub fn protocol_names(sep: &str) -> String {
    PROTOCOLS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(sep)
}

/// The protocols' names as a choice: `diy, dgt or chesslink`.
pub fn protocol_choice() -> String {
    match PROTOCOLS.split_last() {
        Some((last, [])) => last.name.to_string(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(|p| p.name).collect();
            format!("{} or {}", rest.join(", "), last.name)
        }
        None => String::new(),
    }
}

impl std::fmt::Debug for BoardProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label)
    }
}

impl PartialEq for BoardProtocol {
    fn eq(&self, other: &BoardProtocol) -> bool {
        self.name == other.name
    }
}

impl Eq for BoardProtocol {}

/// The board end of a serial protocol: what a board answers and reports (the simulator speaks
/// it on a pseudo-terminal). Pure: it is given the board as it stands and returns bytes.
pub trait Device: Send {
    /// The host's bytes: answers go to `out`.
    fn answer(&mut self, bytes: &[u8], board: &shakmaty::Board, out: &mut Vec<u8>);
    /// A host has asked for something since the board was last reset or left.
    fn connected(&self) -> bool;
    /// The host went away (or the cable was pulled): what it asked for is forgotten, as a board
    /// powered by its port forgets it.
    fn host_gone(&mut self);
    /// What the board sends when `changed` changed (nothing when it does not report of itself).
    fn report(&self, board: &shakmaty::Board, changed: shakmaty::Square) -> Vec<u8>;
    /// What the board sends unasked every so often, and how often (a heartbeat, a scan).
    fn heartbeat(&self, _board: &shakmaty::Board) -> Option<(std::time::Duration, Vec<u8>)> {
        None
    }
    /// What a promotion button sends, on a board that has them.
    fn button(&self, _role: shakmaty::Role) -> Option<Vec<u8>> {
        None
    }
    /// Broken frames, as a noisy line garbles them.
    fn broken_frames(&self) -> [Vec<u8>; 2];
    /// LED patterns the host sent.
    fn leds(&self) -> u64 {
        0
    }
}

/// Which board to read (`run --board`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardSpec {
    /// A serial board speaking one of the [`PROTOCOLS`], at a port.
    Serial(&'static BoardProtocol, PathBuf),
    /// A reed-switch board on GPIO lines, wired as the config's `[gpio]` says.
    Gpio,
    /// The built-in simulated board playing a game from a PGN file.
    Sim(PathBuf),
}

impl std::fmt::Display for BoardSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardSpec::Serial(proto, p) => write!(f, "{}:{}", proto.name, p.display()),
            BoardSpec::Gpio => f.write_str("gpio"),
            BoardSpec::Sim(p) => write!(f, "sim:{}", p.display()),
        }
    }
}

impl BoardSpec {
    /// A board speaking the protocol called `name` (one of [`PROTOCOLS`]) at `path`.
    pub fn serial(name: &str, path: PathBuf) -> BoardSpec {
        let proto = BoardProtocol::named(name).expect("a protocol of the table");
        BoardSpec::Serial(proto, path)
    }
}

impl FromStr for BoardSpec {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<BoardSpec, ParseError> {
        if s == "gpio" {
            return Ok(BoardSpec::Gpio);
        }
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let path = || {
            if arg.is_empty() {
                Err(ParseError::NeedsPath(kind.to_string()))
            } else {
                Ok(PathBuf::from(arg))
            }
        };
        if kind == "sim" {
            return Ok(BoardSpec::Sim(path()?));
        }
        match BoardProtocol::named(kind) {
            Some(proto) => Ok(BoardSpec::Serial(proto, path()?)),
            None => Err(ParseError::UnknownBoard(s.to_string())),
        }
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
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Orientation, ParseError> {
        match s {
            "auto" => Ok(Orientation::Auto),
            "normal" => Ok(Orientation::Normal),
            "reversed" => Ok(Orientation::Reversed),
            _ => Err(ParseError::NotAnOrientation(s.to_string())),
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
    fn every_protocol_of_the_table_is_a_board_spec_and_named_in_its_errors() {
        for proto in PROTOCOLS {
            let spec = format!("{}:/dev/ttyUSB0", proto.name);
            let parsed: BoardSpec = spec.parse().unwrap();
            assert_eq!(
                parsed,
                BoardSpec::Serial(proto, PathBuf::from("/dev/ttyUSB0"))
            );
            assert_eq!(parsed.to_string(), spec);
            assert_eq!(BoardProtocol::parse(proto.name), Ok(proto));
            let err = "nope:x".parse::<BoardSpec>().unwrap_err().to_string();
            assert!(err.contains(&format!("{}:PATH", proto.name)), "{err}");
            assert!(BoardProtocol::parse("nope")
                .unwrap_err()
                .to_string()
                .contains(proto.name));
        }
        assert_eq!(
            "dgt".parse::<BoardSpec>().unwrap_err().to_string(),
            "'dgt' needs a path: dgt:PATH"
        );
        assert_eq!(
            "nope:x".parse::<BoardSpec>().unwrap_err().to_string(),
            "unknown board 'nope:x' (accepted: diy:PATH, dgt:PATH, chesslink:PATH, gpio, \
             sim:GAME.pgn)"
        );
        assert_eq!(
            BoardProtocol::parse("nope").unwrap_err().to_string(),
            "unknown protocol 'nope' (accepted: diy, dgt, chesslink)"
        );
        assert_eq!(
            "up".parse::<Orientation>().unwrap_err().to_string(),
            "'up' is not an orientation (accepted: auto, normal, reversed)"
        );
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
