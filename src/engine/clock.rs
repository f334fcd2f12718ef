//! Time controls (PGN `TimeControl` syntax) and the chess clock arithmetic of Art. 6.
//!
//! The clock is pure: it is told when moves complete and asked what it shows at a given time.

use std::fmt;
use std::str::FromStr;

use shakmaty::{ByColor, Color};

use super::event::Millis;
use crate::named;
use crate::words::Names;

/// One period of a time control.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Period {
    /// Moves to make in this period; `None` for the rest of the game.
    pub moves: Option<u32>,
    pub time_ms: i64,
    pub increment_ms: i64,
    /// Art. 6.2b delay: each move first uses this much before the main time runs.
    pub delay_ms: i64,
}

/// A whole time control: periods in order, the last one repeating if it has a move count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControl {
    pub periods: Vec<Period>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "invalid time control '{text}': {why} (expected e.g. 300+2, 900, 300d5, 40/5400+30:1800+30)"
)]
pub struct TimeControlError {
    pub text: String,
    pub why: &'static str,
}

fn parse_secs(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let secs: f64 = s.parse().ok()?;
    if !(0.0..=1.0e7).contains(&secs) {
        return None;
    }
    Some((secs * 1000.0).round() as i64)
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        let err = |why| TimeControlError {
            text: text.to_string(),
            why,
        };
        let mut periods = Vec::new();
        for part in text.trim().split(':') {
            let (moves, rest) = match part.split_once('/') {
                Some((m, rest)) => {
                    let m: u32 = m
                        .parse()
                        .map_err(|_| err("the move count is not a number"))?;
                    if m == 0 {
                        return Err(err("a period needs at least one move"));
                    }
                    (Some(m), rest)
                }
                None => (None, part),
            };
            let (base, inc, delay) = if let Some((b, i)) = rest.split_once('+') {
                (b, Some(i), None)
            } else if let Some((b, d)) = rest.split_once('d') {
                (b, None, Some(d))
            } else {
                (rest, None, None)
            };
            let time_ms =
                parse_secs(base).ok_or_else(|| err("the time is not a number of seconds"))?;
            let increment_ms = match inc {
                Some(i) => {
                    parse_secs(i).ok_or_else(|| err("the increment is not a number of seconds"))?
                }
                None => 0,
            };
            let delay_ms = match delay {
                Some(d) => {
                    parse_secs(d).ok_or_else(|| err("the delay is not a number of seconds"))?
                }
                None => 0,
            };
            if time_ms == 0 && periods.is_empty() {
                return Err(err("the first period has no time"));
            }
            periods.push(Period {
                moves,
                time_ms,
                increment_ms,
                delay_ms,
            });
        }
        if periods.iter().rev().skip(1).any(|p| p.moves.is_none()) {
            return Err(err("only the last period may be without a move count"));
        }
        Ok(TimeControl { periods })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if let Some(m) = p.moves {
                write!(f, "{m}/")?;
            }
            write!(f, "{}", fmt_secs(p.time_ms))?;
            if p.delay_ms > 0 {
                write!(f, "d{}", fmt_secs(p.delay_ms))?;
            } else if p.increment_ms > 0 {
                write!(f, "+{}", fmt_secs(p.increment_ms))?;
            }
        }
        Ok(())
    }
}

fn fmt_secs(ms: i64) -> String {
    if ms % 1000 == 0 {
        format!("{}", ms / 1000)
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

/// How the clocks are switched.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum ClockSwitch {
    /// Appendix F2.3: the opponent's clock starts when the move is completed and announced.
    #[default]
    Auto,
    /// Art. 6.8: a clock button; the move is complete when the player presses it.
    Button,
}

impl ClockSwitch {
    pub const NAMES: Names<ClockSwitch> = Names {
        what: "clock switch",
        table: &[(ClockSwitch::Auto, "auto"), (ClockSwitch::Button, "button")],
    };
}

named!(ClockSwitch);

/// Game pace, by Appendix B/C: the base time plus 60 increments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pace {
    Blitz,
    Rapid,
    Standard,
}

impl TimeControl {
    /// Minutes for the game by the appendices' measure (first period time + 60 x increment).
    pub fn nominal_ms(&self) -> i64 {
        let p = &self.periods[0];
        p.time_ms + 60 * p.increment_ms
    }
}

