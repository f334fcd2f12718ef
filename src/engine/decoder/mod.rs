//! The reading of the board: raw readings in, the legal moves they show out. Beneath the
//! arbiter, which rules on what it reads (touch-move, completion, illegal moves, claims, the
//! clock); it knows the rules of chess only as legality.
//!
//! - [`debounce`]: a square's change counts once it has held for the debounce time; changes
//!   read at the same moment (a whole-board frame) come out together.
//! - [`physical`]: the debounced board (occupancy, piece identities where the board has them).
//! - [`log`]: what the board was seen doing since the last agreed position.
//! - [`recognise`]: which legal moves the board shows, unfinished and illegal moves.
//! - [`stories`]: the sequences of legal moves that explain the log, each with what it needs
//!   the board to have done unseen (readings late, owed, lost), cheapest first.

pub mod debounce;
pub mod log;
pub mod physical;
pub mod recognise;
pub mod stories;
