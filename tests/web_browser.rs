//! The live web view (`run --web`) in a real browser: Debian's chromium, headless, loads the page
//! while a simulated board plays a game. The DOM it renders must show the position, the last
//! move, the move list, whose move it is and the clocks as `/api/state` reports them (read by the
//! test just before and after, so a move made in between is allowed for); a page kept open for a
//! few seconds must follow the game through the event stream and write the moves' `say` texts
//! into its live region; a screenshot is kept: target/web-artefacts/board.png (with the DOM dumps
//! and the daemon's log).
//!
//! Needs chromium: `make test` installs it. Without it the test fails; it never passes silently.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

const GAME: &str = "kasparov-deep-blue-1997.pgn";
/// Flags for every chromium run: headless, no sandbox (containers, root), no GPU, no /dev/shm
/// (small in containers), nothing on first start.
const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
];
/// The page opens its event stream 1 s after the first render; dumps and screenshots taken with
/// a virtual time budget below that see the first render and do not wait for the never-ending
/// stream (virtual time stands still while a request is open).
const SNAPSHOT: &[&str] = &[
    "--virtual-time-budget=500",
    "--run-all-compositor-stages-before-draw",
];

fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Debian's chromium, or a failure that says how to get it.
fn chromium() -> PathBuf {
    let mut dirs = vec![PathBuf::from("/usr/bin")];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    for dir in dirs {
        for name in ["chromium", "chromium-browser"] {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "chromium is not installed, and this test drives the web view in a real browser: \
         run `make test` (it installs Debian's chromium through scripts/deps.sh), \
         or `sudo apt-get install chromium`"
    );
}

/// The daemon; stopped with SIGTERM (SIGKILL after 5 s) when dropped, also when the test fails.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the pid of our own child, not yet reaped.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn read_head(s: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
        if s.read(&mut b)? == 0 {
            break;
        }
        head.push(b[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// GET `path` from 127.0.0.1:`port`: the body of a 200 answer.
fn http_get(port: u16, path: &str) -> Result<String, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&buf);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no HTTP head")?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(head.lines().next().unwrap_or("").to_string());
    }
    Ok(body.to_string())
}

fn state(port: u16) -> Value {
    serde_json::from_str(&http_get(port, "/api/state").unwrap()).unwrap()
}

fn moves(state: &Value) -> &Vec<Value> {
    state["moves"].as_array().unwrap()
}

/// Runs headless chromium on `url` with `flags`: its standard output (the DOM with --dump-dom).
/// Its process group is killed when it takes longer than `limit`.
fn run_chromium(bin: &Path, flags: &[&str], url: &str, limit: Duration) -> Result<String, String> {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let profile = std::env::temp_dir().join(format!(
        "chessboardd-web-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let mut child = Command::new(bin)
        .args(HEADLESS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(flags)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let t = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if t.elapsed() > limit {
            // SAFETY: the process group of our own child (process_group(0)), not yet reaped.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let _ = std::fs::remove_dir_all(&profile);
    let err: Vec<&str> = err.lines().filter(|l| !l.contains("dbus")).collect();
    match status {
        Some(s) if s.success() => Ok(out),
        Some(s) => Err(format!("chromium {s}: {}", err.join("\n"))),
        None => Err(format!("chromium took over {limit:?}: {}", err.join("\n"))),
    }
}

/// The text from the first `start` to the next `end` after it.
fn section<'a>(html: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = html.find(start)?;
    let j = html[i..].find(end)?;
    Some(&html[i..i + j])
}

/// Every start tag `<name ...>` in `html`.
fn tags<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    html.match_indices(&open)
        .filter_map(|(i, _)| html[i..].find('>').map(|j| &html[i..i + j]))
        .collect()
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..].split('"').next()?.to_string())
}

/// The text of an element, tags removed.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

/// The text of the element whose start tag holds `start`, up to `end`.
fn content(html: &str, start: &str, end: &str) -> Option<String> {
    let s = section(html, start, end)?;
    Some(text(&s[s.find('>')? + 1..]))
}

