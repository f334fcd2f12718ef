//! `chessboardd simulate`: a serial board on a pseudo-terminal, for trying and testing the
//! daemon.

use std::path::PathBuf;
use std::time::Duration;

use chessboardd::board::BoardProtocol;
use chessboardd::pgn;
use chessboardd::sim::pty::{self as simulate, SimOptions};
use shakmaty::Chess;

use super::{Fail, EXIT_CONFIG};

#[derive(clap::Args)]
pub struct SimulateArgs {
    /// One of the board protocols' table
    #[arg(long, help = chessboardd::board::protocol_choice())]
    pub protocol: String,
    /// Where to put a symlink to the pseudo-terminal (give it to run --board PROTOCOL:PATH)
    #[arg(long, value_name = "PATH")]
    pub link: PathBuf,
    /// Play this game's moves once the host has connected (the main line of the first game
    /// of the file, or of the one --game names; from its FEN tag's position if it has one)
    #[arg(long, value_name = "GAME.pgn")]
    pub pgn: Option<PathBuf>,
    /// Play the Nth game of --pgn's file (from 1)
    #[arg(long, value_name = "N", default_value_t = 1, requires = "pgn",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub game: u32,
    /// How much faster than people the simulated players move
    #[arg(long, default_value_t = 1.0, value_parser = super::parse_speed)]
    pub speed: f64,
    /// Send garbage bytes and corrupted frames now and then
    #[arg(long)]
    pub glitch: bool,
    /// The board stands the other way round (DGT, ChessLink)
    #[arg(long)]
    pub rotated: bool,
    /// Pull the cable and plug it in again this many times during the game
    #[arg(long, default_value_t = 0)]
    pub reconnects: u32,
    /// A second after move MOVES, hang for SECONDS: send and answer nothing, the port kept
    /// open (the next move is made meanwhile; the players then wait for the board)
    #[arg(long, value_name = "MOVES:SECONDS")]
    pub silence: Option<String>,
    /// (DGT) The sensor under SQUARE reports it every 200 ms throughout, unchanged
    #[arg(long, value_name = "SQUARE")]
    pub flicker: Option<String>,
    /// When the host closes the port (a daemon that crashed), the players make up to MOVES
    /// more moves before they wait for it
    #[arg(long, value_name = "MOVES", default_value_t = 0)]
    pub play_on: u32,
    /// When the game is over, the players leave the final position on the board this long,
    /// the board still reporting, before the simulation ends
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0,
          value_parser = |s: &str| match s.parse::<f64>() {
              Ok(v) if (0.0..=3600.0).contains(&v) => Ok(v),
              _ => Err(format!("{s}: seconds from 0 to 3600")),
          })]
    pub linger: f64,
    /// (DIY) What goes wrong between the sensors and the host, a list of fault models:
    /// lost-next and lost-periodic (a report lost now and then; the board's next report, a
    /// change's or its once-a-second one, shows it), late (a square's change reported 0.2 to
    /// 2.5 s late, never when the square changed again meanwhile), swaps (captured pieces
    /// swept off quicker than the debounce time), combined (lost-periodic,late,swaps), losses
    /// (lost-next,swaps), none
    #[arg(long, value_name = "LIST", default_value = "none",
          value_parser = |s: &str| s.parse::<chessboardd::sim::Faults>())]
    pub faults: chessboardd::sim::Faults,
    /// How often --faults' losses and late reports strike, in thousandths of the reports
    #[arg(long, value_name = "PER_MILLE", default_value_t = chessboardd::sim::FAULT_PER_MILLE,
          value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub fault_rate: u64,
}

pub fn run(f: SimulateArgs) -> Result<(), Fail> {
    let protocol = BoardProtocol::parse(&f.protocol)
        .map_err(|e| Fail(EXIT_CONFIG, format!("--protocol: {e}")))?;
    let silence = f
        .silence
        .as_deref()
        .map(simulate::parse_silence)
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--silence: {e}")))?;
    let flicker = f
        .flicker
        .as_deref()
        .map(|sq| {
            sq.parse::<shakmaty::Square>()
                .map_err(|_| format!("'{sq}' is not a square (e.g. e4)"))
        })
        .transpose()
        .map_err(|e| Fail(EXIT_CONFIG, format!("--flicker: {e}")))?;
    simulate::check_faults(protocol, f.faults)
        .map_err(|e| Fail(EXIT_CONFIG, format!("--faults: {e}")))?;
    if flicker.is_some() && !protocol.flickers {
        return Err(Fail(
            EXIT_CONFIG,
            "--flicker is for DGT boards (--protocol dgt)".into(),
        ));
    }
    let (start, moves) = match &f.pgn {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Fail(1, format!("cannot read {}: {e}", p.display())))?;
            let game = pgn::nth(&text, f.game as usize)
                .map_err(|e| Fail(1, format!("{}: {e}", p.display())))?;
            (game.start, game.moves)
        }
        None => (Chess::default(), Vec::new()),
    };
    let link = &f.link;
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
        faults: f.faults,
        fault_per_mille: f.fault_rate,
        linger: Duration::from_secs_f64(f.linger),
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
    if f.faults != chessboardd::sim::Faults::NONE {
        let t = &report.faults;
        eprintln!(
            "chessboardd simulate: faults {}: {} reports lost, {} late ({} dropped, their square \
             changed again), {} periodic frames",
            f.faults,
            t.lost.len(),
            t.late.len(),
            t.late.iter().filter(|l| !l.delivered).count(),
            t.frames.len()
        );
    }
    Ok(())
}
