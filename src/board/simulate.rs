//! Simulated serial boards: a pseudo-terminal that behaves like a DIY, DGT or ChessLink board.
//! It answers the host's commands, and once the host has connected plays a game the way people
//! move pieces, with the board's own quirks (a DGT board reports squares in scan order, so a
//! moved piece may show on its new square before its old one is empty). It can be told to
//! glitch (garbage bytes, corrupted frames), to drop the link and come back, to go silent for a
//! while with its port open (a hung board), and (DGT) to report one square over and over (a
//! flickering sensor). Its players only play to a host: when the host closes the port or dies,
//! they finish the move in hand and wait until a host has opened the port again and sent its
//! start-up commands.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use serialport::{SerialPort, TTYPort};
use shakmaty::{Board, CastlingSide, Chess, Move, Piece, Position, Role, Square};

use super::{chesslink, dgt, diy};
use crate::sim::Rng;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    Diy,
    Dgt,
    ChessLink,
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s {
            "diy" => Ok(Protocol::Diy),
            "dgt" => Ok(Protocol::Dgt),
            "chesslink" => Ok(Protocol::ChessLink),
            _ => Err(format!(
                "unknown protocol '{s}' (accepted: diy, dgt, chesslink)"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct SimOptions {
    pub protocol: Protocol,
    /// Where the symlink to the pseudo-terminal goes.
    pub link: PathBuf,
    pub start: Chess,
    pub moves: Vec<Move>,
    /// How much faster than people the simulated players move.
    pub speed: f64,
    /// Garbage bytes and corrupted frames between the good ones.
    pub glitch: bool,
    /// The board stands the other way round (DGT, ChessLink).
    pub rotated: bool,
    /// Drop the link and come back this many times during the game.
    pub reconnects: u32,
    /// After this many moves, go silent for this long (see [`SILENCE_DELAY`]).
    pub silence: Option<(usize, Duration)>,
    /// A DGT board's sensor under this square reports it every [`FLICKER_EVERY`] throughout.
    pub flicker: Option<Square>,
    /// When the host closes the port (a daemon that crashed), the players make up to this many
    /// more moves before they wait for it (they cannot tell that nobody listens).
    pub play_on: u32,
    pub seed: u64,
}

/// How long after the move that precedes it a silence begins: time for the host to read that
/// move. The next move is made during the silence, and the players wait for the board after it.
pub const SILENCE_DELAY: Duration = Duration::from_secs(1);
/// How often a ChessLink board reporting on every scan sends its status.
pub const CHESSLINK_SCAN: Duration = Duration::from_millis(250);
/// How often a flickering square is reported.
pub const FLICKER_EVERY: Duration = Duration::from_millis(200);

/// Where a board's silence is (`--silence`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Silence {
    /// None yet (or none asked for).
    Off,
    /// It begins at this time; no move is begun meanwhile.
    Pending(Instant),
    /// The board sends nothing and answers nothing until this time; `moved` once the move made
    /// meanwhile is done.
    On {
        until: Instant,
        moved: bool,
    },
    Over,
}

/// `MOVES:SECONDS` for `--silence`.
pub fn parse_silence(s: &str) -> Result<(usize, Duration), String> {
    let err = || format!("'{s}' is not MOVES:SECONDS (e.g. 4:5 or 4:4.5)");
    let (moves, secs) = s.split_once(':').ok_or_else(err)?;
    let moves = moves.trim().parse::<usize>().map_err(|_| err())?;
    let secs = secs.trim().parse::<f64>().map_err(|_| err())?;
    if !(0.0..=3600.0).contains(&secs) {
        return Err(err());
    }
    Ok((moves, Duration::from_secs_f64(secs)))
}

/// One physical step: a square changes to this piece (or empty), after a pause.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    pause_ms: u64,
    square: Square,
    piece: Option<Piece>,
    /// A DIY board's promotion button, pressed after this step.
    button: Option<Role>,
}

fn step(pause_ms: u64, square: Square, piece: Option<Piece>) -> Step {
    Step {
        pause_ms,
        square,
        piece,
        button: None,
    }
}

/// The steps of a move as a person makes it.
fn move_steps(pos: &Chess, m: Move, rng: &mut Rng, protocol: Protocol) -> Vec<Step> {
    let turn = pos.turn();
    let board = pos.board();
    let mut steps = Vec::new();
    match m {
        Move::Normal {
            from,
            to,
            capture,
            promotion,
            role,
        } => {
            let placed = Piece {
                color: turn,
                role: promotion.unwrap_or(role),
            };
            if capture.is_some() {
                if rng.chance(50) {
                    steps.push(step(rng.range(200, 500), to, None));
                    steps.push(step(rng.range(150, 400), from, None));
                } else {
                    steps.push(step(rng.range(200, 500), from, None));
                    steps.push(step(rng.range(150, 400), to, None));
                }
                steps.push(step(rng.range(150, 400), to, Some(placed)));
            } else if protocol == Protocol::Dgt && rng.chance(30) {
                // The scan sees the new square before the old one.
                steps.push(step(rng.range(300, 700), to, Some(placed)));
                steps.push(step(rng.range(20, 60), from, None));
            } else {
                steps.push(step(rng.range(200, 500), from, None));
                steps.push(step(rng.range(200, 600), to, Some(placed)));
            }
            if let (Some(p), Protocol::Diy) = (promotion, protocol) {
                // An occupancy board cannot see the new piece: the player presses its button.
                if let Some(last) = steps.last_mut() {
                    last.button = Some(p);
                }
            }
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            steps.push(step(rng.range(200, 500), from, None));
            steps.push(step(rng.range(150, 400), to, board.piece_at(from)));
            steps.push(step(rng.range(150, 400), victim, None));
        }
        Move::Castle { king, rook } => {
            let side = if rook > king {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            steps.push(step(rng.range(200, 500), king, None));
            steps.push(step(
                rng.range(150, 400),
                side.king_to(turn),
                board.piece_at(king),
            ));
            steps.push(step(rng.range(150, 400), rook, None));
            steps.push(step(
                rng.range(150, 400),
                side.rook_to(turn),
                board.piece_at(rook),
            ));
        }
        Move::Put { .. } => {}
    }
    steps
}

fn occupancy(board: &Board) -> u64 {
    board.occupied().0
}

/// The board end of the link: the pseudo-terminal's master, kept open for the whole run (a new
/// terminal only for a pulled cable). The simulator does not keep the terminal (its slave end)
/// open itself, so the master sees whether a host has the port open:
/// with no slave open, poll reports POLLHUP and reading fails with EIO.
struct Link {
    master: TTYPort,
    /// A host has had this terminal open (a hang-up after that means it went away).
    host_seen: bool,
    /// The terminal's (slave's) path.
    slave: Option<String>,
}

/// What the master end saw while waiting for bytes.
struct Wait {
    /// The host's bytes, if any arrived.
    bytes: usize,
    /// Nobody holds the terminal open: no host.
    hung_up: bool,
}

impl Link {
    /// Waits up to `timeout` for bytes from the host, reading them into `buf`.
    fn wait(&mut self, buf: &mut [u8], timeout: Duration) -> Wait {
        let fd = self.master.as_raw_fd();
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, timeout.as_millis() as libc::c_int) };
        if r < 0 {
            return Wait {
                bytes: 0,
                hung_up: false,
            };
        }
        let hung_up = p.revents & libc::POLLHUP != 0;
        if hung_up {
            // Poll does not wait on a hung-up terminal: wait here instead.
            std::thread::sleep(timeout);
        } else {
            self.host_seen = true;
        }
        let mut bytes = 0;
        if p.revents & libc::POLLIN != 0 {
            // SAFETY: `buf` is valid for `buf.len()` bytes; poll said a read will not block.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            bytes = n.max(0) as usize;
        }
        Wait { bytes, hung_up }
    }
}

