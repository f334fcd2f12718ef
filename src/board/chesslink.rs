//! Millennium ChessLink boards (Exclusive, eONE; they identify every piece).
//!
//! 38400 baud, 7 data bits, odd parity: the port is opened 8N1 and bit 7 of every byte sent is
//! set so that each byte has an odd number of one bits; bit 7 is stripped on receipt. A message
//! is a letter, its data characters, then two hex digits: the XOR of the 7-bit codes of all
//! preceding characters. Replies use the lower-case letter of their command.

use std::time::Instant;

use shakmaty::{Board, Color, Piece, Role, Square};

use super::{DriverMsg, LinkSettings, Orientation};
use crate::engine::debounce::{SquareState, EMPTY};
use crate::engine::piece_code;
use crate::engine::Reading;

/// Sets bit 7 so that the byte has odd parity.
pub fn with_parity(b: u8) -> u8 {
    let b = b & 0x7F;
    if b.count_ones() % 2 == 0 {
        b | 0x80
    } else {
        b
    }
}

fn checksum(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |a, c| a ^ (c & 0x7F))
}

/// A message with its checksum, as characters (no parity yet).
pub fn message(body: &str) -> String {
    format!("{body}{:02X}", checksum(body.as_bytes()))
}

/// A message with parity bits, ready for the wire.
pub fn wire(body: &str) -> Vec<u8> {
    message(body).bytes().map(with_parity).collect()
}

fn piece_char(p: Option<Piece>) -> char {
    match p {
        None => '.',
        Some(p) if p.color == Color::White => p.role.upper_char(),
        Some(p) => p.role.char(),
    }
}

fn char_piece(c: u8) -> Option<Option<Piece>> {
    if c == b'.' {
        return Some(None);
    }
    let role = Role::from_char(c.to_ascii_lowercase() as char)?;
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    Some(Some(Piece { color, role }))
}

/// The status reply for `board`, documented order a8..h8, a7..h7, ..., a1..h1.
pub fn status(board: &Board, rotated: bool) -> String {
    let mut s = String::from("s");
    for i in 0..64 {
        let mut sq = Square::new(((7 - i / 8) * 8 + i % 8) as u32);
        if rotated {
            sq = Square::new(63 - sq as u32);
        }
        s.push(piece_char(board.piece_at(sq)));
    }
    message(&s)
}

/// Characters of each reply, letter and checksum included.
fn reply_len(letter: u8) -> Option<usize> {
    Some(match letter {
        b's' => 67,
        b'v' => 7,
        b'x' | b'l' | b't' => 3,
        b'w' | b'r' => 7,
        _ => return None,
    })
}

/// Splits the received characters into checked messages (without their checksums).
#[derive(Debug, Default)]
pub struct Decoder {
    msg: Vec<u8>,
    want: usize,
    /// Looking for a message inside a dropped one: failures there are the same drop.
    resyncing: bool,
    pub dropped: u64,
}

impl Decoder {
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Vec<u8>>) {
        for &raw in bytes {
            self.push(raw & 0x7F, out);
        }
    }

    fn push(&mut self, c: u8, out: &mut Vec<Vec<u8>>) {
        if self.msg.is_empty() {
            // Between messages only a reply letter starts one; anything else is noise.
            if let Some(n) = reply_len(c) {
                self.msg.push(c);
                self.want = n;
            }
            return;
        }
        self.msg.push(c);
        if self.msg.len() < self.want {
            return;
        }
        let m = std::mem::take(&mut self.msg);
        let (body, sum) = m.split_at(self.want - 2);
        let ok = std::str::from_utf8(sum)
            .ok()
            .and_then(|s| u8::from_str_radix(s, 16).ok())
            .is_some_and(|s| s == checksum(body));
        if ok {
            out.push(body.to_vec());
        } else {
            // Dropped; a real message may have begun inside it: look again from its second
            // character (piece letters like `r` are reply letters too, so this resyncs).
            if !self.resyncing {
                self.dropped += 1;
            }
            let was = std::mem::replace(&mut self.resyncing, true);
            for &c in &m[1..] {
                self.push(c, out);
            }
            self.resyncing = was;
        }
    }
}

