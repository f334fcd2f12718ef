//! MQTT: a board publishes its game to a broker, and `chessboardd broadcast` gathers the games
//! of a round from it (one live PGN per board and one file for the round).
//!
//! Topics, under a prefix (`chessboardd` by default) and the board's id:
//!
//! - `PREFIX/ID/status`: `online` or `offline`, retained (`offline` is also the last will, sent
//!   by the broker when the board vanishes);
//! - `PREFIX/ID/state`: the game as JSON (as the web view's `/api/state`), retained;
//! - `PREFIX/ID/pgn`: the live game in PGN, retained;
//! - `PREFIX/ID/events`: each event of the daemon as JSON (as `--events-json`), not retained.
//!
//! Everything is sent with QoS 1, one message at a time: a message counts as delivered when the
//! broker has acknowledged it, and is sent again after a reconnection until it is. After each
//! connection the board sends its status, state and PGN again, so a broker restarted without
//! persistence has the whole game again at once; events queued while the broker was away follow
//! (at least once: a subscriber may see one twice).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rumqttc::{
    AsyncClient, Event, LastWill, MqttOptions, Packet, QoS, TlsConfiguration, Transport,
};
use tokio::sync::{mpsc, oneshot};

/// The largest message sent or taken (a long game's state is some tens of kilobytes).
const MAX_PACKET: usize = 1 << 20;
/// Events kept for a broker that is away; older ones are dropped beyond this.
const MAX_QUEUED_EVENTS: usize = 20_000;
/// The broker is asked to drop a client silent for longer than this; the client pings sooner.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The first wait before connecting again; it doubles up to `MAX_RETRY`.
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(5);
/// The default topic prefix.
pub const DEFAULT_PREFIX: &str = "chessboardd";
/// The round file `broadcast` writes beside the boards' files.
pub const ROUND_FILE: &str = "round.pgn";

/// A broker's address: `mqtt://[USER[:PASSWORD]@]HOST[:PORT]`, `mqtts://` for TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerUrl {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
}

impl std::str::FromStr for BrokerUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<BrokerUrl, String> {
        let accepted = "accepted: mqtt://HOST[:PORT] (1883 by default) or mqtts://HOST[:PORT] \
                        for TLS (8883), optionally with USER:PASSWORD@ before the host";
        let (scheme, rest) = s
            .trim()
            .split_once("://")
            .ok_or_else(|| format!("'{s}' is not a broker address ({accepted})"))?;
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "mqtt" | "tcp" => false,
            "mqtts" | "ssl" => true,
            other => return Err(format!("'{other}://' is not a broker scheme ({accepted})")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let (username, password) = match user {
            Some(u) => match u.split_once(':') {
                Some((n, p)) => (Some(n.to_string()), Some(p.to_string())),
                None => (Some(u.to_string()), None),
            },
            None => (None, None),
        };
        // [::1]:1883, host:1883, host
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("'{s}': an IPv6 address needs its closing ']'"))?;
            (h, after.strip_prefix(':'))
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() || host.contains(['/', '?', '#', ' ']) {
            return Err(format!("'{s}' has no host name ({accepted})"));
        }
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("'{p}' is not a port (accepted: 1 to 65535)"))?,
            None if tls => 8883,
            None => 1883,
        };
        Ok(BrokerUrl {
            tls,
            host: host.to_string(),
            port,
            username,
            password,
        })
    }
}

impl std::fmt::Display for BrokerUrl {
    /// The address without the password, for logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        let user = self
            .username
            .as_deref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        if self.host.contains(':') {
            write!(f, "{scheme}://{user}[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{user}{}:{}", self.host, self.port)
        }
    }
}

/// What a connection to the broker needs: the `[mqtt]` section of the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MqttSettings {
    pub url: BrokerUrl,
    /// The board's id in the topics; `None`: the host's name.
    pub board_id: Option<String>,
    pub prefix: String,
    /// The user name and password (also taken from the URL; the config's win).
    pub username: Option<String>,
    pub password: Option<String>,
    /// TLS: the certificate authority that signed the broker's certificate (PEM); `None`: the
    /// system's (`/etc/ssl/certs/ca-certificates.crt`).
    pub ca_file: Option<PathBuf>,
    /// TLS: the board's own certificate and key (PEM), for brokers that ask for one.
    pub client_auth: Option<(PathBuf, PathBuf)>,
}