/// The pieces of a FEN's placement: ("e1", 'K'), sorted.
fn placement(fen: &str) -> Vec<(String, char)> {
    let mut out = Vec::new();
    for (i, row) in fen.split(' ').next().unwrap().split('/').enumerate() {
        let mut file = 0u8;
        for c in row.chars() {
            match c.to_digit(10) {
                Some(n) => file += n as u8,
                None => {
                    out.push((format!("{}{}", (b'a' + file) as char, 8 - i), c));
                    file += 1;
                }
            }
        }
    }
    out.sort();
    out
}

/// Whether `t` reads like a clock: m:ss, or 0:0s.t under ten seconds.
fn is_clock(t: &str) -> bool {
    let Some((m, s)) = t.split_once(':') else {
        return false;
    };
    let s = s.split('.').next().unwrap();
    !m.is_empty()
        && m.chars().all(|c| c.is_ascii_digit())
        && s.len() == 2
        && s.chars().all(|c| c.is_ascii_digit())
}

/// What a dumped page showed.
struct Page {
    plies: usize,
    pieces: Vec<(String, char)>,
    live: String,
}

/// Checks a page dumped between the states `before` and `after`: it shows the game after some
/// ply n between the two (n of `after`'s moves), as the test replays it with shakmaty.
fn check_page(dom: &str, before: &Value, after: &Value) -> Result<Page, String> {
    let board = section(dom, "<svg", "</svg>").ok_or("no <svg>")?;
    let svg = tags(board, "svg").into_iter().next().ok_or("no svg tag")?;
    if attr(svg, "id").as_deref() != Some("board") || attr(svg, "role").as_deref() != Some("img") {
        return Err(format!("the board svg lacks id=board role=img: {svg}"));
    }
    let fen = attr(svg, "data-fen").filter(|f| !f.is_empty());
    let fen = fen.ok_or("the page has not drawn a position (no data-fen)")?;
    let label = attr(svg, "aria-label").unwrap_or_default();
    if !label.contains("White: King ") || !label.contains("Black: King ") {
        return Err(format!(
            "the board's aria-label does not describe it: {label:?}"
        ));
    }
    let list = section(dom, "<ol id=\"moves\"", "</ol>").ok_or("no <ol id=moves>")?;
    let sans: Vec<String> = tags(list, "span")
        .into_iter()
        .filter_map(|t| attr(t, "data-san"))
        .collect();
    let n = sans.len();
    let (a, b) = (moves(before), moves(after));
    if n < a.len() || n > b.len() {
        return Err(format!(
            "the page shows {n} moves; the daemon had {} before and {} after",
            a.len(),
            b.len()
        ));
    }
    let expected_sans: Vec<&str> = b[..n].iter().map(|m| m["san"].as_str().unwrap()).collect();
    if sans != expected_sans {
        return Err(format!("moves {sans:?}, expected {expected_sans:?}"));
    }
    let fullmoves: std::collections::BTreeSet<u64> = b[..n]
        .iter()
        .map(|m| m["fullmove"].as_u64().unwrap())
        .collect();
    if tags(list, "li").len() != fullmoves.len() {
        return Err(format!(
            "{} <li> for {} full moves",
            tags(list, "li").len(),
            fullmoves.len()
        ));
    }
    if attr(svg, "data-plies") != Some(n.to_string()) {
        return Err(format!("data-plies is not {n}: {svg}"));
    }

    // The position after n plies, replayed from the daemon's start position and moves.
    let start = after["start_fen"].as_str().unwrap();
    let mut pos: Chess = Fen::from_ascii(start.as_bytes())
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    for m in &b[..n] {
        let uci: UciMove = m["uci"].as_str().unwrap().parse().unwrap();
        let m = uci.to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    let expected = placement(&Fen::from_position(&pos, EnPassantMode::Legal).to_string());
    if placement(&fen) != expected {
        return Err(format!(
            "data-fen {fen} is not the position after {n} plies"
        ));
    }
    let mut drawn: Vec<(String, char)> = tags(board, "g")
        .into_iter()
        .filter_map(|t| {
            let piece = attr(t, "data-piece")?.chars().next()?;
            Some((attr(t, "data-square")?, piece))
        })
        .collect();
    drawn.sort();
    if drawn != expected {
        return Err(format!(
            "pieces drawn {drawn:?}, expected {expected:?} (after {n} plies)"
        ));
    }
    if n > 0 {
        let uci = b[n - 1]["uci"].as_str().unwrap();
        let mut marked: Vec<String> = tags(board, "rect")
            .into_iter()
            .filter(|t| attr(t, "class").as_deref() == Some("last"))
            .filter_map(|t| attr(t, "data-square"))
            .collect();
        marked.sort();
        let mut want = vec![uci[0..2].to_string(), uci[2..4].to_string()];
        want.sort();
        if marked != want {
            return Err(format!("last move {uci} marked on {marked:?}"));
        }
    }

    let over = !after["result"].is_null() && n == b.len();
    let turn = content(dom, "<p id=\"turn\"", "</p>").ok_or("no #turn")?;
    let side = if pos.turn() == Color::White {
        "White to move"
    } else {
        "Black to move"
    };
    if !over && turn != side {
        return Err(format!("#turn says {turn:?}, expected {side:?}"));
    }
    section(dom, "id=\"result\"", "</p>").ok_or("no #result")?;
    let mut running = Vec::new();
    for color in ["white", "black"] {
        let clock = section(dom, &format!("id=\"clock-{color}\""), "</div>").ok_or("no clock")?;
        let shown = content(clock, "class=\"t\"", "</span>").unwrap_or_default();
        if !is_clock(&shown) {
            return Err(format!("{color}'s clock shows {shown:?}"));
        }
        if attr(clock, "data-running").as_deref() == Some("true") {
            running.push(color);
        }
    }
    let to_move = if pos.turn() == Color::White {
        "white"
    } else {
        "black"
    };
    if !over && n >= 2 && running != [to_move] {
        return Err(format!("running clocks {running:?}, {to_move} to move"));
    }
    let live_tag = tags(dom, "p")
        .into_iter()
        .find(|t| attr(t, "id").as_deref() == Some("live"))
        .ok_or("no #live")?;
    if attr(live_tag, "aria-live").as_deref() != Some("polite") {
        return Err(format!("#live is not polite: {live_tag}"));
    }
    // The announcements are German (Appendix F): a screen reader reads them with a German voice.
    if attr(live_tag, "lang").as_deref() != after["lang"].as_str() {
        return Err(format!(
            "#live's lang is not the state's {}: {live_tag}",
            after["lang"]
        ));
    }
    let live = content(dom, "<p id=\"live\"", "</p>").unwrap_or_default();
    Ok(Page {
        plies: n,
        pieces: drawn,
        live,
    })
}

/// Dumps `url` and checks it against the daemon's state, up to three times (a loaded machine can
/// be slow to start chromium). The DOM is kept as target/web-artefacts/`name`.html.
fn dump_and_check(bin: &Path, url: &str, port: u16, flags: &[&str], name: &str) -> (Page, Value) {
    let mut errors = Vec::new();
    for attempt in 1..=3 {
        let t = Instant::now();
        let before = state(port);
        let dom = run_chromium(bin, flags, url, Duration::from_secs(30));
        let after = state(port);
        let dom = match dom {
            Ok(dom) => dom,
            Err(e) => {
                errors.push(format!("attempt {attempt}: {e}"));
                continue;
            }
        };
        std::fs::write(artefacts().join(format!("{name}.html")), &dom).unwrap();
        match check_page(&dom, &before, &after) {
            Ok(page) => {
                eprintln!(
                    "{name}: {} plies, {} pieces, in {:.1} s",
                    page.plies,
                    page.pieces.len(),
                    t.elapsed().as_secs_f64()
                );
                return (page, before);
            }
            Err(e) => errors.push(format!("attempt {attempt}: {e}")),
        }
    }
    panic!("{name}: the page is not right:\n{}", errors.join("\n"));
}

/// A proxy in front of the daemon that serves its page with one image more, which takes `hold`
/// to load: chromium's --dump-dom waits for the load event, so the page runs that long in real
/// time, its event stream open, before its DOM is dumped.
fn slow_proxy(daemon: u16, hold: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            std::thread::spawn(move || proxy(client, daemon, hold));
        }
    });
    port
}

