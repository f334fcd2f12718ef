//! The announcement queue (docs/speech.md, "Priorities"). Pure: the speech thread asks it what to
//! say next and whether a new announcement interrupts the one being spoken.
//!
//! - A move announcement is never dropped while its move stands; one whose move was taken back
//!   or withdrawn by a correction before it was spoken is dropped (never speak a move that was
//!   not completed), and a newer announcement of the same ply (the move made again) replaces an
//!   unspoken one.
//! - A correction carries the first ply it withdraws: it drops what is queued of those plies,
//!   and is itself dropped, unsaid, when its moves are taken back or corrected again; a move
//!   made at its ply (the correction withdrew moves and put none in their place) leaves it.
//! - Errors and move announcements interrupt query answers; queries never interrupt anything
//!   and wait behind everything else.
//! - Silenced (the `silence` command), the answers and information waiting are dropped, and
//!   what is being said stops, whatever it is.
//! - At most [`MAX_QUERIES`] query answers wait: one more is dropped (a flood of questions on
//!   the control socket must not pile up hours of speech). Nothing else is ever dropped.

use std::collections::VecDeque;

/// What kind of announcement, in the order of the speech priorities.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Query,
    Info,
    Result,
    Move,
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub id: u64,
    pub text: String,
    pub class: Class,
    /// The ply a move announcement is about; for a correction, the first ply it withdraws.
    pub ply: Option<u32>,
}

/// Query answers that may wait to be said; more are dropped.
pub const MAX_QUERIES: usize = 16;

/// What became of an announcement given to the queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pushed {
    /// It is to interrupt the announcement being spoken.
    pub interrupt: bool,
    /// It was dropped: a query answer when [`MAX_QUERIES`] wait already.
    pub dropped: bool,
}

#[derive(Debug, Default)]
pub struct Queue {
    items: VecDeque<Item>,
}

impl Queue {
    /// Adds an announcement; says whether it should interrupt `speaking` (the class of the
    /// announcement being spoken, if any), or was dropped (a query answer, the queue full of
    /// them).
    pub fn push(&mut self, item: Item, speaking: Option<Class>) -> Pushed {
        if item.class == Class::Query
            && self
                .items
                .iter()
                .filter(|i| i.class == Class::Query)
                .count()
                >= MAX_QUERIES
        {
            return Pushed {
                interrupt: false,
                dropped: true,
            };
        }
        if let Some(ply) = item.ply {
            // The same ply announced again: the move was made anew. A correction of that ply
            // stays when a move comes (it may have put no move in the place of those it
            // withdrew); a later one replaces it.
            let is_move = item.class == Class::Move;
            self.items.retain(|i| {
                i.ply
                    .is_none_or(|p| p < ply || (p == ply && is_move && i.class != Class::Move))
            });
        }
        let interrupt =
            speaking == Some(Class::Query) && matches!(item.class, Class::Error | Class::Move);
        if item.class == Class::Query {
            self.items.push_back(item);
        } else {
            // Ahead of every waiting query answer, behind everything else.
            let at = self
                .items
                .iter()
                .position(|i| i.class == Class::Query)
                .unwrap_or(self.items.len());
            self.items.insert(at, item);
        }
        Pushed {
            interrupt,
            dropped: false,
        }
    }

    /// A move was taken back (or withdrawn by a correction): its announcement, and those of
    /// later plies (a correction of them too), are not to be said.
    pub fn retract_from(&mut self, ply: u32) {
        self.items.retain(|i| i.ply.is_none_or(|p| p < ply));
    }

    /// The listener silenced the speech: the answers and information waiting are not said
    /// (moves, rulings and results still are: they are the game).
    pub fn silence(&mut self) {
        self.items
            .retain(|i| !matches!(i.class, Class::Query | Class::Info));
    }

    pub fn pop(&mut self) -> Option<Item> {
        self.items.pop_front()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: u64, class: Class, ply: Option<u32>) -> Item {
        Item {
            id,
            text: format!("{id}"),
            class,
            ply,
        }
    }

    fn ids(q: &mut Queue) -> Vec<u64> {
        std::iter::from_fn(|| q.pop()).map(|i| i.id).collect()
    }

