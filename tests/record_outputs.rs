//! Every PGN the real daemon writes, read back end to end: the web view's `/game.pgn`, the MQTT
//! `pgn` topic (retained, on a Mosquitto started here), `broadcast`'s files, the finished game
//! (`games --pgn N`), the game in the journal and the record printed at SIGTERM. Each must carry
//! the clock times the daemon reported in its events as `[%clk]` after every move, and one and
//! the same set of tags. A SIGHUP with new `[game]` tags mid-game reaches the live PGN at once
//! and the game's record with it, and loses nothing.

#[path = "support/clk.rs"]
#[allow(dead_code)]
mod clk;
use clk::clk_seconds;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chessboardd::pgn;

const BIN: &str = env!("CARGO_BIN_EXE_chessboardd");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-out-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process, stopped with SIGTERM when dropped.
struct Proc(Child);

impl Proc {
    fn signal(&self, sig: i32) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.0.id() as i32, sig) };
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.signal(libc::SIGTERM);
        let _ = self.0.wait();
    }
}

/// Mosquitto on a loopback port, without persistence.
fn broker(dir: &Path) -> (Proc, u16) {
    let port = free_port();
    let conf = dir.join("mosquitto.conf");
    std::fs::write(
        &conf,
        format!("listener {port} 127.0.0.1\npersistence false\nallow_anonymous true\n"),
    )
    .unwrap();
    let exe = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("mosquitto is not installed: `make test` installs it (package mosquitto)");
    let log = std::fs::File::create(dir.join("mosquitto.log")).unwrap();
    let p = Proc(
        Command::new(exe)
            .arg("-c")
            .arg(&conf)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    wait_for("mosquitto", 10, || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    (p, port)
}

/// What arrives on `filter`, as (topic, payload), collected by a thread from the moment the
/// subscription is acknowledged.
#[derive(Clone)]
struct Messages(Arc<Mutex<Vec<(String, String)>>>);

impl Messages {
    fn subscribe(port: u16, filter: &str) -> Messages {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut o =
            rumqttc::MqttOptions::new(format!("rec-{}-{n}", std::process::id()), "127.0.0.1", port);
        o.set_max_packet_size(1 << 20, 1 << 20);
        let (client, mut connection) = rumqttc::Client::new(o, 100);
        client.subscribe(filter, rumqttc::QoS::AtLeastOnce).unwrap();
        let got = Messages(Arc::new(Mutex::new(Vec::new())));
        let to = got.0.clone();
        let (ack_tx, ack_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _client = client;
            for n in connection.iter() {
                match n {
                    Ok(rumqttc::Event::Incoming(rumqttc::Packet::SubAck(_))) => {
                        let _ = ack_tx.send(());
                    }
                    Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                        let text = String::from_utf8_lossy(&p.payload).into_owned();
                        to.lock().unwrap().push((p.topic.clone(), text));
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        });
        ack_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("no subscription");
        got
    }

    fn on(&self, topic: &str) -> Vec<String> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|(t, _)| t == topic)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The events (JSON) of `board`.
    fn events(&self, board: &str) -> Vec<serde_json::Value> {
        self.on(&format!("chessboardd/{board}/events"))
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect()
    }
}

/// The retained PGN of `board`, as a newcomer gets it.
fn retained_pgn(port: u16, board: &str) -> String {
    let topic = format!("chessboardd/{board}/pgn");
    let m = Messages::subscribe(port, &topic);
    wait_for("the retained pgn", 10, || !m.on(&topic).is_empty());
    m.on(&topic).remove(0)
}

/// One GET from the web view: the body of a 200 answer.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// The daemon's standard output, line by line, collected by a thread.
struct Output(Arc<Mutex<Vec<String>>>);

impl Output {
    fn follow(from: impl Read + Send + 'static) -> Output {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let to = lines.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(from).lines().map_while(Result::ok) {
                to.lock().unwrap().push(l);
            }
        });
        Output(lines)
    }

    /// The record printed at the end: from its first tag on.
    fn record(&self) -> String {
        let lines = self.0.lock().unwrap();
        let start = lines
            .iter()
            .position(|l| l.starts_with("[Event "))
            .expect("no record printed");
        lines[start..].join("\n") + "\n"
    }
}

