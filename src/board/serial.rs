//! A serial board's link: open the port (by path or udev symlink), read, decode, and when the
//! device goes away, say so and keep trying until it is back. A board that is off at start-up is
//! waited for. A board whose port stays open but which sends nothing for [`SILENT`] (it hung, or
//! it is not the board the protocol speaks to) is said not to answer; its port is closed and
//! opened again, with the start-up commands, until it answers. Every protocol asks its board for
//! something after [`POLL`] without a word from it, so a healthy idle board is never silent.
//! Runs on its own thread; the protocol is a [`Protocol`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{DriverMsg, DriverTx, LinkStats, Timebase};
use crate::engine::{LinkState, PortError};

/// How often a missing port is looked for (the board is back within this of its return).
pub const RETRY: Duration = Duration::from_millis(300);
/// A board that has sent no whole message for this long does not answer.
pub const SILENT: Duration = Duration::from_secs(3);
/// A board that has sent nothing and been asked nothing for this long is asked for something it
/// always answers (the protocols' keep-alive).
pub const POLL: Duration = Duration::from_secs(1);

/// Whether a protocol's keep-alive request is due: nothing heard from the board since `heard`
/// and nothing asked of it since `asked`, for [`POLL`].
pub fn poll_due(now: Instant, heard: Option<Instant>, asked: Instant) -> bool {
    let last = heard.map_or(asked, |h| h.max(asked));
    now.saturating_duration_since(last) >= POLL
}

/// What is to be done about a board's silence.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It answers (or has not been silent for long).
    Fine,
    /// It has just fallen silent: say so, and open its port again.
    Silent,
    /// Still silent after its port was opened again: open it once more, without a word.
    StillSilent,
    /// It answers again after a silence: say so, and tell it the start-up commands again.
    Back,
}

/// Watches whether a board answers. Pure: the driver gives it the time.
#[derive(Clone, Debug)]
pub struct Watch {
    /// When the port was opened, or the start-up commands last sent.
    opened: Instant,
    silent: bool,
}

impl Watch {
    pub fn new(now: Instant) -> Watch {
        Watch {
            opened: now,
            silent: false,
        }
    }

    /// The port was opened (or the start-up commands sent again) at `now`: the board has
    /// [`SILENT`] from then to answer.
    pub fn opened(&mut self, now: Instant) {
        self.opened = now;
    }

    /// Said not to answer, and not heard since.
    pub fn silent(&self) -> bool {
        self.silent
    }

    /// `heard`: when the board last sent a whole message since the port was opened (the
    /// protocol's [`Protocol::last_heard`]).
    pub fn check(&mut self, now: Instant, heard: Option<Instant>) -> Verdict {
        if self.silent && heard.is_some() {
            self.silent = false;
            return Verdict::Back;
        }
        let last = heard.map_or(self.opened, |h| h.max(self.opened));
        if now.saturating_duration_since(last) < SILENT {
            Verdict::Fine
        } else if std::mem::replace(&mut self.silent, true) {
            Verdict::StillSilent
        } else {
            Verdict::Silent
        }
    }
}

/// One serial protocol, host side.
pub trait Protocol: Send {
    fn name(&self) -> &'static str;
    fn baud(&self) -> u32;
    /// Start-up commands after the port opens (also after every reconnection, and when a board
    /// answers again after a silence).
    fn on_open(&mut self, now: Instant, port: &mut dyn Write) -> std::io::Result<()>;
    /// Bytes from the board; messages for the daemon go to `out`.
    fn on_bytes(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<DriverMsg>,
        port: &mut dyn Write,
    ) -> std::io::Result<()>;
    /// Called every few milliseconds: settle timers, keep-alive polls (see [`poll_due`]).
    fn on_tick(
        &mut self,
        now: Instant,
        out: &mut Vec<DriverMsg>,
        port: &mut dyn Write,
    ) -> std::io::Result<()>;
    /// Frames dropped for bad checksums or framing.
    fn dropped(&self) -> u64;
    /// When the board last sent a whole, well-formed message since `on_open` (noise does not
    /// count); `None` when it has sent none.
    fn last_heard(&self) -> Option<Instant>;
    /// Shows something on the board's own lights, where it has them.
    fn show(&mut self, _what: &Show, _port: &mut dyn Write) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the daemon asks a board with lights to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Show {
    /// The last move: its squares.
    Move(Vec<shakmaty::Square>),
    /// Squares to put right.
    Fix(Vec<shakmaty::Square>),
    Nothing,
    /// The positions the game can explain, as piece codes by square (not shown: a board that
    /// identifies pieces learns from them which way round its squares come).
    Positions(Vec<[u8; 64]>),
}

fn open(path: &Path, baud: u32) -> Result<Box<dyn serialport::SerialPort>, serialport::Error> {
    serialport::new(path.to_string_lossy(), baud)
        .timeout(Duration::from_millis(10))
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .open()
}

/// Why a port did not open: `None` when it is not there (a board unplugged or off), else what
/// is wrong with it.
pub fn port_error(path: &Path, e: &serialport::Error) -> Option<PortError> {
    use std::os::unix::fs::FileTypeExt;
    match e.kind() {
        serialport::ErrorKind::Io(std::io::ErrorKind::NotFound) => None,
        serialport::ErrorKind::Io(std::io::ErrorKind::PermissionDenied) => {
            Some(PortError::NoPermission)
        }
        // ENOTTY, as the C library words it.
        _ if e.description.contains("Inappropriate ioctl")
            || e.description.contains("Not a typewriter") =>
        {
            Some(PortError::NotATty)
        }
        _ => match std::fs::metadata(path) {
            Err(m) if m.kind() == std::io::ErrorKind::NotFound => None,
            Ok(m) if !m.file_type().is_char_device() => Some(PortError::NotATty),
            _ => Some(PortError::Other),
        },
    }
}

/// What to do about a port error, in words for the log.
fn port_advice(problem: Option<PortError>) -> &'static str {
    match problem {
        None => "waiting for it (is the board plugged in and switched on?)",
        Some(PortError::NoPermission) => {
            "no permission: add the user to the dialout group (sudo usermod -aG dialout USER, \
             then log in again; the service's user is in it)"
        }
        Some(PortError::NotATty) => "not a serial port: check the path (board.port, --board)",
        Some(PortError::Other) => "trying again",
    }
}

