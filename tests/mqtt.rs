//! Publishing to a real MQTT broker (Debian's Mosquitto, started here on a loopback port) and
//! `chessboardd broadcast` gathering the games of a round from it: three simulated boards at
//! once, the broker restarted in the middle of the round, TLS with a password, what a
//! subscriber sees on each topic, and a game corrected (later readings showed other moves than
//! those announced) as the daemon publishes it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::pgn;

const BIN: &str = env!("CARGO_BIN_EXE_chessboardd");

fn data(name: &str) -> String {
    format!("{}/tests/data/games/{name}.pgn", env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-mqtt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A free port not handed out before in this process: a test that stops its broker and
/// starts it again on the same port must not find another test's broker there.
fn free_port() -> u16 {
    static TAKEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut taken = TAKEN.lock().unwrap();
        if !taken.contains(&port) {
            taken.push(port);
            return port;
        }
    }
}

/// A client id of its own for each test client.
fn client_id(what: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{what}-{}-{n}", std::process::id())
}

fn mosquitto() -> PathBuf {
    for p in ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"] {
        if Path::new(p).exists() {
            return p.into();
        }
    }
    panic!("mosquitto is not installed: `make test` installs it (Debian package mosquitto)");
}

/// A process stopped with SIGTERM when dropped.
struct Proc(Child);

impl Proc {
    fn stop(&mut self) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Mosquitto broker on a loopback port, with `extra` config lines.
struct Broker {
    port: u16,
    conf: PathBuf,
    proc: Option<Proc>,
}

impl Broker {
    fn new(dir: &Path, extra: &str) -> Broker {
        let port = free_port();
        let conf = dir.join("mosquitto.conf");
        // No persistence: a restarted broker has forgotten every retained message.
        std::fs::write(
            &conf,
            format!("listener {port} 127.0.0.1\npersistence false\n{extra}"),
        )
        .unwrap();
        let mut b = Broker {
            port,
            conf,
            proc: None,
        };
        b.start();
        b
    }

    fn start(&mut self) {
        let log = std::fs::File::create(self.conf.with_extension("log")).unwrap();
        let child = Command::new(mosquitto())
            .arg("-c")
            .arg(&self.conf)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut proc = Proc(child);
        let log = || std::fs::read_to_string(self.conf.with_extension("log")).unwrap_or_default();
        let t = Instant::now();
        loop {
            // Our broker, still running, is the one that answers.
            if let Some(status) = proc.0.try_wait().unwrap() {
                panic!("mosquitto ended ({status}): {}", log());
            }
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                std::thread::sleep(Duration::from_millis(50));
                if proc.0.try_wait().unwrap().is_none() {
                    break;
                }
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "mosquitto did not start: {}",
                log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.proc = Some(proc);
    }

    fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.stop();
        }
    }

    fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }
}

/// A daemon playing `game` on a simulated board, publishing as `id`; its events go to `err`
/// with `.events` for an extension, its log to `err`.
fn board(game: &str, id: &str, url: &str, config: &Path, speed: &str, err: &Path) -> Proc {
    let child = Command::new(BIN)
        .args(["run", "--board", &format!("sim:{}", data(game))])
        .args([
            "--speech",
            "text",
            "--speed",
            speed,
            "--events-json",
            "--config",
        ])
        .arg(config)
        .args(["--mqtt", url, "--board-id", id, "--socket"])
        .arg(err.with_extension("sock"))
        .stdout(std::fs::File::create(err.with_extension("events")).unwrap())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    Proc(child)
}

fn broadcast(url: &str, out: &Path, config: Option<&Path>, err: &Path) -> Proc {
    let mut c = Command::new(BIN);
    c.args(["broadcast", "--mqtt", url, "--out"]).arg(out);
    if let Some(cfg) = config {
        c.arg("--config").arg(cfg);
    }
    let child = c
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap())
        .spawn()
        .unwrap();
    Proc(child)
}

/// The moves (SAN) of the first game of a PGN text, and its result.
fn moves_of(text: &str) -> Option<(Vec<String>, String)> {
    let g = pgn::parse(text).ok()?.into_iter().next()?;
    let mut pos = g.start.clone();
    let mut sans = Vec::new();
    for m in &g.moves {
        sans.push(shakmaty::san::San::from_move(&pos, *m).to_string());
        shakmaty::Position::play_unchecked(&mut pos, *m);
    }
    Some((sans, g.result))
}