impl Link {
    /// After a host closed the terminal: makes it ready for the next one (the slave path stays
    /// the same). Bytes left in it are thrown away, and the exclusive lock a killed host may
    /// have left on it is lifted. `false` when that cannot be done (a fresh terminal is then
    /// needed).
    fn ready_again(&mut self) -> bool {
        self.host_seen = false;
        let Some(name) = self.slave.clone() else {
            return false;
        };
        let Ok(c) = std::ffi::CString::new(name) else {
            return false;
        };
        // SAFETY: a valid C string; the descriptor is closed below.
        let fd =
            unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK) };
        if fd < 0 {
            return false;
        }
        // SAFETY: `fd` is an open terminal of ours; these ioctls take no pointer.
        unsafe {
            libc::ioctl(fd, libc::TIOCNXCL);
            libc::tcflush(fd, libc::TCIOFLUSH);
            libc::close(fd);
        }
        true
    }
}

/// Makes a new pseudo-terminal and points the symlink at `path` to it (atomically, so that a
/// host looking for the port finds either the old terminal or the new one, never nothing).
fn open_link(path: &Path) -> std::io::Result<Link> {
    let (mut master, slave) = TTYPort::pair().map_err(std::io::Error::other)?;
    master
        .set_timeout(Duration::from_millis(5))
        .map_err(std::io::Error::other)?;
    let name = slave
        .name()
        .ok_or_else(|| std::io::Error::other("the pseudo-terminal has no name"))?;
    // The terminal stays configured (raw) for the host; the board end keeps only the master.
    drop(slave);
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_symlink() => {
            return Err(std::io::Error::other(format!(
                "{} exists and is not a symlink: not replacing it",
                path.display()
            )))
        }
        _ => {}
    }
    crate::fsutil::replace_symlink(Path::new(&name), path)?;
    Ok(Link {
        master,
        host_seen: false,
        slave: Some(name),
    })
}

