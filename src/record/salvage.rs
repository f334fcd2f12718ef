//! Reading a journal back, whole or damaged: every line whose checksum holds is kept, wherever
//! the damage is, and the game is folded from those lines.
//!
//! What is damage and what is not:
//! - A line ending in CR LF (the file went through a tool that writes DOS line ends) is read as
//!   if it ended in LF: the checksum covers the JSON only.
//! - NUL bytes (a filesystem's answer to a power cut: blocks it had allocated but not written)
//!   are not entries; an entry found after them on the same line, or before them, is kept.
//! - A blank line is nothing.
//! - A last line without its newline, or whose check fails, was being written when the daemon
//!   stopped: it is dropped (the move in it was never announced: entries are on disk first).
//! - Any other line whose check fails is damaged: it is counted, its bytes are kept in the
//!   damaged copy of the journal (see `Journal::open`), and folding goes on past it.
//!
//! Folding past a damaged line (what "taking the game up" means then). Every move entry says
//! which ply it is (`ply`) and the position after it (`fen`), so a gap shows itself:
//! - A lost entry that is not a move (clocks, illegal-move counts) costs nothing lasting: the
//!   next such entry carries the whole state again.
//! - A lost takeback is seen in the next move's ply number, and done.
//! - One or two lost plies are found again: the only moves that lead from the position before
//!   the gap, through the next recorded move, to the position that move recorded. Two plies
//!   are one move of each side and cannot be played in another order, so the answer is unique
//!   but for freaks (two promotions to different pieces on a square that is then captured):
//!   then nothing is guessed.
//! - A wider gap (a block of NULs over many lines) cannot be filled in. Taking the game up to
//!   the gap would have the players put back a position many moves old, which nobody at the
//!   board can do; their board shows the position after the last recorded move, and that
//!   position is known (the Laws too, where a position cannot be determined, have the game go
//!   on from the last one that can be identified). So the game goes on from the position the
//!   first move after the gap recorded, and the game up to the gap is kept as an unfinished
//!   game of its own (a PGN cannot have a hole). The plies between the two are lost, and
//!   counted.
//! - A journal of an older version has neither `ply` nor `fen`: nothing after a gap can be
//!   placed, so the game is taken up to the gap and what follows is counted as lost.
//! - A lost first line (the start) is taken to be the initial position when the first move
//!   fits it; the date is then unknown (`????.??.??`). Otherwise the game goes on from the
//!   position the first recorded move gives, as for a wide gap.

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

use super::{crc32, Entry, Recorded};
use crate::engine::game::fen_of;

/// The widest gap (in plies) that is filled in by finding the moves again.
pub const MAX_BRIDGE: u32 = 2;

/// What reading a journal found.
#[derive(Debug, Default)]
pub struct Read {
    pub entries: Vec<Entry>,
    /// Indices into `entries` of those that follow damaged lines.
    pub after_damage: Vec<usize>,
    /// The numbers (from 1) of the damaged lines.
    pub damaged: Vec<usize>,
    /// A last line cut short (dropped).
    pub torn: bool,
}

/// One checked line: its JSON, checksum and entry.
fn checked(line: &[u8]) -> Option<Entry> {
    let text = std::str::from_utf8(line).ok()?;
    let (json, crc) = text.rsplit_once('\t')?;
    if crc.len() != 8 || u32::from_str_radix(crc, 16).ok()? != crc32(json.as_bytes()) {
        return None;
    }
    serde_json::from_str(json).ok()
}

/// The entry of a line, NULs and a CR set aside.
fn entry_of(line: &[u8]) -> Option<Entry> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match (
        line.iter().position(|b| *b == 0),
        line.iter().rposition(|b| *b == 0),
    ) {
        (Some(first), Some(last)) => checked(&line[last + 1..]).or_else(|| checked(&line[..first])),
        _ => checked(line),
    }
}

/// Reads journal text: every whole, checked line, wherever the damage is.
pub fn parse(text: &[u8]) -> Read {
    let mut r = Read::default();
    let pieces: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    let mut damage_before = false;
    for (i, raw) in pieces.iter().enumerate() {
        let last = i + 1 == pieces.len();
        let Some(line) = raw.strip_suffix(b"\n") else {
            // No newline: only the last piece can lack one. Cut short, or NULs at the end.
            r.torn = true;
            continue;
        };
        if line.is_empty() || line == b"\r" {
            continue;
        }
        match entry_of(line) {
            Some(e) => {
                if std::mem::take(&mut damage_before) {
                    r.after_damage.push(r.entries.len());
                }
                r.entries.push(e);
            }
            None if last => r.torn = true,
            None => {
                r.damaged.push(i + 1);
                damage_before = true;
            }
        }
    }
    r
}

