//! The files that make chessboardd a system service: the units (the board's and the broadcast's),
//! the sysusers.d file, the modules-load.d file and the udev rules, checked with systemd's own
//! tools where the machine has them (each test prints a note and passes when a tool is missing).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/chessboardd.service");
const BROADCAST_UNIT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/systemd/chessboardd-broadcast.service"
);
const SYSUSERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/chessboardd.sysusers");
const MODULES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/systemd/chessboardd.modules-load"
);
const UDEV_RULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/udev/60-chessboardd.rules");

/// The command line of the unit as shipped (the .deb's path; `make install` rewrites the path).
const EXEC_START: &str = "/usr/bin/chessboardd run --config /etc/chessboardd/config.toml \
                          --state-dir ${STATE_DIRECTORY} --socket ${RUNTIME_DIRECTORY}/control.sock";
/// The broadcast unit's command line as shipped.
const BROADCAST_EXEC_START: &str = "/usr/bin/chessboardd broadcast \
    --config /etc/chessboardd/config.toml --out /var/lib/chessboardd-broadcast";

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

/// The unit file `unit` as `make install` writes it, with ExecStart= pointing at the binary cargo
/// just built (`systemd-analyze verify` checks that the program exists). Returns the copy's path
/// (same file name, in `dir`).
fn installed_unit(dir: &Path, unit: &str) -> PathBuf {
    let text = std::fs::read_to_string(unit).unwrap();
    let exe = env!("CARGO_BIN_EXE_chessboardd");
    let from = "ExecStart=/usr/bin/chessboardd ";
    assert_eq!(
        text.matches(from).count(),
        1,
        "one ExecStart= line in {unit}"
    );
    let copy = dir.join(Path::new(unit).file_name().unwrap());
    std::fs::write(&copy, text.replace(from, &format!("ExecStart={exe} "))).unwrap();
    copy
}