impl MqttSettings {
    pub fn new(url: BrokerUrl) -> MqttSettings {
        MqttSettings {
            url,
            board_id: None,
            prefix: DEFAULT_PREFIX.to_string(),
            username: None,
            password: None,
            ca_file: None,
            client_auth: None,
        }
    }

    /// The board's id: as configured, else the host's name.
    pub fn board_id(&self) -> String {
        self.board_id.clone().unwrap_or_else(|| {
            let name = host_name();
            let id: String = name
                .chars()
                .map(|c| if id_char(c) { c } else { '-' })
                .collect();
            if id.is_empty() {
                "board".into()
            } else {
                id
            }
        })
    }

    /// The user name and password to log in with, if any.
    fn login(&self) -> Option<(String, String)> {
        let user = self.username.clone().or(self.url.username.clone())?;
        let password = self.password.clone().or(self.url.password.clone());
        Some((user, password.unwrap_or_default()))
    }

    /// The TLS transport for an mqtts:// url (`None`: plain TCP).
    fn tls(&self) -> Result<Option<Transport>, String> {
        if !self.url.tls {
            return Ok(None);
        }
        let ca_path = self
            .ca_file
            .clone()
            .unwrap_or_else(|| PathBuf::from(SYSTEM_CA));
        let ca = read_pem(&ca_path, "CERTIFICATE")?;
        let client_auth = match &self.client_auth {
            Some((cert, key)) => Some((read_pem(cert, "CERTIFICATE")?, read_pem(key, "KEY")?)),
            None => None,
        };
        Ok(Some(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth,
        })))
    }

    /// The publishing connection's options (MQTT 3.1.1) for a client called `client_id`.
    fn options(&self, client_id: &str) -> Result<MqttOptions, String> {
        let mut o = MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        o.set_keep_alive(KEEP_ALIVE);
        o.set_max_packet_size(MAX_PACKET, MAX_PACKET);
        o.set_clean_session(true);
        if let Some((u, p)) = self.login() {
            o.set_credentials(u, p);
        }
        if let Some(t) = self.tls()? {
            o.set_transport(t);
        }
        Ok(o)
    }

    /// The subscribing connection's options (MQTT 5, so that the broker itself keeps back a
    /// message larger than `MAX_PACKET` instead of sending it and losing the connection).
    fn options_v5(&self, client_id: &str) -> Result<rumqttc::v5::MqttOptions, String> {
        let mut o = rumqttc::v5::MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        o.set_keep_alive(KEEP_ALIVE);
        o.set_max_packet_size(Some(MAX_PACKET as u32));
        o.set_clean_start(true);
        if let Some((u, p)) = self.login() {
            o.set_credentials(u, p);
        }
        if let Some(t) = self.tls()? {
            o.set_transport(t);
        }
        Ok(o)
    }
}

/// Debian's bundle of the certificate authorities the system trusts.
const SYSTEM_CA: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Reads a PEM file that must hold a `what` ("CERTIFICATE", "KEY").
pub fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let holds = text
        .lines()
        .any(|l| l.starts_with("-----BEGIN ") && l.contains(what));
    if !holds {
        return Err(format!(
            "{}: no PEM {} in it (-----BEGIN ... {what}-----)",
            path.display(),
            what.to_lowercase()
        ));
    }
    Ok(bytes)
}

/// A character a board id may have (it is a topic level and a file name).
pub fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Checks a board id: letters, digits, `-`, `_` and `.`, 1 to 64 of them, not `round`.
pub fn check_board_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 64 || !id.chars().all(id_char) || id.starts_with('.') {
        return Err(format!(
            "'{id}' is not a board id (accepted: 1 to 64 letters, digits, '-', '_' and '.', \
             not starting with '.')"
        ));
    }
    if id == ROUND_FILE.trim_end_matches(".pgn") {
        return Err(format!(
            "'{id}' is taken by the round file (round.pgn); choose another id"
        ));
    }
    Ok(())
}

