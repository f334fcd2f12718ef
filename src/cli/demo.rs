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
    /// "engine": a game against the computer ([opponent] of the config, Stockfish by
    /// default): the simulated player plays White on a simulated ChessLink board, answers the
    /// computer's moves and executes them for it; both sides are spoken (at most 20 moves)
    #[arg(long, value_name = "WHO")]
    pub opponent: Option<String>,
    /// With --opponent engine: the computer's strength as an Elo rating
    #[arg(long, value_name = "N")]
    pub elo: Option<String>,
}

pub fn run(args: DemoArgs) -> Result<(), Fail> {
    match args.opponent.as_deref() {
        None | Some("none") => {}
        Some("engine") => return against_the_computer(args),
        Some(other) => {
            return Err(Fail(
                super::EXIT_CONFIG,
                format!("--opponent: '{other}' (accepted: engine, none)"),
            ))
        }
    }
    let DemoArgs {
        game: flags,
        game_pgn,
        game_number,
        speed,
        json,
        speech: speech_flags,
        ..
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
            show(e, json);
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

/// How many moves of each side the demo against the computer plays at most.
const OPPONENT_MOVES: usize = 20;

/// `demo --opponent engine`: the simulated player (random legal moves, captures preferred)
/// plays White against the engine on a simulated ChessLink board, and executes the computer's
/// moves on it; the daemon announces both sides.
fn against_the_computer(args: DemoArgs) -> Result<(), Fail> {
    use chessboardd::board::{BoardSpec, PROTOCOLS};
    use chessboardd::daemon::{Computer, RunOptions, Source};
    use chessboardd::sim::live::LiveBoard;
    use shakmaty::{Chess, Color, Position};

    let flags = chessboardd::settings::Flags {
        opponent: Some("engine".into()),
        elo: args.elo.clone(),
        ..args.speech.over(args.game.to_flags())
    };
    let cfg = load_settings(config_file(args.game.config.as_deref()).as_deref(), &flags)?;
    let mut opponent = cfg.opponent.clone().expect("--opponent engine");
    // The simulated player plays White.
    opponent.color = chessboardd::opponent::ColorChoice::Black;
    let dir = std::env::temp_dir().join(format!("chessboardd-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Fail(1, format!("{}: {e}", dir.display())))?;
    let link = dir.join("board");
    let protocol = PROTOCOLS
        .iter()
        .find(|p| p.name == "chesslink")
        .expect("a ChessLink protocol");
    let board = LiveBoard::open(protocol, &link, Chess::default().board().clone())
        .map_err(|e| Fail(1, format!("cannot open a simulated board: {e}")))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    let computer = rt
        .block_on(Computer::start(&opponent))
        .map_err(|e| Fail(super::EXIT_CONFIG, e))?;
    eprintln!(
        "chessboardd demo: you hear a simulated player (White) against {} (Black), at most {} moves",
        computer.pgn_name(),
        OPPONENT_MOVES
    );
    let source = Source::from_spec(
        &BoardSpec::Serial(protocol, link.clone()),
        &cfg.gpio,
        &cfg.boards[0].link,
    )
    .map_err(|e| Fail(1, format!("the simulated board: {e}")))?;
    let sc = cfg.speech.clone();
    let announce = sc.announce.clone();
    let phrases = cfg.engine.phrases.clone();
    let mut speaker = start_speaker(sc);
    if let Some(s) = &mut speaker {
        s.say(&phrases.words.starting, Class::Info, None);
    }
    // The player's side: the daemon's moves and executions, heard by the player's thread.
    let (tx, rx) = std::sync::mpsc::channel::<(String, Option<String>)>();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let speed = args.speed;
    let ended = std::thread::scope(|scope| {
        let board = &board;
        scope.spawn(move || {
            let wait = |what: &str, uci: Option<&str>| loop {
                match rx.recv_timeout(std::time::Duration::from_secs(60)) {
                    Ok((k, u)) if k == what && (uci.is_none() || u.as_deref() == uci) => return u,
                    Ok((k, _)) if k == "game_over" => return None,
                    Ok(_) => {}
                    Err(_) => return None,
                }
            };
            let mut pos = Chess::default();
            let mut hands = board.hands(std::process::id().into(), speed.min(4.0));
            let mut rng = chessboardd::sim::Rng::new(u64::from(std::process::id()));
            wait("game_start", None);
            for _ in 0..OPPONENT_MOVES {
                let legal = pos.legal_moves();
                let captures: Vec<_> = legal.iter().filter(|m| m.is_capture()).copied().collect();
                let from = if captures.is_empty() || rng.chance(50) {
                    legal.to_vec()
                } else {
                    captures
                };
                let m = from[rng.range(0, from.len() as u64 - 1) as usize];
                hands.play(&pos, m);
                let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
                if wait("move", Some(&uci)).is_none() {
                    break;
                }
                pos.play_unchecked(m);
                if pos.is_game_over() || pos.turn() != Color::Black {
                    break;
                }
                let Some(reply) = wait("computer", None) else {
                    break;
                };
                let Some(r) = reply
                    .parse::<shakmaty::uci::UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
                else {
                    break;
                };
                let before = pos.clone();
                pos.play_unchecked(r);
                if pos.is_game_over() {
                    break;
                }
                hands.play(&before, r);
                if wait("replicated", Some(&reply)).is_none() {
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
            let _ = done_tx.send(());
        });
        rt.block_on(chessboardd::daemon::run_game(
            cfg.engine.clone(),
            vec![(source, None)],
            RunOptions {
                speed: 1.0,
                computer: Some(computer),
                ..RunOptions::default()
            },
            |_, e| {
                if let Some(s) = &mut speaker {
                    s.event(&spoken(&e.kind, &announce, &phrases));
                }
                let heard = match &e.kind {
                    EventKind::GameStart { .. } => Some(("game_start".to_string(), None)),
                    EventKind::Move { uci, color, .. } if *color == Color::Black => {
                        Some(("computer".to_string(), Some(uci.clone())))
                    }
                    EventKind::Move { uci, .. } => Some(("move".to_string(), Some(uci.clone()))),
                    EventKind::Replicated { uci } => {
                        Some(("replicated".to_string(), Some(uci.clone())))
                    }
                    EventKind::GameOver { .. } => Some(("game_over".to_string(), None)),
                    _ => None,
                };
                if let Some(h) = heard {
                    let _ = tx.send(h);
                }
                show(e, args.json);
            },
            async {
                let _ = done_rx.await;
            },
        ))
    });
    if let Some(s) = speaker {
        for e in s.finish().errors {
            eprintln!("chessboardd: speech: {e}");
        }
    }
    if !args.json {
        let _ = writeln!(std::io::stdout().lock(), "\n{}", ended.pgn());
    }
    drop(board);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Prints an event (see [`line`]). A closed pipe (`chessboardd demo | head`) ends the printing,
/// not the daemon.
fn show(e: &chessboardd::engine::Event, json: bool) {
    if let Some(line) = line(e, json) {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}

/// An event as the demo prints it: as JSON, or a move and what is said, as on a scoresheet. A
/// correction names the moves it withdraws (`↺ Nf3`) and says the moves the board shows
/// instead, which follow on the scoresheet without their words (said in the correction).
fn line(e: &chessboardd::engine::Event, json: bool) -> Option<String> {
    if json {
        return Some(e.to_json());
    }
    let scoresheet = |ply: u32, san: &str| {
        let n = ply.div_ceil(2);
        let dots = if ply % 2 == 1 { "." } else { "..." };
        format!("{n:>3}{dots:<4}{san:<8}")
    };
    Some(match &e.kind {
        EventKind::Move {
            ply,
            san,
            corrected: true,
            ..
        } => scoresheet(*ply, san).trim_end().to_string(),
        EventKind::Move { ply, san, say, .. } => {
            format!("{} \u{1f50a} {say}", scoresheet(*ply, san))
        }
        EventKind::Correction { withdrawn, say, .. } => {
            let withdrawn = format!("  \u{21ba} {}", withdrawn.join(" "));
            format!("{withdrawn:<15} \u{1f50a} {say}")
        }
        EventKind::Say { text, .. } => format!("        \u{1f50a} {text}"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chessboardd::engine::Event;

    fn mv(ply: u32, san: &str, say: &str, corrected: bool) -> Event {
        Event {
            t: 0,
            kind: EventKind::Move {
                ply,
                color: shakmaty::Color::White,
                uci: String::new(),
                san: san.into(),
                fen: String::new(),
                say: say.into(),
                white_ms: None,
                black_ms: None,
                recovered: corrected,
                touch_checked: !corrected,
                corrected,
            },
        }
    }

    #[test]
    fn the_scoresheet_follows_a_correction() {
        let correction = Event {
            t: 0,
            kind: EventKind::Correction {
                ply: 3,
                withdrawn: vec!["Nf3".into(), "Nc6".into()],
                rulings: vec![],
                say: "Korrektur: Springer Cesar drei. Springer Felix sechs".into(),
            },
        };
        let lines: Vec<String> = [
            mv(3, "Nf3", "Springer Felix drei", false),
            mv(4, "Nc6", "Springer Cesar sechs", false),
            correction,
            mv(3, "Nc3", "Springer Cesar drei", true),
            mv(4, "Nf6", "Springer Felix sechs", true),
        ]
        .iter()
        .filter_map(|e| line(e, false))
        .collect();
        assert_eq!(
            lines,
            [
                "  2.   Nf3      \u{1f50a} Springer Felix drei",
                "  2... Nc6      \u{1f50a} Springer Cesar sechs",
                "  \u{21ba} Nf3 Nc6     \u{1f50a} Korrektur: Springer Cesar drei. Springer Felix sechs",
                "  2.   Nc3",
                "  2... Nf6",
            ]
        );
    }
}
