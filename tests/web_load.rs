//! The web view under many viewers (issue 17): the daemon (in this process, its loop as `run`
//! runs it) plays a game on the simulated board at people's tempo with the web view on, once
//! with no viewer and once with 1,000 (half of them on the event stream, half polling
//! `/api/state` and `/game.pgn` over kept-alive connections), all on loopback.
//!
//! What must hold is asserted: every viewer is served (no refusal, every event stream gets every
//! move, every poll a 200 with a state that parses), and the game is recorded completely. What
//! is measured is printed, not asserted (machines are noisy): the announcement path's delay,
//! from the instant a move's completing reading is due from the board (the simulated driver
//! sends it then) to the move reaching the caller's output (speech, the events printed: the
//! last output of the daemon's list, after the web view), p50/p99/max of both runs and the p99
//! that the viewers add. `make bench-web` plays a longer game.
//!
//! Settings by environment: `WEB_LOAD_GAME` (a PGN file; default: a game of 10 plies),
//! `WEB_LOAD_VIEWERS` (default 1000), `WEB_LOAD_POLL_MS` (a poller's pause between its rounds of
//! two requests; default 250).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chessboardd::daemon::{self, Source};
use chessboardd::engine::{EventKind, Settings};
use chessboardd::sim;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// When the game's first reading comes: time for the viewers to connect.
const LEAD_MS: u64 = 6_000;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Raises this process's limit of open files to what the system allows (the daemon's web view
/// does it too; the viewers here need as many again).
fn more_files() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: the struct is ours.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

/// One game played by the daemon.
struct Played {
    /// The moves recorded, in SAN.
    sans: Vec<String>,
    /// Each move's delay from its completing reading to the caller, in ms, at least (counted
    /// from the instant the run's fastest touch or move showed its reading was due).
    delays: Vec<f64>,
    /// The same, at most (counted from an instant before the daemon's clock started).
    delays_over: Vec<f64>,
    /// When the first move reached the caller.
    first_move: Option<Instant>,
    /// The game's moves as the PGN has them, and as the daemon recorded them, equal.
    recorded_completely: bool,
}

/// What the viewers saw.
#[derive(Default)]
struct Seen {
    /// Each event stream's moves (SAN), and how often it was told to resync.
    streams: Vec<(Vec<String>, usize)>,
    /// Polls answered 200 with a state (or PGN) that parses.
    polls_ok: usize,
    /// Polls that were not: (what, why).
    polls_bad: Vec<String>,
    /// Viewers refused or cut off: (what, why).
    refused: Vec<String>,
    /// When the last viewer was connected.
    all_connected: Option<Instant>,
    /// How long the viewers polled.
    polled_for: Duration,
}

