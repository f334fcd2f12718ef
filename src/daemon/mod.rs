//! The imperative shell: a tokio loop that feeds the board drivers' readings to the engine in
//! real (monotonic) time, fires the engine's timers, takes commands, and hands the events to
//! the outputs.
//!
//! - `source`: where readings come from (simulated, serial, GPIO) and the driver threads;
//! - `controls`: a keypad and GPIO buttons (the socket is `control::socket`);
//! - `outputs`: where events go (the record, the lights, the broker, the web view, systemd,
//!   the caller), all behind one trait, in one list;
//! - `computer`: the computer the player plays against (a UCI engine, a book), asked after
//!   each batch when it has the move, its answers taken like any input.

mod computer;
mod controls;
mod outputs;
mod source;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use crate::board::{DriverMsg, Timebase};
use crate::control::settings::ControlConfig;
use crate::engine::table::Table;
use crate::engine::{Engine, Event, Millis, Priority, Resumed, Settings};
use crate::notify::Notifier;
use crate::record::Recorded;
use crate::sim::SimInput;
use controls::{spawn_controls, ControlRequest};
use outputs::caller::Caller;
use outputs::journal::{say_everywhere, Record};
use outputs::lights::BoardLights;
use outputs::mqtt::Mqtt;
use outputs::notify::Status;
use outputs::web::WebView;
use outputs::{Batch, EventJson, Output};

pub use computer::Computer;
pub use outputs::lights::Lights;
pub use source::{gpio_wiring, spawn_driver, Source, SourceError};

/// Time after a simulated board's last input, so pending timeouts (promotion, mismatch) fire.
const TAIL_MS: Millis = 5_000;
/// How often the record's writes that wait (a full disk) are tried again, besides with every
/// change of the game.
const RECORD_RETRY: Duration = Duration::from_secs(2);

/// How the daemon runs.
#[derive(Debug, Default)]
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
    /// The computer the player plays against (started: `Computer::start`).
    pub computer: Option<Computer>,
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
    on_event: impl FnMut(usize, &Event),
    shutdown: impl std::future::Future<Output = ()>,
) -> Engine {
    run_game(settings, boards, opts, on_event, shutdown)
        .await
        .engine
}

/// The game as the daemon leaves it.
pub struct Ended {
    pub engine: Engine,
    /// When the game began (`Date`, `Time`), as its record and the live PGN say.
    pub began: (String, String),
}

impl Ended {
    /// The game's PGN with its date and time, as every PGN the daemon writes has it.
    pub fn pgn(&self) -> String {
        let (date, time) = &self.began;
        self.engine
            .pgn_with(&[("Date", date.clone()), ("Time", time.clone())])
    }
}