/// How a session with the port open ended.
enum End {
    Stop,
    /// The port failed (the cable pulled, the device gone).
    Lost,
    /// The board did not answer: the port is to be opened again.
    Silent,
}

/// Runs a serial board until `stop` is set. Returns the link's counters.
pub fn run(
    path: PathBuf,
    mut proto: Box<dyn Protocol>,
    shows: std::sync::mpsc::Receiver<Show>,
    clock: Timebase,
    tx: DriverTx,
    stop: Arc<AtomicBool>,
) -> LinkStats {
    let mut stats = LinkStats::default();
    let mut ever = false;
    let mut said_waiting = false;
    // What was wrong when the port last failed to open (`Some(None)`: it was not there).
    let mut last_error: Option<Option<PortError>> = None;
    let mut watch = Watch::new(Instant::now());
    let send = |m: DriverMsg| tx.send((clock.now(), m)).is_ok();
    while !stop.load(Ordering::Relaxed) {
        let mut port = match open(&path, proto.baud()) {
            Ok(p) => p,
            Err(e) => {
                // Said (and logged) once for each change of what is wrong, not at every retry.
                let problem = port_error(&path, &e);
                if last_error != Some(problem) {
                    last_error = Some(problem);
                    tracing::warn!(
                        "{} board at {}: cannot open the port: {e}; {}",
                        proto.name(),
                        path.display(),
                        port_advice(problem)
                    );
                    let said = match problem {
                        None if !ever && !said_waiting => {
                            said_waiting = true;
                            send(DriverMsg::Link(LinkState::Waiting))
                        }
                        None => true,
                        Some(p) => send(DriverMsg::Link(LinkState::Unusable(p))),
                    };
                    if !said {
                        break;
                    }
                }
                std::thread::sleep(RETRY);
                continue;
            }
        };
        last_error = None;
        // A board said not to answer is back when it answers, not when its port opens.
        if !watch.silent() {
            let state = if ever {
                LinkState::Reconnected
            } else {
                LinkState::Connected
            };
            if ever {
                stats.reconnects += 1;
            }
            if !send(DriverMsg::Link(state)) {
                break;
            }
        }
        ever = true;
        let opened = Instant::now();
        watch.opened(opened);
        if proto.on_open(opened, &mut port).is_err() {
            if (!watch.silent() && !send(DriverMsg::Link(LinkState::Lost)))
                || stop.load(Ordering::Relaxed)
            {
                break;
            }
            std::thread::sleep(RETRY);
            continue;
        }
        let mut buf = [0u8; 512];
        let mut out = Vec::new();
        let end = loop {
            if stop.load(Ordering::Relaxed) {
                break End::Stop;
            }
            let now = Instant::now();
            match port.read(&mut buf) {
                Ok(0) => break End::Lost,
                Ok(n) => {
                    if proto.on_bytes(&buf[..n], now, &mut out, &mut port).is_err() {
                        break End::Lost;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break End::Lost,
            }
            if proto.on_tick(Instant::now(), &mut out, &mut port).is_err() {
                break End::Lost;
            }
            while let Ok(what) = shows.try_recv() {
                if proto.show(&what, &mut port).is_err() {
                    break;
                }
            }
            let now = Instant::now();
            let verdict = watch.check(now, proto.last_heard());
            if verdict == Verdict::Back {
                // Said before what it sent: the engine then knows that moves may have been
                // made meanwhile.
                stats.reconnects += 1;
                tracing::info!(
                    "{} board at {}: answering again",
                    proto.name(),
                    path.display()
                );
                if !send(DriverMsg::Link(LinkState::Reconnected)) {
                    return stats;
                }
            }
            for m in out.drain(..) {
                if let DriverMsg::Reading(_) = m {
                    stats.frames += 1;
                }
                if !send(m) {
                    return stats;
                }
            }
            match verdict {
                Verdict::Fine => {}
                Verdict::Back => {
                    // It may have missed the start-up commands while it did not listen.
                    watch.opened(now);
                    if proto.on_open(now, &mut port).is_err() {
                        break End::Lost;
                    }
                }
                Verdict::Silent => {
                    stats.silences += 1;
                    tracing::warn!(
                        "{} board at {}: nothing heard for {} s; opening the port again until it answers",
                        proto.name(),
                        path.display(),
                        SILENT.as_secs()
                    );
                    if !send(DriverMsg::Link(LinkState::Silent)) {
                        return stats;
                    }
                    break End::Silent;
                }
                Verdict::StillSilent => break End::Silent,
            }
        };
        stats.dropped = proto.dropped();
        match end {
            End::Stop => break,
            End::Lost => {
                if !watch.silent() && !send(DriverMsg::Link(LinkState::Lost)) {
                    break;
                }
            }
            End::Silent => {}
        }
        drop(port);
        std::thread::sleep(RETRY);
    }
    stats.dropped = proto.dropped();
    // The link's record, for the log: a board that drops many frames needs a better cable.
    tracing::info!(
        "{} board at {}: {} frames read, {} dropped (bad checksum or framing), {} reconnections, {} times silent",
        proto.name(),
        path.display(),
        stats.frames,
        stats.dropped,
        stats.reconnects,
        stats.silences
    );
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_errors_are_told_apart() {
        let io = |k| serialport::Error::new(serialport::ErrorKind::Io(k), "x");
        let p = Path::new("/dev/ttyUSB0");
        assert_eq!(port_error(p, &io(std::io::ErrorKind::NotFound)), None);
        assert_eq!(
            port_error(p, &io(std::io::ErrorKind::PermissionDenied)),
            Some(PortError::NoPermission)
        );
        let enotty = serialport::Error::new(serialport::ErrorKind::Unknown, "Not a typewriter");
        assert_eq!(
            port_error(Path::new("/dev/null"), &enotty),
            Some(PortError::NotATty)
        );
        let other = serialport::Error::new(serialport::ErrorKind::Unknown, "Is a directory");
        assert_eq!(port_error(Path::new("/"), &other), Some(PortError::NotATty));
        assert!(port_advice(Some(PortError::NoPermission)).contains("dialout group"));
    }

    #[test]
    fn a_board_is_silent_after_three_seconds_without_a_word_and_back_when_it_answers() {
        let t0 = Instant::now();
        let s = |ms: u64| t0 + Duration::from_millis(ms);
        let mut w = Watch::new(t0);
        // Just opened: it has 3 s to say something.
        assert_eq!(w.check(s(2_999), None), Verdict::Fine);
        assert_eq!(w.check(s(1_000), Some(s(900))), Verdict::Fine);
        // Heard at 1 s: fine until 4 s.
        assert_eq!(w.check(s(3_999), Some(s(1_000))), Verdict::Fine);
        assert_eq!(w.check(s(4_000), Some(s(1_000))), Verdict::Silent);
        assert!(w.silent());
        // Opened again, and still nothing: once more, without a word.
        w.opened(s(4_300));
        assert_eq!(w.check(s(7_000), None), Verdict::Fine);
        assert_eq!(w.check(s(7_300), None), Verdict::StillSilent);
        w.opened(s(7_600));
        // A word: back.
        assert_eq!(w.check(s(8_000), Some(s(7_900))), Verdict::Back);
        assert!(!w.silent());
        w.opened(s(8_000));
        assert_eq!(w.check(s(10_999), None), Verdict::Fine);
        assert_eq!(w.check(s(11_000), None), Verdict::Silent);
        // A clock that is not monotonic between threads never panics.
        let mut w = Watch::new(s(5_000));
        assert_eq!(w.check(s(1_000), Some(s(6_000))), Verdict::Fine);
    }

    #[test]
    fn keep_alive_polls_wait_for_a_second_of_quiet() {
        let t0 = Instant::now();
        let s = |ms: u64| t0 + Duration::from_millis(ms);
        assert!(!poll_due(s(999), None, t0));
        assert!(poll_due(s(1_000), None, t0));
        // Heard from, or asked, since: not yet.
        assert!(!poll_due(s(1_500), Some(s(600)), t0));
        assert!(!poll_due(s(1_500), None, s(600)));
        assert!(poll_due(s(1_600), Some(s(600)), t0));
        assert!(!poll_due(t0, Some(s(600)), s(700)));
    }
}
