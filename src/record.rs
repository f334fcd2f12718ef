//! The game record that survives anything: a journal of the current game in the state
//! directory, appended and fsynced before anything is announced, and one PGN file per finished
//! game.
//!
//! The journal is one JSON object a line, each followed by a tab and the CRC-32 of the JSON. A
//! line cut short by a crash or a power loss (no newline, or a CRC that does not match) is the
//! last one written: it is dropped. A journal damaged anywhere else cannot be trusted: it is
//! moved aside (`journal.bad-N`), reported, and a new game starts.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{ByColor, CastlingMode, Chess, Color, Position};

use crate::engine::Resumed;
use crate::engine::{Engine, Event, EventKind};

/// The journal of the current game, in the state directory.
pub const JOURNAL: &str = "journal.jsonl";
/// Finished games, one PGN file each.
pub const GAMES: &str = "games";

/// One journal line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Entry {
    /// A game starts: its position and when (local time, for the PGN and its file name).
    Start {
        fen: String,
        date: String,
        time: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time_control: Option<String>,
    },
    /// A completed move, UCI, and both clocks after it.
    Move {
        uci: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clocks: Option<(i64, i64)>,
    },
    /// Moves taken back: the record goes back to this many plies.
    Takeback { plies: usize },
    /// The players' completed illegal moves so far, and the clocks after the penalty.
    Illegal {
        white: u32,
        black: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clocks: Option<(i64, i64)>,
    },
    /// The clocks changed other than by a move (a penalty, a pause).
    Clocks { white: i64, black: i64 },
    /// The game is over; its PGN file is written.
    End {
        result: String,
        reason: String,
        file: String,
    },
    /// A finished game goes on (a move taken back after its end, casual play).
    Reopen,
}

/// CRC-32 (IEEE 802.3), as zlib computes it.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// One journal line for an entry, with its checksum and newline.
pub fn line(e: &Entry) -> String {
    let json = serde_json::to_string(e).unwrap_or_default();
    format!("{json}\t{:08x}\n", crc32(json.as_bytes()))
}

/// What reading a journal found.
#[derive(Debug, Default)]
pub struct Read {
    pub entries: Vec<Entry>,
    /// A last line cut short (dropped).
    pub torn: bool,
    /// Why the journal cannot be used at all.
    pub bad: Option<String>,
}

/// Reads journal text: whole, checked lines; a damaged last line is dropped, damage elsewhere
/// makes the journal unusable.
pub fn parse(text: &[u8]) -> Read {
    let mut r = Read::default();
    let lines: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        let parsed = raw
            .strip_suffix(b"\n")
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| l.rsplit_once('\t'))
            .filter(|(json, crc)| u32::from_str_radix(crc, 16).ok() == Some(crc32(json.as_bytes())))
            .and_then(|(json, _)| serde_json::from_str::<Entry>(json).ok());
        match parsed {
            Some(e) => r.entries.push(e),
            None if last => r.torn = true,
            None => {
                r.bad = Some(format!("line {} is damaged", i + 1));
                return r;
            }
        }
    }
    if !matches!(r.entries.first(), None | Some(Entry::Start { .. })) {
        r.bad = Some("it does not begin with a game's start".into());
    }
    r
}

/// The game a journal holds, as the record keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub start_fen: String,
    pub date: String,
    pub time: String,
    pub time_control: Option<String>,
    pub moves: Vec<(String, Option<(i64, i64)>)>,
    pub illegal: (u32, u32),
    pub clocks: Option<(i64, i64)>,
    /// Result and reason, when it ended.
    pub ended: Option<(String, String)>,
    /// The PGN file written when it ended (written again if it ends again).
    pub file: Option<String>,
}

impl Recorded {
    /// Folds the entries of one game (from its `Start`).
    pub fn from_entries(entries: &[Entry]) -> Option<Recorded> {
        let Some(Entry::Start {
            fen,
            date,
            time,
            time_control,
        }) = entries.first()
        else {
            return None;
        };
        let mut g = Recorded {
            start_fen: fen.clone(),
            date: date.clone(),
            time: time.clone(),
            time_control: time_control.clone(),
            moves: Vec::new(),
            illegal: (0, 0),
            clocks: None,
            ended: None,
            file: None,
        };
        for e in &entries[1..] {
            match e {
                Entry::Start { .. } => return None,
                Entry::Move { uci, clocks } => {
                    g.moves.push((uci.clone(), *clocks));
                    g.clocks = clocks.or(g.clocks);
                }
                Entry::Takeback { plies } => {
                    g.moves.truncate(*plies);
                    g.clocks = g.moves.last().and_then(|m| m.1).or(g.clocks);
                }
                Entry::Illegal {
                    white,
                    black,
                    clocks,
                } => {
                    g.illegal = (*white, *black);
                    g.clocks = clocks.or(g.clocks);
                }
                Entry::Clocks { white, black } => g.clocks = Some((*white, *black)),
                Entry::End {
                    result,
                    reason,
                    file,
                } => {
                    g.ended = Some((result.clone(), reason.clone()));
                    g.file = Some(file.clone());
                }
                Entry::Reopen => g.ended = None,
            }
        }
        Some(g)
    }

