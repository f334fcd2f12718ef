//! `chessboardd run`: the daemon on a board, announcing and recording the game until SIGTERM.

use std::io::Write;
use std::path::{Path, PathBuf};

use chessboardd::board::{discover, BoardSpec};
use chessboardd::daemon::Source;
use chessboardd::engine::EventKind;
use chessboardd::settings::{Flags, Settings};
use chessboardd::sim;
use chessboardd::speech::queue::Class;
use chessboardd::speech::speaker::{spoken, Announce, Speaker, SpeechConfig};
use chessboardd::words::Phrases;

use super::{
    config_file, load_settings, position, start_speaker, termination, Fail, GameFlags, SpeechFlags,
    EXIT_CONFIG, EXIT_IN_USE, EXIT_IOERR, EXIT_NOPERM,
};

#[derive(clap::Args)]
pub struct RunArgs {
    /// The board (its protocols from the board protocols' table)
    #[arg(long, value_name = "BOARD", help = format!(
        "The board: gpio, {}:PATH (serial port or udev symlink), or sim:GAME.pgn (the \
         built-in simulated board plays that game); default: the config's board.driver and \
         board.port (every [[board]] when it names two)",
        chessboardd::board::protocol_names(":PATH, ")
    ))]
    pub board: Option<String>,
    #[command(flatten)]
    pub game: GameFlags,
    #[command(flatten)]
    pub speech: SpeechFlags,
    /// Print every engine event as a JSON line on standard output
    #[arg(long)]
    pub events_json: bool,
    /// For sim: how much faster than real time the simulated players move
    #[arg(long, default_value_t = 1.0, value_parser = super::parse_speed)]
    pub speed: f64,
    /// For sim: the simulated players move at people's tempo, each answering from MS ms
    /// after the other's release (40 in blitz) to 700 ms, the steps of a move 60 to 900 ms
    /// apart; default: a move every second or two
    #[arg(long, value_name = "MS")]
    pub reply_ms: Option<u64>,
    /// The position on the board at start (FEN); default: the initial position
    #[arg(long, value_name = "FEN")]
    pub fen: Option<String>,
    #[command(flatten)]
    pub controls: ControlFlags,
    #[command(flatten)]
    pub opponent: OpponentFlags,
}

/// Playing against the computer (over the config's `[opponent]`).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct OpponentFlags {
    /// Play against the computer: "engine" (the UCI engine of [opponent], Stockfish by
    /// default: /usr/games/stockfish) or "none"; default: opponent.enabled of the config
    #[arg(long, value_name = "WHO")]
    pub opponent: Option<String>,
    /// The computer's strength as an Elo rating (Stockfish: 1350 to 2850); default:
    /// opponent.elo or opponent.level of the config, else full strength
    #[arg(long, value_name = "N")]
    pub elo: Option<String>,
}

/// Where `run` takes commands from (over the config's `[control]`), keeps its record, and how it
/// reads its board.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ControlFlags {
    /// Keep the game's journal and the finished games (PGN) here; a game cut short by a crash
    /// or a power cut is taken up again from it
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Put the control socket here (chessboardd ctl --socket PATH ...); default: control.socket
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Serve the live web view here ("127.0.0.1:8080"); default: web.listen of the config
    #[arg(long, value_name = "ADDR")]
    pub web: Option<String>,
    /// Read keys from this evdev device (a USB keypad: /dev/input/by-id/...-event-kbd), or
    /// "auto" for the first keyboard found; default: control.keypad
    #[arg(long, value_name = "DEVICE")]
    pub keypad: Option<String>,
    /// Publish the game to this MQTT broker: mqtt://HOST[:PORT], mqtts://HOST[:PORT] for TLS;
    /// default: mqtt.url of the config (credentials and TLS files come from [mqtt])
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// The board's id in the MQTT topics (PREFIX/ID/...); default: mqtt.board_id, else the
    /// host's name
    #[arg(long, value_name = "ID")]
    pub board_id: Option<String>,
    /// (Tests) Look for an unconfigured board under DIR/dev and DIR/sys instead of /dev, /sys
    #[arg(long, value_name = "DIR", hide = true)]
    pub discover_root: Option<PathBuf>,
    /// DGT, ChessLink: which way round the board reports its squares: auto (learned from the
    /// start position or the game's position), normal, reversed (h1 first: a board turned
    /// round, or one that sends squares the other way); default: board.orientation, else auto
    #[arg(long, value_name = "WAY")]
    pub orientation: Option<String>,
}

