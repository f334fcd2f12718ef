//! The commands behind the command line: flags turned into validated settings, then the
//! library's parts put to work.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use chessboardd::board::BoardProtocol;
use chessboardd::board::{discover, BoardSpec};
use chessboardd::broadcast::check_board_id;
use chessboardd::config::{self, Config};
use chessboardd::daemon::Source;
use chessboardd::engine::clock::TimeControl;
use chessboardd::engine::rules::{Mode, RuleProfile};
use chessboardd::engine::EventKind;
use chessboardd::mqtt::{BrokerUrl, MqttSettings};
use chessboardd::pgn;
use chessboardd::replay;
use chessboardd::sim::pty::{self as simulate, SimOptions};
use chessboardd::sim::{self, Gestures};
use chessboardd::speech::phrase::{FileWords, Lang, Phrases, Style};
use chessboardd::speech::queue::Class;
use chessboardd::speech::speaker::{spoken, Speaker, SpeechConfig};
use chessboardd::speech::synth::Backend;
use chessboardd::speech::tools;
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess};

/// The sample game of the FIDE Laws' Appendix E, played by `demo` unless told otherwise.
pub const SEED_GAME: &str = include_str!("../tests/data/games/seed-example.pgn");

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

pub fn replay(flags: &GameFlags, pgn_out: Option<&PathBuf>, script: &str) -> Result<(), Fail> {
    let cfg = config_from(flags, false)?;
    // Bounded: no line over 64 KiB (so `/dev/zero` is refused at once, not read for ever).
    let read = |r: &mut dyn Read, what: &str| {
        chessboardd::bounded::read_text(r, usize::MAX).map_err(|e| match e {
            chessboardd::bounded::TextError::Io(e) => {
                Fail(EXIT_SCRIPT, format!("cannot read {what}: {e}"))
            }
            chessboardd::bounded::TextError::NotUtf8 { line, .. } => Fail(
                EXIT_SCRIPT,
                format!("line {line}: the script is not UTF-8 text"),
            ),
            e => Fail(EXIT_SCRIPT, format!("line {}", e.at_line())),
        })
    };
    let text = if script == "-" {
        read(
            &mut std::io::stdin().lock(),
            "the script from standard input",
        )?
    } else {
        let mut f = std::fs::File::open(script)
            .map_err(|e| Fail(EXIT_SCRIPT, format!("cannot read {script}: {e}")))?;
        read(&mut f, script)?
    };
    let lines =
        replay::parse_script(&text, &cfg.boards).map_err(|e| Fail(EXIT_SCRIPT, e.to_string()))?;
    let settings = cfg.settings;
    // The events are written by a thread of their own, in batches, while the engine goes on.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(usize, chessboardd::engine::Event)>>(16);
    // With several boards every event says on which board it happened.
    let names = cfg.boards.clone();
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
        let mut line = Vec::with_capacity(512);
        for batch in rx {
            for (b, e) in batch {
                let board = (names.len() > 1).then(|| names.get(b).map_or("", String::as_str));
                line.clear();
                e.write_json(&mut line, board);
                line.push(b'\n');
                // A closed pipe (`replay | head`) ends the printing, not the replay.
                if w.write_all(&line).is_err() {
                    return;
                }
            }
        }
        let _ = w.flush();
    });
    const BATCH: usize = 1024;
    let mut batch = Vec::with_capacity(BATCH);
    let engine = replay::run_boards(&lines, settings, &cfg.players, |b, e| {
        batch.push((b, e));
        if batch.len() == BATCH {
            let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
        }
    });
    let _ = tx.send(batch);
    drop(tx);
    let _ = writer.join();
    if let Some(out) = pgn_out {
        std::fs::write(out, engine.pgn())
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(())
}