/// LED codes for the squares to show (81 corner LEDs; a square lights through its four corners).
pub fn leds(squares: &[Square], rotated: bool) -> String {
    let mut grid = [0u8; 81];
    for sq in squares {
        let sq = if rotated {
            Square::new(63 - *sq as u32)
        } else {
            *sq
        };
        let col = u32::from(sq.file()) as usize;
        let row = 7 - u32::from(sq.rank()) as usize;
        for (dc, dr) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            grid[(col + dc) * 9 + row + dr] = 0xFF;
        }
    }
    let mut body = String::from("L32");
    for v in grid {
        body.push_str(&format!("{v:02X}"));
    }
    body
}

/// The host side of the ChessLink protocol.
#[derive(Debug)]
pub struct ChessLinkHost {
    decoder: Decoder,
    rotated: bool,
    orientation: Orientation,
    /// The way round has been learned from a position (or is fixed by the setting).
    oriented: bool,
    /// The positions the game can explain, as the daemon last said.
    expected: Vec<[u8; 64]>,
    /// The last whole message from the board since the port opened.
    heard: Option<Instant>,
    /// The last status asked for (or the port's opening).
    asked: Instant,
}

impl Default for ChessLinkHost {
    fn default() -> ChessLinkHost {
        ChessLinkHost {
            decoder: Decoder::default(),
            rotated: false,
            orientation: Orientation::Auto,
            oriented: false,
            expected: Vec::new(),
            heard: None,
            asked: Instant::now(),
        }
    }
}

impl ChessLinkHost {
    /// A host reading its board as `link` says.
    pub fn new(link: &LinkSettings) -> ChessLinkHost {
        ChessLinkHost {
            rotated: link.orientation == Orientation::Reversed,
            orientation: link.orientation,
            oriented: link.orientation != Orientation::Auto,
            ..ChessLinkHost::default()
        }
    }
}

fn status_states(body: &[u8], rotated: bool) -> Option<[SquareState; 64]> {
    if body.len() != 65 {
        return None;
    }
    let mut states = [EMPTY; 64];
    for (i, &c) in body[1..].iter().enumerate() {
        let p = char_piece(c)?;
        let mut sq = Square::new(((7 - i / 8) * 8 + i % 8) as u32);
        if rotated {
            sq = Square::new(63 - sq as u32);
        }
        states[sq as usize] = p.map_or(EMPTY, piece_code);
    }
    Some(states)
}

