//! Reed-switch boards on GPIO lines (occupancy only): a diode matrix (8 driven rows, 8 pulled-up
//! column inputs), a chain of eight 74HC165 shift registers (load, clock, data), or 64 inputs of
//! port expanders (MCP23017s as kernel gpiochips). Lines go through the kernel's GPIO character
//! device (`gpiocdev`); a simulated pin backend stands in for tests and measurements.
//!
//! A switch closes when a piece stands on it, pulling its line low (active low). The scanner
//! reads the whole board at the configured rate, sleeping between scans, and passes a frame on
//! when the board changed; debouncing is the engine's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shakmaty::Square;

use super::{DriverMsg, DriverTx, Timebase};
use crate::engine::{LinkState, Reading};

/// What can go wrong with GPIO lines: finding them, requesting them, setting and reading them.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No line has this name on any chip.
    #[error("no GPIO line named '{0}'")]
    NoLineNamed(String),
    /// The wiring has a row or column of lines that is not eight long.
    #[error("8 lines needed")]
    NotEightLines { found: usize },
    /// The lines cannot be requested: the chip cannot be opened, or a line is not on it or is
    /// held by another program.
    #[error("{chip}: {source}")]
    Request {
        chip: String,
        source: gpiocdev::Error,
    },
    /// The lines are not held (requesting them again failed).
    #[error("{chip}: the lines are not requested")]
    NotRequested { chip: String },
    /// A line cannot be set.
    #[error("{source}")]
    Set { line: u32, source: gpiocdev::Error },
    /// A line cannot be read.
    #[error("{source}")]
    Read { line: u32, source: gpiocdev::Error },
    /// The line read is not one of the wiring's inputs (simulated pins).
    #[error("not an input")]
    NotAnInput { line: u32 },
    /// The system's error, from pins other than the kernel's character device.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// GPIO lines, by offset on one chip. `true` is a high level.
pub trait Pins: Send {
    fn set(&mut self, line: u32, high: bool) -> Result<(), Error>;
    fn get(&mut self, line: u32) -> Result<bool, Error>;
    /// Lets driven lines settle before they are read (real wires have capacitance).
    fn settle(&mut self) {}
    /// Gives the lines back and requests them again (after they failed to read).
    fn reopen(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// How the switches are wired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wiring {
    /// Rows driven low one at a time; columns read (pulled up). Switch (r, c) is sensor 8r+c.
    Matrix { rows: [u32; 8], cols: [u32; 8] },
    /// Eight chained 74HC165: pulse `load` low to latch, then 64 bits on `data`, one per `clock`
    /// rising edge. The first bit out is sensor 0.
    ShiftRegister { load: u32, clock: u32, data: u32 },
    /// One input line per sensor.
    Direct { lines: Vec<u32> },
}

impl Wiring {
    pub fn outputs(&self) -> Vec<u32> {
        match self {
            Wiring::Matrix { rows, .. } => rows.to_vec(),
            Wiring::ShiftRegister { load, clock, .. } => vec![*load, *clock],
            Wiring::Direct { .. } => vec![],
        }
    }
    pub fn inputs(&self) -> Vec<u32> {
        match self {
            Wiring::Matrix { cols, .. } => cols.to_vec(),
            Wiring::ShiftRegister { data, .. } => vec![*data],
            Wiring::Direct { lines } => lines.clone(),
        }
    }
}

/// Which sensor is which square: sensors 0..63 in the wiring's order are taken as a1..h8 (row
/// by row), then turned and mirrored as the board was built and placed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Mapping {
    /// 0, 90, 180 or 270 degrees clockwise.
    pub rotation: u16,
    /// Files mirrored (h-file where the a-file should be).
    pub mirror: bool,
    /// Find white's side at set-up: a start position seen along the files is turned a quarter,
    /// and a first lift on ranks 7-8 (white moves first) turns the board round.
    pub detect_side: bool,
}

impl Mapping {
    pub fn square(&self, sensor: usize) -> Square {
        let (mut f, mut r) = ((sensor % 8) as u32, (sensor / 8) as u32);
        if self.mirror {
            f = 7 - f;
        }
        for _ in 0..(self.rotation / 90) % 4 {
            (f, r) = (r, 7 - f);
        }
        Square::from_coords(shakmaty::File::new(f), shakmaty::Rank::new(r))
    }

