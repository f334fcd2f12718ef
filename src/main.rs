//! The `chessboardd` command line. Flags are turned into validated settings here; everything
//! else lives in the library.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use chessboardd::config::{self, Config};
use chessboardd::engine::clock::TimeControl;
use chessboardd::engine::rules::{Mode, RuleProfile};
use chessboardd::engine::EventKind;
use chessboardd::pgn;
use chessboardd::replay;
use chessboardd::sim::{self, Gestures};
use chessboardd::speech::phrase::{FileWords, Lang, Style};

/// The sample game of the FIDE Laws' Appendix E, played by `demo` unless told otherwise.
const SEED_GAME: &str = include_str!("../tests/data/games/seed-example.pgn");

/// EX_CONFIG from sysexits.h: the config is wrong.
const EXIT_CONFIG: u8 = 78;
const EXIT_SCRIPT: u8 = 2;

#[derive(Parser)]
#[command(
    name = "chessboardd",
    version,
    about = "A sensor chessboard that talks: moves by the FIDE rules, announced in the words of Appendix F"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone, Default)]
struct GameFlags {
    /// Config file (TOML); flags given here override it
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Rule profile: fide-1997, fide-2005 (default) or fide-2023
    #[arg(long, value_name = "PROFILE")]
    rules: Option<String>,
    /// tournament (touch-move, illegal moves counted; default) or casual (help only)
    #[arg(long)]
    mode: Option<String>,
    /// Announcement language: appendix-f (default), de, en, ro, sv
    #[arg(long)]
    lang: Option<String>,
    /// Announcement style: short (default) or long (adds the from-square)
    #[arg(long)]
    style: Option<String>,
    /// Time control in PGN TimeControl syntax: 300+2, 900, 300d5, 40/5400+30:1800+30
    #[arg(long, value_name = "TC")]
    time_control: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine over an event script in simulated time and print JSON events
    Replay {
        #[command(flatten)]
        game: GameFlags,
        /// Write the game record here at the end (PGN)
        #[arg(long, value_name = "OUT.pgn")]
        pgn: Option<PathBuf>,
        /// The script, or - for standard input
        script: String,
    },
    /// Run the daemon on its built-in simulated board and announce a game
    Demo {
        #[command(flatten)]
        game: GameFlags,
        /// The game to play (PGN; the first game of the file); default: the sample game of the
        /// Laws' Appendix E
        #[arg(long, value_name = "FILE")]
        game_pgn: Option<PathBuf>,
        /// How much faster than real time the simulated players move
        #[arg(long, default_value_t = 4.0)]
        speed: f64,
        /// Print every event as JSON instead of the announcements
        #[arg(long)]
        json: bool,
    },
    /// Check a config file and exit (78 when it is wrong)
    CheckConfig {
        /// The file (default: /etc/chessboardd/config.toml)
        file: Option<PathBuf>,
    },
}

/// A failure with its exit status and message.
struct Fail(u8, String);

fn config_from(flags: &GameFlags, use_default_path: bool) -> Result<Config, Fail> {
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

fn replay_cmd(flags: &GameFlags, pgn_out: Option<&PathBuf>, script: &str) -> Result<(), Fail> {
    let cfg = config_from(flags, false)?;
    let bytes = if script == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map_err(|e| {
            Fail(
                EXIT_SCRIPT,
                format!("cannot read the script from standard input: {e}"),
            )
        })?;
        b
    } else {
        std::fs::read(script)
            .map_err(|e| Fail(EXIT_SCRIPT, format!("cannot read {script}: {e}")))?
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        Fail(
            EXIT_SCRIPT,
            format!("line {line}: the script is not UTF-8 text"),
        )
    })?;
    let lines =
        replay::parse_script(&text, &cfg.boards).map_err(|e| Fail(EXIT_SCRIPT, e.to_string()))?;
    let settings = cfg.settings;
    let stdout = std::io::stdout();
    let mut w = BufWriter::new(stdout.lock());
    let mut broken = false;
    let engine = replay::run(&lines, settings, |e| {
        if !broken && writeln!(w, "{}", e.to_json()).is_err() {
            broken = true;
        }
    });
    let _ = w.flush();
    if let Some(out) = pgn_out {
        std::fs::write(out, engine.pgn())
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(())
}

fn demo_cmd(
    flags: &GameFlags,
    game_pgn: Option<&PathBuf>,
    speed: f64,
    json: bool,
) -> Result<(), Fail> {
    let settings = config_from(flags, true)?.settings;
    let text = match game_pgn {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| Fail(1, format!("cannot read {}: {e}", p.display())))?,
        None => SEED_GAME.to_string(),
    };
    let games = pgn::parse(&text).map_err(|e| Fail(1, format!("bad PGN: {e}")))?;
    let Some(game) = games.into_iter().next() else {
        return Err(Fail(1, "the PGN holds no game".into()));
    };
    if !(0.1..=1000.0).contains(&speed) {
        return Err(Fail(
            1,
            format!("--speed {speed} is out of range (0.1 to 1000)"),
        ));
    }
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
    // A closed pipe (`chessboardd demo | head`) ends the printing, not the daemon.
    let print = |line: String| {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    let engine = rt.block_on(chessboardd::daemon::run_simulated(
        settings,
        inputs,
        speed,
        |e| {
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
    if !json {
        print(format!("\n{}", engine.pgn()));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Replay { game, pgn, script } => replay_cmd(game, pgn.as_ref(), script),
        Command::Demo {
            game,
            game_pgn,
            speed,
            json,
        } => demo_cmd(game, game_pgn.as_ref(), *speed, *json),
        Command::CheckConfig { file } => {
            let path = file
                .clone()
                .unwrap_or_else(|| PathBuf::from(config::DEFAULT_PATH));
            Config::load(&path)
                .map(|_| println!("{}: ok", path.display()))
                .map_err(|e| Fail(EXIT_CONFIG, e.to_string()))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Script errors read exactly `line N: what is wrong` (the replay contract).
        Err(Fail(EXIT_SCRIPT, msg)) => {
            eprintln!("{msg}");
            ExitCode::from(EXIT_SCRIPT)
        }
        Err(Fail(code, msg)) => {
            eprintln!("chessboardd: {msg}");
            ExitCode::from(code)
        }
    }
}
