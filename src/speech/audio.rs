//! Audio output: a sound card through cpal (ALSA on the Pi), a WAV file, or nothing.
//!
//! Speech is written into a buffer that the sound card's callback drains; the callback notes
//! when the first sample of each utterance reaches the device, which is how latency is measured.
//! Without a usable sound card the player still accepts audio and drops it: the daemon runs on.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use super::synth::{SpeechError, SAMPLE_RATE};

/// Short tones for quick, non-verbal feedback.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Earcon {
    Lift,
    Move,
    Illegal,
    Mismatch,
    LowTime,
    Flag,
    /// The opponent touched a piece and put it back (`announce.opponent_touches = "tone"`);
    /// not one of the `announce.sounds`.
    Touch,
}

impl std::str::FromStr for Earcon {
    type Err = String;
    fn from_str(s: &str) -> Result<Earcon, String> {
        Ok(match s {
            "lift" => Earcon::Lift,
            "move" => Earcon::Move,
            "illegal" => Earcon::Illegal,
            "mismatch" => Earcon::Mismatch,
            "low_time" => Earcon::LowTime,
            "flag" => Earcon::Flag,
            _ => {
                return Err(format!(
                    "unknown sound '{s}' (accepted: lift, move, illegal, mismatch, low_time, flag)"
                ))
            }
        })
    }
}

/// The samples of an earcon: sine tones with soft edges.
pub fn earcon(e: Earcon) -> Vec<i16> {
    let tones: &[(f32, u32)] = match e {
        Earcon::Lift => &[(880.0, 40)],
        Earcon::Move => &[(660.0, 60), (880.0, 60)],
        Earcon::Illegal => &[(330.0, 120), (220.0, 180)],
        Earcon::Mismatch => &[(440.0, 90), (0.0, 60), (440.0, 90)],
        Earcon::LowTime => &[(1000.0, 70), (0.0, 50), (1000.0, 70)],
        Earcon::Flag => &[(880.0, 90), (660.0, 90), (440.0, 200)],
        Earcon::Touch => &[(1320.0, 30), (0.0, 40), (1320.0, 30)],
    };
    let mut out = Vec::new();
    for &(freq, ms) in tones {
        let n = (SAMPLE_RATE * ms / 1000) as usize;
        let fade = (SAMPLE_RATE / 200) as usize; // 5 ms
        for i in 0..n {
            let edge = (i.min(n - 1 - i) as f32 / fade as f32).min(1.0);
            let v = (2.0 * std::f32::consts::PI * freq * i as f32 / SAMPLE_RATE as f32).sin();
            out.push((v * edge * 9000.0) as i16);
        }
    }
    out
}

/// What the device callback shares with the player.
#[derive(Default)]
struct Ring {
    samples: VecDeque<i16>,
    /// Samples handed to the device so far.
    played: u64,
    /// Samples written so far.
    written: u64,
    /// Utterances not yet reached by the device: (first sample's position, id).
    marks: VecDeque<(u64, u64)>,
    /// When the first sample of each utterance was handed to the device.
    first_audio: Vec<(u64, Instant)>,
    /// Frames the device has taken since the stream was opened, and when it first asked.
    frames_out: u64,
    first_fill: Option<Instant>,
    /// The device takes samples faster than any clock would: not paced.
    unpaced: bool,
    /// An utterance is being synthesized: more samples are coming.
    speaking: bool,
}

struct Shared {
    ring: Mutex<Ring>,
    drained: Condvar,
    more: Condvar,
}

/// Where audio goes.
pub struct Player {
    shared: Arc<Shared>,
    volume: f32,
    stream: Option<cpal::Stream>,
    /// The sound card to reopen: a device that is not paced by a clock (ALSA's null device
    /// behind the file plugin, as in the tests) would take endless silence, so its stream is
    /// closed when there is nothing to play and opened again for the next sound.
    reopen: Option<Option<String>>,
    wav: Option<hound::WavWriter<BufWriter<File>>>,
    /// Why there is no sound card output, if there is none.
    pub no_device: Option<String>,
}

fn wav_spec() -> hound::WavSpec {
    hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    }
}

