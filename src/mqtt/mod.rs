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

mod connection;
mod publisher;
mod settings;

pub(crate) use connection::{random_suffix, spawn_connection, Net};
pub use publisher::Publisher;
pub use settings::{
    check_prefix, check_topic_id, id_char, read_pem, BrokerUrl, MqttSettings, DEFAULT_PREFIX,
    SYSTEM_CA,
};