/// Checks a topic prefix: one or more topic levels, without wildcards.
pub fn check_prefix(p: &str) -> Result<(), String> {
    if p.is_empty()
        || p.starts_with('/')
        || p.ends_with('/')
        || p.contains("//")
        || p.contains(['+', '#', '\0'])
    {
        return Err(format!(
            "'{p}' is not a topic prefix (accepted: topic levels such as \"chessboardd\" or \
             \"club/round3\", without '+', '#' or a '/' at either end)"
        ));
    }
    Ok(())
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// A connection error, with what to do about it when that is known.
fn explain(e: &str) -> String {
    let hint = if e.contains("NotAuthorized") || e.contains("BadUserNamePassword") {
        "check mqtt.username and mqtt.password or mqtt.password_file"
    } else if e.contains("UnknownIssuer") {
        "the broker's certificate is not signed by an authority trusted here: give its \
         authority's certificate as mqtt.ca_file"
    } else if e.contains("NotValidForName") {
        "the broker's certificate is for another name: use that name in the url"
    } else if e.contains("Connection refused (os error") {
        "no broker listens there (is it running, is the port right?)"
    } else {
        return e.to_string();
    };
    format!("{e} ({hint})")
}

/// What the connection task hears from the broker. `Connected` brings the client of the new
/// connection: each connection has a client (and a request queue) of its own, so nothing queued
/// for a connection that failed goes out on the next one, where its acknowledgement could be
/// taken for another message's.
enum Net<C> {
    Connected(C),
    Acked,
    Down(String),
    Message(String, Vec<u8>),
}

/// An MQTT connection of either protocol version, as the connection task sees it.
trait Connection: Sized + Send + 'static {
    type Client: Clone + Send + 'static;
    type Options: Clone + Send + 'static;
    /// A client and its connection (not yet connected).
    fn open(o: Self::Options) -> (Self::Client, Self);
    /// What the next poll brings (`None`: nothing of interest).
    fn next(&mut self) -> impl std::future::Future<Output = Option<Net<()>>> + Send;
}

impl Connection for rumqttc::EventLoop {
    type Client = AsyncClient;
    type Options = MqttOptions;

    fn open(o: MqttOptions) -> (AsyncClient, Self) {
        AsyncClient::new(o, 16)
    }

    async fn next(&mut self) -> Option<Net<()>> {
        Some(match self.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(ack))) => {
                if ack.code != rumqttc::ConnectReturnCode::Success {
                    Net::Down(explain(&format!("refused: {:?}", ack.code)))
                } else {
                    Net::Connected(())
                }
            }
            Ok(Event::Incoming(Packet::PubAck(_))) => Net::Acked,
            Ok(Event::Incoming(Packet::Publish(p))) => {
                Net::Message(p.topic.clone(), p.payload.to_vec())
            }
            Ok(_) => return None,
            Err(e) => Net::Down(explain(&e.to_string())),
        })
    }
}

impl Connection for rumqttc::v5::EventLoop {
    type Client = rumqttc::v5::AsyncClient;
    type Options = rumqttc::v5::MqttOptions;

    fn open(o: rumqttc::v5::MqttOptions) -> (rumqttc::v5::AsyncClient, Self) {
        rumqttc::v5::AsyncClient::new(o, 16)
    }

    async fn next(&mut self) -> Option<Net<()>> {
        use rumqttc::v5::mqttbytes::v5::{ConnectReturnCode, Packet as P5};
        Some(match self.poll().await {
            Ok(rumqttc::v5::Event::Incoming(P5::ConnAck(ack))) => {
                if ack.code != ConnectReturnCode::Success {
                    Net::Down(explain(&format!("refused: {:?}", ack.code)))
                } else {
                    Net::Connected(())
                }
            }
            Ok(rumqttc::v5::Event::Incoming(P5::PubAck(_))) => Net::Acked,
            Ok(rumqttc::v5::Event::Incoming(P5::Publish(p))) => Net::Message(
                String::from_utf8_lossy(&p.topic).into_owned(),
                p.payload.to_vec(),
            ),
            Ok(_) => return None,
            Err(e) => Net::Down(explain(&e.to_string())),
        })
    }
}

