//! The `chessboardd` command line: the subcommands and where each goes. Each subcommand lives in
//! its own file under `cli/`, with its flags.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use chessboardd::bounded;

mod cli;
use cli::{Fail, EXIT_SCRIPT};

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

// (Parsed once at start-up: the size of the largest subcommand's flags costs nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the engine over an event script in simulated time and print JSON events
    Replay(cli::replay::ReplayArgs),
    /// Run the daemon on its built-in simulated board and announce a game
    Demo(cli::demo::DemoArgs),
    /// Run the daemon on a board: announce and record the game until SIGTERM
    Run(cli::run::RunArgs),
    /// List the games kept in the state directory (most recent first, the unfinished one
    /// included), or print one as PGN
    Games(cli::games::GamesArgs),
    /// Follow every board that publishes to an MQTT broker and keep their live games: DIR/ID.pgn
    /// for each board and DIR/round.pgn with them all, rewritten as the games go on
    Broadcast(cli::broadcast::BroadcastArgs),
    /// Send one command to a running daemon and print its JSON answer (with the text spoken)
    Ctl(cli::ctl::CtlArgs),
    /// Pretend to be a serial board on a pseudo-terminal (for trying and testing the daemon)
    Simulate(cli::simulate::SimulateArgs),
    /// Show the live board as a grid after every change, for people wiring a board
    BoardTest(cli::board_test::BoardTestArgs),
    /// Speak a text, or a move given as SAN in a position given as FEN
    Say(cli::say::SayArgs),
    /// Measure the daemon
    Bench(cli::bench::BenchArgs),
    /// Make or check a voice pack for --speech clips
    VoicePack(cli::voice_pack::VoicePackArgs),
    /// Check a config file and exit (78 when it is wrong)
    CheckConfig(cli::check_config::CheckConfigArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    chessboardd::notify::init_logging();
    let result = match cli.command {
        Command::Replay(args) => cli::replay::run(args),
        Command::Demo(args) => cli::demo::run(args),
        Command::Run(args) => cli::run::run(args),
        Command::Games(args) => cli::games::run(args),
        Command::Broadcast(args) => cli::broadcast::run(args),
        Command::Ctl(args) => cli::ctl::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::BoardTest(args) => cli::board_test::run(args),
        Command::Say(args) => cli::say::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::VoicePack(args) => cli::voice_pack::run(args),
        Command::CheckConfig(args) => cli::check_config::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Script errors read exactly `line N: what is wrong` (the replay contract).
        Err(Fail(EXIT_SCRIPT, msg)) => {
            eprintln!("{}", bounded::shown(&msg));
            ExitCode::from(EXIT_SCRIPT)
        }
        Err(Fail(code, msg)) => {
            eprintln!("chessboardd: {}", bounded::shown(&msg));
            ExitCode::from(code)
        }
    }
}
