//! The `clips` backend: a voice pack, one recording per word, put together word by word.
//!
//! A pack is a directory of `WORD.wav` files, the word in lower case as it is written
//! (`springer.wav`, `schlägt.wav`, `j'adoube.wav`). Users can record their own voice;
//! `chessboardd voice-pack build` renders a complete pack with espeak-ng.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::synth::{SpeechError, Synth, SAMPLE_RATE};
use crate::words::Words;

/// Silence between words and after a sentence.
const WORD_GAP_MS: u32 = 40;
const SENTENCE_GAP_MS: u32 = 250;

/// The words of a text, lower case, without punctuation; `None` marks a sentence break.
pub fn tokens(text: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| {
            matches!(c, '.' | ',' | ':' | ';' | '!' | '?' | '"' | '(' | ')')
        });
        if !word.is_empty() {
            out.push(Some(word.to_lowercase()));
        }
        if raw.ends_with(['.', ':', '!', '?']) {
            out.push(None);
        }
    }
    out
}

/// Every word a complete pack needs: all words of the language's table, and the numbers the
/// clock and move counts use.
pub fn pack_words(words: &Words) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for text in words.all_texts() {
        all.extend(tokens(text).into_iter().flatten());
    }
    for n in 0..=200 {
        all.insert(n.to_string());
    }
    all
}

fn file_of(dir: &Path, word: &str) -> PathBuf {
    dir.join(format!("{word}.wav"))
}

/// The words of `needed` that the pack in `dir` lacks.
pub fn missing(dir: &Path, needed: &BTreeSet<String>) -> Vec<String> {
    needed
        .iter()
        .filter(|w| !file_of(dir, w).is_file())
        .cloned()
        .collect()
}

/// Reads a WAV file as mono 16-bit at [`SAMPLE_RATE`], whatever its format.
pub fn read_wav(path: &Path) -> Result<Vec<i16>, String> {
    let mut r = hound::WavReader::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let spec = r.spec();
    let channels = spec.channels.max(1) as usize;
    let raw: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Int => {
            let scale = (1i64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f32;
            r.samples::<i32>()
                .map(|s| s.map(|v| v as f32 / scale))
                .collect::<Result<_, _>>()
        }
        hound::SampleFormat::Float => r.samples::<f32>().collect::<Result<_, _>>(),
    }
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let mono: Vec<f32> = raw
        .chunks(channels)
        .map(|f| f.iter().sum::<f32>() / f.len() as f32)
        .collect();
    let step = spec.sample_rate.max(1) as f64 / SAMPLE_RATE as f64;
    let n = (mono.len() as f64 / step) as usize;
    Ok((0..n)
        .map(|i| {
            let pos = i as f64 * step;
            let (a, frac) = (pos as usize, (pos.fract()) as f32);
            let x = mono[a] * (1.0 - frac) + mono.get(a + 1).copied().unwrap_or(mono[a]) * frac;
            (x * 32767.0).clamp(-32768.0, 32767.0) as i16
        })
        .collect())
}

/// A loaded voice pack.
pub struct ClipSynth {
    dir: PathBuf,
    clips: HashMap<String, Vec<i16>>,
}

impl ClipSynth {
    /// Loads every `*.wav` of `dir` into memory.
    pub fn load(dir: &Path) -> Result<ClipSynth, SpeechError> {
        let err = |msg: String| SpeechError::VoicePack {
            dir: dir.to_path_buf(),
            msg,
        };
        let entries = std::fs::read_dir(dir).map_err(|e| err(e.to_string()))?;
        let mut clips = HashMap::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("wav"))
            {
                if let Some(word) = path.file_stem().and_then(|s| s.to_str()) {
                    clips.insert(word.to_lowercase(), read_wav(&path).map_err(err)?);
                }
            }
        }
        if clips.is_empty() {
            return Err(err(
                "no WAV files (build one with: chessboardd voice-pack build DIR)".into(),
            ));
        }
        Ok(ClipSynth {
            dir: dir.to_path_buf(),
            clips,
        })
    }

    /// The words of `text` this pack cannot say.
    pub fn unknown_words(&self, text: &str) -> Vec<String> {
        tokens(text)
            .into_iter()
            .flatten()
            .filter(|w| !self.clips.contains_key(w))
            .collect()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Synth for ClipSynth {
    fn name(&self) -> &'static str {
        "clips"
    }

    fn speak(
        &mut self,
        text: &str,
        sink: &mut dyn FnMut(&[i16]) -> bool,
    ) -> Result<(), SpeechError> {
        let gap = vec![0i16; (SAMPLE_RATE * WORD_GAP_MS / 1000) as usize];
        let pause = vec![0i16; (SAMPLE_RATE * SENTENCE_GAP_MS / 1000) as usize];
        let mut first = true;
        for token in tokens(text) {
            let chunk: &[i16] = match &token {
                None => &pause,
                // A word the pack lacks is left out rather than spelled wrongly.
                Some(w) => match self.clips.get(w) {
                    Some(c) => c,
                    None => continue,
                },
            };
            if !first && token.is_some() && !sink(&gap) {
                return Ok(());
            }
            first = false;
            if !sink(chunk) {
                return Ok(());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{FileWords, Lang};

    #[test]
    fn tokens_drop_punctuation_and_mark_sentences() {
        assert_eq!(
            tokens("Berührt, geführt: Springer Gustav eins. J'adoube"),
            vec![
                Some("berührt".into()),
                Some("geführt".into()),
                None,
                Some("springer".into()),
                Some("gustav".into()),
                Some("eins".into()),
                None,
                Some("j'adoube".into()),
            ]
        );
    }

    #[test]
    fn a_pack_needs_every_word_of_the_table() {
        let w = pack_words(&Words::new(Lang::AppendixF, FileWords::Phonetic));
        for word in [
            "anna",
            "hector",
            "eins",
            "acht",
            "schlägt",
            "kurze",
            "rochade",
            "läufer",
            "passant",
            "schachmatt",
            "60",
        ] {
            assert!(w.contains(word), "{word}");
        }
    }

    #[test]
    fn a_pack_is_read_and_words_are_put_together() {
        let dir = std::env::temp_dir().join(format!("chessboardd-pack-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A stereo 44.1 kHz recording is taken as mono at the synthesizer's rate.
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 44_100,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        for (word, n) in [("springer", 4410), ("felix", 8820), ("drei", 2205)] {
            let mut w = hound::WavWriter::create(dir.join(format!("{word}.wav")), spec).unwrap();
            for _ in 0..n {
                w.write_sample(8000i16).unwrap();
                w.write_sample(8000i16).unwrap();
            }
            w.finalize().unwrap();
        }
        let mut s = ClipSynth::load(&dir).unwrap();
        let mut out = Vec::new();
        s.speak("Springer Felix drei", &mut |c| {
            out.extend_from_slice(c);
            true
        })
        .unwrap();
        let gaps = 2 * (SAMPLE_RATE * WORD_GAP_MS / 1000) as usize;
        assert_eq!(out.len(), (4410 + 8820 + 2205) / 2 + gaps);
        assert_eq!(s.unknown_words("Springer Eva vier"), vec!["eva", "vier"]);
        let needed: BTreeSet<String> = ["springer", "eva"].iter().map(|s| s.to_string()).collect();
        assert_eq!(missing(&dir, &needed), vec!["eva"]);
    }
}
