//! The live web view (`run --web`) in a real browser: Debian's chromium, headless.
//!
//! - While a simulated board plays a game, the DOM it renders must show the position, the last
//!   move, the move list, whose move it is and the clocks as `/api/state` reports them (read by
//!   the test just before and after, so a move made in between is allowed for); a page kept open
//!   for a few seconds must follow the game through the event stream and write the moves' `say`
//!   texts into its live region; a screenshot is kept: target/web-artefacts/board.png.
//! - As a tournament broadcast shows a game: the players from `[game]`, at the start, at a check
//!   and at the end, with the page's script and without it (the first view is drawn on the
//!   server); screenshots kept: target/web-artefacts/start.png, check.png, end.png.
//!
//! - A page following a correction (events fed to the page by the test, see
//!   `a_page_follows_a_correction_and_reads_it_once`): the corrected move list, the correction
//!   read once in the live region and its moves not again.
//!
//! Every DOM dump and the daemons' logs are kept beside the screenshots. A script error on the
//! page (chromium's console, or the page's own error marker) fails the test.
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
    // The page's console on standard error: an uncaught script error fails the run.
    "--enable-logging=stderr",
    "--v=0",
];
/// The page opens its event stream 1 s after the first render; dumps and screenshots taken with
/// a virtual time budget below that see the first render and do not wait for the never-ending
/// stream (virtual time stands still while a request is open).
const SNAPSHOT: &[&str] = &[
    "--virtual-time-budget=500",
    "--run-all-compositor-stages-before-draw",
];

/// The tests of this file one at a time: each runs a daemon and chromium, and the machine may
/// be small.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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

/// The daemon (or the simulated board); stopped with SIGTERM (SIGKILL after 5 s) when dropped, also when the test fails.
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
    if let Some(e) = err
        .iter()
        .find(|l| l.contains("CONSOLE") && l.contains("Uncaught"))
    {
        return Err(format!("a script error on the page: {e}"));
    }
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

/// HTML text with its character references read (those a DOM dump writes).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The page's words in the language `lang`, from the page's own data file.
fn words(lang: &str) -> toml::Value {
    let all: toml::Value = toml::from_str(include_str!("../src/web/labels.toml")).unwrap();
    all.get(lang).or_else(|| all.get("en")).unwrap().clone()
}

fn word(words: &toml::Value, key: &str) -> String {
    words[key].as_str().unwrap().to_string()
}

/// A clock as shown (m:ss, or 0:0s.t under ten seconds) in milliseconds.
fn clock_ms(t: &str) -> Option<i64> {
    let (m, s) = t.split_once(':')?;
    let (s, tenths) = match s.split_once('.') {
        Some((s, t)) => (s, t.parse::<i64>().ok()?),
        None => (s, 0),
    };
    if m.is_empty() || s.len() != 2 {
        return None;
    }
    Some(m.parse::<i64>().ok()? * 60_000 + s.parse::<i64>().ok()? * 1000 + tenths * 100)
}

/// What a dumped page showed.
struct Page {
    plies: usize,
    pieces: Vec<(String, char)>,
    live: String,
    check: Option<String>,
    last: Vec<String>,
    result: String,
    names: [String; 2],
}

/// How the page was loaded: with its script (which takes over from the served state) or
/// without (the first view as the server drew it).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Script {
    On,
    Off,
}

