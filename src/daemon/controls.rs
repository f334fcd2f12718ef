//! The daemon's controls besides the socket: a keypad and GPIO buttons, each read on a thread
//! of its own, sending command lines.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::board::gpio;
use crate::control::buttons::{self, CdevButtons};
use crate::control::keypad;
use crate::control::settings::ControlConfig;

/// A command line from the control socket, a keypad or a button, and where its answer goes
/// (keys and buttons want none: the answer is spoken).
pub type ControlRequest = crate::control::socket::Request;

/// Starts the threads that read a keypad and GPIO buttons; they send command lines on `tx`
/// until `stop` is set.
pub fn spawn_controls(
    controls: &ControlConfig,
    gpio_chip: &str,
    tx: &mpsc::UnboundedSender<ControlRequest>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let log = |m: String| tracing::warn!("{m}");
    if let Some(kc) = controls.keypad_config() {
        let (tx, stop) = (tx.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let by = kc.player;
            let send = |line| {
                tx.send(ControlRequest {
                    line,
                    reply: None,
                    by,
                })
                .is_ok()
            };
            keypad::run(kc, send, log, stop)
        }));
    }
    if !controls.buttons.is_empty() {
        let mut chip = gpio_chip.to_string();
        let offsets: Result<Vec<u32>, buttons::Error> = controls
            .buttons
            .iter()
            .map(|b| {
                let (found, n) = gpio::line_offset(&b.line)?;
                if let Some(c) = found {
                    chip = c;
                }
                Ok(n)
            })
            .collect();
        match offsets.and_then(|o| CdevButtons::open(&chip, o)) {
            Ok(lines) => {
                let (tx, stop) = (tx.clone(), stop.clone());
                let (buttons, long, debounce) = (
                    controls.buttons.clone(),
                    controls.long_press_ms,
                    controls.debounce_ms,
                );
                threads.push(std::thread::spawn(move || {
                    buttons::run(
                        Box::new(lines),
                        &buttons,
                        long,
                        debounce,
                        |line| {
                            let request = ControlRequest {
                                line,
                                reply: None,
                                by: None,
                            };
                            tx.send(request).is_ok()
                        },
                        log,
                        stop,
                    )
                }));
            }
            Err(e) => log(format!("buttons: {e}; going on without them")),
        }
    }
    threads
}

/// Serves the control socket at `path`; one that cannot be served is logged, and the daemon
/// goes on without it. The socket file goes when what this returns is dropped.
pub fn serve_socket(
    path: &std::path::Path,
    tx: mpsc::UnboundedSender<ControlRequest>,
) -> Option<(
    tokio::task::JoinHandle<()>,
    crate::control::socket::SocketFile,
)> {
    match crate::control::socket::serve(path, tx) {
        Ok(served) => Some(served),
        Err(e) => {
            tracing::error!("control socket {}: {e}", path.display());
            None
        }
    }
}
