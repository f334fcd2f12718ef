//! DGT electronic boards (serial or USB; they identify every piece).
//!
//! Board-to-host messages: byte 0 is `0x80 | id`, bytes 1-2 the total length in 7-bit halves,
//! then the payload, every byte below `0x80`. A byte with the top bit set inside a payload means
//! the message was cut: it is dropped (and counted) and a new message starts there.
//! Field numbers run in reading order with the connector on white's left: 0 = a8 ... 63 = h1.
//! The board scans square by square, so field updates are only "something changed": the host
//! waits for a quiet board, then asks for a whole dump and reads positions from that. While
//! updates keep coming it still reads the board every [`MAX_WAIT`], and a field that keeps
//! reporting for [`FLICKER`] (a flickering sensor) is reported, once an episode.

use std::time::{Duration, Instant};

use shakmaty::{Board, Color, Piece, Role, Square};

use super::{DriverMsg, LinkSettings, Orientation};
use crate::engine::debounce::{SquareState, EMPTY};
use crate::engine::piece_code;
use crate::engine::Reading;

pub const RESET: u8 = 0x40;
pub const SEND_BOARD: u8 = 0x42;
pub const UPDATE_BOARD: u8 = 0x44;
pub const SEND_SERIAL: u8 = 0x45;
pub const SEND_VERSION: u8 = 0x4D;
pub const SEND_CLOCK: u8 = 0x41;
pub const UPDATE: u8 = 0x43;
pub const SEND_BUS_ADDRESS: u8 = 0x46;
pub const SEND_TRADEMARK: u8 = 0x47;
pub const UPDATE_NICE: u8 = 0x4B;
pub const SEND_BATTERY: u8 = 0x4C;
pub const SEND_LONG_SERIAL: u8 = 0x55;
/// A message for the clock: this byte, a length, then that many bytes.
pub const CLOCK_MESSAGE: u8 = 0x2B;

pub const MSG_BOARD_DUMP: u8 = 0x86;
pub const MSG_FIELD_UPDATE: u8 = 0x8E;
pub const MSG_SERIAL: u8 = 0x91;
pub const MSG_VERSION: u8 = 0x93;
pub const MSG_CLOCK: u8 = 0x8D;
pub const MSG_BUS_ADDRESS: u8 = 0x90;
pub const MSG_TRADEMARK: u8 = 0x92;
pub const MSG_BATTERY: u8 = 0xA0;
pub const MSG_LONG_SERIAL: u8 = 0xA2;

/// How long the board must be quiet before the host asks for a dump (USB).
pub const SETTLE: Duration = Duration::from_millis(250);
/// While field updates keep coming, the board is read at least this often.
pub const MAX_WAIT: Duration = Duration::from_millis(500);
/// A field whose updates keep coming, less than [`FLICKER_GAP`] apart, for this long flickers.
/// Once reported, its episode lasts until it has been quiet this long.
pub const FLICKER: Duration = Duration::from_secs(3);
/// Updates of one field closer than this belong to one episode (a person's moves on one
/// square are further apart, or soon over).
pub const FLICKER_GAP: Duration = Duration::from_millis(500);

/// A DGT piece code for a piece (0 = empty).
pub fn code_of(p: Option<Piece>) -> u8 {
    let Some(p) = p else { return 0 };
    let base = match p.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    if p.color == Color::White {
        base
    } else {
        base + 6
    }
}

/// The piece of a DGT piece code; `None` for empty and the special marker pieces.
pub fn piece_of(code: u8) -> Option<Piece> {
    let (color, base) = match code {
        1..=6 => (Color::White, code),
        7..=12 => (Color::Black, code - 6),
        _ => return None,
    };
    let role = match base {
        1 => Role::Pawn,
        2 => Role::Rook,
        3 => Role::Knight,
        4 => Role::Bishop,
        5 => Role::King,
        _ => Role::Queen,
    };
    Some(Piece { color, role })
}

