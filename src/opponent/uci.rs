//! A UCI engine as a child process (tokio), behind channels so the daemon's loop never waits
//! on it.
//!
//! [`Uci::start`] runs the program, sends `uci` and waits (at most `handshake_ms`) for `id
//! name`, the options and `uciok`; sets `Threads`, `Hash` and the strength (`UCI_LimitStrength`
//! with `UCI_Elo`, or `Skill Level`, each clamped to what the engine lists); then `isready` ->
//! `readyok`. A program that is not there, or does not answer like a UCI engine, is a
//! [`UciError`] naming the setting `[opponent] engine`.
//!
//! Then a task owns the process: [`Uci::search`] sends `position ... moves ...` and `go`, and
//! the `bestmove` (with the last `info ... score`) comes back on [`Uci::recv`] with the
//! search's id. A new search while one runs stops the old one (`stop`; its answer still comes,
//! with its id). Lines that are not UCI are counted and logged at debug level; a line longer
//! than [`MAX_LINE`] bytes is cut, never buffered without bound. When the process dies (or
//! hangs past its time), it is started again after 1 s, 2 s, 4 s ... at most 30 s, and the
//! search that was running is sent again. [`Uci::quit`] sends `quit` and kills the process
//! after a grace of a second.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, timeout, Instant};

use super::{OpponentSettings, Strength};

/// The longest line read from the engine; the rest of a longer one is dropped.
pub const MAX_LINE: usize = 4096;
/// How long the engine may take past a search's time before it is stopped, and then past the
/// `stop` before it is killed and started again.
const GRACE: Duration = Duration::from_secs(5);
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long `quit` may take before the process is killed.
const QUIT_GRACE: Duration = Duration::from_secs(1);
/// The waits before a dead engine is started again: 1 s, doubled each time, at most this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Why the engine could not be started; each names the setting.
#[derive(Debug, thiserror::Error)]
pub enum UciError {
    #[error(
        "[opponent] engine = \"{}\": no such program (install the package stockfish, or set \
         [opponent] engine to the path of a UCI chess engine)",
        .path.display()
    )]
    NotFound { path: PathBuf },
    #[error("[opponent] engine = \"{}\": cannot start it: {why}", .path.display())]
    CannotStart { path: PathBuf, why: String },
    #[error(
        "[opponent] engine = \"{}\": no `uciok` within {} s{} (is it a UCI chess engine?)",
        .path.display(), .waited.as_secs_f32(), garbage_note(*.garbage)
    )]
    NoUciOk {
        path: PathBuf,
        waited: Duration,
        garbage: usize,
    },
    #[error(
        "[opponent] engine = \"{}\": no `readyok` within {} s after its options were set",
        .path.display(), .waited.as_secs_f32()
    )]
    NoReadyOk { path: PathBuf, waited: Duration },
    #[error(
        "[opponent] engine = \"{}\": it ended before it was ready ({status}){}",
        .path.display(), garbage_note(*.garbage)
    )]
    Died {
        path: PathBuf,
        status: String,
        garbage: usize,
    },
}

fn garbage_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => ", 1 line that is not UCI".into(),
        n => format!(", {n} lines that are not UCI"),
    }
}

/// An option the engine lists (`option name Skill Level type spin default 20 min 0 max 20`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciOption {
    pub name: String,
    pub kind: String,
    pub min: Option<i64>,
    pub max: Option<i64>,
}

/// What the engine said about itself, and how it was set up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineInfo {
    /// `id name` ("Stockfish 15.1"); the program's file name when it gives none.
    pub name: String,
    pub options: Vec<UciOption>,
    /// The strength it plays at, as set ("Elo 1500", "level 5"), `None`: full strength.
    pub strength: Option<String>,
}

impl EngineInfo {
    /// The name for the PGN's White or Black tag: "Stockfish 15.1, Elo 1500".
    pub fn pgn_name(&self) -> String {
        match &self.strength {
            Some(s) => format!("{}, {s}", self.name),
            None => self.name.clone(),
        }
    }

    fn option(&self, name: &str) -> Option<&UciOption> {
        self.options
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(name))
    }
}