/// A daemon on the simulated board playing `game`, publishing as board `b1`, with its web
/// view on `web`, recording in `state`; its log goes to `log`.
fn daemon(game: &Path, dir: &Path, mqtt: u16, web: u16, speed: &str) -> (Proc, Output) {
    let mut child = Command::new(BIN)
        .args(["run", "--board", &format!("sim:{}", game.display())])
        .args(["--speech", "text", "--speed", speed, "--config"])
        .arg(dir.join("c.toml"))
        .args([
            "--mqtt",
            &format!("mqtt://127.0.0.1:{mqtt}"),
            "--board-id",
            "b1",
        ])
        .args(["--web", &format!("127.0.0.1:{web}"), "--state-dir"])
        .arg(dir.join("state"))
        .arg("--socket")
        .arg(dir.join("ctl.sock"))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("daemon.log")).unwrap())
        .spawn()
        .unwrap();
    let out = Output::follow(child.stdout.take().unwrap());
    (Proc(child), out)
}

/// SIGTERM, and the record the daemon printed.
fn stop(mut d: Proc, out: &Output) -> String {
    d.signal(libc::SIGTERM);
    let status = d.0.wait().unwrap();
    assert!(status.success(), "{status}");
    // The reading thread has the last lines once the pipe is closed.
    std::thread::sleep(Duration::from_millis(200));
    out.record()
}

/// `chessboardd games` with `args` on the state directory.
fn games(dir: &Path, args: &[&str]) -> String {
    let o = Command::new(BIN)
        .args(["games", "--state-dir"])
        .arg(dir.join("state"))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A PGN file of `plies` plies of a game of tests/data/games, left unfinished.
fn first_plies(dir: &Path, game: &str, plies: usize) -> PathBuf {
    let text = std::fs::read_to_string(data(game)).unwrap();
    let g = pgn::parse(&text).unwrap().remove(0);
    let mut pos = g.start.clone();
    let mut out = String::from("[Event \"t\"]\n\n");
    for (i, m) in g.moves.iter().take(plies).enumerate() {
        if i % 2 == 0 {
            out.push_str(&format!("{}. ", i / 2 + 1));
        }
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m);
        out.push_str(&format!("{san} "));
    }
    out.push_str("*\n");
    let path = dir.join(format!("{game}-{plies}.pgn"));
    std::fs::write(&path, out).unwrap();
    path
}

fn data(game: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(format!("{game}.pgn"))
}

/// The tag lines of a PGN.
fn tag_lines(pgn: &str) -> Vec<&str> {
    pgn.lines().take_while(|l| l.starts_with('[')).collect()
}

fn plies(pgn_text: &str) -> usize {
    pgn::parse(pgn_text)
        .ok()
        .and_then(|g| g.into_iter().next())
        .map_or(0, |g| g.moves.len())
}

/// The mover's time left after each move, in whole seconds, from the daemon's `move` events;
/// each agrees with the `clock` event that follows it.
fn clocks_reported(events: &[serde_json::Value]) -> Vec<i64> {
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if e["type"] != "move" {
            continue;
        }
        let key = format!("{}_ms", e["color"].as_str().unwrap());
        let ms = e[&key].as_i64().expect("a move with its clocks");
        let clock = events[i..]
            .iter()
            .find(|c| c["type"] == "clock")
            .expect("a clock event after the move");
        assert_eq!(clock["white_ms"], e["white_ms"], "{e} {clock}");
        assert_eq!(clock["black_ms"], e["black_ms"], "{e} {clock}");
        out.push(ms.max(0) / 1000);
    }
    out
}

/// Each PGN (named) carries `clocks` as its `[%clk]` comments and the tags of the first.
fn check_all(what: &str, clocks: &[i64], pgns: &[(&str, &str)]) {
    let reference = tag_lines(pgns[0].1);
    assert!(
        reference.iter().any(|l| l.starts_with("[Date \"2")),
        "{what}: no date:\n{}",
        pgns[0].1
    );
    assert!(!pgns.iter().any(|(_, p)| p.contains("????")), "{pgns:#?}");
    for (name, text) in pgns {
        assert_eq!(
            clk_seconds(text),
            clocks,
            "{what}, {name}: [%clk] against the clock events:\n{text}"
        );
        assert_eq!(
            tag_lines(text),
            reference,
            "{what}, {name} against {}:\n{text}",
            pgns[0].0
        );
    }
}