/// Two boards: what every player hears, wherever it happened (the moves, the game's end, the
/// clock); the rest (touches, mismatches, executing the opponent's move) only the player of the
/// board it happened on.
fn for_everyone(kind: &EventKind) -> bool {
    match kind {
        EventKind::Move { .. }
        | EventKind::GameOver { .. }
        | EventKind::TimeWarning { .. }
        | EventKind::Takeback { .. }
        | EventKind::Correction { .. }
        | EventKind::Resumed { .. }
        | EventKind::Voice { .. } => true,
        EventKind::Say { priority, .. } => *priority == chessboardd::engine::Priority::Result,
        _ => false,
    }
}

/// Set by SIGTERM or SIGINT while `run` waits for a board.
static STOP_WAITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn stop_waiting(_: libc::c_int) {
    STOP_WAITING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// No board configured: the one [`discover::find`] recognises, as soon as there is one. Until
/// then the daemon waits: it says once what it waits for ("Warte auf das Brett") and logs what
/// to configure, tells systemd it is up (so the service is not started again and again), and
/// looks again every 2 s. SIGTERM ends the wait (exit 0).
fn wait_for_board(
    roots: &discover::Roots,
    cfg: &Settings,
    events_json: bool,
) -> Result<BoardSpec, Fail> {
    if let Some(found) = discover::find(roots) {
        tracing::info!("no board configured: using {} ({})", found.spec, found.how);
        return Ok(found.spec);
    }
    tracing::warn!(
        "no board configured, and none found (a DGT board on USB, or /dev/dgt-board, \
         /dev/chessboard of the udev rules): set [board] driver and port in {} \
         (see README, \"Running as a service\"); waiting for a board to be plugged in",
        chessboardd::settings::DEFAULT_PATH
    );
    let notify = chessboardd::notify::Notifier::from_env();
    notify.ready("waiting for a board: none configured, none found");
    // SAFETY: the handlers only set an atomic flag.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            stop_waiting as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            stop_waiting as *const () as libc::sighandler_t,
        );
    }
    if let Some(mut speaker) = start_speaker(cfg.speech.clone()) {
        let text = cfg.engine.phrases.words.board_waiting.clone();
        // Printed as `run` prints what it says: an event with --events-json, else the text.
        if events_json {
            let event = chessboardd::engine::Event {
                t: 0,
                kind: EventKind::Say {
                    text: text.clone(),
                    priority: chessboardd::engine::Priority::Error,
                },
            };
            println!("{}", event.to_json());
        } else {
            println!("{text}");
        }
        speaker.say(&text, Class::Error, None);
        speaker.finish();
    }
    loop {
        for _ in 0..20 {
            if STOP_WAITING.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(Fail(0, "stopped while waiting for a board".into()));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if let Some(found) = discover::find(roots) {
            tracing::info!("a board is there: using {} ({})", found.spec, found.how);
            // SAFETY: back to the default handlers; the daemon installs its own.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                libc::signal(libc::SIGINT, libc::SIG_DFL);
            }
            return Ok(found.spec);
        }
    }
}

impl RunArgs {
    /// The flags `run` puts over the config.
    fn flags(&self) -> Flags {
        let c = &self.controls;
        self.speech.over(Flags {
            board: self.board.clone(),
            orientation: c.orientation.clone(),
            keypad: c.keypad.clone(),
            socket: c.socket.clone(),
            web: c.web.clone(),
            mqtt: c.mqtt.clone(),
            board_id: c.board_id.clone(),
            opponent: self.opponent.opponent.clone(),
            elo: self.opponent.elo.clone(),
            ..self.game.to_flags()
        })
    }
}

