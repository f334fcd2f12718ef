//! The caller's own handling of events (speech, the events printed) as an output: last in
//! the list, so that what is said is already recorded and published.

use super::{Batch, Finishing, Output};
use crate::engine::Event;

/// Hands every event to a function of the caller's, with its board's index.
pub struct Caller<F>(pub F);

impl<F: FnMut(usize, &Event)> Output for Caller<F> {
    fn event(&mut self, board: usize, event: &Event) {
        (self.0)(board, event);
    }

    fn finish<'a>(&'a mut self, batch: &'a mut Batch) -> Finishing<'a> {
        for (b, e) in batch.events.iter() {
            (self.0)(*b, e);
        }
        Box::pin(async {})
    }
}