fn proxy(mut client: TcpStream, daemon: u16, hold: Duration) -> std::io::Result<()> {
    let head = read_head(&mut client)?;
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    if path == "/slow.png" {
        std::thread::sleep(hold);
        return client.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    }
    if path == "/" {
        let page = http_get(daemon, "/").map_err(std::io::Error::other)?;
        let page = page.replacen("</body>", "<img src=\"/slow.png\" alt=\"\"></body>", 1);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            page.len()
        );
        return client.write_all((head + &page).as_bytes());
    }
    let mut up = TcpStream::connect(("127.0.0.1", daemon))?;
    write!(
        up,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    std::io::copy(&mut up, &mut client).map(|_| ())
}

#[test]
fn the_web_view_shows_the_game_in_chromium() {
    let started = Instant::now();
    let bin = chromium();
    let port = free_port();
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(GAME);
    let log = std::fs::File::create(artefacts().join("daemon.log")).unwrap();
    let daemon = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["run", "--board", &format!("sim:{}", pgn.display())])
            .args(["--speech", "text", "--web", &format!("127.0.0.1:{port}")])
            .args(["--speed", "4", "--time-control", "300+2"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let t = Instant::now();
    loop {
        let ready = http_get(port, "/api/state")
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .is_some_and(|s| s["fen"].is_string());
        if ready {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the daemon's web view did not answer on port {port} (see target/web-artefacts/daemon.log)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/");
    let dump: Vec<&str> = SNAPSHOT.iter().copied().chain(["--dump-dom"]).collect();

    // Early in the game: the board as the page first draws it.
    let (early, _) = dump_and_check(&bin, &url, port, &dump, "early");
    assert!(early.pieces.len() >= 30, "{} pieces", early.pieces.len());

    // The page kept open: it follows the game through the event stream and announces the moves.
    let proxy = slow_proxy(port, Duration::from_secs(4));
    let plain = ["--dump-dom"];
    let proxied = format!("http://127.0.0.1:{proxy}/");
    let (live, before) = dump_and_check(&bin, &proxied, port, &plain, "live");
    let after = state(port);
    let new = &moves(&after)[moves(&before).len()..];
    assert!(
        new.iter()
            .any(|m| m["say"].as_str() == Some(live.live.as_str())),
        "#live says {:?}, not a move made while the page was open ({:?})",
        live.live,
        new.iter().map(|m| &m["say"]).collect::<Vec<_>>()
    );

    // Later: the move list has grown and the pieces have moved.
    let t = Instant::now();
    while moves(&state(port)).len() < early.plies + 12 {
        assert!(t.elapsed() < Duration::from_secs(20), "the game stopped");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (later, _) = dump_and_check(&bin, &url, port, &dump, "later");
    assert!(
        later.plies >= early.plies + 12,
        "{} then {}",
        early.plies,
        later.plies
    );
    assert_ne!(early.pieces, later.pieces, "the pieces have not moved");

    // A screenshot, kept as an artefact.
    let png = artefacts().join("board.png");
    let _ = std::fs::remove_file(&png);
    let mut shot: Vec<String> = SNAPSHOT.iter().map(|s| s.to_string()).collect();
    shot.push(format!("--screenshot={}", png.display()));
    shot.push("--window-size=1200,900".to_string());
    let shot: Vec<&str> = shot.iter().map(String::as_str).collect();
    run_chromium(&bin, &shot, &url, Duration::from_secs(30)).unwrap();
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "{} is {size} bytes", png.display());
    eprintln!(
        "screenshot {} ({size} bytes); {:.1} s in all",
        png.display(),
        started.elapsed().as_secs_f64()
    );
    drop(daemon);
}
