//! The publisher: a board's status, state, live PGN and events, sent one at a time with QoS 1,
//! everything retained sent again after each reconnection.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, LastWill, QoS};
use tokio::sync::{mpsc, oneshot, Notify};

use super::connection::{random_suffix, spawn_connection, Net};
use super::settings::{MqttSettings, MAX_PACKET};

/// Games that ended while the broker was away, kept to be sent.
const MAX_SUPERSEDED: usize = 16;
/// Events kept for a broker that is away; older ones are dropped beyond this.
const MAX_QUEUED_EVENTS: usize = 20_000;

/// A retained value of which the newest must reach the broker.
#[derive(Default)]
struct Latest {
    value: Option<String>,
    version: u64,
    delivered: u64,
}

impl Latest {
    fn set(&mut self, v: String) {
        if self.value.as_ref() != Some(&v) {
            self.value = Some(v);
            self.version += 1;
        }
    }

    fn due(&self) -> bool {
        self.value.is_some() && self.delivered < self.version
    }
}

/// What is on its way to the broker (one message at a time).
#[derive(Clone, Copy)]
enum Sent {
    Status,
    /// The last PGN of a game that ended while the broker was away.
    Superseded,
    State(u64),
    Pgn(u64),
    Event,
    Offline,
}

enum Input {
    Update(String, String, String),
    Event(String),
    Finish(oneshot::Sender<()>),
}

/// Publishes one board's game. Cheap to call from the daemon's loop: it never waits for the
/// broker.
pub struct Publisher {
    tx: mpsc::UnboundedSender<Input>,
    task: tokio::task::JoinHandle<()>,
    connection: tokio::task::JoinHandle<()>,
    /// Cuts the connection task's wait short (at the end: the broker may be back).
    wake: Arc<Notify>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Publisher")
    }
}

impl Publisher {
    /// Starts publishing (on the current tokio runtime); fails only on settings it cannot use
    /// (a certificate file that cannot be read). The broker need not be there yet.
    pub fn start(settings: &MqttSettings) -> Result<Publisher, String> {
        let id = settings.board_id();
        let base = format!("{}/{id}", settings.prefix);
        settings.warn_clear_password();
        let mut o = settings.options(&format!("chessboardd-{id}-{}", random_suffix()))?;
        o.set_last_will(LastWill::new(
            format!("{base}/status"),
            "offline",
            QoS::AtLeastOnce,
            true,
        ));
        let (net_tx, net_rx) = mpsc::unbounded_channel();
        let wake = Arc::new(Notify::new());
        let connection = spawn_connection::<rumqttc::EventLoop>(o, net_tx, Some(wake.clone()));
        let (tx, rx) = mpsc::unbounded_channel();
        let broker = settings.url.to_string();
        let task = tokio::spawn(publish_loop(base, broker, rx, net_rx));
        Ok(Publisher {
            tx,
            task,
            connection,
            wake,
        })
    }

    /// The game changed: its new state (JSON) and PGN. `game` tells one game from the next
    /// (when it began): a game's last PGN still reaches the broker when the next game has
    /// begun meanwhile.
    pub fn update(&self, state: String, pgn: String, game: String) {
        let _ = self.tx.send(Input::Update(state, pgn, game));
    }

    /// An event (one JSON object).
    pub fn event(&self, json: String) {
        let _ = self.tx.send(Input::Event(json));
    }

    /// Delivers what is queued (waiting at most `within`), says `offline` and disconnects.
    pub async fn finish(self, within: Duration) {
        let (done_tx, done_rx) = oneshot::channel();
        let _ = self.tx.send(Input::Finish(done_tx));
        // A connection waiting to try again tries at once.
        self.wake.notify_one();
        let _ = tokio::time::timeout(within, done_rx).await;
        self.task.abort();
        self.connection.abort();
    }
}

/// What is still to reach the broker.
#[derive(Default)]
struct Outbox {
    status_due: bool,
    state: Latest,
    pgn: Latest,
    events: VecDeque<String>,
    /// Events dropped because the queue was full.
    dropped: u64,
    /// The game whose PGN `pgn` holds.
    game: String,
    /// The last PGN of games that ended before it reached the broker, oldest first.
    superseded: VecDeque<String>,
}

