//! The connection to the broker: connects, says what happens, and connects again after a
//! failure with a fresh client, waiting longer each time.

use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, Event, MqttOptions, Packet};
use tokio::sync::{mpsc, Notify};

/// The first wait before connecting again; it doubles up to `MAX_RETRY`.
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(5);

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
