//! The game record that survives anything: a journal of the current game in the state
//! directory, appended and fsynced before anything is announced, and one PGN file per finished
//! game.
//!
//! The journal is one JSON object a line, each followed by a tab and the CRC-32 of the JSON.
//! Every move entry carries its ply number and the position after it (FEN), so that a game can
//! be followed past a lost line, and whether it was read from the board afterwards (so that the
//! game's PGN says so after a restart too). A game the engine rewrote (a takeback, or a
//! correction: later readings showed other moves than those announced) is written as a
//! takeback to the plies it still has in common with the record, then its new moves. Reading it back (`salvage`): a last line cut short by a crash
//! or a power loss is dropped; damage anywhere else loses only what cannot be found again: the
//! journal as read is kept beside it (`journal.jsonl.damaged-N`), the game is taken up from the
//! lines that hold, and what was lost is reported. A journal that cannot be read at all (no
//! permission) is an error: no new game is started over it.
//!
//! Writing: what the disk does not take (full) is kept in memory, in order, and written as soon
//! as it does (`backlog`); the daemon says so, once each way.

mod backlog;
mod salvage;

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{ByColor, CastlingMode, Chess, Color, Position};

use crate::engine::event::color_name;
use crate::engine::game::fen_of;
use crate::engine::Resumed;
use crate::engine::{Engine, Envelope, Event, EventKind};
use crate::words::Lang;
pub use backlog::MAX_ENTRIES;
use backlog::{Backlog, Op};
pub use salvage::{bridge, fold, initial_fen, parse, Folded, Read, MAX_BRIDGE};

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
        /// The config's PGN tags (players, event) when the game began (in a journal written
        /// anew, as they are then).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tags: Vec<(String, String)>,
        /// Against the computer: its colour ("white", "black") and its PGN name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        computer: Option<(String, String)>,
        /// The language of the announcements when the game began (its notation on the
        /// scoresheet); a journal of an older version has none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lang: Option<String>,
    },
    /// The config's PGN tags changed during the game (SIGHUP, or a restart with another
    /// config): the game's record takes them, as the live PGN does.
    Tags { tags: Vec<(String, String)> },
    /// A completed move, UCI, and both clocks after it; which ply of the game it is and the
    /// position after it (a journal of an older version has neither).
    Move {
        uci: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        clocks: Option<(i64, i64)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ply: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fen: Option<String>,
        /// Read from the board afterwards, not seen being made (written only when true; a
        /// journal of an older version has none).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        recovered: bool,
    },
    /// Moves taken back (or withdrawn by a correction): the record goes back to this many
    /// plies.
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
    /// A note of the scoresheet (F2.5: a draw offer, a claim, a penalty) after `after` plies.
    Note { after: usize, text: String },
    /// The game is adjourned: the envelope, with the sealed move (Appendix A2). The move is
    /// recorded as a move when the game resumes.
    Adjourned(Sealed),
}

/// The envelope of an adjourned game as the journal keeps it (Appendix A2 of the 1997 and 2005
/// Laws): the position before the sealed move, the sealed move, who sealed it and its number,
/// each player's time, a draw offer standing, and when it was sealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sealed {
    /// "white" or "black".
    pub sealer: String,
    /// The position before the sealed move.
    pub fen: String,
    /// The sealed move, UCI.
    pub uci: String,
    pub move_number: u32,
    /// What each player had left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<(i64, i64)>,
    /// What each player had used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_offer: Option<String>,
    /// When it was sealed (local date and time).
    pub date: String,
    pub time: String,
}

impl Sealed {
    /// The engine's envelope, sealed in `pos` at `date` `time`.
    pub fn of(e: &Envelope, pos: &Chess, (date, time): (String, String)) -> Sealed {
        Sealed {
            sealer: color_name(e.sealer).to_string(),
            fen: fen_of(pos),
            uci: e.sealed.to_uci(CastlingMode::Standard).to_string(),
            move_number: e.move_number,
            clocks: e.clocks,
            used: e.used,
            draw_offer: e.draw_offer.map(|c| color_name(c).to_string()),
            date,
            time,
        }
    }

    /// Whether this envelope holds `e` (its time aside).
    fn holds(&self, e: &Envelope, pos: &Chess) -> bool {
        let (date, time) = (self.date.clone(), self.time.clone());
        *self == Sealed::of(e, pos, (date, time))
    }

    /// The engine's envelope, if it is one of the position `pos` (the game's position).
    pub fn to_envelope(&self, pos: &Chess) -> Option<Envelope> {
        if fen_of(pos) != self.fen {
            return None;
        }
        let color = |s: &str| s.parse::<Color>().ok();
        Some(Envelope {
            sealer: color(&self.sealer)?,
            sealed: self.uci.parse::<UciMove>().ok()?.to_move(pos).ok()?,
            move_number: self.move_number,
            clocks: self.clocks,
            used: self.used,
            draw_offer: self.draw_offer.as_deref().and_then(color),
        })
    }

    /// The envelope as the arbiter reads it (A2): the players, the position before the sealed
    /// move, each player's time, who sealed which move, a draw offer; the sealed move itself,
    /// as the scoresheet inside has it; and the lines for the resumption, to be filled in.
    pub fn text(&self, white: &str, black: &str) -> String {
        let mut t = String::new();
        let time = |ms: i64| {
            let s = ms.max(0) / 1000;
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        };
        let san = self.fen.parse::<Fen>().ok().and_then(|f| {
            let pos: Chess = f.into_position(CastlingMode::Standard).ok()?;
            let m = self.uci.parse::<UciMove>().ok()?.to_move(&pos).ok()?;
            Some(shakmaty::san::SanPlus::from_move(pos, m).to_string())
        });
        let _ = writeln!(t, "Adjourned game, sealed {} {}", self.date, self.time);
        let _ = writeln!(t, "a) White: {white}    Black: {black}");
        let _ = writeln!(t, "b) Position before the sealed move: {}", self.fen);
        match (self.used, self.clocks) {
            (Some((uw, ub)), Some((lw, lb))) => {
                let _ = writeln!(
                    t,
                    "c) Time used: White {} (left {}), Black {} (left {})",
                    time(uw),
                    time(lw),
                    time(ub),
                    time(lb)
                );
            }
            _ => {
                let _ = writeln!(t, "c) Time used: no clock");
            }
        }
        let _ = writeln!(t, "d) Sealed by: {}", title_case(&self.sealer));
        let dots = if self.sealer == "black" { "..." } else { "." };
        let _ = writeln!(t, "e) Sealed move number: {}{dots}", self.move_number);
        let offer = match &self.draw_offer {
            Some(by) => format!("offered by {}", title_case(by)),
            None => "none".to_string(),
        };
        let _ = writeln!(t, "f) Draw offer: {offer}");
        let _ = writeln!(
            t,
            "g) Resumption (date, time, place): ______________________"
        );
        let _ = writeln!(
            t,
            "Inside: the sealed move {}{dots} {} ({})",
            self.move_number,
            san.as_deref().unwrap_or("?"),
            self.uci
        );
        t
    }
}

/// "white" -> "White".
fn title_case(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
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

/// The game a journal holds, as the record keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub start_fen: String,
    pub date: String,
    pub time: String,
    pub time_control: Option<String>,
    /// The config's PGN tags in force (when the game began, or as changed since).
    pub tags: Vec<(String, String)>,
    /// Against the computer: its colour ("white", "black") and its PGN name.
    pub computer: Option<(String, String)>,
    /// The language of the announcements when the game began (`Lang`'s name).
    pub lang: Option<String>,
    pub moves: Vec<(String, Option<(i64, i64)>)>,
    /// The moves read from the board afterwards (not seen being made), by their index in
    /// `moves`, in order.
    pub recovered: Vec<usize>,
    pub illegal: (u32, u32),
    pub clocks: Option<(i64, i64)>,
    /// The scoresheet's notes, each after the number of plies it follows (`Game::notes`).
    pub notes: Vec<(usize, String)>,
    /// The envelope, while the game is adjourned.
    pub adjourned: Option<Sealed>,
    /// Result and reason, when it ended.
    pub ended: Option<(String, String)>,
    /// The PGN file written when it ended (written again if it ends again).
    pub file: Option<String>,
}

