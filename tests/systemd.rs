//! The files that make chessboardd a system service: the unit, the sysusers.d file, the
//! modules-load.d file and the udev rules, checked with systemd's own tools where the machine
//! has them (each test prints a note and passes when a tool is missing).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/chessboardd.service");
const SYSUSERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/chessboardd.sysusers");
const MODULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/systemd/chessboardd.modules-load"
);
const UDEV_RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/udev/60-chessboardd.rules");

/// The command line of the unit as shipped (the .deb's path; `make install` rewrites the path).
const EXEC_START: &str = "/usr/bin/chessboardd run --config /etc/chessboardd/config.toml \
                          --state-dir ${STATE_DIRECTORY} --socket ${RUNTIME_DIRECTORY}/control.sock";

/// The highest `systemd-analyze security` exposure accepted (0 = locked down, 10 = unprotected).
const MAX_EXPOSURE: f64 = 2.0;

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("systemd-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a tool with colours and pager off; None (and a note) when it is not installed.
fn tool(program: &str, args: &[&str]) -> Option<Output> {
    match Command::new(program)
        .args(args)
        .env("SYSTEMD_COLORS", "0")
        .env("SYSTEMD_PAGER", "")
        .env("SYSTEMD_LOG_COLOR", "0")
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) => Some(o),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("note: {program} is not installed; check skipped");
            None
        }
        Err(e) => panic!("{program}: {e}"),
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The unit as `make install` writes it, with ExecStart= pointing at the binary cargo just built
/// (`systemd-analyze verify` checks that the program exists). Returns the copy's path.
fn installed_unit(dir: &Path) -> PathBuf {
    let unit = std::fs::read_to_string(UNIT).unwrap();
    let exe = env!("CARGO_BIN_EXE_chessboardd");
    let from = "ExecStart=/usr/bin/chessboardd ";
    assert_eq!(unit.matches(from).count(), 1, "one ExecStart= line");
    let copy = dir.join("chessboardd.service");
    std::fs::write(&copy, unit.replace(from, &format!("ExecStart={exe} "))).unwrap();
    copy
}

/// The settings of the unit (section.Key, value), in order; comments and blank lines dropped.
fn settings() -> Vec<(String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in std::fs::read_to_string(UNIT).unwrap().lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
            continue;
        }
        let (k, v) = line.split_once('=').expect("KEY=value");
        out.push((format!("{section}.{k}"), v.to_string()));
    }
    out
}

fn values(key: &str) -> Vec<String> {
    settings()
        .into_iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v)
        .collect()
}