    /// The game to take up again, in engine terms.
    pub fn to_resumed(&self) -> Result<Resumed, String> {
        let start: Chess = self
            .start_fen
            .parse::<Fen>()
            .map_err(|e| format!("start position: {e}"))?
            .into_position(CastlingMode::Standard)
            .map_err(|e| format!("start position: {e}"))?;
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for (uci, clocks) in &self.moves {
            let m = uci
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok())
                .ok_or_else(|| format!("move {} ({uci}) is not legal there", moves.len() + 1))?;
            pos.play_unchecked(m);
            moves.push((m, *clocks));
        }
        Ok(Resumed {
            start,
            moves,
            illegal: ByColor {
                white: self.illegal.0,
                black: self.illegal.1,
            },
            clocks: self.clocks,
        })
    }
}

/// The local date and time, for the record ("2026.11.30", "00:12:34").
pub fn local_now() -> (String, String) {
    // SAFETY: time() with a null pointer only returns; localtime_r writes into our struct.
    let tm = unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    (
        format!(
            "{:04}.{:02}.{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday
        ),
        format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec),
    )
}

/// The state directory held by one daemon: an exclusive lock on `DIR/lock` (flock), released
/// when the process ends however it ends. A second daemon on the same directory would take over
/// the journal and lose the first one's moves.
#[derive(Debug)]
pub struct StateLock {
    _file: File,
}

/// Why the state directory could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it; its process id as it wrote it, if readable.
    Held(Option<u32>),
    Io(std::io::Error),
}

impl StateLock {
    /// Takes the lock of `dir` (created if missing), without waiting.
    pub fn acquire(dir: &Path) -> Result<StateLock, LockError> {
        use std::io::{Read, Seek};
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(dir).map_err(LockError::Io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join("lock"))
            .map_err(LockError::Io)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::Held(text.trim().parse().ok()));
            }
            return Err(LockError::Io(err));
        }
        // Who holds it, for the message the next one gives.
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = writeln!(file, "{}", std::process::id());
        Ok(StateLock { _file: file })
    }
}