/// How long the engine thinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Go {
    /// `go movetime N`.
    MoveTime(u64),
    /// `go wtime btime winc binc [movestogo]` (ms): the engine manages the clock's time itself.
    Clocks {
        wtime: u64,
        btime: u64,
        winc: u64,
        binc: u64,
        movestogo: Option<u32>,
        /// The longest this move may take (ms): the search is stopped then.
        budget: u64,
    },
}

impl Go {
    /// The `go` command.
    pub fn command(&self) -> String {
        match self {
            Go::MoveTime(ms) => format!("go movetime {ms}"),
            Go::Clocks {
                wtime,
                btime,
                winc,
                binc,
                movestogo,
                ..
            } => {
                let mut s = format!("go wtime {wtime} btime {btime} winc {winc} binc {binc}");
                if let Some(n) = movestogo {
                    s.push_str(&format!(" movestogo {n}"));
                }
                s
            }
        }
    }

    /// The longest the search may take: it is stopped then (and the engine thought to hang
    /// when it does not answer the stop).
    fn limit(&self) -> Duration {
        match self {
            // (A move time is the engine's to keep: the grace is for its overshoot.)
            Go::MoveTime(ms) => Duration::from_millis(*ms) + GRACE,
            // The budget is the daemon's: the search is stopped when it is spent.
            Go::Clocks { budget, .. } => Duration::from_millis((*budget).min(3_600_000)),
        }
    }
}

/// A search: the position (from `fen`, or the initial position, with the moves played since in
/// UCI notation) and the time to think.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// The daemon's number for it; the answer carries it back.
    pub id: u64,
    /// `None`: the initial position (`position startpos`).
    pub fen: Option<String>,
    pub moves: Vec<String>,
    pub go: Go,
}

impl Search {
    /// The `position` command.
    pub fn position(&self) -> String {
        let mut s = match &self.fen {
            Some(fen) => format!("position fen {fen}"),
            None => "position startpos".to_string(),
        };
        if !self.moves.is_empty() {
            s.push_str(" moves ");
            s.push_str(&self.moves.join(" "));
        }
        s
    }
}

/// A score, from the side to move's point of view, as UCI gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in so many moves (negative: the side to move is mated).
    Mate(i32),
}

/// What comes back from the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A search's result: `bestmove` (`None`: the engine has no move, `bestmove (none)`) and the
    /// last score it gave.
    Best {
        id: u64,
        bestmove: Option<String>,
        score: Option<Score>,
    },
    /// The engine died (or hung); it is started again after `retry_in`.
    Down { why: String, retry_in: Duration },
    /// The engine runs again (the search that was running has been sent again).
    Up { name: String },
}

enum Cmd {
    Search(Search),
    NewGame,
    Stop,
    Quit,
}

/// The running engine: send searches, receive answers.
pub struct Uci {
    cmds: mpsc::UnboundedSender<Cmd>,
    answers: mpsc::UnboundedReceiver<Answer>,
    info: EngineInfo,
    pid: Arc<AtomicU32>,
    task: tokio::task::JoinHandle<()>,
}