/// The square of a field number, the board the right way round.
pub fn square_of(field: usize) -> Square {
    Square::new((((7 - field / 8) * 8) + field % 8) as u32)
}

/// A message with its header, as a board sends it.
pub fn message(id: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() + 3;
    let mut m = vec![id, ((len >> 7) & 0x7F) as u8, (len & 0x7F) as u8];
    m.extend_from_slice(payload);
    m
}

/// A board dump of the pieces on `board`.
pub fn dump(board: &Board) -> Vec<u8> {
    let payload: Vec<u8> = (0..64)
        .map(|f| code_of(board.piece_at(square_of(f))))
        .collect();
    message(MSG_BOARD_DUMP, &payload)
}

/// Splits the byte stream into messages.
#[derive(Debug, Default)]
pub struct Decoder {
    msg: Vec<u8>,
    pub dropped: u64,
}

impl Decoder {
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<(u8, Vec<u8>)>) {
        for &b in bytes {
            if b & 0x80 != 0 {
                if !self.msg.is_empty() {
                    self.dropped += 1;
                }
                self.msg.clear();
                self.msg.push(b);
                continue;
            }
            if self.msg.is_empty() {
                // Noise between messages.
                continue;
            }
            self.msg.push(b);
            if self.msg.len() >= 3 {
                let len = ((self.msg[1] as usize) << 7) | self.msg[2] as usize;
                if !(3..=1000).contains(&len) {
                    self.dropped += 1;
                    self.msg.clear();
                } else if self.msg.len() == len {
                    let m = std::mem::take(&mut self.msg);
                    out.push((m[0], m[3..].to_vec()));
                }
            }
        }
    }
}

/// The states of a board dump as the engine reads them (piece identities), orientation applied.
fn dump_states(payload: &[u8], rotated: bool) -> Option<[SquareState; 64]> {
    if payload.len() != 64 || payload.iter().any(|c| *c > 0x0F) {
        return None;
    }
    let mut states = [EMPTY; 64];
    for (field, &code) in payload.iter().enumerate() {
        let mut sq = square_of(field);
        if rotated {
            sq = sq.flip_vertical().flip_horizontal();
        }
        states[sq as usize] = piece_of(code).map_or(EMPTY, piece_code);
    }
    Some(states)
}

/// One field's run of updates.
#[derive(Copy, Clone, Debug)]
struct Updates {
    since: Instant,
    last: Instant,
    reported: bool,
}

/// The host side of the DGT protocol.
#[derive(Debug)]
pub struct DgtHost {
    decoder: Decoder,
    rotated: bool,
    orientation: Orientation,
    /// The way round has been learned from a position (or is fixed by the setting).
    oriented: bool,
    /// The positions the game can explain, as the daemon last said.
    expected: Vec<[u8; 64]>,
    /// How long the board must be quiet before a dump is asked for.
    settle: Duration,
    /// A field changed at this time: a dump is due once the board is quiet.
    dirty_since: Option<Instant>,
    /// The first change not yet read: a dump is due [`MAX_WAIT`] after it, quiet or not.
    dirty_first: Option<Instant>,
    /// Each field's current run of updates (by field number).
    updates: [Option<Updates>; 64],
    /// The last whole message from the board since the port opened.
    heard: Option<Instant>,
    /// The last request sent (the port's opening, a dump, a keep-alive poll).
    asked: Instant,
    pub version: Option<(u8, u8)>,
}

impl Default for DgtHost {
    fn default() -> DgtHost {
        DgtHost {
            decoder: Decoder::default(),
            rotated: false,
            orientation: Orientation::Auto,
            oriented: false,
            expected: Vec::new(),
            settle: SETTLE,
            dirty_since: None,
            dirty_first: None,
            updates: [None; 64],
            heard: None,
            asked: Instant::now(),
            version: None,
        }
    }
}

