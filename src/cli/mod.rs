//! The commands behind the command line, one file each; here what they share: the failure
//! with its exit status, the flags several commands take (put over the config by
//! `settings`), and starting a speaker.

use std::path::{Path, PathBuf};

use chessboardd::settings::{self, Flags, Settings};
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

impl GameFlags {
    /// These flags, for the settings.
    pub fn to_flags(&self) -> Flags {
        Flags {
            rules: self.rules.clone(),
            mode: self.mode.clone(),
            lang: self.lang.clone(),
            style: self.style.clone(),
            time_control: self.time_control.clone(),
            ..Flags::default()
        }
    }
}

impl SpeechFlags {
    /// These flags over `flags`.
    pub fn over(&self, flags: Flags) -> Flags {
        Flags {
            speech: self.speech.clone(),
            audio_out: self.audio_out.clone(),
            voice_pack: self.voice_pack.clone(),
            device: self.device.clone(),
            ..flags
        }
    }
}

/// The settings: the config file `file` (`None`: none) with `flags` over it; a mistake in either
/// exits 78.
pub fn load_settings(file: Option<&Path>, flags: &Flags) -> Result<Settings, Fail> {
    Settings::load(file, flags).map_err(|e| Fail(EXIT_CONFIG, e.to_string()))
}

/// The config file to read: the one given, else the default one when there is one.
pub fn config_file(given: Option<&Path>) -> Option<PathBuf> {
    settings::resolve(given)
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

pub fn position(fen: &str) -> Result<Chess, Fail> {
    chessboardd::replay::check_counters(fen).map_err(|e| Fail(1, format!("--fen: {e}")))?;
    fen.parse::<Fen>()
        .map_err(|e| Fail(1, format!("--fen: {e}")))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| Fail(1, format!("--fen: impossible position: {e}")))
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