/// [`run_boards`], giving back when the game began with the game.
pub async fn run_game(
    settings: Settings,
    boards: Vec<(Source, Option<shakmaty::Color>)>,
    opts: RunOptions,
    on_event: impl FnMut(usize, &Event),
    shutdown: impl std::future::Future<Output = ()>,
) -> Ended {
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
        web,
        board_names,
        mqtt,
        mut computer,
    } = opts;
    let json = EventJson::new(&board_names);
    let web = match web {
        Some(addr) => WebView::start(&addr, json.clone()).await,
        None => None,
    };
    let mqtt = mqtt.and_then(|m| Mqtt::start(&m, json));
    let opened = Record::open(state_dir.as_deref(), boards.len(), &settings.phrases);
    let mut record = opened.record;
    // The live PGN's Date and Time: when the game began (which tells a broadcast one game of
    // this board from the next).
    let began = match &opened.resume {
        Some((recorded, _)) => (recorded.date.clone(), recorded.time.clone()),
        None => crate::record::local_now(),
    };
    let clock = Timebase::new(if speed > 0.0 { speed } else { 1.0 });
    let simulated = boards
        .iter()
        .any(|(s, _)| matches!(s, Source::Simulated(..)));
    let start = start.unwrap_or_else(|| start_of(&boards));
    let players: Vec<Option<shakmaty::Color>> = boards.iter().map(|(_, p)| *p).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let (lights, drivers, mut rx) = start_drivers(boards, clock, &stop);
    let mut engine = Table::new(settings, &players);
    if let Some(c) = &computer {
        // A game taken up again keeps its computer's colour (random, or switched).
        let recorded = opened
            .resume
            .as_ref()
            .and_then(|(r, _)| r.computer.as_ref());
        let colour = recorded
            .and_then(|(c, _)| c.parse::<shakmaty::Color>().ok())
            .unwrap_or_else(|| c.colour());
        tracing::info!("opponent: {} plays {colour}", c.pgn_name());
        engine.set_computer(Some((colour, c.pgn_name())));
    }
    let out = set_up(
        &mut engine,
        opened.news,
        &opened.resume,
        record.as_mut(),
        start,
        clock,
    );
    // Where the events go, in this order: on disk before anything else hears of them, and
    // the caller (speech) last.
    let outputs: Vec<Box<dyn Output + '_>> = [
        record.map(boxed),
        Some(boxed(BoardLights::new(lights))),
        mqtt.map(boxed),
        web.map(boxed),
        Some(boxed(Status(notify.clone()))),
        Some(boxed(Caller(on_event))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut shell = Shell {
        engine,
        clock,
        outputs,
        out,
        began,
    };
    tokio::pin!(shutdown);
    let (ctl_tx, mut ctl_rx) = mpsc::unbounded_channel::<ControlRequest>();
    let control_threads = spawn_controls(&controls, &gpio_chip, &ctl_tx, &stop);
    // The socket file goes when the daemon stops (this is dropped at the end of the run).
    let _listener = socket.and_then(|path| controls::serve_socket(&path, ctl_tx));
    let mut stopped = false;
    let mut board_open = true;
    // Ready: the board is open or being waited for, the game set up, the socket listening.
    notify.ready(&match shell.engine.leader().game().plies.len() {
        0 => "ready".to_string(),
        n => format!("ready, game taken up again after {n} plies"),
    });
    let mut watchdog = notify.watchdog_interval().map(tokio::time::interval);
    // The record's writes that wait (a full disk) are tried again this often.
    let mut retry = tokio::time::interval(RECORD_RETRY);
    retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut computer_live = computer.is_some();
    loop {
        if let Some(c) = computer.as_mut().filter(|_| computer_live) {
            c.poll(&mut shell.engine, shell.clock.now(), &mut shell.out);
        }
        shell.hand_out();
        let behind = shell.outputs.iter().any(|o| o.behind());
        let deadline = shell.deadline();
        let (engine, out) = (&mut shell.engine, &mut shell.out);
        tokio::select! {
            msg = rx.recv(), if board_open => match msg {
                Some((b, t, DriverMsg::Reading(r))) => engine.reading(b, t, r, out),
                Some((_, t, DriverMsg::Press(b))) => engine.press(t, b, out),
                Some((b, t, DriverMsg::Link(state))) => engine.link(b, t, state, out),
                Some((b, t, DriverMsg::Flicker(square))) => {
                    tracing::warn!(
                        "board: square {square} keeps being reported (its sensor flickers); \
                         the board is read all the same"
                    );
                    engine.flicker(b, t, square, out)
                }
                // A simulated game is over: the demo ends, the daemon stays for its socket.
                None if until_board_done => break,
                None => board_open = false,
            },
            _ = async { sleep_until(deadline.unwrap_or_else(Instant::now)).await }, if deadline.is_some() => {
                engine.advance(shell.clock.now(), out);
            }
            Some(ControlRequest { line, reply, by }) = ctl_rx.recv() => {
                let result = line
                    .parse::<crate::control::Parsed>()
                    .map(|p| engine.command_by(shell.clock.now(), p.0, by, out));
                let name = line.split_whitespace().next().unwrap_or("").to_string();
                if let Some(reply) = reply {
                    let _ = reply.send(crate::control::answer(&name, result));
                }
            }
            _ = async { watchdog.as_mut().expect("checked").tick().await }, if watchdog.is_some() => {
                notify.watchdog();
            }
            answer = async { computer.as_mut().expect("checked").recv().await }, if computer_live => {
                match answer {
                    Some(a) => computer
                        .as_mut()
                        .expect("checked")
                        .answer(engine, shell.clock.now(), a, out),
                    None => {
                        tracing::warn!("opponent: the engine's task ended; no more computer moves");
                        computer_live = false;
                    }
                }
            }
            _ = retry.tick(), if behind => shell.retry(),
            Ok(()) = async { reload.as_mut().expect("checked").changed().await }, if reload.is_some() => {
                let new = reload.as_mut().and_then(|r| r.borrow_and_update().clone());
                if let Some(s) = new {
                    engine.reconfigure(&s);
                    shell.refresh();
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
        shell.tail().await;
    }
    let ended = shell.finish().await;
    if let Some(c) = computer {
        c.quit().await;
    }
    for d in drivers {
        let _ = d.join();
    }
    for t in control_threads {
        let _ = t.join();
    }
    ended
}

/// The game and where its events go: what each turn of the daemon's loop works on.
struct Shell<'a> {
    engine: Table,
    clock: Timebase,
    /// Where events go, in order.
    outputs: Vec<Box<dyn Output + 'a>>,
    /// The events not yet handed out.
    out: Vec<(usize, Event)>,
    /// When the game began (the live PGN's `Date` and `Time`).
    began: (String, String),
}

impl Shell<'_> {
    /// Hands the events so far to the outputs.
    fn hand_out(&mut self) {
        let now = self.clock.now();
        let batch = &mut Batch::new(self.engine.leader(), now, &mut self.out, &mut self.began);
        outputs::hand_out(&mut self.outputs, batch);
    }

    /// Tries the outputs' work that waits again (the record, on a full disk).
    fn retry(&mut self) {
        let now = self.clock.now();
        let batch = &mut Batch::new(self.engine.leader(), now, &mut self.out, &mut self.began);
        outputs::retry(&mut self.outputs, batch);
    }

    /// When the engine's next timer fires, in real time.
    fn deadline(&self) -> Option<Instant> {
        self.engine.next_deadline().map(|d| self.clock.instant(d))
    }

    /// A simulated game is over: the timeouts still pending (promotion, mismatch) fire.
    async fn tail(&mut self) {
        let end = self.clock.now() + TAIL_MS;
        while let Some(d) = self.engine.next_deadline().filter(|d| *d <= end) {
            sleep_until(self.clock.instant(d)).await;
            self.engine.advance(d, &mut self.out);
            self.hand_out();
        }
    }

    /// The settings were reloaded: every output takes the game as it is now (the live PGN
    /// and the record their new tags), without waiting for the next event.
    fn refresh(&mut self) {
        let now = self.clock.now();
        let batch = &mut Batch::new(self.engine.leader(), now, &mut self.out, &mut self.began);
        outputs::refresh(&mut self.outputs, batch);
    }

    /// Finishes every output, and gives back the game.
    async fn finish(mut self) -> Ended {
        let now = self.clock.now();
        let batch = &mut Batch::new(self.engine.leader(), now, &mut self.out, &mut self.began);
        outputs::finish(&mut self.outputs, batch).await;
        drop(self.outputs);
        Ended {
            engine: self.engine.into_leader(),
            began: self.began,
        }
    }
}

/// Sets the game up: what the record has to say at start, then the recorded game taken up
/// again, or a new game from `start`. Returns the events of it.
fn set_up(
    engine: &mut Table,
    news: Vec<(String, Priority)>,
    resume: &Option<(Recorded, Resumed)>,
    record: Option<&mut Record>,
    start: shakmaty::Chess,
    clock: Timebase,
) -> Vec<(usize, Event)> {
    let mut out = Vec::new();
    for (text, priority) in news {
        say_everywhere(&mut out, engine.boards(), clock.now(), text, priority);
    }
    match (resume, record) {
        (Some((recorded, game)), Some(r)) => {
            let taken = engine.resume(clock.now(), game, &mut out);
            tracing::info!(
                "game of {} {} taken up again after {taken} moves",
                recorded.date,
                recorded.time
            );
            r.adopt(engine.leader());
        }
        _ => engine.new_game(clock.now(), start, true, &mut out),
    }
    out
}

fn boxed<'a>(o: impl Output + 'a) -> Box<dyn Output + 'a> {
    Box::new(o)
}

