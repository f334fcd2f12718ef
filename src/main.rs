//! The `chessboardd` command line. Flags are turned into validated settings here; everything
//! else lives in the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use chessboardd::bounded;
use chessboardd::config::{self, Config};

mod commands;
use commands::{Fail, GameFlags, SpeechFlags, EXIT_CONFIG, EXIT_SCRIPT};

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

#[derive(Subcommand)]
enum BenchCommand {
    /// How many games and moves the engine reads exactly when people play quickly: each game
    /// played on the simulated board with the opponent answering 40, 80, 120, 200 and 300 ms
    /// after the release at the quickest, without and with sensor losses (a Markdown table)
    Tempo {
        /// The games (PGN files, every game of each)
        #[arg(required = true, value_name = "GAMES.pgn")]
        pgn: Vec<PathBuf>,
    },
    /// Write a replay script of games played at people's tempo to standard output (each game
    /// after a comment with its moves), for comparing readers of a board
    Script {
        /// The opponent's first lift comes this long after the mover's release, at the
        /// quickest (ms); at the slowest 700 ms
        #[arg(long, default_value_t = 40, value_name = "MS")]
        reply_ms: u64,
        /// Lose 1% of the readings (seen again in the board's next whole-board report) and
        /// sweep 5% of the captured pieces off quicker than the debounce time
        #[arg(long)]
        losses: bool,
        /// No sensor quirks: no whole-board frames, no slides over squares, never the new
        /// square before the old (for readers that follow only lifts and placements)
        #[arg(long)]
        plain: bool,
        /// Only the first N games
        #[arg(long, value_name = "N")]
        games: Option<usize>,
        /// The games (PGN files, every game of each)
        #[arg(required = true, value_name = "GAMES.pgn")]
        pgn: Vec<PathBuf>,
    },
    /// CPU used by the GPIO scanner on an idle board (simulated pins), for each wiring
    Gpio {
        /// How long to scan each wiring
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Scans a second
        #[arg(long, default_value_t = 100)]
        rate: u32,
    },
    /// Time from a completed move to its first audio sample at the sound card, and the naive way
    Latency {
        /// espeak (default) or clips (builds a voice pack in a temporary directory if needed)
        #[arg(long, value_name = "BACKEND")]
        speech: Option<String>,
        /// How many announcements to time
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Announcement language
        #[arg(long)]
        lang: Option<String>,
    },
    /// Start-up time to READY (as systemd sees it) and memory over a long game: the daemon is
    /// started as the service starts it, on the simulated board
    Daemon {
        /// How many start-ups to time
        #[arg(long, default_value_t = 10)]
        starts: usize,
        /// How much faster than people the long game is played
        #[arg(long, default_value_t = 40.0)]
        speed: f64,
    },
}

#[derive(Subcommand)]
enum VoicePackCommand {
    /// Render every word of a language with espeak-ng into DIR, one WAV file per word
    Build {
        #[arg(long)]
        lang: Option<String>,
        dir: PathBuf,
    },
    /// List the words DIR lacks (exit 1 when any is missing)
    Check {
        #[arg(long)]
        lang: Option<String>,
        dir: PathBuf,
    },
}

