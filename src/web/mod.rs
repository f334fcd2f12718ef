//! The live web view for spectators and kiosks (Art. 6.15 demonstration boards): a small HTTP
//! server, off unless configured, listening on localhost unless told otherwise.
//!
//! - `/`: the page as a broadcast shows a game: the players (names, titles, ratings from
//!   `[game]`), the event and round, the board in SVG (the last move tinted, the king in check
//!   marked), clocks, move list, result; in the announcements' language; drawn on the server
//!   (it needs no script to show the game), then updated through server-sent events; moves are
//!   also read out through an ARIA live region;
//! - `/game.pgn`: the live game in PGN, as broadcast services poll it;
//! - `/api/state`: the game as JSON; `/api/events`: the daemon's events as server-sent events.
//!
//! Only GET and HEAD requests are served; anything else is refused. The server never blocks the
//! daemon: it runs on a thread and a runtime of its own, the daemon hands it snapshots and
//! events, and a slow client only loses events (and reloads the state). Its bounds (viewers,
//! timeouts) are in `server.rs`.
//!
//! `state.rs` makes the JSON, `page.rs` the page (from `index.html`, `pieces.svg` and
//! `labels.toml`), `server.rs` serves them.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::mpsc;

mod page;
mod server;
mod state;

pub use server::serve;
pub use state::state_json;

/// The game as the server shows it: (state JSON, PGN), made once per change.
type Snapshot = Arc<(String, String)>;

/// What the server shows, handed over by the daemon. The daemon's side takes no lock that a
/// viewer may hold for longer than a pointer's copy: a snapshot is swapped in whole, and the
/// events go through a channel to the server's thread, which sends them on to each viewer.
pub struct Web {
    snapshot: Mutex<Snapshot>,
    events: mpsc::UnboundedSender<String>,
    /// The events' other end, taken by the server.
    pub(super) incoming: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Web")
    }
}

impl Default for Web {
    fn default() -> Web {
        let (events, incoming) = mpsc::unbounded_channel();
        Web {
            snapshot: Mutex::new(Arc::new((json!({}).to_string(), String::new()))),
            events,
            incoming: Mutex::new(Some(incoming)),
        }
    }
}

impl Web {
    /// The game changed: a new snapshot for `/api/state` (`state_json`) and `/game.pgn`.
    pub fn update(&self, state: String, pgn: String) {
        let new = Arc::new((state, pgn));
        let old = self
            .snapshot
            .lock()
            .map(|mut s| std::mem::replace(&mut *s, new));
        // The old one is freed here, outside the lock (or by the last viewer holding it).
        drop(old);
    }

    /// An event for `/api/events` (one JSON object).
    pub fn event(&self, json: String) {
        // No server (it has stopped) is no error.
        let _ = self.events.send(json);
    }

    /// The game: (state JSON, PGN).
    pub(super) fn snapshot(&self) -> (String, String) {
        let s = self.snapshot.lock().map(|s| Arc::clone(&s));
        s.map(|s| (s.0.clone(), s.1.clone())).unwrap_or_default()
    }
}
