//! Where the daemon's events go: one list of outputs, each handed every batch of events in the
//! same order, and finished once at the end.
//!
//! The list is built in [`super::run_boards`]; its order is a guarantee: the record comes first
//! (a move is on disk before it is published or said), the caller's own handling (speech, the
//! events printed) last. Adding an output is one file here and one line where the list is
//! built.

pub mod caller;
pub mod journal;
pub mod lights;
pub mod mqtt;
pub mod notify;
pub mod web;

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;

use crate::engine::{Engine, Event, EventKind, Millis};

/// The events of one turn of the daemon's loop, and the game as it is after them.
pub struct Batch<'a> {
    /// The game (the leading board's engine).
    pub leader: &'a Engine,
    /// The daemon clock's time.
    pub now: Millis,
    /// The events, each with the index of its board. An output may add events of its own (the
    /// record's news); those after it in the list see them.
    pub events: &'a mut Vec<(usize, Event)>,
    /// When the game began (`Date`, `Time`): what tells this game from the next in the live
    /// PGN. The record's time when there is a record.
    pub began: &'a mut (String, String),
    state: OnceCell<String>,
    pgn: OnceCell<(String, String)>,
}

impl<'a> Batch<'a> {
    pub fn new(
        leader: &'a Engine,
        now: Millis,
        events: &'a mut Vec<(usize, Event)>,
        began: &'a mut (String, String),
    ) -> Batch<'a> {
        Batch {
            leader,
            now,
            events,
            began,
            state: OnceCell::new(),
            pgn: OnceCell::new(),
        }
    }

    /// Whether a new game is set up in this batch.
    pub fn new_game(&self) -> bool {
        self.events
            .iter()
            .any(|(_, e)| matches!(e.kind, EventKind::GameStart { .. }))
    }

    /// The game as JSON (the web view's `/api/state`, the broker's `state`).
    pub fn state(&self) -> String {
        self.state
            .get_or_init(|| crate::web::state_json(self.leader, self.now, &self.began.0))
            .clone()
    }

    /// The live game's PGN, with its `Date` and `Time`, and what tells it from the next game.
    pub fn live_pgn(&self) -> (String, String) {
        self.pgn
            .get_or_init(|| {
                let (date, time) = &*self.began;
                let pgn = self
                    .leader
                    .pgn_with(&[("Date", date.clone()), ("Time", time.clone())]);
                (pgn, format!("{date} {time}"))
            })
            .clone()
    }
}

/// An event as JSON, naming its board when there are several.
#[derive(Clone, Debug, Default)]
pub struct EventJson {
    names: Vec<String>,
}

impl EventJson {
    pub fn new(board_names: &[String]) -> EventJson {
        EventJson {
            names: board_names.to_vec(),
        }
    }

    pub fn of(&self, board: usize, e: &Event) -> String {
        e.to_json_on(
            (self.names.len() > 1).then(|| self.names.get(board).map_or("", String::as_str)),
        )
    }
}

/// What the daemon's `finish` hands back: work to await (the broker's last messages).
pub type Finishing<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// One of the daemon's outputs.
pub trait Output {
    /// A batch of events is about to be handed out. An output that must act before the events
    /// go anywhere does it here (the record writes them), and may add events of its own.
    fn batch(&mut self, _batch: &mut Batch) {}

    /// One event of the batch, on board `board`, in order.
    fn event(&mut self, board: usize, event: &Event);

    /// Whether work waits to be tried again (the record, on a full disk).
    fn behind(&self) -> bool {
        false
    }

    /// Tries the work that waits again; may add events to `batch` (said on the next turn).
    fn retry(&mut self, _batch: &mut Batch) {}

    /// The daemon stops: the game as it ends, with the events not handed out yet.
    fn finish<'a>(&'a mut self, _batch: &'a mut Batch) -> Finishing<'a> {
        Box::pin(async {})
    }
}

/// Hands a batch to every output: first the batch as a whole, then each event in turn to
/// every output in the list's order. Nothing is done for an empty batch.
pub fn hand_out(outputs: &mut [Box<dyn Output + '_>], batch: &mut Batch) {
    if batch.events.is_empty() {
        return;
    }
    if batch.new_game() {
        *batch.began = crate::record::local_now();
    }
    for o in outputs.iter_mut() {
        o.batch(batch);
    }
    for (b, e) in batch.events.drain(..) {
        for o in outputs.iter_mut() {
            o.event(b, &e);
        }
    }
}

/// Hands every output a batch without events: the game changed otherwise (the settings were
/// reloaded). Events the outputs add (the record's news) are handed out with the next batch.
pub fn refresh(outputs: &mut [Box<dyn Output + '_>], batch: &mut Batch) {
    if !batch.events.is_empty() {
        hand_out(outputs, batch);
        return;
    }
    for o in outputs.iter_mut() {
        o.batch(batch);
    }
}

/// Gives every output the work that waits a try.
pub fn retry(outputs: &mut [Box<dyn Output + '_>], batch: &mut Batch) {
    for o in outputs.iter_mut().filter(|o| o.behind()) {
        o.retry(batch);
    }
}

/// Finishes every output in the list's order, each after the one before it is done.
pub async fn finish(outputs: &mut [Box<dyn Output + '_>], batch: &mut Batch<'_>) {
    for o in outputs.iter_mut() {
        o.finish(batch).await;
    }
    batch.events.clear();
}