/// The game a journal's entries make, damage and all.
#[derive(Debug, Default)]
pub struct Folded {
    /// The game; `None` when no entry could be placed.
    pub game: Option<Recorded>,
    /// The games up to gaps that could not be filled in (unfinished; each to be kept apart).
    pub parts: Vec<Recorded>,
    /// Plies found again across gaps.
    pub recovered: u32,
    /// Plies known to be lost: in no part and not in the game (a damaged line of an older
    /// journal may have held more).
    pub lost_plies: u32,
    /// Entries read whole but left out: after a point past which the game cannot be followed.
    pub dropped: usize,
    /// The first line (the game's start) was lost.
    pub start_lost: bool,
}

impl Folded {
    /// Entries lost to the game: damaged lines not made good by a ply found again, and whole
    /// entries that could not be placed.
    pub fn lost_entries(&self, read: &Read) -> usize {
        read.damaged.len().saturating_sub(self.recovered as usize) + self.dropped
    }

    /// Whether the record lost or left out anything at all (the journal is to be repaired).
    pub fn damaged(&self, read: &Read) -> bool {
        !read.damaged.is_empty() || self.dropped > 0 || self.start_lost || !self.parts.is_empty()
    }
}

/// The initial position in FEN.
pub fn initial_fen() -> String {
    fen_of(&Chess::default())
}

fn position(fen: &str) -> Option<Chess> {
    fen.parse::<Fen>()
        .ok()?
        .into_position(CastlingMode::Standard)
        .ok()
}

fn uci_move(pos: &Chess, uci: &str) -> Option<Move> {
    uci.parse::<UciMove>().ok()?.to_move(pos).ok()
}

/// The position after `m`.
fn after(pos: &Chess, m: Move) -> Chess {
    let mut p = pos.clone();
    p.play_unchecked(m);
    p
}

/// The `k` moves from `pos` after which `next` (UCI) leads to `fen`, if exactly one sequence
/// does.
pub fn bridge(pos: &Chess, k: u32, next: &str, fen: &str) -> Option<Vec<Move>> {
    fn search(
        pos: &Chess,
        k: u32,
        next: &str,
        fen: &str,
        path: &mut Vec<Move>,
        found: &mut Vec<Vec<Move>>,
    ) {
        if found.len() > 1 {
            return;
        }
        if k == 0 {
            if uci_move(pos, next).is_some_and(|m| fen_of(&after(pos, m)) == fen) {
                found.push(path.clone());
            }
            return;
        }
        for m in pos.legal_moves() {
            path.push(m);
            search(&after(pos, m), k - 1, next, fen, path, found);
            path.pop();
        }
    }
    let mut found = Vec::new();
    search(pos, k, next, fen, &mut Vec::new(), &mut found);
    (found.len() == 1).then(|| found.remove(0))
}

/// The game being folded: the record, the position before each of its plies and after the
/// last, and how many plies of the whole game came before its start (after a wide gap).
struct Fold {
    rec: Recorded,
    positions: Vec<Chess>,
    base: u32,
}

impl Fold {
    fn new(rec: Recorded, start: Chess, base: u32) -> Fold {
        Fold {
            rec,
            positions: vec![start],
            base,
        }
    }

    fn pos(&self) -> &Chess {
        self.positions.last().expect("never empty")
    }

    /// The ply the next move would be, in the whole game's count.
    fn next_ply(&self) -> u32 {
        self.base
            .saturating_add(self.rec.moves.len() as u32)
            .saturating_add(1)
    }

    fn push(&mut self, m: Move, clocks: Option<(i64, i64)>, recovered: bool) {
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let next = after(self.pos(), m);
        self.positions.push(next);
        self.rec.push_move(uci, clocks, recovered);
        self.rec.clocks = clocks.or(self.rec.clocks);
    }

    fn truncate(&mut self, plies: usize) {
        self.rec.truncate_moves(plies);
        self.positions.truncate(plies + 1);
        self.rec.clocks = self.rec.moves.last().and_then(|m| m.1).or(self.rec.clocks);
    }
}

/// The ply count the rest of the entries would have taken the game to, from `at` plies: what
/// is lost when they cannot be placed.
fn reach(rest: &[Entry], mut at: u32) -> u32 {
    for e in rest {
        match e {
            Entry::Move { ply, .. } => at = ply.unwrap_or(at.saturating_add(1)),
            Entry::Takeback { plies } => at = *plies as u32,
            _ => {}
        }
    }
    at
}