/// The speech settings: the config's, with the command line's flags over them.
fn speech_from(cfg: &Config, flags: &SpeechFlags) -> Result<SpeechConfig, Fail> {
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
fn no_sound(why: &str) -> String {
    if why == chessboardd::speech::audio::NO_SOUND_CARD {
        why.to_string()
    } else {
        format!("no sound ({why})")
    }
}

/// Starts the speaker; without one (no voice, no pack) the daemon goes on with text only.
fn start_speaker(sc: SpeechConfig) -> Option<Speaker> {
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

pub fn demo(
    flags: &GameFlags,
    game_pgn: Option<&PathBuf>,
    speed: f64,
    json: bool,
    speech_flags: &SpeechFlags,
) -> Result<(), Fail> {
    let cfg = config_from(flags, true)?;
    let sc = speech_from(&cfg, speech_flags)?;
    let announce = sc.announce.clone();
    let settings = cfg.settings;
    let text = match game_pgn {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| Fail(1, format!("cannot read {}: {e}", p.display())))?,
        None => SEED_GAME.to_string(),
    };
    let games = pgn::parse(&text).map_err(|e| Fail(1, format!("bad PGN: {e}")))?;
    let Some(game) = games.into_iter().next() else {
        return Err(Fail(1, "the PGN holds no game".into()));
    };
    let start = game.start.clone();
    let inputs = sim::game_inputs(&start, &game.moves, &Gestures::default(), 1000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    eprintln!(
        "chessboardd demo: simulated board, {} moves at {speed}x real time",
        game.moves.len()
    );
    let phrases = settings.phrases.clone();
    let mut speaker = start_speaker(sc);
    if let Some(s) = &mut speaker {
        s.say(&phrases.words.starting, Class::Info, None);
    }
    // A closed pipe (`chessboardd demo | head`) ends the printing, not the daemon.
    let print = |line: String| {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    let engine = rt.block_on(chessboardd::daemon::run_simulated(
        settings,
        inputs,
        speed,
        |e| {
            if let Some(s) = &mut speaker {
                s.event(&spoken(&e.kind, &announce, &phrases));
            }
            if json {
                print(e.to_json());
                return;
            }
            match &e.kind {
                EventKind::Move { ply, san, say, .. } => {
                    let n = ply.div_ceil(2);
                    let dots = if ply % 2 == 1 { "." } else { "..." };
                    print(format!("{n:>3}{dots:<4}{san:<8} \u{1f50a} {say}"));
                }
                EventKind::Say { text, .. } => print(format!("        \u{1f50a} {text}")),
                _ => {}
            }
        },
    ));
    if let Some(s) = speaker {
        for e in s.finish().errors {
            eprintln!("chessboardd: speech: {e}");
        }
    }
    if !json {
        print(format!("\n{}", engine.pgn()));
    }
    Ok(())
}

/// The phrases of a language: the config's words, in the language asked for.
fn phrases_for(lang: Option<&str>, style: Option<&str>) -> Result<(Config, Phrases), Fail> {
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

pub fn say(
    lang: Option<&str>,
    style: Option<&str>,
    flags: &SpeechFlags,
    san: Option<&str>,
    fen: Option<&str>,
    text: &[String],
) -> Result<(), Fail> {
    let (cfg, phrases) = phrases_for(lang, style)?;
    let sc = speech_from(&cfg, flags)?;
    let text = match (san, fen) {
        (Some(san), Some(fen)) => {
            let pos = position(fen)?;
            let m = san
                .parse::<San>()
                .map_err(|_| Fail(1, format!("--move: '{san}' is not SAN")))?
                .to_move(&pos)
                .map_err(|_| Fail(1, format!("--move: {san} is not a legal move here")))?;
            phrases.announce(&SanPlus::from_move(pos, m), m)
        }
        _ => text.join(" "),
    };
    println!("{text}");
    let (mut speaker, no_device) = Speaker::start(sc).map_err(|e| Fail(1, e.to_string()))?;
    let no_sound_why =
        no_device.filter(|_| flags.audio_out.is_none() && flags.speech.as_deref() != Some("text"));
    if let Some(why) = no_sound_why {
        speaker.finish();
        return Err(Fail(
            EXIT_NO_SOUND,
            format!(
                "{}: the text was printed, not spoken; see Troubleshooting in the README",
                no_sound(&why)
            ),
        ));
    }
    speaker.say(&text, Class::Info, None);
    let report = speaker.finish();
    match report.errors.first() {
        Some(e) => Err(Fail(1, e.clone())),
        None => Ok(()),
    }
}

/// The announcements of the sample game, the benchmark's phrases.
fn sample_phrases(phrases: &Phrases) -> Vec<String> {
    let games = pgn::parse(SEED_GAME).unwrap_or_default();
    let mut out = Vec::new();
    for g in games {
        let mut pos = g.start.clone();
        for m in g.moves {
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            out.push(phrases.announce(&san, m));
        }
    }
    out
}

/// Every game of the PGN files, with its start.
fn games_of(files: &[PathBuf]) -> Result<Vec<(Chess, Vec<shakmaty::Move>)>, Fail> {
    let mut games = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| Fail(1, format!("cannot read {}: {e}", f.display())))?;
        let parsed = pgn::parse(&text).map_err(|e| Fail(1, format!("{}: {e}", f.display())))?;
        games.extend(parsed.into_iter().map(|g| (g.start, g.moves)));
    }
    Ok(games)
}

/// The minimum reply times of `bench tempo`'s table.
const MIN_REPLIES_MS: [u64; 5] = [40, 80, 120, 200, 300];

pub fn bench_tempo(files: &[PathBuf]) -> Result<(), Fail> {
    let games = games_of(files)?;
    let settings = chessboardd::engine::Settings::default();
    let started = std::time::Instant::now();
    let clean = sim::tempo_table(&settings, &games, &MIN_REPLIES_MS, sim::Faults::NONE);
    let lossy = sim::tempo_table(&settings, &games, &MIN_REPLIES_MS, sim::Faults::LOSSES);
    let pulled = sim::tempo_table(&settings, &games, &MIN_REPLIES_MS, sim::Faults::PULLS);
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "| reply from | games read exactly | moves read exactly \
         | with losses: games | moves | games recorded to the end \
         | with pulled cables: games | moves | games recorded to the end |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for ((c, l), p) in clean.iter().zip(&lossy).zip(&pulled) {
        println!(
            "| {} ms | {}/{} | {}/{} ({:.2}%) | {}/{} | {}/{} ({:.2}%) | {}/{} \
             | {}/{} | {}/{} ({:.2}%) | {}/{} |",
            c.min_reply_ms,
            c.games_exact,
            c.games,
            c.moves_exact,
            c.moves,
            pct(c.moves_exact, c.moves),
            l.games_exact,
            l.games,
            l.moves_exact,
            l.moves,
            pct(l.moves_exact, l.moves),
            l.games_to_the_end,
            l.games,
            p.games_exact,
            p.games,
            p.moves_exact,
            p.moves,
            pct(p.moves_exact, p.moves),
            p.games_to_the_end,
            p.games,
        );
    }
    eprintln!(
        "{} games, each at {} tempos, three times, in {:.1} s",
        games.len(),
        MIN_REPLIES_MS.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub fn bench_script(
    files: &[PathBuf],
    reply_ms: u64,
    (losses, plain): (bool, bool),
    limit: Option<usize>,
) -> Result<(), Fail> {
    let mut games = games_of(files)?;
    if let Some(n) = limit {
        games.truncate(n);
    }
    let script = sim::games_script(&games, |i| Gestures {
        quirks: !plain,
        ..sim::people(
            i,
            reply_ms,
            sim::Faults {
                losses,
                pulls: false,
            },
        )
    });
    std::io::stdout()
        .lock()
        .write_all(script.as_bytes())
        .map_err(|e| Fail(1, format!("cannot write the script: {e}")))
}

pub fn bench_latency(speech: Option<&str>, runs: usize, lang: Option<&str>) -> Result<(), Fail> {
    let (cfg, phrases) = phrases_for(lang, None)?;
    let mut sc = cfg.speech.clone();
    sc.backend = speech
        .unwrap_or("espeak")
        .parse::<Backend>()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--speech: {e}")))?;
    if sc.backend == Backend::Text {
        return Err(Fail(
            1,
            "--speech text makes no sound to time (accepted: espeak, clips)".into(),
        ));
    }
    let tmp = std::env::temp_dir().join(format!("chessboardd-bench-pack-{}", std::process::id()));
    tools::ensure_pack(&mut sc, &phrases.words, &tmp).map_err(|e| Fail(1, e.to_string()))?;
    let lines = sample_phrases(&phrases);
    eprintln!("timing {runs} announcements with {} ...", sc.backend);
    let l = tools::latency(sc, &lines, runs.max(1)).map_err(|e| Fail(1, e.to_string()))?;
    let _ = std::fs::remove_dir_all(&tmp);
    if let Some(why) = &l.no_device {
        println!("note: no sound card ({why}): timed to the hand-over to the audio output");
    }
    println!("runs {}", l.runs);
    let cli = l
        .cli_p50
        .map_or("n/a (espeak-ng program not found)".to_string(), |v| {
            format!("{v:.1}")
        });
    println!(
        "completion_to_audio_ms p50={:.1} p99={:.1} espeak_cli_ms p50={cli}",
        l.p50, l.p99
    );
    Ok(())
}

pub fn voice_pack_build(lang: Option<&str>, dir: &Path) -> Result<(), Fail> {
    let (cfg, phrases) = phrases_for(lang, None)?;
    let n = tools::build_pack(dir, &phrases.words, cfg.speech.voice)
        .map_err(|e| Fail(1, e.to_string()))?;
    println!("{}: {n} words", dir.display());
    Ok(())
}

pub fn voice_pack_check(lang: Option<&str>, dir: &Path) -> Result<(), Fail> {
    let (_, phrases) = phrases_for(lang, None)?;
    let missing = tools::check_pack(dir, &phrases.words);
    if missing.is_empty() {
        println!("{}: complete", dir.display());
        return Ok(());
    }
    for w in &missing {
        println!("{w}");
    }
    Err(Fail(
        1,
        format!(
            "{}: {} words missing (listed above)",
            dir.display(),
            missing.len()
        ),
    ))
}

fn position(fen: &str) -> Result<Chess, Fail> {
    replay::check_counters(fen).map_err(|e| Fail(1, format!("--fen: {e}")))?;
    fen.parse::<Fen>()
        .map_err(|e| Fail(1, format!("--fen: {e}")))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| Fail(1, format!("--fen: impossible position: {e}")))
}

/// Where `run` takes commands from (over the config's `[control]`), keeps its record, and how it
/// reads its board.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ControlFlags {
    /// Keep the game's journal and the finished games (PGN) here; a game cut short by a crash
    /// or a power cut is taken up again from it
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Put the control socket here (chessboardd ctl --socket PATH ...); default: control.socket
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Serve the live web view here ("127.0.0.1:8080"); default: web.listen of the config
    #[arg(long, value_name = "ADDR")]
    pub web: Option<String>,
    /// Read keys from this evdev device (a USB keypad: /dev/input/by-id/...-event-kbd), or
    /// "auto" for the first keyboard found; default: control.keypad
    #[arg(long, value_name = "DEVICE")]
    pub keypad: Option<String>,
    /// Publish the game to this MQTT broker: mqtt://HOST[:PORT], mqtts://HOST[:PORT] for TLS;
    /// default: mqtt.url of the config (credentials and TLS files come from [mqtt])
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// The board's id in the MQTT topics (PREFIX/ID/...); default: mqtt.board_id, else the
    /// host's name
    #[arg(long, value_name = "ID")]
    pub board_id: Option<String>,
    /// (Tests) Look for an unconfigured board under DIR/dev and DIR/sys instead of /dev, /sys
    #[arg(long, value_name = "DIR", hide = true)]
    pub discover_root: Option<PathBuf>,
    /// DGT, ChessLink: which way round the board reports its squares: auto (learned from the
    /// start position or the game's position), normal, reversed (h1 first: a board turned
    /// round, or one that sends squares the other way); default: board.orientation, else auto
    #[arg(long, value_name = "WAY")]
    pub orientation: Option<String>,
}

/// The broker to use: `--mqtt URL` with the config's `[mqtt]` credentials and TLS files, or the
/// config's `mqtt.url`.
fn mqtt_from(
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
fn termination() -> impl std::future::Future<Output = ()> {
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

/// `chessboardd broadcast`: follows the boards of a round through the broker until SIGTERM.
pub fn broadcast(url: Option<&str>, out: &Path, config: Option<&Path>) -> Result<(), Fail> {
    let cfg = match config::resolve(config) {
        Some(p) => Config::load(&p).map_err(|e| Fail(EXIT_CONFIG, e.to_string()))?,
        None => Config::default(),
    };
    let settings = mqtt_from(&cfg, url, None)?.ok_or_else(|| {
        Fail(
            EXIT_CONFIG,
            "no broker: give --mqtt URL (or mqtt.url in the config)".into(),
        )
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    rt.block_on(async {
        let shutdown = termination();
        tracing::info!(
            "following {}/+/pgn at {}; the games go to {}",
            settings.prefix,
            settings.url,
            out.display()
        );
        let round = chessboardd::broadcast::broadcast(&settings, out, shutdown)
            .await
            .map_err(|e| Fail(1, e))?;
        tracing::info!(
            "{} boards in {}; {} messages dropped",
            round.boards(),
            out.join(chessboardd::broadcast::ROUND_FILE).display(),
            round.rejected
        );
        Ok(())
    })
}

/// Two boards: what every player hears, wherever it happened (the moves, the game's end, the
/// clock); the rest (touches, mismatches, executing the opponent's move) only the player of the
/// board it happened on.
fn for_everyone(kind: &EventKind) -> bool {
    match kind {
        EventKind::Move { .. }
        | EventKind::GameOver { .. }
        | EventKind::TimeWarning { .. }
        | EventKind::Takeback { .. }
        | EventKind::Resumed { .. }
        | EventKind::Voice { .. } => true,
        EventKind::Say { priority, .. } => *priority == chessboardd::engine::Priority::Result,
        _ => false,
    }
}

/// Which board `run` would read with this config (for `check-config`).
pub fn board_in_use(cfg: &Config) -> String {
    if cfg.boards.len() > 1 {
        return format!("boards: {}", cfg.boards.join(", "));
    }
    match (&cfg.board, discover::find(&discover::Roots::default())) {
        (Some(spec), _) => format!("board: {spec}"),
        (None, Some(found)) => format!(
            "board: none configured; run would use {} ({})",
            found.spec, found.how
        ),
        (None, None) => "board: none configured, none found; run would wait for one \
                         (a DGT board on USB, /dev/dgt-board or /dev/chessboard)"
            .to_string(),
    }
}

/// Set by SIGTERM or SIGINT while `run` waits for a board.
static STOP_WAITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn stop_waiting(_: libc::c_int) {
    STOP_WAITING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// No board configured: the one [`discover::find`] recognises, as soon as there is one. Until
/// then the daemon waits: it says once what it waits for ("Warte auf das Brett") and logs what
/// to configure, tells systemd it is up (so the service is not started again and again), and
/// looks again every 2 s. SIGTERM ends the wait (exit 0).
fn wait_for_board(
    roots: &discover::Roots,
    cfg: &Config,
    speech_flags: &SpeechFlags,
    events_json: bool,
) -> Result<BoardSpec, Fail> {
    if let Some(found) = discover::find(roots) {
        tracing::info!("no board configured: using {} ({})", found.spec, found.how);
        return Ok(found.spec);
    }
    tracing::warn!(
        "no board configured, and none found (a DGT board on USB, or /dev/dgt-board, \
         /dev/chessboard of the udev rules): set [board] driver and port in {} \
         (see README, \"Running as a service\"); waiting for a board to be plugged in",
        chessboardd::config::DEFAULT_PATH
    );
    let notify = chessboardd::notify::Notifier::from_env();
    notify.ready("waiting for a board: none configured, none found");
    // SAFETY: the handlers only set an atomic flag.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            stop_waiting as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            stop_waiting as *const () as libc::sighandler_t,
        );
    }
    if let Ok(sc) = speech_from(cfg, speech_flags) {
        if let Some(mut speaker) = start_speaker(sc) {
            let text = cfg.settings.phrases.words.board_waiting.clone();
            // Printed as `run` prints what it says: an event with --events-json, else the text.
            if events_json {
                let event = chessboardd::engine::Event {
                    t: 0,
                    kind: EventKind::Say {
                        text: text.clone(),
                        priority: chessboardd::engine::Priority::Error,
                    },
                };
                println!("{}", event.to_json());
            } else {
                println!("{text}");
            }
            speaker.say(&text, Class::Error, None);
            speaker.finish();
        }
    }
    loop {
        for _ in 0..20 {
            if STOP_WAITING.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(Fail(0, "stopped while waiting for a board".into()));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if let Some(found) = discover::find(roots) {
            tracing::info!("a board is there: using {} ({})", found.spec, found.how);
            // SAFETY: back to the default handlers; the daemon installs its own.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                libc::signal(libc::SIGINT, libc::SIG_DFL);
            }
            return Ok(found.spec);
        }
    }
}

/// `run`: `sim` is the simulated board's speed and tempo (`--speed`, `--reply-ms`).
pub fn run(
    board: Option<&str>,
    flags: &GameFlags,
    speech_flags: &SpeechFlags,
    events_json: bool,
    sim: (f64, Option<u64>),
    fen: Option<&str>,
    control_flags: &ControlFlags,
) -> Result<(), Fail> {
    let (speed, reply_ms) = sim;
    let start = fen.map(position).transpose()?;
    let mut cfg = config_from(flags, true)?;
    let board_flag = board;
    let spec =
        match board {
            Some(b) => b
                .parse::<BoardSpec>()
                .map_err(|e| Fail(EXIT_CONFIG, format!("--board: {e}")))?,
            None => match cfg.board.clone() {
                Some(spec) => spec,
                None if cfg.boards.len() > 1 => return Err(Fail(
                    EXIT_CONFIG,
                    "no board: give --board, or set board.driver (and board.port) in the config"
                        .into(),
                )),
                // A fresh install: none configured yet. Find one, or wait for one.
                None => {
                    let roots = control_flags
                        .discover_root
                        .as_deref()
                        .map_or_else(discover::Roots::default, discover::Roots::under);
                    wait_for_board(&roots, &cfg, speech_flags, events_json)?
                }
            },
        };
    let board = spec.to_string();
    if let Some(o) = &control_flags.orientation {
        let o = o
            .parse::<chessboardd::board::Orientation>()
            .map_err(|e| Fail(EXIT_CONFIG, format!("--orientation: {e}")))?;
        for l in &mut cfg.board_links {
            l.orientation = o;
        }
    }
    if let Some(k) = &control_flags.keypad {
        cfg.control.keypad = Some(k.clone()).filter(|k| !k.is_empty());
        // The help tells the keys when there is a keypad.
        cfg.set_speech(None, None, None);
    }
    let controls = cfg.control.clone();
    let mqtt = mqtt_from(
        &cfg,
        control_flags.mqtt.as_deref(),
        control_flags.board_id.as_deref(),
    )?;
    let sc = speech_from(&cfg, speech_flags)?;
    // One daemon per state directory and per control socket: a second one would take over the
    // journal (or the socket) and the first one's moves would be lost.
    let _state_lock = match &control_flags.state_dir {
        Some(dir) => hold_state_dir(dir)?,
        None => None,
    };
    let socket_path = control_flags.socket.clone().or(cfg.control.socket.clone());
    if let Some(path) = &socket_path {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(Fail(
                EXIT_IN_USE,
                format!(
                    "another chessboardd answers on the control socket {}: stop it first \
                     (systemctl stop chessboardd), or give this one another --socket",
                    path.display()
                ),
            ));
        }
    }
    let settings = cfg.settings.clone();
    let phrases = settings.phrases.clone();
    // The boards: the one given, or those of the config (two boards: each with its player).
    let first = match (&spec, reply_ms) {
        (BoardSpec::Sim(pgn), Some(ms)) => {
            Source::simulated(pgn, &sim::people(0, ms, sim::Faults::NONE))
        }
        (_, Some(_)) => {
            return Err(Fail(
                EXIT_CONFIG,
                "--reply-ms is for the simulated board (--board sim:GAME.pgn)".into(),
            ))
        }
        (_, None) => Source::from_spec(&spec, &cfg.gpio, &cfg.board_links[0]),
    };
    let mut boards = vec![(
        // A simulated board's game that cannot be read is a mistake in the flags or the config,
        // not a board that is off.
        first.map_err(|e| {
            let code = if matches!(spec, BoardSpec::Sim(_)) {
                EXIT_CONFIG
            } else {
                1
            };
            Fail(code, format!("--board {board}: {e}"))
        })?,
        None,
    )];
    if board_flag.is_none() && cfg.boards.len() > 1 {
        boards.clear();
        for (i, name) in cfg.boards.iter().enumerate() {
            let spec = cfg.board_specs[i].clone().ok_or_else(|| {
                Fail(
                    EXIT_CONFIG,
                    format!("board '{name}': no driver in the config"),
                )
            })?;
            let source = Source::from_spec(&spec, &cfg.gpio, &cfg.board_links[i])
                .map_err(|e| Fail(1, format!("board '{name}' ({spec}): {e}")))?;
            boards.push((source, cfg.players[i]));
        }
    }
    // A speaker for each player with a board (one for a shared board), hearing what concerns him.
    let speeches: Vec<SpeechConfig> = boards
        .iter()
        .enumerate()
        .map(|(i, (_, player))| {
            let mut sc = sc.clone();
            if boards.len() > 1 {
                sc.announce.listener = *player;
                if let Some(d) = cfg.board_devices.get(i).cloned().flatten() {
                    sc.device = Some(d);
                }
                if let Some((own, opponent)) = cfg.board_hears.get(i) {
                    sc.announce.own_moves = own.unwrap_or(sc.announce.own_moves);
                    sc.announce.opponent_moves = opponent.unwrap_or(sc.announce.opponent_moves);
                }
            }
            sc
        })
        .collect();
    let announces: Vec<_> = speeches.iter().map(|s| s.announce.clone()).collect();
    let several = boards.len() > 1;
    let names = cfg.boards.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    let mut speakers: Vec<Option<Speaker>> = speeches.into_iter().map(start_speaker).collect();
    let print = |line: String| {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    // A game record the daemon may not read is not started over: it says so and stops.
    if let Some(Err(e)) = control_flags
        .state_dir
        .as_deref()
        .map(chessboardd::record::check_readable)
    {
        let text = chessboardd::speech::phrase::sentences(&phrases.words.record_unreadable);
        for s in speakers.iter_mut().flatten() {
            s.say(&text, Class::Error, None);
        }
        let said = chessboardd::engine::Event {
            t: 0,
            kind: EventKind::Say {
                text: text.clone(),
                priority: chessboardd::engine::Priority::Error,
            },
        };
        print(if events_json {
            said.to_json()
        } else {
            format!("\u{1f50a} {text}")
        });
        for s in speakers.into_iter().flatten() {
            s.finish();
        }
        let code = match e.kind() {
            std::io::ErrorKind::PermissionDenied => EXIT_NOPERM,
            _ => EXIT_IOERR,
        };
        return Err(Fail(code, e.to_string()));
    }
    for s in speakers.iter_mut().flatten() {
        s.say(&phrases.words.starting, Class::Info, None);
    }
    let notify = chessboardd::notify::Notifier::from_env();
    let (reload_tx, reload_rx) = tokio::sync::watch::channel(None);
    let engine = rt.block_on(async {
        // SIGHUP: the config is read again; a config with an error is reported and not taken.
        let (flags, control_flags) = (flags.clone(), control_flags.clone());
        // The handlers are in place before the daemon says it is ready: a signal that comes
        // at once must not find the default action (which ends the process).
        use tokio::signal::unix::{signal, SignalKind};
        let hup = signal(SignalKind::hangup());
        let shutdown = termination();
        tokio::spawn(async move {
            let Ok(mut hup) = hup else {
                return;
            };
            while hup.recv().await.is_some() {
                match config_from(&flags, true) {
                    Ok(mut cfg) => {
                        if let Some(k) = &control_flags.keypad {
                            cfg.control.keypad = Some(k.clone()).filter(|k| !k.is_empty());
                        }
                        cfg.set_speech(None, None, None);
                        let _ = reload_tx.send(Some(cfg.settings));
                    }
                    Err(Fail(_, msg)) => {
                        tracing::warn!("the config was not reloaded: {msg}")
                    }
                }
            }
        });
        chessboardd::daemon::run_boards(
            settings,
            boards,
            chessboardd::daemon::RunOptions {
                start,
                socket: socket_path.clone(),
                until_board_done: false,
                speed: speed.clamp(0.1, 1000.0),
                controls,
                gpio_chip: cfg.gpio.chip.clone(),
                state_dir: control_flags.state_dir.clone(),
                notify,
                reload: Some(reload_rx),
                web: control_flags.web.clone().or(cfg.web.clone()),
                board_names: names.clone(),
                mqtt,
            },
            |b, e| {
                for (i, s) in speakers.iter_mut().enumerate() {
                    if let Some(s) = s {
                        if !several || i == b || for_everyone(&e.kind) {
                            s.event(&spoken(&e.kind, &announces[i], &phrases));
                        }
                    }
                }
                let board = several.then(|| names.get(b).map_or("", String::as_str));
                let json = e.to_json_on(board);
                if events_json {
                    print(json);
                } else if let Some((text, _)) = e.kind.spoken() {
                    print(format!("\u{1f50a} {text}"));
                }
            },
            shutdown,
        )
        .await
    });
    for s in speakers.into_iter().flatten() {
        for e in s.finish().errors {
            tracing::warn!("speech: {e}");
        }
    }
    if !events_json {
        print(format!("\n{}", engine.pgn()));
    }
    Ok(())
}

/// `simulate`'s flags.
pub struct SimulateFlags<'a> {
    pub protocol: &'a str,
    pub link: &'a Path,
    pub pgn: Option<&'a Path>,
    pub speed: f64,
    pub glitch: bool,
    pub rotated: bool,
    pub reconnects: u32,
    /// `MOVES:SECONDS`.
    pub silence: Option<&'a str>,
    /// A square.
    pub flicker: Option<&'a str>,
    pub play_on: u32,
}

pub fn simulate(f: &SimulateFlags) -> Result<(), Fail> {
    let protocol = BoardProtocol::parse(f.protocol)
        .map_err(|e| Fail(EXIT_CONFIG, format!("--protocol: {e}")))?;
    let silence = f
        .silence
        .map(simulate::parse_silence)
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--silence: {e}")))?;
    let flicker = f
        .flicker
        .map(|sq| {
            sq.parse::<shakmaty::Square>()
                .map_err(|_| format!("'{sq}' is not a square (e.g. e4)"))
        })
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--flicker: {e}")))?;
    if flicker.is_some() && !protocol.flickers {
        return Err(Fail(
            EXIT_CONFIG,
            "--flicker is for DGT boards (--protocol dgt)".into(),
        ));
    }
    let (start, moves) = match f.pgn {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Fail(1, format!("cannot read {}: {e}", p.display())))?;
            let game = pgn::parse(&text)
                .map_err(|e| Fail(1, format!("{}: {e}", p.display())))?
                .into_iter()
                .next()
                .ok_or_else(|| Fail(1, format!("{}: no game", p.display())))?;
            (game.start, game.moves)
        }
        None => (Chess::default(), Vec::new()),
    };
    let link = f.link;
    let opts = SimOptions {
        protocol,
        link: link.to_path_buf(),
        start,
        moves,
        speed: f.speed,
        glitch: f.glitch,
        rotated: f.rotated,
        reconnects: f.reconnects,
        silence,
        flicker,
        play_on: f.play_on,
        seed: 7,
    };
    eprintln!(
        "chessboardd simulate: a {protocol:?} board at {}",
        link.display()
    );
    let report = simulate::run(&opts).map_err(|e| Fail(1, format!("{}: {e}", link.display())))?;
    eprintln!(
        "chessboardd simulate: {} moves played, {} frames, {} glitches, {} reconnections, {} LED patterns, {} silences, {} flickers",
        report.moves,
        report.frames,
        report.glitches,
        report.reconnects,
        report.leds,
        report.silences,
        report.flickers
    );
    Ok(())
}

/// Scans an idle board on simulated pins and reports the scanner thread's CPU use.
pub fn bench_gpio(seconds: f64, rate: u32) -> Result<(), Fail> {
    if !(0.1..=3600.0).contains(&seconds) {
        return Err(Fail(EXIT_CONFIG, "--seconds must be 0.1 to 3600".into()));
    }
    use chessboardd::board::gpio::{self, Mapping, SimPins, Wiring};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let mut lines = Vec::new();
    for wiring in [
        Wiring::Matrix {
            rows: chessboardd::config::DEFAULT_ROWS,
            cols: chessboardd::config::DEFAULT_COLS,
        },
        Wiring::ShiftRegister {
            load: 23,
            clock: 24,
            data: 25,
        },
        Wiring::Direct {
            lines: (0..64).collect(),
        },
    ] {
        let sensors = Arc::new(AtomicU64::new(0xFFFF_0000_0000_FFFF));
        let pins = SimPins::new(wiring.clone(), sensors);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let clock = chessboardd::board::Timebase::new(1.0);
        let name = match &wiring {
            Wiring::Matrix { .. } => "matrix",
            Wiring::ShiftRegister { .. } => "shift-register",
            Wiring::Direct { .. } => "direct",
        };
        let s2 = stop.clone();
        let t0 = std::time::Instant::now();
        let worker = std::thread::spawn(move || {
            gpio::run(
                wiring,
                Box::new(pins),
                Mapping::default(),
                rate,
                clock,
                tx,
                s2,
            );
            gpio::thread_cpu_time()
        });
        std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        let cpu = worker
            .join()
            .map_err(|_| Fail(1, "the scanner failed".into()))?;
        let wall = t0.elapsed();
        let mut frames = 0;
        while rx.try_recv().is_ok() {
            frames += 1;
        }
        let pct = cpu.as_secs_f64() / wall.as_secs_f64() * 100.0;
        lines.push(format!(
            "{name}: {pct:.3}% of one core ({} ms CPU in {:.1} s, {frames} messages)",
            cpu.as_millis(),
            wall.as_secs_f64()
        ));
    }
    for l in &lines {
        println!("{l}");
    }
    Ok(())
}

/// The board as a grid of squares, white at the bottom: `X` for an occupied square (or the piece
/// letter when the board reports pieces), `.` for an empty one.
pub fn grid(states: &[u8; 64]) -> String {
    use chessboardd::engine::code_piece;
    let mut out = String::new();
    for rank in (0..8).rev() {
        out.push_str(&format!("{} ", rank + 1));
        for file in 0..8 {
            let st = states[rank * 8 + file];
            let c = match (st, code_piece(st)) {
                (0, _) => '.',
                (_, Some(p)) => p.char(),
                _ => 'X',
            };
            out.push(' ');
            out.push(c);
        }
        out.push('\n');
    }
    out.push_str("   a b c d e f g h\n");
    out
}

/// Shows the live board for people wiring one: the grid after every change, and the link.
pub fn board_test(board: &str, seconds: Option<f64>) -> Result<(), Fail> {
    if seconds.is_some_and(|s| !(0.0..=1e7).contains(&s)) {
        return Err(Fail(
            EXIT_CONFIG,
            "--seconds must be a number of seconds, 0 or more".into(),
        ));
    }
    use chessboardd::board::DriverMsg;
    use chessboardd::engine::Reading;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let spec = board
        .parse::<BoardSpec>()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--board: {e}")))?;
    let cfg = config_from(&GameFlags::default(), true)?;
    let source = Source::from_spec(&spec, &cfg.gpio, &cfg.board_links[0])
        .map_err(|e| Fail(1, format!("--board {board}: {e}")))?;
    let clock = chessboardd::board::Timebase::new(1.0);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let driver = chessboardd::daemon::spawn_driver(source, clock, tx, stop.clone());
    let until = seconds.map(|s| std::time::Instant::now() + std::time::Duration::from_secs_f64(s));
    let mut states = [0u8; 64];
    let mut shown = None;
    loop {
        if until.is_some_and(|u| std::time::Instant::now() >= u) {
            break;
        }
        match rx.try_recv() {
            Ok((t, DriverMsg::Reading(r))) => {
                match r {
                    Reading::Square(sq, st) => states[sq as usize] = st,
                    Reading::Frame(all) => states = *all,
                }
                if shown != Some(states) {
                    shown = Some(states);
                    let count = states.iter().filter(|s| **s != 0).count();
                    let shown_ok = writeln!(
                        std::io::stdout(),
                        "{:>8.1} s  {count} pieces\n{}",
                        t as f64 / 1000.0,
                        grid(&states)
                    );
                    if shown_ok.is_err() {
                        break;
                    }
                }
            }
            Ok((t, DriverMsg::Link(state))) => {
                if writeln!(
                    std::io::stdout(),
                    "{:>8.1} s  board {state:?}",
                    t as f64 / 1000.0
                )
                .is_err()
                {
                    break;
                }
            }
            Ok((t, DriverMsg::Flicker(sq))) => {
                if writeln!(
                    std::io::stdout(),
                    "{:>8.1} s  square {sq} flickers (reported again and again)",
                    t as f64 / 1000.0
                )
                .is_err()
                {
                    break;
                }
            }
            Ok((t, DriverMsg::Press(b))) => {
                if writeln!(
                    std::io::stdout(),
                    "{:>8.1} s  button {b:?}",
                    t as f64 / 1000.0
                )
                .is_err()
                {
                    break;
                }
            }
            Err(tokio::sync::mpsc::error::TryRecvError::Empty) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => break,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = driver.join();
    Ok(())
}

/// Sends one command to a running daemon's control socket and prints its JSON answer.
pub fn ctl(socket: Option<&Path>, config: Option<&Path>, words: &[String]) -> Result<(), Fail> {
    use std::io::BufRead;
    let from_config;
    let socket = match socket {
        Some(s) => s,
        None => {
            let flags = GameFlags {
                config: config.map(Path::to_path_buf),
                ..GameFlags::default()
            };
            // The config's socket, or the service's (systemd's RuntimeDirectory).
            let service = PathBuf::from("/run/chessboardd/control.sock");
            from_config = config_from(&flags, true)?
                .control
                .socket
                .or_else(|| service.exists().then_some(service))
                .ok_or_else(|| {
                    Fail(
                        EXIT_CONFIG,
                        "no control socket: give --socket PATH, or set control.socket in the \
                         config (the service's is /run/chessboardd/control.sock)"
                            .into(),
                    )
                })?;
            &from_config
        }
    };
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
        Fail(
            1,
            format!(
                "{}: {e} (is the daemon running with --socket?)",
                socket.display()
            ),
        )
    })?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .map_err(|e| Fail(1, e.to_string()))?;
    writeln!(stream, "{}", words.join(" "))
        .map_err(|e| Fail(1, format!("{}: {e}", socket.display())))?;
    let mut line = String::new();
    std::io::BufReader::new(&stream)
        .read_line(&mut line)
        .map_err(|e| Fail(1, format!("{}: no answer: {e}", socket.display())))?;
    print!("{line}");
    let ok = serde_json::from_str::<serde_json::Value>(&line).is_ok_and(|v| v["ok"] == true);
    if ok {
        Ok(())
    } else {
        Err(Fail(1, "the daemon did not take the command".into()))
    }
}

/// Lists the games of a state directory, or prints one.
pub fn games(state_dir: &Path, pgn: Option<usize>, brf: Option<(usize, &str)>) -> Result<(), Fail> {
    let kept = chessboardd::record::games_reporting(state_dir, |path, e| {
        eprintln!(
            "{}: cannot read it ({e}); the other games are listed",
            path.display()
        )
    })
    .map_err(|e| Fail(1, format!("{}: {e}", state_dir.display())))?;
    let mut out = std::io::stdout().lock();
    if let Some((n, table)) = brf {
        let game = n.checked_sub(1).and_then(|i| kept.get(i)).ok_or_else(|| {
            Fail(
                1,
                format!(
                    "no game {n} in {} ({} kept)",
                    state_dir.display(),
                    kept.len()
                ),
            )
        })?;
        let sheet = chessboardd::brf::scoresheet(&game.pgn, table).map_err(|e| Fail(1, e))?;
        let _ = out.write_all(sheet.as_bytes());
        return Ok(());
    }
    match pgn {
        Some(n) => {
            let game = n.checked_sub(1).and_then(|i| kept.get(i)).ok_or_else(|| {
                Fail(
                    1,
                    format!(
                        "no game {n} in {} ({} kept; 1 is the most recent)",
                        state_dir.display(),
                        kept.len()
                    ),
                )
            })?;
            let _ = write!(out, "{}", game.pgn);
        }
        None => {
            if kept.is_empty() {
                let _ = writeln!(out, "no games in {}", state_dir.display());
            }
            for (i, g) in kept.iter().enumerate() {
                let tag = |k: &str| {
                    g.pgn
                        .lines()
                        .find_map(|l| l.strip_prefix(&format!("[{k} \"")))
                        .and_then(|v| v.strip_suffix("\"]"))
                        .unwrap_or("?")
                        .to_string()
                };
                let moves = pgn::parse(&g.pgn)
                    .ok()
                    .and_then(|games| games.into_iter().next())
                    .map_or(0, |game| game.moves.len().div_ceil(2));
                let state = if g.unfinished {
                    "unfinished".to_string()
                } else {
                    format!("{} {}", tag("Result"), tag("Termination"))
                };
                let _ = writeln!(
                    out,
                    "{:>3}  {}  {:>3} moves  {state}",
                    i + 1,
                    g.started,
                    moves
                );
            }
        }
    }
    Ok(())
}

/// The longest game of the built-in self-play set (400 plies): the long game of `bench daemon`.
fn long_game() -> Result<String, Fail> {
    let text = include_str!("../tests/data/games/selfplay-400.pgn");
    let games = pgn::parse(text).map_err(|e| Fail(1, format!("selfplay-400.pgn: {e}")))?;
    let longest = games
        .iter()
        .max_by_key(|g| g.moves.len())
        .ok_or_else(|| Fail(1, "selfplay-400.pgn holds no game".into()))?;
    let mut pos = longest.start.clone();
    let mut sans = Vec::new();
    for m in &longest.moves {
        sans.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string());
    }
    Ok(format!(
        "[Event \"long\"]\n[Result \"*\"]\n\n{} *\n",
        sans.join(" ")
    ))
}

