//! The `speech-dispatcher` backend (cargo feature `speech-dispatcher`): for systems where all
//! speech goes through Speech Dispatcher. It plays the audio itself, so this backend hands no
//! samples to the daemon's player; it waits while the phrase is spoken and stops it when the
//! queue interrupts.

use std::time::Duration;

use tts::{Backends, Tts};

use super::synth::{espeak_voice, SpeechError, Synth, Voice};

pub struct DispatcherSynth {
    tts: Tts,
}

fn err(e: impl std::fmt::Display) -> SpeechError {
    SpeechError::Audio(format!("speech-dispatcher: {e}"))
}

impl DispatcherSynth {
    pub fn new(voice: Voice) -> Result<DispatcherSynth, SpeechError> {
        let mut tts = Tts::new(Backends::SpeechDispatcher).map_err(err)?;
        // Choose a voice of the announcement language when the server offers one.
        let lang = espeak_voice(voice.lang);
        if let Ok(voices) = tts.voices() {
            if let Some(v) = voices
                .into_iter()
                .find(|v| v.language().primary_language() == lang)
            {
                let _ = tts.set_voice(&v);
            }
        }
        let rate = tts.min_rate()
            + (tts.max_rate() - tts.min_rate()) * (voice.rate.clamp(80, 450) - 80) as f32 / 370.0;
        let _ = tts.set_rate(rate);
        Ok(DispatcherSynth { tts })
    }
}

impl Synth for DispatcherSynth {
    fn name(&self) -> &'static str {
        "speech-dispatcher"
    }

    fn speak(
        &mut self,
        text: &str,
        sink: &mut dyn FnMut(&[i16]) -> bool,
    ) -> Result<(), SpeechError> {
        self.tts.speak(text, false).map_err(err)?;
        std::thread::sleep(Duration::from_millis(20));
        while self.tts.is_speaking().unwrap_or(false) {
            if !sink(&[]) {
                let _ = self.tts.stop();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}