pub fn run(args: RunArgs) -> Result<(), Fail> {
    let start = args.fen.as_deref().map(position).transpose()?;
    let flags = args.flags();
    let cfg = load_settings(config_file(args.game.config.as_deref()).as_deref(), &flags)?;
    let spec = board_to_read(&cfg, &args)?;
    // One daemon per state directory and per control socket: a second one would take over the
    // journal (or the socket) and the first one's moves would be lost.
    let _state_lock = match &args.controls.state_dir {
        Some(dir) => hold_state_dir(dir)?,
        None => None,
    };
    if let Some(path) = &cfg.control.socket {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(Fail(
                EXIT_IN_USE,
                format!(
                    "another chessboardd answers on the control socket {}: stop it first \
                     (systemctl stop chessboardd), or give this one another --socket",
                    path.display()
                ),
            ));
        }
    }
    let boards = open_boards(&cfg, &spec, args.reply_ms)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    // The computer's engine: a wrong path, or a program that is no UCI engine, stops here.
    let computer = match &cfg.opponent {
        Some(o) => Some(
            rt.block_on(chessboardd::daemon::Computer::start(o))
                .map_err(|e| Fail(EXIT_CONFIG, e))?,
        ),
        None => None,
    };
    let announcer = Announcer::start(&cfg, &boards, args.events_json);
    let mut announcer = announcer.check_record(args.controls.state_dir.as_deref())?;
    announcer.say_starting();
    let ended = rt.block_on(run_daemon(
        cfg,
        boards,
        &args,
        (start, flags),
        (computer, &mut announcer),
    ));
    announcer.finish();
    if !args.events_json {
        print(format!("\n{}", ended.pgn()));
    }
    Ok(())
}

/// The board to read: the one given or configured, else the one found (or waited for). With
/// several boards configured, the first one's.
fn board_to_read(cfg: &Settings, args: &RunArgs) -> Result<BoardSpec, Fail> {
    match cfg.board() {
        Some(spec) => Ok(spec.clone()),
        None if cfg.boards.len() > 1 => Err(Fail(
            EXIT_CONFIG,
            "no board: give --board, or set board.driver (and board.port) in the config".into(),
        )),
        // A fresh install: none configured yet. Find one, or wait for one.
        None => {
            let roots = args
                .controls
                .discover_root
                .as_deref()
                .map_or_else(discover::Roots::default, discover::Roots::under);
            wait_for_board(&roots, cfg, args.events_json)
        }
    }
}

/// The boards' sources, each with its player: the one board to read, or every board of the
/// config (two boards: each with its player).
fn open_boards(
    cfg: &Settings,
    spec: &BoardSpec,
    reply_ms: Option<u64>,
) -> Result<Vec<(Source, Option<shakmaty::Color>)>, Fail> {
    if reply_ms.is_some() && !matches!(spec, BoardSpec::Sim(_)) {
        return Err(Fail(
            EXIT_CONFIG,
            "--reply-ms is for the simulated board (--board sim:GAME.pgn)".into(),
        ));
    }
    if cfg.boards.len() > 1 {
        let mut boards = Vec::new();
        for b in &cfg.boards {
            let name = &b.name;
            let spec = b.spec.clone().ok_or_else(|| {
                Fail(
                    EXIT_CONFIG,
                    format!("board '{name}': no driver in the config"),
                )
            })?;
            let source = Source::from_spec(&spec, &cfg.gpio, &b.link)
                .map_err(|e| Fail(1, format!("board '{name}' ({spec}): {e}")))?;
            boards.push((source, b.player));
        }
        return Ok(boards);
    }
    let first = match (spec, reply_ms) {
        (BoardSpec::Sim(pgn), Some(ms)) => {
            Source::simulated(pgn, &sim::people(0, ms, sim::Faults::NONE))
        }
        _ => Source::from_spec(spec, &cfg.gpio, &cfg.boards[0].link),
    };
    // A simulated board's game that cannot be read is a mistake in the flags or the config,
    // not a board that is off.
    let source = first.map_err(|e| {
        let code = if matches!(spec, BoardSpec::Sim(_)) {
            EXIT_CONFIG
        } else {
            1
        };
        Fail(code, format!("--board {spec}: {e}"))
    })?;
    Ok(vec![(source, None)])
}

