//! The drivers' timebase: monotonic milliseconds since the daemon started, which stamp every
//! reading a driver sends, and which the daemon's timers count in.

use std::time::Duration;

use tokio::time::Instant;

use crate::engine::Millis;

/// Monotonic milliseconds since start, optionally sped up (demo).
#[derive(Copy, Clone, Debug)]
pub struct Timebase {
    start: Instant,
    speed: f64,
}

impl Timebase {
    pub fn new(speed: f64) -> Timebase {
        Timebase {
            start: Instant::now(),
            speed: speed.max(0.001),
        }
    }

    pub fn now(&self) -> Millis {
        (self.start.elapsed().as_secs_f64() * 1000.0 * self.speed) as Millis
    }

    /// The real instant at which the timebase shows `t`.
    pub fn instant(&self, t: Millis) -> Instant {
        self.start + Duration::from_secs_f64(t as f64 / 1000.0 / self.speed)
    }
}