fn plies_in(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| moves_of(&t))
        .map_or(0, |(m, _)| m.len())
}

fn wait_for(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < within, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

const GAMES: [(&str, &str, &str); 3] = [
    ("b1", "seed-example", "Anna"),
    ("b2", "anastasian-lewis", "Bert"),
    ("b10", "nepomniachtchi-liren-game1", "Carla"),
];

#[test]
fn three_boards_through_a_broker_restarted_mid_round() {
    let dir = temp_dir("round");
    let expected: Vec<(Vec<String>, String)> = GAMES
        .iter()
        .map(|(_, game, _)| moves_of(&std::fs::read_to_string(data(game)).unwrap()).unwrap())
        .collect();
    let mut broker = Broker::new(&dir, "allow_anonymous true\n");
    let out = dir.join("out");
    let _bc = broadcast(&broker.url(), &out, None, &dir.join("broadcast.err"));
    let mut boards = Vec::new();
    for (id, game, white) in GAMES {
        let cfg = dir.join(format!("{id}.toml"));
        std::fs::write(
            &cfg,
            format!(
                "[game]\nevent = \"Club championship\"\nround = \"3\"\nboard = \"{}\"\n\
                 white = \"{white}\"\nblack = \"Opponent of {white}\"\n",
                id.trim_start_matches('b')
            ),
        )
        .unwrap();
        boards.push(board(
            game,
            id,
            &broker.url(),
            &cfg,
            "8",
            &dir.join(format!("{id}.err")),
        ));
    }
    // Every board has begun its game.
    wait_for("each board's first moves", Duration::from_secs(60), || {
        GAMES
            .iter()
            .all(|(id, ..)| plies_in(&out.join(format!("{id}.pgn"))) >= 2)
    });
    let before: Vec<usize> = GAMES
        .iter()
        .map(|(id, ..)| plies_in(&out.join(format!("{id}.pgn"))))
        .collect();
    // The broker goes away (forgetting every retained message) while the games go on, and
    // stays away until the shortest game has ended: its last moves reach the round only if
    // the board sends its game again when the broker is back.
    broker.stop();
    wait_for("the end of b1's game", Duration::from_secs(60), || {
        std::fs::read_to_string(dir.join("b1.events"))
            .is_ok_and(|e| e.matches("\"type\":\"move\"").count() == expected[0].0.len())
    });
    broker.start();
    for (i, (id, _, _)) in GAMES.iter().enumerate() {
        assert!(
            before[i] < expected[i].0.len(),
            "board {id} had finished before the broker went away: not mid-round"
        );
    }
    // Every move of every board arrives, the ones made while the broker was away included, in
    // each board's file and then in the round's (written after the board's).
    let complete = |round: &str| {
        pgn::parse(round).is_ok_and(|games| {
            games.len() == GAMES.len()
                && games
                    .iter()
                    .zip(&expected)
                    .all(|(g, e)| g.moves.len() == e.0.len())
        })
    };
    wait_for("every game to its end", Duration::from_secs(120), || {
        GAMES
            .iter()
            .enumerate()
            .all(|(i, (id, ..))| plies_in(&out.join(format!("{id}.pgn"))) == expected[i].0.len())
            && std::fs::read_to_string(out.join("round.pgn")).is_ok_and(|r| complete(&r))
    });
    let round = std::fs::read_to_string(out.join("round.pgn")).unwrap();
    let games = pgn::parse(&round).unwrap();
    assert_eq!(games.len(), 3, "{round}");
    // In the order of the boards (b10 after b2), each with its names and every move.
    for (g, (i, (_, _, white))) in games.iter().zip(GAMES.iter().enumerate()) {
        assert_eq!(g.tag("White"), Some(*white));
        assert_eq!(g.tag("Round"), Some("3"));
        assert_eq!(g.tag("Event"), Some("Club championship"));
        assert_eq!(g.moves.len(), expected[i].0.len());
    }
    let chunks: Vec<&str> = round.split("[Event ").skip(1).collect();
    for (chunk, exp) in chunks.iter().zip(&expected) {
        let (moves, _) = moves_of(&format!("[Event {chunk}")).unwrap();
        assert_eq!(&moves, &exp.0);
    }
    // The broker restarted once more, after every game has ended: the boards give it their
    // games again, and a broadcast started now has the whole round.
    broker.stop();
    broker.start();
    let late = dir.join("late");
    let _late = broadcast(&broker.url(), &late, None, &dir.join("late.err"));
    wait_for(
        "the round, kept by the boards",
        Duration::from_secs(60),
        || std::fs::read_to_string(late.join("round.pgn")).is_ok_and(|r| r == round),
    );
    // Board 1 begins a new game (the arbiter's new-game, twice to confirm): its finished
    // game is kept, and the round does not change until the new game's first move.
    for _ in 0..2 {
        let ctl = Command::new(BIN)
            .args(["ctl", "--socket"])
            .arg(dir.join("b1.sock"))
            .arg("new-game")
            .output()
            .unwrap();
        assert!(ctl.status.success(), "{ctl:?}");
    }
    wait_for("b1's new game", Duration::from_secs(30), || {
        out.join("earlier/b1-1.pgn").exists() && plies_in(&out.join("b1.pgn")) == 0
    });
    assert_eq!(
        moves_of(&std::fs::read_to_string(out.join("earlier/b1-1.pgn")).unwrap()).unwrap(),
        expected[0]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("round.pgn")).unwrap(),
        round
    );
    // The daemons noticed the broker leave and come back, twice.
    for (id, ..) in GAMES {
        let err = std::fs::read_to_string(dir.join(format!("{id}.err"))).unwrap();
        assert!(err.contains("connecting again"), "{id}: {err}");
        assert_eq!(err.matches("mqtt: connected to").count(), 3, "{id}: {err}");
    }
    drop(boards);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Collects what arrives on `filter` (retained messages first), as (topic, payload, retained).
fn subscribe(url_port: u16, filter: &str) -> std::sync::mpsc::Receiver<(String, String, bool)> {
    let mut o = rumqttc::MqttOptions::new(client_id("sub"), "127.0.0.1", url_port);
    o.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut connection) = rumqttc::Client::new(o, 10);
    client.subscribe(filter, rumqttc::QoS::AtLeastOnce).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _client = client;
        for n in connection.iter() {
            match n {
                // Subscribed: from here on nothing published is missed.
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::SubAck(_))) => {
                    if tx.send((String::new(), String::new(), false)).is_err() {
                        return;
                    }
                }
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                    let text = String::from_utf8_lossy(&p.payload).into_owned();
                    if tx.send((p.topic.clone(), text, p.retain)).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    let (topic, ..) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no subscription");
    assert_eq!(
        topic, "",
        "a message before the subscription was acknowledged"
    );
    rx
}

