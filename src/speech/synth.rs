//! Speech synthesis backends behind one small trait, chosen by name.
//!
//! A backend turns text into 16-bit mono samples at [`SAMPLE_RATE`], handing them over in chunks
//! as soon as they exist, so that playback can start before the phrase is finished.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::words::Lang;

/// The sample rate of every backend's output (libespeak-ng's own rate).
pub const SAMPLE_RATE: u32 = 22_050;

#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    #[error("libespeak-ng: {0}")]
    Espeak(String),
    #[error("voice pack {dir}: {msg}")]
    VoicePack { dir: PathBuf, msg: String },
    #[error("audio: {0}")]
    Audio(String),
}

/// A speech synthesizer. `speak` calls `sink` with consecutive chunks of audio; when `sink`
/// returns false the phrase is abandoned (an interruption).
pub trait Synth: Send {
    fn name(&self) -> &'static str;
    fn speak(
        &mut self,
        text: &str,
        sink: &mut dyn FnMut(&[i16]) -> bool,
    ) -> Result<(), SpeechError>;
    /// Sets the speech rate in words a minute (`rate up`, `rate down`); false when the backend
    /// cannot change it (recorded words keep their pace).
    fn set_rate(&mut self, _words_a_minute: u32) -> bool {
        false
    }
}

/// Which backend to use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// libespeak-ng in this process.
    #[default]
    Espeak,
    /// A voice pack: one recorded word per file.
    Clips,
    /// No sound: announcements are only printed or logged.
    Text,
    /// Speech Dispatcher (cargo feature `speech-dispatcher`).
    SpeechDispatcher,
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        match s {
            "espeak" => Ok(Backend::Espeak),
            "clips" => Ok(Backend::Clips),
            "text" => Ok(Backend::Text),
            "speech-dispatcher" if cfg!(feature = "speech-dispatcher") => Ok(Backend::SpeechDispatcher),
            "speech-dispatcher" => Err("speech backend 'speech-dispatcher' is not built into this binary \
                 (build with: cargo build --features speech-dispatcher; accepted: espeak, clips, text)"
                .to_string()),
            _ => Err(format!(
                "unknown speech backend '{s}' (accepted: espeak, clips, text)"
            )),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Espeak => "espeak",
            Backend::Clips => "clips",
            Backend::Text => "text",
            Backend::SpeechDispatcher => "speech-dispatcher",
        })
    }
}

/// How the voice sounds (espeak).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Voice {
    pub lang: Lang,
    /// Words per minute, 80 to 450.
    pub rate: u32,
    /// 0 to 100.
    pub pitch: u32,
    /// 0 to 200 (100 is normal).
    pub volume: u32,
}

impl Default for Voice {
    fn default() -> Voice {
        Voice {
            lang: Lang::default(),
            rate: 175,
            pitch: 50,
            volume: 100,
        }
    }
}

/// The espeak-ng voice for a language. Appendix F's words are German.
pub fn espeak_voice(lang: Lang) -> &'static str {
    match lang {
        Lang::AppendixF | Lang::De => "de",
        Lang::En => "en",
        Lang::Ro => "ro",
        Lang::Sv => "sv",
    }
}

/// The `text` backend: no audio at all.
pub struct TextSynth;

impl Synth for TextSynth {
    fn name(&self) -> &'static str {
        "text"
    }
    fn speak(
        &mut self,
        _text: &str,
        _sink: &mut dyn FnMut(&[i16]) -> bool,
    ) -> Result<(), SpeechError> {
        Ok(())
    }
}
