//! Speech: the words the daemon says. Phrase building is pure and is used by the engine.

pub mod phrase;