/// Where the game starts without being told: where a simulated game does, or the initial
/// position.
fn start_of(boards: &[(Source, Option<shakmaty::Color>)]) -> shakmaty::Chess {
    boards
        .iter()
        .find_map(|(s, _)| match s {
            Source::Simulated(_, p) => Some((**p).clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The boards' messages, each marked with its board's index.
type BoardRx = mpsc::UnboundedReceiver<(usize, Millis, DriverMsg)>;

/// Starts every board's driver; returns the boards' lights, the driver threads, and their
/// messages.
fn start_drivers(
    boards: Vec<(Source, Option<shakmaty::Color>)>,
    clock: Timebase,
    stop: &Arc<AtomicBool>,
) -> (Vec<Lights>, Vec<std::thread::JoinHandle<()>>, BoardRx) {
    let (tx, rx) = mpsc::unbounded_channel::<(usize, Millis, DriverMsg)>();
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
    (lights, drivers, rx)
}

/// Plays a simulated board's inputs through the engine (the demo).
pub async fn run_simulated(
    settings: Settings,
    inputs: Vec<(Millis, SimInput)>,
    speed: f64,
    mut on_event: impl FnMut(&Event),
) -> Ended {
    let opts = RunOptions {
        until_board_done: true,
        speed,
        ..RunOptions::default()
    };
    run_game(
        settings,
        vec![(Source::Simulated(inputs, Box::default()), None)],
        opts,
        |_, e| on_event(e),
        std::future::pending(),
    )
    .await
}