impl DgtHost {
    /// A host reading its board as `link` says.
    pub fn new(link: &LinkSettings) -> DgtHost {
        DgtHost {
            rotated: link.orientation == Orientation::Reversed,
            orientation: link.orientation,
            oriented: link.orientation != Orientation::Auto,
            settle: Duration::from_millis(link.dgt_settle_ms),
            ..DgtHost::default()
        }
    }

    /// The square of a field number, as the board stands.
    fn square(&self, field: usize) -> Square {
        let sq = square_of(field);
        if self.rotated {
            sq.flip_vertical().flip_horizontal()
        } else {
            sq
        }
    }

    /// Notes an update of `field` at `now`; its square when the field has just been found
    /// flickering (once an episode).
    fn flickers(&mut self, field: usize, now: Instant) -> Option<Square> {
        let run = self.updates.get_mut(field)?;
        match run {
            Some(r) => {
                let gap = if r.reported { FLICKER } else { FLICKER_GAP };
                if now.saturating_duration_since(r.last) < gap {
                    r.last = now;
                } else {
                    *r = Updates {
                        since: now,
                        last: now,
                        reported: false,
                    };
                }
            }
            None => {
                *run = Some(Updates {
                    since: now,
                    last: now,
                    reported: false,
                })
            }
        }
        let r = run.as_mut()?;
        if r.reported || now.saturating_duration_since(r.since) < FLICKER {
            return None;
        }
        r.reported = true;
        Some(self.square(field))
    }
}

