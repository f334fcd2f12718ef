//! Simulated serial boards: a pseudo-terminal that behaves like a board of one of the
//! [`PROTOCOLS`](crate::board::PROTOCOLS). The board side of each protocol (answers to the host,
//! reports) is in that protocol's module ([`Device`]); here are the terminal and the players. It
//! answers the host's commands, and once the host has connected plays a game the way people move
//! pieces (the choreography of [`gestures`](super::gestures)), with the board's own quirks (a
//! DGT board reports squares in scan order, so a moved piece may show on its new square before
//! its old one is empty). It can be told to glitch (garbage bytes, corrupted frames), to drop the
//! link and come back, to go silent for a while with its port open (a hung board), and (DGT) to
//! report one square over and over (a flickering sensor), and (DIY) to lose, hold back and swap
//! readings as the fault models say ([`Faults`], through the same [`Channel`] as the in-process
//! board). Its players only play to a host: when
//! the host closes the port or dies, they finish the move in hand and wait until a host has
//! opened the port again and sent its start-up commands.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serialport::{SerialPort, TTYPort};
use shakmaty::{Board, Chess, Move, Piece, Position, Role, Square};

use super::faults::{Channel, Due, Faults, Trace};
use super::gestures::{self, Hands, Manner};
use super::Rng;
use crate::board::{BoardProtocol, Device};
use crate::engine::Button;

#[derive(Clone, Debug)]
pub struct SimOptions {
    pub protocol: &'static BoardProtocol,
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
    /// The sensor under this square reports it every [`FLICKER_EVERY`] throughout (a board that
    /// [`flickers`](BoardProtocol::flickers)).
    pub flicker: Option<Square>,
    /// When the host closes the port (a daemon that crashed), the players make up to this many
    /// more moves before they wait for it (they cannot tell that nobody listens).
    pub play_on: u32,
    pub seed: u64,
    /// What goes wrong between the sensors and the host (DIY boards; see [`check_faults`]):
    /// `lost-next` and `lost-periodic` lose a report now and then (every report of a DIY board
    /// is its whole board, so the next one shows the loss: a change's or the once-a-second
    /// one, which in `lost-periodic` comes at a phase of its own), `late` holds a square's change
    /// back 0.2 to 2.5 s (real time, whatever the speed; every report meanwhile shows the square
    /// as it was), `swaps` sweeps captured pieces off quicker than the debounce time.
    pub faults: Faults,
    /// How often `lost-*` and `late` strike, in thousandths of the reports.
    pub fault_per_mille: u64,
    /// How long the players leave the final position on the board, the board still
    /// reporting, before the simulation ends ([`LINGER`] by default).
    pub linger: Duration,
}

/// How long the final position stands on the board, by default, before the simulation ends.
pub const LINGER: Duration = Duration::from_secs(2);

/// Whether a board of `protocol` can be given `faults` (`simulate --faults`): the fault models
/// of a DIY board (whose every report is its whole board); cables are pulled with
/// `--reconnects`.
pub fn check_faults(protocol: &BoardProtocol, faults: Faults) -> Result<(), String> {
    if faults == Faults::NONE {
        return Ok(());
    }
    if protocol.name != "diy" {
        return Err(format!(
            "fault models are simulated on DIY boards only (--protocol diy), not {}",
            protocol.name
        ));
    }
    if faults.pulls {
        return Err("pulls: pull the cable with --reconnects N".into());
    }
    Ok(())
}

/// How long after the move that precedes it a silence begins: time for the host to read that
/// move. The next move is made during the silence, and the players wait for the board after it.
pub const SILENCE_DELAY: Duration = Duration::from_secs(1);
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

/// One physical step: squares change to these pieces (or empty), after a pause.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    pause_ms: u64,
    changes: Vec<(Square, Option<Piece>)>,
    /// A promotion button, pressed after the changes (on a board that has them).
    button: Option<Role>,
}