impl Player {
    /// A player that writes to a WAV file instead of a sound card.
    pub fn to_wav(path: &Path, volume: f32) -> Result<Player, SpeechError> {
        let wav = hound::WavWriter::create(path, wav_spec())
            .map_err(|e| SpeechError::Audio(format!("cannot write {}: {e}", path.display())))?;
        Ok(Player {
            shared: shared(),
            volume,
            stream: None,
            reopen: None,
            wav: Some(wav),
            no_device: None,
        })
    }

    /// A player that discards audio (the `text` backend, or tests).
    pub fn silent() -> Player {
        Player {
            shared: shared(),
            volume: 1.0,
            stream: None,
            reopen: None,
            wav: None,
            no_device: Some("no audio wanted".into()),
        }
    }

    /// The sound card named `device` (any part of its name), or the default one. Without a
    /// usable card the player discards audio and says why in `no_device`.
    pub fn to_device(device: Option<&str>, volume: f32) -> Player {
        let shared = shared();
        quiet_alsa();
        match open_stream(device, shared.clone()).map_err(|why| {
            if no_sound_card() {
                NO_SOUND_CARD.to_string()
            } else {
                why
            }
        }) {
            // Checked, then closed again: it opens with the first sound, so that a device that
            // is not paced takes no silence before it.
            Ok(stream) => {
                drop(stream);
                Player {
                    shared,
                    volume,
                    stream: None,
                    reopen: Some(device.map(str::to_string)),
                    wav: None,
                    no_device: None,
                }
            }
            Err(why) => Player {
                shared,
                volume,
                stream: None,
                reopen: None,
                wav: None,
                no_device: Some(why),
            },
        }
    }

    /// Starts an utterance: its first sample is the next one written.
    pub fn mark(&self, id: u64) {
        if let Ok(mut r) = self.shared.ring.lock() {
            let at = r.written;
            r.marks.push_back((at, id));
            r.speaking = true;
        }
    }

    /// The utterance is complete: no more samples are coming for now.
    pub fn end(&self) {
        if let Ok(mut r) = self.shared.ring.lock() {
            r.speaking = false;
        }
        self.shared.more.notify_all();
    }

    /// Sets the loudness (1.0 is as synthesized) for what is written from now on.
    pub fn set_volume(&mut self, volume: f32) {
        self.volume = volume.clamp(0.0, 2.0);
    }

    /// Queues samples for playing.
    pub fn write(&mut self, samples: &[i16]) {
        let v = self.volume;
        let scaled = samples
            .iter()
            .map(|s| (*s as f32 * v).clamp(-32768.0, 32767.0) as i16);
        if let Some(w) = &mut self.wav {
            for s in scaled.clone() {
                let _ = w.write_sample(s);
            }
        }
        if self.stream.is_none() {
            if let Some(device) = &self.reopen {
                match open_stream(device.as_deref(), self.shared.clone()) {
                    Ok(stream) => self.stream = Some(stream),
                    Err(why) => {
                        self.no_device = Some(why);
                        self.reopen = None;
                    }
                }
            }
        }
        if self.stream.is_none() {
            // Nothing plays: the samples count as handed over at once.
            if let Ok(mut r) = self.shared.ring.lock() {
                r.written += samples.len() as u64;
                r.played = r.written;
                let now = Instant::now();
                while let Some(&(_, id)) = r.marks.front() {
                    r.first_audio.push((id, now));
                    r.marks.pop_front();
                }
            }
            return;
        }
        if let Ok(mut r) = self.shared.ring.lock() {
            r.samples.extend(scaled);
            r.written += samples.len() as u64;
        }
        self.shared.more.notify_all();
    }

    /// Everything has been played: a device that takes samples faster than any clock would (not
    /// paced) has its stream closed until the next sound.
    pub fn idle(&mut self, device: Option<&str>) {
        if self.stream.is_none() || self.pending() > 0 {
            return;
        }
        let unpaced = self.shared.ring.lock().is_ok_and(|r| r.unpaced);
        if unpaced {
            self.stream = None;
            self.reopen = Some(device.map(str::to_string));
        }
    }

    /// Drops everything not yet played (an interruption).
    pub fn flush(&mut self) {
        if let Ok(mut r) = self.shared.ring.lock() {
            let dropped = r.samples.len() as u64;
            r.samples.clear();
            r.played += dropped;
            r.marks.clear();
        }
        self.shared.drained.notify_all();
    }

    /// Samples written but not yet handed to the device.
    pub fn pending(&self) -> usize {
        self.shared
            .ring
            .lock()
            .map(|r| r.samples.len())
            .unwrap_or(0)
    }