/// What the simulated board did.
#[derive(Debug, Default)]
pub struct SimReport {
    pub moves: usize,
    pub frames: u64,
    pub glitches: u64,
    pub reconnects: u32,
    /// LED patterns the host sent (ChessLink).
    pub leds: u64,
    /// Times the host went away (closed the port or died) and the players waited.
    pub host_losses: u32,
    /// Silences kept (`--silence`).
    pub silences: u32,
    /// Reports of the flickering square (`--flicker`).
    pub flickers: u64,
}

struct SimBoard {
    protocol: Protocol,
    rotated: bool,
    board: Board,
    /// Host command bytes not yet understood (commands span several bytes).
    pending: Vec<u8>,
    connected: bool,
    leds: u64,
    /// DGT: field updates are sent (an update mode was asked for since the last reset).
    updates: bool,
    /// ChessLink: register 02, automatic reports (0 every scan, 1 off, 3-7 on change).
    reports: u8,
}

impl SimBoard {
    fn new(protocol: Protocol, rotated: bool, board: Board) -> SimBoard {
        SimBoard {
            protocol,
            rotated,
            board,
            pending: Vec::new(),
            connected: false,
            leds: 0,
            updates: false,
            reports: 0,
        }
    }

    /// The host went away (or the cable was pulled): what it asked for is forgotten, as a
    /// board powered by its port forgets it.
    fn host_gone(&mut self) {
        self.connected = false;
        self.pending.clear();
        self.updates = false;
        self.reports = 0;
    }

    fn answer(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for &b in bytes {
            match self.protocol {
                Protocol::Diy => {
                    if b == b'?' {
                        self.connected = true;
                        out.extend(diy::frame(occupancy(&self.board)).bytes());
                    }
                }
                Protocol::Dgt => {
                    self.pending.push(b);
                    self.dgt_commands(out);
                }
                Protocol::ChessLink => {
                    self.pending.push(b);
                    self.chesslink_commands(out);
                }
            }
        }
    }