/// The choreography written down as the steps of the board, with the pauses between them.
struct Steps<'a> {
    rng: &'a mut Rng,
    /// The pause before the next step.
    pause_ms: u64,
    /// The steps, with the move each belongs to.
    out: Vec<(usize, Step)>,
    /// The move being made.
    move_no: usize,
    /// The board has promotion buttons (a board that identifies pieces needs none).
    buttons: bool,
}

impl Steps<'_> {
    fn push(&mut self, changes: Vec<(Square, Option<Piece>)>, button: Option<Role>) {
        let pause_ms = std::mem::take(&mut self.pause_ms);
        self.out.push((
            self.move_no,
            Step {
                pause_ms,
                changes,
                button,
            },
        ));
    }
}

impl Hands for Steps<'_> {
    fn rng(&mut self) -> &mut Rng {
        self.rng
    }
    fn begin_move(&mut self) {
        // The opponent thinks before moving.
        self.pause_ms += self.rng.range(1000, 2500);
    }
    fn end_move(&mut self) {
        self.move_no += 1;
        self.pause_ms = 0;
    }
    fn step(&mut self, lo: u64, hi: u64) {
        self.pause_ms += self.rng.range(lo, hi);
    }
    fn gap(&mut self, lo: u64, hi: u64) {
        self.pause_ms += self.rng.range(lo, hi);
    }
    fn lift(&mut self, sq: Square, _: Piece) {
        self.push(vec![(sq, None)], None);
    }
    fn place(&mut self, sq: Square, piece: Piece) {
        self.push(vec![(sq, Some(piece))], None);
    }
    fn frame(&mut self, lifted: &[Square], placed: &[(Square, Piece)]) {
        let changes = lifted
            .iter()
            .map(|sq| (*sq, None))
            .chain(placed.iter().map(|(sq, p)| (*sq, Some(*p))))
            .collect();
        self.push(changes, None);
    }
    fn sweep(&mut self, sq: Square, piece: Piece) {
        self.push(vec![(sq, Some(piece))], None);
    }
    fn press(&mut self, b: Button) {
        match b {
            Button::Promote(role) if self.buttons => self.push(Vec::new(), Some(role)),
            _ => {}
        }
    }
    fn await_promotion(&mut self) {}
}

/// How the simulated players move on a board of `protocol`: captures in either order; a board
/// that scans square by square may see a moved piece on its new square before its old one is
/// empty; on a board with buttons, a queen is chosen by its button too.
fn manner(protocol: &BoardProtocol, faults: Faults) -> Manner {
    Manner {
        vary_captures: true,
        scan_order: protocol.scan_order,
        sweeps: faults.swaps,
        ..Manner::default()
    }
}