    #[test]
    fn moves_are_never_dropped_and_keep_their_order() {
        let mut q = Queue::default();
        for (id, ply) in [(1, 1), (2, 2), (3, 3)] {
            assert!(
                !q.push(item(id, Class::Move, Some(ply)), Some(Class::Move))
                    .interrupt
            );
        }
        assert_eq!(ids(&mut q), vec![1, 2, 3]);
    }

    #[test]
    fn a_move_made_anew_replaces_the_unspoken_one_and_takebacks_retract() {
        let mut q = Queue::default();
        q.push(item(1, Class::Move, Some(1)), None);
        q.push(item(2, Class::Move, Some(2)), None);
        q.push(item(3, Class::Move, Some(2)), None);
        assert_eq!(ids(&mut q), vec![1, 3]);
        q.push(item(4, Class::Move, Some(5)), None);
        q.push(item(5, Class::Info, None), None);
        q.retract_from(5);
        assert_eq!(ids(&mut q), vec![5]);
    }

    #[test]
    fn a_correction_drops_the_withdrawn_moves_and_stays_for_a_move_at_its_ply() {
        let mut q = Queue::default();
        q.push(item(1, Class::Move, Some(1)), None);
        q.push(item(2, Class::Move, Some(2)), None);
        q.push(item(3, Class::Move, Some(3)), None);
        q.push(item(4, Class::Query, None), None);
        // The correction of ply 2: plies 2 and 3 are withdrawn (the speaker retracts first).
        q.retract_from(2);
        q.push(item(5, Class::Error, Some(2)), None);
        // It withdrew two moves and put one in their place: the next move is ply 3; or none,
        // and the next move is ply 2 again.
        q.push(item(6, Class::Move, Some(2)), None);
        assert_eq!(ids(&mut q), vec![1, 5, 6, 4]);
        // A correction corrected again (or its moves taken back) before it is said: not said.
        q.push(item(7, Class::Error, Some(5)), None);
        q.push(item(8, Class::Error, Some(5)), None);
        assert_eq!(ids(&mut q), vec![8]);
        q.push(item(9, Class::Error, Some(5)), None);
        q.retract_from(4);
        assert!(q.is_empty());
    }

    #[test]
    fn errors_interrupt_queries_and_queries_interrupt_nothing() {
        let mut q = Queue::default();
        let interrupts = |q: &mut Queue, id, class, ply, speaking| {
            q.push(item(id, class, ply), Some(speaking)).interrupt
        };
        assert!(interrupts(&mut q, 1, Class::Error, None, Class::Query));
        assert!(interrupts(&mut q, 2, Class::Move, Some(1), Class::Query));
        assert!(!interrupts(&mut q, 3, Class::Query, None, Class::Move));
        assert!(!interrupts(&mut q, 4, Class::Error, None, Class::Move));
        assert!(!interrupts(&mut q, 5, Class::Info, None, Class::Query));
    }

    #[test]
    fn queries_wait_behind_everything_else() {
        let mut q = Queue::default();
        q.push(item(1, Class::Query, None), None);
        q.push(item(2, Class::Move, Some(1)), None);
        q.push(item(3, Class::Query, None), None);
        q.push(item(4, Class::Error, None), None);
        assert_eq!(ids(&mut q), vec![2, 4, 1, 3]);
        assert!(q.is_empty());
    }

    #[test]
    fn query_answers_are_bounded_and_moves_never_dropped() {
        let mut q = Queue::default();
        let n = MAX_QUERIES as u64;
        for id in 0..n {
            assert!(!q.push(item(id, Class::Query, None), None).dropped);
        }
        // The queue full of answers: one more is dropped, a move and an error are not.
        assert!(q.push(item(n, Class::Query, None), None).dropped);
        for ply in 1..=100 {
            let pushed = q.push(item(1000 + u64::from(ply), Class::Move, Some(ply)), None);
            assert!(!pushed.dropped);
        }
        assert!(!q.push(item(2000, Class::Error, None), None).dropped);
        assert_eq!(q.len(), MAX_QUERIES + 101);
        let said = ids(&mut q);
        assert_eq!(said[..100], (1001..=1100).collect::<Vec<_>>()[..]);
        assert_eq!(said[100], 2000);
        assert_eq!(said[101..], (0..n).collect::<Vec<_>>()[..]);
        // Said, they make room again.
        assert!(!q.push(item(n + 1, Class::Query, None), None).dropped);
    }
}
