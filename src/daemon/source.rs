//! Where the daemon's board readings come from, and the drivers that read them, each on a
//! thread of its own.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::outputs::lights::Lights;
use crate::board::gpio::{self, CdevPins, Mapping, Pins, Wiring};
use crate::board::gpio_settings::{GpioConfig, GpioWiring};
use crate::board::serial::{self, Protocol, Show};
use crate::board::{BoardSpec, DriverMsg, LinkSettings, Timebase};
use crate::engine::Millis;
use crate::sim::SimInput;

/// Why a board's source cannot be made: its GPIO lines, or a simulated board's game.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The GPIO lines cannot be found or requested.
    #[error("{0}")]
    Gpio(#[from] gpio::Error),
    /// The simulated board's PGN file cannot be read.
    #[error("{path}: {source}")]
    ReadGame {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The simulated board's PGN file does not parse.
    #[error("{path}: {source}")]
    ParseGame {
        path: PathBuf,
        source: crate::pgn::PgnError,
    },
    /// The simulated board's PGN file holds no game.
    #[error("{path}: no game")]
    NoGame { path: PathBuf },
}

/// Where the daemon's board readings come from.
pub enum Source {
    /// A simulated board's inputs, at times of the daemon clock, and the position it starts in.
    Simulated(Vec<(Millis, SimInput)>, Box<shakmaty::Chess>),
    /// A serial board, and what its lights are to show.
    Serial(PathBuf, Box<dyn Protocol>, std::sync::mpsc::Receiver<Show>),
    /// A reed-switch board on GPIO lines.
    Gpio(Wiring, Box<dyn Pins>, Mapping, u32),
}

impl Source {
    fn serial(path: &std::path::Path, proto: Box<dyn Protocol>) -> Source {
        let (_tx, rx) = std::sync::mpsc::channel();
        Source::Serial(path.to_path_buf(), proto, rx)
    }

    /// Takes the sender for the board's lights (a serial board's; others have none).
    pub fn lights(&mut self) -> Lights {
        match self {
            Source::Serial(_, _, rx) => {
                let (tx, new_rx) = std::sync::mpsc::channel();
                *rx = new_rx;
                Lights(Some(tx))
            }
            _ => Lights(None),
        }
    }

    /// The source for a `--board` spec; a simulated game is read from its PGN file here.
    pub fn from_spec(
        spec: &BoardSpec,
        gpio: &GpioConfig,
        link: &LinkSettings,
    ) -> Result<Source, SourceError> {
        Ok(match spec {
            BoardSpec::Gpio => {
                let (chip, wiring) = gpio_wiring(gpio)?;
                let pins = CdevPins::open(&chip, &wiring)?;
                Source::Gpio(wiring, Box::new(pins), gpio.mapping, gpio.rate_hz)
            }
            BoardSpec::Serial(proto, p) => Source::serial(p, (proto.host)(link)),
            BoardSpec::Sim(pgn) => Source::simulated(pgn, &crate::sim::Gestures::default())?,
        })
    }

    /// The built-in simulated board playing the first game of a PGN file, its players moving
    /// their pieces as `gestures` says.
    pub fn simulated(pgn: &Path, gestures: &crate::sim::Gestures) -> Result<Source, SourceError> {
        let path = || pgn.to_path_buf();
        let text = std::fs::read_to_string(pgn).map_err(|source| SourceError::ReadGame {
            path: path(),
            source,
        })?;
        let games = crate::pgn::parse(&text).map_err(|source| SourceError::ParseGame {
            path: path(),
            source,
        })?;
        let game = games
            .into_iter()
            .next()
            .ok_or_else(|| SourceError::NoGame { path: path() })?;
        let inputs = crate::sim::game_inputs(&game.start, &game.moves, gestures, 1000);
        Ok(Source::Simulated(inputs, Box::new(game.start)))
    }
}

/// The chip and the line offsets of the configured wiring (lines given by name are looked up;
/// they must all be on one chip).
pub fn gpio_wiring(cfg: &GpioConfig) -> Result<(String, Wiring), gpio::Error> {
    let mut chip = cfg.chip.clone();
    let mut offset = |name: &String| -> Result<u32, gpio::Error> {
        let (found_chip, n) = gpio::line_offset(name)?;
        if let Some(c) = found_chip {
            chip = c;
        }
        Ok(n)
    };
    let eight = |v: Vec<u32>| -> Result<[u32; 8], gpio::Error> {
        let found = v.len();
        v.try_into()
            .map_err(|_| gpio::Error::NotEightLines { found })
    };
    let wiring = match &cfg.wiring {
        GpioWiring::Matrix { rows, cols } => Wiring::Matrix {
            rows: eight(rows.iter().map(&mut offset).collect::<Result<_, _>>()?)?,
            cols: eight(cols.iter().map(&mut offset).collect::<Result<_, _>>()?)?,
        },
        GpioWiring::ShiftRegister { load, clock, data } => Wiring::ShiftRegister {
            load: offset(load)?,
            clock: offset(clock)?,
            data: offset(data)?,
        },
        GpioWiring::Direct { lines } => Wiring::Direct {
            lines: lines.iter().map(&mut offset).collect::<Result<_, _>>()?,
        },
    };
    Ok((chip, wiring))
}

/// Starts a board's driver on its own thread (blocking serial and GPIO I/O want one); it sends
/// stamped messages on `tx` until `stop` is set or its board is done.
pub fn spawn_driver(
    source: Source,
    clock: Timebase,
    tx: mpsc::UnboundedSender<(Millis, DriverMsg)>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || match source {
        Source::Simulated(inputs, _) => {
            for (t, input) in inputs {
                // Sleep in short slices, so that a stop (SIGTERM) is seen at once.
                let due = clock.instant(t);
                while !stop.load(Ordering::Relaxed) && Instant::now() < due {
                    std::thread::sleep(
                        due.saturating_duration_since(Instant::now())
                            .min(Duration::from_millis(50)),
                    );
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let msg = match input {
                    SimInput::Reading(r) => DriverMsg::Reading(r),
                    SimInput::Press(b) => DriverMsg::Press(b),
                    SimInput::Link(l) => DriverMsg::Link(l),
                };
                // A simulated reading carries the time it was planned for.
                if tx.send((t, msg)).is_err() {
                    break;
                }
            }
        }
        Source::Serial(path, proto, shows) => {
            serial::run(path, proto, shows, clock, tx, stop);
        }
        Source::Gpio(wiring, pins, mapping, rate) => {
            gpio::run(wiring, pins, mapping, rate, clock, tx, stop)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_that_cannot_be_read_names_its_file() {
        let missing = Path::new("/nonexistent/game.pgn");
        let e = match Source::simulated(missing, &Default::default()) {
            Err(e) => e,
            Ok(_) => panic!("a missing file is read"),
        };
        let io = std::fs::read_to_string(missing).unwrap_err();
        assert_eq!(e.to_string(), format!("/nonexistent/game.pgn: {io}"));
        assert!(std::error::Error::source(&e)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some()));
        assert_eq!(
            SourceError::NoGame {
                path: "g.pgn".into()
            }
            .to_string(),
            "g.pgn: no game"
        );
        let gpio = SourceError::from(gpio::Error::NoLineNamed("ROW1".into()));
        assert_eq!(gpio.to_string(), "no GPIO line named 'ROW1'");
    }
}
