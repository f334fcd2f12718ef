//! `chessboardd check-config`: a config file checked, and the board `run` would read with it.

use std::path::PathBuf;

use chessboardd::board::discover;
use chessboardd::bounded;
use chessboardd::settings::{Settings, DEFAULT_PATH};

use super::{Fail, EXIT_CONFIG};

#[derive(clap::Args)]
pub struct CheckConfigArgs {
    /// The file (default: /etc/chessboardd/config.toml)
    pub file: Option<PathBuf>,
}

pub fn run(args: CheckConfigArgs) -> Result<(), Fail> {
    let path = args.file.unwrap_or_else(|| PathBuf::from(DEFAULT_PATH));
    let cfg = Settings::load_checked(&path)
        .map(|(cfg, warnings)| {
            for w in warnings {
                eprintln!("chessboardd: warning: {}", bounded::shown(&w));
            }
            cfg
        })
        .map_err(|e| Fail(EXIT_CONFIG, e.to_string()))?;
    // The computer's engine is started once, as `run` would, and let go.
    let opponent = match &cfg.opponent {
        Some(o) => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
            let info = rt
                .block_on(chessboardd::opponent::uci::probe(o))
                .map_err(|e| Fail(EXIT_CONFIG, format!("{}: {e}", path.display())))?;
            Some(format!(
                "opponent: {}, playing {}",
                info.pgn_name(),
                format!("{:?}", o.color).to_lowercase()
            ))
        }
        None => None,
    };
    println!("{}: ok", path.display());
    println!("{}", board_in_use(&cfg));
    if let Some(o) = opponent {
        println!("{o}");
    }
    Ok(())
}

/// Which board `run` would read with this config (for `check-config`).
fn board_in_use(cfg: &Settings) -> String {
    if cfg.boards.len() > 1 {
        return format!("boards: {}", cfg.board_names().join(", "));
    }
    match (cfg.board(), discover::find(&discover::Roots::default())) {
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