impl super::serial::Protocol for ChessLinkHost {
    fn name(&self) -> &'static str {
        "chesslink"
    }
    fn baud(&self) -> u32 {
        38_400
    }
    fn on_open(&mut self, now: Instant, port: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.decoder = Decoder {
            dropped: self.decoder.dropped,
            ..Decoder::default()
        };
        self.heard = None;
        self.asked = now;
        // Version, reports on change only, LEDs off, then the board.
        for cmd in ["V", "W0203", "X", "S"] {
            port.write_all(&wire(cmd))?;
        }
        Ok(())
    }
    fn on_bytes(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<DriverMsg>,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut msgs = Vec::new();
        let dropped = self.decoder.dropped;
        self.decoder.feed(bytes, &mut msgs);
        if !msgs.is_empty() {
            self.heard = Some(now);
        }
        if self.decoder.dropped > dropped {
            // A frame was lost: ask for the board at once.
            self.asked = now;
            port.write_all(&wire("S"))?;
        }
        for m in msgs {
            if m[0] != b's' {
                continue;
            }
            let (Some(normal), Some(turned)) = (status_states(&m, false), status_states(&m, true))
            else {
                self.decoder.dropped += 1;
                continue;
            };
            // The board's way round is found whenever it shows the start position or the
            // game's position one way round only.
            if let Some(r) =
                super::learn_orientation(self.orientation, &normal, &turned, &self.expected)
            {
                self.rotated = r;
                self.oriented = true;
            }
            let states = if self.rotated { turned } else { normal };
            out.push(DriverMsg::Reading(Reading::Frame(Box::new(states))));
        }
        Ok(())
    }
    fn on_tick(
        &mut self,
        now: Instant,
        _out: &mut Vec<DriverMsg>,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        // Reports come on change only: a board where nothing moves is asked for its status.
        if super::serial::poll_due(now, self.heard, self.asked) {
            self.asked = now;
            port.write_all(&wire("S"))?;
        }
        Ok(())
    }
    fn dropped(&self) -> u64 {
        self.decoder.dropped
    }
    fn last_heard(&self) -> Option<Instant> {
        self.heard
    }
    fn show(
        &mut self,
        what: &super::serial::Show,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        use super::serial::Show;
        match what {
            Show::Move(squares) | Show::Fix(squares) => {
                port.write_all(&wire(&leds(squares, self.rotated)))
            }
            Show::Nothing => port.write_all(&wire("X")),
            Show::Positions(positions) => {
                let new = self.expected != *positions;
                self.expected.clone_from(positions);
                // Not yet known which way round: the board as it stands may tell.
                if new && !self.oriented {
                    self.asked = Instant::now();
                    port.write_all(&wire("S"))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::serial::Protocol;

    #[test]
    fn checksums_match_the_documented_examples() {
        assert_eq!(message("V"), "V56");
        assert_eq!(message("S"), "S53");
        assert_eq!(message("X"), "X58");
        assert_eq!(message("R02"), "R0250");
        assert_eq!(message("W0203"), "W020356");
        assert_eq!(message("v0104"), "v010473");
        // Odd parity on the wire.
        assert!(wire("W0203").iter().all(|b| b.count_ones() % 2 == 1));
    }

    #[test]
    fn status_frames_are_checked_and_read_either_way_round() {
        let mut host = ChessLinkHost::default();
        let mut out = Vec::new();
        let mut port = Vec::new();
        let good: Vec<u8> = status(&Board::default(), true)
            .bytes()
            .map(with_parity)
            .collect();
        let mut bad = good.clone();
        bad[10] = with_parity(b'q');
        host.on_bytes(&bad, Instant::now(), &mut out, &mut port)
            .unwrap();
        assert!(out.is_empty());
        assert_eq!(host.dropped(), 1);
        host.on_bytes(&good[..30], Instant::now(), &mut out, &mut port)
            .unwrap();
        host.on_bytes(&good[30..], Instant::now(), &mut out, &mut port)
            .unwrap();
        let Some(DriverMsg::Reading(Reading::Frame(states))) = out.pop() else {
            panic!("no frame")
        };
        assert_eq!(
            states[Square::E1 as usize],
            piece_code(Piece {
                color: Color::White,
                role: Role::King
            })
        );
        assert_eq!(
            states[Square::D8 as usize],
            piece_code(Piece {
                color: Color::Black,
                role: Role::Queen
            })
        );
    }

    #[test]
    fn an_idle_board_is_asked_for_its_status_every_second() {
        let mut host = ChessLinkHost::default();
        let (mut out, mut port) = (Vec::new(), Vec::new());
        let t0 = Instant::now();
        let ms = |n: u64| t0 + std::time::Duration::from_millis(n);
        host.on_open(t0, &mut port).unwrap();
        port.clear();
        host.on_tick(ms(999), &mut out, &mut port).unwrap();
        assert!(port.is_empty());
        host.on_tick(ms(1_000), &mut out, &mut port).unwrap();
        assert_eq!(port, wire("S"));
        // Noise is no answer; a status is.
        host.on_bytes(b"zz", ms(1_050), &mut out, &mut port)
            .unwrap();
        assert_eq!(host.last_heard(), None);
        let reply: Vec<u8> = status(&Board::default(), false)
            .bytes()
            .map(with_parity)
            .collect();
        host.on_bytes(&reply, ms(1_100), &mut out, &mut port)
            .unwrap();
        assert_eq!(host.last_heard(), Some(ms(1_100)));
        port.clear();
        host.on_tick(ms(2_099), &mut out, &mut port).unwrap();
        assert!(port.is_empty());
        host.on_tick(ms(2_100), &mut out, &mut port).unwrap();
        assert_eq!(port, wire("S"));
    }

    #[test]
    fn leds_light_the_corners_of_a_square() {
        let l = leds(&[Square::A8], false);
        assert_eq!(l.len(), 3 + 162);
        // Column 0 and 1, rows 0 and 1: LEDs 0, 1, 9, 10.
        let lit: Vec<usize> = (0..81)
            .filter(|i| &l[3 + 2 * i..5 + 2 * i] == "FF")
            .collect();
        assert_eq!(lit, vec![0, 1, 9, 10]);
    }
}

/// The board side of the ChessLink protocol: a board answers every well-formed command (odd
/// parity, right checksum), reports its status on every scan or on change as register 02 says,
/// and counts the LED patterns it is sent.
pub mod device {
    use std::time::Duration;

    use shakmaty::Square;

    use super::*;

    /// How often a board reporting on every scan sends its status.
    pub const SCAN: Duration = Duration::from_millis(250);

    /// A ChessLink board, standing the other way round when `rotated`.
    #[derive(Debug, Default)]
    pub struct Board {
        rotated: bool,
        /// Host command bytes not yet whole.
        pending: Vec<u8>,
        connected: bool,
        leds: u64,
        /// Register 02, automatic reports (0 every scan, 1 off, 3-7 on change).
        reports: u8,
    }

    impl Board {
        pub fn new(rotated: bool) -> Board {
            Board {
                rotated,
                ..Board::default()
            }
        }

        /// Register 02 (automatic reports).
        pub fn reports(&self) -> u8 {
            self.reports
        }

        /// The status reply for `board`, on the wire.
        pub fn status(&self, board: &shakmaty::Board) -> Vec<u8> {
            status(board, self.rotated)
                .bytes()
                .map(with_parity)
                .collect()
        }
    }

    impl crate::board::Device for Board {
        /// Whole commands. A byte with even parity, or a command whose checksum is wrong, is
        /// ignored (the board waits for the next command letter).
        fn answer(&mut self, bytes: &[u8], board: &shakmaty::Board, out: &mut Vec<u8>) {
            self.pending.extend_from_slice(bytes);
            loop {
                let Some(&c) = self.pending.first() else {
                    return;
                };
                let len = match c & 0x7F {
                    b'V' | b'S' | b'X' | b'T' => 3,
                    b'W' => 7,
                    b'R' => 5,
                    b'L' => 167,
                    _ => {
                        self.pending.remove(0);
                        continue;
                    }
                };
                if self.pending.len() < len {
                    return;
                }
                let raw: Vec<u8> = self.pending[..len].to_vec();
                let cmd: Vec<u8> = raw.iter().map(|b| b & 0x7F).collect();
                let parity = raw.iter().all(|b| b.count_ones() % 2 == 1);
                let body = String::from_utf8_lossy(&cmd[..len - 2]).to_string();
                if !parity || message(&body).as_bytes() != cmd.as_slice() {
                    // Not a command: look for one from the next byte on.
                    self.pending.remove(0);
                    continue;
                }
                self.pending.drain(..len);
                self.connected = true;
                let reply = match cmd[0] {
                    b'V' => Some("v0104".to_string()),
                    b'S' => None,
                    b'X' => Some("x".into()),
                    b'L' => {
                        self.leds += 1;
                        Some("l".into())
                    }
                    b'W' => {
                        if &cmd[1..3] == b"02" {
                            let v = std::str::from_utf8(&cmd[3..5])
                                .ok()
                                .and_then(|v| u8::from_str_radix(v, 16).ok());
                            self.reports = v.unwrap_or(self.reports);
                        }
                        Some(format!("w{}", String::from_utf8_lossy(&cmd[1..5])))
                    }
                    b'R' => Some(format!("r{}00", String::from_utf8_lossy(&cmd[1..3]))),
                    // A reset: no reply; the board starts again with its defaults.
                    _ => {
                        self.reports = 0;
                        continue;
                    }
                };
                match reply {
                    Some(r) => out.extend(wire(&r)),
                    None => out.extend(self.status(board)),
                }
            }
        }
        fn connected(&self) -> bool {
            self.connected
        }
        fn host_gone(&mut self) {
            self.connected = false;
            self.pending.clear();
            self.reports = 0;
        }
        fn report(&self, board: &shakmaty::Board, _changed: Square) -> Vec<u8> {
            // With reports off, the board sends nothing of itself.
            if self.reports == 1 {
                return Vec::new();
            }
            self.status(board)
        }
        fn heartbeat(&self, board: &shakmaty::Board) -> Option<(Duration, Vec<u8>)> {
            // Reporting on every scan (register 02 at 0, its default).
            (self.reports == 0).then(|| (SCAN, self.status(board)))
        }
        fn broken_frames(&self) -> [Vec<u8>; 2] {
            // A status with a wrong checksum; one cut short.
            [
                wire("s").into_iter().take(2).chain([b'Z', b'Z']).collect(),
                b"s....".to_vec(),
            ]
        }
        fn leds(&self) -> u64 {
            self.leds
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::board::Device;

        fn start() -> shakmaty::Board {
            shakmaty::Board::default()
        }

        fn said(b: &mut Board, bytes: &[u8]) -> Vec<u8> {
            let mut out = Vec::new();
            b.answer(bytes, &start(), &mut out);
            out
        }

        fn chesslink_cmds(cmds: &[&str]) -> Vec<u8> {
            cmds.iter().flat_map(|c| wire(c)).collect()
        }

        #[test]
        fn chesslink_reports_by_default_and_register_02_turns_reports_off() {
            let mut b = Board::new(false);
            // Any command is a host: no `S` needed for the board to report.
            assert_eq!(said(&mut b, &chesslink_cmds(&["V"])), super::wire("v0104"));
            assert!(b.connected());
            assert_eq!(b.reports(), 0);
            assert!(!b.report(&start(), Square::E4).is_empty());
            said(&mut b, &chesslink_cmds(&["W0201"]));
            assert_eq!(b.reports(), 1);
            assert!(b.report(&start(), Square::E4).is_empty());
            // `S` is still answered.
            assert_eq!(said(&mut b, &chesslink_cmds(&["S"])), b.status(&start()));
            said(&mut b, &chesslink_cmds(&["W0203"]));
            assert!(!b.report(&start(), Square::E4).is_empty());
        }

        #[test]
        fn chesslink_reset_has_no_reply_and_bad_commands_are_ignored() {
            let mut b = Board::new(false);
            said(&mut b, &chesslink_cmds(&["W0201"]));
            assert!(said(&mut b, &chesslink_cmds(&["T"])).is_empty());
            assert_eq!(b.reports(), 0, "a reset restores the defaults");
            // A wrong checksum: no answer.
            let bad: Vec<u8> = "S00".bytes().map(super::with_parity).collect();
            assert!(said(&mut b, &bad).is_empty());
            // Even parity: no answer.
            let even: Vec<u8> = super::message("S").bytes().collect();
            assert!(even.iter().any(|c| c.count_ones() % 2 == 0));
            assert!(said(&mut b, &even).is_empty());
            // And the next good command is understood.
            assert_eq!(said(&mut b, &chesslink_cmds(&["X"])), super::wire("x"));
        }
    }
}