/// Connects, passes on what happens, and after a failure connects again with a fresh client
/// (waiting longer each time, up to `MAX_RETRY`).
fn spawn_connection<E: Connection>(
    options: E::Options,
    tx: mpsc::UnboundedSender<Net<E::Client>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut wait = FIRST_RETRY;
        loop {
            let (client, mut connection) = E::open(options.clone());
            loop {
                let net = match connection.next().await {
                    None => continue,
                    Some(Net::Connected(())) => {
                        wait = FIRST_RETRY;
                        Net::Connected(client.clone())
                    }
                    Some(Net::Acked) => Net::Acked,
                    Some(Net::Message(t, p)) => Net::Message(t, p),
                    Some(Net::Down(e)) => Net::Down(e),
                };
                let down = matches!(net, Net::Down(_));
                if tx.send(net).is_err() {
                    return;
                }
                if down {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_RETRY);
                    break;
                }
            }
        }
    })
}

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
    State(u64),
    Pgn(u64),
    Event,
    Offline,
}

enum Input {
    Update(String, String),
    Event(String),
    Finish(oneshot::Sender<()>),
}

/// Publishes one board's game. Cheap to call from the daemon's loop: it never waits for the
/// broker.
pub struct Publisher {
    tx: mpsc::UnboundedSender<Input>,
    task: tokio::task::JoinHandle<()>,
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
        let mut o = settings.options(&format!("chessboardd-{id}"))?;
        o.set_last_will(LastWill::new(
            format!("{base}/status"),
            "offline",
            QoS::AtLeastOnce,
            true,
        ));
        let (net_tx, net_rx) = mpsc::unbounded_channel();
        let connection = spawn_connection::<rumqttc::EventLoop>(o, net_tx);
        let (tx, rx) = mpsc::unbounded_channel();
        let broker = settings.url.to_string();
        let task = tokio::spawn(async move {
            publish_loop(base, broker, rx, net_rx).await;
            connection.abort();
        });
        Ok(Publisher { tx, task })
    }

    /// The game changed: its new state (JSON) and PGN.
    pub fn update(&self, state: String, pgn: String) {
        let _ = self.tx.send(Input::Update(state, pgn));
    }

    /// An event (one JSON object).
    pub fn event(&self, json: String) {
        let _ = self.tx.send(Input::Event(json));
    }

    /// Delivers what is queued (waiting at most `within`), says `offline` and disconnects.
    pub async fn finish(self, within: Duration) {
        let (done_tx, done_rx) = oneshot::channel();
        let _ = self.tx.send(Input::Finish(done_tx));
        let _ = tokio::time::timeout(within, done_rx).await;
        self.task.abort();
    }
}