impl Uci {
    /// Starts the engine and sets it up; an error names the setting. Call inside a tokio
    /// runtime.
    pub async fn start(settings: &OpponentSettings) -> Result<Uci, UciError> {
        let (proc, info) = Proc::start(settings).await?;
        let pid = Arc::new(AtomicU32::new(proc.pid));
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (ans_tx, ans_rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(supervise(
            settings.clone(),
            proc,
            cmd_rx,
            ans_tx,
            pid.clone(),
        ));
        Ok(Uci {
            cmds: cmd_tx,
            answers: ans_rx,
            info,
            pid,
            task,
        })
    }

    /// The engine's name and options, and its strength as set.
    pub fn info(&self) -> &EngineInfo {
        &self.info
    }

    /// The engine process's id (0 while it is being started again).
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// Starts a search (stopping the one running, whose answer still comes).
    pub fn search(&self, search: Search) {
        let _ = self.cmds.send(Cmd::Search(search));
    }

    /// A new game (`ucinewgame`): the search running is stopped.
    pub fn new_game(&self) {
        let _ = self.cmds.send(Cmd::NewGame);
    }

    /// Stops the search running (its answer still comes).
    pub fn stop(&self) {
        let _ = self.cmds.send(Cmd::Stop);
    }

    /// The next answer; `None` once the engine's task has ended.
    pub async fn recv(&mut self) -> Option<Answer> {
        self.answers.recv().await
    }

    /// Sends `quit`, and kills the process if it has not ended within a second.
    pub async fn quit(self) {
        let _ = self.cmds.send(Cmd::Quit);
        let _ = timeout(QUIT_GRACE * 3, self.task).await;
    }
}

/// One engine process: its input, and its output as lines.
struct Proc {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    pid: u32,
    path: PathBuf,
    /// Lines that were not UCI.
    garbage: usize,
}

impl Proc {
    /// Runs the program and goes through the handshake and the options.
    async fn start(s: &OpponentSettings) -> Result<(Proc, EngineInfo), UciError> {
        let path = s.engine.clone();
        let mut child = Command::new(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => UciError::NotFound { path: path.clone() },
                _ => UciError::CannotStart {
                    path: path.clone(),
                    why: e.to_string(),
                },
            })?;
        let pid = child.id().unwrap_or(0);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(UciError::CannotStart {
                path,
                why: "no pipes to it".into(),
            });
        };
        let (tx, lines) = mpsc::channel(64);
        tokio::spawn(read_lines(stdout, tx));
        let mut p = Proc {
            child,
            stdin,
            lines,
            pid,
            path,
            garbage: 0,
        };
        let info = p.handshake(s).await?;
        Ok((p, info))
    }

    async fn handshake(&mut self, s: &OpponentSettings) -> Result<EngineInfo, UciError> {
        let waited = Duration::from_millis(s.handshake_ms);
        let deadline = Instant::now() + waited;
        let mut info = EngineInfo::default();
        self.send_or_died("uci").await?;
        loop {
            // (Checked here too: an engine that floods its output always has a line ready.)
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match timeout(left, self.lines.recv()).await {
                Ok(Some(line)) if !left.is_zero() => line,
                Ok(None) => return Err(self.died().await),
                _ => {
                    return Err(UciError::NoUciOk {
                        path: self.path.clone(),
                        waited,
                        garbage: self.garbage,
                    })
                }
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("uciok") => break,
                Some("id") if words.next() == Some("name") => {
                    info.name = words.collect::<Vec<_>>().join(" ");
                }
                Some("id") => {}
                Some("option") => match parse_option(&line) {
                    Some(o) => info.options.push(o),
                    None => self.not_uci(&line),
                },
                None => {}
                // The banner many engines print first, and anything else.
                Some(_) => self.not_uci(&line),
            }
        }
        if info.name.is_empty() {
            info.name = self
                .path
                .file_name()
                .map_or_else(|| "engine".into(), |n| n.to_string_lossy().into_owned());
        }
        let (options, strength) = setup(s, &info);
        info.strength = strength;
        for (name, value) in options {
            self.send_or_died(&format!("setoption name {name} value {value}"))
                .await?;
        }
        self.send_or_died("isready").await?;
        let deadline = Instant::now() + waited;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match timeout(left, self.lines.recv()).await {
                Ok(Some(line)) if !left.is_zero() => {
                    if line.trim() == "readyok" {
                        break;
                    }
                    self.not_uci(&line);
                }
                Ok(None) => return Err(self.died().await),
                _ => {
                    return Err(UciError::NoReadyOk {
                        path: self.path.clone(),
                        waited,
                    })
                }
            }
        }
        tracing::info!(
            "opponent: {} ready (process {}), {}",
            info.name,
            self.pid,
            info.strength.as_deref().unwrap_or("full strength")
        );
        Ok(info)
    }

    /// A line that is not UCI (or not expected): counted, logged at debug level.
    fn not_uci(&mut self, line: &str) {
        self.garbage += 1;
        tracing::debug!("opponent: not UCI, ignored: {line:?}");
    }

    async fn send(&mut self, line: &str) -> std::io::Result<()> {
        tracing::trace!("opponent <- {line}");
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        self.stdin.flush().await
    }

    async fn send_or_died(&mut self, line: &str) -> Result<(), UciError> {
        match self.send(line).await {
            Ok(()) => Ok(()),
            Err(_) => Err(self.died().await),
        }
    }

    /// The process ended (or closed its output) during the handshake.
    async fn died(&mut self) -> UciError {
        let status = match timeout(QUIT_GRACE, self.child.wait()).await {
            Ok(Ok(st)) => st.to_string(),
            Ok(Err(e)) => e.to_string(),
            Err(_) => {
                let _ = self.child.kill().await;
                "it closed its output".into()
            }
        };
        UciError::Died {
            path: self.path.clone(),
            status,
            garbage: self.garbage,
        }
    }

    /// `quit`, then the process killed if it has not ended within the grace.
    async fn quit(mut self) {
        let _ = self.send("quit").await;
        if timeout(QUIT_GRACE, self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
    }

    async fn kill(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The engine's output as lines, each cut at [`MAX_LINE`] bytes (the rest of a longer line is
/// dropped); ends at the end of the output. The channel is bounded: an engine that floods its
/// output waits for the daemon.
async fn read_lines(stdout: ChildStdout, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => return,
            Ok(buf) => buf,
        };
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        if chunk.len() > room {
            cut = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            if cut {
                tracing::debug!("opponent: a line longer than {MAX_LINE} bytes was cut");
            }
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_string();
            line.clear();
            cut = false;
            if tx.send(text).await.is_err() {
                return;
            }
        }
    }
}

