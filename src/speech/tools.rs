//! Speech tools behind the command line: voice-pack building and the latency benchmark.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::clips::{self, pack_words};
use super::espeak::EspeakSynth;
use super::queue::Class;
use super::speaker::{Speaker, SpeechConfig};
use super::synth::{espeak_voice, Backend, SpeechError, Synth, Voice, SAMPLE_RATE};
use crate::words::Words;

/// Renders every word a pack needs into `dir` with libespeak-ng. Returns the number of files.
pub fn build_pack(dir: &Path, words: &Words, voice: Voice) -> Result<usize, SpeechError> {
    let err = |msg: String| SpeechError::VoicePack {
        dir: dir.to_path_buf(),
        msg,
    };
    std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    let mut synth = EspeakSynth::new(voice)?;
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let needed = pack_words(words);
    for word in &needed {
        let mut samples = Vec::new();
        synth.speak(word, &mut |c| {
            samples.extend_from_slice(c);
            true
        })?;
        // Trim the silence espeak puts around a word, so words follow each other closely.
        let loud = |s: &i16| s.unsigned_abs() > 300;
        let start = samples.iter().position(loud).unwrap_or(0);
        let end = samples
            .iter()
            .rposition(loud)
            .map_or(samples.len(), |e| e + 1);
        let path = dir.join(format!("{word}.wav"));
        let mut w = hound::WavWriter::create(&path, spec)
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        for s in &samples[start..end.max(start)] {
            w.write_sample(*s).map_err(|e| err(e.to_string()))?;
        }
        w.finalize().map_err(|e| err(e.to_string()))?;
    }
    Ok(needed.len())
}

/// The words of the language that the pack in `dir` lacks.
pub fn check_pack(dir: &Path, words: &Words) -> Vec<String> {
    clips::missing(dir, &pack_words(words))
}

/// Latency figures, in milliseconds.
#[derive(Debug)]
pub struct Latency {
    pub runs: usize,
    pub p50: f64,
    pub p99: f64,
    pub cli_p50: Option<f64>,
    pub no_device: Option<String>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Speaks `phrases` one after the other `runs` times in all, each handed to the speaker as the
/// daemon hands over a completed move, and measures the time to its first sample reaching the
/// audio device; then times the naive way, `espeak-ng --stdout PHRASE` run to its end.
pub fn latency(cfg: SpeechConfig, phrases: &[String], runs: usize) -> Result<Latency, SpeechError> {
    let lang = cfg.voice.lang;
    let (mut speaker, no_device) = Speaker::start(cfg)?;
    for i in 0..runs {
        speaker.say(&phrases[i % phrases.len()], Class::Move, None);
        speaker.sync();
    }
    let report = speaker.finish();
    if let Some(e) = report.errors.first() {
        return Err(SpeechError::Audio(e.clone()));
    }
    let mut ms: Vec<f64> = report
        .latencies
        .iter()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    ms.sort_by(f64::total_cmp);
    let mut cli: Vec<f64> = Vec::new();
    for i in 0..runs.min(phrases.len().max(1) * 3) {
        let t = Instant::now();
        let ok = Command::new("espeak-ng")
            .args([
                "--stdout",
                "-v",
                espeak_voice(lang),
                &phrases[i % phrases.len()],
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            cli.clear();
            break;
        }
        cli.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    cli.sort_by(f64::total_cmp);
    Ok(Latency {
        runs: ms.len(),
        p50: percentile(&ms, 0.5),
        p99: percentile(&ms, 0.99),
        cli_p50: (!cli.is_empty()).then(|| percentile(&cli, 0.5)),
        no_device,
    })
}

/// A voice pack for the benchmark or a first start: the configured one, or one built in `tmp`.
pub fn ensure_pack(cfg: &mut SpeechConfig, words: &Words, tmp: &Path) -> Result<(), SpeechError> {
    if cfg.backend == Backend::Clips
        && check_pack(&cfg.voice_pack, words).len() == pack_words(words).len()
    {
        build_pack(tmp, words, cfg.voice)?;
        cfg.voice_pack = tmp.to_path_buf();
    }
    Ok(())
}

/// How long to wait for a phrase to play out, at most.
pub const PLAY_TIMEOUT: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{FileWords, Lang};

    #[test]
    fn a_built_pack_is_complete_and_speaks() {
        let dir =
            std::env::temp_dir().join(format!("chessboardd-built-pack-{}", std::process::id()));
        let words = Words::new(Lang::AppendixF, FileWords::Phonetic);
        assert!(!check_pack(&dir, &words).is_empty());
        let n = build_pack(&dir, &words, Voice::default()).unwrap();
        assert!(n > 100, "{n} words");
        assert!(check_pack(&dir, &words).is_empty());
        let mut s = clips::ClipSynth::load(&dir).unwrap();
        assert!(s
            .unknown_words("Springer schlägt Felix drei Schach")
            .is_empty());
        let mut len = 0;
        s.speak("Springer schlägt Felix drei Schach", &mut |c| {
            len += c.len();
            true
        })
        .unwrap();
        let secs = len as f64 / SAMPLE_RATE as f64;
        assert!((0.8..5.0).contains(&secs), "{secs} s");
        std::fs::remove_file(dir.join("schach.wav")).unwrap();
        assert_eq!(check_pack(&dir, &words), vec!["schach"]);
    }
}
