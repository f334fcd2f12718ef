//! `chessboardd board-test`: the live board as a grid, for people wiring one.

use std::io::Write;

use chessboardd::daemon::Source;
use chessboardd::settings::Flags;

use super::{config_file, load_settings, Fail, EXIT_CONFIG};

#[derive(clap::Args)]
pub struct BoardTestArgs {
    /// The board, as for run
    #[arg(long, value_name = "BOARD", help = format!(
        "The board, as for run: {}:PATH, gpio",
        chessboardd::board::protocol_names(":PATH, ")
    ))]
    pub board: String,
    /// Stop after this many seconds (default: run until interrupted)
    #[arg(long)]
    pub seconds: Option<f64>,
}

/// The board as a grid of squares, white at the bottom: `X` for an occupied square (or the piece
/// letter when the board reports pieces), `.` for an empty one.
fn grid(states: &[u8; 64]) -> String {
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
pub fn run(args: BoardTestArgs) -> Result<(), Fail> {
    let BoardTestArgs { board, seconds } = args;
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
    let flags = Flags {
        board: Some(board.clone()),
        ..Flags::default()
    };
    let cfg = load_settings(config_file(None).as_deref(), &flags)?;
    let the_board = &cfg.boards[0];
    let spec = the_board
        .spec
        .as_ref()
        .ok_or_else(|| Fail(EXIT_CONFIG, "--board: no board".into()))?;
    let source = Source::from_spec(spec, &cfg.gpio, &the_board.link)
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
