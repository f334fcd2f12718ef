//! The words and sentences the daemon speaks now live in [`crate::words`], below the engine;
//! this path is kept for the callers not yet moved to it.

pub use crate::words::*;
