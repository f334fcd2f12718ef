//! Speech through the real stack: libespeak-ng in the daemon, cpal, ALSA. ALSA's default device
//! is routed to the `file` plugin (over the `null` device) by an `.asoundrc` in a temporary
//! HOME, so the sound that would reach a speaker lands in a WAV file we can measure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn home(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-audio-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let asoundrc = format!(
        "pcm.!default {{\n  type file\n  slave.pcm \"null\"\n  file \"{}\"\n  format \"wav\"\n}}\n",
        dir.join("card.wav").display()
    );
    std::fs::write(dir.join(".asoundrc"), asoundrc).unwrap();
    dir
}

fn run(home: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Seconds of audible sound in a WAV file (samples louder than a whisper).
fn audible_secs(path: &Path) -> f64 {
    let r = hound::WavReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rate = r.spec().sample_rate as f64;
    let channels = r.spec().channels as f64;
    let loud = r
        .into_samples::<i16>()
        .filter(|s| s.as_ref().is_ok_and(|v| v.unsigned_abs() > 500))
        .count();
    loud as f64 / rate / channels
}

#[test]
fn say_speaks_each_phrase_through_the_sound_card() {
    let cases = [
        ("appendix-f", "Springer Felix drei"),
        ("appendix-f", "Dame Hector vier schlägt Eva eins Schachmatt"),
        ("en", "Knight Felix three"),
        ("ro", "Cal Felix trei"),
        ("sv", "Springare Felix tre"),
    ];
    let h = home("say");
    let mut lengths = Vec::new();
    for (lang, text) in cases {
        let o = run(&h, &["say", "--lang", lang, text]);
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), text);
        let secs = audible_secs(&h.join("card.wav"));
        assert!(
            (0.3..6.0).contains(&secs),
            "{lang} '{text}': {secs:.2} s of sound"
        );
        lengths.push(secs);
    }
    assert!(
        lengths[1] > lengths[0] * 1.5,
        "a longer phrase sounds longer: {lengths:?}"
    );
}

