//! The imperative shell: a tokio loop that feeds a board driver's readings to the engine in
//! real (monotonic) time, fires the engine's timers, and hands events to the outputs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use crate::board::gpio::{self, CdevPins, Mapping, Pins, Wiring};
use crate::board::gpio_settings::{GpioConfig, GpioWiring};
use crate::board::serial::{self, Protocol, Show};
use crate::board::{BoardSpec, DriverMsg, LinkSettings};
use crate::control::buttons::{self, CdevButtons};
use crate::control::keypad;
use crate::control::settings::ControlConfig;
use crate::engine::table::Table;
use crate::engine::{Engine, Event, EventKind, Millis, Priority, Settings};
use crate::notify::Notifier;
use crate::record::{Journal, Report};
use crate::sim::SimInput;
use crate::web::Web;

/// Time after a simulated board's last input, so pending timeouts (promotion, mismatch) fire.
const TAIL_MS: Millis = 5_000;
/// How often the record's writes that wait (a full disk) are tried again, besides with every
/// change of the game.
const RECORD_RETRY: Duration = Duration::from_secs(2);
/// At the end, how long the broker is given to take what is still queued.
const MQTT_FLUSH: std::time::Duration = std::time::Duration::from_secs(3);

/// The daemon's clock: monotonic milliseconds since start, optionally sped up (demo).
#[derive(Copy, Clone, Debug)]
pub struct DaemonClock {
    start: Instant,
    speed: f64,
}

impl DaemonClock {
    pub fn new(speed: f64) -> DaemonClock {
        DaemonClock {
            start: Instant::now(),
            speed: speed.max(0.001),
        }
    }

    pub fn now(&self) -> Millis {
        (self.start.elapsed().as_secs_f64() * 1000.0 * self.speed) as Millis
    }

    /// The real instant at which the daemon's clock shows `t`.
    pub fn instant(&self, t: Millis) -> Instant {
        self.start + Duration::from_secs_f64(t as f64 / 1000.0 / self.speed)
    }
}

/// Where the daemon's board readings come from.
pub enum Source {
    /// A simulated board's inputs, at times of the daemon clock, and the position it starts in.
    Simulated(Vec<(Millis, SimInput)>, Box<shakmaty::Chess>),
    /// A serial board, and what its lights are to show.
    Serial(PathBuf, Box<dyn Protocol>, std::sync::mpsc::Receiver<Show>),
    /// A reed-switch board on GPIO lines.
    Gpio(Wiring, Box<dyn Pins>, Mapping, u32),
}

/// Tells a board with lights what to show: the last move, the squares to put right.
#[derive(Clone, Default)]
pub struct Lights(Option<std::sync::mpsc::Sender<Show>>);

impl Lights {
    /// The positions the game can explain (a board that identifies pieces learns from them
    /// which way round it reports its squares).
    pub fn positions(&self, positions: &[[u8; 64]]) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(Show::Positions(positions.to_vec()));
        }
    }

    /// What an event calls for on the board's lights.
    pub fn event(&self, kind: &EventKind) {
        let Some(tx) = &self.0 else { return };
        let sq = |s: Option<&str>| s.and_then(|s| s.parse::<shakmaty::Square>().ok());
        let show = match kind {
            EventKind::Move { uci, .. } => Show::Move(
                [sq(uci.get(0..2)), sq(uci.get(2..4))]
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            EventKind::Mismatch { missing, extra } => {
                Show::Fix(missing.iter().chain(extra).copied().collect())
            }
            EventKind::Restored { .. } | EventKind::GameStart { .. } => Show::Nothing,
            _ => return,
        };
        let _ = tx.send(show);
    }
}

impl Source {
    fn serial(path: &std::path::Path, proto: Box<dyn Protocol>) -> Source {
        let (_tx, rx) = std::sync::mpsc::channel();
        Source::Serial(path.to_path_buf(), proto, rx)
    }

    /// Takes the sender for the board's lights (a serial board's; others have none).
    pub fn lights(&mut self) -> Lights {
        match self {
            Source::Serial(_, _, rx) => {
                let (tx, new_rx) = std::sync::mpsc::channel();
                *rx = new_rx;
                Lights(Some(tx))
            }
            _ => Lights(None),
        }
    }

