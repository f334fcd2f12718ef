//! The commands behind the command line, one file each; here what they share: the failure
//! with its exit status, the flags several commands take, the config with those flags over it,
//! and starting a speaker.

use std::path::PathBuf;

use chessboardd::config::{self, Config};
use chessboardd::engine::clock::TimeControl;
use chessboardd::engine::rules::{Mode, RuleProfile};
use chessboardd::mqtt::{check_board_id, BrokerUrl, MqttSettings};
use chessboardd::speech::phrase::{FileWords, Lang, Phrases, Style};
use chessboardd::speech::speaker::{Speaker, SpeechConfig};
use chessboardd::speech::synth::Backend;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

pub mod bench;
pub mod board_test;
pub mod broadcast;
pub mod check_config;
pub mod ctl;
pub mod demo;
pub mod games;
pub mod replay;
pub mod run;
pub mod say;
pub mod simulate;
pub mod voice_pack;

/// The sample game of the FIDE Laws' Appendix E, played by `demo` unless told otherwise.
pub const SEED_GAME: &str = include_str!("../../tests/data/games/seed-example.pgn");

/// EX_CONFIG from sysexits.h: the config is wrong.
pub const EXIT_CONFIG: u8 = 78;
pub const EXIT_SCRIPT: u8 = 2;
/// EX_TEMPFAIL from sysexits.h: another daemon holds the state directory or the socket.
pub const EXIT_IN_USE: u8 = 75;
/// EX_NOPERM from sysexits.h: the daemon may not read its game record.
pub const EXIT_NOPERM: u8 = 77;
/// EX_IOERR from sysexits.h: the game record cannot be read for another reason.
pub const EXIT_IOERR: u8 = 74;
/// EX_UNAVAILABLE from sysexits.h: `say` had no sound card to speak on.
pub const EXIT_NO_SOUND: u8 = 69;

#[derive(clap::Args, Clone, Default)]
pub struct GameFlags {
    /// Config file (TOML); flags given here override it
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Rule profile: fide-1997, fide-2005 (default) or fide-2023
    #[arg(long, value_name = "PROFILE")]
    pub rules: Option<String>,
    /// tournament (touch-move, illegal moves counted; default) or casual (help only)
    #[arg(long)]
    pub mode: Option<String>,
    /// Announcement language: appendix-f (default), de, en, ro, sv
    #[arg(long)]
    pub lang: Option<String>,
    /// Announcement style: short (default) or long (adds the from-square)
    #[arg(long)]
    pub style: Option<String>,
    /// Time control in PGN TimeControl syntax: 300+2, 900, 300d5, 40/5400+30:1800+30
    #[arg(long, value_name = "TC")]
    pub time_control: Option<String>,
}

#[derive(clap::Args, Clone, Default)]
pub struct SpeechFlags {
    #[arg(long, value_name = "BACKEND", help = format!("How to speak: {}", Backend::help()))]
    pub speech: Option<String>,
    /// Write what would be played to this WAV file instead of the sound card
    #[arg(long, value_name = "FILE.wav")]
    pub audio_out: Option<PathBuf>,
    /// The voice pack directory for --speech clips
    #[arg(long, value_name = "DIR")]
    pub voice_pack: Option<PathBuf>,
    /// The sound card: part of its name (default: the default card)
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
}

/// The speeds of the simulated players (`demo`, `run`, `simulate`): how much faster than real time.
pub const SPEEDS: std::ops::RangeInclusive<f64> = 0.1..=1000.0;

/// `--speed` of `demo`, `run` and `simulate`: a number from 0.1 to 1000.
pub fn parse_speed(s: &str) -> Result<f64, String> {
    let speed: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number (accepted: 0.1 to 1000)"))?;
    if !SPEEDS.contains(&speed) {
        return Err(format!("{speed} is out of range (accepted: 0.1 to 1000)"));
    }
    Ok(speed)
}

/// A failure with its exit status and message.
pub struct Fail(pub u8, pub String);

pub fn config_from(flags: &GameFlags, use_default_path: bool) -> Result<Config, Fail> {
    let path = if use_default_path {
        config::resolve(flags.config.as_deref())
    } else {
        flags.config.clone()
    };
    let mut cfg = match path {
        Some(p) => Config::load(&p).map_err(|e| Fail(EXIT_CONFIG, e.to_string()))?,
        None => Config::default(),
    };
    let bad = |e: String| Fail(EXIT_CONFIG, e);
    if let Some(r) = &flags.rules {
        cfg.settings.rules = r
            .parse::<RuleProfile>()
            .map_err(|e| bad(format!("--rules: {e}")))?;
    }
    if let Some(m) = &flags.mode {
        cfg.settings.mode = m.parse::<Mode>().map_err(|e| bad(format!("--mode: {e}")))?;
    }
    let lang = flags
        .lang
        .as_deref()
        .map(str::parse::<Lang>)
        .transpose()
        .map_err(|e| bad(format!("--lang: {e}")))?;
    let style = flags
        .style
        .as_deref()
        .map(str::parse::<Style>)
        .transpose()
        .map_err(|e| bad(format!("--style: {e}")))?;
    cfg.set_speech(lang, style, None::<FileWords>);
    if let Some(tc) = &flags.time_control {
        cfg.settings.time_control = match tc.as_str() {
            "-" | "" => None,
            tc => Some(
                tc.parse::<TimeControl>()
                    .map_err(|e| bad(format!("--time-control: {e}")))?,
            ),
        };
    }
    Ok(cfg)
}