    /// Whole DGT commands: one byte each, but a clock message (`0x2b`) carries a length byte
    /// and that many bytes of payload, which are no commands.
    fn dgt_commands(&mut self, out: &mut Vec<u8>) {
        while let Some(&c) = self.pending.first() {
            let len = if c == dgt::CLOCK_MESSAGE {
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
            self.dgt_command(c, out);
        }
    }

    fn dgt_command(&mut self, c: u8, out: &mut Vec<u8>) {
        match c {
            dgt::RESET => self.updates = false,
            dgt::SEND_BOARD => {
                self.connected = true;
                out.extend(self.dgt_dump());
            }
            dgt::UPDATE | dgt::UPDATE_BOARD | dgt::UPDATE_NICE => {
                self.connected = true;
                self.updates = true;
            }
            dgt::SEND_VERSION => out.extend(dgt::message(dgt::MSG_VERSION, &[1, 7])),
            dgt::SEND_SERIAL => out.extend(dgt::message(dgt::MSG_SERIAL, b"12345")),
            dgt::SEND_LONG_SERIAL => out.extend(dgt::message(dgt::MSG_LONG_SERIAL, b"3201012345")),
            dgt::SEND_TRADEMARK => out.extend(dgt::message(
                dgt::MSG_TRADEMARK,
                b"Digital Game Technology\nchessboardd simulator",
            )),
            dgt::SEND_BUS_ADDRESS => out.extend(dgt::message(dgt::MSG_BUS_ADDRESS, &[0, 1])),
            // No clock connected: all times zero, status "no clock".
            dgt::SEND_CLOCK => out.extend(dgt::message(dgt::MSG_CLOCK, &[0, 0, 0, 0, 0, 0, 0x20])),
            // Full, running on battery, times not known.
            dgt::SEND_BATTERY => out.extend(dgt::message(
                dgt::MSG_BATTERY,
                &[100, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0x02],
            )),
            _ => {}
        }
    }

    fn dgt_dump(&self) -> Vec<u8> {
        let mut d = dgt::dump(&self.board);
        if self.rotated {
            d[3..].reverse();
        }
        d
    }

    /// Whole ChessLink commands. A byte with even parity, or a command whose checksum is
    /// wrong, is ignored (the board waits for the next command letter).
    fn chesslink_commands(&mut self, out: &mut Vec<u8>) {
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
            if !parity || chesslink::message(&body).as_bytes() != cmd.as_slice() {
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
                Some(r) => out.extend(chesslink::wire(&r)),
                None => out.extend(self.chesslink_status()),
            }
        }
    }

    fn chesslink_status(&self) -> Vec<u8> {
        chesslink::status(&self.board, self.rotated)
            .bytes()
            .map(chesslink::with_parity)
            .collect()
    }

    /// What the board sends when a square changed.
    fn report(&self, sq: Square, piece: Option<Piece>) -> Vec<u8> {
        match self.protocol {
            Protocol::Diy => diy::frame(occupancy(&self.board)).into_bytes(),
            // Out of update mode a DGT board sends nothing of itself; with reports off, a
            // ChessLink board neither.
            Protocol::Dgt if !self.updates => Vec::new(),
            Protocol::ChessLink if self.reports == 1 => Vec::new(),
            Protocol::Dgt => {
                let mut field = (0..64).find(|f| dgt::square_of(*f) == sq).unwrap_or(0);
                if self.rotated {
                    field = 63 - field;
                }
                dgt::message(dgt::MSG_FIELD_UPDATE, &[field as u8, dgt::code_of(piece)])
            }
            Protocol::ChessLink => self.chesslink_status(),
        }
    }
}

fn garbage(rng: &mut Rng, protocol: Protocol) -> Vec<u8> {
    match rng.range(0, 2) {
        0 => (0..rng.range(1, 12))
            .map(|_| rng.next_u64() as u8)
            .collect(),
        1 => match protocol {
            // A frame with a wrong checksum.
            Protocol::Diy => b"B00000000000000FF*00\n".to_vec(),
            Protocol::Dgt => vec![dgt::MSG_FIELD_UPDATE, 0x00, 0x05, 0x12],
            Protocol::ChessLink => chesslink::wire("s")
                .into_iter()
                .take(2)
                .chain([b'Z', b'Z'])
                .collect(),
        },
        _ => match protocol {
            Protocol::Diy => b"BFFFF0000\n".to_vec(),
            Protocol::Dgt => vec![0x86, 0x00, 0x43, 0x01, 0x02],
            Protocol::ChessLink => b"s....".to_vec(),
        },
    }
}