    /// The source for a `--board` spec; a simulated game is read from its PGN file here.
    pub fn from_spec(
        spec: &BoardSpec,
        gpio: &GpioConfig,
        link: &LinkSettings,
    ) -> Result<Source, String> {
        Ok(match spec {
            BoardSpec::Gpio => {
                let (chip, wiring) = gpio_wiring(gpio)?;
                let pins = CdevPins::open(&chip, &wiring)?;
                Source::Gpio(wiring, Box::new(pins), gpio.mapping, gpio.rate_hz)
            }
            BoardSpec::Serial(proto, p) => Source::serial(p, (proto.host)(link)),
            BoardSpec::Sim(pgn) => Source::simulated(pgn, &crate::sim::Gestures::default())?,
        })
    }

    /// The built-in simulated board playing the first game of a PGN file, its players moving
    /// their pieces as `gestures` says.
    pub fn simulated(pgn: &Path, gestures: &crate::sim::Gestures) -> Result<Source, String> {
        let text = std::fs::read_to_string(pgn).map_err(|e| format!("{}: {e}", pgn.display()))?;
        let games = crate::pgn::parse(&text).map_err(|e| format!("{}: {e}", pgn.display()))?;
        let game = games
            .into_iter()
            .next()
            .ok_or_else(|| format!("{}: no game", pgn.display()))?;
        let inputs = crate::sim::game_inputs(&game.start, &game.moves, gestures, 1000);
        Ok(Source::Simulated(inputs, Box::new(game.start)))
    }
}

/// The chip and the line offsets of the configured wiring (lines given by name are looked up;
/// they must all be on one chip).
pub fn gpio_wiring(cfg: &GpioConfig) -> Result<(String, Wiring), String> {
    let mut chip = cfg.chip.clone();
    let mut offset = |name: &String| -> Result<u32, String> {
        let (found_chip, n) = gpio::line_offset(name)?;
        if let Some(c) = found_chip {
            chip = c;
        }
        Ok(n)
    };
    let eight = |v: Vec<u32>| -> Result<[u32; 8], String> {
        v.try_into().map_err(|_| "8 lines needed".to_string())
    };
    let wiring = match &cfg.wiring {
        GpioWiring::Matrix { rows, cols } => Wiring::Matrix {
            rows: eight(rows.iter().map(&mut offset).collect::<Result<_, _>>()?)?,
            cols: eight(cols.iter().map(&mut offset).collect::<Result<_, _>>()?)?,
        },
        GpioWiring::ShiftRegister { load, clock, data } => Wiring::ShiftRegister {
            load: offset(load)?,
            clock: offset(clock)?,
            data: offset(data)?,
        },
        GpioWiring::Direct { lines } => Wiring::Direct {
            lines: lines.iter().map(&mut offset).collect::<Result<_, _>>()?,
        },
    };
    Ok((chip, wiring))
}

/// Starts a board's driver on its own thread (blocking serial and GPIO I/O want one); it sends
/// stamped messages on `tx` until `stop` is set or its board is done.
pub fn spawn_driver(
    source: Source,
    clock: DaemonClock,
    tx: mpsc::UnboundedSender<(Millis, DriverMsg)>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || match source {
        Source::Simulated(inputs, _) => {
            for (t, input) in inputs {
                // Sleep in short slices, so that a stop (SIGTERM) is seen at once.
                let due = clock.instant(t);
                while !stop.load(Ordering::Relaxed) && Instant::now() < due {
                    std::thread::sleep(
                        due.saturating_duration_since(Instant::now())
                            .min(Duration::from_millis(50)),
                    );
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let msg = match input {
                    SimInput::Reading(r) => DriverMsg::Reading(r),
                    SimInput::Press(b) => DriverMsg::Press(b),
                    SimInput::Link(l) => DriverMsg::Link(l),
                };
                // A simulated reading carries the time it was planned for.
                if tx.send((t, msg)).is_err() {
                    break;
                }
            }
        }
        Source::Serial(path, proto, shows) => {
            serial::run(path, proto, shows, clock, tx, stop);
        }
        Source::Gpio(wiring, pins, mapping, rate) => {
            gpio::run(wiring, pins, mapping, rate, clock, tx, stop)
        }
    })
}

/// A command line from the control socket, a keypad or a button, and where its answer goes
/// (keys and buttons want none: the answer is spoken).
type ControlRequest = crate::control::socket::Request;

