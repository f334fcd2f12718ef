//! Speech: how the daemon's words ([`crate::words`]) are said (synthesis backends, audio
//! output, the announcement queue).

pub mod audio;
pub mod clips;
#[cfg(feature = "speech-dispatcher")]
pub mod dispatcher;
pub mod espeak;
pub mod queue;
pub mod speaker;
pub mod synth;
pub mod tools;
