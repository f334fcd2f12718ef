//! The pure core: no I/O, no wall clock. Timestamped readings and button presses go in, game
//! events come out. The live daemon and `chessboardd replay` both drive this engine.

pub mod clock;
pub mod debounce;
pub mod event;
pub mod game;
pub mod rules;
pub mod table;
pub mod touch;
pub mod tracker;

pub use event::{Event, EventKind, Millis, Priority};
pub use tracker::{Button, Engine, LinkState, Reading, Settings, VoiceChange, VoiceLevel};