impl Recorded {
    /// A game that has only begun.
    pub fn new(
        start_fen: String,
        date: String,
        time: String,
        time_control: Option<String>,
    ) -> Recorded {
        Recorded {
            start_fen,
            date,
            time,
            time_control,
            tags: Vec::new(),
            computer: None,
            lang: None,
            moves: Vec::new(),
            recovered: Vec::new(),
            illegal: (0, 0),
            clocks: None,
            notes: Vec::new(),
            adjourned: None,
            ended: None,
            file: None,
        }
    }

    /// Whether the move of index `i` was read from the board afterwards.
    pub fn is_recovered(&self, i: usize) -> bool {
        self.recovered.binary_search(&i).is_ok()
    }

    /// Adds a move (the sealed one, when the game resumes: the envelope is opened).
    pub fn push_move(&mut self, uci: String, clocks: Option<(i64, i64)>, recovered: bool) {
        self.adjourned = None;
        if recovered {
            self.recovered.push(self.moves.len());
        }
        self.moves.push((uci, clocks));
    }

    /// Goes back to the first `plies` moves.
    pub fn truncate_moves(&mut self, plies: usize) {
        if plies < self.moves.len() {
            self.adjourned = None;
        }
        self.moves.truncate(plies);
        self.recovered.retain(|&i| i < plies);
        self.notes.retain(|(after, _)| *after <= plies);
    }

    /// Folds the entries of one whole game (from its `Start`); `None` when they do not make
    /// one.
    pub fn from_entries(entries: &[Entry]) -> Option<Recorded> {
        let read = Read {
            entries: entries.to_vec(),
            ..Read::default()
        };
        let folded = fold(&read);
        if folded.damaged(&read) {
            return None;
        }
        folded.game
    }

    /// Whether a journal's game is taken up again at start: unfinished, and either moved in or
    /// set up in a position of its own (a game in the initial position with no move yet is
    /// simply started again).
    pub fn to_take_up(&self) -> bool {
        self.ended.is_none()
            && (!self.moves.is_empty()
                || self.start_fen != initial_fen()
                || self.adjourned.is_some())
    }

    /// The journal entries that say all the record holds: its start, its moves (numbered, each
    /// with the position after it), the illegal-move counts, the clocks, its end.
    pub fn entries(&self) -> Vec<Entry> {
        let mut out = vec![Entry::Start {
            fen: self.start_fen.clone(),
            date: self.date.clone(),
            time: self.time.clone(),
            time_control: self.time_control.clone(),
            tags: self.tags.clone(),
            computer: self.computer.clone(),
            lang: self.lang.clone(),
        }];
        let mut pos = self
            .start_fen
            .parse::<Fen>()
            .ok()
            .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).ok());
        let notes = |n: usize, out: &mut Vec<Entry>| {
            for (after, text) in self.notes.iter().filter(|(a, _)| *a == n) {
                out.push(Entry::Note {
                    after: *after,
                    text: text.clone(),
                });
            }
        };
        notes(0, &mut out);
        for (i, (uci, clocks)) in self.moves.iter().enumerate() {
            let fen = pos.as_mut().and_then(|p| {
                let m = uci.parse::<UciMove>().ok()?.to_move(p).ok()?;
                p.play_unchecked(m);
                Some(fen_of(p))
            });
            if fen.is_none() {
                pos = None;
            }
            out.push(Entry::Move {
                uci: uci.clone(),
                clocks: *clocks,
                ply: Some(i as u32 + 1),
                fen,
                recovered: self.is_recovered(i),
            });
            notes(i + 1, &mut out);
        }
        if self.illegal != (0, 0) {
            out.push(Entry::Illegal {
                white: self.illegal.0,
                black: self.illegal.1,
                clocks: None,
            });
        }
        if let Some((white, black)) = self.clocks {
            if self.moves.last().and_then(|m| m.1) != self.clocks {
                out.push(Entry::Clocks { white, black });
            }
        }
        if let Some(sealed) = &self.adjourned {
            out.push(Entry::Adjourned(sealed.clone()));
        }
        if let Some(file) = &self.file {
            let (result, reason) = self
                .ended
                .clone()
                .unwrap_or_else(|| ("*".into(), String::new()));
            out.push(Entry::End {
                result,
                reason,
                file: file.clone(),
            });
            if self.ended.is_none() {
                out.push(Entry::Reopen);
            }
        }
        out
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
            recovered: (0..moves.len()).map(|i| self.is_recovered(i)).collect(),
            moves,
            illegal: ByColor {
                white: self.illegal.0,
                black: self.illegal.1,
            },
            clocks: self.clocks,
            notes: self.notes.clone(),
            adjourned: self.adjourned.as_ref().and_then(|s| s.to_envelope(&pos)),
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

/// The journal writer: follows the engine and records what changed, on disk before the events
/// of the change are announced. What the disk does not take (full) waits in memory, in order,
/// and is written as soon as it does: at the next change or [`Journal::flush`].
pub struct Journal {
    dir: PathBuf,
    /// The engine game this journal follows.
    serial: u64,
    /// The game as the record holds it (on disk, or waiting to be).
    recorded: Recorded,
    /// PGN tags of the game (date, time).
    pgn_tags: Vec<(&'static str, String)>,
    backlog: Backlog,
    /// While writing fails: whether for a full disk, and the entries written since.
    blocked: Option<(bool, usize)>,
    /// A change of the writing's state not yet taken by [`Journal::news`].
    news: Option<Report>,
}

/// A change in whether the record reaches the disk, to report once.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// Writing failed: what is not written is kept in memory and tried again. `full`: the
    /// disk (or the user's quota) is full.
    Blocked {
        error: String,
        full: bool,
        waiting: usize,
    },
    /// Everything kept meanwhile is written: the record is whole on disk again.
    Written { entries: usize, full: bool },
}

/// The journal was damaged and has been repaired.
#[derive(Clone, Debug, PartialEq)]
pub struct Repair {
    /// Entries lost to the game (damaged lines not made good, entries that could not be placed).
    pub lost: usize,
    /// Where the journal as it was read is kept.
    pub kept: PathBuf,
}

/// Opening the state directory: the writer, a game to take up, and what to report.
pub struct Opened {
    pub journal: Journal,
    pub resume: Option<(Recorded, Resumed)>,
    pub notes: Vec<String>,
    pub repaired: Option<Repair>,
}

/// Whether an error is a full disk (or a full quota).
fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// A user's name, or its number.
fn user_name(uid: u32) -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: getpwuid_r writes into `pw` and `buf` (of the length given) only, and `found`
    // points into them or is null.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found) == 0
            && !found.is_null()
            && !pw.pw_name.is_null()
        {
            return std::ffi::CStr::from_ptr(pw.pw_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    uid.to_string()
}

/// The error for a journal that exists but cannot be read: its path, why, and for a missing
/// permission who owns it, who the daemon is and what to do.
fn unreadable(path: &Path, e: &std::io::Error) -> std::io::Error {
    use std::os::unix::fs::MetadataExt;
    let mut msg = format!("cannot read {}: {e}", path.display());
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        // SAFETY: geteuid has no preconditions.
        let me = user_name(unsafe { libc::geteuid() });
        if let Ok(m) = std::fs::metadata(path) {
            msg.push_str(&format!(
                " (it belongs to {}, mode {:04o}; the daemon runs as user {me}: sudo chown {me}: {})",
                user_name(m.uid()),
                m.mode() & 0o7777,
                path.display()
            ));
        } else {
            msg.push_str(&format!(" (the daemon runs as user {me})"));
        }
    }
    msg.push_str("; no new game is started over it");
    std::io::Error::new(e.kind(), msg)
}