impl Outbox {
    /// The next message to send (topic level, payload, retained): the status, then the PGN
    /// (what a broadcast needs), the state, the events; `offline` last when finishing.
    fn next(&self, finishing: bool) -> Option<(Sent, &'static str, String, bool)> {
        if self.status_due {
            Some((Sent::Status, "status", "online".to_string(), true))
        } else if let Some(p) = self.superseded.front() {
            Some((Sent::Superseded, "pgn", p.clone(), true))
        } else if self.pgn.due() {
            let v = self.pgn.value.clone().unwrap_or_default();
            Some((Sent::Pgn(self.pgn.version), "pgn", v, true))
        } else if self.state.due() {
            let v = self.state.value.clone().unwrap_or_default();
            Some((Sent::State(self.state.version), "state", v, true))
        } else if let Some(e) = self.events.front() {
            Some((Sent::Event, "events", e.clone(), false))
        } else if finishing {
            Some((Sent::Offline, "status", "offline".to_string(), true))
        } else {
            None
        }
    }

    /// `sent` is done with: acknowledged by the broker, or left out for good.
    fn done(&mut self, sent: Sent) {
        match sent {
            Sent::Status => self.status_due = false,
            Sent::Superseded => {
                self.superseded.pop_front();
            }
            Sent::State(v) => self.state.delivered = self.state.delivered.max(v),
            Sent::Pgn(v) => self.pgn.delivered = self.pgn.delivered.max(v),
            Sent::Event => {
                self.events.pop_front();
            }
            Sent::Offline => {}
        }
    }

    /// Queues an event; when the queue is full the oldest not on its way is dropped.
    fn event(&mut self, e: String, in_flight: bool) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            // The front may be waiting for its acknowledgement: keep it.
            self.events.remove(usize::from(in_flight));
            self.dropped += 1;
            if self.dropped == 1 || self.dropped.is_power_of_two() {
                tracing::warn!(
                    "mqtt: the broker is away; {} old events dropped",
                    self.dropped
                );
            }
        }
        self.events.push_back(e);
    }

    /// A game's new PGN; the last of the game before, when it has not reached the broker, is
    /// kept to be sent first.
    fn set_pgn(&mut self, pgn: String, game: String) {
        if game != self.game {
            if let (true, Some(last)) = (self.pgn.due(), &self.pgn.value) {
                if self.superseded.len() >= MAX_SUPERSEDED {
                    self.superseded.pop_front();
                }
                self.superseded.push_back(last.clone());
            }
            self.game = game;
        }
        self.pgn.set(pgn);
    }

    /// A new connection (a new session): everything retained is sent again.
    fn connected(&mut self) {
        self.status_due = true;
        self.state.delivered = 0;
        self.pgn.delivered = 0;
    }
}

/// When the connection fails this many times in a row at messages of one topic, the message
/// is left out, and from then on every message as large: a broker that drops the connection at
/// a message larger than it takes would otherwise get it again for ever, and nothing after it.
const MAX_FAILURES: u32 = 3;

