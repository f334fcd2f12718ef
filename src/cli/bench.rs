//! `chessboardd bench`: measures of the daemon (reading at people's tempo, scripts for other
//! readers, GPIO scanning, speech latency, start-up and memory).

use std::io::Write;
use std::path::{Path, PathBuf};

use chessboardd::pgn;
use chessboardd::sim::{self, Gestures};
use chessboardd::speech::synth::Backend;
use chessboardd::speech::tools;
use chessboardd::words::Phrases;
use shakmaty::san::SanPlus;
use shakmaty::Chess;

use chessboardd::settings::Flags;

use super::{config_file, load_settings, Fail, EXIT_CONFIG, SEED_GAME};

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchCommand,
}

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// How well the engine reads games when people play quickly: each game played on the
    /// simulated board with the opponent answering 40, 80, 120, 200 and 300 ms after the
    /// release at the quickest, with each fault model (none, lost-next, lost-periodic, late,
    /// swaps, combined, pulls): games and moves read exactly, games with a wrong move left,
    /// games with moves in an order the board cannot tell (marked in the record), corrections,
    /// games recorded to the end (a Markdown table; the time taken on standard error)
    Tempo(TempoArgs),
    /// Write a replay script of games played at people's tempo to standard output (each game
    /// after a comment with its moves), for comparing readers of a board
    Script(ScriptArgs),
    /// CPU used by the GPIO scanner on an idle board (simulated pins), for each wiring
    Gpio(GpioArgs),
    /// Time from a completed move to its first audio sample at the sound card, and the naive way
    Latency(LatencyArgs),
    /// Start-up time to READY (as systemd sees it) and memory over a long game: the daemon is
    /// started as the service starts it, on the simulated board
    Daemon(DaemonArgs),
}

#[derive(clap::Args)]
pub struct TempoArgs {
    /// Only these fault models, in this order (a comma-separated list; a model may combine
    /// several with +, e.g. none,late,late+swaps; names: none, lost-next, lost-periodic, late,
    /// swaps, pulls, combined (lost-periodic+late+swaps), losses (lost-next+swaps))
    #[arg(long, value_name = "LIST")]
    pub faults: Option<String>,
    /// Only these minimum reply times, in ms (a comma-separated list; by default 40, 80, 120,
    /// 200 and 300)
    #[arg(long, value_name = "MS", value_delimiter = ',')]
    pub tempo: Vec<u64>,
    /// After the table, list every game not read exactly: its fault model, tempo and number
    /// (from 0, as `bench script` plays them), and the first moves where the record parts from
    /// the game (a move the record marks ends in ?)
    #[arg(long)]
    pub misread: bool,
    /// The games (PGN files, every game of each)
    #[arg(required = true, value_name = "GAMES.pgn")]
    pub pgn: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct ScriptArgs {
    /// The opponent's first lift comes this long after the mover's release, at the
    /// quickest (ms); at the slowest 700 ms
    #[arg(long, default_value_t = 40, value_name = "MS")]
    pub reply_ms: u64,
    /// The fault models the games are played with, all at once (names as `bench tempo
    /// --faults`, joined by + or commas: lost-next, lost-periodic, late, swaps, pulls,
    /// combined, losses, none; a pulled cable's link changes are comments in the script)
    #[arg(long, value_name = "LIST", default_value = "none",
          value_parser = |s: &str| s.parse::<sim::Faults>())]
    pub faults: sim::Faults,
    /// No sensor quirks: no whole-board frames, no slides over squares, never the new
    /// square before the old (for readers that follow only lifts and placements)
    #[arg(long)]
    pub plain: bool,
    /// Only the first N games
    #[arg(long, value_name = "N")]
    pub games: Option<usize>,
    /// The games (PGN files, every game of each)
    #[arg(required = true, value_name = "GAMES.pgn")]
    pub pgn: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct GpioArgs {
    /// How long to scan each wiring
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Scans a second
    #[arg(long, default_value_t = 100)]
    pub rate: u32,
}

#[derive(clap::Args)]
pub struct LatencyArgs {
    /// espeak (default) or clips (builds a voice pack in a temporary directory if needed)
    #[arg(long, value_name = "BACKEND")]
    pub speech: Option<String>,
    /// How many announcements to time
    #[arg(long, default_value_t = 100)]
    pub runs: usize,
    /// Announcement language
    #[arg(long)]
    pub lang: Option<String>,
}

#[derive(clap::Args)]
pub struct DaemonArgs {
    /// How many start-ups to time
    #[arg(long, default_value_t = 10)]
    pub starts: usize,
    /// How much faster than people the long game is played
    #[arg(long, default_value_t = 40.0)]
    pub speed: f64,
}

