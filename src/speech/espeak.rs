//! The `espeak` backend: libespeak-ng in this process.
//!
//! The library is initialised once per process and kept; its state is global, so every call
//! goes through one lock. Synthesis is synchronous: libespeak-ng hands over audio in chunks of
//! [`CHUNK_MS`] from inside `espeak_Synth`, on the calling thread, and each chunk is passed on
//! at once, so playback can start after the first few milliseconds of work.

use std::cell::Cell;
use std::ffi::CString;
use std::os::raw::{c_int, c_short};
use std::sync::{Mutex, OnceLock};

use espeakng_sys as ffi;

use super::synth::{espeak_voice, SpeechError, Synth, Voice, SAMPLE_RATE};
use crate::words::Lang;

/// Audio chunk length asked of libespeak-ng.
pub const CHUNK_MS: c_int = 20;

/// The library's global state: initialised or not, and which voice and parameters are set.
struct Library {
    voice: Option<Voice>,
}

static LIBRARY: OnceLock<Result<Mutex<Library>, String>> = OnceLock::new();

type SinkPtr = *mut (dyn FnMut(&[i16]) -> bool + 'static);

thread_local! {
    /// The sink of the phrase being synthesized on this thread (set only inside `speak`).
    static SINK: Cell<Option<SinkPtr>> = const { Cell::new(None) };
}

unsafe extern "C" fn on_audio(
    wav: *mut c_short,
    samples: c_int,
    _events: *mut ffi::espeak_EVENT,
) -> c_int {
    if wav.is_null() || samples <= 0 {
        return 0;
    }
    let Some(sink) = SINK.with(Cell::get) else {
        return 1;
    };
    // SAFETY: libespeak-ng hands `samples` valid samples; the sink pointer is set by `speak`
    // for exactly the duration of the synchronous `espeak_Synth` call on this thread.
    let chunk = unsafe { std::slice::from_raw_parts(wav as *const i16, samples as usize) };
    let go_on =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*sink)(chunk) }));
    match go_on {
        Ok(true) => 0,
        _ => 1,
    }
}

fn library() -> Result<&'static Mutex<Library>, SpeechError> {
    LIBRARY
        .get_or_init(|| {
            // SAFETY: plain FFI calls with valid arguments; a null path means the default data.
            let rate = unsafe {
                ffi::espeak_Initialize(
                    ffi::espeak_AUDIO_OUTPUT_AUDIO_OUTPUT_SYNCHRONOUS,
                    CHUNK_MS,
                    std::ptr::null(),
                    ffi::espeakINITIALIZE_DONT_EXIT as c_int,
                )
            };
            if rate <= 0 {
                return Err("initialisation failed: is espeak-ng-data installed?".to_string());
            }
            if rate as u32 != SAMPLE_RATE {
                return Err(format!("unexpected sample rate {rate}"));
            }
            unsafe { ffi::espeak_SetSynthCallback(Some(on_audio)) };
            Ok(Mutex::new(Library { voice: None }))
        })
        .as_ref()
        .map_err(|e| SpeechError::Espeak(e.clone()))
}

fn apply(lib: &mut Library, voice: Voice) -> Result<(), SpeechError> {
    if lib.voice == Some(voice) {
        return Ok(());
    }
    let name =
        CString::new(espeak_voice(voice.lang)).map_err(|e| SpeechError::Espeak(e.to_string()))?;
    // SAFETY: a valid NUL-terminated string and plain integer parameters.
    unsafe {
        if ffi::espeak_SetVoiceByName(name.as_ptr()) != ffi::espeak_ERROR_EE_OK {
            return Err(SpeechError::Espeak(format!(
                "no voice '{}' (is espeak-ng-data installed?)",
                espeak_voice(voice.lang)
            )));
        }
        ffi::espeak_SetParameter(
            ffi::espeak_PARAMETER_espeakRATE,
            voice.rate.clamp(80, 450) as c_int,
            0,
        );
        ffi::espeak_SetParameter(
            ffi::espeak_PARAMETER_espeakPITCH,
            voice.pitch.min(100) as c_int,
            0,
        );
        ffi::espeak_SetParameter(
            ffi::espeak_PARAMETER_espeakVOLUME,
            voice.volume.min(200) as c_int,
            0,
        );
    }
    lib.voice = Some(voice);
    Ok(())
}

/// libespeak-ng with one voice.
pub struct EspeakSynth {
    voice: Voice,
}

impl EspeakSynth {
    /// Initialises the library (once per process) and the voice.
    pub fn new(voice: Voice) -> Result<EspeakSynth, SpeechError> {
        let lib = library()?;
        let mut guard = lib
            .lock()
            .map_err(|_| SpeechError::Espeak("lock poisoned".into()))?;
        apply(&mut guard, voice)?;
        Ok(EspeakSynth { voice })
    }
}