#[test]
fn unit_has_the_settings_the_daemon_relies_on() {
    let one = |key: &str| {
        let v = values(key);
        assert_eq!(v.len(), 1, "{key}: {v:?}");
        v[0].clone()
    };
    assert_eq!(one("Service.ExecStart"), EXEC_START);
    assert_eq!(one("Service.ExecReload"), "/bin/kill -HUP $MAINPID");
    assert_eq!(one("Service.Type"), "notify");
    assert_eq!(one("Service.NotifyAccess"), "main");
    assert_eq!(one("Service.Restart"), "on-failure");
    assert_eq!(one("Service.User"), "chessboardd");
    assert_eq!(one("Service.StateDirectory"), "chessboardd");
    assert_eq!(one("Service.RuntimeDirectory"), "chessboardd");
    assert_eq!(one("Service.DevicePolicy"), "closed");
    assert_eq!(one("Service.RestrictAddressFamilies"), "AF_UNIX");
    assert_eq!(one("Service.CapabilityBoundingSet"), "");
    assert_eq!(one("Install.WantedBy"), "multi-user.target");
    assert!(one("Service.WatchdogSec").ends_with('s'));
    // Not PrivateDevices=: it would hide the board, the sound card and the keypad.
    assert!(values("Service.PrivateDevices").is_empty());
    let allowed = values("Service.DeviceAllow");
    for dev in [
        "char-gpiochip rw",
        "char-ttyACM rw",
        "char-ttyUSB rw",
        "char-rfcomm rw",
        "char-alsa rw",
        "char-input r",
    ] {
        assert!(allowed.iter().any(|a| a == dev), "DeviceAllow={dev}");
    }
    // Every serial and sound driver of the allow-list is loaded at boot (systemd resolves the
    // names in /proc/devices when the service starts).
    let modules = std::fs::read_to_string(MODULES).unwrap();
    let modules: Vec<&str> = modules
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for m in ["cdc_acm", "usbserial", "rfcomm", "snd"] {
        assert!(modules.contains(&m), "modules-load.d lacks {m}");
    }
    assert!(modules.iter().all(|m| m
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')));
}

/// The unit's command line is one `chessboardd run` accepts: no usage error (exit 2). The config
/// named does not exist, so the daemon stops at once; one still running after 5 s took the
/// arguments as well.
#[test]
fn run_accepts_the_units_command_line() {
    let dir = scratch("argv");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["run", "--config"])
        .arg(dir.join("no-such-config.toml"))
        .arg("--state-dir")
        .arg(&state)
        .arg("--socket")
        .arg(dir.join("control.sock"))
        .env_remove("NOTIFY_SOCKET")
        .env_remove("WATCHDOG_USEC")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(5) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    if let Some(s) = status {
        assert_ne!(s.code(), Some(2), "the unit's arguments are refused: {err}");
        assert!(
            !err.contains("unexpected argument") && !err.contains("required arguments"),
            "{err}"
        );
    }
}

#[test]
fn unit_verifies_without_warnings() {
    let dir = scratch("verify");
    let unit = installed_unit(&dir);
    let Some(o) = tool(
        "systemd-analyze",
        &["verify", "--man=no", unit.to_str().unwrap()],
    ) else {
        return;
    };
    let out = text(&o);
    assert!(o.status.success(), "systemd-analyze verify failed:\n{out}");
    // Any line is a warning; those about the host's other units are not ours to fix.
    let ours: Vec<&str> = out.lines().filter(|l| l.contains("chessboardd")).collect();
    assert!(ours.is_empty(), "systemd-analyze verify warns:\n{out}");
    if !out.trim().is_empty() {
        println!("note: systemd-analyze verify, about other units:\n{out}");
    }
}

#[test]
fn unit_security_exposure_is_low() {
    let dir = scratch("security");
    let unit = installed_unit(&dir);
    let Some(o) = tool(
        "systemd-analyze",
        &[
            "security",
            "--offline=yes",
            "--no-pager",
            unit.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    let out = text(&o);
    if !o.status.success() && out.contains("--offline") {
        println!(
            "note: this systemd-analyze cannot rate a unit file offline (systemd < 250); skipped"
        );
        return;
    }
    assert!(
        o.status.success(),
        "systemd-analyze security failed:\n{out}"
    );
    // "→ Overall exposure level for chessboardd.service: 0.5 SAFE 😀"
    let line = out
        .lines()
        .find(|l| l.contains("Overall exposure level for chessboardd.service:"))
        .unwrap_or_else(|| panic!("no overall exposure level in:\n{out}"));
    let level: f64 = line
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("exposure level in '{line}'"));
    println!("{}", line.trim());
    assert!(
        level <= MAX_EXPOSURE,
        "exposure {level} > {MAX_EXPOSURE}:\n{out}"
    );
}

/// Applies the sysusers.d file to a scratch root holding the given /etc/group, and returns the
/// resulting /etc/passwd and /etc/group; None when systemd-sysusers is missing or cannot run.
fn sysusers(test: &str, group: &str) -> Option<(String, String)> {
    let root = scratch(test);
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\npi:x:1000:1000::/home/pi:/bin/bash\n",
    )
    .unwrap();
    std::fs::write(etc.join("group"), group).unwrap();
    let root_arg = format!("--root={}", root.display());
    let o = tool("systemd-sysusers", &[&root_arg, SYSUSERS])?;
    let out = text(&o);
    if !o.status.success() && (out.contains("ermission denied") || out.contains("not permitted")) {
        println!("note: systemd-sysusers --root needs root here; check skipped:\n{out}");
        return None;
    }
    assert!(o.status.success(), "systemd-sysusers:\n{out}");
    assert!(
        !out.contains("arning") && !out.contains("gnoring"),
        "systemd-sysusers warns:\n{out}"
    );
    Some((
        std::fs::read_to_string(etc.join("passwd")).unwrap(),
        std::fs::read_to_string(etc.join("group")).unwrap(),
    ))
}

fn members<'a>(group: &'a str, name: &str) -> Vec<&'a str> {
    let line = group
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no group {name} in:\n{group}"));
    let list = line.rsplit(':').next().unwrap();
    list.split(',').filter(|m| !m.is_empty()).collect()
}

fn check_user(passwd: &str, group: &str) {
    let user = passwd
        .lines()
        .find(|l| l.starts_with("chessboardd:"))
        .unwrap_or_else(|| panic!("no user chessboardd in:\n{passwd}"));
    let fields: Vec<&str> = user.split(':').collect();
    let uid: u32 = fields[2].parse().unwrap();
    assert!((1..1000).contains(&uid), "a system user: {user}");
    assert!(fields[6].ends_with("nologin"), "no login shell: {user}");
    for g in ["gpio", "dialout", "audio", "input"] {
        assert!(members(group, g).contains(&"chessboardd"), "{g}:\n{group}");
    }
}

/// Raspberry Pi OS: all four groups exist (with the login user in them); they are kept.
#[test]
fn sysusers_joins_the_groups_of_raspberry_pi_os() {
    let group = "root:x:0:\ndialout:x:20:pi\naudio:x:29:pi\ninput:x:105:pi\n\
                 gpio:x:997:pi\npi:x:1000:\n";
    let Some((passwd, group)) = sysusers("sysusers-pi", group) else {
        return;
    };
    check_user(&passwd, &group);
    assert!(group.contains("gpio:x:997:"), "{group}");
    assert!(members(&group, "gpio").contains(&"pi"), "{group}");
}

/// Plain Debian: no gpio (and in small images no input) group; they are made, as system groups.
#[test]
fn sysusers_makes_the_groups_debian_lacks() {
    let group = "root:x:0:\ndialout:x:20:\naudio:x:29:\npi:x:1000:\n";
    let Some((passwd, group)) = sysusers("sysusers-debian", group) else {
        return;
    };
    check_user(&passwd, &group);
    for g in ["gpio", "input"] {
        let line = group
            .lines()
            .find(|l| l.starts_with(&format!("{g}:")))
            .unwrap();
        let gid: u32 = line.split(':').nth(2).unwrap().parse().unwrap();
        assert!((1..1000).contains(&gid), "a system group: {line}");
    }
}

/// `udevadm verify` came with systemd 254; older udevadm (Debian 12 has 252) lacks it.
#[test]
fn udev_rules_verify() {
    let Some(o) = tool("udevadm", &["verify", UDEV_RULES]) else {
        return;
    };
    let out = text(&o);
    if out.contains("Unknown command") || out.contains("unknown command") {
        println!("note: this udevadm has no verify command (systemd < 254); check skipped");
        return;
    }
    assert!(o.status.success(), "udevadm verify:\n{out}");
}
