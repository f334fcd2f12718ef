//! A corpus of broken configs (`tests/data/configs/`): `chessboardd check-config` must refuse each
//! with exit 78 and a message that names the file and line (`FILE:LINE`) and says exactly what is
//! wrong. Each file says in its head comments what is expected: `# line: N` and `# says: TEXT`.

use std::path::Path;
use std::process::Command;

fn check(path: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["check-config"])
        .arg(path)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn every_broken_config_is_refused_with_its_line_and_what_is_wrong() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/configs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus has {} files", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let line: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("# line: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: no '# line: N'", file.display()));
        let says: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# says: "))
            .collect();
        assert!(!says.is_empty(), "{}: no '# says:'", file.display());
        let (code, err) = check(file);
        let at = format!("{}:{line}:", file.display());
        let missing: Vec<&&str> = says.iter().filter(|s| !err.contains(**s)).collect();
        if code != Some(78) || !err.contains(&at) || !missing.is_empty() || err.lines().count() != 1
        {
            failures.push(format!(
                "{}: exit {code:?}, wanted {at} and {missing:?} on one line, got: {err}",
                file.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_missing_config_file_is_named() {
    let (code, err) = check(Path::new("/nonexistent/chessboardd.toml"));
    assert_eq!(code, Some(78));
    assert!(
        err.contains("/nonexistent/chessboardd.toml: cannot read the config: No such file"),
        "{err}"
    );
}

#[test]
fn the_reference_config_is_valid() {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/chessboardd.toml");
    let (code, err) = check(&reference);
    assert_eq!(code, Some(0), "{err}");
}

/// Writes `text` as a config of its own and checks it: exit status and stderr.
fn check_text(name: &str, text: &[u8]) -> (Option<i32>, String, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("chessboardd-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    let (code, err) = check(&path);
    (code, err, path)
}

/// Refused with exit 78, on one line starting `FILE:LINE:`, saying each of `says`.
fn refused(name: &str, text: &str, line: usize, says: &[&str]) {
    let (code, err, path) = check_text(name, text.as_bytes());
    assert_eq!(code, Some(78), "{name}: {err}");
    let at = format!("{}:{line}:", path.display());
    assert!(err.contains(&at), "{name}: wanted {at} in {err}");
    for s in says {
        assert!(err.contains(s), "{name}: wanted {s:?} in {err}");
    }
    assert_eq!(err.lines().count(), 1, "{name}: {err}");
}

#[test]
fn an_empty_gpio_chip_is_refused() {
    refused(
        "empty_chip",
        "[gpio]\nchip = \"\"\n",
        2,
        &["gpio.chip", "no GPIO chip", "/dev/gpiochip0"],
    );
}

#[test]
fn a_missing_sim_game_is_refused() {
    refused(
        "missing_sim",
        "[board]\ndriver = \"sim\"\nport = \"/nonexistent/game.pgn\"\n",
        3,
        &["board.port", "/nonexistent/game.pgn", "No such file"],
    );
}

#[test]
fn a_port_with_a_nul_is_refused() {
    refused(
        "port_nul",
        "[board]\ndriver = \"diy\"\nport = \"/dev/tty\\u0000USB0\"\n",
        3,
        &["board.port", "no control characters", "/dev/ttyUSB0"],
    );
}

#[test]
fn a_gpio_line_twice_in_the_rows_is_refused() {
    refused(
        "rows_twice",
        "[gpio]\nrows = [5, 6, 13, 19, 26, 12, 16, 5]\n",
        2,
        &["gpio.rows", "line 5 is used twice in gpio.rows"],
    );
}

#[test]
fn a_gpio_line_in_rows_and_columns_is_refused() {
    refused(
        "rows_and_cols",
        "[gpio]\nrows = [5, 6, 13, 19, 26, 12, 16, 20]\ncols = [4, 17, 27, 22, 10, 9, 11, 20]\n",
        3,
        &["gpio.cols", "line 20 is used in gpio.rows too"],
    );
}

#[test]
fn a_socket_in_a_missing_directory_is_refused() {
    refused(
        "socket_dir",
        "[control]\nsocket = \"/nonexistent/chessboardd/control.sock\"\n",
        2,
        &["control.socket", "/nonexistent/chessboardd", "No such file"],
    );
}

#[test]
fn low_time_without_its_placeholders_is_refused() {
    refused(
        "low_time",
        "[speech]\nlang = \"de\"\n[speech.words]\nlow_time = \"{side} noch\"\n",
        4,
        &[
            "speech.words.low_time",
            "lacks the placeholder {time}",
            "{side} and {time}",
        ],
    );
}

#[test]
fn square_flickers_with_a_wrong_placeholder_is_refused() {
    refused(
        "flickers",
        "[speech.words]\nsquare_flickers = \"Feld {feld} flackert\"\n",
        2,
        &["speech.words.square_flickers", "{square}"],
    );
    refused(
        "claim",
        "[speech.words]\nmay_claim_win = \"may claim the win\"\n",
        2,
        &["speech.words.may_claim_win", "{side}"],
    );
}

#[test]
fn invalid_utf8_is_refused_with_its_line() {
    let (code, err, path) = check_text("utf8", b"[speech]\nlang = \"de\"\n# caf\xe9\n");
    assert_eq!(code, Some(78), "{err}");
    assert!(
        err.contains(&format!("{}:3:6: not UTF-8", path.display())),
        "{err}"
    );
}

#[test]
fn gpio_lines_of_the_wrong_type_are_said_in_plain_words() {
    refused(
        "rows_type",
        "[gpio]\nrows = [1.5, 2]\n",
        2,
        &["gpio.rows", "expected a list of GPIO line numbers or names"],
    );
    let (_, err, _) = check_text("rows_type", b"[gpio]\nrows = [1.5, 2]\n");
    assert!(
        !err.contains("untagged") && !err.contains("LineSpec"),
        "{err}"
    );
}

#[test]
fn a_config_without_newlines_is_refused_at_once() {
    let t = std::time::Instant::now();
    let (code, err) = check(Path::new("/dev/zero"));
    assert_eq!(code, Some(78), "{err}");
    assert!(
        err.contains("/dev/zero:1: the line is longer than 64 KiB"),
        "{err}"
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn a_password_over_plain_mqtt_is_a_warning() {
    let (code, err, path) = check_text(
        "mqtt_plain",
        b"[mqtt]\nurl = \"mqtt://referee:secret@localhost\"\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!("warning: {}:2:", path.display()))
            && err.contains("mqtt.url")
            && err.contains("unencrypted"),
        "{err}"
    );
    let (code, err, _) = check_text(
        "mqtt_tls",
        b"[mqtt]\nurl = \"mqtts://referee:secret@localhost\"\nca_file = \"/nonexistent\"\n",
    );
    assert!(!err.contains("unencrypted"), "{code:?} {err}");
}

#[test]
fn run_refuses_what_check_config_refuses_with_78() {
    let (_, _, path) = check_text(
        "run_sim",
        b"[board]\ndriver = \"sim\"\nport = \"/nonexistent/g.pgn\"\n",
    );
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["run", "--speech", "text", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(78));
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "run",
            "--speech",
            "text",
            "--board",
            "sim:/nonexistent/g.pgn",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(78));
}

#[test]
fn a_keypad_player_who_is_no_player_is_refused() {
    refused(
        "keypad_player",
        "[control]\nkeypad = \"auto\"\nkeypad_player = \"blind\"\n",
        3,
        &[
            "control.keypad_player",
            "'blind' is not a player",
            "listener, both, white, black",
        ],
    );
}

#[test]
fn an_unknown_way_of_reading_opponent_lifts_is_refused() {
    refused(
        "opponent_lifts",
        "[rules]\nopponent_lifts = \"ignore\"\n",
        2,
        &[
            "rules.opponent_lifts",
            "'ignore'",
            "auto, touch, adjustment",
        ],
    );
}

#[test]
fn an_unknown_way_of_telling_the_opponents_touches_is_refused() {
    refused(
        "opponent_touches",
        "[announce]\nlistener = \"white\"\nopponent_touches = \"loud\"\n",
        3,
        &["announce.opponent_touches", "'loud'", "off, tone, words"],
    );
}