fn publish(port: u16, topic: &str, payload: &[u8]) {
    let mut o = rumqttc::MqttOptions::new(client_id("pub"), "127.0.0.1", port);
    o.set_max_packet_size(4 << 20, 4 << 20);
    let (client, mut connection) = rumqttc::Client::new(o, 10);
    client
        .publish(topic, rumqttc::QoS::AtLeastOnce, true, payload.to_vec())
        .unwrap();
    for n in connection.iter() {
        if let Ok(rumqttc::Event::Incoming(rumqttc::Packet::PubAck(_))) = n {
            break;
        }
        assert!(n.is_ok(), "{n:?}");
    }
    let _ = client.disconnect();
}

#[test]
fn each_topic_holds_what_a_subscriber_needs() {
    let dir = temp_dir("topics");
    let broker = Broker::new(&dir, "allow_anonymous true\n");
    let live = subscribe(broker.port, "chessboardd/kiosk/#");
    let cfg = dir.join("c.toml");
    std::fs::write(
        &cfg,
        "[game]\nwhite = \"Molinari\"\nblack = \"Bordais\"\nblack_title = \"IM\"\nround = \"4\"\n",
    )
    .unwrap();
    let mut d = board(
        "molinari-bordais-1979",
        "kiosk",
        &broker.url(),
        &cfg,
        "20",
        &dir.join("d.err"),
    );
    // The events, live and in order, each a JSON object.
    let mut sans = Vec::new();
    let mut statuses = Vec::new();
    let t = Instant::now();
    while sans.len() < 10 {
        let (topic, payload, _) = live
            .recv_timeout(Duration::from_secs(60).saturating_sub(t.elapsed()))
            .expect("the moves did not all arrive");
        match topic.as_str() {
            "chessboardd/kiosk/events" => {
                let v: serde_json::Value = serde_json::from_str(&payload).unwrap();
                if v["type"] == "move" {
                    sans.push(v["san"].as_str().unwrap().to_string());
                }
            }
            "chessboardd/kiosk/status" => statuses.push(payload),
            _ => {}
        }
    }
    assert_eq!(sans.join(" "), "e4 c5 c4 Nc6 Ne2 Nf6 Nbc3 Nb4 g3 Nd3#");
    assert_eq!(statuses, ["online"]);
    std::thread::sleep(Duration::from_millis(500));
    d.stop();
    // Afterwards a newcomer finds the game kept by the broker: the board offline, its last
    // state and its PGN.
    let late = subscribe(broker.port, "chessboardd/kiosk/#");
    let mut retained = std::collections::BTreeMap::new();
    while retained.len() < 3 {
        let (topic, payload, retain) = late
            .recv_timeout(Duration::from_secs(10))
            .expect("the retained messages did not arrive");
        assert!(retain, "{topic} was not retained");
        retained.insert(topic, payload);
    }
    assert_eq!(retained["chessboardd/kiosk/status"], "offline");
    let state: serde_json::Value =
        serde_json::from_str(&retained["chessboardd/kiosk/state"]).unwrap();
    assert_eq!(state["result"], "0-1");
    assert_eq!(state["moves"].as_array().unwrap().len(), 10);
    // Who played, from [game], as the web view shows it; the mate on the board.
    assert_eq!(state["players"]["white"]["name"], "Molinari");
    assert_eq!(state["players"]["black"]["name"], "Bordais");
    assert_eq!(state["players"]["black"]["title"], "IM");
    assert_eq!(state["players"]["white"]["elo"], serde_json::Value::Null);
    assert_eq!(state["round"], "4");
    assert_eq!(state["check"], "e1");
    let pgn_text = &retained["chessboardd/kiosk/pgn"];
    assert!(pgn_text.contains("[White \"Molinari\"]"), "{pgn_text}");
    assert!(
        pgn_text.contains("5. g3 Nd3# {checkmate} 0-1"),
        "{pgn_text}"
    );
    // Events are not retained: the newcomer got none.
    assert!(late.recv_timeout(Duration::from_millis(500)).is_err());

    // A broadcast takes the kept game, drops what is not a game and goes on; a message too
    // large for a game (2 MB) is kept back by the broker and costs it nothing.
    publish(broker.port, "chessboardd/huge/pgn", &vec![b'x'; 2 << 20]);
    let out = dir.join("out");
    let _bc = broadcast(&broker.url(), &out, None, &dir.join("bc.err"));
    wait_for("the kept game", Duration::from_secs(20), || {
        plies_in(&out.join("kiosk.pgn")) == 10
    });
    publish(
        broker.port,
        "chessboardd/junk/pgn",
        b"1. e4 e5 2. Ke3 ?? \xff",
    );
    publish(broker.port, "chessboardd/round/pgn", b"1. d4 *");
    publish(
        broker.port,
        "chessboardd/later/pgn",
        b"[White \"X\"]\n\n1. d4 *\n",
    );
    // The round file is written after the board's: the later game is in it, the junk not.
    wait_for(
        "the later game in the round",
        Duration::from_secs(20),
        || {
            plies_in(&out.join("later.pgn")) == 1
                && std::fs::read_to_string(out.join("round.pgn"))
                    .is_ok_and(|r| pgn::parse(&r).is_ok_and(|g| g.len() == 2))
        },
    );
    assert!(!out.join("junk.pgn").exists());
    let err = std::fs::read_to_string(dir.join("bc.err")).unwrap();
    assert!(err.contains("dropped: chessboardd/junk/pgn"), "{err}");
    assert!(err.contains("taken by the round file"), "{err}");
    assert!(!err.contains("connecting again"), "{err}");
    assert!(!out.join("huge.pgn").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_message_the_broker_will_not_take_is_left_out_and_the_rest_goes_on() {
    let dir = temp_dir("limit");
    // The broker drops a client that sends a packet over 3000 bytes: the game's state (its
    // moves with their words) outgrows that within a few moves; the PGN and events do not.
    let broker = Broker::new(&dir, "allow_anonymous true\nmax_packet_size 3000\n");
    let live = subscribe(broker.port, "chessboardd/small/events");
    let cfg = dir.join("c.toml");
    std::fs::write(&cfg, "").unwrap();
    let _d = board(
        "seed-example",
        "small",
        &broker.url(),
        &cfg,
        "20",
        &dir.join("d.err"),
    );
    // Every move's event arrives: nothing waits behind the state the broker refuses.
    let mut moves = 0;
    let t = Instant::now();
    while moves < 33 {
        let (_, payload, _) = live
            .recv_timeout(Duration::from_secs(90).saturating_sub(t.elapsed()))
            .unwrap_or_else(|_| {
                panic!(
                    "{moves} moves arrived: {}",
                    std::fs::read_to_string(dir.join("d.err")).unwrap_or_default()
                )
            });
        if payload.contains("\"type\":\"move\"") {
            moves += 1;
        }
    }
    let err = std::fs::read_to_string(dir.join("d.err")).unwrap();
    assert!(
        err.contains("chessboardd/small/state: the broker dropped the connection"),
        "{err}"
    );
    assert!(err.contains("left out"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is not installed: `make test` installs it");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tls_with_a_user_and_password() {
    let dir = temp_dir("tls");
    // A certificate authority of our own and the broker's certificate for "localhost".
    openssl(
        &dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Club CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
    );
    openssl(
        &dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(
        &dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.pem",
        ],
    );
    // Mosquitto started by root runs as the user mosquitto, which must read the key.
    std::fs::set_permissions(
        dir.join("server.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let passwd = dir.join("passwd");
    std::fs::write(&passwd, "").unwrap();
    let made = Command::new("mosquitto_passwd")
        .arg("-b")
        .arg(&passwd)
        .args(["board7", "s3cret pass"])
        .status()
        .unwrap();
    assert!(made.success());
    let d = dir.display();
    let broker = Broker::new(
        &dir,
        &format!(
            "allow_anonymous false\npassword_file {d}/passwd\ncafile {d}/ca.pem\n\
             certfile {d}/server.pem\nkeyfile {d}/server.key\n"
        ),
    );
    let url = format!("mqtts://localhost:{}", broker.port);
    std::fs::write(dir.join("password"), "s3cret pass\n").unwrap();
    let good = dir.join("good.toml");
    std::fs::write(
        &good,
        format!(
            "[mqtt]\nurl = \"{url}\"\nusername = \"board7\"\npassword_file = \"{d}/password\"\n\
             ca_file = \"{d}/ca.pem\"\n"
        ),
    )
    .unwrap();
    // A wrong password is refused, and said so.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        format!(
            "[mqtt]\nurl = \"{url}\"\nusername = \"board7\"\npassword = \"guess\"\n\
             ca_file = \"{d}/ca.pem\"\n"
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let _bc = broadcast(&url, &out, Some(&good), &dir.join("bc.err"));
    let _intruder = board(
        "seed-example",
        "intruder",
        &url,
        &bad,
        "20",
        &dir.join("bad.err"),
    );
    let _d = board(
        "molinari-bordais-1979",
        "b7",
        &url,
        &good,
        "20",
        &dir.join("d.err"),
    );
    wait_for("the game over TLS", Duration::from_secs(60), || {
        plies_in(&out.join("b7.pgn")) == 10
    });
    let err = std::fs::read_to_string(dir.join("bad.err")).unwrap();
    assert!(err.contains("refused"), "{err}");
    assert!(!out.join("intruder.pgn").exists());
    // Without the club's certificate authority the broker is not trusted.
    let no_ca = dir.join("no_ca.toml");
    std::fs::write(
        &no_ca,
        format!("[mqtt]\nusername = \"board7\"\npassword_file = \"{d}/password\"\n"),
    )
    .unwrap();
    let out2 = dir.join("out2");
    let _bc2 = broadcast(&url, &out2, Some(&no_ca), &dir.join("bc2.err"));
    wait_for("the TLS failure", Duration::from_secs(20), || {
        std::fs::read_to_string(dir.join("bc2.err")).is_ok_and(|e| e.contains("connecting again"))
    });
    let err = std::fs::read_to_string(dir.join("bc2.err")).unwrap();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    assert!(!out2.join("b7.pgn").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A game on an engine, played by readings as a board gives them: `ucis` seen being made
/// (lifts and placements), then `read` in one whole-board frame (moves made while the board
/// could not be read: taken from the board afterwards, `recovered`). Its events.
fn engine_game(
    ucis: &[&str],
    read: &[&str],
) -> (chessboardd::engine::Engine, Vec<chessboardd::engine::Event>) {
    use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
    use chessboardd::engine::{Engine, Reading, Settings};
    use shakmaty::{Chess, Position, Square};
    let mut e = Engine::new(Settings::default());
    let mut out = Vec::new();
    e.new_game(0, Chess::default(), true, &mut out);
    let mut t = 0;
    let mut step = |e: &mut Engine, r: Reading, wait: u64, out: &mut Vec<_>| {
        t += 250;
        e.reading(t, r, out);
        t += wait;
        e.advance(t, out);
    };
    for uci in ucis {
        let (from, to): (Square, Square) = (uci[0..2].parse().unwrap(), uci[2..4].parse().unwrap());
        step(&mut e, Reading::Square(from, EMPTY), 400, &mut out);
        step(&mut e, Reading::Square(to, OCCUPIED), 400, &mut out);
    }
    if !read.is_empty() {
        let mut pos = e.game().pos.clone();
        for uci in read {
            let m = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&pos)
                .unwrap();
            pos.play_unchecked(m);
        }
        let frame = Reading::occupancy(pos.board().occupied().0);
        step(&mut e, frame, 5000, &mut out);
    }
    (e, out)
}

/// The game as a subscriber of `state` needs it (the daemon sends the web view's state; the
/// publisher takes any text).
fn state_of(e: &chessboardd::engine::Engine) -> String {
    let sans: Vec<String> = e.game().plies.iter().map(|p| p.san.to_string()).collect();
    serde_json::json!({ "moves": sans }).to_string()
}

/// A board's game corrected: 1. e4 e5 2. Nf3 Nc6 announced and published; later readings show
/// 2. Nc3 Nc6 instead (the engine's game rewritten from ply 3, its moves read from the board),
/// published as the daemon's broker output does it (the new state and PGN with the batch, then
/// the correction and its moves as events). The broker keeps the corrected game, a subscriber
/// sees the correction between the moves, and the broadcast's files end with the corrected
/// moves (the same game, replaced, not kept as an earlier one).
///
/// The correction event is the test's (made as the engine's contract says, docs/replay.md); the
/// games and their PGN are two engines' (the announced story, and the board's).
#[test]
fn a_corrected_game_reaches_the_broker_and_the_broadcast() {
    use chessboardd::engine::{Event, EventKind};
    let dir = temp_dir("correction");
    let broker = Broker::new(&dir, "allow_anonymous true\n");
    let live = subscribe(broker.port, "chessboardd/corr/events");
    let out = dir.join("out");
    let _bc = broadcast(&broker.url(), &out, None, &dir.join("bc.err"));

    let (announced, announced_events) = engine_game(&["e2e4", "e7e5", "g1f3", "b8c6"], &[]);
    let (board, board_events) = engine_game(&["e2e4", "e7e5"], &["b1c3", "b8c6"]);
    let recovered: Vec<bool> = board.game().plies.iter().map(|p| p.recovered).collect();
    assert_eq!(recovered, [false, false, true, true]);
    // The correction, then the board's moves of the story, marked.
    let phrases = &board.settings().phrases;
    let mut corrected: Vec<Event> = board_events
        .into_iter()
        .filter(|e| matches!(e.kind, EventKind::Move { ply: 3.., .. }))
        .collect();
    let mut says = Vec::new();
    for e in &mut corrected {
        if let EventKind::Move { corrected, say, .. } = &mut e.kind {
            *corrected = true;
            says.push(say.clone());
        }
    }
    corrected.insert(
        0,
        Event {
            t: corrected[0].t,
            kind: EventKind::Correction {
                ply: 3,
                withdrawn: vec!["Nf3".into(), "Nc6".into()],
                rulings: vec![],
                say: phrases.correction(&says),
            },
        },
    );
    let (date, time) = ("2026.12.03".to_string(), "10:00:00".to_string());
    let pgn_of = |e: &chessboardd::engine::Engine| {
        e.pgn_with(&[("Date", date.clone()), ("Time", time.clone())])
    };
    let game = format!("{date} {time}");

    let mut settings =
        chessboardd::mqtt::MqttSettings::new(broker.url().parse().expect("a broker address"));
    settings.board_id = Some("corr".into());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let p = chessboardd::mqtt::Publisher::start(&settings).unwrap();
        p.update(state_of(&announced), pgn_of(&announced), game.clone());
        for e in &announced_events {
            p.event(e.to_json());
        }
        // The broadcast has the game as announced.
        let t = Instant::now();
        while plies_in(&out.join("corr.pgn")) < 4 {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "the game did not arrive"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The correction: a batch as the daemon hands it to the broker output.
        p.update(state_of(&board), pgn_of(&board), game.clone());
        for e in &corrected {
            p.event(e.to_json());
        }
        p.finish(Duration::from_secs(5)).await;
    });

    // The events, in order: the correction between the moves announced and the board's.
    let mut seen = Vec::new();
    let t = Instant::now();
    while seen.len() < 7 {
        let (_, payload, _) = live
            .recv_timeout(Duration::from_secs(20).saturating_sub(t.elapsed()))
            .expect("the events did not all arrive");
        let v: serde_json::Value = serde_json::from_str(&payload).unwrap();
        match v["type"].as_str() {
            Some("move") => seen.push(format!(
                "{}{}",
                v["san"].as_str().unwrap(),
                if v["corrected"] == true { "!" } else { "" }
            )),
            Some("correction") => seen.push(format!("correction {}", v["withdrawn"])),
            _ => {}
        }
    }
    assert_eq!(
        seen,
        [
            "e4",
            "e5",
            "Nf3",
            "Nc6",
            "correction [\"Nf3\",\"Nc6\"]",
            "Nc3!",
            "Nc6!"
        ]
    );

    // The broadcast's files end with the corrected moves; the game announced is not kept.
    let movetext = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let want = "2. Nc3 {recovered from the board} 2... Nc6 {recovered from the board} *";
    let file = out.join("corr.pgn");
    wait_for("the corrected game", Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| movetext(&t).ends_with(want))
    });
    wait_for("the corrected round", Duration::from_secs(20), || {
        std::fs::read_to_string(out.join("round.pgn")).is_ok_and(|t| movetext(&t).ends_with(want))
    });
    let (sans, result) = moves_of(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(sans.join(" "), "e4 e5 Nc3 Nc6");
    assert_eq!(result, "*");
    let round = std::fs::read_to_string(out.join("round.pgn")).unwrap();
    assert_eq!(pgn::parse(&round).unwrap().len(), 1, "{round}");
    let earlier: Vec<_> = std::fs::read_dir(out.join("earlier")).unwrap().collect();
    assert!(earlier.is_empty(), "{earlier:?}");

    // A newcomer finds the corrected game kept by the broker.
    let late = subscribe(broker.port, "chessboardd/corr/#");
    let mut retained = std::collections::BTreeMap::new();
    while retained.len() < 3 {
        let (topic, payload, retain) = late
            .recv_timeout(Duration::from_secs(10))
            .expect("the retained messages did not arrive");
        assert!(retain, "{topic} was not retained");
        retained.insert(topic, payload);
    }
    assert_eq!(retained["chessboardd/corr/pgn"], pgn_of(&board));
    assert_eq!(retained["chessboardd/corr/state"], state_of(&board));
    assert_eq!(retained["chessboardd/corr/status"], "offline");
    let _ = std::fs::remove_dir_all(&dir);
}