/// The two clocks.
#[derive(Clone, Debug)]
pub struct Clock {
    tc: TimeControl,
    remaining: ByColor<i64>,
    period: ByColor<usize>,
    moves_in_period: ByColor<u32>,
    running: Option<Color>,
    /// When the running clock was last started.
    since: Millis,
    /// The clock that ran when the clocks were paused.
    paused: Option<Color>,
    /// The time each player has used (F2.9d), up to the last stop.
    used: ByColor<i64>,
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        let first = tc.periods[0].time_ms;
        Clock {
            tc,
            remaining: ByColor {
                white: first,
                black: first,
            },
            period: ByColor { white: 0, black: 0 },
            moves_in_period: ByColor { white: 0, black: 0 },
            running: None,
            since: 0,
            paused: None,
            used: ByColor { white: 0, black: 0 },
        }
    }

    pub fn time_control(&self) -> &TimeControl {
        &self.tc
    }

    pub fn running(&self) -> Option<Color> {
        self.running
    }

    fn period_of(&self, c: Color) -> &Period {
        let i = self.period[c].min(self.tc.periods.len() - 1);
        &self.tc.periods[i]
    }

    /// The increment `c` gets for his next move (UCI `winc`/`binc`).
    pub fn increment(&self, c: Color) -> i64 {
        self.period_of(c).increment_ms
    }

    /// The moves `c` still has to make in his period, when it has a move count (UCI
    /// `movestogo`).
    pub fn moves_to_go(&self, c: Color) -> Option<u32> {
        self.period_of(c)
            .moves
            .map(|m| m.saturating_sub(self.moves_in_period[c]).max(1))
    }

    /// `c` plays the quickplay finish (Art. 10.1): his period is the last one and holds all the
    /// remaining moves.
    pub fn in_quickplay_finish(&self, c: Color) -> bool {
        self.period[c] + 1 >= self.tc.periods.len() && self.period_of(c).moves.is_none()
    }

    /// What `c`'s clock shows at time `now`, never below zero.
    pub fn remaining(&self, c: Color, now: Millis) -> i64 {
        let mut r = self.remaining[c];
        if self.running == Some(c) {
            let used = now.saturating_sub(self.since) as i64 - self.period_of(c).delay_ms;
            r -= used.max(0);
        }
        r.max(0)
    }

    /// The time `c` has used so far at `now` (what his clock ran, the delay of Art. 6.2b not
    /// counted): F2.9d's "time used".
    pub fn used(&self, c: Color, now: Millis) -> i64 {
        let mut u = self.used[c];
        if self.running == Some(c) {
            let ran = now.saturating_sub(self.since) as i64 - self.period_of(c).delay_ms;
            u += ran.max(0);
        }
        u
    }

    /// Starts `c`'s clock at `now` (the other one stops).
    pub fn start(&mut self, c: Color, now: Millis) {
        self.stop(now);
        self.running = Some(c);
        self.since = now;
    }

    /// Stops whichever clock runs, keeping what it shows.
    pub fn stop(&mut self, now: Millis) {
        if let Some(c) = self.running {
            self.used[c] = self.used(c, now);
            self.remaining[c] = self.remaining(c, now);
            self.running = None;
        }
    }

    /// `c` completed a move at `now`: stop its clock, add the increment and any new period's
    /// time, start the opponent's.
    pub fn complete_move(&mut self, c: Color, now: Millis) {
        self.stop(now);
        let p = *self.period_of(c);
        self.remaining[c] += p.increment_ms;
        self.moves_in_period[c] += 1;
        if let Some(m) = p.moves {
            if self.moves_in_period[c] >= m {
                self.moves_in_period[c] = 0;
                self.period[c] += 1;
                // A repeating last period (e.g. "40/7200") gives its time again.
                let next = *self.period_of(c);
                self.remaining[c] += next.time_ms;
            }
        }
        if self.paused.is_some() {
            // Moved while the clocks stand: the opponent's clock runs when they are resumed.
            self.paused = Some(!c);
        } else {
            self.start(!c, now);
        }
    }

    /// Counts moves already made (a game taken up again), so that the periods are where they
    /// were; the time shown is set afterwards.
    pub fn replay_moves(&mut self, movers: &[Color]) {
        for &c in movers {
            self.moves_in_period[c] += 1;
            if let Some(m) = self.period_of(c).moves {
                if self.moves_in_period[c] >= m {
                    self.moves_in_period[c] = 0;
                    self.period[c] += 1;
                }
            }
        }
    }

    /// Adds time to a player's clock (penalties of Art. 7.4b and 9.5b). A running clock keeps
    /// running: the delay of the current move is not granted again.
    pub fn add(&mut self, c: Color, ms: i64) {
        self.remaining[c] = self.remaining[c].saturating_add(ms);
    }

    /// Sets what a player's clock shows at `now` (Art. 9.5b leaves a claimant one minute).
    pub fn set(&mut self, c: Color, ms: i64, now: Millis) {
        let shown = self.remaining(c, now);
        self.remaining[c] += ms.max(0) - shown;
    }

    /// Stops the clocks for the arbiter (Art. 6.13); [`Clock::resume`] starts the same one again.
    pub fn pause(&mut self, now: Millis) {
        if let Some(c) = self.running {
            self.stop(now);
            self.paused = Some(c);
        }
    }

    pub fn resume(&mut self, now: Millis) {
        if let Some(c) = self.paused.take() {
            self.start(c, now);
        }
    }

    /// Stops the clocks until one is started again: the running one stops, a pause is
    /// forgotten (an adjourned game's clocks, A1a).
    pub fn halt(&mut self, now: Millis) {
        self.paused = None;
        self.stop(now);
    }

    pub fn is_paused(&self) -> bool {
        self.paused.is_some()
    }

    /// When the running clock's flag falls, if one runs.
    pub fn flag_time(&self) -> Option<Millis> {
        let c = self.running?;
        let p = self.period_of(c);
        Some(
            self.since
                .saturating_add((p.delay_ms + self.remaining[c].max(0)) as Millis),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_quickplay_finish_is_the_last_period_with_all_the_moves() {
        let sudden: TimeControl = "5400".parse().unwrap();
        assert!(Clock::new(sudden).in_quickplay_finish(Color::White));
        let periods: TimeControl = "2/7200:1800".parse().unwrap();
        let mut c = Clock::new(periods);
        assert!(!c.in_quickplay_finish(Color::White));
        c.complete_move(Color::White, 1000);
        c.complete_move(Color::Black, 2000);
        assert!(!c.in_quickplay_finish(Color::White));
        c.complete_move(Color::White, 3000);
        assert!(c.in_quickplay_finish(Color::White));
        assert!(!c.in_quickplay_finish(Color::Black));
        // A repeating last period with a move count is never a quickplay finish.
        let repeating: TimeControl = "40/7200".parse().unwrap();
        assert!(!Clock::new(repeating).in_quickplay_finish(Color::White));
    }

    use super::*;

    fn tc(s: &str) -> TimeControl {
        s.parse().unwrap()
    }

    #[test]
    fn parses_the_pgn_forms() {
        assert_eq!(
            tc("300+2").periods,
            vec![Period {
                moves: None,
                time_ms: 300_000,
                increment_ms: 2000,
                delay_ms: 0
            }]
        );
        assert_eq!(tc("900").periods[0].time_ms, 900_000);
        assert_eq!(tc("300d5").periods[0].delay_ms, 5000);
        let p = tc("40/5400+30:1800+30").periods;
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].moves, Some(40));
        assert_eq!(p[1].time_ms, 1_800_000);
        assert_eq!(tc("40/5400+30:1800+30").to_string(), "40/5400+30:1800+30");
        for bad in ["", "abc", "300+x", "0", "5400:40/1800", "0/300", "-5"] {
            assert!(
                bad.parse::<TimeControl>().is_err(),
                "{bad} should not parse"
            );
        }
    }

    #[test]
    fn increment_is_added_after_the_move() {
        let mut c = Clock::new(tc("60+2"));
        c.start(Color::White, 0);
        c.complete_move(Color::White, 10_000);
        assert_eq!(c.remaining(Color::White, 10_000), 52_000);
        assert_eq!(c.running(), Some(Color::Black));
        assert_eq!(c.remaining(Color::Black, 15_000), 55_000);
    }

    #[test]
    fn delay_is_used_first_and_not_saved() {
        let mut c = Clock::new(tc("60d5"));
        c.start(Color::White, 0);
        assert_eq!(c.remaining(Color::White, 3000), 60_000);
        c.complete_move(Color::White, 3000);
        assert_eq!(c.remaining(Color::White, 3000), 60_000);
        assert_eq!(c.remaining(Color::Black, 3000 + 8000), 57_000);
        assert_eq!(c.flag_time(), Some(3000 + 5000 + 60_000));
    }

    #[test]
    fn next_period_time_is_added_after_the_control_move() {
        let mut c = Clock::new(tc("2/100+0:50"));
        c.start(Color::White, 0);
        c.complete_move(Color::White, 10_000); // white move 1: 90 s left
        c.complete_move(Color::Black, 20_000);
        assert_eq!(c.remaining(Color::White, 20_000), 90_000);
        c.complete_move(Color::White, 30_000); // move 2 reaches the control: 80 + 50
        assert_eq!(c.remaining(Color::White, 30_000), 130_000);
        c.complete_move(Color::Black, 40_000);
        c.complete_move(Color::White, 50_000); // sudden death now: no more time
        assert_eq!(c.remaining(Color::White, 50_000), 120_000);
    }

    #[test]
    fn paused_clocks_do_not_run() {
        let mut c = Clock::new(tc("60"));
        c.start(Color::White, 0);
        c.pause(10_000);
        assert_eq!(c.flag_time(), None);
        assert_eq!(c.remaining(Color::White, 500_000), 50_000);
        c.resume(600_000);
        assert_eq!(c.remaining(Color::White, 610_000), 40_000);
        assert!(!c.is_paused());
    }

    #[test]
    fn flag_time_and_penalties() {
        let mut c = Clock::new(tc("10"));
        c.start(Color::White, 1000);
        assert_eq!(c.flag_time(), Some(11_000));
        c.add(Color::White, 5000);
        assert_eq!(c.flag_time(), Some(16_000));
        assert_eq!(c.remaining(Color::White, 20_000), 0);
        c.set(Color::White, 60_000, 6000);
        assert_eq!(c.remaining(Color::White, 6000), 60_000);
        assert_eq!(c.flag_time(), Some(66_000));
    }

    #[test]
    fn a_penalty_does_not_restart_the_delay() {
        let mut c = Clock::new(tc("60d5"));
        c.start(Color::White, 0);
        c.add(Color::Black, 120_000);
        // White has used 3 s of his 5 s delay; after the penalty 2 s of delay remain.
        c.set(Color::White, 60_000, 3000);
        assert_eq!(c.remaining(Color::White, 7000), 58_000);
    }
}
