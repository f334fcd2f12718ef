//! The first run of a fresh install: the config names no board yet. The daemon does not exit
//! (the service would be started again and again): it says once what it waits for, and starts
//! on the board as soon as one it recognises is plugged in.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

#[test]
fn with_no_board_configured_run_waits_and_starts_when_one_is_plugged_in() {
    let dir = std::env::temp_dir().join(format!("chessboardd-first-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("dev")).unwrap();
    std::fs::create_dir_all(root.join("sys/class/tty")).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(&config, "# a fresh install: no [board] yet\n").unwrap();
    let game = dir.join("game.pgn");
    std::fs::write(&game, "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n").unwrap();
    let mut run = bin()
        .arg("run")
        .arg("--config")
        .arg(&config)
        .arg("--discover-root")
        .arg(&root)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .args(["--speech", "text", "--events-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        run.try_wait().unwrap().is_none(),
        "run exited with no board configured instead of waiting"
    );
    // The board is plugged in: a home-built board under the name the udev rules give it.
    let link = root.join("dev/chessboard");
    let mut sim = bin()
        .args(["simulate", "--protocol", "diy", "--link"])
        .arg(&link)
        .arg("--pgn")
        .arg(&game)
        .args(["--speed", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while sim.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(sim.try_wait().unwrap().is_some(), "the game did not end");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(run.id() as i32, libc::SIGTERM) };
    let out = run.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let moves = stdout
        .lines()
        .filter(|l| l.contains("\"type\":\"move\""))
        .count();
    assert_eq!(moves, 6, "every move read\n{stdout}\n{stderr}");
    assert_eq!(
        stderr.matches("none found").count(),
        1,
        "said once what to configure:\n{stderr}"
    );
    assert!(stderr.contains("[board]"), "{stderr}");
    // Said once, as `run --events-json` prints everything: an event.
    let waiting: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("Warte auf das Brett"))
        .collect();
    assert!(!waiting.is_empty(), "{stdout}");
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("--events-json prints JSON only: {line}: {e}"));
        assert!(v["type"].is_string(), "{line}");
    }
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(waiting[0]).unwrap()["type"],
        "say"
    );
    assert!(stderr.contains("a board is there"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_config_says_which_board_run_would_use() {
    let dir = std::env::temp_dir().join(format!("chessboardd-first-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[board]\ndriver = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let o = bin().arg("check-config").arg(&config).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("board: dgt:/dev/ttyACM0"), "{out}");
    std::fs::write(&config, "# nothing yet\n").unwrap();
    let o = bin().arg("check-config").arg(&config).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("board: none configured"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