    /// Waits until everything written has been handed to the device, or `timeout` passes.
    pub fn wait_drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let Ok(mut r) = self.shared.ring.lock() else {
            return false;
        };
        while !r.samples.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self
                .shared
                .drained
                .wait_timeout(r, left.min(Duration::from_millis(20)))
            {
                Ok((g, _)) => r = g,
                Err(_) => return false,
            }
        }
        true
    }

    /// When the first sample of each utterance reached the device, by utterance id.
    pub fn take_first_audio(&self) -> Vec<(u64, Instant)> {
        self.shared
            .ring
            .lock()
            .map(|mut r| std::mem::take(&mut r.first_audio))
            .unwrap_or_default()
    }

    /// Finishes a WAV file and stops the device.
    pub fn finish(mut self) -> Result<(), SpeechError> {
        if let Some(w) = self.wav.take() {
            w.finalize()
                .map_err(|e| SpeechError::Audio(e.to_string()))?;
        }
        if let Some(s) = self.stream.take() {
            let _ = s.pause();
        }
        Ok(())
    }
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        ring: Mutex::new(Ring::default()),
        drained: Condvar::new(),
        more: Condvar::new(),
    })
}

/// What `no_device` says when the machine has no sound card at all.
pub const NO_SOUND_CARD: &str = "no sound card found";

/// The machine has no sound card for ALSA to play on (no playback device in /dev/snd). ALSA
/// configurations that play elsewhere (a file, a network) still open; this only names the
/// reason when nothing did.
fn no_sound_card() -> bool {
    std::fs::read_dir("/dev/snd").map_or(true, |dir| {
        !dir.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("pcmC") && name.ends_with('p')
        })
    })
}