async fn publish_loop(
    base: String,
    broker: String,
    mut rx: mpsc::UnboundedReceiver<Input>,
    mut net: mpsc::UnboundedReceiver<Net<AsyncClient>>,
) {
    // The client of the connection that is up; `None` while the broker is away.
    let mut client: Option<AsyncClient> = None;
    let mut out = Outbox::default();
    let mut in_flight: Option<(Sent, String, usize)> = None;
    // The topic the connection last failed at, and how many times in a row.
    let mut failing: Option<(String, u32)> = None;
    // The size of a message the broker would not take: larger ones are not sent.
    let mut too_big: Option<usize> = None;
    // The largest message the broker took: a failure at a smaller one is not its size.
    let mut largest_taken = 0usize;
    let mut finishing: Option<oneshot::Sender<()>> = None;
    let mut last_error = String::new();
    loop {
        // The next message, when the broker is there and nothing is waiting for its ack.
        if let (Some(c), None) = (&client, &in_flight) {
            if let Some((sent, level, payload, retain)) = out.next(finishing.is_some()) {
                let topic = format!("{base}/{level}");
                let size = payload.len();
                let status = matches!(sent, Sent::Status | Sent::Offline);
                if !status
                    && (size + topic.len() + 16 > MAX_PACKET || too_big.is_some_and(|t| size >= t))
                {
                    tracing::debug!("mqtt: {topic}: {size} bytes, more than the broker takes");
                    out.done(sent);
                    continue;
                }
                if c.try_publish(topic.clone(), QoS::AtLeastOnce, retain, payload)
                    .is_ok()
                {
                    in_flight = Some((sent, topic, size));
                }
            }
        }
        tokio::select! {
            input = rx.recv(), if finishing.is_none() => match input {
                Some(Input::Update(s, p, game)) => {
                    out.state.set(s);
                    out.set_pgn(p, game);
                }
                Some(Input::Event(e)) => out.event(e, matches!(in_flight, Some((Sent::Event, ..)))),
                Some(Input::Finish(done)) => finishing = Some(done),
                None => return,
            },
            n = net.recv() => match n {
                Some(Net::Connected(c)) => {
                    tracing::info!("mqtt: connected to {broker}");
                    client = Some(c);
                    last_error.clear();
                    in_flight = None;
                    out.connected();
                }
                Some(Net::Acked) => {
                    let acked = in_flight.as_ref().map(|i| i.1.as_str());
                    if failing.as_ref().is_some_and(|f| Some(f.0.as_str()) == acked) {
                        failing = None;
                    }
                    largest_taken = largest_taken.max(in_flight.as_ref().map_or(0, |i| i.2));
                    match in_flight.take() {
                        Some((Sent::Offline, ..)) => {
                            if let Some(c) = &client {
                                let _ = c.try_disconnect();
                            }
                            if let Some(done) = finishing.take() {
                                let _ = done.send(());
                            }
                            return;
                        }
                        Some((sent, ..)) => out.done(sent),
                        None => {}
                    }
                }
                Some(Net::Down(e)) => {
                    if client.is_some() || e != last_error {
                        tracing::warn!("mqtt: {broker}: {e}; connecting again");
                    }
                    last_error = e;
                    client = None;
                    if let Some((sent, topic, size)) = in_flight.take() {
                        let n = match failing.take() {
                            Some((t, n)) if t == topic => n + 1,
                            _ => 1,
                        };
                        let status = matches!(sent, Sent::Status | Sent::Offline);
                        if n >= MAX_FAILURES && (status || size <= largest_taken) {
                            // Not its size: the broker drops the connection at this topic.
                            tracing::error!(
                                "mqtt: {topic}: the broker dropped the connection at this \
                                 message {n} times (is this board allowed to publish there? \
                                 see the broker's access list); trying again"
                            );
                        } else if n >= MAX_FAILURES {
                            tracing::error!(
                                "mqtt: {topic}: the broker dropped the connection at this \
                                 message ({size} bytes) {n} times: it is left out, and every \
                                 message of {size} bytes or more (does the broker limit the \
                                 size of messages?)"
                            );
                            out.done(sent);
                            too_big = Some(too_big.map_or(size, |t| t.min(size)));
                        } else {
                            failing = Some((topic, n));
                        }
                    }
                }
                Some(Net::Message(..)) => {}
                None => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_the_oldest_event_not_on_its_way() {
        let mut out = Outbox::default();
        for i in 0..MAX_QUEUED_EVENTS {
            out.event(i.to_string(), false);
        }
        // The first is on its way to the broker: the second goes.
        out.event("new".into(), true);
        assert_eq!(out.events.len(), MAX_QUEUED_EVENTS);
        assert_eq!(out.events[0], "0");
        assert_eq!(out.events[1], "2");
        // Its acknowledgement takes the first off the queue, not another.
        out.done(Sent::Event);
        assert_eq!(out.events[0], "2");
        // Full again, and nothing on its way: the oldest goes.
        out.event("fills".into(), false);
        assert_eq!(out.events[0], "2");
        out.event("newer".into(), false);
        assert_eq!(out.events[0], "3");
        assert_eq!(out.events.back().map(String::as_str), Some("newer"));
        assert_eq!(out.dropped, 2);
    }

    #[test]
    fn after_a_reconnection_everything_retained_is_sent_again_pgn_first() {
        let mut out = Outbox::default();
        out.state.set("{}".into());
        out.pgn.set("1. e4 *".into());
        out.event("{\"type\":\"move\"}".into(), false);
        out.connected();
        let mut order = Vec::new();
        while let Some((sent, level, _, retain)) = out.next(true) {
            order.push((level, retain));
            if matches!(sent, Sent::Offline) {
                break;
            }
            out.done(sent);
        }
        assert_eq!(
            order,
            [
                ("status", true),
                ("pgn", true),
                ("state", true),
                ("events", false),
                ("status", true)
            ]
        );
        // Delivered and unchanged: nothing to send; a new connection sends them again.
        assert!(out.next(false).is_none());
        out.connected();
        assert!(matches!(out.next(false), Some((Sent::Status, ..))));
    }

    /// What the publisher has handed a connection: (topic, payload).
    fn handed(el: &mut rumqttc::EventLoop) -> Vec<(String, String)> {
        el.clean();
        el.pending
            .drain(..)
            .filter_map(|r| match r {
                rumqttc::Request::Publish(p) => {
                    Some((p.topic, String::from_utf8_lossy(&p.payload).into_owned()))
                }
                _ => None,
            })
            .collect()
    }

    fn connection() -> (AsyncClient, rumqttc::EventLoop) {
        AsyncClient::new(rumqttc::MqttOptions::new("test", "localhost", 1), 16)
    }

    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[test]
    fn the_publisher_through_failures_a_game_missed_and_the_end() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (input, input_rx) = mpsc::unbounded_channel();
            let (net, net_rx) = mpsc::unbounded_channel();
            let task = tokio::spawn(publish_loop("c/b".into(), "test".into(), input_rx, net_rx));
            let topics =
                |h: Vec<(String, String)>| h.into_iter().map(|(t, _)| t).collect::<Vec<_>>();
            input
                .send(Input::Update("{}".into(), "1. e4 *".into(), "g1".into()))
                .unwrap();
            // The connection fails three times at once, the status on its way each time: that
            // is no message too large, and the status is sent again, then the rest.
            for _ in 0..MAX_FAILURES + 1 {
                let (c, mut el) = connection();
                net.send(Net::Connected(c)).unwrap();
                settle().await;
                assert_eq!(topics(handed(&mut el)), ["c/b/status"]);
                net.send(Net::Down("reset".into())).unwrap();
                settle().await;
            }
            let (c, mut el) = connection();
            net.send(Net::Connected(c)).unwrap();
            for topic in ["c/b/status", "c/b/pgn", "c/b/state"] {
                settle().await;
                assert_eq!(topics(handed(&mut el)), [topic]);
                net.send(Net::Acked).unwrap();
            }
            settle().await;
            // The broker goes away; meanwhile the game ends and the next begins. Its end still
            // reaches the broker, before the new game.
            net.send(Net::Down("gone".into())).unwrap();
            for (pgn, game) in [("1. e4 e5 2. Qh5 1-0", "g1"), ("*", "g2")] {
                input
                    .send(Input::Update("{}".into(), pgn.into(), game.into()))
                    .unwrap();
            }
            settle().await;
            let (c, mut el) = connection();
            net.send(Net::Connected(c)).unwrap();
            let mut sent = Vec::new();
            for _ in 0..4 {
                settle().await;
                sent.extend(handed(&mut el));
                net.send(Net::Acked).unwrap();
            }
            let pgns: Vec<&str> = sent
                .iter()
                .filter(|(t, _)| t == "c/b/pgn")
                .map(|(_, p)| p.as_str())
                .collect();
            assert_eq!(pgns, ["1. e4 e5 2. Qh5 1-0", "*"], "{sent:?}");
            // The end: offline, then the loop is over.
            let (done, finished) = oneshot::channel();
            input.send(Input::Finish(done)).unwrap();
            settle().await;
            assert_eq!(
                handed(&mut el),
                [("c/b/status".to_string(), "offline".to_string())]
            );
            net.send(Net::Acked).unwrap();
            settle().await;
            assert!(finished.await.is_ok());
            assert!(task.is_finished());
        });
    }
}