async fn publish_loop(
    base: String,
    broker: String,
    mut rx: mpsc::UnboundedReceiver<Input>,
    mut net: mpsc::UnboundedReceiver<Net<AsyncClient>>,
) {
    // The client of the connection that is up; `None` while the broker is away.
    let mut client: Option<AsyncClient> = None;
    let (mut state, mut pgn) = (Latest::default(), Latest::default());
    let mut events: VecDeque<String> = VecDeque::new();
    let mut dropped = 0u64;
    let mut status_due = false;
    let mut in_flight: Option<Sent> = None;
    let mut finishing: Option<oneshot::Sender<()>> = None;
    let mut last_error = String::new();
    loop {
        // The next message, when the broker is there and nothing is waiting for its ack.
        if let (Some(c), None) = (&client, &in_flight) {
            let next = if status_due {
                Some((Sent::Status, "status", "online".to_string(), true))
            } else if state.due() {
                let v = state.value.clone().unwrap_or_default();
                Some((Sent::State(state.version), "state", v, true))
            } else if pgn.due() {
                let v = pgn.value.clone().unwrap_or_default();
                Some((Sent::Pgn(pgn.version), "pgn", v, true))
            } else if let Some(e) = events.front() {
                Some((Sent::Event, "events", e.clone(), false))
            } else if finishing.is_some() {
                Some((Sent::Offline, "status", "offline".to_string(), true))
            } else {
                None
            };
            if let Some((sent, topic, payload, retain)) = next {
                let topic = format!("{base}/{topic}");
                if c.try_publish(topic, QoS::AtLeastOnce, retain, payload)
                    .is_ok()
                {
                    in_flight = Some(sent);
                }
            }
        }
        tokio::select! {
            input = rx.recv(), if finishing.is_none() => match input {
                Some(Input::Update(s, p)) => {
                    state.set(s);
                    pgn.set(p);
                }
                Some(Input::Event(e)) => {
                    if events.len() >= MAX_QUEUED_EVENTS {
                        events.pop_front();
                        dropped += 1;
                        if dropped == 1 || dropped.is_power_of_two() {
                            tracing::warn!("mqtt: the broker is away; {dropped} old events dropped");
                        }
                    }
                    events.push_back(e);
                }
                Some(Input::Finish(done)) => finishing = Some(done),
                None => return,
            },
            n = net.recv() => match n {
                Some(Net::Connected(c)) => {
                    tracing::info!("mqtt: connected to {broker}");
                    client = Some(c);
                    last_error.clear();
                    in_flight = None;
                    // A new session: everything retained is sent again.
                    status_due = true;
                    state.delivered = 0;
                    pgn.delivered = 0;
                }
                Some(Net::Acked) => match in_flight.take() {
                    Some(Sent::Status) => status_due = false,
                    Some(Sent::State(v)) => state.delivered = state.delivered.max(v),
                    Some(Sent::Pgn(v)) => pgn.delivered = pgn.delivered.max(v),
                    Some(Sent::Event) => {
                        events.pop_front();
                    }
                    Some(Sent::Offline) => {
                        if let Some(c) = &client {
                            let _ = c.try_disconnect();
                        }
                        if let Some(done) = finishing.take() {
                            let _ = done.send(());
                        }
                        return;
                    }
                    None => {}
                },
                Some(Net::Down(e)) => {
                    if client.is_some() || e != last_error {
                        tracing::warn!("mqtt: {broker}: {e}; connecting again");
                    }
                    last_error = e;
                    client = None;
                    in_flight = None;
                }
                Some(Net::Message(..)) => {}
                None => return,
            },
        }
    }
}

/// The games of a round as `broadcast` keeps them: each board's latest PGN.
#[derive(Debug, Default)]
pub struct Round {
    dir: PathBuf,
    games: BTreeMap<String, String>,
    /// Messages that were not a game, dropped.
    pub rejected: u64,
}

/// Orders board ids as people number boards: "board2" before "board10".
fn natural_key(id: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut chars = id.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            key.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    key.push((text, u64::MAX));
    key
}

