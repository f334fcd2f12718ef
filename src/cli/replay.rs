//! `chessboardd replay`: the engine over an event script, in simulated time.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use chessboardd::replay;

use super::{load_settings, Fail, GameFlags, EXIT_SCRIPT};

#[derive(clap::Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub game: GameFlags,
    /// Write the game record here at the end (PGN)
    #[arg(long, value_name = "OUT.pgn")]
    pub pgn: Option<PathBuf>,
    /// The script, or - for standard input
    pub script: String,
}

pub fn run(args: ReplayArgs) -> Result<(), Fail> {
    let ReplayArgs {
        game: flags,
        pgn: pgn_out,
        script,
    } = args;
    let cfg = load_settings(flags.config.as_deref(), &flags.to_flags())?;
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
        let mut f = std::fs::File::open(&script)
            .map_err(|e| Fail(EXIT_SCRIPT, format!("cannot read {script}: {e}")))?;
        read(&mut f, &script)?
    };
    let lines = replay::parse_script(&text, &cfg.board_names())
        .map_err(|e| Fail(EXIT_SCRIPT, e.to_string()))?;
    let settings = cfg.engine.clone();
    // The events are written by a thread of their own, in batches, while the engine goes on.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(usize, chessboardd::engine::Event)>>(16);
    // With several boards every event says on which board it happened.
    let names = cfg.board_names();
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
    let engine = replay::run_boards(&lines, settings, &cfg.players(), |b, e| {
        batch.push((b, e));
        if batch.len() == BATCH {
            let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
        }
    });
    let _ = tx.send(batch);
    drop(tx);
    let _ = writer.join();
    if let Some(out) = &pgn_out {
        std::fs::write(out, engine.pgn())
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(())
}