impl super::serial::Protocol for DgtHost {
    fn name(&self) -> &'static str {
        "dgt"
    }
    fn baud(&self) -> u32 {
        9600
    }
    fn on_open(&mut self, now: Instant, port: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.decoder = Decoder {
            dropped: self.decoder.dropped,
            ..Decoder::default()
        };
        self.dirty_since = None;
        self.dirty_first = None;
        self.updates = [None; 64];
        self.heard = None;
        self.asked = now;
        port.write_all(&[RESET, SEND_VERSION, SEND_BOARD, UPDATE_BOARD])
    }
    fn on_bytes(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<DriverMsg>,
        _port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut msgs = Vec::new();
        let dropped = self.decoder.dropped;
        self.decoder.feed(bytes, &mut msgs);
        if self.decoder.dropped > dropped {
            // Something was lost: read the whole board again once it is quiet (noise does not
            // postpone a dump already due).
            self.dirty_since.get_or_insert(now);
            self.dirty_first.get_or_insert(now);
        }
        if !msgs.is_empty() {
            self.heard = Some(now);
        }
        for (id, payload) in msgs {
            match id {
                MSG_BOARD_DUMP if payload.len() == 64 => {
                    let (Some(normal), Some(turned)) =
                        (dump_states(&payload, false), dump_states(&payload, true))
                    else {
                        continue;
                    };
                    // The board's way round is found whenever it shows the start position or
                    // the game's position one way round only.
                    if let Some(r) =
                        super::learn_orientation(self.orientation, &normal, &turned, &self.expected)
                    {
                        self.rotated = r;
                        self.oriented = true;
                    }
                    let states = if self.rotated { turned } else { normal };
                    out.push(DriverMsg::Reading(Reading::Frame(Box::new(states))));
                }
                MSG_FIELD_UPDATE if payload.len() == 2 => {
                    self.dirty_since = Some(now);
                    self.dirty_first.get_or_insert(now);
                    if let Some(sq) = self.flickers(usize::from(payload[0]), now) {
                        out.push(DriverMsg::Flicker(sq));
                    }
                }
                MSG_VERSION if payload.len() == 2 => self.version = Some((payload[0], payload[1])),
                MSG_BOARD_DUMP | MSG_FIELD_UPDATE | MSG_VERSION => self.decoder.dropped += 1,
                _ => {}
            }
        }
        Ok(())
    }
    fn on_tick(
        &mut self,
        now: Instant,
        _out: &mut Vec<DriverMsg>,
        port: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let waited = |since: Option<Instant>, wait| {
            since.is_some_and(|t| now.saturating_duration_since(t) >= wait)
        };
        if waited(self.dirty_since, self.settle) || waited(self.dirty_first, MAX_WAIT) {
            self.dirty_since = None;
            self.dirty_first = None;
            self.asked = now;
            port.write_all(&[SEND_BOARD])?;
        }
        // In update mode a board where nothing moves sends nothing: it is asked for its serial
        // number, which it always answers.
        if super::serial::poll_due(now, self.heard, self.asked) {
            self.asked = now;
            port.write_all(&[SEND_SERIAL])?;
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
        if let super::serial::Show::Positions(positions) = what {
            let new = self.expected != *positions;
            self.expected.clone_from(positions);
            // Not yet known which way round: the board as it stands may tell, read it again.
            if new && !self.oriented {
                self.asked = Instant::now();
                port.write_all(&[SEND_BOARD])?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::serial::Protocol;

    #[test]
    fn the_start_position_dump_has_the_documented_bytes() {
        let d = dump(&Board::default());
        let mut expected = vec![
            0x86, 0x00, 0x43, 0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08,
        ];
        expected.extend([0x07; 8]);
        expected.extend([0x00; 32]);
        expected.extend([0x01; 8]);
        expected.extend([0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02]);
        assert_eq!(d, expected);
    }

    #[test]
    fn cut_messages_are_dropped_and_the_stream_resyncs() {
        let mut dec = Decoder::default();
        let mut out = Vec::new();
        let upd = message(MSG_FIELD_UPDATE, &[12, 0]);
        assert_eq!(upd, vec![0x8E, 0x00, 0x05, 12, 0]);
        let full = dump(&Board::default());
        let mut stream = full[..20].to_vec(); // cut off
        stream.extend(&upd);
        stream.extend([0x01, 0x02]); // noise
        stream.extend(&full);
        dec.feed(&stream[..7], &mut out);
        dec.feed(&stream[7..], &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], (MSG_FIELD_UPDATE, vec![12, 0]));
        assert_eq!(out[1].0, MSG_BOARD_DUMP);
        assert_eq!(dec.dropped, 1);
    }

    #[test]
    fn a_board_turned_round_is_read_the_right_way() {
        let mut host = DgtHost::default();
        let mut out = Vec::new();
        let mut sink = Vec::new();
        let mut payload = dump(&Board::default())[3..].to_vec();
        payload.reverse(); // the same board, connector on white's right
        host.on_bytes(
            &message(MSG_BOARD_DUMP, &payload),
            Instant::now(),
            &mut out,
            &mut sink,
        )
        .unwrap();
        let Some(DriverMsg::Reading(Reading::Frame(states))) = out.pop() else {
            panic!()
        };
        let white_king = piece_code(Piece {
            color: Color::White,
            role: Role::King,
        });
        assert_eq!(states[Square::E1 as usize], white_king);
        assert_eq!(
            states[Square::A2 as usize],
            piece_code(Piece {
                color: Color::White,
                role: Role::Pawn
            })
        );
    }

    #[test]
    fn the_way_round_is_taken_only_from_a_true_start_position() {
        let mut host = DgtHost::default();
        let mut out = Vec::new();
        let mut port = Vec::new();
        // Turned round, and a pawn first set on e3 instead of e2: 32 pieces, not a start.
        let mut wrong = Board::default();
        wrong.discard_piece_at(Square::E2);
        wrong.set_piece_at(
            Square::E3,
            Piece {
                color: Color::White,
                role: Role::Pawn,
            },
        );
        let mut payload = dump(&wrong)[3..].to_vec();
        payload.reverse();
        host.on_bytes(
            &message(MSG_BOARD_DUMP, &payload),
            Instant::now(),
            &mut out,
            &mut port,
        )
        .unwrap();
        let mut payload = dump(&Board::default())[3..].to_vec();
        payload.reverse();
        host.on_bytes(
            &message(MSG_BOARD_DUMP, &payload),
            Instant::now(),
            &mut out,
            &mut port,
        )
        .unwrap();
        let Some(DriverMsg::Reading(Reading::Frame(states))) = out.pop() else {
            panic!()
        };
        assert_eq!(
            states[Square::E2 as usize],
            piece_code(Piece {
                color: Color::White,
                role: Role::Pawn
            })
        );
        assert_eq!(
            states[Square::E8 as usize],
            piece_code(Piece {
                color: Color::Black,
                role: Role::King
            })
        );
        // Unknown piece codes: the dump is not taken.
        out.clear();
        let mut bad = dump(&Board::default())[3..].to_vec();
        bad[20] = 0x33;
        host.on_bytes(
            &message(MSG_BOARD_DUMP, &bad),
            Instant::now(),
            &mut out,
            &mut port,
        )
        .unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn an_idle_board_is_asked_for_its_serial_number_every_second() {
        // In update mode a board where nothing moves sends nothing: it is asked, so that it is
        // never taken for a silent one.
        let mut host = DgtHost::default();
        let (mut out, mut port) = (Vec::new(), Vec::new());
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        host.on_open(t0, &mut port).unwrap();
        assert_eq!(port, vec![RESET, SEND_VERSION, SEND_BOARD, UPDATE_BOARD]);
        port.clear();
        host.on_tick(ms(999), &mut out, &mut port).unwrap();
        assert!(port.is_empty());
        host.on_tick(ms(1_000), &mut out, &mut port).unwrap();
        assert_eq!(port, vec![SEND_SERIAL]);
        // Noise between messages is no answer; the serial number is.
        host.on_bytes(&[0x01, 0x02], ms(1_050), &mut out, &mut port)
            .unwrap();
        assert_eq!(host.last_heard(), None);
        host.on_bytes(
            &message(MSG_SERIAL, b"12345"),
            ms(1_100),
            &mut out,
            &mut port,
        )
        .unwrap();
        assert_eq!(host.last_heard(), Some(ms(1_100)));
        port.clear();
        host.on_tick(ms(2_099), &mut out, &mut port).unwrap();
        assert!(port.is_empty());
        host.on_tick(ms(2_100), &mut out, &mut port).unwrap();
        assert_eq!(port, vec![SEND_SERIAL]);
        // Opened again: nothing heard since.
        host.on_open(ms(3_000), &mut port).unwrap();
        assert_eq!(host.last_heard(), None);
    }

    #[test]
    fn a_flickering_field_holds_up_no_dump_and_is_reported_once_an_episode() {
        let mut host = DgtHost::default();
        let (mut out, mut port) = (Vec::new(), Vec::new());
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        host.on_open(t0, &mut port).unwrap();
        port.clear();
        // Field 39 (h4) reports every 200 ms from `from` to `to`; the host ticks every 10 ms.
        // Returns when the updates came and when dumps were asked for.
        let flicker = |host: &mut DgtHost, from: u64, to: u64, out: &mut Vec<DriverMsg>| {
            let mut port = Vec::new();
            let (mut updates, mut dumps) = (Vec::new(), Vec::new());
            for t in (from..to).step_by(10) {
                if (t - from) % 200 == 0 {
                    updates.push(t);
                    host.on_bytes(&message(MSG_FIELD_UPDATE, &[39, 0]), ms(t), out, &mut port)
                        .unwrap();
                }
                host.on_tick(ms(t), out, &mut port).unwrap();
                if port.contains(&SEND_BOARD) {
                    dumps.push(t);
                }
                port.clear();
            }
            (updates, dumps)
        };
        let (updates, dumps) = flicker(&mut host, 0, 10_000, &mut out);
        // Every update is read by a dump asked for at most half a second after it.
        for u in updates.iter().filter(|u| **u < 9_500) {
            assert!(
                dumps.iter().any(|d| d >= u && *d <= u + 500),
                "update at {u} ms, dumps at {dumps:?}"
            );
        }
        // Reported once, after 3 s.
        assert_eq!(out, vec![DriverMsg::Flicker(Square::H4)]);
        // Quiet for a second, then again: the same episode, not said again.
        out.clear();
        flicker(&mut host, 11_000, 15_000, &mut out);
        assert!(out.is_empty());
        // Quiet for 3 s: a new episode, said after 3 s of it.
        flicker(&mut host, 18_000, 20_900, &mut out);
        assert!(out.is_empty());
        flicker(&mut host, 21_000, 21_500, &mut out);
        assert_eq!(out, vec![DriverMsg::Flicker(Square::H4)]);
        // A person's moves on one square are no flicker: two updates, then quiet.
        let mut host = DgtHost::default();
        out.clear();
        for t in [0, 300, 4_000, 4_200] {
            host.on_bytes(
                &message(MSG_FIELD_UPDATE, &[39, 0]),
                ms(t),
                &mut out,
                &mut port,
            )
            .unwrap();
        }
        assert!(out.is_empty());
    }

    #[test]
    fn field_updates_lead_to_a_dump_request_once_the_board_is_quiet() {
        let mut host = DgtHost::default();
        let mut port = Vec::new();
        let mut out = Vec::new();
        let t0 = Instant::now();
        host.on_bytes(
            &message(MSG_FIELD_UPDATE, &[52, 0]),
            t0,
            &mut out,
            &mut port,
        )
        .unwrap();
        host.on_tick(t0 + Duration::from_millis(100), &mut out, &mut port)
            .unwrap();
        assert!(port.is_empty());
        host.on_tick(t0 + SETTLE, &mut out, &mut port).unwrap();
        assert_eq!(port, vec![SEND_BOARD]);
    }
}

/// The board side of the DGT protocol: a board answers the host's commands, sends a dump when
/// asked, and field updates once an update mode was asked for. Its clock messages (`0x2b`, a
/// length byte and a payload) are no commands.
pub mod device {
    use shakmaty::Square;

    use super::*;

    /// A DGT board, standing the other way round when `rotated`.
    #[derive(Debug, Default)]
    pub struct Board {
        rotated: bool,
        /// Host command bytes not yet whole (a clock message spans several bytes).
        pending: Vec<u8>,
        connected: bool,
        /// Field updates are sent (an update mode was asked for since the last reset).
        updates: bool,
    }

    impl Board {
        pub fn new(rotated: bool) -> Board {
            Board {
                rotated,
                ..Board::default()
            }
        }

        /// The board's dump of `board`.
        pub fn dump(&self, board: &shakmaty::Board) -> Vec<u8> {
            let mut d = dump(board);
            if self.rotated {
                d[3..].reverse();
            }
            d
        }

        fn command(&mut self, c: u8, board: &shakmaty::Board, out: &mut Vec<u8>) {
            match c {
                RESET => self.updates = false,
                SEND_BOARD => {
                    self.connected = true;
                    out.extend(self.dump(board));
                }
                UPDATE | UPDATE_BOARD | UPDATE_NICE => {
                    self.connected = true;
                    self.updates = true;
                }
                SEND_VERSION => out.extend(message(MSG_VERSION, &[1, 7])),
                SEND_SERIAL => out.extend(message(MSG_SERIAL, b"12345")),
                SEND_LONG_SERIAL => out.extend(message(MSG_LONG_SERIAL, b"3201012345")),
                SEND_TRADEMARK => out.extend(message(
                    MSG_TRADEMARK,
                    b"Digital Game Technology\nchessboardd simulator",
                )),
                SEND_BUS_ADDRESS => out.extend(message(MSG_BUS_ADDRESS, &[0, 1])),
                // No clock connected: all times zero, status "no clock".
                SEND_CLOCK => out.extend(message(MSG_CLOCK, &[0, 0, 0, 0, 0, 0, 0x20])),
                // Full, running on battery, times not known.
                SEND_BATTERY => out.extend(message(
                    MSG_BATTERY,
                    &[100, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0x02],
                )),
                _ => {}
            }
        }
    }

    impl crate::board::Device for Board {
        fn answer(&mut self, bytes: &[u8], board: &shakmaty::Board, out: &mut Vec<u8>) {
            self.pending.extend_from_slice(bytes);
            // Whole commands: one byte each, but a clock message carries a length byte and that
            // many bytes of payload.
            while let Some(&c) = self.pending.first() {
                let len = if c == CLOCK_MESSAGE {
                    match self.pending.get(1) {
                        Some(&n) => 2 + usize::from(n),
                        None => return,
                    }
                } else {
                    1
                };
                if self.pending.len() < len {
                    return;
                }
                self.pending.drain(..len);
                self.command(c, board, out);
            }
        }
        fn connected(&self) -> bool {
            self.connected
        }
        fn host_gone(&mut self) {
            self.connected = false;
            self.pending.clear();
            self.updates = false;
        }
        fn report(&self, board: &shakmaty::Board, changed: Square) -> Vec<u8> {
            // Out of update mode a DGT board sends nothing of itself.
            if !self.updates {
                return Vec::new();
            }
            let mut field = (0..64).find(|f| square_of(*f) == changed).unwrap_or(0);
            if self.rotated {
                field = 63 - field;
            }
            message(
                MSG_FIELD_UPDATE,
                &[field as u8, code_of(board.piece_at(changed))],
            )
        }
        fn broken_frames(&self) -> [Vec<u8>; 2] {
            // A field update with a byte over 0x7f in its payload; a dump cut short.
            [
                vec![MSG_FIELD_UPDATE, 0x00, 0x05, 0x12],
                vec![0x86, 0x00, 0x43, 0x01, 0x02],
            ]
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

        #[test]
        fn dgt_clock_messages_are_not_read_as_commands() {
            let mut b = Board::new(false);
            // A clock text holding the bytes of "send board" and "version".
            let clock = [
                CLOCK_MESSAGE,
                0x06,
                0x03,
                0x0C,
                SEND_BOARD,
                SEND_VERSION,
                0x42,
                0x00,
            ];
            assert!(said(&mut b, &clock[..3]).is_empty());
            assert!(said(&mut b, &clock[3..]).is_empty());
            assert!(!b.connected());
            assert_eq!(said(&mut b, &[SEND_VERSION]), message(MSG_VERSION, &[1, 7]));
        }

        #[test]
        fn dgt_answers_the_other_board_commands() {
            let mut b = Board::new(false);
            let mut d = super::super::Decoder::default();
            for (cmd, id, len) in [
                (SEND_CLOCK, MSG_CLOCK, 7),
                (SEND_BUS_ADDRESS, MSG_BUS_ADDRESS, 2),
                (SEND_TRADEMARK, MSG_TRADEMARK, 0),
                (SEND_BATTERY, MSG_BATTERY, 9),
                (SEND_LONG_SERIAL, MSG_LONG_SERIAL, 10),
            ] {
                let mut msgs = Vec::new();
                d.feed(&said(&mut b, &[cmd]), &mut msgs);
                assert_eq!(msgs.len(), 1, "{cmd:#x}");
                assert_eq!(msgs[0].0, id, "{cmd:#x}");
                assert!(
                    len == 0 || msgs[0].1.len() == len,
                    "{cmd:#x}: {:?}",
                    msgs[0]
                );
            }
            assert_eq!(d.dropped, 0);
        }

        #[test]
        fn dgt_sends_field_updates_only_in_an_update_mode() {
            let mut b = Board::new(false);
            said(&mut b, &[SEND_BOARD]);
            assert!(b.report(&start(), Square::E2).is_empty());
            said(&mut b, &[UPDATE_BOARD]);
            assert!(!b.report(&start(), Square::E2).is_empty());
            said(&mut b, &[RESET]);
            assert!(b.report(&start(), Square::E2).is_empty());
            said(&mut b, &[UPDATE_NICE]);
            assert!(!b.report(&start(), Square::E2).is_empty());
        }
    }
}
