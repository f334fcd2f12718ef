//! `chessboardd demo`: the daemon on its built-in simulated board, announcing a game.

use std::io::Write;
use std::path::PathBuf;

use chessboardd::engine::EventKind;
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures};
use chessboardd::speech::queue::Class;
use chessboardd::speech::speaker::spoken;

use super::{config_file, load_settings, start_speaker, Fail, GameFlags, SpeechFlags, SEED_GAME};

#[derive(clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub game: GameFlags,
    /// The game to play (PGN, as people write it: annotations, comments and variations are
    /// skipped; the first game of the file, or the one --game names); default: the sample
    /// game of the Laws' Appendix E
    #[arg(long, value_name = "FILE")]
    pub game_pgn: Option<PathBuf>,
    /// Play the Nth game of --game-pgn's file (from 1)
    #[arg(long = "game", value_name = "N", default_value_t = 1, requires = "game_pgn",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub game_number: u32,
    /// How much faster than real time the simulated players move
    #[arg(long, default_value_t = 4.0, value_parser = super::parse_speed)]
    pub speed: f64,
    /// Print every event as JSON instead of the announcements
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub speech: SpeechFlags,
}

pub fn run(args: DemoArgs) -> Result<(), Fail> {
    let DemoArgs {
        game: flags,
        game_pgn,
        game_number,
        speed,
        json,
        speech: speech_flags,
    } = args;
    let cfg = load_settings(
        config_file(flags.config.as_deref()).as_deref(),
        &speech_flags.over(flags.to_flags()),
    )?;
    let sc = cfg.speech.clone();
    let announce = sc.announce.clone();
    let settings = cfg.engine;
    let (text, name) = match &game_pgn {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| Fail(1, format!("cannot read {}: {e}", p.display())))?,
            p.display().to_string(),
        ),
        None => (SEED_GAME.to_string(), "the sample game".to_string()),
    };
    let game =
        pgn::nth(&text, game_number as usize).map_err(|e| Fail(1, format!("{name}: {e}")))?;
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
    let ended = rt.block_on(chessboardd::daemon::run_simulated(
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
        print(format!("\n{}", ended.pgn()));
    }
    Ok(())
}
