//! The command line's flags over the config file's settings, each checked once.

use std::path::PathBuf;

use super::{BoardSettings, ConfigError, ConfigErrorKind, Settings};
use crate::board::{BoardSpec, Orientation};
use crate::broadcast::check_board_id;
use crate::engine::clock::TimeControl;
use crate::engine::rules::{Mode, RuleProfile};
use crate::mqtt::{BrokerUrl, MqttSettings};
use crate::opponent::Strength;
use crate::speech::synth::Backend;
use crate::words::{Lang, Style};

/// What the command line says over the config file; `None`: not given, the config's value
/// stands. The values are as typed: [`Settings::load`] checks them.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    /// `--rules`: the rule profile.
    pub rules: Option<String>,
    /// `--mode`: tournament or casual.
    pub mode: Option<String>,
    /// `--lang`: the announcement language.
    pub lang: Option<String>,
    /// `--style`: the announcement style.
    pub style: Option<String>,
    /// `--time-control` (`-` or empty: none).
    pub time_control: Option<String>,
    /// `--board`: the one board to read, instead of the config's.
    pub board: Option<String>,
    /// `--orientation`: which way round every serial board reports its squares.
    pub orientation: Option<String>,
    /// `--keypad` (empty: none).
    pub keypad: Option<String>,
    /// `--socket`: the control socket.
    pub socket: Option<PathBuf>,
    /// `--web`: the web view's address.
    pub web: Option<String>,
    /// `--mqtt`: the broker, completed by the config's `[mqtt]`.
    pub mqtt: Option<String>,
    /// `--board-id`: the board's id in the MQTT topics.
    pub board_id: Option<String>,
    /// `--speech`: the speech backend.
    pub speech: Option<String>,
    /// `--audio-out`: a WAV file instead of the sound card.
    pub audio_out: Option<PathBuf>,
    /// `--voice-pack`: the voice pack's directory.
    pub voice_pack: Option<PathBuf>,
    /// `--device`: the sound card (empty: the default one).
    pub device: Option<String>,
    /// `--opponent`: `engine` (play against the computer of `[opponent]`) or `none`.
    pub opponent: Option<String>,
    /// `--elo`: the computer's strength (over `[opponent]` elo and level).
    pub elo: Option<String>,
}

fn bad(flag: &'static str, e: impl std::fmt::Display) -> ConfigError {
    ConfigError::new(ConfigErrorKind::Flag {
        flag,
        what: e.to_string(),
    })
}

impl Settings {
    /// Puts the flags over the settings, in the order the command line has always checked them.
    pub(super) fn apply(&mut self, flags: &Flags) -> Result<(), ConfigError> {
        if let Some(r) = &flags.rules {
            self.engine.rules = r.parse::<RuleProfile>().map_err(|e| bad("--rules", e))?;
        }
        if let Some(m) = &flags.mode {
            self.engine.mode = m.parse::<Mode>().map_err(|e| bad("--mode", e))?;
        }
        if let Some(l) = &flags.lang {
            self.lang = l.parse::<Lang>().map_err(|e| bad("--lang", e))?;
        }
        if let Some(s) = &flags.style {
            self.style = s.parse::<Style>().map_err(|e| bad("--style", e))?;
        }
        if let Some(tc) = &flags.time_control {
            self.engine.time_control = match tc.as_str() {
                "-" | "" => None,
                tc => Some(
                    tc.parse::<TimeControl>()
                        .map_err(|e| bad("--time-control", e))?,
                ),
            };
        }
        if let Some(b) = &flags.board {
            let spec = b.parse::<BoardSpec>().map_err(|e| bad("--board", e))?;
            // The one board given: read as the config's first board is read.
            let first = self.boards.swap_remove(0);
            self.boards = vec![BoardSettings {
                spec: Some(spec),
                player: None,
                device: None,
                own_moves: None,
                opponent_moves: None,
                ..first
            }];
        }
        if let Some(o) = &flags.orientation {
            let o = o
                .parse::<Orientation>()
                .map_err(|e| bad("--orientation", e))?;
            for b in &mut self.boards {
                b.link.orientation = o;
            }
        }
        if let Some(k) = &flags.keypad {
            self.control.keypad = Some(k.clone()).filter(|k| !k.is_empty());
        }
        if let Some(s) = &flags.socket {
            self.control.socket = Some(s.clone());
        }
        if let Some(w) = &flags.web {
            self.web = Some(w.clone());
        }
        self.apply_mqtt(flags.mqtt.as_deref(), flags.board_id.as_deref())?;
        let sc = &mut self.speech;
        if let Some(b) = &flags.speech {
            sc.backend = b.parse::<Backend>().map_err(|e| bad("--speech", e))?;
        }
        if let Some(p) = &flags.audio_out {
            sc.audio_out = Some(p.clone());
        }
        if let Some(p) = &flags.voice_pack {
            sc.voice_pack = p.clone();
        }
        if let Some(d) = &flags.device {
            sc.device = Some(d.clone()).filter(|d| !d.is_empty());
        }
        self.apply_opponent(flags.opponent.as_deref(), flags.elo.as_deref())?;
        self.rebuild_phrases();
        Ok(())
    }