/// Runs a simulated board until its game is over (or forever without moves, until killed).
///
/// The players only play while a host listens. When the host goes away (it closed the port, or
/// died: the terminal hangs up either way), the move in progress is finished, as a person does
/// not stop with a piece in hand, but no new move is started; the reports of that move are not
/// sent (a board that is not connected sends nothing). The port stays the same terminal, as a
/// board's device node stays the same, but is cleared: the next host (or the same one opening it
/// again at once) finds no stale bytes and no exclusive lock left by a host that was killed. When a
/// host opens the port again and sends its start-up commands, it is answered with the board as
/// it stands and the game goes on.
pub fn run(opts: &SimOptions) -> std::io::Result<SimReport> {
    let mut rng = Rng::new(opts.seed);
    let mut link = open_link(&opts.link)?;
    let mut b = SimBoard::new(opts.protocol, opts.rotated, opts.start.board().clone());
    let mut report = SimReport::default();
    // Speed shortens the players' thinking; the hands still take their time, so that a board's
    // debounce and settle see each step (60 ms at least, 500 ms between moves).
    let scale = |ms: u64| Duration::from_secs_f64(ms as f64 / 1000.0 / opts.speed.max(0.01));
    let pause =
        |ms: u64, first: bool| scale(ms).max(Duration::from_millis(if first { 500 } else { 60 }));
    // The moves to play, as steps, worked out in advance.
    let mut plan: Vec<(usize, Step)> = Vec::new();
    let mut pos = opts.start.clone();
    for (i, m) in opts.moves.iter().enumerate() {
        let mut steps = move_steps(&pos, *m, &mut rng, opts.protocol);
        if let Some(first) = steps.first_mut() {
            first.pause_ms += rng.range(1000, 2500);
        }
        plan.extend(steps.into_iter().map(|s| (i, s)));
        pos.play_unchecked(*m);
    }
    let reconnect_at: Vec<usize> = (1..=opts.reconnects as usize)
        .map(|k| k * opts.moves.len() / (opts.reconnects as usize + 1))
        .collect();
    // A move has begun and is not finished: the player's hand is on the board.
    let mid_move = |next: usize| next > 0 && next < plan.len() && plan[next - 1].0 == plan[next].0;
    let mut next = 0;
    let mut due: Option<Instant> = None;
    let mut heartbeat = Instant::now();
    let mut done_at: Option<Instant> = None;
    // A DIY promotion button pressed while no host listened: pressed again once one does.
    let mut held_button: Option<Role> = None;
    let mut silence = Silence::Off;
    let mut flickered = Instant::now();
    let mut buf = [0u8; 256];
    // Moves made since the host went away (see `play_on`).
    let mut unheard = 0u32;
    loop {
        let mut out = Vec::new();
        let seen = link.wait(&mut buf, Duration::from_millis(5));
        let now = Instant::now();
        match silence {
            Silence::Pending(at) if now >= at => {
                let until = at + opts.silence.map_or(Duration::ZERO, |(_, d)| d);
                silence = Silence::On {
                    until,
                    moved: false,
                };
                report.silences += 1;
                eprintln!(
                    "chessboardd simulate: the board goes silent after {} moves, for {:.1} s",
                    report.moves,
                    until.duration_since(at).as_secs_f64()
                );
            }
            Silence::On { until, .. } if now >= until => {
                silence = Silence::Over;
                eprintln!(
                    "chessboardd simulate: the board talks again after {} moves",
                    report.moves
                );
            }
            _ => {}
        }
        // A silent board sends nothing and answers nothing; its port stays open.
        let quiet = matches!(silence, Silence::On { .. });
        if seen.hung_up && link.host_seen {
            // The host is gone. Its last bytes do not matter; the players wait for the next.
            b.host_gone();
            if !mid_move(next) {
                due = None;
            }
            report.host_losses += 1;
            unheard = 0;
            eprintln!(
                "chessboardd simulate: the host closed the port after {} moves; the players \
                 make {} more, then wait",
                report.moves, opts.play_on
            );
            // The port stays where it is, as a board's device node does: the next host (or
            // the same one, probing and opening it again at once) opens the same terminal.
            if !link.ready_again() {
                drop(link);
                link = open_link(&opts.link)?;
            }
            continue;
        }
        let host = !seen.hung_up;
        if host && seen.bytes > 0 && !quiet {
            let was = b.connected;
            b.answer(&buf[..seen.bytes], &mut out);
            if b.connected && !was && report.host_losses > 0 {
                eprintln!(
                    "chessboardd simulate: a host is back after {} moves; the game goes on",
                    report.moves
                );
            }
        }
        if b.connected && !quiet {
            if let Some(role) = held_button.take() {
                out.extend(diy::button(role).bytes());
            }
        }
        // A move is begun for a host that listens; during a silence one move is made (the
        // players cannot tell that the board has hung), then they wait for the board.
        let may_begin = match silence {
            Silence::Off | Silence::Over => {
                b.connected || (report.host_losses > 0 && unheard < opts.play_on)
            }
            Silence::Pending(_) => false,
            Silence::On { moved, .. } => !moved,
        };
        if (may_begin || mid_move(next)) && due.is_none() && next < plan.len() {
            let first = !mid_move(next);
            due = Some(now + pause(plan[next].1.pause_ms, first));
        }
        if due.is_some_and(|t| now >= t) {
            let (i, s) = plan[next].clone();
            match s.piece {
                Some(p) => b.board.set_piece_at(s.square, p),
                None => b.board.discard_piece_at(s.square),
            }
            if b.connected && !quiet {
                out.extend(b.report(s.square, s.piece));
                if let Some(role) = s.button {
                    out.extend(diy::button(role).bytes());
                }
            } else {
                // Nobody listens: the report is lost, a button is pressed again later.
                held_button = held_button.or(s.button);
            }
            report.frames += 1;
            next += 1;
            due = None;
            let move_done = plan.get(next).is_none_or(|(j, _)| *j != i);
            if move_done {
                report.moves = i + 1;
                if b.connected {
                    unheard = 0;
                } else {
                    unheard += 1;
                }
                match silence {
                    Silence::On { until, .. } => silence = Silence::On { until, moved: true },
                    Silence::Off if opts.silence.is_some_and(|(n, _)| n == i + 1) => {
                        silence = Silence::Pending(now + SILENCE_DELAY)
                    }
                    _ => {}
                }
                if reconnect_at.contains(&(i + 1)) && report.reconnects < opts.reconnects {
                    // The cable is pulled and plugged in again.
                    if host {
                        let _ = link.master.write_all(&out);
                    }
                    out.clear();
                    drop(link);
                    std::thread::sleep(scale(400).max(Duration::from_millis(200)));
                    link = open_link(&opts.link)?;
                    report.reconnects += 1;
                    b.host_gone();
                }
            }
        }
        // Noise on the line: now and then, after something was sent.
        if opts.glitch && b.connected && !quiet && !out.is_empty() && rng.chance(25) {
            out.extend(garbage(&mut rng, opts.protocol));
            report.glitches += 1;
        }
        if opts.protocol == Protocol::Diy
            && b.connected
            && !quiet
            && now.duration_since(heartbeat) >= Duration::from_secs(1)
        {
            heartbeat = now;
            out.extend(diy::frame(occupancy(&b.board)).bytes());
        }
        // A ChessLink board reporting on every scan (register 02 at 0, its default).
        if opts.protocol == Protocol::ChessLink
            && b.connected
            && b.reports == 0
            && !quiet
            && now.duration_since(heartbeat) >= CHESSLINK_SCAN
        {
            heartbeat = now;
            out.extend(b.chesslink_status());
        }
        // A flickering sensor: its square reported again and again, unchanged.
        if let (Some(sq), Protocol::Dgt) = (opts.flicker, opts.protocol) {
            if b.connected && !quiet && now.duration_since(flickered) >= FLICKER_EVERY {
                flickered = now;
                out.extend(b.report(sq, b.board.piece_at(sq)));
                report.flickers += 1;
            }
        }
        if quiet {
            out.clear();
        }
        // Without a host nothing is sent: the bytes would wait in the terminal for the next one.
        if host && !out.is_empty() && link.master.write_all(&out).is_err() {
            // The host stopped reading: what did not fit is lost, as on a real line.
            std::thread::sleep(Duration::from_millis(20));
        }
        if next >= plan.len() && !opts.moves.is_empty() && (b.connected || done_at.is_some()) {
            // Let the host read the end of the game, then stop.
            let end = *done_at.get_or_insert(now + Duration::from_secs(2));
            if now >= end {
                break;
            }
        }
    }
    if std::fs::symlink_metadata(&opts.link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(&opts.link);
    }
    report.leds = b.leds;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(protocol: Protocol) -> SimBoard {
        SimBoard::new(protocol, false, Board::default())
    }

    fn said(b: &mut SimBoard, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        b.answer(bytes, &mut out);
        out
    }

    fn chesslink_cmds(cmds: &[&str]) -> Vec<u8> {
        cmds.iter().flat_map(|c| chesslink::wire(c)).collect()
    }

    #[test]
    fn chesslink_reports_by_default_and_register_02_turns_reports_off() {
        let mut b = board(Protocol::ChessLink);
        // Any command is a host: no `S` needed for the board to report.
        assert_eq!(
            said(&mut b, &chesslink_cmds(&["V"])),
            chesslink::wire("v0104")
        );
        assert!(b.connected);
        assert_eq!(b.reports, 0);
        assert!(!b.report(Square::E4, None).is_empty());
        said(&mut b, &chesslink_cmds(&["W0201"]));
        assert_eq!(b.reports, 1);
        assert!(b.report(Square::E4, None).is_empty());
        // `S` is still answered.
        assert_eq!(said(&mut b, &chesslink_cmds(&["S"])), b.chesslink_status());
        said(&mut b, &chesslink_cmds(&["W0203"]));
        assert!(!b.report(Square::E4, None).is_empty());
    }

    #[test]
    fn chesslink_reset_has_no_reply_and_bad_commands_are_ignored() {
        let mut b = board(Protocol::ChessLink);
        said(&mut b, &chesslink_cmds(&["W0201"]));
        assert!(said(&mut b, &chesslink_cmds(&["T"])).is_empty());
        assert_eq!(b.reports, 0, "a reset restores the defaults");
        // A wrong checksum: no answer.
        let bad: Vec<u8> = "S00".bytes().map(chesslink::with_parity).collect();
        assert!(said(&mut b, &bad).is_empty());
        // Even parity: no answer.
        let even: Vec<u8> = chesslink::message("S").bytes().collect();
        assert!(even.iter().any(|c| c.count_ones() % 2 == 0));
        assert!(said(&mut b, &even).is_empty());
        // And the next good command is understood.
        assert_eq!(said(&mut b, &chesslink_cmds(&["X"])), chesslink::wire("x"));
    }

    #[test]
    fn dgt_clock_messages_are_not_read_as_commands() {
        let mut b = board(Protocol::Dgt);
        // A clock text holding the bytes of "send board" and "version".
        let clock = [
            dgt::CLOCK_MESSAGE,
            0x06,
            0x03,
            0x0C,
            dgt::SEND_BOARD,
            dgt::SEND_VERSION,
            0x42,
            0x00,
        ];
        assert!(said(&mut b, &clock[..3]).is_empty());
        assert!(said(&mut b, &clock[3..]).is_empty());
        assert!(!b.connected);
        assert_eq!(
            said(&mut b, &[dgt::SEND_VERSION]),
            dgt::message(dgt::MSG_VERSION, &[1, 7])
        );
    }

    #[test]
    fn dgt_answers_the_other_board_commands() {
        let mut b = board(Protocol::Dgt);
        let mut d = dgt::Decoder::default();
        for (cmd, id, len) in [
            (dgt::SEND_CLOCK, dgt::MSG_CLOCK, 7),
            (dgt::SEND_BUS_ADDRESS, dgt::MSG_BUS_ADDRESS, 2),
            (dgt::SEND_TRADEMARK, dgt::MSG_TRADEMARK, 0),
            (dgt::SEND_BATTERY, dgt::MSG_BATTERY, 9),
            (dgt::SEND_LONG_SERIAL, dgt::MSG_LONG_SERIAL, 10),
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
        let mut b = board(Protocol::Dgt);
        said(&mut b, &[dgt::SEND_BOARD]);
        assert!(b.report(Square::E2, None).is_empty());
        said(&mut b, &[dgt::UPDATE_BOARD]);
        assert!(!b.report(Square::E2, None).is_empty());
        said(&mut b, &[dgt::RESET]);
        assert!(b.report(Square::E2, None).is_empty());
        said(&mut b, &[dgt::UPDATE_NICE]);
        assert!(!b.report(Square::E2, None).is_empty());
    }

    #[test]
    fn steps_end_on_the_position_after_the_move() {
        let games =
            crate::pgn::parse(include_str!("../../tests/data/games/selfplay-400.pgn")).unwrap();
        let mut rng = Rng::new(3);
        for g in games.iter().take(40) {
            let mut pos = g.start.clone();
            let mut board = pos.board().clone();
            for m in &g.moves {
                for proto in [Protocol::Dgt] {
                    for s in move_steps(&pos, *m, &mut rng, proto) {
                        match s.piece {
                            Some(p) => board.set_piece_at(s.square, p),
                            None => board.discard_piece_at(s.square),
                        }
                    }
                }
                pos.play_unchecked(*m);
                assert_eq!(&board, pos.board());
            }
        }
    }
}
