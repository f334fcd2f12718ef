//! The project's own serial protocol for home-built boards (occupancy only).
//!
//! Board to host, on every change and at least once a second, one line:
//!
//! ```text
//! B<16 hex digits: the occupancy, bit 0 = a1 ... bit 63 = h8>*<2 hex digits>\n
//! ```
//!
//! The two digits after `*` are the XOR of every byte before the `*` (the `B` included).
//! A board with promotion buttons sends `P<Q|R|B|N>*<2 hex>\n` when one is pressed.
//! Host to board: `?` asks for a frame at once. A line with a bad checksum or shape is dropped
//! and counted; the stream resyncs at the next newline.

use std::time::Instant;

use crate::engine::Button;
use shakmaty::Role;

/// The longest line the decoder keeps; anything longer is noise.
const MAX_LINE: usize = 64;

fn checksum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0, |a, b| a ^ b)
}

/// The line a board sends for an occupancy.
pub fn frame(occupancy: u64) -> String {
    let body = format!("B{occupancy:016X}");
    format!("{body}*{:02X}\n", checksum(body.as_bytes()))
}

/// The line a board sends for a promotion button.
pub fn button(role: Role) -> String {
    let body = format!("P{}", role.upper_char());
    format!("{body}*{:02X}\n", checksum(body.as_bytes()))
}

/// What a line means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    Occupancy(u64),
    Press(Button),
}