/// `option name NAME type KIND [default D] [min A] [max B] [var V]...`.
fn parse_option(line: &str) -> Option<UciOption> {
    let rest = line.trim().strip_prefix("option")?.trim_start();
    let rest = rest.strip_prefix("name ")?;
    let (name, rest) = rest.split_once(" type ")?;
    let mut words = rest.split_whitespace();
    let kind = words.next()?.to_string();
    let (mut min, mut max) = (None, None);
    while let Some(w) = words.next() {
        match w {
            "min" => min = words.next().and_then(|v| v.parse().ok()),
            "max" => max = words.next().and_then(|v| v.parse().ok()),
            _ => {}
        }
    }
    Some(UciOption {
        name: name.trim().to_string(),
        kind,
        min,
        max,
    })
}

/// A value clamped to the option's range, with a note in the log when it was changed.
fn clamp(info: &EngineInfo, name: &str, value: i64, setting: &str) -> i64 {
    let Some(o) = info.option(name) else {
        return value;
    };
    let lo = o.min.unwrap_or(i64::MIN);
    let hi = o.max.unwrap_or(i64::MAX);
    let v = value.clamp(lo.min(hi), hi.max(lo));
    if v != value {
        tracing::warn!(
            "opponent: [opponent] {setting} = {value} is outside what {} accepts ({lo} to {hi}): \
             {v} is used",
            info.name
        );
    }
    v
}

/// The options to set (name, value) for the settings, and the strength as set.
pub fn setup(s: &OpponentSettings, info: &EngineInfo) -> (Vec<(String, String)>, Option<String>) {
    let mut options = Vec::new();
    if info.option("Threads").is_some() {
        let v = clamp(info, "Threads", i64::from(s.threads), "threads");
        options.push(("Threads".to_string(), v.to_string()));
    }
    if info.option("Hash").is_some() {
        let v = clamp(info, "Hash", i64::from(s.hash_mb), "hash_mb");
        options.push(("Hash".to_string(), v.to_string()));
    }
    let has_elo = info.option("UCI_LimitStrength").is_some() && info.option("UCI_Elo").is_some();
    let skill = info.option("Skill Level").cloned();
    let strength = match s.strength {
        Strength::Full => None,
        Strength::Elo(elo) if has_elo => {
            let v = clamp(info, "UCI_Elo", i64::from(elo), "elo");
            options.push(("UCI_LimitStrength".into(), "true".into()));
            options.push(("UCI_Elo".into(), v.to_string()));
            Some(format!("Elo {v}"))
        }
        Strength::Elo(elo) => {
            tracing::warn!(
                "opponent: {} has no UCI_LimitStrength/UCI_Elo: [opponent] elo = {elo} is not \
                 used, it plays at full strength (try [opponent] level)",
                info.name
            );
            None
        }
        Strength::Level(level) => match skill {
            Some(o) => {
                let (lo, hi) = (o.min.unwrap_or(0), o.max.unwrap_or(20));
                // 1..20 onto lo..hi: 1 the weakest, 20 the strongest.
                let v = lo + (i64::from(level.clamp(1, 20)) - 1) * (hi - lo) / 19;
                options.push(("Skill Level".into(), v.to_string()));
                Some(format!("level {level}"))
            }
            None if has_elo => {
                let o = info.option("UCI_Elo").cloned();
                let (lo, hi) = o.map_or((1350, 2850), |o| {
                    (o.min.unwrap_or(1350), o.max.unwrap_or(2850))
                });
                let v = lo + (i64::from(level.clamp(1, 20)) - 1) * (hi - lo) / 19;
                tracing::info!(
                    "opponent: {} has no Skill Level: level {level} is played as Elo {v}",
                    info.name
                );
                options.push(("UCI_LimitStrength".into(), "true".into()));
                options.push(("UCI_Elo".into(), v.to_string()));
                Some(format!("Elo {v}"))
            }
            None => {
                tracing::warn!(
                    "opponent: {} has neither Skill Level nor UCI_Elo: [opponent] level = \
                     {level} is not used, it plays at full strength",
                    info.name
                );
                None
            }
        },
    };
    (options, strength)
}