/// The settings of a unit file (section.Key, value), in order; comments and blank lines dropped.
fn settings_of(unit: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in std::fs::read_to_string(unit).unwrap().lines() {
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

fn values_of(unit: &str, key: &str) -> Vec<String> {
    settings_of(unit)
        .into_iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v)
        .collect()
}

fn values(key: &str) -> Vec<String> {
    values_of(UNIT, key)
}

/// `systemd-analyze verify` of the installed copy of `unit`: no error, no warning about it.
fn verify(test: &str, unit: &str) {
    let dir = scratch(test);
    let unit = installed_unit(&dir, unit);
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

/// `systemd-analyze security --offline=yes` of the installed copy of `unit`: its overall exposure
/// is at most MAX_EXPOSURE (printed).
fn security(test: &str, unit: &str) {
    let dir = scratch(test);
    let unit = installed_unit(&dir, unit);
    let name = unit.file_name().unwrap().to_str().unwrap().to_string();
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
        .find(|l| l.contains(&format!("Overall exposure level for {name}:")))
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
    // Not restarted for what a restart cannot mend: the state directory in use by another
    // daemon (75), a journal it may not read (77), a wrong config (78).
    assert_eq!(one("Service.RestartPreventExitStatus"), "75 77 78");
    assert_eq!(one("Service.User"), "chessboardd");
    assert_eq!(one("Service.StateDirectory"), "chessboardd");
    assert_eq!(one("Service.RuntimeDirectory"), "chessboardd");
    assert_eq!(one("Service.DevicePolicy"), "closed");
    // The web view and the broker need only the config: IP sockets are allowed, nothing else.
    assert_eq!(
        one("Service.RestrictAddressFamilies"),
        "AF_UNIX AF_INET AF_INET6"
    );
    assert!(values("Service.PrivateNetwork").is_empty());
    assert!(values("Service.IPAddressDeny").is_empty());
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
    verify("verify", UNIT);
}

#[test]
fn unit_security_exposure_is_low() {
    security("security", UNIT);
}

// --- The broadcast unit ----------------------------------------------------------------------

fn broadcast_one(key: &str) -> String {
    let v = values_of(BROADCAST_UNIT, key);
    assert_eq!(v.len(), 1, "{key}: {v:?}");
    v[0].clone()
}

#[test]
fn broadcast_unit_has_the_settings_it_relies_on() {
    let one = broadcast_one;
    assert_eq!(one("Service.ExecStart"), BROADCAST_EXEC_START);
    // The games go to the state directory, which systemd makes; readable by everyone, for a
    // web server.
    let out = BROADCAST_EXEC_START.rsplit_once("--out ").unwrap().1;
    assert_eq!(out, format!("/var/lib/{}", one("Service.StateDirectory")));
    assert_eq!(one("Service.StateDirectory"), "chessboardd-broadcast");
    assert_eq!(one("Service.StateDirectoryMode"), "0755");
    assert_eq!(one("Service.UMask"), "0022");
    assert_eq!(one("Service.User"), "chessboardd");
    assert_eq!(one("Service.Group"), "chessboardd");
    // The broadcast does not speak sd_notify: Type=notify would wait for a READY=1 in vain.
    assert_ne!(one("Service.Type"), "notify");
    assert!(values_of(BROADCAST_UNIT, "Service.WatchdogSec").is_empty());
    assert_eq!(one("Service.Restart"), "on-failure");
    assert_eq!(one("Service.RestartPreventExitStatus"), "78");
    assert_eq!(one("Unit.After"), "network-online.target");
    assert_eq!(one("Unit.Wants"), "network-online.target");
    // TCP to the broker; no devices.
    let families = one("Service.RestrictAddressFamilies");
    let mut families: Vec<&str> = families.split_whitespace().collect();
    families.sort_unstable();
    assert_eq!(families, ["AF_INET", "AF_INET6", "AF_UNIX"]);
    for key in ["Service.PrivateNetwork", "Service.IPAddressDeny"] {
        assert!(values_of(BROADCAST_UNIT, key).is_empty(), "{key}");
    }
    assert_eq!(one("Service.PrivateDevices"), "yes");
    assert!(values_of(BROADCAST_UNIT, "Service.DeviceAllow").is_empty());
    assert_eq!(one("Service.CapabilityBoundingSet"), "");
    assert_eq!(one("Service.ProtectSystem"), "strict");
    assert_eq!(one("Install.WantedBy"), "multi-user.target");
}

#[test]
fn broadcast_unit_verifies_without_warnings() {
    verify("broadcast-verify", BROADCAST_UNIT);
}

#[test]
fn broadcast_unit_security_exposure_is_low() {
    security("broadcast-security", BROADCAST_UNIT);
}

/// The broadcast unit's command line, run with the binary cargo built and the given files in
/// place of the values of --config and --out.
fn broadcast_command(config: &Path, out: &Path) -> Command {
    let exec = broadcast_one("Service.ExecStart");
    let mut words = exec.split_whitespace();
    assert_eq!(words.next(), Some("/usr/bin/chessboardd"));
    let mut c = Command::new(env!("CARGO_BIN_EXE_chessboardd"));
    let (mut swapped, mut next) = (0, None);
    for w in words {
        if let Some(path) = next.take() {
            c.arg(path);
            swapped += 1;
            continue;
        }
        next = match w {
            "--config" => Some(config),
            "--out" => Some(out),
            _ => None,
        };
        c.arg(w);
    }
    assert_eq!(swapped, 2, "--config FILE and --out DIR in {exec}");
    // Its log on stderr (not the journal, as under systemd).
    c.env_remove("JOURNAL_STREAM")
        .env_remove("INVOCATION_ID")
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    c
}

/// The exit status of `child` within `limit`; None (and the child killed) when it runs longer.
fn exit_within(child: &mut std::process::Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// With the unit's arguments and a config whose broker does not answer (a closed loopback
/// port), the broadcast starts, keeps trying to connect, and exits 0 on SIGTERM
/// (`systemctl stop`).
#[test]
fn broadcast_runs_with_the_units_command_line() {
    let dir = scratch("broadcast-run");
    let port = {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        closed.local_addr().unwrap().port()
    };
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!("[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    // systemd makes the state directory before starting the service.
    let out = dir.join("chessboardd-broadcast");
    std::fs::create_dir_all(&out).unwrap();
    let log = dir.join("stderr");
    let mut child = broadcast_command(&config, &out)
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let early = child.try_wait().unwrap();
    if early.is_none() {
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    }
    let status = exit_within(&mut child, Duration::from_secs(5));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        early.is_none(),
        "stopped after less than 1 s ({early:?}):\n{text}"
    );
    assert_eq!(
        status.map(|s| s.code()),
        Some(Some(0)),
        "SIGTERM: exit 0 (None: still running after 5 s):\n{text}"
    );
    // The broker came from the config named on the command line.
    assert!(
        text.contains(&format!("mqtt://127.0.0.1:{port}")),
        "no broker in the log:\n{text}"
    );
}

/// A config without a broker, or with a wrong one, is exit status 78, which the unit does not
/// restart after (RestartPreventExitStatus=78).
#[test]
fn broadcast_without_a_broker_exits_78() {
    assert_eq!(broadcast_one("Service.RestartPreventExitStatus"), "78");
    let dir = scratch("broadcast-78");
    let out = dir.join("chessboardd-broadcast");
    std::fs::create_dir_all(&out).unwrap();
    for (name, config) in [
        ("no-url", "[mqtt]\ntopic_prefix = \"club\"\n"),
        ("empty-url", "[mqtt]\nurl = \"\"\n"),
        ("bad-url", "[mqtt]\nurl = \"http://127.0.0.1\"\n"),
    ] {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, config).unwrap();
        let mut child = broadcast_command(&path, &out)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = exit_within(&mut child, Duration::from_secs(5));
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(
            status.map(|s| s.code()),
            Some(Some(78)),
            "{name}: exit 78 (None: still running after 5 s):\n{err}"
        );
    }
}

/// The .deb and `make install` ship the broadcast unit but neither enables nor starts it.
#[test]
fn broadcast_is_not_enabled_by_the_deb_or_make_install() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .unwrap()
        .parse::<toml::Table>()
        .unwrap();
    let units = manifest["package"]["metadata"]["deb"]["systemd-units"]
        .as_array()
        .expect("systemd-units: one entry per unit");
    let entry = |name: &str| {
        units
            .iter()
            .find(|u| u.get("unit-name").and_then(|n| n.as_str()) == Some(name))
            .unwrap_or_else(|| panic!("no systemd-units entry for {name}"))
    };
    // An entry without a unit name applies to every unit in the package.
    assert!(
        units.iter().all(|u| u.get("unit-name").is_some()),
        "{units:?}"
    );
    let flag = |name: &str, key: &str| entry(name).get(key).and_then(|v| v.as_bool());
    assert_eq!(flag("chessboardd-broadcast", "enable"), Some(false));
    assert_eq!(flag("chessboardd-broadcast", "start"), Some(false));
    assert_eq!(flag("chessboardd", "enable"), Some(true));
    assert_eq!(flag("chessboardd", "start"), Some(true));

    let makefile =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Makefile")).unwrap();
    assert!(
        makefile.contains("systemd/chessboardd-broadcast.service")
            && makefile.contains("$(UNITDIR)/chessboardd-broadcast.service"),
        "make install installs the broadcast unit"
    );
    // `systemctl enable` and `start` appear only in advice printed, never run.
    for line in makefile.lines() {
        if line.contains("systemctl enable") || line.contains("systemctl start") {
            assert!(line.trim_start().starts_with("echo "), "{line}");
        }
    }
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
