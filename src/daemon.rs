//! The imperative shell: a tokio loop that feeds a board's readings to the engine in real
//! (monotonic) time, fires the engine's timers, and hands events to the outputs.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use crate::engine::{Engine, Event, Millis, Settings};
use crate::sim::SimInput;

/// Simulated time after the board's last input, so pending timeouts (promotion, mismatch) fire.
const TAIL_MS: Millis = 5_000;

/// The daemon's clock: monotonic milliseconds since start, optionally sped up (demo).
#[derive(Copy, Clone, Debug)]
pub struct DaemonClock {
    start: Instant,
    speed: f64,
}

impl DaemonClock {
    pub fn new(speed: f64) -> DaemonClock {
        DaemonClock {
            start: Instant::now(),
            speed: speed.max(0.001),
        }
    }

    pub fn now(&self) -> Millis {
        (self.start.elapsed().as_secs_f64() * 1000.0 * self.speed) as Millis
    }

    /// The real instant at which the daemon's clock shows `t`.
    pub fn instant(&self, t: Millis) -> Instant {
        self.start + Duration::from_secs_f64(t as f64 / 1000.0 / self.speed)
    }
}

/// Plays the inputs of a simulated board (times in the daemon clock's milliseconds) through the
/// engine, calling `on_event` for every event. Returns the engine when the board has finished.
pub async fn run_simulated(
    settings: Settings,
    inputs: Vec<(Millis, SimInput)>,
    speed: f64,
    mut on_event: impl FnMut(&Event),
) -> Engine {
    let clock = DaemonClock::new(speed);
    // Readings carry the time the board saw them, as a driver stamps what it reads.
    let (tx, mut rx) = mpsc::channel::<(Millis, SimInput)>(64);
    // The simulated board runs as its own task, as a real driver would.
    let board = tokio::spawn(async move {
        for (t, input) in inputs {
            sleep_until(clock.instant(t)).await;
            if tx.send((t, input)).await.is_err() {
                break;
            }
        }
    });
    let mut engine = Engine::new(settings);
    let mut out = Vec::new();
    engine.new_game(clock.now(), shakmaty::Chess::default(), true, &mut out);
    loop {
        for e in out.drain(..) {
            on_event(&e);
        }
        let deadline = engine.next_deadline().map(|d| clock.instant(d));
        tokio::select! {
            input = rx.recv() => match input {
                Some((t, SimInput::Reading(r))) => engine.reading(t, r, &mut out),
                Some((t, SimInput::Press(b))) => engine.press(t, b, &mut out),
                None => break,
            },
            _ = async { sleep_until(deadline.unwrap_or_else(Instant::now)).await }, if deadline.is_some() => {
                engine.advance(clock.now(), &mut out);
            }
        }
    }
    let end = clock.now() + TAIL_MS;
    while let Some(d) = engine.next_deadline().filter(|d| *d <= end) {
        sleep_until(clock.instant(d)).await;
        engine.advance(d, &mut out);
        for e in out.drain(..) {
            on_event(&e);
        }
    }
    let _ = board.await;
    engine
}
