//! A USB numeric keypad or keyboard through Linux evdev (`/dev/input/event*`).
//!
//! The device is read directly: each read gives whole `struct input_event` records (time, type,
//! code, value). Key downs and ups go through [`Presses`] (short and long presses) and come out
//! as command lines. The device is grabbed (EVIOCGRAB), so that the keys do not also type on a
//! console. A keypad pulled out is looked for again every second; with `auto`, any keyboard that
//! appears under `/dev/input/by-id` is taken.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::keys::{KeyEvent, KeyMap, Presses};
use crate::engine::Millis;

/// `EV_KEY` of linux/input-event-codes.h.
pub const EV_KEY: u16 = 1;
/// `EVIOCGRAB`: `_IOW('E', 0x90, int)`.
const EVIOCGRAB: u64 = 0x4004_4590;

/// The size of one `struct input_event` on this machine (24 bytes on 64-bit, 16 on 32-bit).
pub const EVENT_SIZE: usize = std::mem::size_of::<libc::input_event>();
const TIME_SIZE: usize = EVENT_SIZE - 8;

/// One `struct input_event` as the kernel writes it (time zero): for tests and simulators.
pub fn encode(kind: u16, code: u16, value: i32) -> Vec<u8> {
    let mut v = vec![0u8; TIME_SIZE];
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(&code.to_ne_bytes());
    v.extend_from_slice(&value.to_ne_bytes());
    v
}

/// The key event of one record, if it is one (autorepeat, value 2, is not a new press).
pub fn decode(record: &[u8]) -> Option<KeyEvent> {
    let field = |at: usize, n: usize| record.get(TIME_SIZE + at..TIME_SIZE + at + n);
    let kind = u16::from_ne_bytes(field(0, 2)?.try_into().ok()?);
    let code = u16::from_ne_bytes(field(2, 2)?.try_into().ok()?);
    let value = i32::from_ne_bytes(field(4, 4)?.try_into().ok()?);
    match (kind, value) {
        (EV_KEY, 1) => Some(KeyEvent::Down(code)),
        (EV_KEY, 0) => Some(KeyEvent::Up(code)),
        _ => None,
    }
}

/// Where the keypad is: a device path, or `auto`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeypadConfig {
    pub device: String,
    pub map: KeyMap,
    pub long_ms: Millis,
    /// The player the keypad belongs to (its commands are his); `None`: shared.
    pub player: Option<shakmaty::Color>,
}

/// The keyboards the kernel lists by id (`/dev/input/by-id/*-event-kbd`), sorted.
pub fn keyboards() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/dev/input/by-id")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-event-kbd"))
        })
        .collect();
    found.sort();
    found
}

fn device_path(device: &str) -> Option<PathBuf> {
    if device == "auto" {
        keyboards().into_iter().next()
    } else {
        Some(PathBuf::from(device))
    }
}

/// Reads the keypad until `stop`, sending each command line to `send` (which returns false when
/// nobody listens any more). `log` gets what an administrator should know.
pub fn run(
    cfg: KeypadConfig,
    send: impl Fn(String) -> bool,
    log: impl Fn(String),
    stop: Arc<AtomicBool>,
) {
    let start = Instant::now();
    let now = || start.elapsed().as_millis() as Millis;
    let mut presses = Presses::new(cfg.map.clone(), cfg.long_ms);
    let mut reported_missing = false;
    while !stop.load(Ordering::Relaxed) {
        let Some(path) = device_path(&cfg.device) else {
            if !reported_missing {
                log("keypad: no keyboard in /dev/input/by-id yet; waiting for one".into());
                reported_missing = true;
            }
            pause(&stop, Duration::from_secs(1));
            continue;
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path);
        let mut file = match file {
            Ok(f) => f,
            Err(e) => {
                if !reported_missing {
                    log(format!("keypad {}: {e}; trying again", path.display()));
                    reported_missing = true;
                }
                pause(&stop, Duration::from_secs(1));
                continue;
            }
        };
        // Keys go to chessboardd only, not to a console or a desktop as typing (best effort:
        // a FIFO standing in for a keypad cannot be grabbed).
        // SAFETY: the descriptor is open for the whole call; the argument is an int by value.
        unsafe {
            libc::ioctl(file.as_raw_fd(), EVIOCGRAB as _, 1 as libc::c_int);
        }
        log(format!("keypad {}: reading keys", path.display()));
        reported_missing = false;
        let why = read_keys(&mut file, &path, &mut presses, &now, &send, &stop);
        presses.release_all();
        if let Some(why) = why {
            log(why);
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        pause(&stop, Duration::from_secs(1));
    }
}

fn pause(stop: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads one opened device until it goes away; returns why, for the log.
fn read_keys(
    file: &mut std::fs::File,
    path: &Path,
    presses: &mut Presses,
    now: &impl Fn() -> Millis,
    send: &impl Fn(String) -> bool,
    stop: &AtomicBool,
) -> Option<String> {
    let mut buf = vec![0u8; EVENT_SIZE * 64];
    let mut have = 0;
    let give = |cmds: Vec<String>| cmds.into_iter().all(send);
    while !stop.load(Ordering::Relaxed) {
        // Wake for a long press that falls due, and at least every 200 ms to see `stop`.
        let wait = presses
            .due()
            .map_or(200, |d| d.saturating_sub(now()).min(200));
        let mut pfd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, wait as libc::c_int) };
        if !give(presses.advance(now())) {
            return None;
        }
        if ready <= 0 {
            continue;
        }
        match file.read(&mut buf[have..]) {
            Ok(0) => return Some(format!("keypad {}: gone; looking for it", path.display())),
            Ok(n) => {
                have += n;
                let whole = have - have % EVENT_SIZE;
                for record in buf[..whole].chunks_exact(EVENT_SIZE) {
                    if let Some(e) = decode(record) {
                        if !give(presses.event(now(), e)) {
                            return None;
                        }
                    }
                }
                buf.copy_within(whole..have, 0);
                have -= whole;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Some(format!("keypad {}: {e}; looking for it", path.display())),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        assert_eq!(EVENT_SIZE, TIME_SIZE + 8);
        assert_eq!(decode(&encode(EV_KEY, 82, 1)), Some(KeyEvent::Down(82)));
        assert_eq!(decode(&encode(EV_KEY, 82, 0)), Some(KeyEvent::Up(82)));
        // Autorepeat, a sync report and a scan-code report are not key presses.
        assert_eq!(decode(&encode(EV_KEY, 82, 2)), None);
        assert_eq!(decode(&encode(0, 0, 0)), None);
        assert_eq!(decode(&encode(4, 4, 458_834)), None);
        assert_eq!(decode(&[1, 2, 3]), None);
    }
}
