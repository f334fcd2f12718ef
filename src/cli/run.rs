//! `chessboardd run`: the daemon on a board, announcing and recording the game until SIGTERM.

use std::io::Write;
use std::path::{Path, PathBuf};

use chessboardd::board::{discover, BoardSpec};
use chessboardd::config::Config;
use chessboardd::daemon::Source;
use chessboardd::engine::EventKind;
use chessboardd::sim;
use chessboardd::speech::queue::Class;
use chessboardd::speech::speaker::{spoken, Speaker, SpeechConfig};

use super::{
    config_from, mqtt_from, position, speech_from, start_speaker, termination, Fail, GameFlags,
    SpeechFlags, EXIT_CONFIG, EXIT_IN_USE, EXIT_IOERR, EXIT_NOPERM,
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
    cfg: &Config,
    speech_flags: &SpeechFlags,
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
        chessboardd::config::DEFAULT_PATH
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
    if let Ok(sc) = speech_from(cfg, speech_flags) {
        if let Some(mut speaker) = start_speaker(sc) {
            let text = cfg.settings.phrases.words.board_waiting.clone();
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

pub fn run(args: RunArgs) -> Result<(), Fail> {
    let RunArgs {
        board,
        game: flags,
        speech: speech_flags,
        events_json,
        speed,
        reply_ms,
        fen,
        controls: control_flags,
    } = args;
    let (flags, speech_flags, control_flags) = (&flags, &speech_flags, &control_flags);
    let board = board.as_deref();
    let start = fen.as_deref().map(position).transpose()?;
    let mut cfg = config_from(flags, true)?;
    let board_flag = board;
    let spec =
        match board {
            Some(b) => b
                .parse::<BoardSpec>()
                .map_err(|e| Fail(EXIT_CONFIG, format!("--board: {e}")))?,
            None => match cfg.board.clone() {
                Some(spec) => spec,
                None if cfg.boards.len() > 1 => return Err(Fail(
                    EXIT_CONFIG,
                    "no board: give --board, or set board.driver (and board.port) in the config"
                        .into(),
                )),
                // A fresh install: none configured yet. Find one, or wait for one.
                None => {
                    let roots = control_flags
                        .discover_root
                        .as_deref()
                        .map_or_else(discover::Roots::default, discover::Roots::under);
                    wait_for_board(&roots, &cfg, speech_flags, events_json)?
                }
            },
        };
    let board = spec.to_string();
    if let Some(o) = &control_flags.orientation {
        let o = o
            .parse::<chessboardd::board::Orientation>()
            .map_err(|e| Fail(EXIT_CONFIG, format!("--orientation: {e}")))?;
        for l in &mut cfg.board_links {
            l.orientation = o;
        }
    }
    if let Some(k) = &control_flags.keypad {
        cfg.control.keypad = Some(k.clone()).filter(|k| !k.is_empty());
        // The help tells the keys when there is a keypad.
        cfg.set_speech(None, None, None);
    }
    let controls = cfg.control.clone();
    let mqtt = mqtt_from(
        &cfg,
        control_flags.mqtt.as_deref(),
        control_flags.board_id.as_deref(),
    )?;
    let sc = speech_from(&cfg, speech_flags)?;
    // One daemon per state directory and per control socket: a second one would take over the
    // journal (or the socket) and the first one's moves would be lost.
    let _state_lock = match &control_flags.state_dir {
        Some(dir) => hold_state_dir(dir)?,
        None => None,
    };
    let socket_path = control_flags.socket.clone().or(cfg.control.socket.clone());
    if let Some(path) = &socket_path {
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
    let settings = cfg.settings.clone();
    let phrases = settings.phrases.clone();
    // The boards: the one given, or those of the config (two boards: each with its player).
    let first = match (&spec, reply_ms) {
        (BoardSpec::Sim(pgn), Some(ms)) => {
            Source::simulated(pgn, &sim::people(0, ms, sim::Faults::NONE))
        }
        (_, Some(_)) => {
            return Err(Fail(
                EXIT_CONFIG,
                "--reply-ms is for the simulated board (--board sim:GAME.pgn)".into(),
            ))
        }
        (_, None) => Source::from_spec(&spec, &cfg.gpio, &cfg.board_links[0]),
    };
    let mut boards = vec![(
        // A simulated board's game that cannot be read is a mistake in the flags or the config,
        // not a board that is off.
        first.map_err(|e| {
            let code = if matches!(spec, BoardSpec::Sim(_)) {
                EXIT_CONFIG
            } else {
                1
            };
            Fail(code, format!("--board {board}: {e}"))
        })?,
        None,
    )];
    if board_flag.is_none() && cfg.boards.len() > 1 {
        boards.clear();
        for (i, name) in cfg.boards.iter().enumerate() {
            let spec = cfg.board_specs[i].clone().ok_or_else(|| {
                Fail(
                    EXIT_CONFIG,
                    format!("board '{name}': no driver in the config"),
                )
            })?;
            let source = Source::from_spec(&spec, &cfg.gpio, &cfg.board_links[i])
                .map_err(|e| Fail(1, format!("board '{name}' ({spec}): {e}")))?;
            boards.push((source, cfg.players[i]));
        }
    }
    // A speaker for each player with a board (one for a shared board), hearing what concerns him.
    let speeches: Vec<SpeechConfig> = boards
        .iter()
        .enumerate()
        .map(|(i, (_, player))| {
            let mut sc = sc.clone();
            if boards.len() > 1 {
                sc.announce.listener = *player;
                if let Some(d) = cfg.board_devices.get(i).cloned().flatten() {
                    sc.device = Some(d);
                }
                if let Some((own, opponent)) = cfg.board_hears.get(i) {
                    sc.announce.own_moves = own.unwrap_or(sc.announce.own_moves);
                    sc.announce.opponent_moves = opponent.unwrap_or(sc.announce.opponent_moves);
                }
            }
            sc
        })
        .collect();
    let announces: Vec<_> = speeches.iter().map(|s| s.announce.clone()).collect();
    let several = boards.len() > 1;
    let names = cfg.boards.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fail(1, format!("cannot start the runtime: {e}")))?;
    let mut speakers: Vec<Option<Speaker>> = speeches.into_iter().map(start_speaker).collect();
    let print = |line: String| {
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    // A game record the daemon may not read is not started over: it says so and stops.
    if let Some(Err(e)) = control_flags
        .state_dir
        .as_deref()
        .map(chessboardd::record::check_readable)
    {
        let text = chessboardd::speech::phrase::sentences(&phrases.words.record_unreadable);
        for s in speakers.iter_mut().flatten() {
            s.say(&text, Class::Error, None);
        }
        let said = chessboardd::engine::Event {
            t: 0,
            kind: EventKind::Say {
                text: text.clone(),
                priority: chessboardd::engine::Priority::Error,
            },
        };
        print(if events_json {
            said.to_json()
        } else {
            format!("\u{1f50a} {text}")
        });
        for s in speakers.into_iter().flatten() {
            s.finish();
        }
        let code = match e.kind() {
            std::io::ErrorKind::PermissionDenied => EXIT_NOPERM,
            _ => EXIT_IOERR,
        };
        return Err(Fail(code, e.to_string()));
    }
    for s in speakers.iter_mut().flatten() {
        s.say(&phrases.words.starting, Class::Info, None);
    }
    let notify = chessboardd::notify::Notifier::from_env();
    let (reload_tx, reload_rx) = tokio::sync::watch::channel(None);
    let engine = rt.block_on(async {
        // SIGHUP: the config is read again; a config with an error is reported and not taken.
        let (flags, control_flags) = (flags.clone(), control_flags.clone());
        // The handlers are in place before the daemon says it is ready: a signal that comes
        // at once must not find the default action (which ends the process).
        use tokio::signal::unix::{signal, SignalKind};
        let hup = signal(SignalKind::hangup());
        let shutdown = termination();
        tokio::spawn(async move {
            let Ok(mut hup) = hup else {
                return;
            };
            while hup.recv().await.is_some() {
                match config_from(&flags, true) {
                    Ok(mut cfg) => {
                        if let Some(k) = &control_flags.keypad {
                            cfg.control.keypad = Some(k.clone()).filter(|k| !k.is_empty());
                        }
                        cfg.set_speech(None, None, None);
                        let _ = reload_tx.send(Some(cfg.settings));
                    }
                    Err(Fail(_, msg)) => {
                        tracing::warn!("the config was not reloaded: {msg}")
                    }
                }
            }
        });
        chessboardd::daemon::run_boards(
            settings,
            boards,
            chessboardd::daemon::RunOptions {
                start,
                socket: socket_path.clone(),
                until_board_done: false,
                speed: speed.clamp(0.1, 1000.0),
                controls,
                gpio_chip: cfg.gpio.chip.clone(),
                state_dir: control_flags.state_dir.clone(),
                notify,
                reload: Some(reload_rx),
                web: control_flags.web.clone().or(cfg.web.clone()),
                board_names: names.clone(),
                mqtt,
            },
            |b, e| {
                for (i, s) in speakers.iter_mut().enumerate() {
                    if let Some(s) = s {
                        if !several || i == b || for_everyone(&e.kind) {
                            s.event(&spoken(&e.kind, &announces[i], &phrases));
                        }
                    }
                }
                let board = several.then(|| names.get(b).map_or("", String::as_str));
                let json = e.to_json_on(board);
                if events_json {
                    print(json);
                } else if let Some((text, _)) = e.kind.spoken() {
                    print(format!("\u{1f50a} {text}"));
                }
            },
            shutdown,
        )
        .await
    });
    for s in speakers.into_iter().flatten() {
        for e in s.finish().errors {
            tracing::warn!("speech: {e}");
        }
    }
    if !events_json {
        print(format!("\n{}", engine.pgn()));
    }
    Ok(())
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
