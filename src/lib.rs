//! chessboardd: a sensor chessboard that talks, with the rules of a FIDE arbiter.
//!
//! # The data flow
//!
//! ```text
//!  board (GPIO, DIY, DGT, ChessLink, simulated)     keypad, buttons, control socket
//!      │ readings, link states                          │ commands (control::COMMANDS)
//!      ▼                                                ▼
//!  board::* drivers ──────────────► daemon ◄────────── control
//!                                   ▲ │ timed inputs
//!  opponent (a UCI engine) ─────────┘ ▼
//!                                  engine (pure: readings in, events out; replay drives it too)
//!                                     │ events
//!                                     ▼
//!                daemon::outputs: record → lights → broker → web view → systemd → speech
//! ```
//!
//! # The layers
//!
//! Each module imports only modules of its own layer or below (`tests/layers.rs` checks it,
//! and that a layer's modules import each other without a cycle):
//!
//! 1. foundations: [`words`] (every word in every language, as data files), `bounded` (reading
//!    untrusted input with limits), `fsutil` (replacing a file at once);
//! 2. [`engine`]: the pure core (no I/O, no clock): touch-move, moves, clock, draws, rulings;
//! 3. records: [`record`] (the journal that survives a crash, the kept games), [`pgn`], [`brf`];
//! 4. devices and outputs: [`board`] (drivers and protocols, `board::PROTOCOLS`), [`speech`]
//!    (backends, `speech::BACKENDS`; audio; the queue), [`control`] (the command table, socket,
//!    keys), [`sim`] (the one simulator of people at a board), [`replay`], `web`, [`mqtt`],
//!    [`broadcast`], [`notify`], [`opponent`] (a UCI chess engine as a child process, the
//!    opening book: playing against the computer);
//! 5. [`daemon`]: the select loop that ties them together; it takes each subsystem's own
//!    settings type (`board::gpio_settings`, `control::settings`, `mqtt::MqttSettings`);
//! 6. [`settings`]: the config file and the flags, validated once into one `Settings`, which
//!    only the binary imports;
//! 7. the binary (`src/main.rs`, `src/cli/`): one file per subcommand.
//!
//! # Where to start reading
//!
//! `src/engine/mod.rs` (how a reading becomes an event), then `src/daemon/mod.rs` (the live
//! loop) and `src/replay.rs` (the same engine driven by a script). The contracts the code
//! follows are in `docs/`: `replay.md`, `rules.md`, `speech.md`, `boards.md`.

pub mod board;
pub mod bounded;
pub mod brf;
pub mod broadcast;
pub mod control;
pub mod daemon;
pub mod engine;
mod fsutil;
pub mod mqtt;
pub mod notify;
pub mod opponent;
pub mod pgn;
pub mod record;
pub mod replay;
pub mod settings;
pub mod sim;
pub mod speech;
mod web;
pub mod words;