impl Round {
    /// A round kept in `dir`, with the boards' files already there (a broadcast started again
    /// keeps the games it had, even of boards that have gone).
    pub fn open(dir: &Path) -> std::io::Result<Round> {
        std::fs::create_dir_all(dir)?;
        let mut games = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.extension().is_some_and(|x| x == "pgn") && check_board_id(stem).is_ok() {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    games.insert(stem.to_string(), text);
                }
            }
        }
        Ok(Round {
            dir: dir.to_path_buf(),
            games,
            rejected: 0,
        })
    }

    pub fn boards(&self) -> usize {
        self.games.len()
    }

    /// A message on `topic` (`PREFIX/ID/pgn`). Returns what changed, for the log; `Ok(None)`
    /// when nothing did; `Err` for a message that is no game (dropped and counted).
    pub fn take(
        &mut self,
        prefix: &str,
        topic: &str,
        payload: &[u8],
    ) -> Result<Option<String>, String> {
        let result = self.check(prefix, topic, payload);
        let (id, text) = match result {
            Ok(Some(v)) => v,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.rejected += 1;
                return Err(e);
            }
        };
        if self.games.get(&id) == Some(&text) {
            return Ok(None);
        }
        let game = crate::pgn::parse(&text)
            .ok()
            .and_then(|g| g.into_iter().next());
        let summary = match game {
            Some(g) => {
                let n = g.moves.len();
                let plies = if n == 1 { "ply" } else { "plies" };
                format!("board {id}: {n} {plies}, {}", g.result)
            }
            None => format!("board {id}"),
        };
        replace(&self.dir, &format!("{id}.pgn"), &text)?;
        self.games.insert(id, text);
        replace(&self.dir, ROUND_FILE, &self.round_pgn())?;
        Ok(Some(summary))
    }

    fn check(
        &self,
        prefix: &str,
        topic: &str,
        payload: &[u8],
    ) -> Result<Option<(String, String)>, String> {
        let Some(rest) = topic.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) else {
            return Ok(None);
        };
        let Some(id) = rest.strip_suffix("/pgn") else {
            return Ok(None);
        };
        check_board_id(id).map_err(|e| format!("{topic}: {e}"))?;
        // An empty retained message clears the topic: the game stays as it was.
        if payload.is_empty() {
            return Ok(None);
        }
        let text = std::str::from_utf8(payload).map_err(|_| format!("{topic}: not UTF-8 text"))?;
        match crate::pgn::parse(text) {
            Ok(g) if g.len() == 1 => {}
            Ok(g) => {
                return Err(format!(
                    "{topic}: {} games in one message, not one",
                    g.len()
                ))
            }
            Err(e) => return Err(format!("{topic}: not a PGN game: {e}")),
        }
        let mut text = text.trim_end().to_string();
        text.push('\n');
        Ok(Some((id.to_string(), text)))
    }

    /// Every board's game, in the order of the boards.
    pub fn round_pgn(&self) -> String {
        let mut ids: Vec<&String> = self.games.keys().collect();
        ids.sort_by_key(|id| natural_key(id));
        ids.iter()
            .map(|id| self.games[*id].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Replaces `dir/name` by `text` at once (a poller never reads half a file).
fn replace(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(name);
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `chessboardd broadcast`: follows every board under the prefix and keeps their games in `out`
/// until `shutdown` completes. Fails on settings it cannot use or a directory it cannot write.
pub async fn broadcast(
    settings: &MqttSettings,
    out: &Path,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Round, String> {
    let mut round = Round::open(out).map_err(|e| format!("{}: {e}", out.display()))?;
    if round.boards() > 0 {
        tracing::info!(
            "{}: {} boards' games already there",
            out.display(),
            round.boards()
        );
        replace(out, ROUND_FILE, &round.round_pgn())?;
    }
    let id = format!("chessboardd-broadcast-{}", std::process::id());
    let o = settings.options_v5(&id)?;
    let (net_tx, mut net) = mpsc::unbounded_channel();
    let connection = spawn_connection::<rumqttc::v5::EventLoop>(o, net_tx);
    let mut client = None;
    let filter = format!("{}/+/pgn", settings.prefix);
    let broker = settings.url.to_string();
    let mut last_error = String::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            n = net.recv() => match n {
                Some(Net::Connected(c)) => {
                    tracing::info!("connected to {broker}, following {filter}");
                    last_error.clear();
                    // A clean session: the subscription is made again each time, and the
                    // broker sends the retained games with it.
                    let qos = rumqttc::v5::mqttbytes::QoS::AtLeastOnce;
                    if let Err(e) = c.try_subscribe(filter.clone(), qos) {
                        tracing::warn!("cannot subscribe to {filter}: {e}");
                    }
                    client = Some(c);
                }
                Some(Net::Message(topic, payload)) => {
                    match round.take(&settings.prefix, &topic, &payload) {
                        Ok(Some(summary)) => tracing::info!("{summary}"),
                        Ok(None) => {}
                        Err(e) => tracing::warn!("dropped: {e} ({} dropped so far)", round.rejected),
                    }
                }
                Some(Net::Down(e)) => {
                    if e != last_error {
                        tracing::warn!("{broker}: {e}; connecting again");
                    }
                    last_error = e;
                }
                Some(Net::Acked) => {}
                None => break,
            },
            _ = &mut shutdown => break,
        }
    }
    if let Some(c) = client {
        let _ = c.try_disconnect();
    }
    connection.abort();
    Ok(round)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_urls() {
        let u: BrokerUrl = "mqtt://localhost".parse().unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (false, "localhost", 1883));
        let u: BrokerUrl = "mqtts://club:secret@broker.lan:8884/".parse().unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (true, "broker.lan", 8884));
        assert_eq!(u.username.as_deref(), Some("club"));
        assert_eq!(u.password.as_deref(), Some("secret"));
        assert_eq!(u.to_string(), "mqtts://club@broker.lan:8884");
        let u: BrokerUrl = "mqtts://[::1]".parse().unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 8883));
        assert_eq!(u.to_string(), "mqtts://[::1]:8883");
        for bad in [
            "localhost",
            "http://x",
            "mqtt://",
            "mqtt://h:0",
            "mqtt://h:99999",
            "mqtt://[::1",
        ] {
            assert!(bad.parse::<BrokerUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_and_prefixes() {
        assert!(check_board_id("board-1").is_ok());
        assert!(check_board_id("b.2_x").is_ok());
        for bad in ["", "a/b", "a+b", "#", "round", ".hidden", &"x".repeat(65)] {
            assert!(check_board_id(bad).is_err(), "{bad}");
        }
        assert!(check_prefix("club/round3").is_ok());
        for bad in ["", "/a", "a/", "a//b", "a/+", "a/#"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn boards_in_the_order_people_number_them() {
        let mut ids = vec!["board10", "board2", "board1", "a", "board2b"];
        ids.sort_by_key(|id| natural_key(id));
        assert_eq!(ids, ["a", "board1", "board2", "board2b", "board10"]);
    }

    fn game(white: &str, moves: &str) -> String {
        format!("[White \"{white}\"]\n[Result \"*\"]\n\n{moves} *\n")
    }

    #[test]
    fn the_round_keeps_each_boards_latest_game_and_refuses_the_rest() {
        let dir = std::env::temp_dir().join(format!("chessboardd-round-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut r = Round::open(&dir).unwrap();
        // Whether a message changed the board's game.
        let mut changed = |topic: &str, white: &str, moves: &str| {
            r.take("chessboardd", topic, game(white, moves).as_bytes())
                .unwrap()
                .is_some()
        };
        assert!(changed("chessboardd/b2/pgn", "B", "1. d4"));
        assert!(changed("chessboardd/b10/pgn", "C", "1. c4"));
        assert!(changed("chessboardd/b1/pgn", "A", "1. e4"));
        // The same again changes nothing; a newer game replaces the board's.
        assert!(!changed("chessboardd/b1/pgn", "A", "1. e4"));
        assert!(changed("chessboardd/b1/pgn", "A", "1. e4 e5"));
        let p = "chessboardd";
        // Not games, not ours: dropped, counted, the files untouched.
        assert!(r.take(p, "chessboardd/b1/pgn", b"1. e4 Ke7 Kd6").is_err());
        assert!(r.take(p, "chessboardd/b1/pgn", &[0xff, 0xfe]).is_err());
        assert!(r
            .take(p, "chessboardd/round/pgn", game("X", "1. e4").as_bytes())
            .is_err());
        assert_eq!(r.rejected, 3);
        assert!(r
            .take(p, "other/b1/pgn", game("X", "1. a3").as_bytes())
            .unwrap()
            .is_none());
        assert!(r.take(p, "chessboardd/b1/state", b"{}").unwrap().is_none());
        assert!(r.take(p, "chessboardd/b1/pgn", b"").unwrap().is_none());
        let round = std::fs::read_to_string(dir.join(ROUND_FILE)).unwrap();
        let whites: Vec<&str> = round.lines().filter(|l| l.starts_with("[White")).collect();
        assert_eq!(whites, ["[White \"A\"]", "[White \"B\"]", "[White \"C\"]"]);
        assert!(round.contains("1. e4 e5 *"));
        assert_eq!(
            std::fs::read_to_string(dir.join("b1.pgn")).unwrap(),
            game("A", "1. e4 e5")
        );
        // Started again, it has the games it had.
        let again = Round::open(&dir).unwrap();
        assert_eq!(again.round_pgn(), round);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