    /// The occupancy of the squares from the sensors' bits.
    pub fn occupancy(&self, sensors: u64) -> u64 {
        let mut occ = 0u64;
        for i in 0..64 {
            if sensors & (1 << i) != 0 {
                occ |= 1 << self.square(i) as u32;
            }
        }
        occ
    }
}

/// Reads all 64 switches once.
pub fn scan(wiring: &Wiring, pins: &mut dyn Pins) -> Result<u64, Error> {
    let mut sensors = 0u64;
    match wiring {
        Wiring::Matrix { rows, cols } => {
            for (r, row) in rows.iter().enumerate() {
                pins.set(*row, false)?;
                pins.settle();
                for (c, col) in cols.iter().enumerate() {
                    if !pins.get(*col)? {
                        sensors |= 1 << (8 * r + c);
                    }
                }
                pins.set(*row, true)?;
            }
        }
        Wiring::ShiftRegister { load, clock, data } => {
            pins.set(*clock, false)?;
            pins.set(*load, false)?;
            pins.settle();
            pins.set(*load, true)?;
            for i in 0..64 {
                if !pins.get(*data)? {
                    sensors |= 1 << i;
                }
                pins.set(*clock, true)?;
                pins.set(*clock, false)?;
            }
        }
        Wiring::Direct { lines } => {
            for (i, line) in lines.iter().enumerate().take(64) {
                if !pins.get(*line)? {
                    sensors |= 1 << i;
                }
            }
        }
    }
    Ok(sensors)
}

/// Simulated pins: switches closed where `sensors` has a bit, wired as `wiring` says, with the
/// electrical behaviour of that wiring (rows driven, registers latched and shifted).
pub struct SimPins {
    wiring: Wiring,
    pub sensors: Arc<AtomicU64>,
    level: std::collections::HashMap<u32, bool>,
    latched: u64,
    shift: u32,
}

impl SimPins {
    pub fn new(wiring: Wiring, sensors: Arc<AtomicU64>) -> SimPins {
        SimPins {
            wiring,
            sensors,
            level: Default::default(),
            latched: 0,
            shift: 0,
        }
    }
}

impl Pins for SimPins {
    fn set(&mut self, line: u32, high: bool) -> Result<(), Error> {
        let was = self.level.insert(line, high).unwrap_or(true);
        if let Wiring::ShiftRegister { load, clock, .. } = self.wiring {
            if line == load && !high {
                self.latched = self.sensors.load(Ordering::Relaxed);
                self.shift = 0;
            }
            if line == clock && high && !was {
                self.shift += 1;
            }
        }
        Ok(())
    }

    fn get(&mut self, line: u32) -> Result<bool, Error> {
        let sensors = self.sensors.load(Ordering::Relaxed);
        let closed = match &self.wiring {
            Wiring::Matrix { rows, cols } => {
                let c = cols
                    .iter()
                    .position(|l| *l == line)
                    .ok_or(Error::NotAnInput { line })?;
                rows.iter().enumerate().any(|(r, row)| {
                    !self.level.get(row).copied().unwrap_or(true)
                        && sensors & (1 << (8 * r + c)) != 0
                })
            }
            Wiring::ShiftRegister { data, .. } => {
                if line != *data {
                    return Err(Error::NotAnInput { line });
                }
                self.shift < 64 && self.latched & (1 << self.shift) != 0
            }
            Wiring::Direct { lines } => {
                let i = lines
                    .iter()
                    .position(|l| *l == line)
                    .ok_or(Error::NotAnInput { line })?;
                sensors & (1 << i) != 0
            }
        };
        Ok(!closed)
    }
}

/// Lines of one gpiochip through the kernel's character device.
pub struct CdevPins {
    chip: String,
    wiring: Wiring,
    /// The output and input lines; `None` while they are being requested again.
    lines: Option<(gpiocdev::Request, gpiocdev::Request)>,
}

impl CdevPins {
    pub fn open(chip: &str, wiring: &Wiring) -> Result<CdevPins, Error> {
        Ok(CdevPins {
            chip: chip.to_string(),
            wiring: wiring.clone(),
            lines: Some(Self::request(chip, wiring)?),
        })
    }