/// Whether the state directory's journal can be read (it may be missing): the error says
/// which file, why, and what to do.
pub fn check_readable(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(JOURNAL);
    let read = File::open(&path).and_then(|mut f| {
        let mut byte = [0u8; 1];
        std::io::Read::read(&mut f, &mut byte)
    });
    match read {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(unreadable(&path, &e)),
    }
}

/// The first free name `journal.jsonl.damaged-N`.
fn damaged_name(dir: &Path) -> PathBuf {
    (1..)
        .map(|n| dir.join(format!("{JOURNAL}.damaged-{n}")))
        .find(|p| !p.exists())
        .expect("a free name")
}

impl Journal {
    fn new(dir: &Path) -> Journal {
        let mut recorded = Recorded::new(String::new(), String::new(), String::new(), None);
        recorded.ended = Some((String::new(), String::new()));
        Journal {
            dir: dir.to_path_buf(),
            serial: 0,
            pgn_tags: tags(&recorded),
            recorded,
            backlog: Backlog::new(dir),
            blocked: None,
            news: None,
        }
    }

    /// When the game recorded began (date, time), as its PGN's `Date` and `Time` say.
    pub fn began(&self) -> (String, String) {
        (self.recorded.date.clone(), self.recorded.time.clone())
    }

    /// Opens the state directory: reads the journal of an unfinished game, if there is one,
    /// and repairs a damaged one (see `salvage`). Fails only when the directory cannot be made
    /// or the journal exists but cannot be read (the error names it, and the permission).
    pub fn open(dir: &Path) -> std::io::Result<Opened> {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::create_dir_all(dir.join(GAMES));
        let path = dir.join(JOURNAL);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(unreadable(&path, &e)),
        };
        let mut j = Journal::new(dir);
        let mut notes = Vec::new();
        let mut resume = None;
        let mut repaired = None;
        if let Some(bytes) = bytes {
            let read = parse(&bytes);
            let folded = fold(&read);
            if read.torn {
                notes.push(format!(
                    "{}: the last entry was cut short (a crash or a power loss): dropped",
                    path.display()
                ));
            }
            if folded.damaged(&read) {
                let kept = damaged_name(dir);
                j.backlog.push(Op::Keep(kept.clone()));
                let mut parts = Vec::new();
                for part in &folded.parts {
                    if let Some(text) = recorded_pgn(part) {
                        let name = j.free_name(part);
                        parts.push(name.clone());
                        let text = file_text(part, text);
                        j.backlog.push(Op::Pgn { name, text });
                    }
                }
                let lost = folded.lost_entries(&read);
                notes.push(repair_note(&path, &read, &folded, &parts, &kept));
                repaired = Some(Repair { lost, kept });
            }
            if let Some(r) = folded.game.filter(Recorded::to_take_up) {
                match r.to_resumed() {
                    Ok(g) => resume = Some((r, g)),
                    Err(why) => notes.push(format!(
                        "{}: the game cannot be taken up ({why}); a new game starts",
                        path.display()
                    )),
                }
            }
        }
        // Rewritten whole (without a torn tail or damage), then appended to.
        let entries = resume.as_ref().map_or_else(Vec::new, |(r, _)| r.entries());
        j.backlog.push(Op::Fresh(entries));
        if let Some((r, _)) = &resume {
            j.recorded = r.clone();
            j.pgn_tags = tags(r);
        }
        let _ = j.flush();
        Ok(Opened {
            journal: j,
            resume,
            notes,
            repaired,
        })
    }

    /// The engine has taken up the journal's game: follow it from here.
    pub fn adopt(&mut self, engine: &Engine) {
        self.serial = engine.games_started();
    }

    /// A name for a game's PGN file, made of its start date and time, used by no file and by
    /// no file waiting to be written.
    fn free_name(&self, r: &Recorded) -> String {
        let stem = if r.date.contains('?') || r.date.is_empty() {
            "undated".to_string()
        } else {
            format!("{}_{}", r.date.replace('.', "-"), r.time.replace(':', ""))
        };
        let games = self.dir.join(GAMES);
        let taken =
            |name: &str| games.join(name).exists() || self.backlog.pgns().any(|(n, _)| n == name);
        let mut name = format!("{stem}.pgn");
        let mut n = 2;
        while taken(&name) {
            name = format!("{stem}-{n}.pgn");
            n += 1;
        }
        name
    }

    /// Writes what waits, in order. An error the first time writing fails, and the first time
    /// it works again after that, is kept for [`Journal::news`].
    pub fn flush(&mut self) -> std::io::Result<()> {
        if self.backlog.len() == 0 {
            return Ok(());
        }
        let (done, result) = self.backlog.flush();
        if let Some((_, written)) = &mut self.blocked {
            *written += done;
        }
        match result {
            Ok(()) => {
                if let Some((full, entries)) = self.blocked.take() {
                    self.news = Some(Report::Written { entries, full });
                }
                Ok(())
            }
            Err(e) => {
                if self.blocked.is_none() {
                    let full = is_full(&e);
                    self.blocked = Some((full, 0));
                    self.news = Some(Report::Blocked {
                        error: e.to_string(),
                        full,
                        waiting: self.backlog.entries(),
                    });
                }
                Err(e)
            }
        }
    }

    /// A change in whether the record reaches the disk, once.
    pub fn news(&mut self) -> Option<Report> {
        self.news.take()
    }

    /// Writes waiting (entries and files not yet on disk).
    pub fn waiting(&self) -> usize {
        self.backlog.len()
    }

    /// The games whose moves are not all on disk, as PGN: the files waiting and the game in
    /// progress, when its entries are waiting (for the log, when the daemon stops so).
    pub fn unwritten(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .backlog
            .pgns()
            .map(|(_, t)| read_file_text(t).1.to_string())
            .collect();
        if self.backlog.entries() > 0 && self.recorded.ended.is_none() {
            out.extend(recorded_pgn(&self.recorded));
        }
        out
    }

    /// Starts a new journal for a new game (the old one is done with: its game is saved).
    fn start_game(&mut self, engine: &Engine) {
        let (date, time) = local_now();
        let time_control = engine
            .settings()
            .time_control
            .as_ref()
            .map(|t| t.to_string());
        let fen = fen_of(&engine.game().start);
        let lang = engine.settings().phrases.lang.name().to_string();
        self.backlog.push(Op::Fresh(vec![Entry::Start {
            fen: fen.clone(),
            date: date.clone(),
            time: time.clone(),
            time_control: time_control.clone(),
            tags: engine.settings().pgn_tags.clone(),
            computer: computer_of(engine),
            lang: Some(lang.clone()),
        }]));
        self.recorded = Recorded::new(fen, date, time, time_control);
        self.recorded.tags = engine.settings().pgn_tags.clone();
        self.recorded.computer = computer_of(engine);
        self.recorded.lang = Some(lang);
        self.pgn_tags = tags(&self.recorded);
        self.serial = engine.games_started();
    }

    /// Records what the engine's game gained since the last call (`events` are the ones about
    /// to be announced); returns when it is on disk. When it cannot be written it waits in
    /// memory (the error is returned) and is written with the next call or [`Journal::flush`].
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
                self.save_unfinished();
            }
            self.start_game(engine);
        }
        self.follow_tags(engine);
        let game = engine.game();
        let rec = &mut self.recorded;
        let ucis: Vec<String> = game
            .plies
            .iter()
            .map(|p| p.m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        if game.ending.is_none() && rec.ended.is_some() {
            self.backlog.push(Op::Line(Entry::Reopen));
            rec.ended = None;
        }
        // The moves the record and the game have in common (a move read from the board
        // afterwards is not the same as one seen being made); the record's others were taken
        // back, or withdrawn by a correction, and the game's others are new.
        let common = rec
            .moves
            .iter()
            .zip(game.plies.iter().zip(&ucis))
            .enumerate()
            .take_while(|(i, ((a, _), (ply, b)))| a == *b && rec.is_recovered(*i) == ply.recovered)
            .count();
        if common < rec.moves.len() {
            self.backlog
                .push(Op::Line(Entry::Takeback { plies: common }));
            rec.truncate_moves(common);
        }
        for (i, (ply, uci)) in game.plies.iter().zip(&ucis).enumerate().skip(common) {
            let after = game.plies.get(i + 1).map_or(&game.pos, |p| &p.before);
            self.backlog.push(Op::Line(Entry::Move {
                uci: uci.clone(),
                clocks: ply.clocks,
                ply: Some(i as u32 + 1),
                fen: Some(fen_of(after)),
                recovered: ply.recovered,
            }));
            rec.push_move(uci.clone(), ply.clocks, ply.recovered);
            rec.clocks = ply.clocks.or(rec.clocks);
        }
        // The scoresheet's notes: the ones taken back went with their moves.
        let same = rec
            .notes
            .iter()
            .zip(&game.notes)
            .take_while(|(a, b)| a == b)
            .count();
        rec.notes.truncate(same);
        for (after, text) in &game.notes[same..] {
            self.backlog.push(Op::Line(Entry::Note {
                after: *after,
                text: text.clone(),
            }));
            rec.notes.push((*after, text.clone()));
        }
        // The envelope: written when the move is sealed; opened (the sealed move recorded),
        // or the game ended, it is gone.
        match engine.envelope() {
            Some(e)
                if !rec
                    .adjourned
                    .as_ref()
                    .is_some_and(|s| s.holds(e, &game.pos)) =>
            {
                let sealed = Sealed::of(e, &game.pos, local_now());
                self.backlog
                    .push(Op::Line(Entry::Adjourned(sealed.clone())));
                rec.adjourned = Some(sealed);
            }
            Some(_) => {}
            None => rec.adjourned = None,
        }
        let illegal = (
            engine.illegal_count(Color::White),
            engine.illegal_count(Color::Black),
        );
        if illegal != rec.illegal {
            rec.illegal = illegal;
            rec.clocks = clock_event.or(rec.clocks);
            self.backlog.push(Op::Line(Entry::Illegal {
                white: illegal.0,
                black: illegal.1,
                clocks: clock_event,
            }));
        } else if let (Some((w, b)), false) = (clock_event, moved) {
            rec.clocks = Some((w, b));
            self.backlog
                .push(Op::Line(Entry::Clocks { white: w, black: b }));
        }
        // The moves first, then the PGN file, then the end that names it.
        if let (Some(ending), None) = (game.ending, &self.recorded.ended) {
            let text = engine.pgn_with(&self.pgn_tags);
            // Ended before, taken back, ended again: the same game, the same file.
            let file = match &self.recorded.file {
                Some(name) => name.clone(),
                None => self.free_name(&self.recorded),
            };
            let (result, reason) = (ending.result().to_string(), ending.reason.to_string());
            self.backlog.push(Op::Pgn {
                name: file.clone(),
                text: file_text(&self.recorded, text),
            });
            self.backlog.push(Op::Line(Entry::End {
                result: result.clone(),
                reason: reason.clone(),
                file: file.clone(),
            }));
            self.recorded.ended = Some((result, reason));
            self.recorded.file = Some(file);
        }
        let recorded = &self.recorded;
        self.backlog.fold_if_long(|| recorded.entries());
        self.flush()
    }

    /// The config's PGN tags changed (SIGHUP; a restart with another config): the game's
    /// record takes them, as the live PGN does, from the journal to a finished game's file.
    fn follow_tags(&mut self, engine: &Engine) {
        let now = &engine.settings().pgn_tags;
        // No game recorded yet (nothing to take them): the game's start will have them.
        if *now == self.recorded.tags || self.recorded.start_fen.is_empty() {
            return;
        }
        self.recorded.tags = now.clone();
        self.backlog
            .push(Op::Line(Entry::Tags { tags: now.clone() }));
        if let (Some(_), Some(name)) = (&self.recorded.ended, &self.recorded.file) {
            let text = file_text(&self.recorded, engine.pgn_with(&self.pgn_tags));
            self.backlog.push(Op::Pgn {
                name: name.clone(),
                text,
            });
        }
    }

    /// A game left unfinished when a new one started is saved with result `*`.
    fn save_unfinished(&mut self) {
        if let Some(text) = recorded_pgn(&self.recorded) {
            let name = self.free_name(&self.recorded);
            let text = file_text(&self.recorded, text);
            self.backlog.push(Op::Pgn { name, text });
        }
    }

    /// Makes sure everything written is on disk (at shutdown); an error when something could
    /// not be written ([`Journal::unwritten`] has it).
    pub fn close(&mut self) -> std::io::Result<()> {
        self.flush()?;
        self.backlog.sync()
    }
}