/// Checks a page dumped between the states `before` and `after`: it shows the game after some
/// ply n between the two (n of `after`'s moves), as the test replays it with shakmaty: the
/// pieces, the last move's tint, the check's mark (on the king of the side to move, when it is
/// in check), the moves, whose move, the clocks, the result, the players' names, titles and
/// ratings, in the state's language; and the script ran without an error (or did not run).
fn check_page(dom: &str, before: &Value, after: &Value, script: Script) -> Result<Page, String> {
    let lang = after["lang"].as_str().unwrap_or("en");
    let w = words(lang);
    let root = tags(dom, "html").into_iter().next().ok_or("no <html>")?;
    if attr(root, "lang").as_deref() != Some(lang) {
        return Err(format!(
            "the page is not in the state's language {lang}: {root}"
        ));
    }
    if dom.contains("data-pwned") {
        return Err("a name from the config ran as a script".into());
    }
    let body = tags(dom, "body").into_iter().next().ok_or("no <body>")?;
    if let Some(e) = attr(body, "data-script-error") {
        return Err(format!("the page's script failed: {e}"));
    }
    let ready = attr(body, "data-ready").unwrap_or_default();
    match script {
        Script::On if ready != "true" => {
            return Err(format!(
                "the script has not drawn the state (data-ready={ready:?})"
            ))
        }
        Script::Off if ready != "server" => {
            return Err(format!("a page without script says data-ready={ready:?}"))
        }
        _ => {}
    }
    let board = section(dom, "<svg", "</svg>").ok_or("no <svg>")?;
    let svg = tags(board, "svg").into_iter().next().ok_or("no svg tag")?;
    if attr(svg, "id").as_deref() != Some("board") || attr(svg, "role").as_deref() != Some("img") {
        return Err(format!("the board svg lacks id=board role=img: {svg}"));
    }
    let fen = attr(svg, "data-fen").filter(|f| !f.is_empty());
    let fen = fen.ok_or("the page has not drawn a position (no data-fen)")?;
    let label = unescape(&attr(svg, "aria-label").unwrap_or_default());
    let king = &w["pieces"][0].as_str().unwrap();
    for side in ["white", "black"] {
        let said = format!("{}: {king} ", word(&w, side));
        if !label.contains(&said) {
            return Err(format!("the board's aria-label lacks {said:?}: {label:?}"));
        }
    }
    let list = section(dom, "<ol id=\"moves\"", "</ol>").ok_or("no <ol id=moves>")?;
    let sans: Vec<String> = tags(list, "span")
        .into_iter()
        .filter_map(|t| attr(t, "data-san"))
        .map(|s| unescape(&s))
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
    let current: Vec<&str> = tags(list, "span")
        .into_iter()
        .filter(|t| attr(t, "aria-current").as_deref() == Some("step"))
        .collect();
    if n > 0
        && (current.len() != 1
            || attr(current[0], "data-ply") != b[n - 1]["ply"].as_u64().map(|p| p.to_string()))
    {
        return Err(format!(
            "the current move is not marked as ply {}: {current:?}",
            b[n - 1]["ply"]
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
    let marked = |class: &str| -> Vec<String> {
        let mut v: Vec<String> = tags(board, "rect")
            .into_iter()
            .filter(|t| attr(t, "class").as_deref() == Some(class))
            .filter_map(|t| attr(t, "data-square"))
            .collect();
        v.sort();
        v
    };
    let last = marked("last");
    let want: Vec<String> = match n {
        0 => vec![],
        _ => {
            let uci = b[n - 1]["uci"].as_str().unwrap();
            let mut v = vec![uci[0..2].to_string(), uci[2..4].to_string()];
            v.sort();
            v
        }
    };
    if last != want {
        return Err(format!(
            "the last move is tinted on {last:?}, expected {want:?}"
        ));
    }
    // The king in check, by the rules (shakmaty), not by the daemon.
    let in_check: Vec<String> = if pos.is_check() {
        pos.board()
            .king_of(pos.turn())
            .map(|k| k.to_string())
            .into_iter()
            .collect()
    } else {
        vec![]
    };
    let check = marked("check");
    if check != in_check {
        return Err(format!(
            "check marked on {check:?}, the king in check is on {in_check:?}"
        ));
    }
    if n == b.len() && after["check"].as_str() != in_check.first().map(String::as_str) {
        return Err(format!(
            "/api/state's check is {}, not {in_check:?}",
            after["check"]
        ));
    }
    let over = !after["result"].is_null() && n == b.len();
    let turn = unescape(&content(dom, "<p id=\"turn\"", "</p>").ok_or("no #turn")?);
    let side = match (over, pos.turn()) {
        (true, _) => word(&w, "game_over"),
        (false, Color::White) => word(&w, "to_move_white"),
        (false, Color::Black) => word(&w, "to_move_black"),
    };
    if turn != side {
        return Err(format!("#turn says {turn:?}, expected {side:?}"));
    }
    let result_tag = tags(dom, "p")
        .into_iter()
        .find(|t| attr(t, "id").as_deref() == Some("result"))
        .ok_or("no #result")?;
    let result = unescape(&content(dom, "<p id=\"result\"", "</p>").unwrap_or_default());
    if over {
        let r = after["result"].as_str().unwrap();
        let who = match after["winner"].as_str() {
            Some("white") => word(&w, "white_wins"),
            Some("black") => word(&w, "black_wins"),
            _ => word(&w, "draw"),
        };
        let reason = w["reasons"][after["reason"].as_str().unwrap()]
            .as_str()
            .unwrap();
        if attr(result_tag, "data-result").as_deref() != Some(r)
            || !result.starts_with(r)
            || !result.contains(&who)
            || !result.contains(reason)
        {
            return Err(format!(
                "#result shows {result:?} ({result_tag}), the game ended {r} {who} {reason}"
            ));
        }
    } else if !result.is_empty() || attr(result_tag, "data-result").as_deref() != Some("") {
        return Err(format!("a result on a game not over: {result:?}"));
    }

    // The players, as the config names them (the state says what it has).
    let mut names = [String::new(), String::new()];
    for (i, color) in ["white", "black"].into_iter().enumerate() {
        let bar =
            section(dom, &format!("id=\"player-{color}\""), "</section>").ok_or("no player bar")?;
        let p = &after["players"][color];
        let name = unescape(&content(bar, "class=\"who-name\"", "</span>").unwrap_or_default());
        let want = p["name"]
            .as_str()
            .map_or_else(|| word(&w, color), str::to_string);
        if name != want {
            return Err(format!("{color} is shown as {name:?}, not {want:?}"));
        }
        for key in ["title", "elo"] {
            let shown = section(bar, &format!("class=\"{key}\""), "</")
                .map(|s| unescape(&text(&s[s.find('>').unwrap() + 1..])));
            if shown.as_deref() != p[key].as_str() {
                return Err(format!(
                    "{color}'s {key} shown {shown:?}, the state has {}",
                    p[key]
                ));
            }
        }
        let score = content(bar, "class=\"score\"", "</span>").unwrap_or_default();
        let want = match (over, after["winner"].as_str()) {
            (false, _) => "",
            (true, None) => "½",
            (true, Some(winner)) if winner == color => "1",
            (true, Some(_)) => "0",
        };
        if score != want {
            return Err(format!(
                "{color}'s score shows {score:?}, expected {want:?}"
            ));
        }
        names[i] = name;
    }
    let title = unescape(&content(dom, "<title", "</title>").ok_or("no <title>")?);
    if !title.contains(&names[0]) || !title.contains(&names[1]) {
        return Err(format!(
            "the title {title:?} does not name the players {names:?}"
        ));
    }
    let event = unescape(&content(dom, "<p id=\"event\"", "</p>").unwrap_or_default());
    for key in ["event", "site", "round", "board", "date"] {
        if let Some(v) = after[key].as_str() {
            if !event.contains(v) {
                return Err(format!("#event {event:?} lacks the {key} {v:?}"));
            }
        }
    }

    // The clocks: the stopped one exactly as the state has it (before or after, or after a move
    // made meanwhile: with increments, a clock between two moves can stand higher than at
    // either end), the running one counted down from it by the time the page has been open (at
    // most a few seconds).
    let mut running = Vec::new();
    for color in ["white", "black"] {
        let clock = section(dom, &format!("id=\"clock-{color}\""), "</div>").ok_or("no clock")?;
        let shown = content(clock, "class=\"t\"", "</span>").unwrap_or_default();
        let ms = clock_ms(&shown).ok_or(format!("{color}'s clock shows {shown:?}"))?;
        let run = attr(clock, "data-running").as_deref() == Some("true");
        if run {
            running.push(color);
        }
        let key = format!("{color}_ms");
        let made = &moves(after)[moves(before).len().min(moves(after).len())..];
        let states: Vec<i64> = [before, after]
            .iter()
            .filter_map(|s| s["clock"][&key].as_i64())
            .chain(made.iter().filter_map(|m| m[&key].as_i64()))
            .collect();
        let (lo, hi) = (*states.iter().min().unwrap(), *states.iter().max().unwrap());
        let slack = if run && script == Script::On {
            5000
        } else {
            1000
        };
        // Shown rounded down to the second (the tenth under ten seconds).
        if ms > hi || ms < lo - slack {
            return Err(format!(
                "{color}'s clock shows {shown} ({ms} ms), the state has {lo}..{hi} ms"
            ));
        }
    }
    let to_move = if pos.turn() == Color::White {
        "white"
    } else {
        "black"
    };
    let state_running: Vec<&str> = after["clock"]["running"].as_str().into_iter().collect();
    if !over && n == b.len() && running != state_running {
        return Err(format!(
            "running clocks {running:?}, the state says {state_running:?}"
        ));
    }
    if !over && n >= 2 && running != [to_move] {
        return Err(format!("running clocks {running:?}, {to_move} to move"));
    }
    if over && !running.is_empty() {
        return Err(format!("a clock runs after the game: {running:?}"));
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
        check: check.first().cloned(),
        last,
        result,
        names,
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
        match check_page(&dom, &before, &after, Script::On) {
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

/// One moment of the game kept: target/web-artefacts/`name`.png (a screenshot), `name`.html
/// (the DOM with the script) and `name`-noscript.html (the DOM as the server drew it, the
/// script off); both DOMs checked against the state read before and after, which must show
/// the same moves (the moment is one where the game stands still). Up to three tries.
fn moment(bin: &Path, port: u16, name: &str) -> (Page, Page, Value) {
    let url = format!("http://127.0.0.1:{port}/");
    let png = artefacts().join(format!("{name}.png"));
    let mut shot: Vec<String> = SNAPSHOT.iter().map(|s| s.to_string()).collect();
    shot.push(format!("--screenshot={}", png.display()));
    shot.push("--window-size=1200,900".to_string());
    let shot: Vec<&str> = shot.iter().map(String::as_str).collect();
    let dump: Vec<&str> = SNAPSHOT.iter().copied().chain(["--dump-dom"]).collect();
    // Chromium does not dump a page whose scripts it was told not to run; the page served with
    // a Content-Security-Policy that forbids every script is the same first view.
    let no_script_url = format!("http://127.0.0.1:{}/", no_script_proxy(port));
    let mut errors = Vec::new();
    for attempt in 1..=3 {
        let _ = std::fs::remove_file(&png);
        let before = state(port);
        let run = |flags: &[&str]| run_chromium(bin, flags, &url, Duration::from_secs(40));
        let (shown, with) = (run(&shot), run(&dump));
        let without = run_chromium(bin, &dump, &no_script_url, Duration::from_secs(40));
        let after = state(port);
        let checked = || -> Result<(Page, Page), String> {
            shown?;
            let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
            if size < 10_000 {
                return Err(format!("{} is {size} bytes", png.display()));
            }
            let (with, without) = (with?, without?);
            std::fs::write(artefacts().join(format!("{name}.html")), &with).unwrap();
            std::fs::write(artefacts().join(format!("{name}-noscript.html")), &without).unwrap();
            if moves(&before).len() != moves(&after).len() {
                return Err("the game moved meanwhile".into());
            }
            let a = check_page(&with, &before, &after, Script::On)
                .map_err(|e| format!("with the script: {e}"))?;
            let b = check_page(&without, &before, &after, Script::Off)
                .map_err(|e| format!("without the script: {e}"))?;
            Ok((a, b))
        };
        match checked() {
            Ok((a, b)) => {
                eprintln!("{name}: {} plies; screenshot {}", a.plies, png.display());
                return (a, b, after);
            }
            Err(e) => errors.push(format!("attempt {attempt}: {e}")),
        }
    }
    panic!("{name}: the page is not right:\n{}", errors.join("\n"));
}

/// A proxy in front of the daemon that serves its page as it is, with a Content-Security-Policy
/// that lets no script run: a browser without JavaScript.
fn no_script_proxy(daemon: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let head = read_head(&mut client)?;
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let page = http_get(daemon, &path).unwrap_or_default();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Security-Policy: script-src 'none'\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    page.len()
                );
                client.write_all((head + &page).as_bytes())
            });
        }
    });
    port
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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// Légal's mate: a check on move 6 (the bishop takes on f7), mate on move 7.
const LEGAL: &str = "[Event \"Légal's mate\"]\n[Result \"1-0\"]\n\n\
    1. e4 e5 2. Nf3 d6 3. Bc4 Bg4 4. Nc3 g6 5. Nxe5 Bxd1 6. Bxf7+ Ke7 7. Nd5# 1-0\n";
/// The black player's name tries to be markup: the page must show it as text.
const BLACK: &str = "Carl <script>document.documentElement.dataset.pwned=1</script>Dahl";

fn wait_for(what: &str, port: u16, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        let s = state(port);
        if done(&s) {
            return s;
        }
        assert!(
            t.elapsed() < limit,
            "{what}: not within {limit:?}; the state: {s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The page as a tournament broadcast shows a game, in chromium: the players from `[game]`
/// (names, title, rating; a name with markup shown as text), the event, round and board, at the
/// start, at a check (the king's square marked, the move tinted) and at the end (the result, the
/// scores); each with and without the page's script; screenshots kept as
/// target/web-artefacts/start.png, check.png and end.png.
///
/// A DGT board simulated on a pseudo-terminal (`chessboardd simulate`) plays Légal's mate; the
/// start is shown before it is plugged in, and it goes silent for a while after the check, so
/// that each moment stands still while chromium looks at it.
#[test]
fn a_broadcast_page_at_the_start_at_a_check_and_at_the_end() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bin = chromium();
    let dir =
        std::env::temp_dir().join(format!("chessboardd-web-broadcast-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("legal.pgn"), LEGAL).unwrap();
    let config = format!(
        "[game]\nevent = \"Club championship\"\nsite = \"Uppsala\"\nround = \"3\"\nboard = \"2\"\n\
         white = \"Anna Berg\"\nwhite_title = \"WGM\"\nwhite_elo = \"2310\"\n\
         black = \"{BLACK}\"\nblack_elo = \"2187\"\n"
    );
    std::fs::write(dir.join("c.toml"), config).unwrap();
    let link = dir.join("board");
    let port = free_port();
    let log = std::fs::File::create(artefacts().join("broadcast-daemon.log")).unwrap();
    let _daemon = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .arg("run")
            .arg("--config")
            .arg(dir.join("c.toml"))
            .arg("--board")
            .arg(format!("dgt:{}", link.display()))
            .args(["--speech", "text", "--web", &format!("127.0.0.1:{port}")])
            .args(["--time-control", "300+2"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let t = Instant::now();
    while http_get(port, "/api/state").is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the daemon's web view did not answer (see target/web-artefacts/broadcast-daemon.log)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = wait_for("the start position", port, Duration::from_secs(20), |s| {
        s["fen"].is_string()
    });
    assert_eq!(s["players"]["black"]["name"], BLACK);
    assert_eq!(s["players"]["white"]["title"], "WGM");
    assert_eq!(s["players"]["black"]["title"], Value::Null);
    assert_eq!(
        (s["event"].as_str(), s["round"].as_str()),
        (Some("Club championship"), Some("3"))
    );

    // The start: no board yet, the position set up.
    let (start, bare, _) = moment(&bin, port, "start");
    assert_eq!(
        (start.plies, start.pieces.len(), bare.pieces.len()),
        (0, 32, 32)
    );
    assert!(start.last.is_empty() && start.check.is_none() && start.result.is_empty());
    assert_eq!(start.names, ["Anna Berg".to_string(), BLACK.to_string()]);

    // The board comes; the board goes silent a second after the check, for 30 s.
    let sim_log = std::fs::File::create(artefacts().join("broadcast-simulate.log")).unwrap();
    let _board = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["simulate", "--protocol", "dgt", "--link"])
            .arg(&link)
            .arg("--pgn")
            .arg(dir.join("legal.pgn"))
            .args(["--speed", "4", "--silence", "11:30"])
            .stdin(Stdio::null())
            .stdout(sim_log.try_clone().unwrap())
            .stderr(sim_log)
            .spawn()
            .unwrap(),
    );
    wait_for("the check (6. Bxf7+)", port, Duration::from_secs(60), |s| {
        moves(s).len() == 11
    });
    let (check, bare, s) = moment(&bin, port, "check");
    assert_eq!(s["check"], "e8");
    assert_eq!(check.check.as_deref(), Some("e8"));
    assert_eq!(bare.check.as_deref(), Some("e8"));
    assert_eq!(check.last, ["c4", "f7"]);
    assert_eq!(bare.last, ["c4", "f7"]);
    // The checks can fail: the same page without its check mark, with a script error, or taken
    // for one without script, is refused.
    let dom = std::fs::read_to_string(artefacts().join("check.html")).unwrap();
    let unmarked = dom.replacen("class=\"check\"", "class=\"gone\"", 1);
    assert!(check_page(&unmarked, &s, &s, Script::On).is_err());
    let failed = dom.replacen("<body ", "<body data-script-error=\"x\" ", 1);
    assert!(check_page(&failed, &s, &s, Script::On).is_err());
    assert!(check_page(&dom, &s, &s, Script::Off).is_err());

    // The end: mate.
    wait_for("the mate (7. Nd5#)", port, Duration::from_secs(90), |s| {
        !s["result"].is_null()
    });
    let (end, bare, s) = moment(&bin, port, "end");
    assert_eq!(
        (s["result"].as_str(), s["reason"].as_str()),
        (Some("1-0"), Some("checkmate"))
    );
    assert_eq!(end.plies, 13);
    assert_eq!(end.check.as_deref(), Some("e7"));
    assert_eq!(end.last, ["c3", "d5"]);
    assert!(end.result.starts_with("1-0") && bare.result.starts_with("1-0"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// One step of a scripted game: the events the page is sent, and the state the server has
/// after them (set before they are sent, as the daemon updates its snapshot before it hands
/// out the events of a batch).
struct Step {
    events: Vec<String>,
    state: String,
}

/// The events and states of a game whose moves are corrected, with the announcements in the
/// page's language (`lang`, the daemon's): 1. e4 e5 2. Nf3 said; a correction: 2. Nc3 (the
/// board showed it); 2... Nc6 said; a correction that withdraws it and puts nothing in its
/// place. Returns the steps and what the live region is to read, in order.
fn corrected_game(lang: &str) -> (Vec<Step>, Vec<String>) {
    use chessboardd::engine::{Event, EventKind};
    use chessboardd::words::{FileWords, Lang, Phrases, Style};
    use serde_json::json;
    use shakmaty::san::{San, SanPlus};

    let phrases = Phrases::new(
        match lang {
            "en" => Lang::En,
            _ => Lang::AppendixF,
        },
        Style::Short,
        FileWords::Phonetic,
    );
    let fen = |pos: &Chess| Fen::from_position(pos, EnPassantMode::Legal).to_string();
    // The moves of `sans` from the start: their events (those from ply `corrected` on marked
    // so) and the state after them, as /api/state has it.
    let game = |sans: &[&str], corrected: u32| -> (Vec<(String, String)>, String) {
        let mut pos = Chess::default();
        let mut events = Vec::new();
        let mut moves = Vec::new();
        for (i, san) in sans.iter().enumerate() {
            let ply = i as u32 + 1;
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            let color = pos.turn();
            let fullmove = pos.fullmoves().get();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let say = phrases.announce(&san, m);
            let e = Event {
                t: 1000 * u64::from(ply),
                kind: EventKind::Move {
                    ply,
                    color,
                    uci: uci.clone(),
                    san: san.to_string(),
                    fen: fen(&pos),
                    say: say.clone(),
                    white_ms: None,
                    black_ms: None,
                    recovered: ply >= corrected,
                    touch_checked: ply < corrected,
                    corrected: ply >= corrected,
                },
            };
            events.push((e.to_json(), say.clone()));
            moves.push(json!({
                "ply": ply, "color": color.to_string(), "san": san.to_string(), "uci": uci,
                "say": say, "fullmove": fullmove, "white_ms": null, "black_ms": null,
            }));
        }
        let nobody = json!({"name": null, "title": null, "elo": null});
        let state = json!({
            "fen": fen(&pos), "start_fen": fen(&Chess::default()), "turn": pos.turn().to_string(),
            "last_move": moves.last().map(|m| m["uci"].clone()), "moves": moves,
            "check": null, "clock": null, "result": null, "reason": null, "winner": null,
            "lang": lang, "players": {"white": nobody, "black": nobody},
            "event": null, "site": null, "round": null, "board": null, "date": null,
        });
        (events, state.to_string())
    };
    let correction = |ply: u32, withdrawn: &[&str], says: &[String]| {
        let say = phrases.correction(says);
        let e = Event {
            t: 10_000 + u64::from(ply),
            kind: EventKind::Correction {
                ply,
                withdrawn: withdrawn.iter().map(|s| s.to_string()).collect(),
                rulings: vec![],
                say: say.clone(),
            },
        };
        (e.to_json(), say)
    };
    let (wrong, wrong_state) = game(&["e4", "e5", "Nf3"], u32::MAX);
    let (right, right_state) = game(&["e4", "e5", "Nc3"], 3);
    let (more, more_state) = game(&["e4", "e5", "Nc3", "Nc6"], u32::MAX);
    let first = correction(3, &["Nf3"], &[right[2].1.clone()]);
    let second = correction(4, &["Nc6"], &[]);
    let heard = vec![
        wrong[0].1.clone(),
        wrong[1].1.clone(),
        wrong[2].1.clone(),
        first.1.clone(),
        more[3].1.clone(),
        second.1.clone(),
    ];
    let steps = vec![
        Step {
            events: wrong.into_iter().map(|e| e.0).collect(),
            state: wrong_state,
        },
        Step {
            events: vec![first.0, right[2].0.clone()],
            state: right_state.clone(),
        },
        Step {
            events: vec![more[3].0.clone()],
            state: more_state,
        },
        Step {
            events: vec![second.0],
            state: right_state,
        },
    ];
    (steps, heard)
}

/// What the scripted server has done: the state it serves, whether the script is done, and
/// whether the page has read the state since.
#[derive(Default)]
struct Scripted {
    state: std::sync::Mutex<String>,
    streams: AtomicUsize,
    done: std::sync::atomic::AtomicBool,
    read_after: std::sync::atomic::AtomicBool,
}

/// A server in front of the daemon that serves its page (with a recorder of what the live
/// region reads, and an image that loads only when the script is done and the page has read
/// the state after it, so that --dump-dom dumps the page then), and scripted `/api/state` and
/// `/api/events`: the first event stream sends `steps`, setting the state before each.
fn scripted_server(daemon: u16, steps: Vec<Step>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = std::sync::Arc::new(Scripted::default());
    *script.state.lock().unwrap() = http_get(daemon, "/api/state").unwrap();
    let steps = std::sync::Arc::new(std::sync::Mutex::new(Some(steps)));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let (script, steps) = (script.clone(), steps.clone());
            std::thread::spawn(move || serve_scripted(client, daemon, &script, &steps));
        }
    });
    port
}

/// Records every text the live region is given, in order, in body[data-heard] (separated by
/// `|`): what a screen reader reads.
const RECORDER: &str = r#"<script>
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    const b = document.body;
    b.dataset.heard = (b.dataset.heard ? b.dataset.heard + "|" : "") + n.textContent;
  }
}).observe(document.getElementById("live"), { childList: true });
</script>"#;