/// What the supervising task keeps between the engine's lines.
struct State {
    /// The search sent, waiting for its `bestmove`; and when it is due.
    current: Option<(Search, Instant)>,
    /// Whether `stop` was sent for it.
    stopped: bool,
    /// A search waiting for the current one's `bestmove` (after `stop`).
    next: Option<Search>,
    /// The last score of the current search.
    score: Option<Score>,
    /// Whether `ucinewgame` waits to be sent before the next search.
    new_game: bool,
}

/// Owns the process: sends the searches, reads the answers, starts the engine again when it
/// dies or hangs.
async fn supervise(
    settings: OpponentSettings,
    mut proc: Proc,
    mut cmds: mpsc::UnboundedReceiver<Cmd>,
    answers: mpsc::UnboundedSender<Answer>,
    pid: Arc<AtomicU32>,
) {
    let mut st = State {
        current: None,
        stopped: false,
        next: None,
        score: None,
        new_game: true,
    };
    let mut backoff = Duration::from_secs(1);
    loop {
        let why = run_until_down(&mut proc, &mut st, &mut cmds, &answers).await;
        let Some(why) = why else {
            proc.quit().await;
            pid.store(0, Ordering::Relaxed);
            return;
        };
        proc.kill().await;
        pid.store(0, Ordering::Relaxed);
        // What was running is asked again of the new process.
        let mut pending = st.next.take().or(st.current.take().map(|(s, _)| s));
        st.stopped = false;
        st.score = None;
        loop {
            tracing::warn!(
                "opponent: the engine {why}: starting it again in {} s",
                backoff.as_secs()
            );
            let _ = answers.send(Answer::Down {
                why: why.clone(),
                retry_in: backoff,
            });
            let wake = Instant::now() + backoff;
            backoff = (backoff * 2).min(MAX_BACKOFF);
            // Commands while waiting: the latest search is the one to send.
            loop {
                tokio::select! {
                    cmd = cmds.recv() => match cmd {
                        None | Some(Cmd::Quit) => return,
                        Some(Cmd::Search(s)) => pending = Some(s),
                        Some(Cmd::NewGame) => {
                            pending = None;
                            st.new_game = true;
                        }
                        Some(Cmd::Stop) => pending = None,
                    },
                    _ = sleep_until(wake) => break,
                }
            }
            match Proc::start(&settings).await {
                Ok((p, info)) => {
                    proc = p;
                    pid.store(proc.pid, Ordering::Relaxed);
                    let _ = answers.send(Answer::Up { name: info.name });
                    st.new_game = true;
                    if let Some(s) = pending.take() {
                        if begin(&mut proc, &mut st, s).await.is_err() {
                            tracing::warn!("opponent: the engine ended at once");
                        }
                    }
                    break;
                }
                Err(e) => tracing::warn!("opponent: cannot start the engine again: {e}"),
            }
        }
    }
}