/// How the daemon runs.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The position at start; default: a simulated game's, or the initial position.
    pub start: Option<shakmaty::Chess>,
    /// The control socket's path.
    pub socket: Option<PathBuf>,
    /// Stop when a simulated board has played its game (the demo).
    pub until_board_done: bool,
    /// How much faster than real time the clock runs (simulated boards).
    pub speed: f64,
    /// A keypad, GPIO buttons.
    pub controls: ControlConfig,
    /// The gpiochip of buttons given by number.
    pub gpio_chip: String,
    /// Where the game's journal and the finished games are kept; `None`: not kept.
    pub state_dir: Option<PathBuf>,
    /// systemd's notification socket (ready, status, watchdog).
    pub notify: Notifier,
    /// New settings to take (SIGHUP: the config read again).
    pub reload: Option<tokio::sync::watch::Receiver<Option<Settings>>>,
    /// The web view's address ("127.0.0.1:8080"); `None`: no web view.
    pub web: Option<String>,
    /// The boards' names, for events when there are several.
    pub board_names: Vec<String>,
    /// The broker the game is published to.
    pub mqtt: Option<crate::mqtt::MqttSettings>,
}

/// What the daemon says when its record stops reaching the disk, or reaches it again.
fn record_report(r: &Report, phrases: &crate::speech::phrase::Phrases) -> (String, Priority) {
    let w = &phrases.words;
    let text = match r {
        Report::Blocked { full: true, .. } => &w.storage_full,
        Report::Blocked { full: false, .. } => &w.record_failed,
        Report::Written { full: true, .. } => &w.storage_free,
        Report::Written { full: false, .. } => &w.record_written,
    };
    let priority = match r {
        Report::Blocked { .. } => Priority::Error,
        Report::Written { .. } => Priority::Info,
    };
    (crate::speech::phrase::sentences(text), priority)
}

/// The log line of a change in whether the record reaches the disk.
fn log_report(r: &Report) {
    match r {
        Report::Blocked {
            error,
            full,
            waiting,
        } => tracing::warn!(
            "the game record cannot be written ({error}){}: {waiting} entries kept in memory, \
             written as soon as it can be (every move is kept)",
            if *full { ": the disk is full" } else { "" }
        ),
        Report::Written { entries, .. } => tracing::warn!(
            "the game record is written again: the {entries} entries kept in memory are on disk"
        ),
    }
}

/// A message of the daemon's own (not the engine's) to every board's speaker.
fn say_everywhere(
    out: &mut Vec<(usize, Event)>,
    boards: usize,
    t: Millis,
    text: String,
    priority: Priority,
) {
    for b in 0..boards.max(1) {
        out.push((
            b,
            Event {
                t,
                kind: EventKind::Say {
                    text: text.clone(),
                    priority,
                },
            },
        ));
    }
}

/// A line for systemd's status: what the daemon is doing.
fn status_of(kind: &EventKind) -> Option<String> {
    Some(match kind {
        EventKind::Link { state } => format!("board {state}"),
        EventKind::Flicker { square } => format!("square {square} flickers"),
        EventKind::GameStart { .. } => "new game".into(),
        EventKind::Resumed { plies, .. } => format!("game taken up again after {plies} plies"),
        EventKind::Move { ply, san, .. } => format!("ply {ply}: {san}"),
        EventKind::GameOver { result, reason } => format!("game over: {result} {reason}"),
        _ => return None,
    })
}

/// Starts the threads that read a keypad and GPIO buttons; they send command lines on `tx`
/// until `stop` is set.
fn spawn_controls(
    controls: &ControlConfig,
    gpio_chip: &str,
    tx: &mpsc::UnboundedSender<ControlRequest>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let log = |m: String| tracing::warn!("{m}");
    if let Some(kc) = controls.keypad_config() {
        let (tx, stop) = (tx.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            keypad::run(kc, |line| tx.send((line, None)).is_ok(), log, stop)
        }));
    }
    if !controls.buttons.is_empty() {
        let mut chip = gpio_chip.to_string();
        let offsets: Result<Vec<u32>, String> = controls
            .buttons
            .iter()
            .map(|b| {
                let (found, n) = gpio::line_offset(&b.line)?;
                if let Some(c) = found {
                    chip = c;
                }
                Ok(n)
            })
            .collect();
        match offsets.and_then(|o| CdevButtons::open(&chip, o)) {
            Ok(lines) => {
                let (tx, stop) = (tx.clone(), stop.clone());
                let (buttons, long, debounce) = (
                    controls.buttons.clone(),
                    controls.long_press_ms,
                    controls.debounce_ms,
                );
                threads.push(std::thread::spawn(move || {
                    buttons::run(
                        Box::new(lines),
                        &buttons,
                        long,
                        debounce,
                        |line| tx.send((line, None)).is_ok(),
                        log,
                        stop,
                    )
                }));
            }
            Err(e) => log(format!("buttons: {e}; going on without them")),
        }
    }
    threads
}

