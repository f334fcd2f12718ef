//! A move that was made is never lost (the real daemon binary): a journal damaged in the middle,
//! with DOS line ends or blocks of NULs is taken up again from every line that holds; one the
//! daemon may not read stops it with a message naming the file and the permission; a full disk
//! keeps every move in memory until the space comes back.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chessboardd::pgn;
use chessboardd::record::{line, Recorded, JOURNAL};
use shakmaty::{CastlingMode, Position};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chessboardd"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-jrn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// The first game of Kasparov - Deep Blue 1997 (89 plies, no mate: it stays unfinished), its
/// first `plies` plies as SAN.
fn kasparov(plies: usize) -> Vec<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/kasparov-deep-blue-1997.pgn");
    let game = pgn::parse(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .remove(0);
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .take(plies)
        .map(|m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
        .collect()
}

/// A PGN file of these moves, for the simulated board.
fn pgn_file(dir: &Path, sans: &[String]) -> PathBuf {
    let mut text = String::from("[Event \"t\"]\n\n");
    for (i, san) in sans.iter().enumerate() {
        if i % 2 == 0 {
            text.push_str(&format!("{}. ", i / 2 + 1));
        }
        text.push_str(san);
        text.push(' ');
    }
    text.push_str("*\n");
    let path = dir.join("game.pgn");
    std::fs::write(&path, text).unwrap();
    path
}

fn sans(pgn_text: &str) -> Vec<String> {
    let game = pgn::parse(pgn_text).unwrap().remove(0);
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .map(|m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
        .collect()
}

/// The journal of a game of these moves, with clocks, as the daemon writes it.
fn journal_of(sans: &[String]) -> String {
    let mut r = Recorded::new(
        chessboardd::record::initial_fen(),
        "2026.11.30".into(),
        "10:00:00".into(),
        Some("5400+30".into()),
    );
    let mut pos = shakmaty::Chess::default();
    for (i, san) in sans.iter().enumerate() {
        let m = san
            .parse::<shakmaty::san::San>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        r.moves.push((
            m.to_uci(CastlingMode::Standard).to_string(),
            Some((5_400_000 - i as i64 * 1000, 5_400_000 - i as i64 * 900)),
        ));
        pos.play_unchecked(m);
    }
    r.entries().iter().map(line).collect()
}

/// The daemon's output lines as they come, collected by a thread.
struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    fn follow(from: impl std::io::Read + Send + 'static) -> Lines {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let to = lines.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(from).lines().map_while(Result::ok) {
                to.lock().unwrap().push(l);
            }
        });
        Lines(lines)
    }

    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn text(&self) -> String {
        self.all().join("\n")
    }

    /// Waits (up to `secs`) until a line contains `what`.
    fn wait_for(&self, what: &str, secs: u64) -> bool {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if self.all().iter().any(|l| l.contains(what)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The events (JSON lines).
    fn events(&self) -> Vec<serde_json::Value> {
        self.all()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// What was said (the text of `say` events).
    fn said(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter_map(|e| e["text"].as_str().map(str::to_string))
            .collect()
    }
}

/// Starts the daemon on a board that is not there (it waits for it) with `state`, until it
/// has taken up a game or started one; returns its events and its log once it is stopped.
fn start_on(state: &Path) -> (Lines, String) {
    let mut d = bin()
        .args(["run", "--speech", "text", "--events-json"])
        .args(["--board", "dgt:/nonexistent/board"])
        .arg("--state-dir")
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = Lines::follow(d.stdout.take().unwrap());
    let err = Lines::follow(d.stderr.take().unwrap());
    let up = out.wait_for("\"type\":\"resumed\"", 20) || out.wait_for("\"game_start\"", 1);
    std::thread::sleep(Duration::from_millis(300));
    signal(&d, libc::SIGTERM);
    let status = d.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(up && status.success(), "{}\n{}", out.text(), err.text());
    (out, err.text())
}

fn games_list(state: &Path) -> String {
    let o = bin()
        .args(["games", "--state-dir", state.to_str().unwrap()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn games_pgn(state: &Path) -> String {
    let o = bin()
        .args([
            "games",
            "--state-dir",
            state.to_str().unwrap(),
            "--pgn",
            "1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn resumed_plies(events: &Lines) -> Option<u64> {
    events
        .events()
        .iter()
        .find(|e| e["type"] == "resumed")
        .and_then(|e| e["plies"].as_u64())
}

/// The byte range of line `n` (from 1).
fn nth_line(text: &[u8], n: usize) -> std::ops::Range<usize> {
    let start: usize = text
        .split_inclusive(|b| *b == b'\n')
        .take(n - 1)
        .map(<[u8]>::len)
        .sum();
    let len = text[start..].iter().position(|b| *b == b'\n').unwrap() + 1;
    start..start + len
}

/// The byte range of the journal line that holds `needle`.
fn line_with(text: &[u8], needle: &str) -> std::ops::Range<usize> {
    let mut at = 0;
    for l in text.split_inclusive(|b| *b == b'\n') {
        if String::from_utf8_lossy(l).contains(needle) {
            return at..at + l.len();
        }
        at += l.len();
    }
    panic!("no line with {needle}");
}

/// The issue: one damaged line in the middle of a 78-ply game set the whole game aside. Now
/// the journal the daemon itself wrote, with a flipped bit in ply 40's line, is taken up again
/// whole: the lost move is found again from the positions around it; the journal as it was is
/// kept beside it; `games` lists the game even before the daemon repairs it; and the player
/// hears that the record was repaired.
#[test]
fn a_damaged_line_in_the_middle_loses_only_itself() {
    let dir = scratch("damaged");
    let state = dir.join("state");
    let played = kasparov(78);
    let game = pgn_file(&dir, &played);
    let mut d = bin()
        .args(["run", "--board", &format!("sim:{}", game.display())])
        .args(["--speed", "20", "--speech", "text", "--events-json"])
        .arg("--state-dir")
        .arg(&state)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::read_to_string(state.join(JOURNAL))
        .map_or(0, |j| j.matches("\"k\":\"move\"").count())
        < 78
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the game was not recorded"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    signal(&d, libc::SIGTERM);
    assert!(d.wait().unwrap().success());
    let mut bytes = std::fs::read(state.join(JOURNAL)).unwrap();
    // Line 41: the start, then ply 40.
    let ply40 = nth_line(&bytes, 41);
    assert!(String::from_utf8_lossy(&bytes[ply40.clone()]).contains("\"k\":\"move\""));
    bytes[ply40.start + 20] ^= 0x08;
    std::fs::write(state.join(JOURNAL), &bytes).unwrap();
    // `games` reads it as the daemon will take it up: one game, whole.
    let listed = games_list(&state);
    assert_eq!(
        listed.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{listed}"
    );
    assert_eq!(sans(&games_pgn(&state)), played, "before the daemon");
    let (events, log) = start_on(&state);
    assert_eq!(resumed_plies(&events), Some(78), "{}\n{log}", events.text());
    assert!(
        events.said().iter().any(|t| t == "Aufzeichnung repariert"),
        "{:?}",
        events.said()
    );
    assert!(
        log.contains("line(s) 41") && log.contains("repaired") && log.contains("damaged-1"),
        "{log}"
    );
    assert_eq!(
        std::fs::read(state.join("journal.jsonl.damaged-1")).unwrap(),
        bytes,
        "the journal as it was is kept"
    );
    assert_eq!(sans(&games_pgn(&state)), played);
    let _ = std::fs::remove_dir_all(&dir);
}

/// DOS line ends (the journal went through an editor or a copy that writes CR LF) are not
/// damage: the game is taken up whole, nothing is said to be repaired, nothing kept aside.
#[test]
fn crlf_journal_resumes() {
    let dir = scratch("crlf");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let played = kasparov(78);
    let journal = journal_of(&played).replace('\n', "\r\n");
    std::fs::write(state.join(JOURNAL), &journal).unwrap();
    let (events, log) = start_on(&state);
    assert_eq!(resumed_plies(&events), Some(78), "{}\n{log}", events.text());
    assert!(
        !events.said().iter().any(|t| t.contains("repariert")),
        "{:?}",
        events.said()
    );
    assert!(!state.join("journal.jsonl.damaged-1").exists());
    assert!(!std::fs::read_to_string(state.join(JOURNAL))
        .unwrap()
        .contains('\r'));
    assert_eq!(sans(&games_pgn(&state)), played);
    let _ = std::fs::remove_dir_all(&dir);
}

/// NULs as a filesystem leaves them after a power cut: a block between two lines, a block over
/// two whole move lines in the middle, and a block at the end. Every line outside them is
/// kept, the two plies under the NULs are found again, and the game is taken up whole.
#[test]
fn nul_block_is_salvaged() {
    let dir = scratch("nul");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let played = kasparov(78);
    let mut bytes = journal_of(&played).into_bytes();
    // Plies 50 and 51 under NULs (their newline between them too).
    let (a, b) = (
        line_with(&bytes, "\"ply\":50,"),
        line_with(&bytes, "\"ply\":51,"),
    );
    bytes[a.start..b.end - 1].fill(0);
    // A page of NULs before ply 20's line, and NULs at the end.
    let at = line_with(&bytes, "\"ply\":20,").start;
    bytes.splice(at..at, [0u8; 4096]);
    bytes.extend([0u8; 3000]);
    std::fs::write(state.join(JOURNAL), &bytes).unwrap();
    let (events, log) = start_on(&state);
    assert_eq!(resumed_plies(&events), Some(78), "{}\n{log}", events.text());
    assert!(
        log.contains("2 plies found again") && log.contains("0 entries lost"),
        "{log}"
    );
    assert!(
        events.said().iter().any(|t| t == "Aufzeichnung repariert"),
        "{:?}",
        events.said()
    );
    assert_eq!(sans(&games_pgn(&state)), played);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A journal the daemon may not read (the service runs as `chessboardd`; someone ran the daemon
/// by hand as root and left the journal root's): the daemon does not start a new game over
/// it. It exits 77 with a message naming the file, the permission and what to do, says that
/// the record cannot be read, and leaves the journal as it is.
#[test]
fn unreadable_journal_names_path_and_permission() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = scratch("unreadable");
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let journal = state.join(JOURNAL);
    let text = journal_of(&kasparov(10));
    std::fs::write(&journal, &text).unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut cmd = bin();
    cmd.args(["run", "--speech", "text", "--events-json"])
        .args(["--board", "dgt:/nonexistent/board"])
        .arg("--state-dir")
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Root reads anything: the daemon runs as `nobody`, in a directory of its own, and
        // the journal stays root's.
        let nobody = 65534;
        let st = std::ffi::CString::new(state.to_str().unwrap()).unwrap();
        // SAFETY: chown on a path we made.
        assert_eq!(unsafe { libc::chown(st.as_ptr(), nobody, nobody) }, 0);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd.uid(nobody).gid(nobody);
    } else {
        std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let mut d = cmd.spawn().unwrap();
    let out = Lines::follow(d.stdout.take().unwrap());
    let err = Lines::follow(d.stderr.take().unwrap());
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = d.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = d.kill();
            let _ = d.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(100));
    let log = err.text();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(77),
        "exit 77 (None: still running after 10 s, a new game started)\n{log}"
    );
    assert!(
        log.contains(&journal.display().to_string())
            && log.to_lowercase().contains("permission denied")
            && log.contains("chown")
            && log.contains("runs as user"),
        "{log}"
    );
    assert!(
        out.said().iter().any(|t| t == "Aufzeichnung nicht lesbar"),
        "{}",
        out.text()
    );
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap(),
        text,
        "untouched"
    );
    let others: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("journal") && n != JOURNAL)
        .collect();
    assert!(others.is_empty(), "{others:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small tmpfs mounted for a test, unmounted when done.
struct Mount(PathBuf);

impl Mount {
    /// `None` (with the reason) where mounting is not allowed.
    fn tmpfs(dir: &Path, size: &str) -> Result<Mount, String> {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).trim().to_string());
        }
        Ok(Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the filesystem of `dir` with one file until it is full.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = [0x55u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
    path
}

/// The issue: on a full disk, moves were announced but not written, with one log line. Now, on
/// a 1 MB tmpfs filled with a file a few moves into a game played through the real daemon:
/// "Speicher voll" is said once, the game goes on, every move waits in memory; the file
/// removed after the game's last move, the retry writes them all ("Speicher wieder frei",
/// once), and `games` shows the whole game.
#[test]
fn full_disk_keeps_every_move_and_writes_it_later() {
    let dir = scratch("full");
    let state = dir.join("state");
    let mount = match Mount::tmpfs(&state, "1m") {
        Ok(m) => m,
        Err(why) => {
            println!("skipped: cannot mount a tmpfs here ({why}); run as root to test a full disk");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
    };
    let played = kasparov(89);
    let game = pgn_file(&dir, &played);
    let mut d = bin()
        .args(["run", "--board", &format!("sim:{}", game.display())])
        .args(["--speed", "10", "--speech", "text", "--events-json"])
        .arg("--state-dir")
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = Lines::follow(d.stdout.take().unwrap());
    let err = Lines::follow(d.stderr.take().unwrap());
    assert!(out.wait_for("\"ply\":4,", 30), "{}", err.text());
    let filler = fill(&state);
    // The game goes on to its last move; the disk refuses the journal at its next page.
    assert!(
        out.wait_for("\"ply\":89,", 60),
        "{}\n{}",
        out.text(),
        err.text()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        out.said().iter().any(|t| t == "Speicher voll"),
        "{:?}\n{}",
        out.said(),
        err.text()
    );
    let moves_on_disk = || {
        std::fs::read_to_string(state.join(JOURNAL))
            .map_or(0, |j| j.matches("\"k\":\"move\"").count())
    };
    let before = moves_on_disk();
    assert!(before < 89, "the disk took every move: {before}");
    // Space again: the retry writes what waited, without another move to prompt it.
    std::fs::remove_file(filler).unwrap();
    let t0 = Instant::now();
    while moves_on_disk() < 89 && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(moves_on_disk(), 89, "{}", err.text());
    assert!(out.wait_for("Speicher wieder frei", 5), "{:?}", out.said());
    signal(&d, libc::SIGTERM);
    assert!(d.wait().unwrap().success());
    let said = out.said();
    assert_eq!(
        said.iter().filter(|t| *t == "Speicher voll").count(),
        1,
        "{said:?}"
    );
    assert_eq!(
        said.iter().filter(|t| *t == "Speicher wieder frei").count(),
        1,
        "{said:?}"
    );
    assert!(err.text().contains("the disk is full"), "{}", err.text());
    let text = std::fs::read(state.join(JOURNAL)).unwrap();
    let read = chessboardd::record::parse(&text);
    assert!(read.damaged.is_empty() && !read.torn);
    assert_eq!(sans(&games_pgn(&state)), played);
    drop(mount);
    let _ = std::fs::remove_dir_all(&dir);
}