pub fn run(args: BenchArgs) -> Result<(), Fail> {
    match args.what {
        BenchCommand::Tempo(a) => tempo(a),
        BenchCommand::Script(a) => script(a),
        BenchCommand::Gpio(a) => gpio(a),
        BenchCommand::Latency(a) => latency(a),
        BenchCommand::Daemon(a) => daemon(a),
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

fn tempo(args: TempoArgs) -> Result<(), Fail> {
    let models = match &args.faults {
        None => sim::Faults::TABLE.to_vec(),
        Some(list) => list
            .split(',')
            .map(|m| m.parse::<sim::Faults>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Fail(EXIT_CONFIG, format!("--faults: {e}")))?,
    };
    let tempos = if args.tempo.is_empty() {
        MIN_REPLIES_MS.to_vec()
    } else {
        args.tempo.clone()
    };
    let games = games_of(&args.pgn)?;
    let settings = chessboardd::engine::Settings::default();
    let started = std::time::Instant::now();
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "| faults | reply from | games read exactly | moves read exactly \
         | games with a wrong move left | games with an order the board cannot tell (marked) \
         | corrections (per 10 games) | games recorded to the end |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut misread = Vec::new();
    for faults in &models {
        for row in sim::tempo_table(&settings, &games, &tempos, *faults) {
            println!(
                "| {} | {} ms | {}/{} | {}/{} ({:.2}%) | {}/{} | {} ({} moves) | {} ({:.1}) | {}/{} |",
                row.faults,
                row.min_reply_ms,
                row.games_exact,
                row.games,
                row.moves_exact,
                row.moves,
                pct(row.moves_exact, row.moves),
                row.games_wrong_left,
                row.games,
                row.games_unsure,
                row.moves_unsure,
                row.corrections,
                10.0 * row.corrections as f64 / row.games.max(1) as f64,
                row.games_to_the_end,
                row.games,
            );
            if args.misread {
                misread.push(row);
            }
        }
    }
    for row in misread {
        for m in &row.misread {
            let how = if m.read.wrong_left {
                "wrong"
            } else if !m.read.to_the_end {
                "stopped"
            } else {
                "marked"
            };
            println!(
                "{} {} ms game {}: {how} from ply {}: played {} | recorded {}",
                row.faults,
                row.min_reply_ms,
                m.game,
                m.ply,
                m.played.join(" "),
                m.recorded.join(" "),
            );
        }
    }
    eprintln!(
        "{} games, each at {} tempos with {} fault models, in {:.1} s",
        games.len(),
        tempos.len(),
        models.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn script(args: ScriptArgs) -> Result<(), Fail> {
    let ScriptArgs {
        reply_ms,
        faults,
        plain,
        games: limit,
        pgn: files,
    } = args;
    let mut games = games_of(&files)?;
    if let Some(n) = limit {
        games.truncate(n);
    }
    let script = sim::games_script(&games, |i| Gestures {
        quirks: !plain,
        ..sim::people(i, reply_ms, faults)
    });
    std::io::stdout()
        .lock()
        .write_all(script.as_bytes())
        .map_err(|e| Fail(1, format!("cannot write the script: {e}")))
}

fn latency(args: LatencyArgs) -> Result<(), Fail> {
    let LatencyArgs { speech, runs, lang } = args;
    // espeak unless told otherwise, whatever the config says.
    let flags = Flags {
        lang,
        speech: Some(speech.unwrap_or_else(|| "espeak".to_string())),
        ..Flags::default()
    };
    let cfg = load_settings(config_file(None).as_deref(), &flags)?;
    let phrases = cfg.engine.phrases;
    let mut sc = cfg.speech;
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

/// Scans an idle board on simulated pins and reports the scanner thread's CPU use.
fn gpio(args: GpioArgs) -> Result<(), Fail> {
    let GpioArgs { seconds, rate } = args;
    if !(0.1..=3600.0).contains(&seconds) {
        return Err(Fail(EXIT_CONFIG, "--seconds must be 0.1 to 3600".into()));
    }
    use chessboardd::board::gpio::{self, Mapping, SimPins, Wiring};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let mut lines = Vec::new();
    for wiring in [
        Wiring::Matrix {
            rows: chessboardd::board::gpio_settings::DEFAULT_ROWS,
            cols: chessboardd::board::gpio_settings::DEFAULT_COLS,
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

/// The longest game of the built-in self-play set (400 plies): the long game of `bench daemon`.
fn long_game() -> Result<String, Fail> {
    let text = include_str!("../../tests/data/games/selfplay-400.pgn");
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
fn daemon(args: DaemonArgs) -> Result<(), Fail> {
    let DaemonArgs { starts, speed } = args;
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