#[test]
fn every_pgn_the_daemon_writes_carries_the_clock_events_and_one_tag_set() {
    let dir = scratch("all");
    std::fs::write(
        dir.join("c.toml"),
        "[game]\nevent = \"Club night\"\nsite = \"Vienna\"\nround = \"2\"\nboard = \"1\"\n\
         white = \"Anna Berg\"\nblack = \"Carl Dahl\"\n[clock]\ntime_control = \"300\"\n\
         [speech]\nlang = \"en\"\n",
    )
    .unwrap();
    let (_broker, mqtt) = broker(&dir);
    let live = Messages::subscribe(mqtt, "chessboardd/b1/#");
    let out = dir.join("round");
    let _broadcast = Proc(
        Command::new(BIN)
            .args(["broadcast", "--mqtt", &format!("mqtt://127.0.0.1:{mqtt}")])
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("broadcast.log")).unwrap())
            .spawn()
            .unwrap(),
    );
    let web = free_port();

    // A game played to its mate.
    let (d, printed) = daemon(&data("molinari-bordais-1979"), &dir, mqtt, web, "10");
    wait_for("the mate", 60, || {
        live.events("b1").iter().any(|e| e["type"] == "game_over")
    });
    let clocks = clocks_reported(&live.events("b1"));
    assert_eq!(clocks.len(), 10);
    // The players thought for different times: the comparisons below could fail.
    assert!(clocks.windows(2).any(|w| w[0] != w[1]), "{clocks:?}");
    assert!(clocks.iter().all(|&c| c < 300), "{clocks:?}");
    let board_file = out.join("b1.pgn");
    wait_for("the broadcast's game", 30, || {
        std::fs::read_to_string(&board_file).is_ok_and(|t| plies(&t) == 10 && t.contains("0-1"))
            && std::fs::read_to_string(out.join("round.pgn")).is_ok_and(|t| plies(&t) == 10)
    });
    let web_pgn = get(web, "/game.pgn").unwrap();
    let topic = retained_pgn(mqtt, "b1");
    let broadcast = std::fs::read_to_string(&board_file).unwrap();
    let round = std::fs::read_to_string(out.join("round.pgn")).unwrap();
    let kept = games(&dir, &["--pgn", "1"]);
    let record = stop(d, &printed);
    check_all(
        "a finished game",
        &clocks,
        &[
            ("games --pgn 1", &kept),
            ("/game.pgn", &web_pgn),
            ("the pgn topic", &topic),
            ("broadcast's board file", &broadcast),
            ("broadcast's round file", &round),
            ("the record at SIGTERM", &record),
        ],
    );
    for tag in [
        "[Event \"Club night\"]",
        "[White \"Anna Berg\"]",
        "[Result \"0-1\"]",
        "[TimeControl \"300\"]",
        "[Termination \"normal\"]",
    ] {
        assert!(kept.contains(tag), "{tag}:\n{kept}");
    }

    // A second game, left unfinished at SIGTERM: what is in the journal.
    let live = Messages::subscribe(mqtt, "chessboardd/b1/events");
    let game = first_plies(&dir, "kasparov-deep-blue-1997", 7);
    let (d, printed) = daemon(&game, &dir, mqtt, web, "10");
    wait_for("the second game's moves", 60, || {
        live.events("b1")
            .iter()
            .filter(|e| e["type"] == "move")
            .count()
            == 7
    });
    let clocks = clocks_reported(&live.events("b1"));
    assert!(clocks.windows(2).any(|w| w[0] != w[1]), "{clocks:?}");
    wait_for("the broadcast's second game", 30, || {
        std::fs::read_to_string(&board_file).is_ok_and(|t| plies(&t) == 7)
            && out.join("earlier/b1-1.pgn").exists()
    });
    let web_pgn = get(web, "/game.pgn").unwrap();
    let topic = retained_pgn(mqtt, "b1");
    let broadcast = std::fs::read_to_string(&board_file).unwrap();
    let journal = games(&dir, &["--pgn", "1"]);
    let record = stop(d, &printed);
    check_all(
        "an unfinished game",
        &clocks,
        &[
            ("games --pgn 1", &journal),
            ("/game.pgn", &web_pgn),
            ("the pgn topic", &topic),
            ("broadcast's board file", &broadcast),
            ("the record at SIGTERM", &record),
        ],
    );
    assert!(journal.contains("[Result \"*\"]"), "{journal}");
    // The first game's date and time are not the second's.
    assert_ne!(tag_lines(&journal), tag_lines(&kept));

    // The list names the players of each game; the games know their language.
    let list = games(&dir, &[]);
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 2, "{list}");
    for row in &rows {
        assert!(row.contains("Anna Berg - Carl Dahl"), "{list}");
    }
    assert!(rows[0].contains("unfinished") && rows[1].contains("0-1 normal"));
    let kept = chessboardd::record::games(&dir.join("state")).unwrap();
    assert!(
        kept.iter()
            .all(|k| k.lang == Some(chessboardd::words::Lang::En)),
        "{kept:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_tags_by_sighup_reach_the_live_pgn_and_the_record_and_lose_nothing() {
    let dir = scratch("hup");
    let config = |white: &str, tc: &str| {
        std::fs::write(
            dir.join("c.toml"),
            format!(
                "[game]\nevent = \"Club night\"\nwhite = \"{white}\"\nblack = \"Carl Dahl\"\n\
                 [clock]\ntime_control = \"{tc}\"\n"
            ),
        )
        .unwrap();
    };
    config("Ann", "300");
    let (_broker, mqtt) = broker(&dir);
    let live = Messages::subscribe(mqtt, "chessboardd/b1/#");
    let web = free_port();
    // Kasparov - Deep Blue's first 16 plies at twice real time: about 12 s.
    let game = first_plies(&dir, "kasparov-deep-blue-1997", 16);
    let (d, printed) = daemon(&game, &dir, mqtt, web, "2");
    let moves = || {
        live.events("b1")
            .iter()
            .filter(|e| e["type"] == "move")
            .count()
    };
    wait_for("three moves", 30, || moves() >= 3);
    // White's name put right, and a time control for the next game.
    config("Anna Berg", "600+5");
    d.signal(libc::SIGHUP);
    wait_for("the new name in /game.pgn", 10, || {
        get(web, "/game.pgn").is_some_and(|p| p.contains("[White \"Anna Berg\"]"))
    });
    assert!(moves() < 16, "the SIGHUP came after the game");
    assert!(retained_pgn(mqtt, "b1").contains("[White \"Anna Berg\"]"));
    // The game's time control stays the one its clocks run by.
    let pgn = get(web, "/game.pgn").unwrap();
    assert!(pgn.contains("[TimeControl \"300\"]"), "{pgn}");
    wait_for("every move", 60, || moves() == 16);
    // Once the board is still (no event comes any more), another SIGHUP: the live PGN and the
    // record take the new tags at once all the same.
    std::thread::sleep(Duration::from_millis(500));
    let events = live.events("b1").len();
    std::fs::write(
        dir.join("c.toml"),
        "[game]\nevent = \"Club night\"\nwhite = \"Anna Berg\"\nblack = \"Carl Dahl-Ek\"\n\
         [clock]\ntime_control = \"600+5\"\n",
    )
    .unwrap();
    d.signal(libc::SIGHUP);
    wait_for("the second change in /game.pgn", 10, || {
        get(web, "/game.pgn").is_some_and(|p| p.contains("[Black \"Carl Dahl-Ek\"]"))
    });
    wait_for("the second change in the record", 10, || {
        games(&dir, &["--pgn", "1"]).contains("[Black \"Carl Dahl-Ek\"]")
    });
    assert_eq!(live.events("b1").len(), events, "no event came meanwhile");
    let clocks = clocks_reported(&live.events("b1"));
    let web_pgn = get(web, "/game.pgn").unwrap();
    let topic = retained_pgn(mqtt, "b1");
    let journal = games(&dir, &["--pgn", "1"]);
    let record = stop(d, &printed);
    check_all(
        "after SIGHUP",
        &clocks,
        &[
            ("games --pgn 1", &journal),
            ("/game.pgn", &web_pgn),
            ("the pgn topic", &topic),
            ("the record at SIGTERM", &record),
        ],
    );
    assert!(journal.contains("[White \"Anna Berg\"]"), "{journal}");
    assert_eq!(plies(&journal), 16);
    // The journal holds the new tags: the game taken up again by a daemon started later has
    // them, with every move.
    let read = chessboardd::record::parse(&std::fs::read(dir.join("state/journal.jsonl")).unwrap());
    assert!(read.damaged.is_empty() && !read.torn);
    let game = chessboardd::record::fold(&read).game.unwrap();
    assert_eq!(game.moves.len(), 16);
    assert!(
        game.tags
            .contains(&("White".to_string(), "Anna Berg".to_string())),
        "{:?}",
        game.tags
    );
    assert_eq!(game.time_control.as_deref(), Some("300"));
    let _ = std::fs::remove_dir_all(&dir);
}
