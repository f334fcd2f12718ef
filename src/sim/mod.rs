//! The simulator: people playing a game on a board, for the demo, `run --board sim:`,
//! `chessboardd simulate`, the tests and the benchmarks.
//!
//! - [`gestures`]: the choreography, how people move their pieces (every order and quirk,
//!   written once, with the pieces' identities);
//! - [`sensors`]: it rendered as timed sensor readings for the in-process board (with contact
//!   bounce and every fault model);
//! - [`faults`]: the fault models (lost, late and swapped readings, pulled cables) and the
//!   layer between the sensors and the host that both renderers use;
//! - [`pty`]: it rendered as a serial board's protocol bytes on a pseudo-terminal (the board
//!   side of each protocol is in its own module, `crate::board::diy` and the others);
//! - [`live`]: a serial board on a pseudo-terminal whose moves are decided as the game goes
//!   (playing against the computer);
//! - [`drive`]: the one loop that drives the engines over timed inputs in simulated time.

pub mod drive;
pub mod faults;
pub mod gestures;
pub mod live;
pub mod pty;
pub mod sensors;

pub use drive::{
    compare, drive, people, read_game, run, tempo_table, Misread, Read, Step, TempoRow,
};
pub use faults::{Faults, FAULT_PER_MILLE, FRAME_EVERY_MS, LATE_MS};
pub use sensors::{
    game_inputs, game_trace, games_script, write_script, Gestures, SimInput, Tempo,
    LOST_READING_PER_MILLE, PULL_MS, PULL_PERCENT, REPORT_AFTER_LINK_MS, REPORT_AFTER_LOSS_MS,
    SHORT_VICTIM_LIFT_PERCENT,
};

/// A small deterministic generator (SplitMix64): no dependency, same sequence everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}