/// The speech settings: the config's, with the command line's flags over them.
pub fn speech_from(cfg: &Config, flags: &SpeechFlags) -> Result<SpeechConfig, Fail> {
    let mut sc = cfg.speech.clone();
    if let Some(b) = &flags.speech {
        sc.backend = b
            .parse::<Backend>()
            .map_err(|e| Fail(EXIT_CONFIG, format!("--speech: {e}")))?;
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
    Ok(sc)
}

/// Why there is no sound, in one phrase: "no sound card found", or "no sound (the reason)".
pub fn no_sound(why: &str) -> String {
    if why == chessboardd::speech::audio::NO_SOUND_CARD {
        why.to_string()
    } else {
        format!("no sound ({why})")
    }
}

/// Starts the speaker; without one (no voice, no pack) the daemon goes on with text only.
pub fn start_speaker(sc: SpeechConfig) -> Option<Speaker> {
    let wants_sound = sc.backend != Backend::Text && sc.audio_out.is_none();
    match Speaker::start(sc) {
        Ok((speaker, no_device)) => {
            if let Some(why) = no_device.filter(|_| wants_sound) {
                tracing::warn!(
                    "{}: announcements are printed only; see Troubleshooting in the README",
                    no_sound(&why)
                );
            }
            Some(speaker)
        }
        Err(e) => {
            tracing::warn!("no speech ({e}); announcements are printed only");
            None
        }
    }
}

/// The phrases of a language: the config's words, in the language asked for.
pub fn phrases_for(lang: Option<&str>, style: Option<&str>) -> Result<(Config, Phrases), Fail> {
    let mut cfg = config_from(&GameFlags::default(), true)?;
    let lang = lang
        .map(str::parse::<Lang>)
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--lang: {e}")))?;
    let style = style
        .map(str::parse::<Style>)
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--style: {e}")))?;
    cfg.set_speech(lang, style, None);
    let phrases = cfg.settings.phrases.clone();
    Ok((cfg, phrases))
}

pub fn position(fen: &str) -> Result<Chess, Fail> {
    chessboardd::replay::check_counters(fen).map_err(|e| Fail(1, format!("--fen: {e}")))?;
    fen.parse::<Fen>()
        .map_err(|e| Fail(1, format!("--fen: {e}")))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| Fail(1, format!("--fen: impossible position: {e}")))
}

/// The broker to use: `--mqtt URL` with the config's `[mqtt]` credentials and TLS files, or the
/// config's `mqtt.url`.
pub fn mqtt_from(
    cfg: &Config,
    url: Option<&str>,
    board_id: Option<&str>,
) -> Result<Option<MqttSettings>, Fail> {
    let mut m = match url {
        Some(u) => {
            let url = u
                .parse::<BrokerUrl>()
                .map_err(|e| Fail(EXIT_CONFIG, format!("--mqtt: {e}")))?;
            let mut m = cfg
                .mqtt_partial
                .clone()
                .unwrap_or_else(|| MqttSettings::new(url.clone()));
            if !url.tls && (m.ca_file.is_some() || m.client_auth.is_some()) {
                tracing::warn!(
                    "--mqtt {url}: not TLS, so the TLS files of [mqtt] are not used (mqtts:// is)"
                );
            }
            m.url = url;
            Some(m)
        }
        None => cfg.mqtt.clone(),
    };
    if let Some(m) = &m {
        if m.password.is_some() && m.username.is_none() && m.url.username.is_none() {
            return Err(Fail(
                EXIT_CONFIG,
                "mqtt: a password needs its user: set mqtt.username, or give USER@ in --mqtt"
                    .into(),
            ));
        }
    }
    if let Some(id) = board_id {
        check_board_id(id).map_err(|e| Fail(EXIT_CONFIG, format!("--board-id: {e}")))?;
        match &mut m {
            Some(m) => m.board_id = Some(id.to_string()),
            None => {
                return Err(Fail(
                    EXIT_CONFIG,
                    "--board-id: no broker (give --mqtt URL or mqtt.url in the config)".into(),
                ))
            }
        }
    }
    Ok(m)
}

/// Completes at SIGTERM or SIGINT. The handlers are in place from the call on (inside a
/// runtime), so a signal that comes at once does not find the default action.
pub fn termination() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending::<()>().await,
        }
    }
}
