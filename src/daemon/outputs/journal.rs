//! The game's record as an output: every batch is on disk (or, the disk full, kept in memory
//! until it takes it) before anything else hears of it, and what the record has to say of
//! itself (repaired, the disk full, written again) is said on every board.

use std::path::Path;

use super::{Batch, Finishing, Output};
use crate::engine::Resumed;
use crate::engine::{Engine, Event, EventKind, Millis, Priority};
use crate::record::{Journal, Recorded, Report};
use crate::words::Phrases;

/// The record of the game in the state directory.
pub struct Record {
    journal: Journal,
    /// How many boards hear what the record says.
    boards: usize,
}

/// The record as opened: the record, the game to take up again, what to say at start.
pub struct Opened {
    pub record: Option<Record>,
    pub resume: Option<(Recorded, Resumed)>,
    pub news: Vec<(String, Priority)>,
}

impl Record {
    /// Opens the record in `dir` (`None`: the game is not recorded), for `boards` boards; the
    /// words of what it says at start are `phrases`'. A record that cannot be opened is
    /// logged, and the game goes on unrecorded.
    pub fn open(dir: Option<&Path>, boards: usize, phrases: &Phrases) -> Opened {
        let mut opened = Opened {
            record: None,
            resume: None,
            news: Vec::new(),
        };
        let Some(dir) = dir else { return opened };
        match Journal::open(dir) {
            Ok(o) => {
                o.notes.into_iter().for_each(log);
                if let Some(r) = &o.repaired {
                    opened
                        .news
                        .push((phrases.record_repaired(r.lost), Priority::Error));
                }
                let mut journal = o.journal;
                if let Some(n) = journal.news() {
                    opened.news.push(record_report(&n, phrases));
                }
                opened.resume = o.resume;
                opened.record = Some(Record { journal, boards });
            }
            Err(e) => log(format!(
                "state directory {}: {e}; the game is not recorded",
                dir.display()
            )),
        }
        opened
    }

    /// The engine has taken up the recorded game: new games are numbered on from its count.
    pub fn adopt(&mut self, engine: &Engine) {
        self.journal.adopt(engine);
    }

    /// What the record has to say since it was last asked, said on every board.
    fn tell(&mut self, batch: &mut Batch) {
        if let Some(n) = self.journal.news() {
            let (text, priority) = record_report(&n, &batch.leader.settings().phrases);
            log_report(&n);
            say_everywhere(batch.events, self.boards, batch.now, text, priority);
        }
    }
}

impl Output for Record {
    /// On disk before it is said (or, the disk full, kept until it takes it).
    fn batch(&mut self, batch: &mut Batch) {
        let _ = self
            .journal
            .sync(batch.leader, batch.events.iter().map(|(_, e)| e));
        self.tell(batch);
        if batch.new_game() {
            // The same game has the same time in the record, the live PGN, and after a
            // restart.
            *batch.began = self.journal.began();
        }
    }

    fn event(&mut self, _board: usize, _event: &Event) {}

    fn behind(&self) -> bool {
        self.journal.waiting() > 0
    }

    fn retry(&mut self, batch: &mut Batch) {
        let _ = self.journal.flush();
        self.tell(batch);
    }

    fn finish<'a>(&'a mut self, batch: &'a mut Batch) -> Finishing<'a> {
        let j = &mut self.journal;
        let _ = j.sync(batch.leader, batch.events.iter().map(|(_, e)| e));
        if let Err(e) = j.close() {
            // The last chance: what is not on disk goes to the log, move for move.
            log(format!(
                "the game record cannot be written ({e}): {} writes not done; the games \
                 not on disk follow as PGN",
                j.waiting()
            ));
            for pgn in j.unwritten() {
                log(format!("not written:\n{pgn}"));
            }
        }
        Box::pin(async {})
    }
}

fn log(m: String) {
    tracing::warn!("{m}");
}

/// What the daemon says when its record stops reaching the disk, or reaches it again.
fn record_report(r: &Report, phrases: &Phrases) -> (String, Priority) {
    let w = &phrases.words;
    let text = match r {
        Report::Blocked { full: true, .. } => &w.storage_full,
        Report::Blocked { full: false, .. } => &w.record_failed,
        Report::Written { full: true, .. } => &w.storage_free,
        Report::Written { full: false, .. } => &w.record_written,
    };
    let priority = match r {
        Report::Blocked { .. } => Priority::Error,
        Report::Written { .. } => Priority::Info,
    };
    (crate::words::sentences(text), priority)
}

/// The log line of a change in whether the record reaches the disk.
fn log_report(r: &Report) {
    match r {
        Report::Blocked {
            error,
            full,
            waiting,
        } => tracing::warn!(
            "the game record cannot be written ({error}){}: {waiting} entries kept in memory, \
             written as soon as it can be (every move is kept)",
            if *full { ": the disk is full" } else { "" }
        ),
        Report::Written { entries, .. } => tracing::warn!(
            "the game record is written again: the {entries} entries kept in memory are on disk"
        ),
    }
}

/// A message of the daemon's own (not the engine's) to every board's speaker.
pub fn say_everywhere(
    out: &mut Vec<(usize, Event)>,
    boards: usize,
    t: Millis,
    text: String,
    priority: Priority,
) {
    for b in 0..boards.max(1) {
        out.push((
            b,
            Event {
                t,
                kind: EventKind::Say {
                    text: text.clone(),
                    priority,
                },
            },
        ));
    }
}
