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

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rumqttc::{
    AsyncClient, Event, LastWill, MqttOptions, Packet, QoS, TlsConfiguration, Transport,
};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Notify};

/// The largest message sent or taken (a long game's state is some tens of kilobytes).
const MAX_PACKET: usize = 1 << 20;
/// Games that ended while the broker was away, kept to be sent.
const MAX_SUPERSEDED: usize = 16;
/// Events kept for a broker that is away; older ones are dropped beyond this.
const MAX_QUEUED_EVENTS: usize = 20_000;
/// The broker is asked to drop a client silent for longer than this; the client pings sooner.
const KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The first wait before connecting again; it doubles up to `MAX_RETRY`.
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(5);
/// The default topic prefix.
pub const DEFAULT_PREFIX: &str = "chessboardd";

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
            let port = match after {
                "" => None,
                a => Some(a.strip_prefix(':').ok_or_else(|| {
                    format!("'{s}': after ']' comes ':' and the port, or nothing")
                })?),
            };
            (h, port)
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.contains(['/', '?', '#']) {
            return Err(format!(
                "'{s}': a broker's address ends after the host and port ({accepted})"
            ));
        }
        if host.is_empty() || host.contains(' ') {
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

    /// Says so in the log when a password would go over the network unencrypted.
    pub fn warn_clear_password(&self) {
        if self.login().is_some_and(|(_, p)| !p.is_empty()) && !self.url.tls {
            tracing::warn!(
                "mqtt: the password goes over the network in clear text ({}); use mqtts:// \
                 where others can listen",
                self.url
            );
        }
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
    pub(crate) fn options_v5(&self, client_id: &str) -> Result<rumqttc::v5::MqttOptions, String> {
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
pub const SYSTEM_CA: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Reads a PEM file that must hold a `what` ("CERTIFICATE", "KEY").
pub fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let found = if what == "KEY" {
        // An encrypted key is no key here: the daemon has nobody to ask for its passphrase.
        PrivateKeyDer::from_pem_slice(&bytes).is_ok()
    } else {
        let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
        match certs {
            Ok(c) => !c.is_empty(),
            Err(e) => return Err(format!("{}: a damaged PEM file ({e:?})", path.display())),
        }
    };
    if !found {
        let hint = if what == "KEY" {
            " (-----BEGIN PRIVATE KEY-----, RSA or EC, not encrypted)"
        } else {
            " (-----BEGIN CERTIFICATE-----)"
        };
        return Err(format!(
            "{}: no PEM {} in it{hint}",
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

/// Checks a board id as a topic level: letters, digits, `-`, `_` and `.`, 1 to 64 of them,
/// not starting with `.`.
pub fn check_topic_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 64 || !id.chars().all(id_char) || id.starts_with('.') {
        return Err(format!(
            "'{id}' is not a board id (accepted: 1 to 64 letters, digits, '-', '_' and '.', \
             not starting with '.')"
        ));
    }
    Ok(())
}

/// Checks a topic prefix: one or more topic levels, without wildcards.
pub fn check_prefix(p: &str) -> Result<(), String> {
    if p.is_empty()
        || p.starts_with('/')
        || p.starts_with('$')
        || p.ends_with('/')
        || p.contains("//")
        || p.contains(['+', '#', '\0'])
    {
        return Err(format!(
            "'{p}' is not a topic prefix (accepted: topic levels such as \"chessboardd\" or \
             \"club/round3\", without '+', '#', a '$' in front or a '/' at either end)"
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
    } else if e.contains("not valid for name") || e.contains("NotValidForName") {
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
pub(crate) enum Net<C> {
    Connected(C),
    Acked,
    Down(String),
    Message(String, Vec<u8>),
}

/// An MQTT connection of either protocol version, as the connection task sees it.
pub(crate) trait Connection: Sized + Send + 'static {
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

/// A few random hex digits, so that two clients never have the same client id (the broker
/// would close the first when the second connects, and then the other way round, for ever).
pub(crate) fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    // SipHash with the random keys std draws for each process, over the time.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:08x}", h.finish() as u32)
}

/// Connects, passes on what happens, and after a failure connects again with a fresh client
/// (waiting longer each time, up to `MAX_RETRY`, or until `wake` is notified).
pub(crate) fn spawn_connection<E: Connection>(
    options: E::Options,
    tx: mpsc::UnboundedSender<Net<E::Client>>,
    wake: Option<Arc<Notify>>,
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
                    match &wake {
                        Some(w) => {
                            tokio::select! {
                                _ = tokio::time::sleep(wait) => {}
                                _ = w.notified() => {}
                            }
                        }
                        None => tokio::time::sleep(wait).await,
                    }
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
            "mqtt://[::1]junk",
        ] {
            assert!(bad.parse::<BrokerUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn pem_files_are_read_for_what_they_hold() {
        let dir = std::env::temp_dir().join(format!("chessboardd-pem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, label: &str, body: &str| {
            let p = dir.join(name);
            std::fs::write(
                &p,
                format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"),
            )
            .unwrap();
            p
        };
        let cert = file("cert.pem", "CERTIFICATE", "AAEC");
        let key = file("key.pem", "PRIVATE KEY", "AAEC");
        let encrypted = file("enc.pem", "ENCRYPTED PRIVATE KEY", "AAEC");
        let request = file("req.pem", "CERTIFICATE REQUEST", "AAEC");
        let damaged = file("bad.pem", "CERTIFICATE", "!!not base64!!");
        assert!(read_pem(&cert, "CERTIFICATE").is_ok());
        assert!(read_pem(&key, "KEY").is_ok());
        assert!(read_pem(&key, "CERTIFICATE")
            .unwrap_err()
            .contains("no PEM certificate"));
        assert!(read_pem(&encrypted, "KEY")
            .unwrap_err()
            .contains("not encrypted"));
        assert!(read_pem(&request, "CERTIFICATE").is_err());
        assert!(read_pem(&damaged, "CERTIFICATE")
            .unwrap_err()
            .contains("damaged"));
        assert!(read_pem(&dir.join("none.pem"), "KEY")
            .unwrap_err()
            .contains("none.pem"));
        let _ = std::fs::remove_dir_all(&dir);
    }

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
        AsyncClient::new(MqttOptions::new("test", "localhost", 1), 16)
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

    #[test]
    fn ids_and_prefixes() {
        assert!(check_topic_id("board-1").is_ok());
        assert!(check_topic_id("b.2_x").is_ok());
        for bad in ["", "a/b", "a+b", "#", ".hidden", &"x".repeat(65)] {
            assert!(check_topic_id(bad).is_err(), "{bad}");
        }
        assert!(check_prefix("club/round3").is_ok());
        for bad in ["", "/a", "a/", "a//b", "a/+", "a/#", "$share/g"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
    }
}
