//! What the record has not yet been able to write (a full disk), kept in memory in order and
//! written as soon as the disk takes it again. Nothing is dropped: past [`MAX_ENTRIES`] the
//! journal entries waiting are folded into one rewrite of the current game's journal (a game's
//! size), the finished games' PGN files wait as they are.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{line, Entry, GAMES, JOURNAL};

/// Journal entries kept in memory before they are folded into one rewrite of the game.
pub const MAX_ENTRIES: usize = 4096;

/// One write the record owes, in the order it must reach the disk.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Op {
    /// Keep the journal as it was read (damaged) under another name, for inspection, before
    /// it is replaced.
    Keep(PathBuf),
    /// Replace the journal with these entries (a new game, a repaired journal).
    Fresh(Vec<Entry>),
    /// Append an entry to the journal.
    Line(Entry),
    /// Write (or write again) a game's PGN file in the games directory.
    Pgn { name: String, text: String },
}

/// The writes owed, and the journal file they go to.
pub(super) struct Backlog {
    dir: PathBuf,
    ops: VecDeque<Op>,
    /// The journal, open for appending, once it is known to be the current game's.
    file: Option<File>,
    /// The journal's length after the last whole append: a failed append is cut back to it.
    good_len: u64,
    /// Test only: every write fails as on a full disk.
    #[cfg(test)]
    pub(super) refuse: bool,
}

impl Backlog {
    pub(super) fn new(dir: &Path) -> Backlog {
        Backlog {
            dir: dir.to_path_buf(),
            ops: VecDeque::new(),
            file: None,
            good_len: 0,
            #[cfg(test)]
            refuse: false,
        }
    }

    pub(super) fn push(&mut self, op: Op) {
        self.ops.push_back(op);
    }

    /// Journal entries waiting.
    pub(super) fn entries(&self) -> usize {
        self.ops
            .iter()
            .map(|op| match op {
                Op::Line(_) => 1,
                Op::Fresh(e) => e.len(),
                _ => 0,
            })
            .sum()
    }

    /// Writes waiting.
    pub(super) fn len(&self) -> usize {
        self.ops.len()
    }

    /// The PGN files waiting: their names and text.
    pub(super) fn pgns(&self) -> impl Iterator<Item = (&str, &str)> {
        self.ops.iter().filter_map(|op| match op {
            Op::Pgn { name, text } => Some((name.as_str(), text.as_str())),
            _ => None,
        })
    }

    /// Past [`MAX_ENTRIES`]: the journal's writes waiting are replaced by one rewrite with
    /// `current` (the current game's entries, which say all the dropped ones said about it;
    /// the games before it are in their PGN files waiting).
    pub(super) fn fold_if_long(&mut self, current: impl FnOnce() -> Vec<Entry>) {
        if self.entries() <= MAX_ENTRIES {
            return;
        }
        self.ops
            .retain(|op| matches!(op, Op::Keep(_) | Op::Pgn { .. }));
        self.ops.push_back(Op::Fresh(current()));
    }

    /// Writes what is waiting, in order, until one write fails; returns how many entries and
    /// files were written, or the error that stopped it (what is not written stays).
    pub(super) fn flush(&mut self) -> (usize, std::io::Result<()>) {
        let mut done = 0;
        while let Some(op) = self.ops.front() {
            #[cfg(test)]
            if self.refuse {
                return (done, Err(std::io::Error::from_raw_os_error(libc::ENOSPC)));
            }
            let result = match op {
                Op::Line(_) => {
                    // Every line waiting in a row, in one write.
                    let n = self
                        .ops
                        .iter()
                        .take_while(|op| matches!(op, Op::Line(_)))
                        .count();
                    let text: String = self
                        .ops
                        .iter()
                        .take(n)
                        .filter_map(|op| match op {
                            Op::Line(e) => Some(line(e)),
                            _ => None,
                        })
                        .collect();
                    self.append(text.as_bytes()).map(|()| n)
                }
                Op::Fresh(entries) => {
                    let text: String = entries.iter().map(line).collect();
                    self.fresh(text.as_bytes()).map(|()| 1)
                }
                Op::Keep(to) => keep(&self.dir.join(JOURNAL), to).map(|()| 1),
                Op::Pgn { name, text } => {
                    let games = self.dir.join(GAMES);
                    std::fs::create_dir_all(&games)
                        .and_then(|()| crate::fsutil::replace(&games.join(name), text.as_bytes()))
                        .map(|()| 1)
                }
            };
            match result {
                Ok(n) => {
                    // An op done: an entry or file more.
                    for _ in 0..n {
                        if let Some(op) = self.ops.pop_front() {
                            done += match op {
                                Op::Fresh(e) => e.len(),
                                _ => 1,
                            };
                        }
                    }
                }
                Err(e) => return (done, Err(e)),
            }
        }
        (done, Ok(()))
    }

    fn append(&mut self, text: &[u8]) -> std::io::Result<()> {
        if self.file.is_none() {
            let f = OpenOptions::new()
                .append(true)
                .create(true)
                .open(self.dir.join(JOURNAL))?;
            self.good_len = f.metadata()?.len();
            self.file = Some(f);
        }
        let f = self.file.as_mut().expect("opened above");
        match f.write_all(text).and_then(|()| f.sync_data()) {
            Ok(()) => {
                self.good_len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Never half a line before good ones.
                let _ = f.set_len(self.good_len);
                let _ = f.sync_data();
                Err(e)
            }
        }
    }

    fn fresh(&mut self, text: &[u8]) -> std::io::Result<()> {
        crate::fsutil::replace(&self.dir.join(JOURNAL), text)?;
        let f = OpenOptions::new()
            .append(true)
            .open(self.dir.join(JOURNAL))?;
        self.good_len = f.metadata()?.len();
        self.file = Some(f);
        Ok(())
    }

    /// Makes sure everything written is on disk.
    pub(super) fn sync(&self) -> std::io::Result<()> {
        match &self.file {
            Some(f) => f.sync_all(),
            None => Ok(()),
        }
    }
}

/// Keeps the journal's bytes under `to`: a second name for the same file (no space needed),
/// or a copy where the filesystem has no links.
fn keep(journal: &Path, to: &Path) -> std::io::Result<()> {
    if to.exists() {
        return Ok(());
    }
    if std::fs::hard_link(journal, to).is_err() {
        let copied = std::fs::copy(journal, to);
        if let Err(e) = copied {
            let _ = std::fs::remove_file(to);
            return Err(e);
        }
        File::open(to)?.sync_all()?;
    }
    if let Some(dir) = to.parent() {
        crate::fsutil::sync_dir(dir);
    }
    Ok(())
}