fn serve_scripted(
    mut client: TcpStream,
    daemon: u16,
    script: &Scripted,
    steps: &std::sync::Mutex<Option<Vec<Step>>>,
) -> std::io::Result<()> {
    let head = read_head(&mut client)?;
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let answer = |client: &mut TcpStream, kind: &str, body: &str| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nCache-Control: no-store\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        client.write_all((head + body).as_bytes())
    };
    match path.as_str() {
        "/" => {
            let page = http_get(daemon, "/").map_err(std::io::Error::other)?;
            let page = page.replacen(
                "</body>",
                &format!("{RECORDER}<img src=\"/slow.png\" alt=\"\"></body>"),
                1,
            );
            answer(&mut client, "text/html; charset=utf-8", &page)
        }
        "/slow.png" => {
            let t = Instant::now();
            while !script.read_after.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            // The state read is drawn.
            std::thread::sleep(Duration::from_millis(700));
            client.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        }
        "/api/state" => {
            let done = script.done.load(Ordering::SeqCst);
            let state = script.state.lock().unwrap().clone();
            answer(&mut client, "application/json", &state)?;
            if done {
                script.read_after.store(true, Ordering::SeqCst);
            }
            Ok(())
        }
        "/api/events" => {
            client.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\r\n: connected\n\n",
            )?;
            // The first stream sends the script; one opened again later only pings.
            let first = script.streams.fetch_add(1, Ordering::SeqCst) == 0;
            if let (true, Some(steps)) = (first, steps.lock().unwrap().take()) {
                std::thread::sleep(Duration::from_millis(300));
                let n = steps.len();
                for (i, step) in steps.into_iter().enumerate() {
                    *script.state.lock().unwrap() = step.state;
                    if i + 1 == n {
                        // The state the page reads from now on is the last.
                        script.done.store(true, Ordering::SeqCst);
                    }
                    for e in &step.events {
                        client.write_all(format!("data: {e}\n\n").as_bytes())?;
                    }
                    client.flush()?;
                    std::thread::sleep(Duration::from_millis(400));
                }
            }
            loop {
                client.write_all(b": ping\n\n")?;
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        _ => client.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
    }
}