/// Runs the engine on a board until `shutdown` completes (SIGTERM), or, with `until_board_done`,
/// until a simulated board has played its game (the demo). `socket` is the control socket's
/// path. Every event goes to `on_event`. Returns the engine with the game.
pub async fn run(
    settings: Settings,
    source: Source,
    opts: RunOptions,
    mut on_event: impl FnMut(&Event),
    shutdown: impl std::future::Future<Output = ()>,
) -> Engine {
    run_boards(
        settings,
        vec![(source, None)],
        opts,
        |_, e| on_event(e),
        shutdown,
    )
    .await
}

/// Runs one game on several boards (two boards, Appendix F1): each with its source and the
/// player who plays on it. Events come with the index of the board they happened on.
pub async fn run_boards(
    settings: Settings,
    boards: Vec<(Source, Option<shakmaty::Color>)>,
    opts: RunOptions,
    mut on_event: impl FnMut(usize, &Event),
    shutdown: impl std::future::Future<Output = ()>,
) -> Engine {
    let RunOptions {
        start,
        socket,
        until_board_done,
        speed,
        controls,
        gpio_chip,
        state_dir,
        notify,
        mut reload,
        web: web_listen,
        board_names,
        mqtt,
    } = opts;
    let web = match web_listen {
        Some(addr) => {
            let web = Arc::new(Web::default());
            match crate::web::serve(&addr, web.clone()).await {
                Ok(bound) => {
                    tracing::info!("web view at http://{bound}/");
                    Some(web)
                }
                Err(e) => {
                    tracing::error!("web view at {addr}: {e}; going on without it");
                    None
                }
            }
        }
        None => None,
    };
    let publisher = match mqtt {
        Some(m) => match crate::mqtt::Publisher::start(&m) {
            Ok(p) => {
                tracing::info!("publishing to {} as {}/{}", m.url, m.prefix, m.board_id());
                Some(p)
            }
            Err(e) => {
                tracing::error!("mqtt: {e}; going on without it");
                None
            }
        },
        None => None,
    };
    let log = |m: String| tracing::warn!("{m}");
    let mut journal = None;
    let mut resume = None;
    // What the daemon says of its record at start (repaired, the disk full).
    let mut record_news: Vec<(String, Priority)> = Vec::new();
    let phrases = settings.phrases.clone();
    if let Some(dir) = &state_dir {
        match Journal::open(dir) {
            Ok(mut opened) => {
                opened.notes.into_iter().for_each(log);
                if let Some(r) = &opened.repaired {
                    record_news.push((phrases.record_repaired(r.lost), Priority::Error));
                }
                if let Some(n) = opened.journal.news() {
                    record_news.push(record_report(&n, &phrases));
                }
                resume = opened.resume;
                journal = Some(opened.journal);
            }
            Err(e) => log(format!(
                "state directory {}: {e}; the game is not recorded",
                dir.display()
            )),
        }
    }
    // The live PGN's Date and Time: when the game began (which tells a broadcast one game of
    // this board from the next).
    let mut began = match &resume {
        Some((recorded, _)) => (recorded.date.clone(), recorded.time.clone()),
        None => crate::record::local_now(),
    };
    // The game's PGN for the web view and the broker, and what tells it from the next game.
    let live_pgn = |leader: &Engine, (date, time): &(String, String)| {
        let pgn = leader.pgn_with(&[("Date", date.clone()), ("Time", time.clone())]);
        (pgn, format!("{date} {time}"))
    };
    // An event as JSON, naming its board when there are several.
    let event_json = |b: usize, e: &Event| {
        e.to_json_on((board_names.len() > 1).then(|| board_names.get(b).map_or("", String::as_str)))
    };
    let clock = DaemonClock::new(if speed > 0.0 { speed } else { 1.0 });
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Millis, DriverMsg)>();
    let stop = Arc::new(AtomicBool::new(false));
    let simulated = boards
        .iter()
        .any(|(s, _)| matches!(s, Source::Simulated(..)));
    // The game starts where the simulated game does, or as asked, or from the initial position.
    let start = match start {
        Some(p) => p,
        None => boards
            .iter()
            .find_map(|(s, _)| match s {
                Source::Simulated(_, p) => Some((**p).clone()),
                _ => None,
            })
            .unwrap_or_default(),
    };
    let players: Vec<Option<shakmaty::Color>> = boards.iter().map(|(_, p)| *p).collect();
    let mut lights = Vec::new();
    let mut drivers = Vec::new();
    for (b, (mut source, _)) in boards.into_iter().enumerate() {
        lights.push(source.lights());
        // Each driver's messages, marked with its board.
        let (board_tx, mut board_rx) = mpsc::unbounded_channel::<(Millis, DriverMsg)>();
        drivers.push(spawn_driver(source, clock, board_tx, stop.clone()));
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some((t, m)) = board_rx.recv().await {
                if tx.send((b, t, m)).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let boards_count = players.len();
    let mut engine = Table::new(settings, &players);
    let mut out: Vec<(usize, Event)> = Vec::new();
    for (text, priority) in record_news {
        say_everywhere(&mut out, boards_count, clock.now(), text, priority);
    }
    match (&resume, &mut journal) {
        (Some((recorded, game)), Some(j)) => {
            let taken = engine.resume(clock.now(), game, &mut out);
            tracing::info!(
                "game of {} {} taken up again after {taken} moves",
                recorded.date,
                recorded.time
            );
            j.adopt(engine.leader());
        }
        _ => engine.new_game(clock.now(), start, true, &mut out),
    }
    tokio::pin!(shutdown);
    let (ctl_tx, mut ctl_rx) = mpsc::unbounded_channel::<ControlRequest>();
    let control_threads = spawn_controls(&controls, &gpio_chip, &ctl_tx, &stop);
    let _listener = match socket {
        // The socket file goes when the daemon stops (this is dropped at the end of the run).
        Some(path) => match crate::control::socket::serve(&path, ctl_tx) {
            Ok(served) => Some(served),
            Err(e) => {
                tracing::error!("control socket {}: {e}", path.display());
                None
            }
        },
        None => None,
    };
    let mut stopped = false;
    let mut board_open = true;
    // The position the boards were last told about.
    let mut explained_for: Option<shakmaty::Chess> = None;
    // Ready: the board is open or being waited for, the game set up, the socket listening.
    notify.ready(&match engine.leader().game().plies.len() {
        0 => "ready".to_string(),
        n => format!("ready, game taken up again after {n} plies"),
    });
    let mut watchdog = notify.watchdog_interval().map(tokio::time::interval);
    // The record's writes that wait (a full disk) are tried again this often.
    let mut retry = tokio::time::interval(RECORD_RETRY);
    retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // On disk before it is said (or, the disk full, kept until it takes it).
        if let (Some(j), false) = (&mut journal, out.is_empty()) {
            let _ = j.sync(engine.leader(), out.iter().map(|(_, e)| e));
            if let Some(n) = j.news() {
                let (text, priority) = record_report(&n, &engine.leader().settings().phrases);
                log_report(&n);
                say_everywhere(&mut out, boards_count, clock.now(), text, priority);
            }
        }
        let watched = web.is_some() || publisher.is_some();
        if watched && !out.is_empty() {
            if out
                .iter()
                .any(|(_, e)| matches!(e.kind, EventKind::GameStart { .. }))
            {
                // The journal's time when there is one: the same game has the same time in
                // the record, the live PGN, and after a restart.
                began = journal
                    .as_ref()
                    .map_or_else(crate::record::local_now, Journal::began);
            }
            let leader = engine.leader();
            let state = crate::web::state_json(leader, clock.now());
            let (pgn, game) = live_pgn(leader, &began);
            if let Some(p) = &publisher {
                p.update(state.clone(), pgn.clone(), game);
            }
            if let Some(w) = &web {
                w.update(state, pgn);
            }
        }
        // The boards learn which way round they stand from the game's position.
        if !out.is_empty() {
            let pos = &engine.leader().game().pos;
            if explained_for.as_ref() != Some(pos) {
                explained_for = Some(pos.clone());
                let positions = crate::board::explained(pos);
                for l in &lights {
                    l.positions(&positions);
                }
            }
        }
        for (b, e) in out.drain(..) {
            if let Some(l) = lights.get(b) {
                l.event(&e.kind);
            }
            if watched {
                let json = event_json(b, &e);
                if let Some(p) = &publisher {
                    p.event(json.clone());
                }
                if let Some(w) = &web {
                    w.event(json);
                }
            }
            if let Some(status) = status_of(&e.kind) {
                notify.status(&status);
            }
            on_event(b, &e);
        }
        let deadline = engine.next_deadline().map(|d| clock.instant(d));
        tokio::select! {
                        msg = rx.recv(), if board_open => match msg {
                Some((b, t, DriverMsg::Reading(r))) => engine.reading(b, t, r, &mut out),
                Some((_, t, DriverMsg::Press(b))) => engine.press(t, b, &mut out),
                Some((b, t, DriverMsg::Link(state))) => engine.link(b, t, state, &mut out),
                Some((b, t, DriverMsg::Flicker(square))) => {
                    tracing::warn!(
                        "board: square {square} keeps being reported (its sensor flickers); the board is read all the same"
                    );
                    engine.flicker(b, t, square, &mut out)
                }
                // A simulated game is over: the demo ends, the daemon stays for its socket.
                None if until_board_done => break,
                None => board_open = false,
            },
            _ = async { sleep_until(deadline.unwrap_or_else(Instant::now)).await }, if deadline.is_some() => {
                engine.advance(clock.now(), &mut out);
            }
                        Some((line, reply)) = ctl_rx.recv() => {
                let result = line
                    .parse::<crate::control::Parsed>()
                    .map(|p| engine.command(clock.now(), p.0, &mut out));
                let name = line.split_whitespace().next().unwrap_or("").to_string();
                if let Some(reply) = reply {
                    let _ = reply.send(crate::control::answer(&name, result));
                }
            }
            _ = async { watchdog.as_mut().expect("checked").tick().await }, if watchdog.is_some() => {
                notify.watchdog();
            }
            _ = retry.tick(), if journal.as_ref().is_some_and(|j| j.waiting() > 0) => {
                if let Some(j) = &mut journal {
                    let _ = j.flush();
                    if let Some(n) = j.news() {
                        let (text, priority) =
                            record_report(&n, &engine.leader().settings().phrases);
                        log_report(&n);
                        say_everywhere(&mut out, boards_count, clock.now(), text, priority);
                    }
                }
            }
            Ok(()) = async { reload.as_mut().expect("checked").changed().await }, if reload.is_some() => {
                let new = reload.as_mut().and_then(|r| r.borrow_and_update().clone());
                if let Some(s) = new {
                    engine.reconfigure(&s);
                    tracing::info!("config reloaded");
                    notify.send("READY=1\nSTATUS=config reloaded");
                }
            }
            _ = &mut shutdown => {
                notify.send("STOPPING=1\nSTATUS=stopping: saving the game");
                stopped = true;
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    if simulated && !stopped {
        let end = clock.now() + TAIL_MS;
        while let Some(d) = engine.next_deadline().filter(|d| *d <= end) {
            sleep_until(clock.instant(d)).await;
            engine.advance(d, &mut out);
            if let Some(j) = &mut journal {
                let _ = j.sync(engine.leader(), out.iter().map(|(_, e)| e));
            }
            for (b, e) in out.drain(..) {
                if let Some(p) = &publisher {
                    p.event(event_json(b, &e));
                }
                on_event(b, &e);
            }
        }
    }
    if let Some(j) = &mut journal {
        let _ = j.sync(engine.leader(), out.iter().map(|(_, e)| e));
        if let Err(e) = j.close() {
            // The last chance: what is not on disk goes to the log, move for move.
            log(format!(
                "the game record cannot be written ({e}): {} writes not done; the games \
                 not on disk follow as PGN",
                j.waiting()
            ));
            for pgn in j.unwritten() {
                log(format!("not written:\n{pgn}"));
            }
        }
    }
    if let Some(p) = publisher {
        // The game as it ends, with what is still queued, then `offline`.
        let leader = engine.leader();
        let (pgn, game) = live_pgn(leader, &began);
        p.update(crate::web::state_json(leader, clock.now()), pgn, game);
        for (b, e) in &out {
            p.event(event_json(*b, e));
        }
        p.finish(MQTT_FLUSH).await;
    }
    for (b, e) in out.drain(..) {
        on_event(b, &e);
    }
    for d in drivers {
        let _ = d.join();
    }
    for t in control_threads {
        let _ = t.join();
    }
    engine.into_leader()
}

/// Plays a simulated board's inputs through the engine (the demo).
pub async fn run_simulated(
    settings: Settings,
    inputs: Vec<(Millis, SimInput)>,
    speed: f64,
    on_event: impl FnMut(&Event),
) -> Engine {
    let opts = RunOptions {
        until_board_done: true,
        speed,
        ..RunOptions::default()
    };
    run(
        settings,
        Source::Simulated(inputs, Box::default()),
        opts,
        on_event,
        std::future::pending(),
    )
    .await
}