/// The steps of the game's moves as people make them, with the move each belongs to.
fn plan(opts: &SimOptions, rng: &mut Rng) -> Vec<(usize, Step)> {
    let mut steps = Steps {
        rng,
        pause_ms: 0,
        out: Vec::new(),
        move_no: 0,
        buttons: (opts.protocol.device)(false).button(Role::Queen).is_some(),
    };
    gestures::game(
        &mut steps,
        &opts.start,
        &opts.moves,
        &manner(opts.protocol, opts.faults),
    );
    steps.out
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
/// host looking for the port finds either the old terminal or the new one, never nothing); a
/// file at `path` that is not a symlink is left alone. Returns the board's end (reads time out
/// after 5 ms), the host's end and its name.
pub(super) fn pseudo_terminal(path: &Path) -> std::io::Result<(TTYPort, TTYPort, String)> {
    let (mut master, slave) = TTYPort::pair().map_err(std::io::Error::other)?;
    master
        .set_timeout(Duration::from_millis(5))
        .map_err(std::io::Error::other)?;
    let name = slave
        .name()
        .ok_or_else(|| std::io::Error::other("the pseudo-terminal has no name"))?;
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
    Ok((master, slave, name))
}

fn open_link(path: &Path) -> std::io::Result<Link> {
    let (master, slave, name) = pseudo_terminal(path)?;
    // The terminal stays configured (raw) for the host; the board end keeps only the master.
    drop(slave);
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
    /// What the fault layer did (`--faults`): the late readings, the lost reports, the
    /// periodic frames.
    pub faults: Trace,
}

struct SimBoard {
    /// The board as it is.
    board: Board,
    /// The board as its reports show it: `board`, but for the squares whose change is held
    /// back (`late`).
    shown: Board,
    /// The board side of its protocol.
    device: Box<dyn Device>,
}

impl SimBoard {
    fn new(protocol: &BoardProtocol, rotated: bool, board: Board) -> SimBoard {
        SimBoard {
            shown: board.clone(),
            board,
            device: (protocol.device)(rotated),
        }
    }

    fn connected(&self) -> bool {
        self.device.connected()
    }

    fn answer(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.device.answer(bytes, &self.shown, out);
    }

    /// The board's reports show `sq` as it is.
    fn show(&mut self, sq: Square) {
        match self.board.piece_at(sq) {
            Some(p) => self.shown.set_piece_at(sq, p),
            None => self.shown.discard_piece_at(sq),
        }
    }

    /// What the board sends when these squares changed.
    fn report(&self, changes: &[(Square, Option<Piece>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (sq, _) in changes {
            let bytes = self.device.report(&self.shown, *sq);
            // A board that reports its whole board sends it once.
            if !out.ends_with(&bytes) {
                out.extend(bytes);
            }
        }
        out
    }
}

fn garbage(rng: &mut Rng, device: &dyn Device) -> Vec<u8> {
    match rng.range(0, 2) {
        0 => (0..rng.range(1, 12))
            .map(|_| rng.next_u64() as u8)
            .collect(),
        n => {
            let [a, b] = device.broken_frames();
            if n == 1 {
                a
            } else {
                b
            }
        }
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
    // The fault layer, in ms of real time since the start (a sensor's delays are its own, not
    // the players' speed).
    let started = Instant::now();
    let ms = |t: Instant| t.duration_since(started).as_millis() as u64;
    let mut chan = (opts.faults != Faults::NONE)
        .then(|| Channel::new(opts.faults, opts.seed, 0, opts.fault_per_mille));
    // In `lost-periodic` the channel's frames are the board's once-a-second reports.
    let own_heartbeat = !opts.faults.lost_periodic;
    // Speed shortens the players' thinking; the hands still take their time, so that a board's
    // debounce and settle see each step (60 ms at least, 500 ms between moves).
    let scale = |ms: u64| Duration::from_secs_f64(ms as f64 / 1000.0 / opts.speed.max(0.01));
    let pause =
        |ms: u64, first: bool| scale(ms).max(Duration::from_millis(if first { 500 } else { 60 }));
    // The moves to play, as steps, worked out in advance.
    let plan = plan(opts, &mut rng);
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
            b.device.host_gone();
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
            let was = b.connected();
            b.answer(&buf[..seen.bytes], &mut out);
            if b.connected() && !was && report.host_losses > 0 {
                eprintln!(
                    "chessboardd simulate: a host is back after {} moves; the game goes on",
                    report.moves
                );
            }
        }
        if b.connected() && !quiet {
            if let Some(role) = held_button.take() {
                out.extend(b.device.button(role).unwrap_or_default());
            }
        }
        // A move is begun for a host that listens; during a silence one move is made (the
        // players cannot tell that the board has hung), then they wait for the board.
        let may_begin = match silence {
            Silence::Off | Silence::Over => {
                b.connected() || (report.host_losses > 0 && unheard < opts.play_on)
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
            for (sq, piece) in &s.changes {
                match piece {
                    Some(p) => b.board.set_piece_at(*sq, *p),
                    None => b.board.discard_piece_at(*sq),
                }
            }
            // What the fault layer makes of the changes: a report lost, or a square's change
            // held back (the board shows the square as it was until then).
            let (mut lost, mut held) = (false, false);
            if let Some(ch) = chan.as_mut() {
                let t = ms(now);
                for (sq, _) in &s.changes {
                    ch.changed(*sq);
                }
                if !s.changes.is_empty() && b.connected() && !quiet {
                    lost = ch.lose_any(t);
                    if let [(sq, piece)] = s.changes[..] {
                        let before = b.shown.piece_at(sq).is_some();
                        held = !lost && ch.delay(t, sq, piece.is_some(), before);
                    }
                }
            }
            if !held {
                for (sq, _) in &s.changes {
                    b.show(*sq);
                }
            }
            if b.connected() && !quiet {
                if !lost && !held {
                    out.extend(b.report(&s.changes));
                }
                if let Some(role) = s.button {
                    out.extend(b.device.button(role).unwrap_or_default());
                }
            } else {
                // Nobody listens: the report is lost, a button is pressed again later.
                held_button = held_button.or(s.button);
            }
            report.frames += u64::from(!s.changes.is_empty());
            next += 1;
            due = None;
            let move_done = plan.get(next).is_none_or(|(j, _)| *j != i);
            if move_done {
                report.moves = i + 1;
                if b.connected() {
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
                    b.device.host_gone();
                }
            }
        }
        // Noise on the line: now and then, after something was sent.
        if opts.glitch && b.connected() && !quiet && !out.is_empty() && rng.chance(25) {
            out.extend(garbage(&mut rng, b.device.as_ref()));
            report.glitches += 1;
        }
        // The late readings and periodic frames now due (heard only by a host).
        if let Some(ch) = chan.as_mut() {
            while let Some((_, due)) = ch.next_due(ms(now)) {
                let heard = b.connected() && !quiet;
                match due {
                    Due::Late(sq, _) => {
                        b.show(sq);
                        if heard {
                            out.extend(b.report(&[(sq, b.board.piece_at(sq))]));
                        }
                    }
                    Due::Frame if heard => {
                        if let Some((_, bytes)) = b.device.heartbeat(&b.shown) {
                            out.extend(bytes);
                        }
                    }
                    Due::Frame => {}
                }
            }
        }
        // What the board sends unasked: a heartbeat, a status on every scan.
        if b.connected() && !quiet && own_heartbeat {
            if let Some((every, bytes)) = b.device.heartbeat(&b.shown) {
                if now.duration_since(heartbeat) >= every {
                    heartbeat = now;
                    out.extend(bytes);
                }
            }
        }
        // A flickering sensor: its square reported again and again, unchanged.
        if let (Some(sq), true) = (opts.flicker, opts.protocol.flickers) {
            if b.connected() && !quiet && now.duration_since(flickered) >= FLICKER_EVERY {
                flickered = now;
                out.extend(b.device.report(&b.shown, sq));
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
        if next >= plan.len() && !opts.moves.is_empty() && (b.connected() || done_at.is_some()) {
            // Let the host read the end of the game, then stop.
            let end = *done_at.get_or_insert(now + opts.linger);
            if now >= end {
                break;
            }
        }
    }
    if std::fs::symlink_metadata(&opts.link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(&opts.link);
    }
    report.leds = b.device.leds();
    if let Some(ch) = chan {
        report.faults = ch.trace;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DIY board with late readings, read as a host reads it: until a held-back change comes,
    /// every line the board sends (its changes', its once-a-second ones) shows the square as it
    /// was; the change comes 0.2 to 2.5 s late.
    #[test]
    fn a_diy_board_holds_a_late_change_back_in_every_line() {
        use std::io::Read;
        let games =
            crate::pgn::parse(include_str!("../../tests/data/games/selfplay-400.pgn")).unwrap();
        let dir = std::env::temp_dir().join(format!("chessboardd-pty-late-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = SimOptions {
            protocol: &crate::board::PROTOCOLS[0],
            link: dir.join("board"),
            start: games[0].start.clone(),
            moves: games[0].moves[..8].to_vec(),
            speed: 20.0,
            glitch: false,
            rotated: false,
            reconnects: 0,
            silence: None,
            flicker: None,
            play_on: 0,
            seed: 3,
            faults: Faults::LATE,
            fault_per_mille: 300,
            linger: LINGER,
        };
        assert_eq!(opts.protocol.name, "diy");
        let t0 = Instant::now();
        let board = std::thread::spawn({
            let opts = opts.clone();
            move || run(&opts).unwrap()
        });
        while std::fs::symlink_metadata(&opts.link).is_err() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut host = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&opts.link)
            .unwrap();
        std::io::Write::write_all(&mut host, b"?").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (mut decoder, mut buf) = (crate::board::diy::Decoder::default(), [0u8; 256]);
            while let Ok(n) = host.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut msgs = Vec::new();
                decoder.feed(&buf[..n], &mut msgs);
                let ms = t0.elapsed().as_millis() as u64;
                for m in msgs {
                    if let crate::board::diy::Message::Occupancy(occ) = m {
                        let _ = tx.send((ms, occ));
                    }
                }
            }
        });
        let report = board.join().unwrap();
        let lines: Vec<(u64, u64)> = rx.try_iter().collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(report.moves, 8);
        let late: Vec<_> = report.faults.late.iter().filter(|l| l.delivered).collect();
        assert!(!late.is_empty(), "{:?}", report.faults);
        let mut checked = 0;
        for l in &late {
            assert!((200..=2500).contains(&(l.due - l.at)), "{l:?}");
            // (A margin for the board's and the host's polling.)
            let held = lines
                .iter()
                .filter(|(t, _)| l.at + 30 < *t && *t + 30 < l.due);
            for (t, occ) in held {
                assert_eq!(occ >> (l.sq as u32) & 1 == 1, l.before, "@{t}: {l:?}");
                checked += 1;
            }
            let came = lines.iter().find(|(t, _)| *t + 30 >= l.due);
            assert!(came.is_some(), "{l:?}: nothing after it");
        }
        assert!(
            checked > 0,
            "no line while a change was held back: {lines:?}"
        );
        // The board as the game ends, every change seen (unless one was still held back).
        let mut end = games[0].start.clone();
        for m in &opts.moves {
            end.play_unchecked(*m);
        }
        let last = *lines.last().unwrap();
        if report.faults.late.iter().all(|l| l.due + 30 < last.0) {
            assert_eq!(last.1, end.board().occupied().0);
        }
    }

    #[test]
    fn steps_end_on_the_position_after_the_move() {
        let games =
            crate::pgn::parse(include_str!("../../tests/data/games/selfplay-400.pgn")).unwrap();
        for proto in crate::board::PROTOCOLS {
            for (seed, g) in games.iter().take(40).enumerate() {
                let opts = SimOptions {
                    protocol: proto,
                    link: PathBuf::new(),
                    start: g.start.clone(),
                    moves: g.moves.clone(),
                    speed: 1.0,
                    glitch: false,
                    rotated: false,
                    reconnects: 0,
                    silence: None,
                    flicker: None,
                    play_on: 0,
                    seed: seed as u64,
                    faults: Faults::NONE,
                    fault_per_mille: 0,
                    linger: LINGER,
                };
                let steps = plan(&opts, &mut Rng::new(seed as u64));
                let mut pos = g.start.clone();
                let mut board = pos.board().clone();
                for (i, m) in g.moves.iter().enumerate() {
                    for (_, s) in steps.iter().filter(|(j, _)| *j == i) {
                        for (sq, piece) in &s.changes {
                            match piece {
                                Some(p) => board.set_piece_at(*sq, *p),
                                None => board.discard_piece_at(*sq),
                            }
                        }
                    }
                    pos.play_unchecked(*m);
                    assert_eq!(&board, pos.board(), "{}", proto.name);
                }
            }
        }
    }
}