/// The log line of a repair.
fn repair_note(path: &Path, read: &Read, f: &Folded, parts: &[String], kept: &Path) -> String {
    let mut what = Vec::new();
    if !read.damaged.is_empty() {
        let lines: Vec<String> = read.damaged.iter().map(usize::to_string).collect();
        what.push(format!("damaged line(s) {}", lines.join(", ")));
    }
    if f.start_lost {
        what.push("the game's start lost".into());
    }
    let mut done = vec![format!("{} entries lost", f.lost_entries(read))];
    if f.recovered > 0 {
        done.push(format!("{} plies found again", f.recovered));
    }
    if f.lost_plies > 0 {
        done.push(format!("{} plies lost", f.lost_plies));
    }
    for p in parts {
        done.push(format!(
            "the game before a gap kept as {}",
            Path::new(GAMES).join(p).display()
        ));
    }
    format!(
        "{}: {}; the record was repaired: {}; the journal as it was is kept as {}",
        path.display(),
        what.join(", "),
        done.join(", "),
        kept.display()
    )
}

fn tags(r: &Recorded) -> Vec<(&'static str, String)> {
    let mut t = vec![("Date", r.date.clone())];
    if !r.time.is_empty() {
        t.push(("Time", r.time.clone()));
    }
    // The computer's side is named by the computer (as the engine's PGN does).
    match r.computer.as_ref().map(|(c, n)| (c.as_str(), n)) {
        Some(("white", name)) => t.push(("White", name.clone())),
        Some(("black", name)) => t.push(("Black", name.clone())),
        _ => {}
    }
    t
}

/// The computer the engine plays against, as the journal writes it: its colour and name.
fn computer_of(engine: &Engine) -> Option<(String, String)> {
    let color = engine.computer()?;
    let name = engine.computer_name().unwrap_or("Computer");
    Some((color.to_string(), name.to_string()))
}

/// How a kept game's file begins: a PGN escape line (a `%` in the first column, which PGN
/// readers skip, the standard's place for a program's own data) with what the record knows of
/// the game beyond its PGN: the language it was announced in.
const PRIVATE: &str = "% chessboardd";

/// A kept game's file: its PGN after the escape line of what else the record knows of it.
fn file_text(r: &Recorded, pgn: String) -> String {
    match &r.lang {
        Some(lang) => format!("{PRIVATE} lang={lang}\n{pgn}"),
        None => pgn,
    }
}

/// A kept game's file read back: the language its escape line names (a file of an older
/// version has none), and the PGN without the line.
pub fn read_file_text(text: &str) -> (Option<Lang>, &str) {
    let Some(rest) = text.strip_prefix(PRIVATE) else {
        return (None, text);
    };
    let (line, pgn) = rest.split_once('\n').unwrap_or((rest, ""));
    let lang = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("lang="))
        .and_then(|l| l.parse::<Lang>().ok());
    (lang, pgn)
}

/// The PGN of a recorded game (an unfinished one has result `*`).
pub fn recorded_pgn(r: &Recorded) -> Option<String> {
    recorded_pgn_with(r, &r.tags)
}

/// The PGN of a recorded game with the config's tags (as the engine writes them).
pub fn recorded_pgn_with(r: &Recorded, config: &[(String, String)]) -> Option<String> {
    let g = r.to_resumed().ok()?;
    let mut game = crate::engine::game::Game::new(g.start.clone());
    for (i, (m, clocks)) in g.moves.iter().enumerate() {
        game.play(*m, 0);
        if let Some(last) = game.plies.last_mut() {
            last.clocks = *clocks;
            last.recovered = r.is_recovered(i);
        }
    }
    game.notes = r.notes.clone();
    let t = crate::engine::game::tag_set(config, &tags(r), r.time_control.clone());
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
    /// The language the game was announced in, when the record knows it.
    pub lang: Option<Lang>,
}

