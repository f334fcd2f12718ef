//! The broker as an output: the game's state and live PGN with every batch, each event, and at
//! the end the game as it ends, what is still queued, then `offline`.

use std::time::Duration;

use super::{Batch, EventJson, Finishing, Output};
use crate::engine::Event;
use crate::mqtt::{MqttSettings, Publisher};

/// At the end, how long the broker is given to take what is still queued.
const MQTT_FLUSH: Duration = Duration::from_secs(3);

/// The game published to a broker.
pub struct Mqtt {
    /// `None` once finished.
    publisher: Option<Publisher>,
    json: EventJson,
}

impl Mqtt {
    /// Starts publishing; a broker that cannot be used is logged, and the daemon goes on
    /// without it.
    pub fn start(settings: &MqttSettings, json: EventJson) -> Option<Mqtt> {
        match Publisher::start(settings) {
            Ok(p) => {
                tracing::info!(
                    "publishing to {} as {}/{}",
                    settings.url,
                    settings.prefix,
                    settings.board_id()
                );
                Some(Mqtt {
                    publisher: Some(p),
                    json,
                })
            }
            Err(e) => {
                tracing::error!("mqtt: {e}; going on without it");
                None
            }
        }
    }

    fn update(&self, batch: &Batch) {
        if let Some(p) = &self.publisher {
            let (pgn, game) = batch.live_pgn();
            p.update(batch.state(), pgn, game);
        }
    }
}

impl Output for Mqtt {
    fn batch(&mut self, batch: &mut Batch) {
        self.update(batch);
    }

    fn event(&mut self, board: usize, event: &Event) {
        if let Some(p) = &self.publisher {
            p.event(self.json.of(board, event));
        }
    }

    fn finish<'a>(&'a mut self, batch: &'a mut Batch) -> Finishing<'a> {
        self.update(batch);
        for (b, e) in batch.events.iter() {
            self.event(*b, e);
        }
        let publisher = self.publisher.take();
        Box::pin(async move {
            if let Some(p) = publisher {
                p.finish(MQTT_FLUSH).await;
            }
        })
    }
}