    /// `--opponent engine|none` over `[opponent] enabled`, `--elo N` over its strength.
    fn apply_opponent(
        &mut self,
        which: Option<&str>,
        elo: Option<&str>,
    ) -> Result<(), ConfigError> {
        match which {
            None => {}
            Some("none") => self.opponent = None,
            Some("engine") if self.opponent.is_none() => {
                self.opponent = Some(self.opponent_written.clone());
            }
            Some("engine") => {}
            Some(other) => {
                return Err(bad(
                    "--opponent",
                    format!("'{other}' (accepted: engine, none)"),
                ))
            }
        }
        if let Some(e) = elo {
            let n: u32 = e
                .trim()
                .parse()
                .ok()
                .filter(|n| (500..=4000).contains(n))
                .ok_or_else(|| bad("--elo", format!("'{e}' (accepted: 500 to 4000)")))?;
            match &mut self.opponent {
                Some(o) => o.strength = Strength::Elo(n),
                None => {
                    return Err(bad(
                        "--elo",
                        "no computer to play against (give --opponent engine, or set \
                         [opponent] enabled = true)",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The broker: `--mqtt URL` with the config's `[mqtt]` credentials and TLS files, or the
    /// config's `mqtt.url`; `--board-id` over the config's.
    fn apply_mqtt(&mut self, url: Option<&str>, board_id: Option<&str>) -> Result<(), ConfigError> {
        if let Some(u) = url {
            let url = u.parse::<BrokerUrl>().map_err(|e| bad("--mqtt", e))?;
            let mut m = self
                .mqtt_partial
                .clone()
                .unwrap_or_else(|| MqttSettings::new(url.clone()));
            if !url.tls && (m.ca_file.is_some() || m.client_auth.is_some()) {
                tracing::warn!(
                    "--mqtt {url}: not TLS, so the TLS files of [mqtt] are not used (mqtts:// is)"
                );
            }
            m.url = url;
            // (With mqtt.url in the file this was checked there, with its line.)
            if m.password.is_some() && m.username.is_none() && m.url.username.is_none() {
                return Err(ConfigError::new(ConfigErrorKind::Mismatch(
                    "mqtt: a password needs its user: set mqtt.username, or give USER@ in --mqtt"
                        .into(),
                )));
            }
            self.mqtt = Some(m);
        }
        if let Some(id) = board_id {
            check_board_id(id).map_err(|e| bad("--board-id", e))?;
            match &mut self.mqtt {
                Some(m) => m.board_id = Some(id.to_string()),
                None => {
                    return Err(bad(
                        "--board-id",
                        "no broker (give --mqtt URL or mqtt.url in the config)",
                    ))
                }
            }
        }
        Ok(())
    }
}