/// Runs the engine until it dies or hangs (`Some(why)`), or until the daemon quits (`None`).
async fn run_until_down(
    proc: &mut Proc,
    st: &mut State,
    cmds: &mut mpsc::UnboundedReceiver<Cmd>,
    answers: &mpsc::UnboundedSender<Answer>,
) -> Option<String> {
    loop {
        let due = st.current.as_ref().map(|(_, due)| *due);
        tokio::select! {
            cmd = cmds.recv() => match cmd {
                None | Some(Cmd::Quit) => return None,
                Some(Cmd::Search(s)) => {
                    if st.current.is_some() {
                        st.next = Some(s);
                        if stop(proc, st).await.is_err() {
                            return Some("closed its input".into());
                        }
                    } else if begin(proc, st, s).await.is_err() {
                        return Some("closed its input".into());
                    }
                }
                Some(Cmd::NewGame) => {
                    st.new_game = true;
                    st.next = None;
                    if st.current.is_some() && stop(proc, st).await.is_err() {
                        return Some("closed its input".into());
                    }
                }
                Some(Cmd::Stop) => {
                    st.next = None;
                    if st.current.is_some() && stop(proc, st).await.is_err() {
                        return Some("closed its input".into());
                    }
                }
            },
            line = proc.lines.recv() => match line {
                None => {
                    let status = match timeout(QUIT_GRACE, proc.child.wait()).await {
                        Ok(Ok(s)) => s.to_string(),
                        _ => "closed its output".into(),
                    };
                    return Some(format!("ended ({status})"));
                }
                Some(line) => {
                    if let Some(answer) = take_line(proc, st, &line) {
                        let _ = answers.send(answer);
                        if let Some(s) = st.next.take() {
                            if begin(proc, st, s).await.is_err() {
                                return Some("closed its input".into());
                            }
                        }
                    }
                }
            },
            _ = sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                if st.stopped {
                    return Some("does not answer".into());
                }
                tracing::info!("opponent: the engine's time for this move is spent: stop");
                if stop(proc, st).await.is_err() {
                    return Some("closed its input".into());
                }
            }
        }
    }
}

/// A line of the engine's while it runs: a `bestmove` gives an answer.
fn take_line(proc: &mut Proc, st: &mut State, line: &str) -> Option<Answer> {
    let mut words = line.split_whitespace();
    match words.next() {
        Some("bestmove") => {
            let Some((search, _)) = st.current.take() else {
                proc.not_uci(line);
                return None;
            };
            st.stopped = false;
            let bestmove = words
                .next()
                .filter(|m| *m != "(none)" && *m != "0000")
                .map(str::to_string);
            Some(Answer::Best {
                id: search.id,
                bestmove,
                score: st.score.take(),
            })
        }
        Some("info") => {
            if let Some(score) = parse_score(line) {
                // Only the principal line's (multipv 1, or no multipv).
                let multipv = line
                    .split_whitespace()
                    .skip_while(|w| *w != "multipv")
                    .nth(1);
                if multipv.is_none_or(|m| m == "1") {
                    st.score = Some(score);
                }
            }
            None
        }
        Some("readyok") | None => None,
        Some(_) => {
            proc.not_uci(line);
            None
        }
    }
}

/// `info ... score cp N` or `score mate N` (a `lowerbound`/`upperbound` after it is taken too).
pub fn parse_score(line: &str) -> Option<Score> {
    let mut words = line
        .split_whitespace()
        .skip_while(|w| *w != "score")
        .skip(1);
    match (words.next()?, words.next()?.parse::<i32>().ok()?) {
        ("cp", n) => Some(Score::Cp(n)),
        ("mate", n) => Some(Score::Mate(n)),
        _ => None,
    }
}

/// Sends a search: `ucinewgame` first when one waits, the position, `go`.
async fn begin(proc: &mut Proc, st: &mut State, s: Search) -> std::io::Result<()> {
    if st.new_game {
        proc.send("ucinewgame").await?;
        proc.send("isready").await?;
        st.new_game = false;
    }
    proc.send(&s.position()).await?;
    proc.send(&s.go.command()).await?;
    let due = Instant::now() + s.go.limit();
    st.current = Some((s, due));
    st.stopped = false;
    st.score = None;
    Ok(())
}

/// `stop` for the current search; it is killed if no `bestmove` comes within a grace.
async fn stop(proc: &mut Proc, st: &mut State) -> std::io::Result<()> {
    if st.stopped {
        return Ok(());
    }
    proc.send("stop").await?;
    st.stopped = true;
    if let Some((_, due)) = &mut st.current {
        *due = Instant::now() + STOP_GRACE;
    }
    Ok(())
}

