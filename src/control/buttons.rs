//! Push buttons on GPIO lines: each button pulls its line low when pressed (internal pull-up),
//! is debounced, and gives a command for a short press and another for a long one.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::keys::{Binding, KeyEvent, KeyMap, Presses};
use crate::board::gpio;
use crate::engine::Millis;

/// One button: its line (number or name) and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ButtonConfig {
    pub line: String,
    pub binding: Binding,
}

/// What can go wrong with the buttons' lines.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A button's line cannot be found.
    #[error("{0}")]
    Line(#[from] gpio::Error),
    /// The buttons' lines cannot be requested.
    #[error("{chip}: buttons: {source}")]
    Request {
        chip: String,
        source: gpiocdev::Error,
    },
    /// A button's line cannot be read.
    #[error("{source}")]
    Read { line: u32, source: gpiocdev::Error },
}

/// Reads which buttons are pressed: bit i for button i.
pub trait ButtonLines: Send {
    fn pressed(&mut self) -> Result<u64, Error>;
}

/// Simulated buttons: tests set the bits.
pub struct SimButtons(pub Arc<AtomicU64>);

impl ButtonLines for SimButtons {
    fn pressed(&mut self) -> Result<u64, Error> {
        Ok(self.0.load(Ordering::Relaxed))
    }
}

/// Buttons on one gpiochip, inputs with pull-ups: a pressed button reads low.
pub struct CdevButtons {
    request: gpiocdev::Request,
    offsets: Vec<u32>,
}

impl CdevButtons {
    pub fn open(chip: &str, offsets: Vec<u32>) -> Result<CdevButtons, Error> {
        let request = gpiocdev::Request::builder()
            .on_chip(chip)
            .with_consumer("chessboardd-buttons")
            .with_lines(&offsets)
            .as_input()
            .with_bias(gpiocdev::line::Bias::PullUp)
            .request()
            .map_err(|source| Error::Request {
                chip: chip.to_string(),
                source,
            })?;
        Ok(CdevButtons { request, offsets })
    }
}

impl ButtonLines for CdevButtons {
    fn pressed(&mut self) -> Result<u64, Error> {
        let mut bits = 0;
        for (i, line) in self.offsets.iter().enumerate() {
            let v = self.request.value(*line).map_err(|source| Error::Read {
                line: *line,
                source,
            })?;
            if v == gpiocdev::line::Value::Inactive {
                bits |= 1 << i;
            }
        }
        Ok(bits)
    }
}

/// Per-button debouncing: a new state counts when it has held for `debounce_ms`.
#[derive(Clone, Debug)]
pub struct Debounced {
    debounce_ms: Millis,
    stable: u64,
    raw: u64,
    since: [Millis; 64],
}

impl Debounced {
    pub fn new(debounce_ms: Millis) -> Debounced {
        Debounced {
            debounce_ms,
            stable: 0,
            raw: 0,
            since: [0; 64],
        }
    }

    /// A reading at `t`; returns the buttons whose debounced state changed (pressed or not).
    pub fn reading(&mut self, t: Millis, bits: u64, n: usize) -> Vec<KeyEvent> {
        let mut out = Vec::new();
        for i in 0..n.min(64) {
            let bit = 1u64 << i;
            if (bits ^ self.raw) & bit != 0 {
                self.since[i] = t;
            }
            let held = t.saturating_sub(self.since[i]) >= self.debounce_ms;
            if held && (bits ^ self.stable) & bit != 0 {
                self.stable ^= bit;
                out.push(if bits & bit != 0 {
                    KeyEvent::Down(i as u16)
                } else {
                    KeyEvent::Up(i as u16)
                });
            }
        }
        self.raw = bits;
        out
    }
}

/// The buttons' bindings as a key map, button i as key i.
pub fn key_map(buttons: &[ButtonConfig]) -> KeyMap {
    KeyMap(
        buttons
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u16, b.binding.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// Polls the buttons at 100 Hz until `stop`, sending each command line to `send`.
pub fn run(
    mut lines: Box<dyn ButtonLines>,
    buttons: &[ButtonConfig],
    long_ms: Millis,
    debounce_ms: Millis,
    send: impl Fn(String) -> bool,
    log: impl Fn(String),
    stop: Arc<AtomicBool>,
) {
    let start = Instant::now();
    let mut presses = Presses::new(key_map(buttons), long_ms);
    let mut debounced = Debounced::new(debounce_ms);
    let mut failing = false;
    while !stop.load(Ordering::Relaxed) {
        let t = start.elapsed().as_millis() as Millis;
        let mut cmds = presses.advance(t);
        match lines.pressed() {
            Ok(bits) => {
                failing = false;
                for e in debounced.reading(t, bits, buttons.len()) {
                    cmds.extend(presses.event(t, e));
                }
            }
            Err(e) if !failing => {
                failing = true;
                log(format!("buttons: {e}"));
            }
            Err(_) => {}
        }
        if !cmds.into_iter().all(&send) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn bounces_are_not_presses() {
        let mut d = Debounced::new(30);
        assert!(d.reading(0, 0b01, 2).is_empty());
        assert!(d.reading(10, 0b00, 2).is_empty());
        assert!(d.reading(20, 0b01, 2).is_empty());
        assert!(d.reading(40, 0b01, 2).is_empty());
        assert_eq!(d.reading(50, 0b01, 2), [KeyEvent::Down(0)]);
        assert!(d.reading(60, 0b01, 2).is_empty());
        assert!(d.reading(70, 0b00, 2).is_empty());
        assert_eq!(d.reading(100, 0b00, 2), [KeyEvent::Up(0)]);
    }

    #[test]
    fn simulated_buttons_give_short_and_long_commands() {
        let bits = Arc::new(AtomicU64::new(0));
        let buttons = vec![
            ButtonConfig {
                line: "17".into(),
                binding: Binding {
                    short: Some("clock".into()),
                    long: Some("toggle-pause".into()),
                },
            },
            ButtonConfig {
                line: "27".into(),
                binding: Binding {
                    short: Some("last".into()),
                    long: None,
                },
            },
        ];
        let sent = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (bits, sent, stop) = (bits.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || {
                run(
                    Box::new(SimButtons(bits)),
                    &buttons,
                    400,
                    30,
                    |c| {
                        sent.lock().unwrap().push(c);
                        true
                    },
                    |_| {},
                    stop,
                )
            })
        };
        let hold = |mask: u64, ms: u64| {
            bits.store(mask, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(ms));
            bits.store(0, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(150));
        };
        hold(0b01, 120); // short
        hold(0b01, 900); // long
        hold(0b10, 120);
        stop.store(true, Ordering::Relaxed);
        thread.join().unwrap();
        assert_eq!(*sent.lock().unwrap(), ["clock", "toggle-pause", "last"]);
    }
}
