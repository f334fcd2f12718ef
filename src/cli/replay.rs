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
    let names = cfg.board_names();
    let settings = cfg.engine.clone();
    let players = cfg.players();
    // Three threads: the parser hands the script's lines on in chunks, the engine runs on them
    // as they come, and the writer prints the events in batches. Nothing is printed before the
    // whole script is known to be well formed (a malformed one prints nothing): the parser's
    // verdict comes to the writer among the engine's batches, and the writer keeps what comes
    // before it (it always reads on, so neither the engine nor the parser ever waits on it).
    enum Out {
        Verdict(bool),
        Batch(Vec<(usize, chessboardd::engine::Event)>),
    }
    let (engine, parsed) = std::thread::scope(|s| {
        let (line_tx, line_rx) = std::sync::mpsc::sync_channel::<Vec<replay::Line>>(64);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Out>(16);
        let (text, names) = (&text, &names);
        let verdict_tx = tx.clone();
        let parser = s.spawn(move || {
            const CHUNK: usize = 2048;
            let mut chunk = Vec::with_capacity(CHUNK);
            let parsed = replay::parse_script_into(text, names, |line| {
                chunk.push(line);
                if chunk.len() == CHUNK {
                    let _ = line_tx.send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)));
                }
            });
            if parsed.is_ok() {
                let _ = line_tx.send(chunk);
            }
            drop(line_tx);
            let _ = verdict_tx.send(Out::Verdict(parsed.is_ok()));
            parsed
        });
        s.spawn(move || {
            let stdout = std::io::stdout();
            let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
            let mut line = Vec::with_capacity(512);
            // A closed pipe (`replay | head`) ends the printing, not the replay.
            let mut print = |batch: Vec<(usize, chessboardd::engine::Event)>| {
                batch.into_iter().all(|(b, e)| {
                    // With several boards every event says on which board it happened.
                    let board = (names.len() > 1).then(|| names.get(b).map_or("", String::as_str));
                    line.clear();
                    e.write_json(&mut line, board);
                    line.push(b'\n');
                    w.write_all(&line).is_ok()
                })
            };
            let mut kept = Vec::new();
            let mut well_formed = false;
            for out in rx {
                let printed = match out {
                    Out::Verdict(false) => return,
                    Out::Verdict(true) => {
                        well_formed = true;
                        std::mem::take(&mut kept).into_iter().all(&mut print)
                    }
                    Out::Batch(batch) if !well_formed => {
                        kept.push(batch);
                        true
                    }
                    Out::Batch(batch) => print(batch),
                };
                if !printed {
                    return;
                }
            }
            let _ = w.flush();
        });
        const BATCH: usize = 1024;
        let mut batch = Vec::with_capacity(BATCH);
        let engine =
            replay::run_lines(line_rx.into_iter().flatten(), settings, &players, |b, e| {
                batch.push((b, e));
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    let _ = tx.send(Out::Batch(full));
                }
            });
        let _ = tx.send(Out::Batch(batch));
        drop(tx);
        let parsed = parser
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (engine, parsed)
    });
    parsed.map_err(|e| Fail(EXIT_SCRIPT, e.to_string()))?;
    if let Some(out) = &pgn_out {
        std::fs::write(out, engine.pgn())
            .map_err(|e| Fail(1, format!("cannot write {}: {e}", out.display())))?;
    }
    Ok(())
}
