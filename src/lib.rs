//! chessboardd: a sensor chessboard that talks, with the rules of a FIDE arbiter.
//!
//! `engine` is the pure core; `replay` and `daemon` drive it; `sim` makes simulated boards.

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
pub mod pgn;
pub mod record;
pub mod replay;
pub mod settings;
pub mod sim;
pub mod speech;
pub mod web;
pub mod words;