    fn request(
        chip: &str,
        wiring: &Wiring,
    ) -> Result<(gpiocdev::Request, gpiocdev::Request), Error> {
        let err = |source| Error::Request {
            chip: chip.to_string(),
            source,
        };
        let outputs = gpiocdev::Request::builder()
            .on_chip(chip)
            .with_consumer("chessboardd")
            .with_lines(&wiring.outputs())
            .as_output(gpiocdev::line::Value::Active)
            .request()
            .map_err(err)?;
        let inputs = gpiocdev::Request::builder()
            .on_chip(chip)
            .with_consumer("chessboardd")
            .with_lines(&wiring.inputs())
            .as_input()
            .with_bias(gpiocdev::line::Bias::PullUp)
            .request()
            .map_err(err)?;
        Ok((outputs, inputs))
    }

    fn lines(&self) -> Result<&(gpiocdev::Request, gpiocdev::Request), Error> {
        self.lines.as_ref().ok_or_else(|| Error::NotRequested {
            chip: self.chip.clone(),
        })
    }
}

impl Pins for CdevPins {
    fn set(&mut self, line: u32, high: bool) -> Result<(), Error> {
        let v = if high {
            gpiocdev::line::Value::Active
        } else {
            gpiocdev::line::Value::Inactive
        };
        self.lines()?
            .0
            .set_value(line, v)
            .map_err(|source| Error::Set { line, source })
    }
    fn settle(&mut self) {
        // A few microseconds are enough; the scheduler may make it longer, which costs no CPU.
        std::thread::sleep(Duration::from_micros(5));
    }
    fn get(&mut self, line: u32) -> Result<bool, Error> {
        self.lines()?
            .1
            .value(line)
            .map(|v| v == gpiocdev::line::Value::Active)
            .map_err(|source| Error::Read { line, source })
    }
    fn reopen(&mut self) -> Result<(), Error> {
        // The old requests go first: the lines cannot be held twice.
        self.lines = None;
        self.lines = Some(Self::request(&self.chip, &self.wiring)?);
        Ok(())
    }
}

/// Finds a line by number or by name (the name the board's device tree or the expander gives).
pub fn line_offset(spec: &str) -> Result<(Option<String>, u32), Error> {
    if let Ok(n) = spec.parse::<u32>() {
        return Ok((None, n));
    }
    let found =
        gpiocdev::find_named_line(spec).ok_or_else(|| Error::NoLineNamed(spec.to_string()))?;
    Ok((
        Some(found.chip.to_string_lossy().to_string()),
        found.info.offset,
    ))
}