/// The envelope of the game in the journal of a state directory, as the arbiter reads it
/// (A2), when that game is adjourned.
pub fn envelope(dir: &Path) -> std::io::Result<Option<String>> {
    let bytes = match std::fs::read(dir.join(JOURNAL)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(game) = fold(&parse(&bytes)).game else {
        return Ok(None);
    };
    let name = |k: &str| {
        game.tags
            .iter()
            .find(|(key, _)| key == k)
            .map_or("?", |(_, v)| v.as_str())
    };
    Ok(game
        .adjourned
        .as_ref()
        .map(|s| s.text(name("White"), name("Black"))))
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
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(err) => {
                        skipped(&path, &err);
                        continue;
                    }
                };
                let (lang, pgn) = read_file_text(&text);
                let pgn = pgn.to_string();
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
                    lang,
                });
            }
        }
    }
    // The game in the journal, and the games before gaps a damaged journal has (as the
    // daemon will take them up and keep them).
    let journal = dir.join(JOURNAL);
    match std::fs::read(&journal) {
        Ok(bytes) => {
            let folded = fold(&parse(&bytes));
            let current = folded
                .game
                .filter(|r| r.ended.is_none() && !r.moves.is_empty());
            for r in folded.parts.iter().chain(current.iter()) {
                if let Some(pgn) = recorded_pgn(r) {
                    out.push(Kept {
                        started: format!("{} {}", r.date, r.time),
                        pgn,
                        unfinished: true,
                        path: journal.clone(),
                        lang: r.lang.as_deref().and_then(|l| l.parse().ok()),
                    });
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => skipped(&journal, &e),
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
            fen: initial_fen(),
            date: "2026.11.30".into(),
            time: "10:00:00".into(),
            time_control: Some("300+2".into()),
            tags: Vec::new(),
            computer: None,
            lang: None,
        }
    }

    /// The scoresheet's notes go into the journal, survive a takeback of the moves before
    /// them, leave with the moves they follow, and are the PGN's comments of the game taken up.
    #[test]
    fn the_scoresheets_notes_are_kept_in_the_journal() {
        let note = |after: usize, text: &str| Entry::Note {
            after,
            text: text.into(),
        };
        let entries = vec![
            start(),
            mv("e2e4"),
            note(1, "White offers a draw"),
            mv("e7e5"),
            mv("g1f3"),
            note(3, "Black claims a draw by threefold repetition: refused"),
            Entry::Takeback { plies: 2 },
        ];
        let r = Recorded::from_entries(&entries).unwrap();
        assert_eq!(r.notes, [(1, "White offers a draw".to_string())]);
        let pgn = recorded_pgn(&r).unwrap();
        assert!(
            pgn.contains("1. e4 {[%clk 0:04:59]} {White offers a draw} 1... e5"),
            "{pgn}"
        );
        // Written anew (a journal compacted), the note stands after its move.
        let again = r.entries();
        assert_eq!(Recorded::from_entries(&again).unwrap().notes, r.notes);
        assert!(
            matches!(&again[2], Entry::Note { after: 1, .. }),
            "{again:?}"
        );
        assert_eq!(r.to_resumed().unwrap().notes, r.notes);
    }

    /// A move as an older version wrote it: no ply, no position.
    fn mv(uci: &str) -> Entry {
        Entry::Move {
            uci: uci.into(),
            clocks: Some((299_000, 300_000)),
            ply: None,
            fen: None,
            recovered: false,
        }
    }

    /// The journal entries of a game of these moves (UCI), as this version writes them.
    fn game(ucis: &[&str]) -> Vec<Entry> {
        let mut r = Recorded::new(initial_fen(), "2026.11.30".into(), "10:00:00".into(), None);
        r.moves = ucis
            .iter()
            .enumerate()
            .map(|(i, u)| (u.to_string(), Some((300_000 - i as i64, 300_000))))
            .collect();
        r.entries()
    }

    fn text(entries: &[Entry]) -> String {
        entries.iter().map(line).collect()
    }

    /// The text with line `n` (from 1) damaged (a flipped bit in its JSON).
    fn damage(text: &str, n: usize) -> Vec<u8> {
        let start: usize = text.split_inclusive('\n').take(n - 1).map(str::len).sum();
        let mut bytes = text.as_bytes().to_vec();
        bytes[start + 12] ^= 0x04;
        bytes
    }

    fn ucis(r: &Recorded) -> Vec<&str> {
        r.moves.iter().map(|m| m.0.as_str()).collect()
    }

    const ITALIAN: [&str; 10] = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "c2c3", "g8f6", "d2d4", "e5d4",
    ];

    #[test]
    fn a_torn_last_line_is_dropped_and_damage_elsewhere_loses_only_that_line() {
        let whole = text(&[start(), mv("e2e4"), mv("e7e5")]);
        let r = parse(whole.as_bytes());
        assert_eq!((r.entries.len(), r.torn, r.damaged.len()), (3, false, 0));
        // Cut anywhere in the last line: that line is dropped, the others kept.
        let last_start = whole[..whole.len() - 1].rfind('\n').unwrap() + 1;
        for cut in last_start..whole.len() {
            let r = parse(&whole.as_bytes()[..cut]);
            assert_eq!(r.entries.len(), 2, "cut at {cut}");
            assert!(r.damaged.is_empty());
            assert_eq!(r.torn, cut > last_start);
        }
        // A flipped byte in the middle: that line is damaged, the lines after it are read.
        let mut bytes = whole.clone().into_bytes();
        bytes[last_start - 10] ^= 0x20;
        let r = parse(&bytes);
        assert_eq!((r.entries.len(), r.damaged.clone()), (2, vec![2]));
        assert_eq!(r.after_damage, [1]);
        // A flipped byte in the last line: it is dropped like a torn one.
        let mut bytes = whole.into_bytes();
        let n = bytes.len();
        bytes[n - 15] ^= 0x01;
        let r = parse(&bytes);
        assert_eq!((r.entries.len(), r.torn), (2, true));
    }

    #[test]
    fn crlf_line_ends_and_nul_blocks_are_not_damage() {
        let entries = game(&ITALIAN);
        let lf = text(&entries);
        let crlf = lf.replace('\n', "\r\n");
        let r = parse(crlf.as_bytes());
        assert_eq!(r.entries, entries);
        assert!(r.damaged.is_empty() && !r.torn);
        // NULs between two lines, NULs glued to the front of a line, NULs at the end.
        let mut bytes = Vec::new();
        for (i, l) in lf.split_inclusive('\n').enumerate() {
            if i == 3 {
                bytes.extend([0u8; 700]);
                bytes.push(b'\n');
            }
            if i == 6 {
                bytes.extend([0u8; 4096]);
            }
            bytes.extend(l.as_bytes());
        }
        bytes.extend([0u8; 1000]);
        let r = parse(&bytes);
        assert_eq!(r.entries, entries);
        // The line of NULs alone stood where a line was: it counts as one damaged line.
        assert_eq!(r.damaged, [4]);
        assert!(r.torn, "the NULs at the end");
        let f = fold(&r);
        assert_eq!(ucis(f.game.as_ref().unwrap()), ITALIAN);
        assert_eq!(f.lost_plies, 0);
    }

    #[test]
    fn a_lost_move_is_found_again_from_the_positions_around_it() {
        let entries = game(&ITALIAN);
        let whole = text(&entries);
        // Line 1 is the start: line 5 is ply 4, lines 7 and 8 plies 6 and 7. (The last line
        // damaged is a torn one: the move in it was never announced.)
        for lost in [vec![2], vec![5], vec![7, 8], vec![10]] {
            let mut bytes = whole.clone().into_bytes();
            for n in &lost {
                bytes = damage(std::str::from_utf8(&bytes).unwrap(), *n);
            }
            let read = parse(&bytes);
            assert_eq!(read.damaged, lost);
            let f = fold(&read);
            let g = f.game.as_ref().unwrap();
            assert_eq!(ucis(g), ITALIAN, "lines {lost:?} lost");
            assert_eq!(f.recovered as usize, lost.len());
            assert_eq!((f.lost_entries(&read), f.lost_plies), (0, 0));
            assert!(f.parts.is_empty());
            // The moves found again have no clocks; the others keep theirs.
            assert_eq!(g.moves[lost[0] - 2].1, None);
            assert_eq!(g.moves[9].1, Some((300_000 - 9, 300_000)));
        }
    }

    #[test]
    fn a_lost_takeback_is_seen_in_the_ply_numbers() {
        let mut entries = game(&ITALIAN[..6]);
        entries.push(Entry::Takeback { plies: 4 });
        let other = game(&["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]);
        entries.extend(other[5..].iter().cloned());
        let bytes = damage(&text(&entries), 8);
        let read = parse(&bytes);
        assert_eq!(read.damaged, [8]);
        let f = fold(&read);
        assert_eq!(
            ucis(f.game.as_ref().unwrap()),
            ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
        );
    }

    #[test]
    fn a_gap_too_wide_to_bridge_keeps_the_game_before_it_and_goes_on_from_the_position_after_it() {
        let entries = game(&ITALIAN);
        // Plies 3 to 6 lost (lines 4 to 7): the game goes on from the position after ply 7.
        let mut bytes = text(&entries);
        for n in 4..=7 {
            bytes = String::from_utf8(damage(&bytes, n)).unwrap();
        }
        let read = parse(bytes.as_bytes());
        let f = fold(&read);
        assert_eq!(f.parts.len(), 1);
        assert_eq!(ucis(&f.parts[0]), ["e2e4", "e7e5"]);
        let g = f.game.as_ref().unwrap();
        let Entry::Move {
            fen: Some(after7), ..
        } = &entries[7]
        else {
            panic!()
        };
        assert_eq!(&g.start_fen, after7);
        assert_eq!(ucis(g), ["g8f6", "d2d4", "e5d4"]);
        assert_eq!(f.lost_plies, 5, "plies 3 to 7");
        assert_eq!(f.lost_entries(&read), 4);
        let resumed = g.to_resumed().unwrap();
        assert_eq!(resumed.moves.len(), 3);
        // The journal written for it reads back as the same game, whole.
        let again = fold(&parse(text(&g.entries()).as_bytes()));
        assert_eq!(again.game.as_ref(), Some(g));
        assert!(!again.damaged(&parse(text(&g.entries()).as_bytes())));
    }

    #[test]
    fn an_older_journal_is_taken_up_to_the_gap() {
        let entries = vec![start(), mv("e2e4"), mv("e7e5"), mv("g1f3"), mv("b8c6")];
        let read = parse(&damage(&text(&entries), 3));
        let f = fold(&read);
        assert_eq!(ucis(f.game.as_ref().unwrap()), ["e2e4"]);
        // Plies 3 and 4 are known lost; what the damaged line held is not known.
        assert_eq!((f.dropped, f.lost_plies), (2, 2));
        assert_eq!(f.lost_entries(&read), 3);
    }

    #[test]
    fn a_lost_start_is_the_initial_position_when_the_moves_fit() {
        let entries = game(&ITALIAN);
        let read = parse(&damage(&text(&entries), 1));
        let f = fold(&read);
        assert!(f.start_lost);
        let g = f.game.unwrap();
        assert_eq!(ucis(&g), ITALIAN);
        assert_eq!(g.date, "????.??.??");
        // An older journal's moves after a lost start cannot be placed: nothing is guessed.
        let old = vec![start(), mv("e2e4"), mv("e7e5")];
        let f = fold(&parse(&damage(&text(&old), 1)));
        assert!(f.game.unwrap().moves.is_empty());
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
        assert_eq!(ucis(&r), ["e2e4", "c7c5"]);
        assert_eq!(r.illegal, (1, 0));
        assert_eq!(r.clocks, Some((290_000, 420_000)));
        let g = r.to_resumed().unwrap();
        assert_eq!(g.moves.len(), 2);
        // Written anew, it reads back the same.
        assert_eq!(Recorded::from_entries(&r.entries()).as_ref(), Some(&r));
        // A move that is not legal there: the game is followed up to it, no further.
        let mut bad = entries.clone();
        bad.push(mv("e1e3"));
        bad.push(mv("g1f3"));
        assert_eq!(Recorded::from_entries(&bad), None);
        let f = fold(&parse(text(&bad).as_bytes()));
        assert_eq!(ucis(f.game.as_ref().unwrap()), ["e2e4", "c7c5"]);
        assert_eq!(f.dropped, 2);
    }

    #[test]
    fn no_damage_makes_reading_panic() {
        let whole = text(&game(&ITALIAN)).into_bytes();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..2000 {
            let mut bytes = whole.clone();
            for _ in 0..1 + next(4) {
                let at = next(bytes.len());
                match next(4) {
                    0 => bytes[at] ^= 1 << next(8),
                    1 => {
                        let end = (at + next(300)).min(bytes.len());
                        bytes[at..end].fill(0);
                    }
                    2 => bytes.truncate(at),
                    _ => {
                        bytes.remove(at);
                    }
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let read = parse(&bytes);
            let f = fold(&read);
            let _ = f.lost_entries(&read);
            for r in f.parts.iter().chain(f.game.iter()) {
                let _ = r.to_resumed();
                let _ = recorded_pgn(r);
                let _ = r.entries();
            }
        }
        // Numbers no game has.
        let huge = vec![
            start(),
            Entry::Move {
                uci: "e2e4".into(),
                clocks: None,
                ply: Some(u32::MAX),
                fen: Some(initial_fen()),
                recovered: false,
            },
            Entry::Takeback { plies: usize::MAX },
            Entry::Move {
                uci: "e7e5".into(),
                clocks: None,
                ply: Some(0),
                fen: None,
                recovered: false,
            },
        ];
        let f = fold(&parse(text(&huge).as_bytes()));
        assert!(f.game.is_some());
    }

    /// A scratch state directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "chessboardd-record-unit-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// Plays moves (UCI; no castling, no en passant) on the engine's board, recording after
    /// each step as the daemon does.
    fn play(e: &mut Engine, j: &mut Journal, t: &mut u64, ucis: &[&str]) {
        use crate::engine::debounce::{EMPTY, OCCUPIED};
        use crate::engine::Reading;
        for uci in ucis {
            let (from, to): (shakmaty::Square, shakmaty::Square) =
                (uci[0..2].parse().unwrap(), uci[2..4].parse().unwrap());
            let mut steps = vec![(from, EMPTY), (to, OCCUPIED)];
            if e.game().pos.board().piece_at(to).is_some() {
                // A capture: the captured piece off first.
                steps.insert(0, (to, EMPTY));
            }
            for (sq, state) in steps {
                *t += 250;
                let mut out = Vec::new();
                e.reading(*t, Reading::Square(sq, state), &mut out);
                // Past the settle time: the move is complete.
                *t += 400;
                e.advance(*t, &mut out);
                let _ = j.sync(e, &out);
            }
        }
    }

    /// One reading on the engine's board, past the settle time, recorded as the daemon does.
    fn read(e: &mut Engine, j: &mut Journal, t: &mut u64, r: crate::engine::Reading, wait: u64) {
        let mut out = Vec::new();
        *t += 250;
        e.reading(*t, r, &mut out);
        *t += wait;
        e.advance(*t, &mut out);
        let _ = j.sync(e, &out);
    }

    /// Appendix A: a game adjourned is kept with its envelope (A2) in the journal, the sealed
    /// move in no PGN; the daemon started again takes it up adjourned, and the game resumed has
    /// the sealed move as its next move, the envelope gone.
    #[test]
    fn an_adjourned_game_keeps_its_envelope_across_a_restart() {
        use crate::engine::debounce::{EMPTY, OCCUPIED};
        use crate::engine::{Button, Reading, Settings};
        use shakmaty::Square;
        let dir = scratch("adjourned");
        let settings = || Settings {
            time_control: Some("300+2".parse().unwrap()),
            pgn_tags: vec![
                ("White".to_string(), "Ana".to_string()),
                ("Black".to_string(), "Bo".to_string()),
            ],
            ..Settings::default()
        };
        let mut j = Journal::open(&dir).unwrap().journal;
        let mut e = Engine::new(settings());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        j.sync(&e, &out).unwrap();
        let mut t = 0;
        play(&mut e, &mut j, &mut t, &["e2e4"]);
        t += 5000;
        e.press(t, Button::Adjourn, &mut Vec::new());
        play(&mut e, &mut j, &mut t, &["g8f6"]);
        assert_eq!(
            e.game().plies.len(),
            1,
            "the sealed move is not in the record"
        );
        assert!(e.envelope().is_some());
        // Nothing the board does now is a move.
        read(
            &mut e,
            &mut j,
            &mut t,
            Reading::Square(Square::F6, EMPTY),
            2000,
        );
        read(
            &mut e,
            &mut j,
            &mut t,
            Reading::Square(Square::G8, OCCUPIED),
            2000,
        );
        assert_eq!(e.game().plies.len(), 1);

        let kept = games(&dir).unwrap();
        assert_eq!(kept.len(), 1);
        assert!(!kept[0].pgn.contains("Nf6"), "{}", kept[0].pgn);
        let text = envelope(&dir).unwrap().expect("an envelope");
        for line in [
            "a) White: Ana    Black: Bo",
            "b) Position before the sealed move: rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "c) Time used: White 0:00:00 (left 0:05:01), Black 0:00:06 (left 0:04:53)",
            "d) Sealed by: Black",
            "e) Sealed move number: 1...",
            "f) Draw offer: none",
            "Inside: the sealed move 1... Nf6 (g8f6)",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        drop(j);

        // Started again: adjourned, its clocks as they stood.
        let opened = Journal::open(&dir).unwrap();
        let (_, game) = opened.resume.expect("the adjourned game is taken up");
        assert!(game.adjourned.is_some());
        let mut j = opened.journal;
        let mut e = Engine::new(settings());
        let mut out = Vec::new();
        e.resume(100, &game, &mut out);
        j.adopt(&e);
        assert_eq!(e.envelope(), game.adjourned.as_ref());
        assert_eq!(e.running_clock(), None);
        let said: Vec<&str> = out
            .iter()
            .filter_map(|x| x.kind.spoken())
            .map(|x| x.0)
            .collect();
        assert!(
            said.contains(&"Partie fortgesetzt. Abgabezug versiegelt, die Uhren stehen. Die Partie ist abgebrochen"),
            "{said:?}"
        );
        // Resumed (the board shows the position before the sealed move): Nf6 is the game's.
        let mut out = Vec::new();
        e.press(200, Button::Resume, &mut out);
        j.sync(&e, &out).unwrap();
        assert_eq!(e.game().plies.len(), 2);
        assert_eq!(e.game().plies[1].san.to_string(), "Nf6");
        assert_eq!(envelope(&dir).unwrap(), None);
        let read = parse(&std::fs::read(dir.join(JOURNAL)).unwrap());
        assert!(matches!(
            read.entries.last(),
            Some(Entry::Move { uci, ply: Some(2), .. }) if uci == "g8f6"
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Later readings showed another story than the one announced (a correction: from ply 3
    /// on the engine's game has the moves the board showed, read from it afterwards, and
    /// Black's illegal move is withdrawn): the journal takes the announced moves back and
    /// writes the board's, and the daemon started again takes up the corrected game, its
    /// moves read from the board marked so in its PGN, the illegal move not counted.
    #[test]
    fn a_corrected_game_is_the_game_kept_after_a_restart() {
        use crate::engine::debounce::{EMPTY, OCCUPIED};
        use crate::engine::{Reading, Settings};
        use shakmaty::Square;
        let dir = scratch("correction");
        let mut j = Journal::open(&dir).unwrap().journal;
        let mut t = 0;
        // Announced: 1. e4 e5 2. Nf3, an illegal move of Black's (Nb8-b6) put right, 2... Nc6.
        let mut announced = Engine::new(Settings::default());
        let mut out = Vec::new();
        announced.new_game(0, Chess::default(), true, &mut out);
        j.sync(&announced, &out).unwrap();
        play(&mut announced, &mut j, &mut t, &["e2e4", "e7e5", "g1f3"]);
        for (sq, state) in [
            (Square::B8, EMPTY),
            (Square::B6, OCCUPIED),
            (Square::B6, EMPTY),
            (Square::B8, OCCUPIED),
        ] {
            read(
                &mut announced,
                &mut j,
                &mut t,
                Reading::Square(sq, state),
                2000,
            );
        }
        assert_eq!(announced.illegal_count(Color::Black), 1);
        play(&mut announced, &mut j, &mut t, &["b8c6"]);
        assert_eq!(announced.game().plies.len(), 4);
        let announced_pgn = announced.pgn();
        // (The illegal move is on the scoresheet: F2.5.)
        assert!(
            announced_pgn.contains("2. Nf3 {Illegal move by Black (1): a warning} 2... Nc6 *"),
            "{announced_pgn}"
        );

        // The story the board showed: 2. Nc3 Nc6, both read from the board (one frame), no
        // illegal move. The same game (the engine has started no other).
        let mut board = Engine::new(Settings::default());
        let mut out = Vec::new();
        board.new_game(0, Chess::default(), true, &mut out);
        // Its own record is not kept (a journal whose directory is never made).
        let mut unkept = Journal::new(&dir.join("unkept"));
        let mut t2 = 0;
        play(&mut board, &mut unkept, &mut t2, &["e2e4", "e7e5"]);
        let mut after = board.game().pos.clone();
        for uci in ["b1c3", "b8c6"] {
            let m = uci.parse::<UciMove>().unwrap().to_move(&after).unwrap();
            after.play_unchecked(m);
        }
        let mask = after.board().occupied().0;
        read(
            &mut board,
            &mut unkept,
            &mut t2,
            Reading::occupancy(mask),
            5000,
        );
        let recovered: Vec<bool> = board.game().plies.iter().map(|p| p.recovered).collect();
        assert_eq!(recovered, [false, false, true, true]);
        assert_eq!(board.games_started(), announced.games_started());
        assert_eq!(board.illegal_count(Color::Black), 0);
        j.sync(&board, &[]).unwrap();

        // On disk: the announced moves taken back to ply 2, the board's written, the illegal
        // move withdrawn.
        let read = parse(&std::fs::read(dir.join(JOURNAL)).unwrap());
        let tail: Vec<Entry> = read.entries[read.entries.len() - 4..].to_vec();
        assert_eq!(tail[0], Entry::Takeback { plies: 2 });
        let moved: Vec<(String, Option<u32>, bool)> = tail[1..3]
            .iter()
            .map(|e| match e {
                Entry::Move {
                    uci,
                    ply,
                    recovered,
                    ..
                } => (uci.clone(), *ply, *recovered),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            moved,
            [
                ("b1c3".to_string(), Some(3), true),
                ("b8c6".to_string(), Some(4), true)
            ]
        );
        assert!(
            matches!(
                tail[3],
                Entry::Illegal {
                    white: 0,
                    black: 0,
                    ..
                }
            ),
            "{:?}",
            tail[3]
        );
        assert!(line(&tail[1]).contains("\"recovered\":true"));
        assert!(
            !line(&read.entries[1]).contains("recovered"),
            "written only when true"
        );

        // Started again: the corrected game, its moves from the board marked.
        drop(j);
        let opened = Journal::open(&dir).unwrap();
        let (r, resumed) = opened.resume.unwrap();
        assert_eq!(ucis(&r), ["e2e4", "e7e5", "b1c3", "b8c6"]);
        assert_eq!((r.recovered.clone(), r.illegal), (vec![2, 3], (0, 0)));
        assert_eq!(resumed.recovered, [false, false, true, true]);
        let mut again = Engine::new(Settings::default());
        let mut out = Vec::new();
        assert_eq!(again.resume(1000, &resumed, &mut out), 4);
        assert_eq!(again.illegal_count(Color::Black), 0);
        // (The movetext's lines break where they will.)
        let movetext = |pgn: &str| pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        let want = "2. Nc3 {recovered from the board} 2... Nc6 {recovered from the board} *";
        for pgn in [again.pgn(), recorded_pgn(&r).unwrap(), board.pgn()] {
            assert!(movetext(&pgn).contains(want), "{pgn}");
        }
        let kept = games(&dir).unwrap();
        assert!(
            kept.iter().any(|k| movetext(&k.pgn).contains(want)),
            "{kept:?}"
        );
        // Rewritten whole at the start, the journal says the same.
        let read = parse(&std::fs::read(dir.join(JOURNAL)).unwrap());
        assert_eq!(fold(&read).game.unwrap(), r);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn journal_moves(dir: &Path) -> Vec<String> {
        let text = std::fs::read(dir.join(JOURNAL)).unwrap_or_default();
        let r = parse(&text);
        assert!(r.damaged.is_empty() && !r.torn);
        r.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Move { uci, .. } => Some(uci.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_backlog_is_written_in_order_once_the_disk_takes_it_again() {
        let dir = scratch("backlog");
        let mut j = Journal::open(&dir).unwrap().journal;
        let mut e = Engine::new(crate::engine::Settings::default());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        j.sync(&e, &out).unwrap();
        let mut t = 0;
        play(&mut e, &mut j, &mut t, &ITALIAN[..2]);
        assert_eq!(journal_moves(&dir), ITALIAN[..2]);
        assert_eq!(j.news(), None);
        // The disk is full: the moves wait, the first failure is reported once.
        j.backlog.refuse = true;
        play(&mut e, &mut j, &mut t, &ITALIAN[2..5]);
        assert_eq!(journal_moves(&dir), ITALIAN[..2]);
        match j.news() {
            Some(Report::Blocked { full: true, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(j.news(), None, "said once");
        assert!(j.flush().is_err());
        assert_eq!(j.news(), None, "said once");
        assert_eq!(j.waiting(), 3);
        assert_eq!(j.unwritten().len(), 1, "the game in progress");
        // Space again: everything waiting is written, in order, with the next write.
        j.backlog.refuse = false;
        j.flush().unwrap();
        assert_eq!(journal_moves(&dir), ITALIAN[..5]);
        assert_eq!(
            j.news(),
            Some(Report::Written {
                entries: 3,
                full: true
            })
        );
        assert_eq!(j.waiting(), 0);
        play(&mut e, &mut j, &mut t, &ITALIAN[5..]);
        assert_eq!(journal_moves(&dir), ITALIAN);
        // And the daemon started again takes the whole game up.
        drop(j);
        let opened = Journal::open(&dir).unwrap();
        assert_eq!(ucis(&opened.resume.unwrap().0), ITALIAN);
        assert!(opened.repaired.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_finished_game_keeps_its_language_and_takes_tags_changed_after_its_end() {
        use crate::words::{Phrases, Style};
        let dir = scratch("lang-tags");
        let mut j = Journal::open(&dir).unwrap().journal;
        let settings = crate::engine::Settings {
            phrases: Phrases::new(Lang::En, Style::default(), Default::default()),
            pgn_tags: vec![("White".into(), "Ann".into())],
            ..crate::engine::Settings::default()
        };
        let mut e = Engine::new(settings.clone());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        j.sync(&e, &out).unwrap();
        let mut t = 0;
        // Fool's mate.
        play(&mut e, &mut j, &mut t, &["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert!(e.is_over());
        let kept = games(&dir).unwrap();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(kept[0].lang, Some(Lang::En));
        assert!(kept[0].pgn.starts_with("[Event "), "{}", kept[0].pgn);
        assert!(kept[0].pgn.contains("[White \"Ann\"]"));
        let file = std::fs::read_to_string(&kept[0].path).unwrap();
        assert!(file.starts_with("% chessboardd lang=en\n[Event "), "{file}");
        // The name put right after the end (SIGHUP): the game's file takes it.
        e.reconfigure(crate::engine::Settings {
            pgn_tags: vec![("White".into(), "Anna Berg".into())],
            ..settings
        });
        j.sync(&e, &[]).unwrap();
        let again = games(&dir).unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].path, kept[0].path);
        assert_eq!(
            again[0].pgn,
            kept[0].pgn.replace("\"Ann\"", "\"Anna Berg\"")
        );
        assert_eq!(again[0].lang, Some(Lang::En));
        // And the journal says so: a daemon started again reads the new tags.
        drop(j);
        let read = parse(&std::fs::read(dir.join(JOURNAL)).unwrap());
        let g = fold(&read).game.unwrap();
        assert_eq!(g.tags, [("White".to_string(), "Anna Berg".to_string())]);
        assert_eq!(g.lang.as_deref(), Some("en"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_journal_of_an_older_version_has_no_language_and_a_file_without_the_line_neither() {
        let old = "{\"k\":\"start\",\"fen\":\"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\",\"date\":\"2026.11.30\",\"time\":\"10:00:00\"}";
        let e: Entry = serde_json::from_str(old).unwrap();
        let r = Recorded::from_entries(&[e]).unwrap();
        assert_eq!(r.lang, None);
        assert_eq!(read_file_text("[Event \"x\"]\n"), (None, "[Event \"x\"]\n"));
        assert_eq!(
            read_file_text("% chessboardd lang=xx\n[Event \"x\"]\n"),
            (None, "[Event \"x\"]\n")
        );
    }

    #[test]
    fn a_new_game_while_the_disk_is_full_keeps_the_old_one_too() {
        let dir = scratch("backlog-new-game");
        let mut j = Journal::open(&dir).unwrap().journal;
        let mut e = Engine::new(crate::engine::Settings::default());
        let mut out = Vec::new();
        e.new_game(0, Chess::default(), true, &mut out);
        j.sync(&e, &out).unwrap();
        let mut t = 0;
        j.backlog.refuse = true;
        play(&mut e, &mut j, &mut t, &ITALIAN[..4]);
        // A new game (the arbiter's command) while nothing of the first is written.
        let mut out = Vec::new();
        t += 1000;
        e.new_game(t, Chess::default(), true, &mut out);
        let _ = j.sync(&e, &out);
        play(&mut e, &mut j, &mut t, &ITALIAN[..2]);
        j.backlog.refuse = false;
        j.flush().unwrap();
        assert_eq!(journal_moves(&dir), ITALIAN[..2]);
        let kept = games(&dir).unwrap();
        let finished: Vec<&Kept> = kept
            .iter()
            .filter(|k| k.path.extension().is_some_and(|x| x == "pgn"))
            .collect();
        assert_eq!(finished.len(), 1, "{kept:?}");
        assert!(
            finished[0].pgn.contains("1. e4 e5 2. Nf3 Nc6 *"),
            "{}",
            finished[0].pgn
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_long_backlog_folds_into_one_rewrite_of_the_game() {
        let dir = scratch("backlog-fold");
        std::fs::create_dir_all(&dir).unwrap();
        let mut b = Backlog::new(&dir);
        b.push(Op::Pgn {
            name: "a.pgn".into(),
            text: "1. e4 *\n".into(),
        });
        for i in 0..=MAX_ENTRIES {
            b.push(Op::Line(Entry::Clocks {
                white: i as i64,
                black: 0,
            }));
        }
        let current = game(&ITALIAN);
        b.fold_if_long(|| current.clone());
        assert_eq!(b.len(), 2);
        assert_eq!(b.entries(), current.len());
        let (done, result) = b.flush();
        result.unwrap();
        assert_eq!(done, 1 + current.len());
        assert_eq!(journal_moves(&dir), ITALIAN);
        assert!(dir.join(GAMES).join("a.pgn").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
