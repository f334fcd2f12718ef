//! `chessboardd games`: the games kept in the state directory, listed or printed.

use std::io::Write;
use std::path::{Path, PathBuf};

use chessboardd::pgn;
use chessboardd::settings::Flags;
use chessboardd::words::Lang;

use super::{config_file, load_settings, Fail};

#[derive(clap::Args)]
pub struct GamesArgs {
    /// The daemon's state directory (run --state-dir)
    #[arg(long, value_name = "DIR", default_value = "/var/lib/chessboardd")]
    pub state_dir: PathBuf,
    /// Print game N as PGN (1 = the most recent)
    #[arg(long, value_name = "N")]
    pub pgn: Option<usize>,
    /// Print the envelope of the adjourned game (Appendix A2: players, position, times, who
    /// sealed which move number, a draw offer; inside, the sealed move), for the arbiter
    #[arg(long, conflicts_with_all = ["pgn", "brf"])]
    pub envelope: bool,
    /// Print game N as a Braille scoresheet (BRF: 40 cells, 25 lines a page), by liblouis
    #[arg(long, value_name = "N", conflicts_with = "pgn")]
    pub brf: Option<usize>,
    /// The liblouis table for --brf (default: the language's uncontracted table)
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// The notation's language for --brf: appendix-f, de, en, ro, sv (default: the language
    /// the game was announced in, as its record says; else the config's)
    #[arg(long)]
    pub lang: Option<String>,
    /// Config file whose language --brf uses over the game's (default: the game's language,
    /// else the default config's, if there is one)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

pub fn run(args: GamesArgs) -> Result<(), Fail> {
    if args.envelope {
        let dir = &args.state_dir;
        let text = chessboardd::record::envelope(dir)
            .map_err(|e| Fail(1, format!("{}: {e}", dir.display())))?
            .ok_or_else(|| Fail(1, format!("no adjourned game in {}", dir.display())))?;
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return Ok(());
    }
    let config_lang = || {
        let flags = Flags {
            lang: args.lang.clone(),
            ..Flags::default()
        };
        load_settings(config_file(args.config.as_deref()).as_deref(), &flags).map(|s| s.lang)
    };
    let brf = match args.brf {
        Some(n) => Some(Brf {
            n,
            // --lang and --config are taken over the game's language; the config is read
            // (and a bad one refused) in any case.
            lang: match (config_lang()?, args.lang.is_some() || args.config.is_some()) {
                (chosen, true) => Choice::Chosen(chosen),
                (default, false) => Choice::GameElse(default),
            },
            table: args.table.as_deref(),
        }),
        None => None,
    };
    list(&args.state_dir, args.pgn, brf)
}

/// Which game to write in Braille, in which language's notation, by which table.
struct Brf<'a> {
    n: usize,
    lang: Choice,
    table: Option<&'a str>,
}

/// The scoresheet's language: the one chosen (`--lang`, `--config`), or the game's when its
/// record knows it, else the default config's.
enum Choice {
    Chosen(Lang),
    GameElse(Lang),
}

/// Lists the games of a state directory, or prints one.
fn list(state_dir: &Path, pgn: Option<usize>, brf: Option<Brf>) -> Result<(), Fail> {
    let kept = chessboardd::record::games_reporting(state_dir, |path, e| {
        eprintln!(
            "{}: cannot read it ({e}); the other games are listed",
            path.display()
        )
    })
    .map_err(|e| Fail(1, format!("{}: {e}", state_dir.display())))?;
    let mut out = std::io::stdout().lock();
    if let Some(Brf { n, lang, table }) = brf {
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
        let lang = match lang {
            Choice::Chosen(l) => l,
            Choice::GameElse(default) => game.lang.unwrap_or(default),
        };
        let sheet = chessboardd::brf::scoresheet(&game.pgn, lang, table).map_err(|e| Fail(1, e))?;
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
                    "{:>3}  {}  {} - {}  {:>3} moves  {state}",
                    i + 1,
                    g.started,
                    tag("White"),
                    tag("Black"),
                    moves
                );
            }
        }
    }
    Ok(())
}