// (Parsed once at start-up: the size of the largest subcommand's flags costs nothing.)
#[allow(clippy::large_enum_variant)]
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
        #[arg(long, default_value_t = 4.0, value_parser = commands::parse_speed)]
        speed: f64,
        /// Print every event as JSON instead of the announcements
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        speech: SpeechFlags,
    },
    /// Run the daemon on a board: announce and record the game until SIGTERM
    Run {
        /// The board (its protocols from the board protocols' table)
        #[arg(long, value_name = "BOARD", help = format!(
            "The board: gpio, {}:PATH (serial port or udev symlink), or sim:GAME.pgn (the \
             built-in simulated board plays that game); default: the config's board.driver and \
             board.port (every [[board]] when it names two)",
            chessboardd::board::protocol_names(":PATH, ")
        ))]
        board: Option<String>,
        #[command(flatten)]
        game: GameFlags,
        #[command(flatten)]
        speech: SpeechFlags,
        /// Print every engine event as a JSON line on standard output
        #[arg(long)]
        events_json: bool,
        /// For sim: how much faster than real time the simulated players move
        #[arg(long, default_value_t = 1.0, value_parser = commands::parse_speed)]
        speed: f64,
        /// For sim: the simulated players move at people's tempo, each answering from MS ms
        /// after the other's release (40 in blitz) to 700 ms, the steps of a move 60 to 900 ms
        /// apart; default: a move every second or two
        #[arg(long, value_name = "MS")]
        reply_ms: Option<u64>,
        /// The position on the board at start (FEN); default: the initial position
        #[arg(long, value_name = "FEN")]
        fen: Option<String>,
        #[command(flatten)]
        controls: Box<commands::ControlFlags>,
    },
    /// List the games kept in the state directory (most recent first, the unfinished one
    /// included), or print one as PGN
    Games {
        /// The daemon's state directory (run --state-dir)
        #[arg(long, value_name = "DIR", default_value = "/var/lib/chessboardd")]
        state_dir: PathBuf,
        /// Print game N as PGN (1 = the most recent)
        #[arg(long, value_name = "N")]
        pgn: Option<usize>,
        /// Print game N as a Braille scoresheet (BRF: 40 cells, 25 lines a page), by liblouis
        #[arg(long, value_name = "N", conflicts_with = "pgn")]
        brf: Option<usize>,
        /// The liblouis table for --brf
        #[arg(long, value_name = "TABLE", default_value = chessboardd::brf::DEFAULT_TABLE)]
        table: String,
    },
    /// Follow every board that publishes to an MQTT broker and keep their live games: DIR/ID.pgn
    /// for each board and DIR/round.pgn with them all, rewritten as the games go on
    Broadcast {
        /// The broker: mqtt://HOST[:PORT], mqtts://HOST[:PORT] for TLS; default: mqtt.url of
        /// the config. A user and password go in the config (mqtt.username, mqtt.password_file):
        /// USER:PASSWORD@HOST works too, but anyone who lists the processes sees it
        #[arg(long, value_name = "URL")]
        mqtt: Option<String>,
        /// Where the PGN files go (made if missing; games already there are kept)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The config whose [mqtt] section gives the user name, password file, TLS files and
        /// topic prefix (default /etc/chessboardd/config.toml, when there is one)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Send one command to a running daemon and print its JSON answer (with the text spoken)
    Ctl {
        /// The daemon's control socket; default: control.socket of the config, else the
        /// service's /run/chessboardd/control.sock
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The config whose control.socket to use (default /etc/chessboardd/config.toml)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// last, moves N, time, turn, position [white|black] [PIECE], rank N, file X, square SQ,
        /// promote PIECE, draw, claim, resign, adjust, pause, resume, new-game, takeback, help,
        /// clock, start, toggle-pause, rate up|down, volume up|down
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Pretend to be a serial board on a pseudo-terminal (for trying and testing the daemon)
    Simulate {
        /// One of the board protocols' table
        #[arg(long, help = chessboardd::board::protocol_choice())]
        protocol: String,
        /// Where to put a symlink to the pseudo-terminal (give it to run --board PROTOCOL:PATH)
        #[arg(long, value_name = "PATH")]
        link: PathBuf,
        /// Play this game's moves once the host has connected (the first game of the file)
        #[arg(long, value_name = "GAME.pgn")]
        pgn: Option<PathBuf>,
        /// How much faster than people the simulated players move
        #[arg(long, default_value_t = 1.0, value_parser = commands::parse_speed)]
        speed: f64,
        /// Send garbage bytes and corrupted frames now and then
        #[arg(long)]
        glitch: bool,
        /// The board stands the other way round (DGT, ChessLink)
        #[arg(long)]
        rotated: bool,
        /// Pull the cable and plug it in again this many times during the game
        #[arg(long, default_value_t = 0)]
        reconnects: u32,
        /// A second after move MOVES, hang for SECONDS: send and answer nothing, the port kept
        /// open (the next move is made meanwhile; the players then wait for the board)
        #[arg(long, value_name = "MOVES:SECONDS")]
        silence: Option<String>,
        /// (DGT) The sensor under SQUARE reports it every 200 ms throughout, unchanged
        #[arg(long, value_name = "SQUARE")]
        flicker: Option<String>,
        /// When the host closes the port (a daemon that crashed), the players make up to MOVES
        /// more moves before they wait for it
        #[arg(long, value_name = "MOVES", default_value_t = 0)]
        play_on: u32,
    },
    /// Show the live board as a grid after every change, for people wiring a board
    BoardTest {
        /// The board, as for run
        #[arg(long, value_name = "BOARD", help = format!(
            "The board, as for run: {}:PATH, gpio",
            chessboardd::board::protocol_names(":PATH, ")
        ))]
        board: String,
        /// Stop after this many seconds (default: run until interrupted)
        #[arg(long)]
        seconds: Option<f64>,
    },
    /// Speak a text, or a move given as SAN in a position given as FEN
    Say {
        /// Announcement language: appendix-f (default), de, en, ro, sv
        #[arg(long)]
        lang: Option<String>,
        /// Announcement style for --move: short (default) or long
        #[arg(long)]
        style: Option<String>,
        #[command(flatten)]
        speech: SpeechFlags,
        /// Speak this move (SAN, e.g. Nf3) instead of a text; needs --fen
        #[arg(long = "move", value_name = "SAN", requires = "fen")]
        san: Option<String>,
        /// The position the move is made in
        #[arg(long, value_name = "FEN")]
        fen: Option<String>,
        /// What to say
        #[arg(required_unless_present = "san")]
        text: Vec<String>,
    },
    /// Measure the daemon
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Make or check a voice pack for --speech clips
    VoicePack {
        #[command(subcommand)]
        what: VoicePackCommand,
    },
    /// Check a config file and exit (78 when it is wrong)
    CheckConfig {
        /// The file (default: /etc/chessboardd/config.toml)
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    chessboardd::notify::init_logging();
    let result = match &cli.command {
        Command::Replay { game, pgn, script } => commands::replay(game, pgn.as_ref(), script),
        Command::Demo {
            game,
            game_pgn,
            speed,
            json,
            speech,
        } => commands::demo(game, game_pgn.as_ref(), *speed, *json, speech),
        Command::Say {
            lang,
            style,
            speech,
            san,
            fen,
            text,
        } => commands::say(
            lang.as_deref(),
            style.as_deref(),
            speech,
            san.as_deref(),
            fen.as_deref(),
            text,
        ),
        Command::Run {
            board,
            game,
            speech,
            events_json,
            speed,
            reply_ms,
            fen,
            controls,
        } => commands::run(
            board.as_deref(),
            game,
            speech,
            *events_json,
            (*speed, *reply_ms),
            fen.as_deref(),
            controls,
        ),
        Command::Games {
            state_dir,
            pgn,
            brf,
            table,
        } => commands::games(state_dir, *pgn, brf.map(|n| (n, table.as_str()))),
        Command::Broadcast { mqtt, out, config } => {
            commands::broadcast(mqtt.as_deref(), out, config.as_deref())
        }
        Command::Ctl {
            socket,
            config,
            command,
        } => commands::ctl(socket.as_deref(), config.as_deref(), command),
        Command::Simulate {
            protocol,
            link,
            pgn,
            speed,
            glitch,
            rotated,
            reconnects,
            silence,
            flicker,
            play_on,
        } => commands::simulate(&commands::SimulateFlags {
            protocol,
            link,
            pgn: pgn.as_deref(),
            speed: *speed,
            glitch: *glitch,
            rotated: *rotated,
            reconnects: *reconnects,
            silence: silence.as_deref(),
            flicker: flicker.as_deref(),
            play_on: *play_on,
        }),
        Command::BoardTest { board, seconds } => commands::board_test(board, *seconds),
        Command::Bench {
            what: BenchCommand::Tempo { pgn },
        } => commands::bench_tempo(pgn),
        Command::Bench {
            what:
                BenchCommand::Script {
                    reply_ms,
                    losses,
                    plain,
                    games,
                    pgn,
                },
        } => commands::bench_script(pgn, *reply_ms, (*losses, *plain), *games),
        Command::Bench {
            what: BenchCommand::Latency { speech, runs, lang },
        } => commands::bench_latency(speech.as_deref(), *runs, lang.as_deref()),
        Command::Bench {
            what: BenchCommand::Gpio { seconds, rate },
        } => commands::bench_gpio(*seconds, *rate),
        Command::Bench {
            what: BenchCommand::Daemon { starts, speed },
        } => commands::bench_daemon(*starts, *speed),
        Command::VoicePack {
            what: VoicePackCommand::Build { lang, dir },
        } => commands::voice_pack_build(lang.as_deref(), dir),
        Command::VoicePack {
            what: VoicePackCommand::Check { lang, dir },
        } => commands::voice_pack_check(lang.as_deref(), dir),
        Command::CheckConfig { file } => {
            let path = file
                .clone()
                .unwrap_or_else(|| PathBuf::from(config::DEFAULT_PATH));
            Config::load_checked(&path)
                .map(|(cfg, warnings)| {
                    for w in warnings {
                        eprintln!("chessboardd: warning: {}", bounded::shown(&w));
                    }
                    println!("{}: ok", path.display());
                    println!("{}", commands::board_in_use(&cfg));
                })
                .map_err(|e| Fail(EXIT_CONFIG, e.to_string()))
        }
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
