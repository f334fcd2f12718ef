//! The web view as an output: the game's state and live PGN with every batch, each event.

use std::sync::Arc;

use super::{Batch, EventJson, Output};
use crate::engine::Event;

/// The live web view.
pub struct WebView {
    web: Arc<crate::web::Web>,
    json: EventJson,
}

impl WebView {
    /// Serves the web view at `addr`; an address that cannot be served is logged, and the
    /// daemon goes on without it.
    pub async fn start(addr: &str, json: EventJson) -> Option<WebView> {
        let web = Arc::new(crate::web::Web::default());
        match crate::web::serve(addr, web.clone()).await {
            Ok(bound) => {
                tracing::info!("web view at http://{bound}/");
                Some(WebView { web, json })
            }
            Err(e) => {
                tracing::error!("web view at {addr}: {e}; going on without it");
                None
            }
        }
    }
}

impl Output for WebView {
    fn batch(&mut self, batch: &mut Batch) {
        let (pgn, _) = batch.live_pgn();
        self.web.update(batch.state(), pgn);
    }

    fn event(&mut self, board: usize, event: &Event) {
        self.web.event(self.json.of(board, event));
    }
}