/// Times the daemon's start-up to READY=1 (systemd's notification) and samples its memory
/// (VmRSS) while it plays a long game on the simulated board.
pub fn bench_daemon(starts: usize, speed: f64) -> Result<(), Fail> {
    use std::os::unix::net::UnixDatagram;
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("chessboardd-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Fail(1, e.to_string()))?;
    let game = dir.join("long.pgn");
    std::fs::write(&game, long_game()?).map_err(|e| Fail(1, e.to_string()))?;
    let exe = std::env::current_exe().map_err(|e| Fail(1, e.to_string()))?;
    let notify_path = dir.join("notify");
    let notify = UnixDatagram::bind(&notify_path).map_err(|e| Fail(1, e.to_string()))?;
    notify
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| Fail(1, e.to_string()))?;
    let spawn = |speech: &str, state: &Path, speed: f64| {
        std::process::Command::new(&exe)
            .args(["run", "--board", &format!("sim:{}", game.display())])
            .args(["--speech", speech, "--speed", &speed.to_string()])
            .arg("--audio-out")
            .arg(dir.join("out.wav"))
            .arg("--state-dir")
            .arg(state)
            .env("NOTIFY_SOCKET", &notify_path)
            .env_remove("WATCHDOG_USEC")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| Fail(1, format!("{}: {e}", exe.display())))
    };
    let wait_ready = |child: &mut std::process::Child| -> Result<(), Fail> {
        let mut buf = [0u8; 512];
        loop {
            let n = notify
                .recv(&mut buf)
                .map_err(|e| Fail(1, format!("no READY from the daemon: {e}")))?;
            if String::from_utf8_lossy(&buf[..n])
                .lines()
                .any(|l| l == "READY=1")
            {
                return Ok(());
            }
            if let Ok(Some(s)) = child.try_wait() {
                return Err(Fail(1, format!("the daemon stopped: {s}")));
            }
        }
    };
    let stop = |child: &mut std::process::Child| {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
    };
    for speech in ["text", "espeak"] {
        let mut times = Vec::new();
        for i in 0..starts.max(1) {
            let state = dir.join(format!("state-{speech}-{i}"));
            let t0 = Instant::now();
            let mut child = spawn(speech, &state, 1.0)?;
            wait_ready(&mut child)?;
            times.push(t0.elapsed().as_secs_f64() * 1000.0);
            stop(&mut child);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "startup_to_ready_ms speech={speech} runs={} p50={:.1} max={:.1}",
            times.len(),
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
    // Memory over a long game (espeak speaking every move into a WAV file); the notifications
    // are read as systemd reads them.
    let reader = notify.try_clone().map_err(|e| Fail(1, e.to_string()))?;
    let state = dir.join("state-long");
    let t0 = Instant::now();
    let mut child = spawn("espeak", &state, speed)?;
    wait_ready(&mut child)?;
    let rss = |pid: u32| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        loop {
            match reader.recv(&mut buf) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => break,
            }
        }
    });
    let mut samples = Vec::new();
    // Until the journal holds the whole game.
    // The movetext's tokens, less the result.
    let plies = long_game()?
        .lines()
        .filter(|l| !l.starts_with('[') && !l.is_empty())
        .flat_map(str::split_whitespace)
        .count()
        .saturating_sub(1);
    let over = || {
        std::fs::read_to_string(state.join(chessboardd::record::JOURNAL)).is_ok_and(|j| {
            j.contains("\"k\":\"end\"") || j.matches("\"k\":\"move\"").count() >= plies
        })
    };
    while t0.elapsed() < Duration::from_secs(900) {
        std::thread::sleep(Duration::from_millis(250));
        match rss(child.id()) {
            Some(kb) => samples.push(kb),
            None => break,
        }
        if over() {
            break;
        }
    }
    let recorded = chessboardd::record::games(&state)
        .ok()
        .and_then(|g| g.into_iter().next())
        .and_then(|g| pgn::parse(&g.pgn).ok())
        .and_then(|g| g.into_iter().next())
        .map_or(0, |g| g.moves.len());
    stop(&mut child);
    let _ = std::fs::remove_dir_all(&dir);
    if samples.is_empty() {
        return Err(Fail(
            1,
            "the daemon stopped before its memory was read".into(),
        ));
    }
    let quarter = samples.len() / 4;
    let steady = &samples[quarter..];
    println!(
        "rss_kb long_game plies={recorded} seconds={:.0} samples={} first={} steady_max={} last={}",
        t0.elapsed().as_secs_f64(),
        samples.len(),
        samples[0],
        steady.iter().max().copied().unwrap_or(0),
        samples[samples.len() - 1]
    );
    Ok(())
}

/// Locks the state directory for this daemon; refuses (exit 75) when another one holds it. A
/// directory that cannot be locked for another reason is the journal's to report: the daemon
/// runs on without recording, as it would without the directory.
fn hold_state_dir(dir: &Path) -> Result<Option<chessboardd::record::StateLock>, Fail> {
    use chessboardd::record::{LockError, StateLock};
    match StateLock::acquire(dir) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Held(pid)) => Err(Fail(
            EXIT_IN_USE,
            format!(
                "another chessboardd{} records its game in {}: stop it first (systemctl stop \
                 chessboardd), or give this one another --state-dir",
                pid.map(|p| format!(" (process {p})")).unwrap_or_default(),
                dir.display()
            ),
        )),
        Err(LockError::Io(e)) => {
            tracing::warn!("state directory {}: cannot lock it: {e}", dir.display());
            Ok(None)
        }
    }
}
