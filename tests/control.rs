//! Commands a blind player or an arbiter gives (issue 5's command set): answered in words, by the
//! engine directly and through the control socket of a running daemon.

use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use chessboardd::control::Parsed;
use chessboardd::engine::{Engine, Settings};
use chessboardd::replay;

/// An engine after the moves of `script` (replay format), at the script's end.
fn engine_after(script: &str, args: Settings) -> (Engine, u64) {
    let lines = replay::parse_script(script, &["board".to_string()]).unwrap();
    let end = lines.last().map_or(0, |l| l.t) + 10_000;
    (replay::run(&lines, args, |_| {}), end)
}

fn ask(engine: &mut Engine, t: u64, line: &str) -> String {
    let cmd = line.parse::<Parsed>().unwrap().0;
    engine.command(t, cmd, &mut Vec::new())
}

const FOOLS_MATE_MINUS_ONE: &str = "lift f2\nplace f3\nlift e7\nplace e5\nlift g2\nplace g4\n";

#[test]
fn questions_are_answered_in_words() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(ask(&mut e, t, "last"), "Gustav vier");
    assert_eq!(ask(&mut e, t, "moves 2"), "1... Eva fünf, 2. Gustav vier");
    assert_eq!(
        ask(&mut e, t, "moves 9"),
        "1. Felix drei, 1... Eva fünf, 2. Gustav vier"
    );
    assert_eq!(ask(&mut e, t, "turn"), "Schwarz am Zug");
    assert_eq!(ask(&mut e, t, "time"), "2 Züge. Schwarz am Zug");
    assert_eq!(ask(&mut e, t, "square g4"), "Weiß Bauer auf Gustav vier");
    assert_eq!(ask(&mut e, t, "square g2"), "Gustav zwei leer");
    assert_eq!(ask(&mut e, t, "file g"), "Linie Gustav: Weiß: Springer Gustav eins, Bauer Gustav vier. Schwarz: Springer Gustav acht, Bauer Gustav sieben");
    assert_eq!(
        ask(&mut e, t, "rank 5"),
        "Reihe fünf: Schwarz: Bauer Eva fünf"
    );
    assert_eq!(ask(&mut e, t, "rank 6"), "Reihe sechs: leer");
    assert_eq!(
        ask(&mut e, t, "position black Q"),
        "Schwarz: Dame David acht"
    );
    assert_eq!(ask(&mut e, t, "position white K"), "Weiß: König Eva eins");
}

#[test]
fn resigning_wants_a_confirmation() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(ask(&mut e, t, "resign"), "Zum Bestätigen nochmals");
    assert!(!e.is_over());
    // Too late: the first press has lapsed, this one asks again.
    assert_eq!(ask(&mut e, t + 6000, "resign"), "Zum Bestätigen nochmals");
    assert_eq!(ask(&mut e, t + 7000, "resign"), "Aufgabe. Weiß gewinnt");
    assert!(e.is_over());
}

#[test]
fn pausing_stops_the_clock() {
    let settings = Settings {
        time_control: Some("60+0".parse().unwrap()),
        ..Settings::default()
    };
    let (mut e, t) = engine_after("lift e2\nplace e4\n", settings);
    let black = e.clocks(t).unwrap().1;
    assert_eq!(ask(&mut e, t, "pause"), "Uhr angehalten");
    assert_eq!(
        e.clocks(t + 100_000).unwrap().1,
        black,
        "no time passes while paused"
    );
    assert!(!e.is_over(), "no flag falls while paused");
    assert_eq!(ask(&mut e, t + 100_000, "resume"), "Uhr läuft weiter");
    assert_eq!(e.clocks(t + 110_000).unwrap().1, black - 10_000);
}

#[test]
fn the_control_socket_answers_ctl() {
    let dir = std::env::temp_dir().join(format!("chessboardd-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("control.sock");
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/molinari-bordais-1979.pgn"
    );
    let mut daemon = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "run",
            "--board",
            &format!("sim:{pgn}"),
            "--speed",
            "2",
            "--speech",
            "text",
            "--events-json",
        ])
        .args(["--socket", socket.to_str().unwrap()])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let ctl = |args: &[&str]| {
        let o = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["ctl", "--socket", socket.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    };
    // Wait for the mating move, then ask (the daemon stays a few seconds after the game).
    let t0 = Instant::now();
    loop {
        let (_, out) = ctl(&["last"]);
        if out.contains("Springer David drei Schachmatt") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no mate seen: {out}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, out) = ctl(&["square", "d3"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["text"], "Schwarz Springer auf David drei");
    let (code, out) = ctl(&["moves", "2"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("5. Gustav drei, 5... Springer David drei Schachmatt"),
        "{out}"
    );
    let (code, out) = ctl(&["jump"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("\"ok\":false"), "{out}");
    let _ = Proc::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status();
    let _ = daemon.wait();
}
