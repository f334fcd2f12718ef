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
//! Only GET requests are served; anything else is refused. The server never blocks the daemon:
//! the daemon hands it snapshots and events, and a slow client only loses events (and reloads
//! the state).
//!
//! `state.rs` makes the JSON, `page.rs` the page (from `index.html`, `pieces.svg` and
//! `labels.toml`), `server.rs` serves them.

use std::sync::Mutex;

use serde_json::json;
use tokio::sync::broadcast;

mod page;
mod server;
mod state;

pub use server::serve;
pub use state::state_json;

/// What the server shows, handed over by the daemon.
pub struct Web {
    snapshot: Mutex<(String, String)>,
    pub(super) events: broadcast::Sender<String>,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Web")
    }
}

impl Default for Web {
    fn default() -> Web {
        Web {
            snapshot: Mutex::new((json!({}).to_string(), String::new())),
            events: broadcast::channel(256).0,
        }
    }
}

impl Web {
    /// The game changed: a new snapshot for `/api/state` (`state_json`) and `/game.pgn`.
    pub fn update(&self, state: String, pgn: String) {
        if let Ok(mut s) = self.snapshot.lock() {
            *s = (state, pgn);
        }
    }

    /// An event for `/api/events` (one JSON object).
    pub fn event(&self, json: String) {
        // No subscriber is no error.
        let _ = self.events.send(json);
    }

    pub(super) fn snapshot(&self) -> (String, String) {
        self.snapshot.lock().map(|s| s.clone()).unwrap_or_default()
    }
}