impl Synth for EspeakSynth {
    fn name(&self) -> &'static str {
        "espeak"
    }

    fn set_rate(&mut self, words_a_minute: u32) -> bool {
        self.voice.rate = words_a_minute.clamp(80, 450);
        true
    }

    fn speak(
        &mut self,
        text: &str,
        sink: &mut dyn FnMut(&[i16]) -> bool,
    ) -> Result<(), SpeechError> {
        let lib = library()?;
        let mut guard = lib
            .lock()
            .map_err(|_| SpeechError::Espeak("lock poisoned".into()))?;
        apply(&mut guard, self.voice)?;
        let text = CString::new(as_the_voice_says(self.voice.lang, text).replace('\0', " "))
            .map_err(|e| SpeechError::Espeak(e.to_string()))?;
        // SAFETY: the sink lives for this whole call; the pointer is cleared before returning,
        // and the callback runs only inside espeak_Synth on this thread (synchronous mode).
        let ptr: SinkPtr =
            unsafe { std::mem::transmute::<*mut (dyn FnMut(&[i16]) -> bool + '_), SinkPtr>(sink) };
        SINK.with(|s| s.set(Some(ptr)));
        let err = unsafe {
            ffi::espeak_Synth(
                text.as_ptr().cast(),
                text.as_bytes_with_nul().len(),
                0,
                ffi::espeak_POSITION_TYPE_POS_CHARACTER,
                0,
                ffi::espeakCHARS_UTF8,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        SINK.with(|s| s.set(None));
        drop(guard);
        if err != ffi::espeak_ERROR_EE_OK {
            return Err(SpeechError::Espeak(format!("synthesis failed ({err})")));
        }
        Ok(())
    }
}

/// Words the voice of a language mispronounces, each written as that voice reads it right: the
/// phonetic file name "Cesar" is "Zesar" in German (espeak says "Kesar"), and the French
/// "J'adoube" and "en passant" as a German, English, Romanian or Swedish voice says them.
/// Only what is synthesized changes: the text in the events stays the words of the language.
const SPOKEN_AS: &[(Lang, &str, &str)] = &[
    (Lang::AppendixF, "Cesar", "Zesar"),
    (Lang::AppendixF, "J'adoube", "Schaduhb"),
    (Lang::AppendixF, "en passant", "ang passang"),
    (Lang::De, "Cesar", "Zesar"),
    (Lang::De, "J'adoube", "Schaduhb"),
    (Lang::De, "en passant", "ang passang"),
    (Lang::En, "J'adoube", "zhadoob"),
    (Lang::Ro, "J'adoube", "jadub"),
    (Lang::Sv, "J'adoube", "schadubb"),
];

/// `text` with the words of [`SPOKEN_AS`] for `lang` replaced, whole words only, whether or
/// not they begin with a capital.
fn as_the_voice_says(lang: Lang, text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    for &(_, word, said) in SPOKEN_AS.iter().filter(|(l, _, _)| *l == lang) {
        let lower = |s: &str| {
            let mut s = s.to_string();
            s[..1].make_ascii_lowercase();
            s
        };
        for (w, by) in [
            (word.to_string(), said.to_string()),
            (lower(word), lower(said)),
        ] {
            if out.contains(w.as_str()) {
                out = std::borrow::Cow::Owned(replace_words(&out, &w, &by));
            }
        }
    }
    out
}

/// Every whole-word `word` in `text` replaced by `by`.
fn replace_words(text: &str, word: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        let whole =
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { word });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(lang: Lang, text: &str) -> Vec<i16> {
        let mut s = EspeakSynth::new(Voice {
            lang,
            ..Voice::default()
        })
        .unwrap();
        let mut out = Vec::new();
        s.speak(text, &mut |c| {
            out.extend_from_slice(c);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn speaks_in_chunks_of_plausible_length() {
        let samples = render(Lang::AppendixF, "Springer Felix drei");
        let secs = samples.len() as f64 / SAMPLE_RATE as f64;
        assert!((0.6..4.0).contains(&secs), "{secs} s");
        let loud = samples.iter().filter(|s| s.unsigned_abs() > 1000).count();
        assert!(loud > samples.len() / 10, "mostly silence");
        // A longer phrase takes longer.
        let long = render(
            Lang::AppendixF,
            "Dame Hector vier schlägt Eva eins Schachmatt",
        );
        assert!(long.len() > samples.len());
    }

    #[test]
    fn words_the_voice_mispronounces_are_written_as_it_says_them() {
        assert_eq!(
            as_the_voice_says(Lang::AppendixF, "Läufer Cesar vier. j'adoube; Cesare"),
            "Läufer Zesar vier. schaduhb; Cesare"
        );
        assert_eq!(
            as_the_voice_says(Lang::De, "Eva schlägt David sechs en passant"),
            "Eva schlägt David sechs ang passang"
        );
        assert_eq!(
            as_the_voice_says(Lang::En, "Bishop Cesar four"),
            "Bishop Cesar four"
        );
        assert_eq!(as_the_voice_says(Lang::Sv, "J'adoube"), "schadubb");
    }

    #[test]
    fn a_sink_that_says_stop_stops_the_phrase() {
        let mut s = EspeakSynth::new(Voice::default()).unwrap();
        let mut chunks = 0;
        s.speak(
            "Lange Rochade Schach. Weiß gewinnt. Dreimalige Stellungswiederholung.",
            &mut |_| {
                chunks += 1;
                false
            },
        )
        .unwrap();
        assert_eq!(chunks, 1);
    }
}
