//! The announcement queue (docs/speech.md, "Priorities"). Pure: the speech thread asks it what to
//! say next and whether a new announcement interrupts the one being spoken.
//!
//! - A move announcement is never dropped while its move stands; one whose move was taken back
//!   before it was spoken is dropped (never speak a move that was not completed), and a newer
//!   announcement of the same ply (the move made again) replaces an unspoken one.
//! - Errors and move announcements interrupt query answers; queries never interrupt anything
//!   and wait behind everything else.

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
    /// The ply a move announcement is about.
    pub ply: Option<u32>,
}

#[derive(Debug, Default)]
pub struct Queue {
    items: VecDeque<Item>,
}

impl Queue {
    /// Adds an announcement. Returns true when it should interrupt `speaking` (the class of the
    /// announcement being spoken, if any).
    pub fn push(&mut self, item: Item, speaking: Option<Class>) -> bool {
        if let Some(ply) = item.ply {
            // The same ply announced again: the move was made anew.
            self.items.retain(|i| i.ply.is_none_or(|p| p < ply));
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
        interrupt
    }

    /// A move was taken back: its announcement, and those of later plies, are not to be said.
    pub fn retract_from(&mut self, ply: u32) {
        self.items.retain(|i| i.ply.is_none_or(|p| p < ply));
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
            assert!(!q.push(item(id, Class::Move, Some(ply)), Some(Class::Move)));
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
    fn errors_interrupt_queries_and_queries_interrupt_nothing() {
        let mut q = Queue::default();
        assert!(q.push(item(1, Class::Error, None), Some(Class::Query)));
        assert!(q.push(item(2, Class::Move, Some(1)), Some(Class::Query)));
        assert!(!q.push(item(3, Class::Query, None), Some(Class::Move)));
        assert!(!q.push(item(4, Class::Error, None), Some(Class::Move)));
        assert!(!q.push(item(5, Class::Info, None), Some(Class::Query)));
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
}