#[test]
fn say_writes_a_wav_file_and_speaks_moves() {
    let h = home("wav");
    let out = h.join("move.wav");
    let o = run(
        &h,
        &[
            "say",
            "--move",
            "bxa1=N+",
            "--fen",
            "7k/7p/8/8/8/8/1pK5/R7 b - - 0 1",
            "--audio-out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "Bella schlägt Anna eins Springer Schach"
    );
    let secs = audible_secs(&out);
    assert!((0.8..6.0).contains(&secs), "{secs:.2} s");
    assert!(
        !h.join("card.wav").exists(),
        "--audio-out writes instead of the sound card"
    );
    let o = run(
        &h,
        &[
            "say",
            "--speech",
            "text",
            "--lang",
            "en",
            "--move",
            "O-O",
            "--fen",
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "Castles kingside"
    );
    assert!(
        !h.join("card.wav").exists(),
        "the text backend makes no sound"
    );
}

#[test]
fn a_voice_pack_is_built_checked_and_spoken() {
    let h = home("pack");
    let pack = h.join("pack");
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["voice-pack", "check", pack.to_str().unwrap()])
        .env("HOME", &h)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "an empty pack is incomplete");
    assert!(String::from_utf8_lossy(&o.stdout)
        .lines()
        .any(|l| l == "springer"));
    run(
        &h,
        &[
            "voice-pack",
            "build",
            "--lang",
            "appendix-f",
            pack.to_str().unwrap(),
        ],
    );
    let o = run(&h, &["voice-pack", "check", pack.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("complete"));
    std::fs::remove_file(pack.join("drei.wav")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["voice-pack", "check", pack.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "drei");
    run(&h, &["voice-pack", "build", pack.to_str().unwrap()]);
    run(
        &h,
        &[
            "say",
            "--speech",
            "clips",
            "--voice-pack",
            pack.to_str().unwrap(),
            "Springer schlägt Felix drei",
        ],
    );
    let secs = audible_secs(&h.join("card.wav"));
    assert!((0.5..6.0).contains(&secs), "{secs:.2} s");
}

#[test]
fn the_latency_benchmark_prints_its_figures_last() {
    let h = home("bench");
    for backend in ["espeak", "clips"] {
        let o = run(
            &h,
            &["bench", "latency", "--speech", backend, "--runs", "6"],
        );
        let out = String::from_utf8_lossy(&o.stdout);
        let last = out.lines().last().unwrap();
        let words: Vec<&str> = last.split_whitespace().collect();
        assert_eq!(words.len(), 5, "{last}");
        assert_eq!(words[0], "completion_to_audio_ms");
        assert_eq!(words[3], "espeak_cli_ms", "{last}");
        for (w, key) in [(words[1], "p50="), (words[2], "p99="), (words[4], "p50=")] {
            let v = w.strip_prefix(key).unwrap_or_else(|| panic!("{last}"));
            assert!(v.parse::<f64>().is_ok_and(|x| x >= 0.0), "{last}");
        }
    }
}

#[test]
fn the_demo_speaks_every_move() {
    let h = home("demo");
    let out = h.join("demo.wav");
    let o = run(
        &h,
        &[
            "demo",
            "--speed",
            "50",
            "--audio-out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches('\u{1f50a}')
            .count(),
        33
    );
    // 33 announcements and the start-up message, each well over 0.3 s of sound.
    let secs = audible_secs(&out);
    assert!(secs > 34.0 * 0.3, "{secs:.1} s of sound");
}

/// `rate up` and `volume down` reach the voice: the same phrase, faster and quieter.
#[test]
fn rate_and_volume_commands_change_the_voice() {
    use chessboardd::engine::EventKind;
    use chessboardd::speech::queue::Class;
    use chessboardd::speech::speaker::{spoken, Announce, Speaker, SpeechConfig};
    let dir = home("voice");
    let phrases = chessboardd::words::Phrases::new(
        Default::default(),
        Default::default(),
        Default::default(),
    );
    // (rate, volume) as the engine's Voice event carries them; None: as configured.
    let speak = |name: &str, voice: Option<(u32, u32)>| {
        let wav = dir.join(format!("{name}.wav"));
        let cfg = SpeechConfig {
            audio_out: Some(wav.clone()),
            ..SpeechConfig::default()
        };
        let (mut s, _) = Speaker::start(cfg).unwrap();
        if let Some((rate, volume)) = voice {
            s.event(&spoken(
                &EventKind::Voice { rate, volume },
                &Announce::default(),
                &phrases,
            ));
        }
        s.say(
            "Dame Hector vier schlägt Eva eins Schachmatt",
            Class::Query,
            None,
        );
        let report = s.finish();
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let r = hound::WavReader::open(&wav).unwrap();
        let samples: Vec<i16> = r.into_samples::<i16>().map(Result::unwrap).collect();
        let peak = samples.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0);
        (audible_secs(&wav), peak)
    };
    let (normal_secs, normal_peak) = speak("normal", None);
    let (fast_secs, fast_peak) = speak("fast", Some((275, 100)));
    let (_, quiet_peak) = speak("quiet", Some((175, 50)));
    assert!(
        fast_secs < normal_secs * 0.8,
        "rate 275 is not faster: {fast_secs:.2} s against {normal_secs:.2} s"
    );
    assert!(
        (fast_peak as f64) > normal_peak as f64 * 0.8,
        "the rate changed the loudness"
    );
    let ratio = quiet_peak as f64 / normal_peak as f64;
    assert!(
        (0.4..0.6).contains(&ratio),
        "volume 50 gives {ratio:.2} of the peak"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A machine without a sound card: one line says so (no page of ALSA's own messages), and `say`
/// exits 69 after printing the text. ALSA is given a configuration that defines no device, so
/// the test means the same on a machine that has a card.
#[test]
fn without_a_sound_card_one_line_says_so_and_say_fails() {
    let h = home("nocard");
    let conf = h.join("empty-alsa.conf");
    std::fs::write(&conf, "# no devices\n").unwrap();
    let _ = std::fs::remove_file(h.join(".asoundrc"));
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .env("HOME", &h)
        .env("ALSA_CONFIG_PATH", &conf)
        .args(["say", "--lang", "en", "Knight Felix three"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "Knight Felix three"
    );
    assert!(!err.contains("ALSA lib"), "ALSA's own messages: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("not spoken"), "{err}");
    if !Path::new("/dev/snd").exists() {
        assert!(err.contains("no sound card found"), "{err}");
    }
    assert_eq!(o.status.code(), Some(69), "{err}");
}