/// The journal writer: follows the engine and appends what changed, fsynced, before the events
/// of the change are announced.
pub struct Journal {
    dir: PathBuf,
    file: File,
    /// The engine game this journal follows.
    serial: u64,
    recorded: Recorded,
    /// PGN tags of the game (date, time).
    pgn_tags: Vec<(&'static str, String)>,
    /// The journal's length after the last whole append: a failed append is cut back to it.
    good_len: u64,
}

/// Opening the state directory: the writer, a game to take up, and what to report.
pub struct Opened {
    pub journal: Journal,
    pub resume: Option<(Recorded, Resumed)>,
    pub notes: Vec<String>,
}

fn fsync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Journal {
    /// When the game recorded began (date, time), as its PGN's `Date` and `Time` say.
    pub fn began(&self) -> (String, String) {
        (self.recorded.date.clone(), self.recorded.time.clone())
    }

    /// Opens the state directory: reads the journal of an unfinished game, if there is one.
    /// A journal that cannot be read is moved aside; it never stops the daemon.
    pub fn open(dir: &Path) -> std::io::Result<Opened> {
        std::fs::create_dir_all(dir.join(GAMES))?;
        let path = dir.join(JOURNAL);
        let mut notes = Vec::new();
        let mut resume = None;
        let mut keep = None;
        match std::fs::read(&path) {
            Ok(bytes) => {
                let read = parse(&bytes);
                if let Some(why) = &read.bad {
                    notes.push(set_aside(dir, &path, why));
                } else if let Some(r) = Recorded::from_entries(&read.entries) {
                    match r.to_resumed() {
                        Err(why) => notes.push(set_aside(dir, &path, &why)),
                        Ok(g) => {
                            if read.torn {
                                notes.push(format!(
                                    "{}: the last entry was cut short (a crash or a power loss): dropped",
                                    path.display()
                                ));
                            }
                            // A game with no move yet is simply started again.
                            if r.ended.is_none() && !r.moves.is_empty() {
                                keep = Some(read.entries);
                                resume = Some((r, g));
                            }
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => notes.push(set_aside(dir, &path, &e.to_string())),
        }
        // Rewritten whole (without a torn tail), then appended to.
        let tmp = dir.join(format!("{JOURNAL}.new"));
        {
            let mut f = File::create(&tmp)?;
            for e in keep.iter().flatten() {
                f.write_all(line(e).as_bytes())?;
            }
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        fsync_dir(dir);
        let file = OpenOptions::new().append(true).open(&path)?;
        let good_len = file.metadata()?.len();
        let recorded = resume.as_ref().map_or_else(
            || Recorded {
                start_fen: String::new(),
                date: String::new(),
                time: String::new(),
                time_control: None,
                moves: Vec::new(),
                illegal: (0, 0),
                clocks: None,
                ended: Some((String::new(), String::new())),
                file: None,
            },
            |(r, _)| r.clone(),
        );
        let pgn_tags = tags(&recorded);
        Ok(Opened {
            journal: Journal {
                dir: dir.to_path_buf(),
                file,
                serial: 0,
                recorded,
                pgn_tags,
                good_len,
            },
            resume,
            notes,
        })
    }

    /// The engine has taken up the journal's game: follow it from here.
    pub fn adopt(&mut self, engine: &Engine) {
        self.serial = engine.games_started();
    }

    /// Appends whole entries and syncs them; a failed append (a full disk) is cut back, so the
    /// journal never holds half a line before good ones.
    fn append(&mut self, entries: &[Entry]) -> std::io::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let text: String = entries.iter().map(line).collect();
        let written = self
            .file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.good_len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.good_len);
                let _ = self.file.sync_data();
                Err(e)
            }
        }
    }

    /// Starts a new journal for a new game (the old one is done with: its game was saved).
    fn start_game(&mut self, engine: &Engine) -> std::io::Result<()> {
        let (date, time) = local_now();
        let start = Entry::Start {
            fen: crate::engine::game::fen_of(&engine.game().start),
            date,
            time,
            time_control: engine
                .settings()
                .time_control
                .as_ref()
                .map(|t| t.to_string()),
        };
        let path = self.dir.join(JOURNAL);
        let tmp = self.dir.join(format!("{JOURNAL}.new"));
        {
            let mut f = File::create(&tmp)?;
            f.write_all(line(&start).as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &path)?;
        fsync_dir(&self.dir);
        self.file = OpenOptions::new().append(true).open(&path)?;
        self.good_len = self.file.metadata()?.len();
        self.recorded = Recorded::from_entries(&[start]).unwrap_or_else(|| self.recorded.clone());
        self.pgn_tags = tags(&self.recorded);
        self.serial = engine.games_started();
        Ok(())
    }

    /// Records what the engine's game gained since the last call (`events` are the ones about
    /// to be announced); returns when it is on disk.
    pub fn sync<'a>(
        &mut self,
        engine: &Engine,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> std::io::Result<()> {
        // What the events tell the record: the clocks as last reported, and whether a move
        // (which carries its own clocks) was among them.
        let mut clock_event = None;
        let mut moved = false;
        for e in events {
            match e.kind {
                EventKind::Clock {
                    white_ms, black_ms, ..
                } => clock_event = Some((white_ms, black_ms)),
                EventKind::Move { .. } => moved = true,
                _ => {}
            }
        }
        if engine.games_started() != self.serial {
            // An unfinished game replaced by a new one is kept too.
            if self.recorded.ended.is_none() && !self.recorded.moves.is_empty() {
                self.save_unfinished()?;
            }
            self.start_game(engine)?;
        }
        let game = engine.game();
        // Worked out on a copy, taken only once it is on disk: what failed is tried again.
        let mut rec = self.recorded.clone();
        let mut entries = Vec::new();
        let ucis: Vec<String> = game
            .plies
            .iter()
            .map(|p| p.m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        if game.ending.is_none() && rec.ended.is_some() {
            entries.push(Entry::Reopen);
            rec.ended = None;
        }
        let common = rec
            .moves
            .iter()
            .zip(&ucis)
            .take_while(|((a, _), b)| a == *b)
            .count();
        if common < rec.moves.len() {
            entries.push(Entry::Takeback { plies: common });
            rec.moves.truncate(common);
        }
        for (ply, uci) in game.plies.iter().zip(&ucis).skip(common) {
            entries.push(Entry::Move {
                uci: uci.clone(),
                clocks: ply.clocks,
            });
            rec.moves.push((uci.clone(), ply.clocks));
        }
        let illegal = (
            engine.illegal_count(Color::White),
            engine.illegal_count(Color::Black),
        );
        if illegal != rec.illegal {
            rec.illegal = illegal;
            entries.push(Entry::Illegal {
                white: illegal.0,
                black: illegal.1,
                clocks: clock_event,
            });
        } else if let (Some((w, b)), false) = (clock_event, moved) {
            entries.push(Entry::Clocks { white: w, black: b });
        }
        // The moves first: a PGN file that cannot be written does not keep them off the disk.
        self.append(&entries)?;
        self.recorded = rec;
        if let (Some(ending), None) = (game.ending, &self.recorded.ended) {
            let file = self.save_pgn(engine)?;
            let (result, reason) = (ending.result().to_string(), ending.reason.to_string());
            self.append(&[Entry::End {
                result: result.clone(),
                reason: reason.clone(),
                file: file.clone(),
            }])?;
            self.recorded.ended = Some((result, reason));
            self.recorded.file = Some(file);
        }
        Ok(())
    }

    /// Writes the finished game's PGN file (named by its start); returns the file name.
    fn save_pgn(&self, engine: &Engine) -> std::io::Result<String> {
        let pgn = engine.pgn_with(&self.pgn_tags);
        match &self.recorded.file {
            // Ended before, taken back, ended again: the same game, the same file.
            Some(name) => {
                replace_file(&self.dir.join(GAMES), name, &pgn)?;
                Ok(name.clone())
            }
            None => write_game(&self.dir, &self.recorded, &pgn),
        }
    }

    /// A game left unfinished when a new one started is saved with result `*`.
    fn save_unfinished(&self) -> std::io::Result<()> {
        if let Some(pgn) = recorded_pgn(&self.recorded) {
            write_game(&self.dir, &self.recorded, &pgn)?;
        }
        Ok(())
    }

    /// Makes sure everything written is on disk (at shutdown).
    pub fn close(&mut self) -> std::io::Result<()> {
        self.file.sync_all()
    }
}

fn tags(r: &Recorded) -> Vec<(&'static str, String)> {
    let mut t = vec![("Date", r.date.clone())];
    if !r.time.is_empty() {
        t.push(("Time", r.time.clone()));
    }
    t
}

/// Writes a game's PGN into the games directory under a name made of its start date and time.
fn write_game(dir: &Path, r: &Recorded, pgn: &str) -> std::io::Result<String> {
    let stem = format!("{}_{}", r.date.replace('.', "-"), r.time.replace(':', ""));
    let games = dir.join(GAMES);
    std::fs::create_dir_all(&games)?;
    let mut name = format!("{stem}.pgn");
    let mut n = 2;
    while games.join(&name).exists() {
        name = format!("{stem}-{n}.pgn");
        n += 1;
    }
    let tmp = games.join(format!(".{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(pgn.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, games.join(&name))?;
    fsync_dir(&games);
    Ok(name)
}

/// Writes `name` in `dir` anew (a temporary file renamed over it).
fn replace_file(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(name))?;
    fsync_dir(dir);
    Ok(())
}

/// Moves an unreadable journal aside; returns the report.
fn set_aside(dir: &Path, path: &Path, why: &str) -> String {
    let mut n = 1;
    let mut aside = dir.join(format!("{JOURNAL}.bad-{n}"));
    while aside.exists() {
        n += 1;
        aside = dir.join(format!("{JOURNAL}.bad-{n}"));
    }
    match std::fs::rename(path, &aside) {
        Ok(()) => format!(
            "{}: cannot be read ({why}); moved to {} and a new game started",
            path.display(),
            aside.display()
        ),
        Err(e) => format!(
            "{}: cannot be read ({why}) nor moved aside ({e}); a new game started",
            path.display()
        ),
    }
}

/// The PGN of a recorded game (an unfinished one has result `*`).
pub fn recorded_pgn(r: &Recorded) -> Option<String> {
    let g = r.to_resumed().ok()?;
    let mut game = crate::engine::game::Game::new(g.start.clone());
    for (m, _) in &g.moves {
        game.play(*m, 0);
    }
    let mut t = tags(r);
    if let Some(tc) = &r.time_control {
        t.push(("TimeControl", tc.clone()));
    }
    Some(game.to_pgn(&t))
}

/// A game kept in the state directory.
#[derive(Clone, Debug)]
pub struct Kept {
    /// "2026.11.30 00:12:34".
    pub started: String,
    pub pgn: String,
    pub unfinished: bool,
    pub path: PathBuf,
}

/// The games of a state directory, most recent first: the finished ones and the game in
/// progress (or left unfinished by a crash).
pub fn games(dir: &Path) -> std::io::Result<Vec<Kept>> {
    games_reporting(dir, |_, _| {})
}

/// [`games`], telling `skipped` of each kept game's file that cannot be read (not text, a
/// directory, no permission): the others are listed all the same.
pub fn games_reporting(
    dir: &Path,
    mut skipped: impl FnMut(&Path, &std::io::Error),
) -> std::io::Result<Vec<Kept>> {
    let mut out = Vec::new();
    let games_dir = dir.join(GAMES);
    if games_dir.exists() {
        for e in std::fs::read_dir(&games_dir)? {
            let Ok(e) = e else {
                continue;
            };
            let path = e.path();
            if path.extension().is_some_and(|x| x == "pgn") {
                let pgn = match std::fs::read_to_string(&path) {
                    Ok(pgn) => pgn,
                    Err(err) => {
                        skipped(&path, &err);
                        continue;
                    }
                };
                let tag = |k: &str| {
                    pgn.lines()
                        .find_map(|l| l.strip_prefix(&format!("[{k} \"")))
                        .and_then(|v| v.strip_suffix("\"]"))
                        .unwrap_or("")
                        .to_string()
                };
                out.push(Kept {
                    started: format!("{} {}", tag("Date"), tag("Time")),
                    unfinished: tag("Result") == "*",
                    pgn,
                    path,
                });
            }
        }
    }
    let journal = dir.join(JOURNAL);
    if let Ok(bytes) = std::fs::read(&journal) {
        let read = parse(&bytes);
        if let Some(r) = Recorded::from_entries(&read.entries)
            .filter(|r| r.ended.is_none() && !r.moves.is_empty())
        {
            if let Some(pgn) = recorded_pgn(&r) {
                out.push(Kept {
                    started: format!("{} {}", r.date, r.time),
                    pgn,
                    unfinished: true,
                    path: journal,
                });
            }
        }
    }
    out.sort_by(|a, b| b.started.cmp(&a.started).then_with(|| b.path.cmp(&a.path)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_is_the_ieee_one() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    fn start() -> Entry {
        Entry::Start {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            date: "2026.11.30".into(),
            time: "10:00:00".into(),
            time_control: Some("300+2".into()),
        }
    }

    fn mv(uci: &str) -> Entry {
        Entry::Move {
            uci: uci.into(),
            clocks: Some((299_000, 300_000)),
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_damage_elsewhere_is_not_trusted() {
        let whole: String = [start(), mv("e2e4"), mv("e7e5")].iter().map(line).collect();
        let r = parse(whole.as_bytes());
        assert_eq!((r.entries.len(), r.torn, r.bad), (3, false, None));
        // Cut anywhere in the last line: that line is dropped, the others kept.
        let last_start = whole[..whole.len() - 1].rfind('\n').unwrap() + 1;
        for cut in last_start..whole.len() {
            let r = parse(&whole.as_bytes()[..cut]);
            assert_eq!(r.entries.len(), 2, "cut at {cut}");
            assert!(r.bad.is_none());
            assert_eq!(r.torn, cut > last_start);
        }
        // A flipped byte in the middle: the journal cannot be trusted.
        let mut bytes = whole.clone().into_bytes();
        bytes[last_start - 10] ^= 0x20;
        assert!(parse(&bytes).bad.is_some());
        // A flipped byte in the last line: it is dropped like a torn one.
        let mut bytes = whole.into_bytes();
        let n = bytes.len();
        bytes[n - 15] ^= 0x01;
        let r = parse(&bytes);
        assert_eq!((r.entries.len(), r.torn), (2, true));
    }

    #[test]
    fn a_recorded_game_folds_takebacks_and_penalties() {
        let entries = vec![
            start(),
            mv("e2e4"),
            mv("e7e5"),
            Entry::Takeback { plies: 1 },
            mv("c7c5"),
            Entry::Illegal {
                white: 1,
                black: 0,
                clocks: Some((290_000, 420_000)),
            },
        ];
        let r = Recorded::from_entries(&entries).unwrap();
        assert_eq!(
            r.moves.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(),
            ["e2e4", "c7c5"]
        );
        assert_eq!(r.illegal, (1, 0));
        assert_eq!(r.clocks, Some((290_000, 420_000)));
        let g = r.to_resumed().unwrap();
        assert_eq!(g.moves.len(), 2);
        // A move that is not legal makes the record unusable, with the reason.
        let mut bad = entries.clone();
        bad.push(mv("e1e3"));
        let r = Recorded::from_entries(&bad).unwrap();
        assert!(r.to_resumed().unwrap_err().contains("move 3"));
    }
}