/// Waits for a process to answer `uci`, with the settings' timeout; for `check-config`, which
/// starts the engine once and lets it go. Returns its name and options.
pub async fn probe(settings: &OpponentSettings) -> Result<EngineInfo, UciError> {
    let (proc, info) = Proc::start(settings).await?;
    proc.quit().await;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(lines: &[&str]) -> EngineInfo {
        EngineInfo {
            name: "Test".into(),
            options: lines.iter().filter_map(|l| parse_option(l)).collect(),
            strength: None,
        }
    }

    const STOCKFISH: &[&str] = &[
        "option name Threads type spin default 1 min 1 max 1024",
        "option name Hash type spin default 16 min 1 max 33554432",
        "option name Skill Level type spin default 20 min 0 max 20",
        "option name UCI_LimitStrength type check default false",
        "option name UCI_Elo type spin default 1350 min 1350 max 2850",
        "option name Debug Log File type string default ",
    ];

    #[test]
    fn options_are_read_with_names_of_several_words() {
        let o = parse_option("option name Skill Level type spin default 20 min 0 max 20").unwrap();
        assert_eq!(o.name, "Skill Level");
        assert_eq!((o.kind.as_str(), o.min, o.max), ("spin", Some(0), Some(20)));
        let o = parse_option("option name Debug Log File type string default ").unwrap();
        assert_eq!((o.name.as_str(), o.min), ("Debug Log File", None));
        assert!(parse_option("option junk").is_none());
    }

    #[test]
    fn strength_is_clamped_and_mapped() {
        let i = info(STOCKFISH);
        let s = |strength| OpponentSettings {
            strength,
            ..OpponentSettings::default()
        };
        let (o, label) = setup(&s(Strength::Elo(1000)), &i);
        assert!(o.contains(&("UCI_Elo".into(), "1350".into())), "{o:?}");
        assert!(o.contains(&("UCI_LimitStrength".into(), "true".into())));
        assert_eq!(label.as_deref(), Some("Elo 1350"));
        let (o, label) = setup(&s(Strength::Level(1)), &i);
        assert!(o.contains(&("Skill Level".into(), "0".into())), "{o:?}");
        assert_eq!(label.as_deref(), Some("level 1"));
        let (o, _) = setup(&s(Strength::Level(20)), &i);
        assert!(o.contains(&("Skill Level".into(), "20".into())), "{o:?}");
        let (o, label) = setup(&s(Strength::Full), &i);
        assert_eq!(label, None);
        assert!(
            o.iter().all(|(n, _)| n == "Threads" || n == "Hash"),
            "{o:?}"
        );
        // Without Skill Level, a level is played as an Elo of the engine's range.
        let i = info(&STOCKFISH[3..]);
        let (o, label) = setup(&s(Strength::Level(20)), &i);
        assert!(o.contains(&("UCI_Elo".into(), "2850".into())), "{o:?}");
        assert_eq!(label.as_deref(), Some("Elo 2850"));
    }

    #[test]
    fn scores_and_commands() {
        assert_eq!(
            parse_score("info depth 10 seldepth 12 multipv 1 score cp -35 nodes 1000 pv e2e4"),
            Some(Score::Cp(-35))
        );
        assert_eq!(
            parse_score("info depth 5 score mate 3 pv a1a8"),
            Some(Score::Mate(3))
        );
        assert_eq!(parse_score("info string NNUE evaluation"), None);
        let s = Search {
            id: 1,
            fen: None,
            moves: vec!["e2e4".into(), "e7e5".into()],
            go: Go::Clocks {
                wtime: 60_000,
                btime: 59_000,
                winc: 2000,
                binc: 2000,
                movestogo: None,
                budget: 6000,
            },
        };
        assert_eq!(s.position(), "position startpos moves e2e4 e7e5");
        assert_eq!(
            s.go.command(),
            "go wtime 60000 btime 59000 winc 2000 binc 2000"
        );
        assert_eq!(s.go.limit(), Duration::from_millis(6000));
        assert_eq!(
            Go::MoveTime(1000).limit(),
            Duration::from_millis(1000) + GRACE
        );
    }
}