/// Plays `pgn` at people's tempo with the web view on `port`, while `viewers` (if any) watch.
fn play(pgn: &PathBuf, port: u16, viewers: Option<(usize, u64)>) -> (Played, Option<Seen>) {
    let text = std::fs::read_to_string(pgn).unwrap();
    let game = chessboardd::pgn::parse(&text).unwrap().remove(0);
    let plies = game.moves.len();
    let inputs = sim::game_inputs(
        &game.start,
        &game.moves,
        &sim::people(0, 300, sim::Faults::NONE),
        LEAD_MS,
    );
    let over = Arc::new(AtomicBool::new(false));
    // The viewers come once the daemon has started its clock (its first event), so that they
    // do not slow the start that the delays are measured from.
    let started = Arc::new(AtomicBool::new(false));
    // The daemon stops when the game is over and every viewer has finished watching (or,
    // should something hang, a minute after the game's inputs).
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let mut done_tx = Some(done_tx);
    let last_input = inputs.last().map_or(0, |(t, _)| *t);
    let watching = viewers.map(|(n, poll_ms)| {
        let (over, started) = (over.clone(), started.clone());
        let done = done_tx.take();
        std::thread::spawn(move || {
            while !started.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let seen = watch(port, n, poll_ms, plies, over);
            if let Some(d) = done {
                let _ = d.send(());
            }
            seen
        })
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut sans = Vec::new();
    let mut delays = Vec::new();
    let mut first_move = None;
    let mut fastest = Duration::MAX;
    // The daemon's clock starts within `run`, a little after this: the delays are measured
    // from here, so they are over, never under, the true ones (by the same start-up in both
    // runs: the viewers come after it).
    let began = Instant::now();
    let engine = rt.block_on(daemon::run(
        Settings::default(),
        Source::Simulated(inputs, Box::new(game.start.clone())),
        daemon::RunOptions {
            speed: 1.0,
            web: Some(format!("127.0.0.1:{port}")),
            ..Default::default()
        },
        |e| {
            started.store(true, Ordering::SeqCst);
            let now = Instant::now();
            let since = |t| now.saturating_duration_since(began + Duration::from_millis(t));
            // A touch, as a move, is dated by the reading that made it.
            if let EventKind::Touched { .. } = &e.kind {
                fastest = fastest.min(since(e.t));
            }
            if let EventKind::Move { san, .. } = &e.kind {
                fastest = fastest.min(since(e.t));
                delays.push(since(e.t));
                first_move.get_or_insert(now);
                sans.push(san.clone());
                if sans.len() == plies {
                    over.store(true, Ordering::SeqCst);
                    // Alone: nobody else to wait for.
                    if let Some(d) = done_tx.take() {
                        let _ = d.send(());
                    }
                }
            }
        },
        async move {
            let hung = Duration::from_millis(last_input + 60_000);
            let _ = tokio::time::timeout(hung, done_rx).await;
        },
    ));
    // However the game went, the viewers stop.
    over.store(true, Ordering::SeqCst);
    let recorded: Vec<_> = engine.game().plies.iter().map(|p| p.m).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let played = Played {
        sans,
        // From the run's fastest touch or move: under the true delays by that one's.
        delays: delays
            .iter()
            .map(|d| ms(d.saturating_sub(fastest)))
            .collect(),
        // From the instant before the daemon started: over the true delays by its start-up.
        delays_over: delays.into_iter().map(ms).collect(),
        first_move,
        recorded_completely: recorded == game.moves,
    };
    (played, watching.map(|w| w.join().unwrap()))
}

/// Opens `n` viewers on `port` (half event streams, half pollers) and keeps them until the game
/// is over.
fn watch(port: u16, n: usize, poll_ms: u64, plies: usize, over: Arc<AtomicBool>) -> Seen {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        // The daemon starts its web view.
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(t.elapsed() < Duration::from_secs(10), "no web view");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let seen = Arc::new(Mutex::new(Seen::default()));
        let connected = Arc::new(AtomicUsize::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        let polling = Instant::now();
        for i in 0..n {
            let (seen, over, connected) = (seen.clone(), over.clone(), connected.clone());
            if i % 2 == 0 {
                tasks.spawn(stream(port, plies, seen, over, connected));
            } else {
                tasks.spawn(poll(port, poll_ms, seen, over, connected));
            }
            // Not all in one burst: 100 at a time.
            if i % 100 == 99 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        while connected.load(Ordering::SeqCst) < n && polling.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if connected.load(Ordering::SeqCst) == n {
            seen.lock().unwrap().all_connected = Some(Instant::now());
        }
        while tasks.join_next().await.is_some() {}
        let mut seen = std::mem::take(&mut *seen.lock().unwrap());
        seen.polled_for = polling.elapsed();
        seen
    })
}

/// The head of an HTTP response: its status and `Content-Length`.
async fn read_head(r: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Option<usize>)> {
    let mut line = String::new();
    if r.read_line(&mut line).await? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut length = None;
    loop {
        line.clear();
        r.read_line(&mut line).await?;
        let l = line.trim_end();
        if l.is_empty() {
            return Ok((status, length));
        }
        if let Some((name, value)) = l.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
}

/// A viewer on the event stream: collects the moves until it has them all (or the game has been
/// over for 5 s).
async fn stream(
    port: u16,
    plies: usize,
    seen: Arc<Mutex<Seen>>,
    over: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
) {
    let fail = |why: String| seen.lock().unwrap().refused.push(format!("stream: {why}"));
    let mut s = match TcpStream::connect(("127.0.0.1", port)).await {
        Ok(s) => s,
        Err(e) => return fail(format!("connect: {e}")),
    };
    if let Err(e) = s
        .write_all(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
    {
        return fail(format!("write: {e}"));
    }
    let mut r = BufReader::new(s);
    match read_head(&mut r).await {
        Ok((200, _)) => {}
        Ok((status, _)) => return fail(format!("status {status}")),
        Err(e) => return fail(format!("head: {e}")),
    }
    connected.fetch_add(1, Ordering::SeqCst);
    let (mut moves, mut resyncs) = (Vec::new(), 0);
    let mut over_since = None;
    let mut line = String::new();
    while moves.len() < plies {
        if over.load(Ordering::SeqCst) {
            let since = *over_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_secs(5) {
                break;
            }
        }
        line.clear();
        // The body is chunked: an event's lines are within one chunk, between size lines.
        match tokio::time::timeout(Duration::from_millis(500), r.read_line(&mut line)).await {
            Err(_) => continue,
            Ok(Ok(0)) => break,
            Ok(Err(e)) => return fail(format!("read: {e}")),
            Ok(Ok(_)) => {}
        }
        if let Some(json) = line.trim_end().strip_prefix("data: ") {
            let v: serde_json::Value = match serde_json::from_str(json) {
                Ok(v) => v,
                Err(e) => return fail(format!("event {json}: {e}")),
            };
            if v["type"] == "move" {
                moves.push(v["san"].as_str().unwrap_or("?").to_string());
            }
        } else if line.starts_with("event: resync") {
            resyncs += 1;
        }
    }
    seen.lock().unwrap().streams.push((moves, resyncs));
}

/// A viewer that polls the state and the PGN over one kept-alive connection (a new one when
/// the server ends it) until the game is over.
async fn poll(
    port: u16,
    poll_ms: u64,
    seen: Arc<Mutex<Seen>>,
    over: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
) {
    let mut conn: Option<BufReader<TcpStream>> = None;
    let mut first = true;
    while !over.load(Ordering::SeqCst) {
        for path in ["/api/state", "/game.pgn"] {
            let r = match conn.as_mut() {
                Some(r) => r,
                None => match TcpStream::connect(("127.0.0.1", port)).await {
                    Ok(s) => conn.insert(BufReader::new(s)),
                    Err(e) => {
                        seen.lock().unwrap().refused.push(format!("poll: {e}"));
                        return;
                    }
                },
            };
            match get(r, path).await {
                Ok((200, body)) => {
                    let good = match path {
                        "/api/state" => serde_json::from_slice::<serde_json::Value>(&body)
                            .is_ok_and(|v| v["moves"].is_array() && v["fen"].is_string()),
                        _ => std::str::from_utf8(&body).is_ok(),
                    };
                    let mut s = seen.lock().unwrap();
                    if good {
                        s.polls_ok += 1;
                    } else {
                        s.polls_bad.push(format!("{path}: does not parse"));
                    }
                    if first {
                        first = false;
                        connected.fetch_add(1, Ordering::SeqCst);
                    }
                }
                Ok((status, body)) => {
                    let why = format!(
                        "{} (game over: {})",
                        String::from_utf8_lossy(&body).trim_end(),
                        over.load(Ordering::SeqCst)
                    );
                    let mut s = seen.lock().unwrap();
                    s.polls_bad.push(format!("{path}: status {status}: {why}"));
                    if status == 503 {
                        s.refused.push(format!("poll {path}: 503: {why}"));
                    }
                    conn = None;
                }
                // The server closed a kept-alive connection (it may): a new one.
                Err(_) => conn = None,
            }
        }
        tokio::time::sleep(Duration::from_millis(poll_ms)).await;
    }
}

/// One GET on a kept-alive connection: the status and the body.
async fn get(r: &mut BufReader<TcpStream>, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r.get_mut().write_all(request.as_bytes()).await?;
    let (status, length) = read_head(r).await?;
    let mut body = vec![0; length.unwrap_or(0)];
    r.read_exact(&mut body).await?;
    Ok((status, body))
}

/// p50, p99 and the maximum (nearest rank).
fn percentiles(v: &[f64]) -> (f64, f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.50), rank(0.99), v[v.len() - 1])
}

#[test]
fn a_thousand_viewers_are_served_and_the_game_is_announced() {
    more_files();
    let pgn: PathBuf = std::env::var_os("WEB_LOAD_GAME").map_or_else(
        || {
            [
                env!("CARGO_MANIFEST_DIR"),
                "tests/data/games/molinari-bordais-1979.pgn",
            ]
            .iter()
            .collect()
        },
        PathBuf::from,
    );
    let n = env_or("WEB_LOAD_VIEWERS", 1000usize);
    let poll_ms = env_or("WEB_LOAD_POLL_MS", 250u64);

    let (alone, _) = play(&pgn, free_port(), None);
    assert!(alone.recorded_completely, "alone: {:?}", alone.sans);
    let (watched, seen) = play(&pgn, free_port(), Some((n, poll_ms)));
    let seen = seen.unwrap();
    let plies = watched.sans.len();
    assert!(watched.recorded_completely, "watched: {:?}", watched.sans);

    let (a50, a99, amax) = percentiles(&alone.delays);
    let (w50, w99, wmax) = percentiles(&watched.delays);
    let added: Vec<f64> = watched
        .delays
        .iter()
        .zip(&alone.delays)
        .map(|(w, a)| w - a)
        .collect();
    let (_, d99, dmax) = percentiles(&added);
    let over_10 = added.iter().filter(|d| **d > 10.0).count();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "web view load (this machine's load average now: {}): {} ({plies} plies at people's tempo), {n} viewers ({} event streams, \
         {} polling every {poll_ms} ms: {} polls in {:.1} s, {:.0}/s)",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        pgn.file_name().unwrap().to_string_lossy(),
        seen.streams.len(),
        n / 2,
        seen.polls_ok,
        seen.polled_for.as_secs_f64(),
        seen.polls_ok as f64 / seen.polled_for.as_secs_f64(),
    );
    println!(
        "announcement delay, from a move's completing reading to the caller (ms), p50 / p99 / max"
    );
    println!("  0 viewers:     {a50:7.3} / {a99:7.3} / {amax:7.3}");
    println!("  {n} viewers: {w50:7.3} / {w99:7.3} / {wmax:7.3}");
    println!(
        "  added by the viewers: p99 {:+.3} ms (move by move: p99 {d99:+.3}, max {dmax:+.3}; \
         more than 10 ms: {over_10} of {plies})",
        w99 - a99
    );
    let (_, ao99, aomax) = percentiles(&alone.delays_over);
    let (_, wo99, womax) = percentiles(&watched.delays_over);
    println!(
        "  (counted from the run's fastest touch or move, so at least these; counted from \
         before the daemon's start, at most: p99 / max {ao99:.3} / {aomax:.3} alone, \
         {wo99:.3} / {womax:.3} watched)"
    );

    // Every viewer was there before the first move, and served.
    let connected = seen
        .all_connected
        .expect("not every viewer was connected in 5 s");
    assert!(
        watched.first_move.is_some_and(|m| connected < m),
        "the viewers connected after the game began"
    );
    assert!(seen.refused.is_empty(), "refused: {:?}", &seen.refused);
    assert_eq!(seen.streams.len(), n.div_ceil(2));
    for (moves, resyncs) in &seen.streams {
        assert_eq!(moves, &watched.sans, "an event stream (resyncs: {resyncs})");
    }
    assert!(seen.polls_bad.is_empty(), "{:?}", &seen.polls_bad);
    assert!(seen.polls_ok >= n / 2, "{} polls", seen.polls_ok);
}