fn parse(line: &[u8]) -> Option<Message> {
    let star = line.iter().position(|&b| b == b'*')?;
    let (body, sum) = (&line[..star], &line[star + 1..]);
    let sum = u8::from_str_radix(std::str::from_utf8(sum).ok()?, 16).ok()?;
    if sum != checksum(body) {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    match text.as_bytes().first()? {
        b'B' if text.len() == 17 => u64::from_str_radix(&text[1..], 16)
            .ok()
            .map(Message::Occupancy),
        b'P' if text.len() == 2 => {
            let role = match &text[1..] {
                "Q" => Role::Queen,
                "R" => Role::Rook,
                "B" => Role::Bishop,
                "N" => Role::Knight,
                _ => return None,
            };
            Some(Message::Press(Button::Promote(role)))
        }
        _ => None,
    }
}

/// Splits a byte stream into messages, dropping and counting broken lines.
#[derive(Debug, Default)]
pub struct Decoder {
    line: Vec<u8>,
    overflow: bool,
    pub dropped: u64,
}

impl Decoder {
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Message>) {
        for &b in bytes {
            match b {
                b'\n' => {
                    let line = std::mem::take(&mut self.line);
                    let trimmed: &[u8] = line.strip_suffix(b"\r").unwrap_or(&line);
                    if std::mem::take(&mut self.overflow) {
                        self.dropped += 1;
                    } else if !trimmed.is_empty() {
                        match parse(trimmed) {
                            Some(m) => out.push(m),
                            None => self.dropped += 1,
                        }
                    }
                }
                _ if self.line.len() >= MAX_LINE => self.overflow = true,
                _ => self.line.push(b),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_ones_are_dropped() {
        let start = 0xFFFF_0000_0000_FFFFu64;
        let f = frame(start);
        assert_eq!(f, "BFFFF00000000FFFF*42\n");
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.feed(f.as_bytes(), &mut out);
        assert_eq!(out, vec![Message::Occupancy(start)]);
        // A flipped bit, a cut line, noise, and a frame split across reads.
        let bad = f.replace("FFFF0", "FFFE0");
        d.feed(bad.as_bytes(), &mut out);
        d.feed(b"BFFFF00\n\x00\xff garbage\n", &mut out);
        d.feed(&[b'x'; 200], &mut out);
        d.feed(b"\n", &mut out);
        d.feed(&f.as_bytes()[..5], &mut out);
        d.feed(&f.as_bytes()[5..], &mut out);
        d.feed(button(Role::Knight).as_bytes(), &mut out);
        assert_eq!(
            out,
            vec![
                Message::Occupancy(start),
                Message::Occupancy(start),
                Message::Press(Button::Promote(Role::Knight))
            ]
        );
        assert_eq!(d.dropped, 4);
        // The examples of docs/diy-board.md.
        let mut out = Vec::new();
        d.feed(b"PN*1E\nBFFFF00000000FFFF*42\n", &mut out);
        assert_eq!(
            out,
            vec![
                Message::Press(Button::Promote(Role::Knight)),
                Message::Occupancy(start)
            ]
        );
    }

    #[test]
    fn a_board_that_misses_its_heartbeat_is_asked_and_only_whole_lines_are_heard() {
        use crate::board::serial::Protocol;
        let mut host = DiyHost::default();
        let (mut out, mut port) = (Vec::new(), Vec::new());
        let t0 = Instant::now();
        let ms = |n: u64| t0 + std::time::Duration::from_millis(n);
        host.on_open(t0, &mut port).unwrap();
        assert_eq!(port, b"?");
        host.on_bytes(&frame(1).as_bytes()[..6], ms(500), &mut out, &mut port)
            .unwrap();
        assert_eq!(host.last_heard(), None, "half a line");
        host.on_tick(ms(999), &mut out, &mut port).unwrap();
        assert_eq!(port, b"?");
        host.on_tick(ms(1_000), &mut out, &mut port).unwrap();
        assert_eq!(port, b"??");
        host.on_bytes(&frame(1).as_bytes()[6..], ms(1_200), &mut out, &mut port)
            .unwrap();
        assert_eq!(host.last_heard(), Some(ms(1_200)));
        host.on_tick(ms(2_199), &mut out, &mut port).unwrap();
        assert_eq!(port, b"??");
    }
}

/// The host side of the DIY protocol.
#[derive(Debug)]
pub struct DiyHost {
    decoder: Decoder,
    /// The last whole line from the board since the port opened.
    heard: Option<Instant>,
    /// The last `?` sent (or the port's opening).
    asked: Instant,
}

impl Default for DiyHost {
    fn default() -> DiyHost {
        DiyHost {
            decoder: Decoder::default(),
            heard: None,
            asked: Instant::now(),
        }
    }
}

impl super::serial::Protocol for DiyHost {
    fn name(&self) -> &'static str {
        "diy"
    }
    fn baud(&self) -> u32 {
        115_200
    }
    fn on_open(&mut self, now: Instant, port: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.decoder = Decoder {
            dropped: self.decoder.dropped,
            ..Decoder::default()
        };
        self.heard = None;
        self.asked = now;
        port.write_all(b"?")
    }
    fn on_bytes(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<super::DriverMsg>,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut msgs = Vec::new();
        let dropped = self.decoder.dropped;
        self.decoder.feed(bytes, &mut msgs);
        if !msgs.is_empty() {
            self.heard = Some(now);
        }
        if self.decoder.dropped > dropped {
            // A frame was lost: ask for the board at once rather than wait for the next one.
            self.asked = now;
            port.write_all(b"?")?;
        }
        out.extend(msgs.into_iter().map(|m| match m {
            Message::Occupancy(mask) => {
                super::DriverMsg::Reading(crate::engine::Reading::occupancy(mask))
            }
            Message::Press(b) => super::DriverMsg::Press(b),
        }));
        Ok(())
    }
    fn on_tick(
        &mut self,
        now: Instant,
        _out: &mut Vec<super::DriverMsg>,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        // The board sends a frame every second; one that missed it is asked.
        if super::serial::poll_due(now, self.heard, self.asked) {
            self.asked = now;
            port.write_all(b"?")?;
        }
        Ok(())
    }
    fn dropped(&self) -> u64 {
        self.decoder.dropped
    }
    fn last_heard(&self) -> Option<Instant> {
        self.heard
    }
}

/// The board side of the DIY protocol: a home-built board answers `?` with its occupancy,
/// reports its whole board at every change and once a second, and sends its promotion buttons.
pub mod device {
    use std::time::Duration;

    use shakmaty::{Role, Square};

    /// How often a board reports its whole board unasked.
    pub const HEARTBEAT: Duration = Duration::from_secs(1);

    /// A home-built board.
    #[derive(Debug, Default)]
    pub struct Board {
        connected: bool,
    }

    impl crate::board::Device for Board {
        fn answer(&mut self, bytes: &[u8], board: &shakmaty::Board, out: &mut Vec<u8>) {
            for &b in bytes {
                if b == b'?' {
                    self.connected = true;
                    out.extend(super::frame(board.occupied().0).bytes());
                }
            }
        }
        fn connected(&self) -> bool {
            self.connected
        }
        fn host_gone(&mut self) {
            self.connected = false;
        }
        fn report(&self, board: &shakmaty::Board, _changed: Square) -> Vec<u8> {
            super::frame(board.occupied().0).into_bytes()
        }
        fn heartbeat(&self, board: &shakmaty::Board) -> Option<(Duration, Vec<u8>)> {
            Some((HEARTBEAT, super::frame(board.occupied().0).into_bytes()))
        }
        fn button(&self, role: Role) -> Option<Vec<u8>> {
            Some(super::button(role).into_bytes())
        }
        fn broken_frames(&self) -> [Vec<u8>; 2] {
            // A wrong checksum; a frame cut short.
            [b"B00000000000000FF*00\n".to_vec(), b"BFFFF0000\n".to_vec()]
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::board::Device;

        #[test]
        fn a_board_answers_a_question_mark_and_reports_its_whole_board() {
            let start = shakmaty::Board::default();
            let mut b = Board::default();
            let mut out = Vec::new();
            b.answer(b"x", &start, &mut out);
            assert!(out.is_empty() && !b.connected());
            b.answer(b"?", &start, &mut out);
            assert!(b.connected());
            assert_eq!(out, super::super::frame(0xFFFF_0000_0000_FFFF).into_bytes());
            assert_eq!(b.report(&start, Square::E2), out);
            assert_eq!(
                b.button(Role::Knight),
                Some(super::super::button(Role::Knight).into_bytes())
            );
            b.host_gone();
            assert!(!b.connected());
        }
    }
}
