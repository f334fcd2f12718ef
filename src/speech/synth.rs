//! Speech synthesis backends behind one small trait, chosen by name from one table,
//! [`BACKENDS`].
//!
//! A backend turns text into 16-bit mono samples at [`SAMPLE_RATE`], handing them over in chunks
//! as soon as they exist, so that playback can start before the phrase is finished.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::clips::ClipSynth;
use super::espeak::EspeakSynth;
use super::speaker::SpeechConfig;
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
    #[cfg(feature = "speech-dispatcher")]
    SpeechDispatcher,
}

/// A backend's row of [`BACKENDS`].
pub struct BackendRow {
    pub backend: Backend,
    /// Its name in the config (`speech.backend`) and on the command line (`--speech`).
    pub name: &'static str,
    /// What it is, for `--help`.
    pub about: &'static str,
    /// Makes its synthesizer.
    pub make: fn(&SpeechConfig) -> Result<Box<dyn Synth>, SpeechError>,
    /// Whether the daemon plays its samples (not so when it makes no sound, or its own).
    pub played: bool,
}

/// Every speech backend built into this binary: adding one is a row here and its module.
/// The names accepted in the config, in errors and in `--help` come from this table.
pub const BACKENDS: &[BackendRow] = &[
    BackendRow {
        backend: Backend::Espeak,
        name: "espeak",
        about: "libespeak-ng, default",
        make: |c| Ok(Box::new(EspeakSynth::new(c.voice)?)),
        played: true,
    },
    BackendRow {
        backend: Backend::Clips,
        name: "clips",
        about: "a voice pack",
        make: |c| Ok(Box::new(ClipSynth::load(&c.voice_pack)?)),
        played: true,
    },
    BackendRow {
        backend: Backend::Text,
        name: "text",
        about: "no sound",
        make: |_| Ok(Box::new(TextSynth)),
        played: false,
    },
    #[cfg(feature = "speech-dispatcher")]
    BackendRow {
        backend: Backend::SpeechDispatcher,
        name: "speech-dispatcher",
        about: "Speech Dispatcher",
        make: |c| Ok(Box::new(super::dispatcher::DispatcherSynth::new(c.voice)?)),
        played: false,
    },
];

/// The backends this binary was built without, each with the cargo feature that builds it.
const NOT_BUILT: &[(&str, &str)] = &[
    #[cfg(not(feature = "speech-dispatcher"))]
    ("speech-dispatcher", "speech-dispatcher"),
];

impl Backend {
    /// The backend's row of [`BACKENDS`] (every backend has one).
    pub fn row(self) -> &'static BackendRow {
        BACKENDS
            .iter()
            .find(|r| r.backend == self)
            .unwrap_or(&BACKENDS[0])
    }

    /// Makes the backend's synthesizer.
    pub fn make(self, cfg: &SpeechConfig) -> Result<Box<dyn Synth>, SpeechError> {
        (self.row().make)(cfg)
    }

    /// The names of the backends built in: "espeak, clips, text".
    pub fn accepted() -> String {
        let names: Vec<&str> = BACKENDS.iter().map(|r| r.name).collect();
        names.join(", ")
    }

    /// The backends for `--help`: "espeak (libespeak-ng, default), clips (a voice pack), ...".
    pub fn help() -> String {
        let rows: Vec<String> = BACKENDS
            .iter()
            .map(|r| format!("{} ({})", r.name, r.about))
            .collect();
        rows.join(", ")
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        if let Some(row) = BACKENDS.iter().find(|r| r.name == s) {
            return Ok(row.backend);
        }
        let accepted = Backend::accepted();
        Err(match NOT_BUILT.iter().find(|(name, _)| *name == s) {
            Some((name, feature)) => format!(
                "speech backend '{name}' is not built into this binary \
                 (build with: cargo build --features {feature}; accepted: {accepted})"
            ),
            None => format!("unknown speech backend '{s}' (accepted: {accepted})"),
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.row().name)
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

/// The espeak-ng voice for a language: espeak-ng names its voices by the language's tag.
/// Appendix F's words are German.
pub fn espeak_voice(lang: Lang) -> &'static str {
    lang.tag()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_are_named_from_their_table() {
        for row in BACKENDS {
            assert_eq!(row.name.parse::<Backend>(), Ok(row.backend));
            assert_eq!(row.backend.to_string(), row.name);
        }
        assert_eq!(
            "festival".parse::<Backend>().unwrap_err(),
            format!(
                "unknown speech backend 'festival' (accepted: {})",
                Backend::accepted()
            )
        );
        #[cfg(not(feature = "speech-dispatcher"))]
        {
            assert_eq!(Backend::accepted(), "espeak, clips, text");
            assert_eq!(
                "speech-dispatcher".parse::<Backend>().unwrap_err(),
                "speech backend 'speech-dispatcher' is not built into this binary (build with: \
                 cargo build --features speech-dispatcher; accepted: espeak, clips, text)"
            );
            assert_eq!(
                Backend::help(),
                "espeak (libespeak-ng, default), clips (a voice pack), text (no sound)"
            );
        }
    }
}