/// Scans at `rate_hz` until `stop`, sending a frame whenever the board changed. Lines that fail
/// to read for [`SILENT`](super::serial::SILENT) make the board silent, as a serial board that
/// stops answering: said once, and the lines requested again every 3 s until a scan works.
pub fn run(
    wiring: Wiring,
    mut pins: Box<dyn Pins>,
    mapping: Mapping,
    rate_hz: u32,
    clock: Timebase,
    tx: DriverTx,
    stop: Arc<AtomicBool>,
) {
    use super::serial::{Verdict, Watch, SILENT};
    let period = Duration::from_secs_f64(1.0 / rate_hz.clamp(1, 2000) as f64);
    let _ = tx.send((clock.now(), DriverMsg::Link(LinkState::Connected)));
    let mut last: Option<u64> = None;
    let mut mapping = mapping;
    let mut side = SideDetector::new(mapping.detect_side);
    let mut next = Instant::now();
    let mut watch = Watch::new(next);
    // The last scan that worked since the lines were requested; whether the last one failed.
    let mut heard: Option<Instant> = None;
    let mut failing = false;
    while !stop.load(Ordering::Relaxed) {
        let scanned = scan(&wiring, pins.as_mut());
        let now = Instant::now();
        match &scanned {
            Ok(_) => {
                heard = Some(now);
                if std::mem::take(&mut failing) {
                    tracing::info!("gpio: the lines read again");
                }
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!("gpio: the lines fail to read: {e}");
            }
            Err(_) => {}
        }
        match watch.check(now, heard) {
            Verdict::Fine => {}
            Verdict::Back => {
                if tx
                    .send((clock.now(), DriverMsg::Link(LinkState::Reconnected)))
                    .is_err()
                {
                    break;
                }
            }
            verdict @ (Verdict::Silent | Verdict::StillSilent) => {
                if verdict == Verdict::Silent {
                    tracing::warn!(
                        "gpio: no scan for {} s; requesting the lines again until they read",
                        SILENT.as_secs()
                    );
                    if tx
                        .send((clock.now(), DriverMsg::Link(LinkState::Silent)))
                        .is_err()
                    {
                        break;
                    }
                }
                if let Err(e) = pins.reopen() {
                    tracing::debug!("gpio: requesting the lines again: {e}");
                }
                watch.opened(Instant::now());
                heard = None;
            }
        }
        if let Ok(sensors) = scanned {
            let occ = side.occupancy(&mut mapping, sensors);
            if last != Some(occ) {
                last = Some(occ);
                if tx
                    .send((clock.now(), DriverMsg::Reading(Reading::occupancy(occ))))
                    .is_err()
                {
                    break;
                }
            }
        }
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

const START: u64 = 0xFFFF_0000_0000_FFFF;

/// Finds which way round an occupancy-only board stands from its set-up and the first lift.
struct SideDetector {
    /// Still looking: the start position was seen and nothing was lifted yet.
    looking: bool,
    seen_start: bool,
    /// A first lift seen at this scan: it must hold (not a bounce) before it decides.
    candidate: Option<(u64, Instant)>,
}

/// How long the first lift must hold before it tells white's side.
const FIRST_LIFT_HOLDS: Duration = Duration::from_millis(100);

impl SideDetector {
    fn new(on: bool) -> SideDetector {
        SideDetector {
            looking: on,
            seen_start: false,
            candidate: None,
        }
    }

    fn occupancy(&mut self, mapping: &mut Mapping, sensors: u64) -> u64 {
        self.occupancy_at(mapping, sensors, Instant::now())
    }

    fn occupancy_at(&mut self, mapping: &mut Mapping, sensors: u64, now: Instant) -> u64 {
        let mut occ = mapping.occupancy(sensors);
        if !self.looking {
            return occ;
        }
        let turned = Mapping {
            rotation: (mapping.rotation + 90) % 360,
            ..*mapping
        };
        if occ != START && turned.occupancy(sensors) == START {
            *mapping = turned;
            occ = START;
        }
        if occ == START {
            self.seen_start = true;
            self.candidate = None;
        } else if self.seen_start && (START & !occ).count_ones() == 1 && occ & !START == 0 {
            let since = match self.candidate {
                Some((c, t)) if c == occ => t,
                _ => {
                    self.candidate = Some((occ, now));
                    now
                }
            };
            if now.duration_since(since) < FIRST_LIFT_HOLDS {
                // Not yet known which square it is: the board is shown as set up meanwhile.
                return START;
            }
            // The first lift is white's: on ranks 7-8 the board stands the other way round.
            if (START & !occ) >> 32 != 0 {
                mapping.rotation = (mapping.rotation + 180) % 360;
                occ = mapping.occupancy(sensors);
            }
            self.looking = false;
        } else {
            self.candidate = None;
        }
        occ
    }
}

/// CPU time this thread has used.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> Wiring {
        Wiring::Matrix {
            rows: [2, 3, 4, 5, 6, 7, 8, 9],
            cols: [10, 11, 12, 13, 14, 15, 16, 17],
        }
    }

    #[test]
    fn every_wiring_reads_the_switches_that_are_closed() {
        let start = 0xFFFF_0000_0000_FFFFu64;
        let odd = 0x8000_0010_0000_0001u64;
        for wiring in [
            matrix(),
            Wiring::ShiftRegister {
                load: 5,
                clock: 6,
                data: 7,
            },
            Wiring::Direct {
                lines: (100..164).collect(),
            },
        ] {
            let sensors = Arc::new(AtomicU64::new(start));
            let mut pins = SimPins::new(wiring.clone(), sensors.clone());
            assert_eq!(scan(&wiring, &mut pins).unwrap(), start, "{wiring:?}");
            sensors.store(odd, Ordering::Relaxed);
            assert_eq!(scan(&wiring, &mut pins).unwrap(), odd, "{wiring:?}");
        }
    }

    #[test]
    fn errors_say_what_they_said_as_strings() {
        let wiring = Wiring::Direct { lines: vec![1, 2] };
        let mut pins = SimPins::new(wiring, Arc::new(AtomicU64::new(0)));
        let e = pins.get(3).unwrap_err();
        assert!(matches!(e, Error::NotAnInput { line: 3 }));
        assert_eq!(e.to_string(), "not an input");
        assert_eq!(
            Error::NoLineNamed("ROW1".into()).to_string(),
            "no GPIO line named 'ROW1'"
        );
        assert_eq!(
            Error::NotEightLines { found: 7 }.to_string(),
            "8 lines needed"
        );
        assert_eq!(
            Error::NotRequested {
                chip: "/dev/gpiochip0".into()
            }
            .to_string(),
            "/dev/gpiochip0: the lines are not requested"
        );
        let io = Error::from(std::io::Error::other("Input/output error"));
        assert_eq!(io.to_string(), "Input/output error");
        assert!(std::error::Error::source(&io).is_some());
    }

    #[test]
    fn mappings_turn_and_mirror_the_board() {
        let m = Mapping::default();
        assert_eq!(
            (m.square(0), m.square(7), m.square(63)),
            (Square::A1, Square::H1, Square::H8)
        );
        let r180 = Mapping {
            rotation: 180,
            mirror: false,
            ..Mapping::default()
        };
        assert_eq!((r180.square(0), r180.square(8)), (Square::H8, Square::H7));
        let r90 = Mapping {
            rotation: 90,
            mirror: false,
            ..Mapping::default()
        };
        assert_eq!((r90.square(0), r90.square(7)), (Square::A8, Square::A1));
        let mir = Mapping {
            rotation: 0,
            mirror: true,
            ..Mapping::default()
        };
        assert_eq!(mir.square(0), Square::H1);
        // The start position is symmetric under 180 degrees but not under 90.
        let start = 0xFFFF_0000_0000_FFFFu64;
        assert_eq!(r180.occupancy(start), start);
        assert_ne!(r90.occupancy(start), start);
        assert_eq!(r90.occupancy(0xC3C3_C3C3_C3C3_C3C3), start);
    }

    #[test]
    fn white_side_is_found_from_the_set_up_and_the_first_lift() {
        // The board stands turned round: white's d2 pawn is sensor 52 (e7 as wired).
        let mut m = Mapping {
            detect_side: true,
            ..Mapping::default()
        };
        let mut d = SideDetector::new(true);
        let t0 = Instant::now();
        assert_eq!(d.occupancy_at(&mut m, START, t0), START);
        // A bounce: one scan with the square open, then closed again: nothing decided.
        assert_eq!(d.occupancy_at(&mut m, START & !(1 << 52), t0), START);
        assert_eq!(
            d.occupancy_at(&mut m, START, t0 + Duration::from_millis(10)),
            START
        );
        assert_eq!(m.rotation, 0);
        d.occupancy_at(&mut m, START & !(1 << 52), t0 + Duration::from_millis(20));
        let occ = d.occupancy_at(&mut m, START & !(1 << 52), t0 + Duration::from_millis(130));
        assert_eq!(m.rotation, 180);
        assert_eq!(
            occ,
            START & !(1 << Square::D2 as u32),
            "turned round: sensor 52 is d2"
        );
        // Later lifts change nothing.
        d.occupancy_at(&mut m, START & !(1 << 12), t0 + Duration::from_millis(500));
        assert_eq!(m.rotation, 180);
        // A board standing sideways: the set-up along the files.
        let mut m = Mapping {
            detect_side: true,
            ..Mapping::default()
        };
        let mut d = SideDetector::new(true);
        assert_eq!(d.occupancy_at(&mut m, 0xC3C3_C3C3_C3C3_C3C3, t0), START);
        assert_eq!(m.rotation, 90);
        let mut d = SideDetector::new(true);
        let mut m = Mapping::default();
        d.occupancy_at(&mut m, START, t0);
        d.occupancy_at(&mut m, START & !(1 << 12), t0);
        d.occupancy_at(&mut m, START & !(1 << 12), t0 + Duration::from_millis(200));
        assert_eq!(
            m.rotation, 0,
            "white's e2 lifted first: the right way round"
        );
        assert!(!d.looking);
    }
}