/// alsa-lib prints its own errors to stderr (a page of them when there is no sound card): they
/// are silenced once, and the daemon says in one line what went wrong.
#[cfg(target_os = "linux")]
fn quiet_alsa() {
    use std::os::raw::{c_char, c_int};
    type Handler = unsafe extern "C" fn(*const c_char, c_int, *const c_char, c_int, *const c_char);
    #[link(name = "asound")]
    extern "C" {
        fn snd_lib_error_set_handler(handler: Option<Handler>) -> c_int;
    }
    // alsa-lib calls the handler with more (variadic) arguments, which it ignores; on the C
    // calling conventions of Linux the caller removes them.
    unsafe extern "C" fn silent(
        _file: *const c_char,
        _line: c_int,
        _function: *const c_char,
        _err: c_int,
        _fmt: *const c_char,
    ) {
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: sets a process-wide handler once, to a function that touches nothing.
    ONCE.call_once(|| unsafe {
        snd_lib_error_set_handler(Some(silent));
    });
}

#[cfg(not(target_os = "linux"))]
fn quiet_alsa() {}

/// Lists the output devices by name, for the config's `speech.device`.
pub fn device_names() -> Vec<String> {
    quiet_alsa();
    let host = cpal::default_host();
    host.output_devices()
        .map(|ds| {
            ds.filter_map(|d| d.description().ok().map(|x| x.name().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

fn open_stream(device: Option<&str>, shared: Arc<Shared>) -> Result<cpal::Stream, String> {
    let host = cpal::default_host();
    let dev = match device {
        None | Some("") | Some("default") => host
            .default_output_device()
            .ok_or_else(|| "no default sound card".to_string())?,
        Some(name) => host
            .output_devices()
            .map_err(|e| e.to_string())?
            .find(|d| d.description().is_ok_and(|x| x.name().contains(name)))
            .ok_or_else(|| {
                format!(
                    "no sound card named '{name}' (found: {})",
                    device_names().join(", ")
                )
            })?,
    };
    // Mono 16-bit at the synthesizer's rate when the device takes it (ALSA's plug layer
    // converts); otherwise the device's own format, converted here.
    let wanted = cpal::StreamConfig {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        buffer_size: cpal::BufferSize::Default,
    };
    let err_fn = |e| eprintln!("chessboardd: audio device error: {e}");
    let direct = {
        let shared = shared.clone();
        dev.build_output_stream::<i16, _, _>(
            &wanted,
            move |out: &mut [i16], _| fill(&shared, out, 1, 1.0, |s| s),
            err_fn,
            None,
        )
    };
    let stream = match direct {
        Ok(s) => s,
        Err(_) => {
            let cfg = dev
                .default_output_config()
                .map_err(|e| format!("sound card: {e}"))?;
            let channels = cfg.channels() as usize;
            let step = SAMPLE_RATE as f64 / cfg.sample_rate() as f64;
            let config: cpal::StreamConfig = cfg.into();
            dev.build_output_stream::<f32, _, _>(
                &config,
                move |out: &mut [f32], _| {
                    fill(&shared, out, channels, step, |s| s as f32 / 32768.0)
                },
                err_fn,
                None,
            )
            .map_err(|e| format!("sound card: {e}"))?
        }
    };
    stream.play().map_err(|e| format!("sound card: {e}"))?;
    Ok(stream)
}

/// The device callback: hands over queued samples (nearest-sample rate conversion by `step`
/// input samples per output frame), silence when there are none.
fn fill<T: Copy + Default>(
    shared: &Shared,
    out: &mut [T],
    channels: usize,
    step: f64,
    conv: impl Fn(i16) -> T,
) {
    let Ok(mut r) = shared.ring.lock() else {
        out.iter_mut().for_each(|s| *s = T::default());
        return;
    };
    // A device without a clock waits for the synthesizer rather than taking silence, and takes
    // silence at about the pace of a clock when there is nothing to say (a real card never
    // waits here: it is paced).
    if r.unpaced {
        let deadline = Instant::now() + Duration::from_millis(if r.speaking { 50 } else { 20 });
        while r.samples.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match shared.more.wait_timeout(r, left) {
                Ok((g, _)) => r = g,
                Err(_) => return,
            }
        }
    }
    let mut phase = 0.0f64;
    let mut any = false;
    r.frames_out += (out.len() / channels.max(1)) as u64;
    let first = *r.first_fill.get_or_insert_with(Instant::now);
    let secs = first.elapsed().as_secs_f64();
    // A card with a clock cannot have taken more than a few buffers beyond its rate (at most
    // 192 kHz); a device without one takes far more within the first milliseconds.
    if !r.unpaced && r.frames_out as f64 > 200_000.0 * secs + 65_536.0 {
        r.unpaced = true;
    }
    for frame in out.chunks_mut(channels.max(1)) {
        let v = match r.samples.front() {
            Some(&s) => {
                any = true;
                phase += step;
                while phase >= 1.0 {
                    phase -= 1.0;
                    r.samples.pop_front();
                    r.played += 1;
                }
                conv(s)
            }
            None => T::default(),
        };
        frame.iter_mut().for_each(|x| *x = v);
    }
    if any {
        let now = Instant::now();
        let played = r.played;
        while let Some(&(at, id)) = r.marks.front() {
            if at >= played {
                break;
            }
            r.first_audio.push((id, now));
            r.marks.pop_front();
        }
    }
    if r.samples.is_empty() {
        shared.drained.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earcons_are_short_and_audible() {
        for e in [
            Earcon::Lift,
            Earcon::Move,
            Earcon::Illegal,
            Earcon::Mismatch,
            Earcon::LowTime,
            Earcon::Flag,
        ] {
            let s = earcon(e);
            let ms = s.len() as u32 * 1000 / SAMPLE_RATE;
            assert!((30..=400).contains(&ms), "{e:?}: {ms} ms");
            assert!(
                s.iter().any(|x| x.unsigned_abs() > 8000),
                "{e:?} is too quiet"
            );
            assert!(
                s[0].unsigned_abs() < 100 && s[s.len() - 1].unsigned_abs() < 300,
                "{e:?} clicks"
            );
        }
    }

    #[test]
    fn a_wav_player_writes_what_it_is_given() {
        let path =
            std::env::temp_dir().join(format!("chessboardd-audio-{}.wav", std::process::id()));
        let mut p = Player::to_wav(&path, 0.5).unwrap();
        p.mark(7);
        p.write(&[1000, -1000, 2000]);
        assert_eq!(p.take_first_audio().len(), 1);
        p.finish().unwrap();
        let r = hound::WavReader::open(&path).unwrap();
        assert_eq!(r.spec().sample_rate, SAMPLE_RATE);
        let s: Vec<i16> = r.into_samples().map(|x| x.unwrap()).collect();
        assert_eq!(s, vec![500, -500, 1000]);
    }
}