/// A page following the event stream through a correction: the events are the test's (the
/// engine's revisions are not what this test is about), sent to the page by a scripted server
/// in front of a real daemon's page (`scripted_server`): moves said, a correction with the
/// move the board showed, a move, a correction that withdraws it and puts none in its place.
/// The page shows the corrected game (as /api/state has it after the events) and its live
/// region reads each correction once and the moves of a correction not again.
#[test]
fn a_page_follows_a_correction_and_reads_it_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bin = chromium();
    let dir =
        std::env::temp_dir().join(format!("chessboardd-web-correction-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A daemon waiting for a board that never comes: its page, in its language.
    let port = free_port();
    let log = std::fs::File::create(artefacts().join("correction-daemon.log")).unwrap();
    let _daemon = Daemon(
        Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .arg("run")
            .arg("--board")
            .arg(format!("dgt:{}", dir.join("board").display()))
            .args(["--speech", "text", "--web", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let t = Instant::now();
    while http_get(port, "/api/state").is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the daemon's web view did not answer (see target/web-artefacts/correction-daemon.log)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = wait_for("the start position", port, Duration::from_secs(20), |s| {
        s["fen"].is_string()
    });
    let lang = s["lang"].as_str().unwrap().to_string();
    let (steps, heard) = corrected_game(&lang);
    let last: Value = serde_json::from_str(&steps.last().unwrap().state).unwrap();
    let server = scripted_server(port, steps);
    let url = format!("http://127.0.0.1:{server}/");
    let t = Instant::now();
    let dom = run_chromium(&bin, &["--dump-dom"], &url, Duration::from_secs(60)).unwrap();
    std::fs::write(artefacts().join("correction.html"), &dom).unwrap();
    eprintln!(
        "correction: the page dumped in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let body = tags(&dom, "body").into_iter().next().expect("no <body>");
    assert_eq!(attr(body, "data-script-error"), None, "{body}");
    assert_eq!(attr(body, "data-ready").as_deref(), Some("true"), "{body}");
    // The corrected game: 1. e4 e5 2. Nc3, as the state after the events has it.
    let list = section(&dom, "<ol id=\"moves\"", "</ol>").expect("no move list");
    let sans: Vec<String> = tags(list, "span")
        .into_iter()
        .filter_map(|t| attr(t, "data-san"))
        .collect();
    assert_eq!(
        sans,
        ["e4", "e5", "Nc3"],
        "see target/web-artefacts/correction.html"
    );
    let svg = tags(&dom, "svg").into_iter().next().unwrap();
    assert_eq!(attr(svg, "data-plies").as_deref(), Some("3"));
    assert_eq!(attr(svg, "data-fen").as_deref(), last["fen"].as_str());
    let board = section(&dom, "<svg", "</svg>").unwrap();
    let mut tinted: Vec<String> = tags(board, "rect")
        .into_iter()
        .filter(|t| attr(t, "class").as_deref() == Some("last"))
        .filter_map(|t| attr(t, "data-square"))
        .collect();
    tinted.sort();
    assert_eq!(tinted, ["b1", "c3"]);
    // Read out: the moves as said, each correction once, its move not again.
    let read: Vec<String> = attr(body, "data-heard")
        .map(|h| unescape(&h).split('|').map(str::to_string).collect())
        .unwrap_or_default();
    assert_eq!(read, heard);
    if lang == "de" {
        assert_eq!(
            read,
            [
                "Eva vier",
                "Eva fünf",
                "Springer Felix drei",
                "Korrektur: Springer Cesar drei",
                "Springer Cesar sechs",
                "Korrektur: Entscheidung zurückgenommen",
            ]
        );
    }
    let live = content(&dom, "<p id=\"live\"", "</p>").unwrap_or_default();
    assert_eq!(unescape(&live), heard[5]);
    let _ = std::fs::remove_dir_all(&dir);
}