/// Folds the entries read into the game to take up (see the module's comment).
pub fn fold(read: &Read) -> Folded {
    let mut out = Folded::default();
    let entries = &read.entries;
    let Some(first) = entries.first() else {
        return out;
    };
    let (mut g, mut from) = match first {
        Entry::Start {
            fen,
            date,
            time,
            time_control,
            tags,
            computer,
            lang,
        } => match position(fen) {
            Some(p) => (
                Fold::new(
                    Recorded {
                        tags: tags.clone(),
                        computer: computer.clone(),
                        lang: lang.clone(),
                        ..Recorded::new(
                            fen.clone(),
                            date.clone(),
                            time.clone(),
                            time_control.clone(),
                        )
                    },
                    p,
                    0,
                ),
                1,
            ),
            None => {
                out.dropped = entries.len();
                return out;
            }
        },
        _ => {
            out.start_lost = true;
            let rec = Recorded::new(initial_fen(), "????.??.??".into(), String::new(), None);
            (Fold::new(rec, Chess::default(), 0), 0)
        }
    };
    // Damage since the last move placed: an older journal's next move cannot be placed.
    let mut damage_since_move = out.start_lost;
    while from < entries.len() {
        let i = from;
        from += 1;
        if read.after_damage.contains(&i) {
            damage_since_move = true;
        }
        match &entries[i] {
            Entry::Start { .. } => out.dropped += 1,
            Entry::Move {
                uci,
                clocks,
                ply,
                fen,
                recovered,
            } => {
                let here = g.next_ply();
                let want = ply.unwrap_or(here);
                if (ply.is_none() && damage_since_move) || want <= g.base {
                    return stop(out, g, &entries[i..]);
                }
                damage_since_move = false;
                if want < here {
                    // A takeback whose entry was lost.
                    g.truncate((want - 1 - g.base) as usize);
                } else if want > here {
                    let missing = want - here;
                    let found = fen
                        .as_deref()
                        .filter(|_| missing <= MAX_BRIDGE)
                        .and_then(|f| bridge(g.pos(), missing, uci, f));
                    let Some(ms) = found else {
                        if split(&mut out, &mut g, fen.as_deref(), want, *clocks) {
                            continue;
                        }
                        return stop(out, g, &entries[i..]);
                    };
                    for m in ms {
                        g.push(m, None, false);
                    }
                    out.recovered = out.recovered.saturating_add(missing);
                }
                let fits = uci_move(g.pos(), uci).filter(|m| {
                    fen.as_ref()
                        .is_none_or(|f| fen_of(&after(g.pos(), *m)) == *f)
                });
                match fits {
                    Some(m) => g.push(m, *clocks, *recovered),
                    None if split(&mut out, &mut g, fen.as_deref(), want, *clocks) => {}
                    None => return stop(out, g, &entries[i..]),
                }
            }
            Entry::Takeback { plies } => {
                let plies = *plies as u32;
                if plies < g.base {
                    return stop(out, g, &entries[i..]);
                }
                g.truncate((plies - g.base) as usize);
            }
            Entry::Illegal {
                white,
                black,
                clocks,
            } => {
                g.rec.illegal = (*white, *black);
                g.rec.clocks = clocks.or(g.rec.clocks);
            }
            Entry::Clocks { white, black } => g.rec.clocks = Some((*white, *black)),
            Entry::Tags { tags } => g.rec.tags = tags.clone(),
            Entry::End {
                result,
                reason,
                file,
            } => {
                g.rec.ended = Some((result.clone(), reason.clone()));
                g.rec.adjourned = None;
                g.rec.file = Some(file.clone());
            }
            Entry::Reopen => g.rec.ended = None,
            // (An envelope of another position than the game's is none of this game's.)
            Entry::Adjourned(sealed) => {
                g.rec.adjourned = (fen_of(g.pos()) == sealed.fen).then(|| sealed.clone());
            }
            Entry::Note { after, text } => {
                // (Of a ply the salvaged game no longer begins with: left out.)
                if let Some(at) = (*after as u64).checked_sub(u64::from(g.base)) {
                    g.rec.notes.push((at as usize, text.clone()));
                }
            }
        }
    }
    out.game = Some(g.rec);
    out
}

/// The game cannot be followed from here: it is taken up as it stands, the rest left out.
fn stop(mut out: Folded, g: Fold, rest: &[Entry]) -> Folded {
    let at = g.next_ply() - 1;
    out.dropped += rest.len();
    out.lost_plies = out
        .lost_plies
        .saturating_add(reach(rest, at).saturating_sub(at));
    out.game = Some(g.rec);
    out
}

/// A gap that cannot be filled in, at the move of ply `ply` that recorded the position `fen`
/// after it: the game so far is kept apart (in `out.parts`), and `g` goes on from that
/// position. False (and nothing changed) when the move recorded no position (an older
/// journal) or an unreadable one.
fn split(
    out: &mut Folded,
    g: &mut Fold,
    fen: Option<&str>,
    ply: u32,
    clocks: Option<(i64, i64)>,
) -> bool {
    let Some((fen, pos)) = fen.and_then(|f| Some((f, position(f)?))) else {
        return false;
    };
    out.lost_plies = out
        .lost_plies
        .saturating_add(ply.saturating_sub(g.next_ply() - 1));
    let rec = Recorded {
        start_fen: fen.to_string(),
        moves: Vec::new(),
        recovered: Vec::new(),
        clocks: clocks.or(g.rec.clocks),
        ended: None,
        file: None,
        ..g.rec.clone()
    };
    let part = std::mem::replace(g, Fold::new(rec, pos, ply));
    if !part.rec.moves.is_empty() {
        out.parts.push(Recorded {
            ended: None,
            ..part.rec
        });
    }
    true
}