/// Prints a line on standard output; a closed pipe ends the printing, not the daemon.
fn print(line: String) {
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// What the players hear and standard output shows: a speaker for each player with a board (one
/// for a shared board), hearing what concerns him, and the events printed.
struct Announcer {
    speakers: Vec<Option<Speaker>>,
    announces: Vec<Announce>,
    phrases: Phrases,
    names: Vec<String>,
    events_json: bool,
}

impl Announcer {
    fn start(
        cfg: &Settings,
        boards: &[(Source, Option<shakmaty::Color>)],
        events_json: bool,
    ) -> Announcer {
        let several = boards.len() > 1;
        let speeches: Vec<SpeechConfig> = (0..boards.len())
            .map(|i| match cfg.boards.get(i).filter(|_| several) {
                Some(b) => b.speech_of_player(&cfg.speech),
                None => cfg.speech.clone(),
            })
            .collect();
        Announcer {
            announces: speeches.iter().map(|s| s.announce.clone()).collect(),
            speakers: speeches.into_iter().map(start_speaker).collect(),
            phrases: cfg.engine.phrases.clone(),
            names: cfg.board_names(),
            events_json,
        }
    }

    /// A game record the daemon may not read is not started over: it says so and stops.
    fn check_record(mut self, state_dir: Option<&Path>) -> Result<Announcer, Fail> {
        let Some(Err(e)) = state_dir.map(chessboardd::record::check_readable) else {
            return Ok(self);
        };
        let text = chessboardd::words::sentences(&self.phrases.words.record_unreadable);
        for s in self.speakers.iter_mut().flatten() {
            s.say(&text, Class::Error, None);
        }
        let said = chessboardd::engine::Event {
            t: 0,
            kind: EventKind::Say {
                text: text.clone(),
                priority: chessboardd::engine::Priority::Error,
            },
        };
        print(if self.events_json {
            said.to_json()
        } else {
            format!("\u{1f50a} {text}")
        });
        for s in self.speakers.into_iter().flatten() {
            s.finish();
        }
        let code = match e.kind() {
            std::io::ErrorKind::PermissionDenied => EXIT_NOPERM,
            _ => EXIT_IOERR,
        };
        Err(Fail(code, e.to_string()))
    }

    fn say_starting(&mut self) {
        for s in self.speakers.iter_mut().flatten() {
            s.say(&self.phrases.words.starting, Class::Info, None);
        }
    }

    /// An event of board `b`: spoken to whom it concerns, and printed.
    fn event(&mut self, b: usize, e: &chessboardd::engine::Event) {
        let several = self.speakers.len() > 1;
        for (i, s) in self.speakers.iter_mut().enumerate() {
            if let Some(s) = s {
                if !several || i == b || for_everyone(&e.kind) {
                    s.event(&spoken(&e.kind, &self.announces[i], &self.phrases));
                }
            }
        }
        let board = several.then(|| self.names.get(b).map_or("", String::as_str));
        if let Some(line) = printed(e, board, self.events_json) {
            print(line);
        }
    }

    fn finish(&mut self) {
        for s in self.speakers.drain(..).flatten() {
            for e in s.finish().errors {
                tracing::warn!("speech: {e}");
            }
        }
    }
}

/// What `run` prints of an event: the JSON line with `--events-json` (on `board`, when there are
/// several), else what is said. The moves of a correction were said in the correction.
fn printed(
    e: &chessboardd::engine::Event,
    board: Option<&str>,
    events_json: bool,
) -> Option<String> {
    if events_json {
        return Some(e.to_json_on(board));
    }
    if let EventKind::Move {
        corrected: true, ..
    } = e.kind
    {
        return None;
    }
    e.kind.spoken().map(|(text, _)| format!("\u{1f50a} {text}"))
}

/// Runs the daemon until SIGTERM. At SIGHUP the settings are loaded again, as at start (`reload`:
/// the start position and the flags); settings with an error are reported and not taken.
async fn run_daemon(
    cfg: Settings,
    boards: Vec<(Source, Option<shakmaty::Color>)>,
    args: &RunArgs,
    reload: (Option<shakmaty::Chess>, Flags),
    (computer, announcer): (Option<chessboardd::daemon::Computer>, &mut Announcer),
) -> chessboardd::daemon::Ended {
    let (start, flags) = reload;
    let given = args.game.config.clone();
    let (reload_tx, reload_rx) = tokio::sync::watch::channel(None);
    // The handlers are in place before the daemon says it is ready: a signal that comes at
    // once must not find the default action (which ends the process).
    use tokio::signal::unix::{signal, SignalKind};
    let hup = signal(SignalKind::hangup());
    let shutdown = termination();
    tokio::spawn(async move {
        let Ok(mut hup) = hup else {
            return;
        };
        while hup.recv().await.is_some() {
            match Settings::load(config_file(given.as_deref()).as_deref(), &flags) {
                Ok(cfg) => {
                    let _ = reload_tx.send(Some(cfg.engine));
                }
                Err(e) => tracing::warn!("the config was not reloaded: {e}"),
            }
        }
    });
    let names = cfg.board_names();
    chessboardd::daemon::run_game(
        cfg.engine,
        boards,
        chessboardd::daemon::RunOptions {
            start,
            socket: cfg.control.socket.clone(),
            until_board_done: false,
            speed: args.speed.clamp(0.1, 1000.0),
            controls: cfg.control,
            gpio_chip: cfg.gpio.chip,
            state_dir: args.controls.state_dir.clone(),
            notify: chessboardd::notify::Notifier::from_env(),
            reload: Some(reload_rx),
            web: cfg.web,
            board_names: names,
            mqtt: cfg.mqtt,
            computer,
        },
        |b, e| announcer.event(b, e),
        shutdown,
    )
    .await
}

/// Locks the state directory for this daemon; refuses (exit 75) when another one holds it. A
/// directory that cannot be locked for another reason is the journal's to report: the daemon
/// runs on without recording, as it would without the directory.
fn hold_state_dir(dir: &Path) -> Result<Option<chessboardd::record::StateLock>, Fail> {
    use chessboardd::record::{LockError, StateLock};
    match StateLock::acquire(dir) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Held(pid)) => Err(Fail(
            EXIT_IN_USE,
            format!(
                "another chessboardd{} records its game in {}: stop it first (systemctl stop \
                 chessboardd), or give this one another --state-dir",
                pid.map(|p| format!(" (process {p})")).unwrap_or_default(),
                dir.display()
            ),
        )),
        Err(LockError::Io(e)) => {
            tracing::warn!("state directory {}: cannot lock it: {e}", dir.display());
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chessboardd::engine::Event;

    fn mv(ply: u32, san: &str, say: &str, corrected: bool) -> Event {
        Event {
            t: 1000,
            kind: EventKind::Move {
                ply,
                color: shakmaty::Color::White,
                uci: "b1c3".into(),
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
    fn a_correction_is_printed_and_its_moves_are_not_said_again() {
        let correction = Event {
            t: 1000,
            kind: EventKind::Correction {
                ply: 3,
                withdrawn: vec!["Nf3".into()],
                rulings: vec![],
                say: "Korrektur: Springer Cesar drei".into(),
            },
        };
        let moved = mv(3, "Nc3", "Springer Cesar drei", true);
        assert_eq!(
            printed(&correction, None, false).as_deref(),
            Some("\u{1f50a} Korrektur: Springer Cesar drei")
        );
        assert_eq!(printed(&moved, None, false), None);
        assert_eq!(
            printed(&mv(3, "Nc3", "Springer Cesar drei", false), None, false).as_deref(),
            Some("\u{1f50a} Springer Cesar drei")
        );
        // As JSON, like any event.
        let json: serde_json::Value =
            serde_json::from_str(&printed(&correction, Some("b"), true).unwrap()).unwrap();
        assert_eq!(json["type"], "correction");
        assert_eq!(json["withdrawn"], serde_json::json!(["Nf3"]));
        assert_eq!(json["board"], "b");
        let json: serde_json::Value =
            serde_json::from_str(&printed(&moved, None, true).unwrap()).unwrap();
        assert_eq!(json["corrected"], true);
        // Two boards: both players hear it.
        assert!(for_everyone(&correction.kind));
    }
}
