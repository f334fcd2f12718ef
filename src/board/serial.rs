//! A serial board's link: open the port (by path or udev symlink), read, decode, and when the
//! device goes away, say so and keep trying until it is back. A board that is off at start-up is
//! waited for. Runs on its own thread; the protocol is a [`Protocol`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{DriverMsg, DriverTx, LinkStats};
use crate::daemon::DaemonClock;
use crate::engine::LinkState;

/// How often a missing port is looked for (the board is back within this of its return).
pub const RETRY: Duration = Duration::from_millis(300);

/// One serial protocol, host side.
pub trait Protocol: Send {
    fn name(&self) -> &'static str;
    fn baud(&self) -> u32;
    /// Start-up commands after the port opens (also after every reconnection).
    fn on_open(&mut self, port: &mut dyn Write) -> std::io::Result<()>;
    /// Bytes from the board; messages for the daemon go to `out`.
    fn on_bytes(
        &mut self,
        bytes: &[u8],
        now: Instant,
        out: &mut Vec<DriverMsg>,
        port: &mut dyn Write,
    ) -> std::io::Result<()>;
    /// Called every few milliseconds: settle timers, keep-alive polls.
    fn on_tick(
        &mut self,
        now: Instant,
        out: &mut Vec<DriverMsg>,
        port: &mut dyn Write,
    ) -> std::io::Result<()>;
    /// Frames dropped for bad checksums or framing.
    fn dropped(&self) -> u64;
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

/// Runs a serial board until `stop` is set. Returns the link's counters.
pub fn run(
    path: PathBuf,
    mut proto: Box<dyn Protocol>,
    shows: std::sync::mpsc::Receiver<Show>,
    clock: DaemonClock,
    tx: DriverTx,
    stop: Arc<AtomicBool>,
) -> LinkStats {
    let mut stats = LinkStats::default();
    let mut ever = false;
    let mut said_waiting = false;
    let send = |m: DriverMsg| tx.send((clock.now(), m)).is_ok();
    while !stop.load(Ordering::Relaxed) {
        let mut port = match open(&path, proto.baud()) {
            Ok(p) => p,
            Err(_) => {
                if !ever && !said_waiting {
                    said_waiting = true;
                    if !send(DriverMsg::Link(LinkState::Waiting)) {
                        break;
                    }
                }
                std::thread::sleep(RETRY);
                continue;
            }
        };
        let state = if ever {
            LinkState::Reconnected
        } else {
            LinkState::Connected
        };
        if ever {
            stats.reconnects += 1;
        }
        ever = true;
        if !send(DriverMsg::Link(state)) {
            break;
        }
        if proto.on_open(&mut port).is_err() {
            if !send(DriverMsg::Link(LinkState::Lost)) || stop.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(RETRY);
            continue;
        }
        let mut buf = [0u8; 512];
        let mut out = Vec::new();
        let lost = loop {
            if stop.load(Ordering::Relaxed) {
                break false;
            }
            let now = Instant::now();
            match port.read(&mut buf) {
                Ok(0) => break true,
                Ok(n) => {
                    if proto.on_bytes(&buf[..n], now, &mut out, &mut port).is_err() {
                        break true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break true,
            }
            if proto.on_tick(Instant::now(), &mut out, &mut port).is_err() {
                break true;
            }
            while let Ok(what) = shows.try_recv() {
                if proto.show(&what, &mut port).is_err() {
                    break;
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
        };
        stats.dropped = proto.dropped();
        if !lost {
            break;
        }
        if !send(DriverMsg::Link(LinkState::Lost)) {
            break;
        }
        drop(port);
        std::thread::sleep(RETRY);
    }
    stats.dropped = proto.dropped();
    // The link's record, for the log: a board that drops many frames needs a better cable.
    tracing::info!(
        "{} board at {}: {} frames read, {} dropped (bad checksum or framing), {} reconnections",
        proto.name(),
        path.display(),
        stats.frames,
        stats.dropped,
        stats.reconnects
    );
    stats
}
