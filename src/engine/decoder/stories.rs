//! Stories: the sequences of legal moves from the agreed position that explain what the board
//! was seen doing since, each with what it needs the board to have done unseen, and what that
//! costs. Pure: the agreed position, the observation log and the board now in; the stories,
//! cheapest first, out.
//!
//! Every change a move makes (a lift from its square, a placement on its new one, for a capture
//! the captured piece's lift and the capturing piece's placement on its square) is matched with
//! the square's next observation. What the board did not show costs, by how a board goes wrong
//! (see [`cost`]): a capture whose two changes were quicker than the debounce time and left a
//! flicker costs least, a change seen out of its order (a reading that came late) more, a change
//! the board has not shown yet (a reading still owed) as much, for it may still come, and a
//! change the board never showed at all (a placement overtaken by the piece's next move before
//! its reading came, a capture without a trace) most. Observations no move needs are a piece
//! lifted and put back (a touch, cheap), or set down and taken away again: when brief, a slide
//! over the square (free on the way of a sliding move of the story, a little off it); when it
//! stood, a move made and taken back (an illegal move put right, which costs as an illegal move
//! does, unless the square lies on the way of a sliding move of the story, set down while that
//! move was made: then its lift came late, or is still owed). What the board shows beyond the
//! moves is the next move in the hand, or not. A square read again as it stood (an echo)
//! changed and changed back unseen: it stands for two changes of the story the board never
//! showed (a placement overtaken by the piece's lift, a capture whose captured piece's lift was
//! lost), and a story that leaves it unexplained pays for it.
//!
//! The stories of one search are compared by their cost: the cheapest is what the board most
//! likely did, and several close ones mean that the board cannot tell yet.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Bitboard, Chess, EnPassantMode, Move, Position, Role, Square};

use super::log::{lifted_late, own_squares, Seen, Trace};
use super::physical::{piece_code, Physical};
use super::recognise::{classify, footprint, Legal, Verdict};
use crate::engine::event::Millis;
use crate::engine::input::{SquareState, EMPTY, OCCUPIED};

/// What a story's departures from a perfect board cost, about the bits of how unlikely each is:
/// one reading late or owed is likelier than an illegal move standing, two are not.
pub mod cost {
    /// A capture whose captured piece was swept off and the capturing piece set down quicker
    /// than the debounce time: only a flicker on the square shows it.
    pub const SWAP: u32 = 2;
    /// A change seen out of its order in a whole-board report (the report after a lost reading).
    pub const LATE_FRAME: u32 = 2;
    /// A change seen out of its order: its reading came late, after the next move's.
    pub const LATE: u32 = 4;
    /// A change the board has not shown yet (its reading may still come).
    pub const OWED: u32 = 4;
    /// Two changes of a square the board never showed: a placement and the lift after it (the
    /// placement's reading late, and overtaken by the lift, whose own reading was lost too: a
    /// lift read on a square that stood empty is an echo, and costs less). As much as two
    /// readings owed that never come.
    pub const VANISHED: u32 = 8;
    /// A capture the board showed nothing of on its square: the captured piece's lift lost
    /// (the capturing piece's placement changes nothing there).
    pub const UNTRACED: u32 = 4;
    /// A change owed, or seen late, across a whole-board report that did not show it (counted for
    /// two). Little: a sensor that sees a piece late shows it late in its reports too, and only
    /// a lost reading is sure to show in the next one.
    pub const REPORT_MISS: u32 = 1;
    /// A piece lifted and put back on its square (a touch, an adjustment): rare where a piece
    /// touched must be moved, as rare as a reading late in a report and a little more (with
    /// less, a queen lifted and put back and a rook's move and a king's read late in a report
    /// explained the board as well as the queen's move and castling, a placement late).
    pub const TOUCH: u32 = 3;
    /// A piece set down on a square where it stood for the settle time, then taken away: a
    /// move put back (an illegal move put right, a move refused).
    pub const STOOD: u32 = 7;
    /// The board shows, beyond the moves, a piece released where no legal move takes it.
    pub const ILLEGAL: u32 = 7;
    /// The board shows, beyond the moves, nothing the player to move could be doing.
    pub const UNEXPLAINED: u32 = 14;
    /// The board shows a legal move made beyond the story's moves (a longer story tells it).
    pub const BEYOND: u32 = 1;
    /// A board that identifies pieces shows another piece than the story has.
    pub const WRONG_PIECE: u32 = 10;
    /// A change seen before the first change of the move before its own (seen in order): a
    /// reading is late, never early, so the story has the change in the wrong move.
    pub const EARLY: u32 = 10;
    /// A change the board has not shown for [`OWED_PATIENCE_MS`](super::OWED_PATIENCE_MS):
    /// the board says otherwise.
    pub const OVERDUE: u32 = 10;
    /// A change not seen because nobody heard the board (a gap), that the report after it does
    /// not show either (the square changed back, or a capture on a square that stayed full).
    pub const GAP: u32 = 1;
    /// A flicker no move accounts for and no change of its square follows at once (not contact
    /// bounce): a change the sensor lost again, left unexplained. Dearer than a capture's
    /// swap that explains it: a piece lifted and a flicker on a square it can capture is the
    /// capture (when the board has stood still, it is taken, not waited for).
    pub const FLICKER: u32 = 3;
    /// A piece set down on a square for a moment, off the way of every sliding move of the
    /// story: a piece dragged over it, a hand brushing it (a slide's way costs nothing).
    pub const BRUSH: u32 = 1;
    /// A square read again as it stood (an echo) that no move changed and changed back: the
    /// board says a piece stood there, or left it, and the story says not; two changes never
    /// shown, as [`VANISHED`].
    pub const ECHO: u32 = 3;
}

/// A time when the board was not heard (a link lost, the daemon down): what was done then
/// shows only in the board's report after it, in no order, and a square that changed and changed
/// back meanwhile shows nothing at all.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// Since when nothing was heard.
    pub from: Millis,
    /// The time of the report after it.
    pub to: Millis,
    /// The squares the report showed changed.
    pub changed: Bitboard,
}

/// Squares a story may have changed and changed back unseen in a gap (a pawn's first square of
/// two moves, a piece captured where it had just gone).
pub const GAP_UNSEEN: u32 = 2;

/// What a search is asked.
#[derive(Clone, Debug)]
pub struct Query<'a> {
    /// The agreed position.
    pub start: &'a Chess,
    /// What the board was seen doing since, in time order.
    pub log: &'a [Seen],
    /// The board now (what the sensors show).
    pub phys: &'a Physical,
    /// The board's last change: a square, and whether it was a placement.
    pub last_change: Option<(Square, bool)>,
    /// A piece set down and taken away again after standing this long was a move put back.
    pub settle_ms: Millis,
    /// The piece a promotion makes on a board that cannot see pieces.
    pub promotion: Role,
    /// The promotions recorded since `start`: the same promotion in a story makes the piece it
    /// was recorded with (chosen in its turn, gone by now).
    pub promoted: &'a [Move],
    /// The most moves a story has.
    pub max_plies: usize,
    /// Only stories that begin with these moves.
    pub prefix: &'a [Move],
    /// Stories costing more than the cheapest by more than this are not kept.
    pub margin: u32,
    /// The time now: a change the board has not shown for [`OWED_PATIENCE_MS`] since the move
    /// it belongs to will not be shown.
    pub now: Millis,
    /// When the board was not heard since the agreed point, oldest first.
    pub gaps: &'a [Gap],
    /// When the board reported its whole board since the agreed point (the last few).
    pub reports: &'a [Millis],
    /// The nodes the search may visit, all its passes together (at most [`BUDGET`] a pass).
    pub budget: usize,
    /// Stories costing more than this are not looked for ([`u32::MAX`]: every story).
    pub ceiling: u32,
}

/// How long a board may take to show a change (a reading late, a lost one shown again by a
/// whole-board report): a story that needs one not shown for longer is not what happened.
pub const OWED_PATIENCE_MS: Millis = 3000;

/// A lift owed by a move whose piece was seen set down is overdue this much sooner after the
/// placement than [`OWED_PATIENCE_MS`] (a reading comes at most 2.5 s late).
const SET_DOWN_PATIENCE_MS: Millis = 500;

/// What a story needs that the board did not show, counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Departures {
    /// Changes made while nobody heard the board that its report after does not show.
    pub unseen: u32,
    pub swaps: u32,
    pub late: u32,
    pub owed: u32,
    pub vanished: u32,
    pub stood: u32,
}

/// One story.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Story {
    pub moves: Vec<Move>,
    /// When each move was complete, as well as the board tells: its last change seen in its
    /// order, and no later than the next move's first.
    pub times: Vec<Millis>,
    pub cost: u32,
    pub departures: Departures,
    /// Squares whose change the board has not shown yet.
    pub owed: Bitboard,
    /// What the board shows beyond the moves, in the position after them (the owed squares
    /// taken as the story has them).
    pub beyond: Verdict,
    /// The observations the moves account for (indices into the log, ascending).
    pub matched: Vec<usize>,
    /// Those of them the story takes as seen out of their order: readings that came late.
    pub late: Vec<usize>,
    /// Some of the moves were seen only at once (in one whole-board report): the board does not
    /// tell their order.
    pub unordered: bool,
}

impl Story {
    /// The position after the story's moves.
    pub fn position(&self, start: &Chess) -> Chess {
        let mut pos = start.clone();
        for m in &self.moves {
            pos.play_unchecked(*m);
        }
        pos
    }

    /// The story needs nothing the board did not show, and the board shows the next move under
    /// way or nothing.
    pub fn plain(&self) -> bool {
        self.cost == 0
    }
}

/// The stories a search found.
#[derive(Clone, Debug, Default)]
pub struct Found {
    /// Cheapest first; among equal costs, fewer moves first, then in the order found.
    pub stories: Vec<Story>,
    /// The search looked at everything within its bounds (not stopped by its budget).
    pub complete: bool,
    /// The nodes it visited.
    pub nodes: usize,
}

impl Found {
    pub fn best(&self) -> Option<&Story> {
        self.stories.first()
    }

    /// Takes in `more` stories (those it has already, by their moves, once): cheapest first,
    /// among equal costs fewer moves first, and none dearer than the best by more than `margin`.
    pub fn add(&mut self, more: Vec<Story>, margin: u32) {
        for story in more {
            if !self.stories.iter().any(|s| s.moves == story.moves) {
                self.stories.push(story);
            }
        }
        self.stories.sort_by_key(|s| (s.cost, s.moves.len()));
        if let Some(best) = self.best().map(|s| s.cost) {
            self.stories.retain(|s| s.cost <= best + margin);
        }
    }

    /// The stories as cheap as the best.
    pub fn cheapest(&self) -> &[Story] {
        let Some(best) = self.best() else {
            return &[];
        };
        let n = self
            .stories
            .iter()
            .take_while(|s| s.cost == best.cost)
            .count();
        &self.stories[..n]
    }
}

/// Nodes a pass of a search visits at most (a few milliseconds).
pub const BUDGET: usize = 20_000;
/// Nodes a whole search visits at most, its passes together.
pub const SEARCH_BUDGET: usize = 2 * BUDGET;
/// Stories kept at most.
const KEPT: usize = 24;

/// The stories that explain the log from the agreed position, cheapest first.
pub fn search(q: &Query) -> Found {
    // Cheap stories first: a search bounded low ends quickly, and most boards have a cheap
    // story; the bound rises only while none is found. The last pass keeps every story within
    // the margin of the cheapest.
    let last = LAST_CAP.min(q.ceiling);
    let mut cap = FIRST_CAP.min(last);
    let mut nodes = 0;
    let mut s = Search::new(q);
    // The stories of the last pass that found any: a wider pass that runs out of nodes before
    // it reaches them again has not made them any less true.
    let mut earlier = Vec::new();
    loop {
        if !s.found.is_empty() {
            earlier = std::mem::take(&mut s.found);
        }
        s.pass(cap, q.budget.saturating_sub(nodes).min(BUDGET));
        let given = s.budget;
        s.node(q.start.clone());
        nodes += given - s.budget;
        let best = s.found.iter().map(|st| st.cost).min();
        match best {
            Some(b) if b.saturating_add(q.margin) <= cap || cap >= last => break,
            Some(_) if nodes >= q.budget => break,
            Some(b) => cap = b.saturating_add(q.margin).min(last),
            None if cap >= last || s.budget == 0 || nodes >= q.budget || s.over == u32::MAX => {
                break
            }
            // No story within the cap: the next pass's bound is the cheapest one left for it
            // and the margin (every story cheaper was looked at), at least twice the cap.
            None => cap = s.over.saturating_add(q.margin).max(cap * 2).min(last),
        }
    }
    let mut found = Found {
        stories: Vec::new(),
        complete: s.budget > 0,
        nodes,
    };
    found.add(s.found, q.margin);
    if !found.complete {
        found.add(earlier, q.margin);
    }
    found
}

/// The bound of a search's first pass (a plain story, found in a few nodes), and of its last.
const FIRST_CAP: u32 = 1;
const LAST_CAP: u32 = 48;

/// A change a move makes on one square.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Change {
    /// The square empties (`Lifted`) or fills (`Placed`).
    Flip(Square, Trace),
    /// The captured piece taken off and the capturing piece set down.
    Capture(Square),
}

/// The changes of `m` in `pos`, the squares it empties first.
fn changes(pos: &Chess, m: &Move, out: &mut Vec<Change>) {
    out.clear();
    let before = pos.board().occupied();
    let (emptied, filled, _) = footprint(pos.turn(), m);
    for sq in emptied {
        out.push(Change::Flip(sq, Trace::Lifted));
    }
    for sq in filled {
        if before.contains(sq) {
            out.push(Change::Capture(sq));
        } else {
            out.push(Change::Flip(sq, Trace::Placed));
        }
    }
}

/// What matching a change may alter, to put back.
#[derive(Clone)]
struct Saved {
    /// The square the change is on (the only one whose count of observations accounted for it
    /// alters), that count, and since when the square was owed.
    square: Square,
    cur: u16,
    owed_since: Millis,
    owed_from: Millis,
    owed: Bitboard,
    owed_in_gap: Bitboard,
    owed_touched: Bitboard,
    gap_unseen: Bitboard,
    assigned: usize,
    cost: u32,
    departures: Departures,
}

/// The move being matched: its number, when the move before it was complete, how many of its
/// changes the board showed, and when the last of them was seen.
#[derive(Copy, Clone)]
struct Step {
    k: usize,
    floor: Millis,
    /// When the move before began to be seen: pairs of a square since then may be this
    /// move's, skipped only because a reading of that move came late (its end is the floor).
    since_prev: Millis,
    /// This move's first change seen.
    first: Option<Millis>,
    shown: u32,
    /// Some change of the move was read alone, as it happened (not only in a whole-board
    /// report after it).
    heard: bool,
    end: Option<Millis>,
    /// The move may have been made while nobody heard the board: this gap.
    gap: Option<Gap>,
}

impl Step {
    fn seen(self, t: Millis, late: bool) -> Step {
        Step {
            shown: self.shown + 1,
            heard: self.heard || !late,
            end: Some(self.end.map_or(t, |e| e.max(t))),
            first: Some(self.first.map_or(t, |f| f.min(t))),
            ..self
        }
    }
}

/// A reading that came before a move that began at `floor`: earlier, or in the whole-board
/// report that ended the move before (a report tells how the board stood then).
fn ended_before(s: &Seen, floor: Millis) -> bool {
    s.t < floor || s.t == floor && s.late
}

/// A flicker this soon before a change of its square, or after it settled, is that change's
/// contact bounce.
const BOUNCE_MS: Millis = 60;

/// A board that scans its squares may read a move's placement before its lift, by up to a scan
/// (the new square scanned first): a change seen earlier than that before its move's first
/// change needs a reading late as well.
const SCAN_MS: Millis = 100;

/// The log's lifts and placements by square: the indices of each square's, in the order seen,
/// in one list (a search is made for most batches of readings: one allocation, not 64).
struct BySquare {
    /// The squares with any.
    squares: Bitboard,
    indices: Vec<u16>,
    /// Where each square's indices start in `indices` (the 65th: where the last ends).
    starts: [u16; 65],
}

impl BySquare {
    fn new(log: &[Seen]) -> BySquare {
        let mut starts = [0u16; 65];
        for s in log
            .iter()
            .filter(|s| matches!(s.what, Trace::Lifted | Trace::Placed))
        {
            starts[s.square as usize + 1] += 1;
        }
        for i in 1..65 {
            starts[i] += starts[i - 1];
        }
        let mut indices = vec![0; usize::from(starts[64])];
        let mut next = starts;
        for (i, s) in log.iter().enumerate() {
            if matches!(s.what, Trace::Lifted | Trace::Placed) {
                let at = &mut next[s.square as usize];
                indices[usize::from(*at)] = i as u16;
                *at += 1;
            }
        }
        let squares = Square::ALL
            .into_iter()
            .filter(|&sq| starts[sq as usize] < starts[sq as usize + 1])
            .collect();
        BySquare {
            squares,
            indices,
            starts,
        }
    }

    fn at(&self, sq: Square) -> &[u16] {
        let i = sq as usize;
        &self.indices[usize::from(self.starts[i])..usize::from(self.starts[i + 1])]
    }
}

/// A state's key, mixed a word at a time (the states of one search are few; a key needs no
/// defence against chosen input, only spread).
struct Mix(u64);

impl Mix {
    fn add(&mut self, word: u64) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(K);
        self.0 ^= self.0 >> 29;
    }
}

/// The visited states' map hashes their keys no further: they are mixed already.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

struct Search<'a> {
    q: &'a Query<'a>,
    /// Per square, the indices of its observations (lifts and placements) in the log.
    obs: BySquare,
    /// The squares with an observation or a flicker: every move with evidence changes one.
    seen: Bitboard,
    /// The flickers (index into the log) and whether a story uses one.
    glitches: Vec<usize>,
    glitch_used: Vec<bool>,
    /// The echoes (index into the log) and whether a story uses one.
    echoes: Vec<usize>,
    echo_used: Vec<bool>,
    /// Per square, how many of its observations the moves so far account for.
    cur: [u16; 64],
    owed: Bitboard,
    /// Since when each owed square has been owed (the time of its move).
    owed_since: [Millis; 64],
    /// The earliest its move may have been made: before `owed_since` when the move was seen
    /// only in a whole-board report.
    owed_from: [Millis; 64],
    /// Owed squares whose change fell in a gap: nobody heard it.
    owed_in_gap: Bitboard,
    /// Owed squares whose change the sensor caught for a moment (a flicker): the piece
    /// touched it, its settled reading is what is owed.
    owed_touched: Bitboard,
    /// Squares changed unseen in gaps (at most [`GAP_UNSEEN`]).
    gap_unseen: Bitboard,
    /// Observations the moves so far account for, with the move's number.
    assigned: Vec<(usize, usize)>,
    moves: Vec<Move>,
    /// When each move so far was seen complete (its last change seen).
    ends: Vec<Millis>,
    /// When each move so far was first seen (its first change seen, else the move before's).
    firsts: Vec<Millis>,
    cost: u32,
    departures: Departures,
    /// The cheapest story so far.
    best: u32,
    /// No story dearer than this is looked at in this pass.
    cap: u32,
    /// The cheapest cost so far of a story left for being dearer than the cap (`u32::MAX`: none
    /// was; no dearer pass finds more).
    over: u32,
    /// The states gone on with, and at what cost.
    visited: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    budget: usize,
    found: Vec<Story>,
    /// The lists of a move's changes, for the nodes to use again.
    change_lists: Vec<Vec<Change>>,
    scratch: RefCell<Scratch>,
}

impl<'a> Search<'a> {
    /// A search of `q`'s log: its observations sorted by square once, for every pass.
    fn new(q: &'a Query<'a>) -> Search<'a> {
        let log = &q.log[..q.log.len().min(u16::MAX as usize)];
        let mut glitches = Vec::new();
        let mut echoes = Vec::new();
        for (i, s) in log.iter().enumerate() {
            match s.what {
                Trace::Glitch => glitches.push(i),
                Trace::Echo { .. } => echoes.push(i),
                Trace::Lifted | Trace::Placed => {}
            }
        }
        let obs = BySquare::new(log);
        let seen = obs.squares
            | glitches
                .iter()
                .map(|&i| log[i].square)
                .collect::<Bitboard>();
        let n = glitches.len();
        let e = echoes.len();
        Search {
            q,
            obs,
            seen,
            glitches,
            glitch_used: vec![false; n],
            echoes,
            echo_used: vec![false; e],
            cur: [0; 64],
            owed: Bitboard::EMPTY,
            owed_since: [0; 64],
            owed_from: [0; 64],
            owed_in_gap: Bitboard::EMPTY,
            owed_touched: Bitboard::EMPTY,
            gap_unseen: Bitboard::EMPTY,
            assigned: Vec::new(),
            moves: Vec::new(),
            ends: Vec::new(),
            firsts: Vec::new(),
            cost: 0,
            departures: Departures::default(),
            best: u32::MAX,
            cap: 0,
            over: u32::MAX,
            visited: HashMap::default(),
            budget: 0,
            found: Vec::new(),
            change_lists: Vec::new(),
            scratch: RefCell::default(),
        }
    }

    /// Ready for a pass bounded by `cap`, with `budget` nodes: nothing of the pass before is
    /// left but the observations (and the room the pass before took).
    fn pass(&mut self, cap: u32, budget: usize) {
        self.glitch_used.fill(false);
        self.echo_used.fill(false);
        self.cur = [0; 64];
        self.owed = Bitboard::EMPTY;
        self.owed_since = [0; 64];
        self.owed_from = [0; 64];
        self.owed_in_gap = Bitboard::EMPTY;
        self.owed_touched = Bitboard::EMPTY;
        self.gap_unseen = Bitboard::EMPTY;
        self.assigned.clear();
        self.moves.clear();
        self.ends.clear();
        self.firsts.clear();
        self.cost = 0;
        self.departures = Departures::default();
        self.best = u32::MAX;
        self.cap = cap;
        self.over = u32::MAX;
        self.visited.clear();
        self.budget = budget;
        self.found.clear();
    }

    /// The bound past which a story is not worth going on with.
    fn bound(&self) -> u32 {
        self.best.saturating_add(self.q.margin).min(self.cap)
    }

    /// A story that costs `cost` so far is past the bound; one past this pass's cap is noted
    /// ([`Search::over`]: the next pass's bound need be no lower).
    fn past_bound(&mut self, cost: u32) -> bool {
        if cost > self.cap {
            self.over = self.over.min(cost);
        }
        cost > self.bound()
    }

    /// The next observation of `sq` no move accounts for yet.
    fn next(&self, sq: Square) -> Option<usize> {
        self.obs
            .at(sq)
            .get(usize::from(self.cur[sq as usize]))
            .map(|&i| usize::from(i))
    }

    /// The piece a promotion from `m`'s square to its square makes: the one recorded, or the
    /// one chosen now.
    fn promotion_of(&self, m: &Move) -> Role {
        self.q
            .promoted
            .iter()
            .find(|r| r.from() == m.from() && r.to() == m.to())
            .and_then(|r| r.promotion())
            .unwrap_or(self.q.promotion)
    }

    fn node(&mut self, pos: Chess) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        let depth = self.moves.len();
        // The same moves in another order (of moves that do not depend on each other) reach
        // the same state: gone on with once, at the lower cost.
        // (What the moves' changes seen out of order cost only grows as moves are added.)
        let so_far = self.cost
            + if self.seen_in_order() {
                0
            } else {
                self.lateness(&[]).cost
            };
        if self.past_bound(so_far) {
            return;
        }
        let key = self.state_key(&pos);
        match self.visited.get(&key) {
            Some(&c) if c <= so_far => return,
            _ => {
                self.visited.insert(key, so_far);
            }
        }
        let fixed = self.q.prefix.get(depth).copied();
        if fixed.is_none() {
            self.stop_here(&pos);
        }
        if depth >= self.q.max_plies.max(self.q.prefix.len()) {
            return;
        }
        let ids = self.q.phys.ids();
        let floor = self.ends.last().copied().unwrap_or(0);
        let since_prev = self.firsts.last().copied().unwrap_or(0);
        // (A list for each depth, kept from node to node: most nodes are left at once.)
        let mut changes_of = self.change_lists.pop().unwrap_or_default();
        let gap = self.q.gaps.iter().find(|g| floor <= g.to).copied();
        for m in pos.legal_moves() {
            if fixed.is_some_and(|f| f != m) {
                continue;
            }
            // (A promotion of the prefix, or of the record, keeps the piece it was recorded
            // with.)
            if let (false, None, Some(role)) = (ids, fixed, m.promotion()) {
                if role != self.promotion_of(&m) {
                    continue;
                }
            }
            // (A plain move on squares with no observation and no flicker has no evidence.)
            if let (None, None, Move::Normal { from, to, .. }) = (fixed, gap, m) {
                if !self.seen.contains(from) && !self.seen.contains(to) {
                    continue;
                }
            }
            changes(&pos, &m, &mut changes_of);
            if fixed.is_none()
                && !self.evidenced(&changes_of, floor)
                && !gap.is_some_and(|g| self.fits_gap(&changes_of, &g))
            {
                continue;
            }
            let mut next = pos.clone();
            next.play_unchecked(m);
            let step = Step {
                k: depth,
                floor,
                since_prev,
                first: None,
                shown: 0,
                heard: false,
                end: None,
                gap,
            };
            self.change(&next, m, &changes_of, 0, step);
            if self.budget == 0 {
                break;
            }
        }
        self.change_lists.push(changes_of);
    }

    /// Some change of the move is the next thing its square was seen doing (or a flicker
    /// there after the last move).
    fn evidenced(&self, changes_of: &[Change], floor: Millis) -> bool {
        let log = self.q.log;
        changes_of.iter().any(|c| match *c {
            Change::Flip(sq, what) => {
                !self.owed.contains(sq) && self.next(sq).is_some_and(|i| log[i].what == what)
            }
            Change::Capture(sq) => {
                (!self.owed.contains(sq)
                    && self.next(sq).is_some_and(|i| log[i].what == Trace::Lifted))
                    || self.flicker(sq, floor, None).is_some()
            }
        })
    }

    /// What the rest of the search depends on: the position, how far every square's
    /// observations are accounted for, what is owed, the flickers used, when the last move was
    /// done.
    fn state_key(&self, pos: &Chess) -> u64 {
        let mut h = Mix(pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0);
        for four in self.cur.chunks_exact(4) {
            h.add(four.iter().fold(0, |w, &c| w << 16 | u64::from(c)));
        }
        h.add(self.owed.0);
        h.add(self.owed_in_gap.0);
        h.add(self.owed_touched.0);
        h.add(self.gap_unseen.0);
        for used in [&self.glitch_used, &self.echo_used] {
            for word in used.chunks(64) {
                h.add(word.iter().fold(1, |w, &u| w << 1 | u64::from(u)));
            }
        }
        h.add(self.ends.last().map_or(u64::MAX, |&t| t));
        h.add(self.moves.len() as u64);
        // (A piece set down for a moment on the way of a sliding move of the story is that
        // piece passing over, free, and off every way a brush: the squares with observations
        // the moves' ways cross tell two routes to one position apart.)
        h.add((self.ways() & self.seen).0);
        h.0
    }

    /// The squares the sliding moves of the story pass over.
    fn ways(&self) -> Bitboard {
        self.moves
            .iter()
            .filter(|m| matches!(m.role(), Role::Queen | Role::Rook | Role::Bishop))
            .filter_map(|m| Some(shakmaty::attacks::between(m.from()?, m.to())))
            .fold(Bitboard::EMPTY, |ways, way| ways | way)
    }

    /// A move made unseen in `gap`: every square it changes is one the report after the gap
    /// shows changed, or one of the few a story may change unseen there.
    fn fits_gap(&self, changes_of: &[Change], gap: &Gap) -> bool {
        let squares: Bitboard = changes_of
            .iter()
            .map(|c| match *c {
                Change::Flip(sq, _) | Change::Capture(sq) => sq,
            })
            .collect();
        let new = squares & !gap.changed & !self.gap_unseen;
        (self.gap_unseen.count() + new.count()) as u32 <= GAP_UNSEEN
    }

    /// The next observation of `sq` that can be this move's (a piece lifted and put back
    /// before the move began is not): its place in the square's list, its index, and what the
    /// pairs skipped before it cost.
    fn next_after_pairs(&self, sq: Square, floor: Millis) -> Option<(usize, usize, u32)> {
        let log = self.q.log;
        let list = self.obs.at(sq);
        let mut at = usize::from(self.cur[sq as usize]);
        list.get(at)?;
        let mut skipped = 0;
        while log[usize::from(list[at])].t < floor
            && at + 2 < list.len()
            && ended_before(&log[usize::from(list[at + 1])], floor)
        {
            let (a, b) = (&log[usize::from(list[at])], &log[usize::from(list[at + 1])]);
            skipped += self.pair_cost(a, b).0;
            at += 2;
        }
        Some((at, usize::from(list[at]), skipped))
    }

    /// The square's next observation, when [`next_after_pairs`](Self::next_after_pairs)
    /// skipped pairs to reach another: a move before this one may have ended late only because
    /// a reading of its own came late (after this move's), and the pairs are this move's.
    fn unskipped(
        &self,
        sq: Square,
        skipped: Option<(usize, usize, u32)>,
        step: &Step,
    ) -> Option<(usize, usize)> {
        let at = usize::from(self.cur[sq as usize]);
        skipped
            .filter(|&(to, _, _)| to != at)
            .map(|_| (at, usize::from(self.obs.at(sq)[at])))
            .filter(|&(_, i)| self.q.log[i].t >= step.since_prev)
    }

    /// `sq` may change unseen in `gap`: the report shows it changed, or the story has room for
    /// one more square changed unseen.
    fn unseen_fits(&self, sq: Square, gap: &Gap) -> bool {
        gap.changed.contains(sq)
            || self.gap_unseen.contains(sq)
            || self.gap_unseen.count() < GAP_UNSEEN as usize
    }

    /// An unused flicker on `sq` since `floor` (and before `before`) that is not contact
    /// bounce (a flicker just before a change of its square is that change settling).
    fn flicker(&self, sq: Square, floor: Millis, before: Option<Millis>) -> Option<usize> {
        let log = self.q.log;
        (0..self.glitches.len()).find(|&j| {
            let g = &log[self.glitches[j]];
            if self.glitch_used[j] || g.square != sq || g.t < floor {
                return false;
            }
            if before.is_some_and(|b| g.t >= b) {
                return false;
            }
            !self.is_bounce(j)
        })
    }

    /// The flickers no move uses that are the first contact of a piece set down whose reading
    /// came late: the last flicker on the square before that placement's reading, after the
    /// square's change before it and the move's first change, seen before the next move began
    /// where the reading came after. The piece touched the switch as it was set down, in its
    /// turn, and its settled reading came late: one fault, where the flicker left unexplained
    /// counts a second. Each as (the move, when the next move began: the move was complete
    /// then) and the flicker. (Read from the observations [`lateness`](Self::lateness) left in
    /// time order; not in the order's cost, which only grows as moves are added.)
    fn contacts_of_late_placements(&self) -> Vec<(usize, Millis, usize)> {
        let mut contacts = Vec::new();
        if self.glitches.is_empty() {
            return contacts;
        }
        let log = self.q.log;
        let scratch = self.scratch.borrow();
        let order = &scratch.order;
        for &(t, k, i) in order {
            let placed = &log[i];
            if placed.what != Trace::Placed || k >= self.moves.len() {
                continue;
            }
            // (In time order: the first change of a later move is the first such entry.)
            let Some(next_began) = order.iter().find(|o| o.1 > k).map(|o| o.0) else {
                continue;
            };
            if next_began >= t {
                continue;
            }
            let before = self
                .obs
                .at(placed.square)
                .iter()
                .map(|&o| usize::from(o))
                .take_while(|&o| o != i)
                .last()
                .map_or(0, |o| log[o].t);
            // (And after the move's first change seen: a flicker before it is not its piece's.)
            let began = scratch.began.get(k).copied().unwrap_or(Millis::MAX);
            let contact = (0..self.glitches.len()).rev().find(|&j| {
                let g = &log[self.glitches[j]];
                g.square == placed.square && before.max(began) < g.t && g.t < next_began
            });
            if let Some(j) = contact.filter(|&j| !self.glitch_used[j] && !self.is_bounce(j)) {
                if contacts.iter().all(|c: &(usize, Millis, usize)| c.2 != j) {
                    contacts.push((k, next_began, j));
                }
            }
        }
        contacts
    }

    /// Flicker `j` comes just before a change of its square, or just after it settled: that
    /// change's contact bounce.
    fn is_bounce(&self, j: usize) -> bool {
        let log = self.q.log;
        let g = &log[self.glitches[j]];
        self.obs.at(g.square).iter().any(|&i| {
            let o = &log[usize::from(i)];
            o.t.saturating_sub(BOUNCE_MS) <= g.t && g.t <= o.t + BOUNCE_MS
        })
    }

    /// A flicker at `t` read as a change of the move being matched (`step`), more than a
    /// board's scan before the move's first change seen, with nothing read in between: that
    /// change's reading came late as well, two faults where a flicker nothing accounts for is
    /// one (a flicker on a square a piece left, read as another piece's placement lost again;
    /// a flicker on a piece, as a capture swapped faster than the debounce time by a piece
    /// lifted half a second later). (With readings in between, the change read after them is
    /// late by the order of the readings already, and costs as such.)
    fn flicker_before_its_move(&mut self, t: Millis, step: &Step) {
        let Some(first) = step.first.filter(|&f| t + SCAN_MS < f) else {
            return;
        };
        let log = self.q.log;
        let from = log.partition_point(|s| s.t <= t);
        let read_between = log[from..]
            .iter()
            .take_while(|s| s.t < first)
            .any(|s| s.what != Trace::Glitch);
        if !read_between {
            self.cost += cost::LATE;
            self.departures.late += 1;
        }
    }

    /// Change `j` of move `m` onwards, every way the board can have shown it; after the last,
    /// the move is taken and the search goes on from `next`.
    fn change(&mut self, next: &Chess, m: Move, ch: &[Change], j: usize, step: Step) {
        if self.past_bound(self.cost) || self.budget == 0 {
            return;
        }
        let Some(&c) = ch.get(j) else {
            // A move the board showed nothing of is no story (unless nobody heard the board).
            if step.shown == 0 && self.q.prefix.get(step.k).is_none() && step.gap.is_none() {
                return;
            }
            self.moves.push(m);
            self.ends
                .push(step.end.unwrap_or(step.floor).max(step.floor));
            self.firsts.push(step.first.unwrap_or(step.since_prev));
            self.node(next.clone());
            self.moves.pop();
            self.ends.pop();
            self.firsts.pop();
            return;
        };
        let log = self.q.log;
        let saved = self.save(match c {
            Change::Flip(sq, _) | Change::Capture(sq) => sq,
        });
        match c {
            Change::Flip(sq, what) => {
                if self.owed.contains(sq) {
                    self.owed.discard(sq);
                    if self.owed_in_gap.contains(sq) && step.gap.is_some() {
                        // Changed and changed back while nobody heard the board.
                        self.owed_in_gap.discard(sq);
                    } else if let Some(e) = self.echo(sq, what, self.owed_from[sq as usize]) {
                        // Neither shown, but the square read again as it stood after both:
                        // the second change's reading, the first one's lost.
                        self.settle_owed(sq);
                        self.echo_used[e] = true;
                        self.cost += cost::LATE;
                        self.departures.late += 1;
                        self.change(next, m, ch, j + 1, step);
                        self.echo_used[e] = false;
                        self.restore(saved);
                        return;
                    } else if self.owed_touched.contains(sq) {
                        // The square's last change caught only for a moment, its settled
                        // reading late, and the square changed back before it came: it never
                        // came (the square stood as the sensor last read it). One reading
                        // late, not two changes lost.
                        self.settle_owed(sq);
                        self.cost += cost::LATE;
                        self.departures.late += 1;
                    } else {
                        // The square's last change was never shown, nor is this one: no
                        // longer owed, both lost.
                        self.settle_owed(sq);
                        self.cost += cost::VANISHED;
                        self.departures.vanished += 1;
                    }
                    self.change(next, m, ch, j + 1, step);
                    self.restore(saved);
                    return;
                }
                let skipped = self.next_after_pairs(sq, step.floor);
                // A square a sliding piece was set down on on its way, its lift never shown,
                // and a piece set down there now read as the square stood: one reading lost
                // (the lift), the placement the square's reading again.
                if let Some((at, _, pairs)) = skipped.filter(|&(_, i, _)| {
                    what == Trace::Placed
                        && log[i].what == Trace::Placed
                        && log[i].t < step.floor
                        && self.slid_over(sq, log[i].t, false)
                }) {
                    if let Some(e) = self.echo(sq, Trace::Placed, step.floor) {
                        self.cur[sq as usize] = at as u16 + 1;
                        self.echo_used[e] = true;
                        self.cost += pairs + cost::LATE;
                        self.departures.late += 1;
                        let t = log[self.echoes[e]].t;
                        self.change(next, m, ch, j + 1, step.seen(t, false));
                        self.echo_used[e] = false;
                        self.restore(saved.clone());
                    }
                }
                let found = skipped.map(|(at, i, _)| (at, i));
                let unskipped = self.unskipped(sq, skipped, &step).map(|(at, i)| (at, i, 0));
                for (at, i, pairs) in [skipped, unskipped].into_iter().flatten() {
                    if log[i].what != what {
                        continue;
                    }
                    self.cur[sq as usize] = at as u16 + 1;
                    self.assigned.push((i, step.k));
                    self.cost += pairs;
                    self.change(next, m, ch, j + 1, step.seen(log[i].t, log[i].late));
                    self.restore(saved.clone());
                }
                // The change seen as a flicker: the sensor lost it again at once, and shows the
                // square as it was.
                let before = found.map(|(_, i)| log[i].t);
                if let Some(g) = self.flicker(sq, step.floor, before) {
                    let t = log[self.glitches[g]].t;
                    self.flicker_before_its_move(t, &step);
                    self.glitch_used[g] = true;
                    self.owe(sq, t, t, true);
                    self.cost += cost::OWED;
                    self.departures.owed += 1;
                    self.change(next, m, ch, j + 1, step.seen(t, false));
                    self.glitch_used[g] = false;
                    self.restore(saved.clone());
                }
                // Not seen (yet), even with a change of the square to come: that one may be a
                // later move's.
                match step.gap {
                    Some(g) if self.unseen_fits(sq, &g) => {
                        // Made while nobody heard the board, and not in its report: changed
                        // back unseen, or the report contradicts the story.
                        self.owe_in_gap(sq, &g);
                    }
                    _ => {
                        let since = step.end.unwrap_or(step.floor);
                        // (A move seen only in a report was made before it, since the move
                        // before: a reading of the square then, as it stood, may be the next
                        // change's.)
                        let from = if step.heard { since } else { step.floor };
                        self.owe(sq, since, from, false);
                        self.cost += cost::OWED;
                        self.departures.owed += 1;
                    }
                }
                self.change(next, m, ch, j + 1, step);
                self.restore(saved);
            }
            Change::Capture(sq) => {
                let skipped = self.next_after_pairs(sq, step.floor);
                let found = skipped.map(|(at, i, _)| (at, i));
                let pairs = skipped.map_or(0, |(_, _, c)| c);
                if self.owed.contains(sq) {
                    // The square was to be filled, or its piece was lost by the sensor: a
                    // placement seen now is the capturing piece's.
                    if let Some((at, i)) = found.filter(|&(_, i)| log[i].what == Trace::Placed) {
                        self.cost += pairs;
                        self.cur[sq as usize] = at as u16 + 1;
                        self.assigned.push((i, step.k));
                        if self.owed_in_gap.contains(sq) {
                            // Filled while nobody heard the board, and the piece taken off
                            // again before its report (the captured piece first, as people
                            // capture): the report's empty square is no reading missed, and
                            // the unseen change costs what it cost.
                            self.owed.discard(sq);
                            self.owed_in_gap.discard(sq);
                        } else {
                            self.settle_owed(sq);
                            self.cost += cost::LATE;
                            self.departures.late += 1;
                        }
                        self.change(next, m, ch, j + 1, step.seen(log[i].t, log[i].late));
                        self.restore(saved);
                    } else {
                        // Neither the piece taken nor the one taking it seen there: a second
                        // change the board has not shown.
                        self.cost += cost::OWED;
                        self.departures.owed += 1;
                        self.change(next, m, ch, j + 1, step);
                        self.restore(saved);
                    }
                    return;
                }
                // The captured piece swept off as the capturing one was set down: a flicker
                // since the last move began (its end may be a reading of its own that came
                // late, after this capture), before the square's next change.
                let before = found.map(|(_, i)| log[i].t);
                let since = step.since_prev.min(step.floor);
                if let Some(g) = self.flicker(sq, since, before) {
                    let t = log[self.glitches[g]].t;
                    self.flicker_before_its_move(t, &step);
                    self.glitch_used[g] = true;
                    self.cost += cost::SWAP;
                    self.departures.swaps += 1;
                    self.change(next, m, ch, j + 1, step.seen(t, false));
                    self.glitch_used[g] = false;
                    self.restore(saved.clone());
                }
                let unskipped = self.unskipped(sq, skipped, &step).map(|(at, i)| (at, i, 0));
                for (at, i, pairs) in [skipped, unskipped].into_iter().flatten() {
                    if log[i].what == Trace::Lifted {
                        let list = self.obs.at(sq);
                        let placed = list
                            .get(at + 1)
                            .map(|&p| usize::from(p))
                            .filter(|&p| log[p].what == Trace::Placed);
                        self.assigned.push((i, step.k));
                        self.cost += pairs;
                        let lifted = step.seen(log[i].t, log[i].late);
                        if let Some(p) = placed {
                            self.cur[sq as usize] = at as u16 + 2;
                            self.assigned.push((p, step.k));
                            self.change(next, m, ch, j + 1, lifted.seen(log[p].t, log[p].late));
                            self.cur[sq as usize] = saved.cur;
                            self.assigned.truncate(saved.assigned + 1);
                        }
                        // The capturing piece set down while nobody heard the board, and gone
                        // again before its report (the square shows as the lift left it):
                        // changed and changed back unseen in the gap, as a plain move's square
                        // may be, not two changes the board never showed.
                        if let Some(g) = step
                            .gap
                            .filter(|g| log[i].t <= g.from && self.unseen_fits(sq, g))
                        {
                            self.cur[sq as usize] = at as u16 + 1;
                            self.owe_in_gap(sq, &g);
                            self.change(next, m, ch, j + 1, lifted);
                            self.restore(saved.clone());
                        }
                        // The capturing piece's placement not seen yet (a placement seen there
                        // later may be another capture's).
                        self.cur[sq as usize] = at as u16 + 1;
                        self.owe(sq, log[i].t, log[i].t, false);
                        self.cost += cost::OWED;
                        self.departures.owed += 1;
                        self.change(next, m, ch, j + 1, lifted);
                        self.restore(saved.clone());
                    }
                }
                // Nothing seen on the square of the capture (what it shows later may be a later
                // capture's).
                match step.gap {
                    Some(g) if self.unseen_fits(sq, &g) => {
                        // Captured while nobody heard the board.
                        if !g.changed.contains(sq) {
                            self.gap_unseen.add(sq);
                        }
                        self.cost += cost::GAP;
                        self.departures.unseen += 1;
                    }
                    _ => {
                        if let Some(e) = self.echo(sq, Trace::Placed, step.floor) {
                            // The capturing piece's placement read on a square that stood
                            // full: the captured piece's lift was lost, as in a swap.
                            self.echo_used[e] = true;
                            self.cost += cost::SWAP;
                            self.departures.swaps += 1;
                            self.change(next, m, ch, j + 1, step);
                            self.echo_used[e] = false;
                            self.restore(saved);
                            return;
                        }
                        self.cost += cost::UNTRACED;
                        self.departures.vanished += 1;
                    }
                }
                self.change(next, m, ch, j + 1, step);
                self.restore(saved);
            }
        }
    }

    /// An unused echo of `sq` since `since` that reads it as `what` leaves it (a placement:
    /// occupied): the change and the one before it made unseen.
    fn echo(&self, sq: Square, what: Trace, since: Millis) -> Option<usize> {
        let log = self.q.log;
        let occupied = what == Trace::Placed;
        (0..self.echoes.len()).find(|&j| {
            let e = &log[self.echoes[j]];
            !self.echo_used[j]
                && e.square == sq
                && e.t >= since
                && e.what == Trace::Echo { occupied }
        })
    }

    /// `sq` is no longer owed: takes back what owing it cost, as an unseen change in a gap
    /// or as a reading still to come.
    /// `sq`'s change is owed, since `since` (a reading of the square from `from` on may be
    /// it); `touched`: the sensor caught it for a moment (a flicker), its settled reading is
    /// what is owed.
    fn owe(&mut self, sq: Square, since: Millis, from: Millis, touched: bool) {
        self.owed.add(sq);
        self.owed_touched.set(sq, touched);
        self.owed_since[sq as usize] = since;
        self.owed_from[sq as usize] = from;
    }

    /// `sq` changed while nobody heard the board, in `gap`, and its change is owed back there:
    /// one change unseen (a square the report does not show changed takes room in the gap).
    fn owe_in_gap(&mut self, sq: Square, gap: &Gap) {
        self.owe(sq, gap.from, gap.from, false);
        self.owed_in_gap.add(sq);
        if !gap.changed.contains(sq) {
            self.gap_unseen.add(sq);
        }
        self.cost += cost::GAP;
        self.departures.unseen += 1;
    }

    fn settle_owed(&mut self, sq: Square) {
        self.owed.discard(sq);
        if self.owed_in_gap.contains(sq) {
            self.owed_in_gap.discard(sq);
            self.cost = self.cost.saturating_sub(cost::GAP);
            self.departures.unseen = self.departures.unseen.saturating_sub(1);
        } else {
            self.cost = self.cost.saturating_sub(cost::OWED);
            self.departures.owed = self.departures.owed.saturating_sub(1);
        }
    }

    fn save(&self, square: Square) -> Saved {
        Saved {
            cur: self.cur[square as usize],
            square,
            owed_since: self.owed_since[square as usize],
            owed_from: self.owed_from[square as usize],
            owed: self.owed,
            owed_in_gap: self.owed_in_gap,
            owed_touched: self.owed_touched,
            gap_unseen: self.gap_unseen,
            assigned: self.assigned.len(),
            cost: self.cost,
            departures: self.departures,
        }
    }

    /// Takes back what matching a change did.
    fn restore(&mut self, saved: Saved) {
        self.cur[saved.square as usize] = saved.cur;
        self.owed_since[saved.square as usize] = saved.owed_since;
        self.owed_from[saved.square as usize] = saved.owed_from;
        self.owed = saved.owed;
        self.owed_in_gap = saved.owed_in_gap;
        self.owed_touched = saved.owed_touched;
        self.gap_unseen = saved.gap_unseen;
        self.assigned.truncate(saved.assigned);
        self.cost = saved.cost;
        self.departures = saved.departures;
    }

    /// The story made of the moves so far: what the board shows beyond them, what the
    /// observations no move accounts for cost, the changes seen out of their order.
    fn stop_here(&mut self, pos: &Chess) {
        let log = self.q.log;

        let mut cost = self.cost;
        let mut departures = self.departures;
        let mut tail = Bitboard::EMPTY;
        let mut vacated = Bitboard::EMPTY;
        // Squares a sliding piece was set down on on its way, whose lift has not come yet.
        let mut slid_owed = Bitboard::EMPTY;
        let occupied = pos.board().occupied();
        for sq in self.obs.squares {
            let list = self.obs.at(sq);
            let rest = &list[usize::from(self.cur[sq as usize]).min(list.len())..];
            if rest.is_empty() {
                continue;
            }
            let pairs = rest.len() / 2;
            for p in 0..pairs {
                let (a, b) = (
                    &log[usize::from(rest[2 * p])],
                    &log[usize::from(rest[2 * p + 1])],
                );
                if a.what == Trace::Lifted {
                    vacated.add(sq);
                }
                let (mut c, mut stood) = self.pair_cost(a, b);
                // The second change came in the board's report after a gap: how long the first
                // stood, nobody knows (a slide went on while nobody heard).
                let unheard = self
                    .q
                    .gaps
                    .iter()
                    .any(|g| a.t < g.to && g.to <= b.t && g.changed.contains(sq));
                if unheard && a.what == Trace::Placed && self.slid_over(sq, a.t, false) {
                    (c, stood) = (0, false);
                } else if stood && self.slid_over(sq, a.t, false) {
                    // Not a move put back: a square slid over whose lift came late.
                    (c, stood) = (cost::LATE, false);
                    departures.late += 1;
                } else if a.what == Trace::Placed && !stood && !self.slid_over(sq, a.t, false) {
                    c = cost::BRUSH;
                }
                cost += c;
                departures.stood += u32::from(stood);
            }
            if rest.len() % 2 == 1 {
                let last = &log[usize::from(rest[rest.len() - 1])];
                if last.what == Trace::Placed
                    && !occupied.contains(sq)
                    && self.slid_over(sq, last.t, false)
                {
                    slid_owed.add(sq);
                    cost += cost::OWED + self.overdue_cost(last.t);
                    departures.owed += 1;
                    continue;
                }
                tail.add(sq);
                if occupied.contains(sq) {
                    vacated.add(sq);
                }
            }
        }
        for j in 0..self.echoes.len() {
            let e = &log[self.echoes[j]];
            // (A square a sliding piece passed over, read as it stood: its lift was lost.)
            if !self.echo_used[j] && !self.slid_over(e.square, e.t, false) {
                cost += cost::ECHO;
            }
        }
        for sq in self.owed {
            // (A lift owed by a move whose piece was seen set down was made by then, not before
            // it need be: the reading is late from then, its patience a little shorter.)
            let set_down = self.set_down_from(sq).saturating_sub(SET_DOWN_PATIENCE_MS);
            let since = self.owed_since[sq as usize].max(set_down);
            cost += self.overdue_cost(since);
        }
        if self.past_bound(cost) {
            return;
        }
        let owed = self.owed | slid_owed;
        // The board beyond the moves, the owed squares as the story has them.
        let beyond_phys;
        let phys = if owed.is_empty() {
            self.q.phys
        } else {
            let mut states: [SquareState; 64] = [EMPTY; 64];
            for (i, st) in states.iter_mut().enumerate() {
                *st = self.q.phys.code(Square::new(i as u32));
            }
            for sq in owed {
                states[sq as usize] = match pos.board().piece_at(sq) {
                    Some(p) if self.q.phys.ids() => piece_code(p),
                    Some(_) => OCCUPIED,
                    None => EMPTY,
                };
            }
            let mut p = Physical::default();
            p.assume(&states);
            beyond_phys = p;
            &beyond_phys
        };
        let beyond = if tail.is_empty() && phys.shows(pos.board()) {
            Verdict::Home
        } else {
            classify(
                pos,
                &Legal::of(pos),
                phys,
                vacated & occupied,
                self.q.last_change,
            )
        };
        cost += match &beyond {
            Verdict::Home | Verdict::InProgress | Verdict::Partial { .. } => 0,
            Verdict::Moves(_) => cost::BEYOND,
            Verdict::Illegal { .. } => cost::ILLEGAL,
            Verdict::Unexplained => cost::UNEXPLAINED,
        };
        if phys.ids() {
            let wrong = phys.wrong_pieces(pos.board()) & !tail;
            cost += cost::WRONG_PIECE * wrong.count() as u32;
        }
        if self.past_bound(cost) {
            return;
        }
        // What the board shows beyond the moves came after them: the next move under way.
        let next = self.moves.len();
        let mut beyond_seen = Vec::new();
        for sq in tail {
            let list = self.obs.at(sq);
            if let Some(&i) = list.last() {
                beyond_seen.push((log[usize::from(i)].t, next, usize::from(i)));
            }
        }
        let Lateness {
            cost: late_cost,
            late,
            ..
        } = self.lateness(&beyond_seen);
        cost += late_cost;
        departures.late += late;
        // Flickers no move uses, neither a change's bounce, nor a late placement's first contact,
        // nor a square a sliding piece passed over quicker than the debounce time on its way to
        // where it was seen set down (with its end unseen, a flicker on its way may as well be
        // a capture swapped there): changes the sensor lost again, unexplained.
        let contacts = self.contacts_of_late_placements();
        let unexplained = (0..self.glitches.len())
            .filter(|&j| !self.glitch_used[j] && !self.is_bounce(j))
            .filter(|&j| contacts.iter().all(|c| c.2 != j))
            .filter(|&j| {
                let g = &log[self.glitches[j]];
                !self.slid_over(g.square, g.t, true)
            })
            .count();
        cost += cost::FLICKER * unexplained as u32;
        let mut unordered = false;
        if self.past_bound(cost) {
            return;
        }
        // Moves seen only together in one report: their order is not known.
        let mut when: Vec<Option<(Millis, Millis, bool)>> = vec![None; self.moves.len()];
        for &(i, k) in &self.assigned {
            let s = &log[i];
            let w = when[k].get_or_insert((s.t, s.t, s.late));
            w.0 = w.0.min(s.t);
            w.1 = w.1.max(s.t);
            w.2 &= s.late;
        }
        for pair in when.windows(2) {
            if let [Some(a), Some(b)] = pair {
                if a.2 && b.2 && a.1 >= b.0 {
                    unordered = true;
                }
            }
        }
        let (times, late) = {
            let scratch = self.scratch.borrow();
            let late = (scratch.order.iter().zip(&scratch.in_order))
                .filter(|&(&(_, k, _), &kept)| !kept && k < self.moves.len())
                .map(|(&(_, _, i), _)| i)
                .collect();
            let times = self.times(&when, &scratch.order, &scratch.in_order, &contacts);
            (times, late)
        };
        let mut matched: Vec<usize> = self.assigned.iter().map(|&(i, _)| i).collect();
        matched.sort_unstable();
        let story = Story {
            moves: self.moves.clone(),
            times,
            cost,
            departures,
            owed,
            beyond,
            matched,
            late,
            unordered,
        };
        self.keep(story);
    }

    /// When the piece of the last move that leaves `sq` was seen set down on its square (0:
    /// not seen, or no move leaves it).
    fn set_down_from(&self, sq: Square) -> Millis {
        let log = self.q.log;
        let Some((k, to)) = self.moves.iter().enumerate().rev().find_map(|(k, &m)| {
            own_squares(m).and_then(|(from, to)| (from == sq).then_some((k, to)))
        }) else {
            return 0;
        };
        self.assigned
            .iter()
            .filter(|&&(i, j)| j == k && log[i].square == to && log[i].what == Trace::Placed)
            .map(|&(i, _)| log[i].t)
            .max()
            .unwrap_or(0)
    }

    /// What a change the board has not shown since `since` costs beyond its being owed: overdue
    /// after [`OWED_PATIENCE_MS`], and each whole-board report since that did not show it (a late
    /// sensor shows the square as it was in every report, a lost reading shows in the next).
    fn overdue_cost(&self, since: Millis) -> u32 {
        let overdue = if self.q.now.saturating_sub(since) > OWED_PATIENCE_MS {
            cost::OVERDUE
        } else {
            0
        };
        let missed = self
            .q
            .reports
            .iter()
            .rev()
            .take_while(|&&r| r > since)
            .count();
        overdue + cost::REPORT_MISS * missed.min(2) as u32
    }

    /// The time from which the change `s` was made: a change the report after a gap showed
    /// was made while nobody heard the board, from the gap's beginning on.
    fn made_from(&self, s: &Seen) -> Millis {
        self.q
            .gaps
            .iter()
            .find(|g| g.to == s.t && g.changed.contains(s.square))
            .map_or(s.t, |g| g.from)
    }

    /// `sq` lies on the way of a sliding move of the story, and a piece set down on it at `t`
    /// was that move's piece passing over: after the move's first change seen, and before its
    /// last (or its placement is not seen yet, unless `landed` asks for it seen).
    fn slid_over(&self, sq: Square, t: Millis, landed: bool) -> bool {
        self.moves.iter().enumerate().any(|(k, m)| {
            let Some(from) = m.from() else {
                return false;
            };
            if !matches!(m.role(), Role::Queen | Role::Rook | Role::Bishop)
                || !shakmaty::attacks::between(from, m.to()).contains(sq)
            {
                return false;
            }
            let log = self.q.log;
            let mut first = Millis::MAX;
            let mut placed = None::<Millis>;
            let mut lifted = false;
            // (Its lift not seen, the move began after the moves before it.)
            let mut before = 0;
            for &(i, j) in &self.assigned {
                let s = &log[i];
                if j < k {
                    before = before.max(s.t);
                }
                if j != k {
                    continue;
                }
                first = first.min(self.made_from(s));
                lifted |= s.square == from && s.what == Trace::Lifted;
                if s.square == m.to() && s.what == Trace::Placed {
                    placed = Some(s.t);
                }
            }
            if !lifted {
                first = first.min(before);
            }
            first <= t && placed.map_or(!landed, |p| t <= p)
        })
    }

    /// What a lift and a placement of one square that no move accounts for cost: a piece
    /// lifted and put back (a touch, an adjustment: rare in play), one set down for a moment
    /// (sliding over the square: nothing), or set down and left there for the settle time
    /// before it was taken away (a move put back: an illegal move put right, a move refused).
    fn pair_cost(&self, a: &Seen, b: &Seen) -> (u32, bool) {
        // (A piece taken away while nobody heard the board stood from the gap's beginning on:
        // how long it stood, nobody knows.)
        let until = self.made_from(b).max(a.t);
        match a.what {
            Trace::Lifted => (cost::TOUCH, false),
            _ if until.saturating_sub(a.t) >= self.q.settle_ms => (cost::STOOD, true),
            _ => (0, false),
        }
    }

    /// Every observation the moves account for was seen after those of the moves before
    /// (what [`lateness`](Self::lateness) would find costs nothing), told without sorting them.
    fn seen_in_order(&self) -> bool {
        let log = self.q.log;
        // (The moves' observations are accounted for move by move: otherwise, sorted.)
        let (mut before, mut this, mut k) = (0, 0, 0);
        for &(i, move_k) in &self.assigned {
            if move_k < k {
                return self.lateness(&[]).cost == 0;
            }
            if move_k > k {
                before = before.max(this);
                k = move_k;
            }
            let t = log[i].t;
            if t < before {
                return false;
            }
            this = this.max(t);
        }
        !self.set_down_before_lifted()
    }

    /// A move's piece seen set down on its square longer than a board's scan before it was
    /// seen lifted from its own, with no flicker of its lift before (what
    /// [`lateness`](Self::lateness) charges as a lift late, told without sorting the
    /// observations, when they are in the moves' order).
    fn set_down_before_lifted(&self) -> bool {
        let log = self.q.log;
        self.assigned.iter().any(|&(i, k)| {
            let placed = &log[i];
            let Some((from, to)) = self.moves.get(k).and_then(|&m| own_squares(m)) else {
                return false;
            };
            // (The first change of the move before.)
            let since = || {
                k.checked_sub(1).map_or(0, |b| {
                    self.assigned
                        .iter()
                        .filter(|&&(_, kb)| kb == b)
                        .map(|&(j, _)| log[j].t)
                        .min()
                        .unwrap_or(0)
                })
            };
            placed.what == Trace::Placed
                && placed.square == to
                && self.assigned.iter().any(|&(j, kj)| {
                    let lifted = &log[j];
                    kj == k
                        && lifted.what == Trace::Lifted
                        && lifted.square == from
                        && lifted_late(log, from, since(), placed.t, lifted.t)
                })
        })
    }

    /// What the changes the moves account for (and `beyond`: what the board did after them)
    /// seen out of their order cost: the cheapest observations to leave out that leave the rest
    /// in the moves' order (those seen at the same moment in any order), each late, dearer when
    /// a whole-board report after its move began did not show it, dearest when it came before
    /// the move before its own was begun (never late, but early). Also how many; the
    /// observations in time order, and which of them are in order, are left in the scratch.
    fn lateness(&self, beyond: &[Stamp]) -> Lateness {
        let cheapest = self.lateness_leaving(beyond, false);
        if !cheapest.early {
            return cheapest;
        }
        // The readings left out are the reply's, read before the move they answer: early. A
        // move whose every reading came in a report after the reply began (castling, its four
        // readings lost) is the move read late: leaving out its report's readings first may
        // cost less, though they are more.
        let reported = self.lateness_leaving(beyond, true);
        if reported.cost < cheapest.cost {
            return reported;
        }
        // (The scratch as the cheaper reckoning leaves it.)
        self.lateness_leaving(beyond, false)
    }

    /// [`lateness`](Self::lateness), with the readings of whole-board reports left out before
    /// any read alone when `reported_first`.
    fn lateness_leaving(&self, beyond: &[Stamp], reported_first: bool) -> Lateness {
        let log = self.q.log;
        let scratch = &mut *self.scratch.borrow_mut();
        let Scratch {
            order,
            in_order,
            runs,
            began,
            opened,
            lifted,
        } = scratch;
        order.clear();
        order.extend(
            self.assigned
                .iter()
                .map(|&(i, k)| (log[i].t, k, i))
                .chain(beyond.iter().copied()),
        );
        order.sort_unstable();
        // Leaving out a change seen in a whole-board report costs less than one read alone
        // (and of two runs as cheap, the one that leaves out fewer is kept: the 1). With
        // `reported_first`, a report's change is left out before any read alone.
        let weight = |j: usize| match (log[order[j].2].late, reported_first) {
            (true, false) => 1 + cost::LATE_FRAME,
            (false, false) => 1 + cost::LATE,
            (true, true) => 1,
            (false, true) => 1 + 4 * cost::LATE,
        };
        cheapest_in_order(order, weight, runs, in_order);
        // The first change of each move seen, and the first seen in order.
        began.clear();
        began.resize(self.moves.len(), Millis::MAX);
        opened.clear();
        opened.resize(self.moves.len(), Millis::MAX);
        for (&(t, k, _), &kept) in order.iter().zip(in_order.iter()) {
            if k < began.len() {
                began[k] = began[k].min(t);
                if kept {
                    opened[k] = opened[k].min(t);
                }
            }
        }
        // A move's piece set down on its square longer than a board's scan before it was
        // lifted from its own, both seen in the moves' order with nothing of another move
        // between (else the order of the moves has one of them late already), and no flicker
        // on its square before (the lift's contact bounce): the lift's reading came late all
        // the same (a plain move of another piece, its lift still to come, explains the
        // placement as well).
        lifted.clear();
        lifted.resize(self.moves.len(), None);
        for (j, (&(_, k, i), &kept)) in order.iter().zip(in_order.iter()).enumerate() {
            let own = self.moves.get(k).and_then(|&m| own_squares(m));
            if kept
                && log[i].what == Trace::Lifted
                && own.is_some_and(|(from, _)| log[i].square == from)
            {
                lifted[k] = Some(j);
            }
        }
        let (mut cost, mut late, mut early) = (0, 0, false);
        for (j, (&(t, k, i), &kept)) in order.iter().zip(in_order.iter()).enumerate() {
            let Some((from, to)) = self.moves.get(k).and_then(|&m| own_squares(m)) else {
                continue;
            };
            if !kept || log[i].what != Trace::Placed || log[i].square != to {
                continue;
            }
            let Some(l) = lifted[k].filter(|&l| l > j) else {
                continue;
            };
            lifted[k] = None;
            let alone = order[j + 1..l].iter().all(|o| o.1 == k);
            let since = k.checked_sub(1).map_or(0, |b| began[b]);
            if alone && lifted_late(log, from, since, t, order[l].0) {
                late += 1;
                cost += if log[order[l].2].late {
                    cost::LATE_FRAME
                } else {
                    cost::LATE
                };
            }
        }
        for (j, &(t, k, i)) in order.iter().enumerate() {
            if in_order[j] {
                continue;
            }
            late += 1;
            cost += if log[i].late {
                cost::LATE_FRAME
            } else {
                cost::LATE
            };
            // A reading comes late, never early: a change of a move seen before the move
            // it answers was begun was not that move's.
            if (1..opened.len()).contains(&k) && opened[k - 1] != Millis::MAX && t < opened[k - 1] {
                cost += cost::EARLY;
                early = true;
            }
            if let Some(&b) = began.get(k) {
                let missed = self.q.reports.iter().filter(|&&r| r > b && r < t).count();
                cost += cost::REPORT_MISS * missed.min(2) as u32;
            }
        }
        Lateness { cost, late, early }
    }

    /// When each move was complete: its last change seen in order, no later than the next
    /// move's first change seen in order; a move whose placement's first contact was seen
    /// (`contacts`, see [`contacts_of_late_placements`](Self::contacts_of_late_placements)) no
    /// later than when the next move began, not when that placement's settled reading came.
    fn times(
        &self,
        when: &[Option<(Millis, Millis, bool)>],
        order: &[Stamp],
        in_order: &[bool],
        contacts: &[(usize, Millis, usize)],
    ) -> Vec<Millis> {
        let k = self.moves.len();
        // The first thing the board did beyond the moves, seen in order.
        let beyond_first = order
            .iter()
            .zip(in_order)
            .filter(|((_, m, _), keep)| **keep && *m == k)
            .map(|((t, _, _), _)| *t)
            .min();
        let mut last = vec![None::<Millis>; k];
        let mut first = vec![None::<Millis>; k];
        // A move with a change seen late was complete before that reading came: by the next
        // move's first change.
        let mut late = vec![false; k];
        for (j, &(t, m, _)) in order.iter().enumerate() {
            if m >= k {
                continue;
            }
            if in_order[j] {
                last[m] = Some(last[m].map_or(t, |x: Millis| x.max(t)));
                first[m] = Some(first[m].map_or(t, |x: Millis| x.min(t)));
            } else {
                late[m] = true;
            }
        }
        let mut times = vec![0; k];
        let mut floor = 0;
        for i in 0..k {
            let mut t = last[i]
                .or_else(|| when[i].map(|w| w.1))
                .unwrap_or(floor)
                .max(floor);
            let next = first.iter().skip(i + 1).flatten().next().copied();
            match next.or(beyond_first) {
                Some(next) if late[i] => t = next.max(floor),
                Some(next) => t = t.min(next).max(floor),
                None => {}
            }
            if let Some(&(_, began, _)) = contacts.iter().find(|c| c.0 == i) {
                t = t.min(began).max(floor);
            }
            times[i] = t;
            floor = t;
        }
        times
    }

    fn keep(&mut self, story: Story) {
        if let Some(same) = self.found.iter_mut().find(|s| s.moves == story.moves) {
            if story.cost < same.cost {
                *same = story;
            }
        } else {
            self.found.push(story);
        }
        self.best = self.found.iter().map(|s| s.cost).min().unwrap_or(u32::MAX);
        if self.found.len() > KEPT {
            self.found.sort_by_key(|s| (s.cost, s.moves.len()));
            self.found.truncate(KEPT);
        }
    }
}

/// An observation the moves account for: when it was seen, the move it belongs to (the
/// number of moves for what the board did beyond them), and its index in the log.
type Stamp = (Millis, usize, usize);

/// What the changes seen out of their moves' order cost, and how many they are (the
/// observations in time order, and which of them are in order, are left in [`Scratch`]).
struct Lateness {
    cost: u32,
    late: u32,
    /// Some reading left out came before the move before its own was begun.
    early: bool,
}

/// Room the reckoning of lateness uses again from node to node (it is done at most nodes).
#[derive(Default)]
struct Scratch {
    /// The observations the moves account for, and beyond them, in time order.
    order: Vec<Stamp>,
    /// Which of them are in the moves' order.
    in_order: Vec<bool>,
    /// [`cheapest_in_order`]'s runs.
    runs: Runs,
    /// For each move, when its first change was seen, and its first seen in order.
    began: Vec<Millis>,
    opened: Vec<Millis>,
    /// For each move, where in `order` its piece was seen lifted from its square (in the
    /// moves' order).
    lifted: Vec<Option<usize>>,
}

/// Which of the observations, sorted by time, form the run whose moves never go back (`true`
/// in `keep` for those in it) that leaves out the least: the weights of those left out
/// (`weight`, by index in `order`) summed are the fewest.
fn cheapest_in_order(
    order: &[Stamp],
    weight: impl Fn(usize) -> u32,
    runs: &mut Runs,
    keep: &mut Vec<bool>,
) {
    let n = order.len();
    let moves = order.iter().map(|s| s.1 + 1).max().unwrap_or(0);
    // ends[k]: the heaviest run so far whose last observation is of move k, and that one.
    let Runs { ends, prev } = runs;
    ends.clear();
    ends.resize(moves, (0, usize::MAX));
    prev.clear();
    prev.resize(n, usize::MAX);
    for j in 0..n {
        let k = order[j].1;
        let (before, from) =
            ends[..=k]
                .iter()
                .copied()
                .fold((0, usize::MAX), |a, b| if b.0 > a.0 { b } else { a });
        let total = before + weight(j);
        prev[j] = from;
        if total > ends[k].0 {
            ends[k] = (total, j);
        }
    }
    keep.clear();
    keep.resize(n, false);
    let mut j = ends
        .iter()
        .copied()
        .fold((0, usize::MAX), |a, b| if b.0 > a.0 { b } else { a })
        .1;
    while j != usize::MAX {
        keep[j] = true;
        j = prev[j];
    }
}

/// [`cheapest_in_order`]'s room: for each move the heaviest run ending in one of its
/// observations, and for each observation the one before it in its run.
#[derive(Default)]
struct Runs {
    ends: Vec<(u32, usize)>,
    prev: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::decoder::debounce::Change as Debounced;
    use shakmaty::fen::Fen;
    use shakmaty::san::San;
    use shakmaty::CastlingMode;
    use Square::*;
    use Trace::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn sans(start: &Chess, moves: &[Move]) -> Vec<String> {
        let mut p = start.clone();
        moves
            .iter()
            .map(|m| {
                let s = San::from_move(&p, *m).to_string();
                p.play_unchecked(*m);
                s
            })
            .collect()
    }

    /// The board of `start` after the observations (the sensors' view).
    fn board(start: &Chess, log: &[Seen]) -> Physical {
        let mut phys = Physical::default();
        phys.assume(&phys.states_of(start.board()));
        for s in log {
            if matches!(s.what, Glitch | Echo { .. }) {
                continue;
            }
            phys.apply(&Debounced {
                t: s.t,
                square: s.square,
                state: if s.what == Lifted { EMPTY } else { OCCUPIED },
                whole: s.late,
            });
        }
        phys
    }

    pub fn seen(t: Millis, square: Square, what: Trace) -> Seen {
        Seen {
            t,
            square,
            what,
            late: false,
        }
    }

    #[test]
    fn observations_by_square_keep_their_order_without_flickers_and_echoes() {
        let log = [
            seen(10, E2, Lifted),
            seen(20, G1, Glitch),
            seen(30, E4, Placed),
            seen(40, E2, Echo { occupied: false }),
            seen(50, E4, Lifted),
            seen(60, E2, Placed),
            seen(70, A8, Lifted),
        ];
        let by = BySquare::new(&log);
        assert_eq!(by.at(E2), [0, 5]);
        assert_eq!(by.at(E4), [2, 4]);
        assert_eq!(by.at(A8), [6]);
        assert!(by.at(G1).is_empty() && by.at(H8).is_empty() && by.at(A1).is_empty());
        assert_eq!(
            by.squares,
            Bitboard::from_square(E2) | Bitboard::from_square(E4) | Bitboard::from_square(A8)
        );
    }

    #[test]
    fn observations_in_order_are_told_without_sorting_as_lateness_tells_them() {
        // Observations at times 10, 20, ... assigned to moves in many ways: the quick test
        // agrees with the cost of the changes seen out of order being nothing.
        let log: Vec<Seen> = (0..6)
            .map(|i| seen(10 * (i + 1), Square::new(i as u32), Lifted))
            .collect();
        let start = Chess::default();
        let phys = board(&start, &[]);
        let ask = ask(4, 3);
        let q = query(&start, &log, &phys, ask);
        let mut search = Search::new(&q);
        let (mut in_order, mut out_of_order) = (0, 0);
        let mut seed = 12345u64;
        for _ in 0..500 {
            // Up to 4 moves, each with some of the observations, in move order.
            search.assigned.clear();
            let mut ks: Vec<usize> = Vec::new();
            for _ in 0..(seed % 6 + 1) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ks.push((seed >> 33) as usize % 4);
            }
            ks.sort_unstable();
            for (j, &k) in ks.iter().enumerate() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = if seed >> 62 == 0 {
                    (seed >> 33) as usize % 6
                } else {
                    j
                };
                search.assigned.push((i, k));
            }
            let quick = search.seen_in_order();
            assert_eq!(
                quick,
                search.lateness(&[]).cost == 0,
                "{:?}",
                search.assigned
            );
            if quick {
                in_order += 1;
            } else {
                out_of_order += 1;
            }
        }
        assert!(
            in_order > 50 && out_of_order > 50,
            "{in_order} {out_of_order}"
        );
    }

    #[test]
    fn state_keys_tell_the_counts_of_every_square_apart() {
        // One more observation accounted for on any one square is another state.
        let start = Chess::default();
        let log = [seen(10, E2, Lifted)];
        let phys = board(&start, &log);
        let ask = ask(1, 3);
        let q = query(&start, &log, &phys, ask);
        let mut search = Search::new(&q);
        let mut keys = std::collections::HashSet::new();
        keys.insert(search.state_key(&start));
        for sq in 0..64 {
            search.cur = [0; 64];
            search.cur[sq] = 1;
            assert!(keys.insert(search.state_key(&start)), "square {sq}");
        }
        search.cur = [0; 64];
        search.owed = Bitboard::from_square(E4);
        assert!(keys.insert(search.state_key(&start)));
    }

    fn frame(t: Millis, square: Square, what: Trace) -> Seen {
        Seen {
            t,
            square,
            what,
            late: true,
        }
    }

    /// What the search asks beyond the log: the whole-board reports, the moves a story begins
    /// with, its most moves and the margin of the stories kept.
    struct Ask<'a> {
        reports: &'a [Millis],
        prefix: &'a [Move],
        max_plies: usize,
        margin: u32,
    }

    /// No reports and no moves given: a story of at most `max_plies` moves.
    fn ask(max_plies: usize, margin: u32) -> Ask<'static> {
        Ask {
            reports: &[],
            prefix: &[],
            max_plies,
            margin,
        }
    }

    /// The question of `log` from `start` on the board `phys`, now its last reading.
    fn query<'a>(start: &'a Chess, log: &'a [Seen], phys: &'a Physical, ask: Ask<'a>) -> Query<'a> {
        let last = log
            .iter()
            .rev()
            .find(|s| s.what == Lifted || s.what == Placed)
            .map(|s| (s.square, s.what == Placed));
        Query {
            start,
            log,
            phys,
            last_change: last,
            settle_ms: 300,
            promotion: Role::Queen,
            promoted: &[],
            max_plies: ask.max_plies,
            prefix: ask.prefix,
            margin: ask.margin,
            now: log.last().map_or(0, |s| s.t),
            gaps: &[],
            reports: ask.reports,
            budget: SEARCH_BUDGET,
            ceiling: u32::MAX,
        }
    }

    /// The stories of `log` from `start`, the board as the log leaves it, now its last reading.
    fn find_as(start: &Chess, log: &[Seen], ask: Ask) -> Found {
        let phys = board(start, log);
        search(&query(start, log, &phys, ask))
    }

    /// The stories of `log`, the board not heard from `from` to `to`, its report then showing
    /// `changed`.
    fn find_after_gap(
        start: &Chess,
        log: &[Seen],
        from: Millis,
        to: Millis,
        changed: Bitboard,
    ) -> Found {
        let gaps = [Gap { from, to, changed }];
        let phys = board(start, log);
        search(&Query {
            gaps: &gaps,
            reports: &[to],
            ..query(start, log, &phys, ask(6, 8))
        })
    }

    fn find(start: &Chess, log: &[Seen]) -> Found {
        let ask = ask(6, 8);
        find_as(start, log, ask)
    }

    /// The first moves of the cheapest stories, sorted.
    fn cheapest_firsts(start: &Chess, found: &Found) -> Vec<String> {
        let mut firsts: Vec<String> = found
            .cheapest()
            .iter()
            .map(|s| sans(start, &s.moves)[0].clone())
            .collect();
        firsts.sort();
        firsts
    }

    /// The story `found` has of exactly `moves` (in SAN from `start`).
    fn story_of<'f>(start: &Chess, found: &'f Found, moves: &[&str]) -> Option<&'f Story> {
        found
            .stories
            .iter()
            .find(|s| sans(start, &s.moves) == moves)
    }

    fn best(start: &Chess, log: &[Seen]) -> (Vec<String>, u32) {
        let found = find(start, log);
        let b = found.best().expect("a story");
        (sans(start, &b.moves), b.cost)
    }

    #[test]
    fn a_promotion_read_again_makes_the_piece_it_was_recorded_with() {
        // a7-a8=R recorded (the rook chosen in its turn), then the board read again from before
        // it: the story's promotion is the rook, not the piece a promotion makes now.
        let start = pos("8/P6k/8/8/8/8/8/K7 w - - 0 1");
        let log = [seen(100, A7, Lifted), seen(300, A8, Placed)];
        let phys = board(&start, &log);
        let rook = Move::Normal {
            role: Role::Pawn,
            from: A7,
            capture: None,
            to: A8,
            promotion: Some(Role::Rook),
        };
        let now = search(&query(&start, &log, &phys, ask(2, 8)));
        assert_eq!(sans(&start, &now.best().unwrap().moves), ["a8=Q"]);
        let again = search(&Query {
            promoted: &[rook],
            ..query(&start, &log, &phys, ask(2, 8))
        });
        assert_eq!(sans(&start, &again.best().unwrap().moves), ["a8=R"]);
    }

    #[test]
    fn moves_seen_in_order_are_a_story_that_costs_nothing() {
        let start = Chess::default();
        let log = [
            seen(100, E2, Lifted),
            seen(300, E4, Placed),
            seen(500, E7, Lifted),
            seen(700, E5, Placed),
            seen(900, G1, Lifted),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves), ["e4", "e5"]);
        assert_eq!(b.cost, 0);
        assert_eq!(b.beyond, Verdict::InProgress);
        assert_eq!(b.times, vec![300, 700]);
        assert!(!b.unordered);
        // The next cheapest story is far dearer.
        assert!(found.stories.iter().skip(1).all(|s| s.cost >= 2));
    }

    #[test]
    fn a_placement_seen_late_is_the_move_it_completes() {
        // White's queen f3-f4, its placement reported a second late; black replies g6-g5 at
        // once.
        let start = pos("rnbqkb1r/pppppp1p/5np1/8/8/5Q2/PPPPPPPP/RNB1KBNR w KQkq - 0 1");
        let mut log = vec![
            seen(1000, F3, Lifted),
            seen(1300, G6, Lifted),
            seen(1500, G5, Placed),
        ];
        // Before the late reading: the queen may be anywhere it goes; no story is one.
        let found = find(&start, &log);
        let cheapest = found.cheapest();
        assert!(cheapest.len() > 1, "{:?}", found.stories);
        assert!(cheapest
            .iter()
            .all(|s| s.departures.owed + s.departures.vanished == 1));
        log.push(seen(2300, F4, Placed));
        let (moves, cost) = best(&start, &log);
        assert_eq!(moves, ["Qf4", "g5"]);
        assert_eq!(cost, cost::LATE);
        let found = find(&start, &log);
        assert!(found.stories.iter().skip(1).all(|s| s.cost > cost));
        // The queen's move is dated no later than black's first lift.
        assert_eq!(found.best().unwrap().times, vec![1300, 1500]);
        // Searched under a ceiling: only the stories that cost no more.
        let phys = board(&start, &log);
        let under = |ceiling| {
            search(&Query {
                ceiling,
                ..query(&start, &log, &phys, ask(6, 8))
            })
        };
        let at = under(cost);
        assert_eq!(sans(&start, &at.best().unwrap().moves), ["Qf4", "g5"]);
        assert!(found.stories.len() > 1 && at.stories.iter().all(|s| s.cost <= cost));
        assert!(under(cost - 1).best().is_none());
    }

    #[test]
    fn a_late_placement_before_the_reply_is_two_moves_not_an_illegal_one() {
        // Black's d7-d6 with the placement late; white answers Bf1-c4 at once.
        let start = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let mut log = vec![
            seen(1000, D7, Lifted),
            seen(1400, F1, Lifted),
            seen(1700, C4, Placed),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        // Still owed: d6 or d5, the board cannot tell yet.
        assert_eq!(b.owed.count(), 1);
        assert!(found.cheapest().len() >= 2);
        log.push(seen(2600, D6, Placed));
        assert_eq!(
            best(&start, &log),
            (vec!["d6".into(), "Bc4".into()], cost::LATE)
        );
    }

    #[test]
    fn a_capture_swapped_quicker_than_the_debounce_leaves_a_flicker() {
        let start = pos("rn1qkbnr/ppp2ppp/3pb3/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 4");
        // Nd5, then Bxd5 with the knight swept off in one motion (a flicker on d5).
        let log = [
            seen(1000, C3, Lifted),
            seen(1300, D5, Placed),
            seen(1800, E6, Lifted),
            seen(2100, D5, Glitch),
        ];
        // The bishop still in the hand (a player may hold a piece as long as he likes), the
        // flicker unexplained; or the capture, swapped: as dear as each other. The arbiter takes
        // the capture once the board has stood so for the mismatch delay.
        let found = find(&start, &log);
        let story = |f: &Found, moves: &[&str]| story_of(&start, f, moves).map(|s| s.cost);
        assert_eq!(story(&found, &["Nd5"]), Some(cost::FLICKER));
        assert_eq!(story(&found, &["Nd5", "Bxd5"]), Some(cost::SWAP));
        // Without the flicker the capture left no trace: dearer.
        let found = find(&start, &log[..3]);
        assert_eq!(story(&found, &["Nd5", "Bxd5"]), Some(cost::UNTRACED));
    }

    #[test]
    fn a_flicker_long_before_a_move_began_is_not_its_placement_lost_for_free() {
        let start = Chess::default();
        let story = |log: &[Seen], moves: &[&str]| {
            story_of(&start, &find(&start, log), moves).map(|s| s.cost)
        };
        // 1. e4, a flicker on f6, then Black's knight lifted 700 ms after it.
        let mut log = vec![
            seen(1000, E2, Lifted),
            seen(1300, E4, Placed),
            seen(1500, F6, Glitch),
            seen(2200, G8, Lifted),
        ];
        // The flicker as Ng8-f6's placement, lost again, needs its lift read late as well: no
        // cheaper than the placement not seen yet and the flicker left unexplained.
        assert_eq!(story(&log, &["e4"]), Some(cost::FLICKER));
        assert_eq!(
            story(&log, &["e4", "Nf6"]),
            Some(cost::OWED + cost::FLICKER)
        );
        // The knight lifted first: the flicker may be its placement, lost again (f6 owed).
        log[2].t = 2400;
        log.sort_by_key(|s| s.t);
        assert_eq!(story(&log, &["e4", "Nf6"]), Some(cost::OWED));
    }

    #[test]
    fn a_capture_swapped_before_its_lift_read_late_is_late_once() {
        // 12...bxc6 swapped faster than the debounce time (a flicker on c6), its pawn's lift
        // read late, after White's 13. Nc3.
        let start = pos("r3kb1r/pppb2pp/1nBqp3/8/3N4/8/PP3PPP/RNBQ1RK1 b kq - 0 12");
        let log = [
            seen(1000, C6, Glitch),
            seen(1200, B1, Lifted),
            seen(1700, C3, Placed),
            seen(1800, B7, Lifted),
        ];
        let found = find(&start, &log);
        let story = story_of(&start, &found, &["bxc6", "Nc3"]).unwrap();
        // The lift read after the knight's move is late by the order of the readings: not
        // late again for coming long after the flicker (which would make the pawn's lift one
        // still to come, and the one read another's).
        assert_eq!(story.cost, cost::SWAP + cost::LATE);
        assert_eq!(story.departures.late, 1);
        assert!(story.owed.is_empty());
    }

    #[test]
    fn a_whole_board_report_after_a_gap_tells_the_moves_but_not_their_order() {
        let start = Chess::default();
        // 1. Nf3 Nf6 2. Nc3 made while the board was away, reported at once.
        let log = [
            frame(5000, B1, Lifted),
            frame(5000, C3, Placed),
            frame(5000, F3, Placed),
            frame(5000, F6, Placed),
            frame(5000, G1, Lifted),
            frame(5000, G8, Lifted),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        assert_eq!(b.cost, 0);
        assert!(b.unordered);
        let moves = sans(&start, &b.moves);
        assert!(
            moves == ["Nc3", "Nf6", "Nf3"] || moves == ["Nf3", "Nf6", "Nc3"],
            "{moves:?}"
        );
        // The other order is as good a story (the search goes on with one of them only).
        let mut other = b.moves.clone();
        other.swap(0, 2);
        let phys = board(&start, &log);
        let again = search(&Query {
            start: &start,
            log: &log,
            phys: &phys,
            last_change: Some((F6, true)),
            settle_ms: 300,
            promotion: Role::Queen,
            promoted: &[],
            max_plies: 3,
            prefix: &other,
            margin: 8,
            now: 5000,
            gaps: &[],
            reports: &[],
            budget: SEARCH_BUDGET,
            ceiling: u32::MAX,
        });
        assert_eq!(
            again.best().map(|s| (s.moves.clone(), s.cost)),
            Some((other, 0))
        );
    }

    #[test]
    fn a_rook_that_went_and_came_back_over_a_square_seen_is_told_from_a_bishop_that_did_not() {
        // The rook goes d3-e3-f3 (its lift lost, e3 read set down and lifted as it passes),
        // Black plays Qg7, the rook goes back to d3 (its placement lost), Black plays Kg8 a few
        // seconds later (a rook's placement elsewhere owed that long would be overdue). The
        // bishop's g2-f3-g2 explains the same board, with e3 a brush: one more. Both reach
        // the same position with every reading accounted for alike; the search must not take
        // the first route it went for the other (it read Bf3 Qg7 Bg2).
        let start = pos("7k/8/5q2/8/8/3R2P1/5PBP/6K1 w - - 0 1");
        let log = [
            seen(1000, E3, Placed),
            seen(1040, E3, Lifted),
            seen(1100, F3, Placed),
            seen(1500, F6, Lifted),
            seen(1700, G7, Placed),
            seen(2200, F3, Lifted),
            seen(5600, H8, Lifted),
            seen(5800, G8, Placed),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves), ["Rf3", "Qg7", "Rd3", "Kg8"]);
        let bishop = found
            .stories
            .iter()
            .find(|s| s.moves.first().is_some_and(|m| m.role() == Role::Bishop));
        assert_eq!(bishop.map(|s| s.cost), Some(b.cost + cost::BRUSH));
    }

    #[test]
    fn a_capturing_piece_set_down_and_gone_again_in_a_gap_changed_its_square_unseen_there() {
        // Black takes on g4 (the pawn lifted first, then the knight), and the cable goes: the
        // knight is set down on g4, White plays Rg2, the knight goes back to f6, and the
        // report after the gap shows a2 and g2 changed (g4 stands empty, as the pawn's lift
        // left it). Then f6 is read set down. Nxg4 Rg2 Nf6, g4 changed and changed back unseen
        // in the gap (one change unseen, as any there): not a placement and a lift the board
        // never showed (it read Ne4 then, the knight's lift and placement both unseen).
        let start = pos("4k3/8/5n2/8/6P1/8/R7/4K3 b - - 0 1");
        let log = [
            seen(1000, G4, Lifted),
            seen(1500, F6, Lifted),
            frame(5000, A2, Lifted),
            frame(5000, G2, Placed),
            seen(5500, F6, Placed),
        ];
        let changed = Bitboard::from_square(A2) | Bitboard::from_square(G2);
        let found = find_after_gap(&start, &log, 2000, 5000, changed);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves), ["Nxg4", "Rg2", "Nf6"]);
        assert_eq!((b.cost, b.departures.unseen), (cost::GAP, 1));
        assert_eq!(b.departures.vanished, 0);
    }

    #[test]
    fn a_piece_taken_away_while_nobody_heard_the_board_did_not_stand_there_for_the_gap() {
        // Black's bishop slides c8-d7-e6 on its way to g4, and the cable goes as it passes e6:
        // it reaches g4, White plays h3, the bishop goes back to e6, and the report after the
        // gap shows e6 empty (the bishop in the hand again) and h2-h3; then e6 is read set
        // down, and White's king lifted. The bishop did not stand on e6 through the gap (a
        // move put back): how long it stood there, nobody heard. Bg4 (or Bf5) h3 Be6, one
        // change unseen in the gap (g4's, changed and changed back).
        let start = pos("2b1k3/8/8/8/8/8/7P/4K3 b - - 0 1");
        let log = [
            seen(17366, C8, Lifted),
            seen(17421, D7, Placed),
            seen(17463, D7, Glitch),
            seen(17495, D7, Lifted),
            seen(17550, E6, Placed),
            frame(18900, E6, Lifted),
            frame(18900, H2, Lifted),
            frame(18900, H3, Placed),
            seen(19394, E6, Glitch),
            seen(19427, E6, Placed),
            seen(19779, E1, Lifted),
        ];
        let changed =
            Bitboard::from_square(E6) | Bitboard::from_square(H2) | Bitboard::from_square(H3);
        let found = find_after_gap(&start, &log, 17556, 18900, changed);
        let b = found.best().unwrap();
        let moves = sans(&start, &b.moves);
        assert!(
            moves == ["Bg4", "h3", "Be6"] || moves == ["Bf5", "h3", "Be6"],
            "{moves:?}"
        );
        assert_eq!((b.cost, b.departures.unseen), (cost::GAP, 1), "{moves:?}");
    }

    #[test]
    fn a_placement_lost_at_once_is_a_flicker_and_the_capture_of_the_piece_follows() {
        // White's knight lands on d5 and the sensor loses it at once (a flicker); black takes
        // it: the bishop lifted, set down on d5 (the knight's lift not seen: d5 read empty).
        // As cheap: the flicker was the knight's first contact and its settled reading came
        // late, the bishop still in the hand (one fault each). Both tell Nd5, and nothing
        // else is as cheap.
        let start = pos("rn1qkbnr/ppp2ppp/3pb3/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 4");
        let log = [
            seen(1030, C3, Lifted),
            seen(1303, D5, Glitch),
            seen(1830, E6, Lifted),
            seen(2130, D5, Placed),
        ];
        let found = find(&start, &log);
        let least = found.best().unwrap().cost;
        let mut cheapest: Vec<Vec<String>> = found
            .stories
            .iter()
            .filter(|s| s.cost == least)
            .map(|s| sans(&start, &s.moves))
            .collect();
        cheapest.sort();
        assert_eq!(cheapest, [vec!["Nd5"], vec!["Nd5", "Bxd5"]]);
        let capture = found.stories.iter().find(|s| s.moves.len() == 2).unwrap();
        assert!(capture.owed.is_empty());
        let in_hand = found.stories.iter().find(|s| s.moves.len() == 1).unwrap();
        assert_eq!(in_hand.beyond, Verdict::InProgress);
        // (The knight was set down before the bishop's lift: so it is dated.)
        assert_eq!(in_hand.times, [1830]);
        // A flicker just before a change of its square is contact bounce, not a change.
        let bounce = [
            seen(1000, G1, Lifted),
            seen(1270, F3, Glitch),
            seen(1300, F3, Placed),
        ];
        let (moves, cost) = best(&Chess::default(), &bounce);
        assert_eq!((moves, cost), (vec!["Nf3".to_string()], 0));
    }

    #[test]
    fn a_swapped_capture_then_the_recapture_with_its_lift_seen_late() {
        // ...Bxe3+ with the rook on e3 swept off quicker than the debounce (a flicker), then
        // Rxe3 with the rook's lift from d3 lost and shown by the next whole-board report: the
        // recapture's changes are the square's next ones, the capture's only the flicker.
        let start = pos("2r5/3N3p/pb6/5kP1/5P2/3RR1P1/P2n4/6K1 b - - 2 36");
        let log = [
            seen(406242, B6, Glitch),
            seen(406274, B6, Lifted),
            seen(406481, E3, Glitch),
            seen(407104, E3, Glitch),
            frame(407132, D3, Lifted),
            seen(407137, E3, Lifted),
            seen(407407, E3, Placed),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves), ["Bxe3", "Rxe3"]);
        assert_eq!(b.cost, cost::SWAP);
        assert_eq!(b.beyond, Verdict::Home);
        assert!(found.stories.iter().skip(1).all(|s| s.cost > b.cost));
    }

    #[test]
    fn a_capture_whose_placement_was_lost_then_the_recapture() {
        // ...Nxd6 with the knight's placement on d6 lost (the white knight's lift seen), then
        // Qxd6: the queen's placement is the square's next change. One reading lost: among the
        // cheapest stories (the board does not tell it yet from the knight gone elsewhere, and
        // white's knight lifted and put back while the queen is in the hand).
        let start = pos("r1b3k1/3p1rp1/1pnN4/4p3/4n2p/2P2P2/P1P3PP/R2Q1RK1 b - - 0 17");
        let log = [
            seen(8629126, E4, Lifted),
            seen(8630212, D6, Glitch),
            seen(8630243, D6, Lifted),
            seen(8630806, D1, Lifted),
            seen(8631442, D6, Glitch),
            seen(8631475, D6, Placed),
        ];
        let found = find(&start, &log);
        let cheapest = found.cheapest();
        assert!(cheapest
            .iter()
            .any(|s| sans(&start, &s.moves) == ["Nxd6", "Qxd6"]));
        // Two changes unseen on one square (the knight to d2, the queen taking it there): dearer.
        assert!(found
            .stories
            .iter()
            .filter(|s| sans(&start, &s.moves) == ["Nd2", "Qxd2"])
            .all(|s| s.cost > cheapest[0].cost));
    }

    #[test]
    fn a_queen_moved_and_castling_is_no_touch_and_two_moves_read_late_in_a_report() {
        // 9.Qd2 Nc6 10.O-O-O: the queen's placement on d2 read late (after the board's report,
        // which did not show it yet), castling seen only in the report. The same squares tell
        // 9.Rc1 (the queen lifted and put back, touched: a piece touched that is not moved)
        // Nc6 10.Kd2, with the rook's and the king's readings late in the report.
        let start = pos("rnb2rk1/pp1nqppp/4p3/2ppP3/3P1P2/2N2N2/PPP3PP/R2QKB1R w KQ - 0 9");
        let log = [
            seen(13360, D1, Lifted),
            seen(14013, B8, Lifted),
            seen(14442, C6, Placed),
            frame(14949, A1, Lifted),
            frame(14949, C1, Placed),
            frame(14949, D1, Placed),
            frame(14949, E1, Lifted),
            seen(15158, D2, Placed),
        ];
        let castled = ["Qd2", "Nc6", "O-O-O"];
        let found = told_apart(&start, &log, 14949, &castled, &["Rc1", "Nc6", "Kd2"]);
        assert_eq!(
            sans(&start, &found.best().unwrap().moves),
            ["Qd2", "Nc6", "O-O-O"]
        );
    }

    /// The stories of `log` from `start` (stories of up to four moves, the board's whole report
    /// at `report`): both `better` and `worse` (in SAN) among them, `better` the cheaper.
    fn told_apart(
        start: &Chess,
        log: &[Seen],
        report: Millis,
        better: &[&str],
        worse: &[&str],
    ) -> Found {
        let ask = Ask {
            reports: &[report],
            ..ask(4, 8)
        };
        let found = find_as(start, log, ask);
        let b = story_of(start, &found, better).expect("the better story");
        let w = story_of(start, &found, worse).expect("the worse story");
        assert!(b.cost < w.cost, "{b:?} {w:?}");
        found
    }

    #[test]
    fn castling_read_only_in_a_report_after_the_reply_is_no_rook_move_and_a_king_move() {
        // 20.O-O g5 21.Rfd1, castling's four readings lost and shown by the board's report
        // after the reply. The same squares tell 20.Rg1 g5 21.Kd1, with a piece stood on f1
        // and taken away again.
        let start = pos("2krr3/1qpn1ppp/p7/P3p3/3P4/Q3PN2/1P1B1PPP/2R1K2R w K - 0 20");
        let log = [
            seen(36338, G7, Lifted),
            seen(36819, G5, Placed),
            frame(36857, E1, Lifted),
            frame(36857, F1, Placed),
            frame(36857, G1, Placed),
            frame(36857, H1, Lifted),
            seen(37473, F1, Lifted),
            seen(38130, D1, Placed),
        ];
        told_apart(
            &start,
            &log,
            36857,
            &["O-O", "g5", "Rfd1"],
            &["Rg1", "g5", "Kd1"],
        );
    }

    #[test]
    fn a_piece_touched_and_put_back_costs_little_one_that_stood_as_an_illegal_move() {
        let start = Chess::default();
        let touched = [
            seen(100, G1, Lifted),
            seen(400, G1, Placed),
            seen(700, E2, Lifted),
            seen(900, E4, Placed),
        ];
        assert_eq!(best(&start, &touched), (vec!["e4".into()], cost::TOUCH));
        // A knight set down on g3 (illegal), left there a second, put back, then e4.
        let put_back = [
            seen(100, G1, Lifted),
            seen(300, G3, Placed),
            seen(1300, G3, Lifted),
            seen(1500, G1, Placed),
            seen(1700, E2, Lifted),
            seen(1900, E4, Placed),
        ];
        // (The knight's lift and its placement back on g1 are a touch as well.)
        assert_eq!(
            best(&start, &put_back),
            (vec!["e4".into()], cost::STOOD + cost::TOUCH)
        );
        // Slid over a square for a moment: nothing.
        let slid = [
            seen(100, D1, Lifted),
            seen(150, E2, Placed),
            seen(200, E2, Lifted),
        ];
        let p = pos("rnbqkbnr/pppppppp/8/8/8/8/PPP2PPP/RNBQKBNR w KQkq - 0 1");
        let log = [slid[0], slid[1], slid[2], seen(260, F3, Placed)];
        assert_eq!(best(&p, &log), (vec!["Qf3".into()], 0));
    }

    #[test]
    fn a_square_slid_over_whose_lift_is_late_is_the_slide_not_a_move_there() {
        // Black's bishop c8-h3 slides over d7, e6, f5 and g4; d7's lift comes late, after
        // the bishop is on h3 and White has lifted the rook from f1.
        let start = pos("rnbq1rk1/ppp2ppp/7n/3P3Q/2B4b/3P4/PPP4N/RNB2RK1 b - - 0 10");
        let mut log = vec![
            seen(100, C8, Lifted),
            seen(160, D7, Placed),
            seen(280, E6, Placed),
            seen(340, E6, Lifted),
            seen(400, F5, Placed),
            seen(460, F5, Lifted),
            seen(520, G4, Placed),
            seen(580, G4, Lifted),
            seen(640, H3, Placed),
            seen(820, F1, Lifted),
        ];
        // The lift still owed: the slide, waiting for it.
        let found = find(&start, &log);
        let b = found.best().expect("a story");
        assert_eq!(sans(&start, &b.moves), ["Bh3"]);
        assert_eq!(b.cost, cost::OWED);
        assert_eq!(b.owed, Bitboard::from_square(D7));
        // Its lift a second late: the slide, one reading late, not a bishop that stood on d7
        // (Bd7 and a rook move unseen).
        log.push(seen(1200, D7, Lifted));
        let found = find(&start, &log);
        let b = found.best().expect("a story");
        assert_eq!(sans(&start, &b.moves), ["Bh3"]);
        assert_eq!((b.cost, b.owed), (cost::LATE, Bitboard::EMPTY));
        // A bishop that stopped on d7, then White's move: d7 is not on the way of a move.
        let stopped = [
            seen(100, C8, Lifted),
            seen(160, D7, Placed),
            seen(600, F1, Lifted),
            seen(800, E1, Placed),
        ];
        assert_eq!(
            best(&start, &stopped),
            (vec!["Bd7".into(), "Re1".into()], 0)
        );
    }

    #[test]
    fn a_placement_overtaken_by_the_next_lift_vanished() {
        // White Qd1-d3, the placement's reading late and overtaken: the queen is lifted again
        // from d3 before it came, so nothing is ever seen on d3; black's e5 between.
        let start = pos("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 1");
        let log = [
            seen(100, D1, Lifted),
            seen(500, E7, Lifted),
            seen(700, E5, Placed),
            seen(1200, G6, Placed),
        ];
        let found = find(&start, &log);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves), ["Qd3", "e5", "Qg6"]);
        assert_eq!(b.cost, cost::VANISHED);
        assert_eq!(b.departures.vanished, 1);
        assert_eq!(found.cheapest().len(), 1);
    }

    #[test]
    fn a_square_read_again_empty_tells_the_route_of_a_piece_never_seen_there() {
        // White's queen d1-X-h1, its placement on X overtaken by its lift (black's h6 between);
        // then X read again, empty, late. Occupancy alone cannot tell d5, f3 and h5 apart; the
        // echo does, and every other route pays for leaving it unexplained.
        let start = pos("1k6/7p/8/8/8/8/8/3QK3 w - - 0 1");
        for (x, route) in [(F3, "Qf3"), (D5, "Qd5"), (H5, "Qh5")] {
            let log = [
                seen(100, D1, Lifted),
                seen(600, H7, Lifted),
                seen(800, H6, Placed),
                seen(1400, H1, Placed),
                seen(1450, x, Echo { occupied: false }),
            ];
            let found = find(&start, &log);
            let b = found.best().unwrap();
            assert_eq!(sans(&start, &b.moves), [route, "h6", "Qh1"]);
            assert_eq!(b.cost, cost::LATE);
            assert_eq!(found.cheapest().len(), 1);
            let others: Vec<u32> = found
                .stories
                .iter()
                .filter(|s| s.moves != b.moves)
                .map(|s| s.cost)
                .collect();
            assert!(!others.is_empty());
            assert!(others.iter().all(|&c| c >= cost::VANISHED + cost::ECHO));
        }
    }

    #[test]
    fn a_capture_read_as_a_placement_on_a_full_square_is_its_lift_lost() {
        // The e4 pawn takes on d5 or on f5: the captured pawn's lift not read before the
        // capturing one was set down, which reads the square as it stood, occupied. Black's
        // knight lifted after: the capture is made.
        let start = pos("rnbqkbnr/ppp1p1pp/8/3p1p2/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3");
        for (x, capture) in [(D5, "exd5"), (F5, "exf5")] {
            let log = [
                seen(100, E4, Lifted),
                seen(400, x, Echo { occupied: true }),
                seen(900, G8, Lifted),
            ];
            let found = find(&start, &log);
            let b = found.best().unwrap();
            assert_eq!(sans(&start, &b.moves), [capture]);
            assert_eq!(b.cost, cost::SWAP);
            assert_eq!(found.cheapest().len(), 1);
        }
        // Without it, the board cannot tell which: neither left a trace (nor e5 its placement).
        let found = find(&start, &[seen(100, E4, Lifted), seen(900, G8, Lifted)]);
        assert_eq!(found.best().map(|b| b.cost), Some(cost::UNTRACED));
        assert_eq!(cheapest_firsts(&start, &found), ["e5", "exd5", "exf5"]);
    }

    #[test]
    fn a_square_brushed_tells_the_way_of_a_slide_whose_end_was_not_seen() {
        // The rook d3 slides along the third rank over e3, its placement not read; Black
        // answers h7-h6. Only a slide over e3 explains the moment e3 was full: f3, g3 or h3
        // (or e3 itself, the rook in the hand again), not a square up or down the d-file, nor
        // back to c3.
        let start = pos("7k/7p/8/8/8/3R4/8/4K3 w - - 0 1");
        let log = [
            seen(100, D3, Lifted),
            seen(300, E3, Placed),
            seen(330, E3, Lifted),
            seen(900, H7, Lifted),
            seen(1100, H6, Placed),
        ];
        let found = find(&start, &log);
        assert_eq!(
            cheapest_firsts(&start, &found),
            ["Re3", "Rf3", "Rg3", "Rh3"]
        );
        let best = found.best().unwrap().cost;
        let up_the_file = found
            .stories
            .iter()
            .find(|s| sans(&start, &s.moves)[0] == "Rd5")
            .expect("Rd5 is a story");
        assert!(up_the_file.cost >= best + cost::BRUSH);
    }

    #[test]
    fn the_prefix_binds_the_stories() {
        let start = Chess::default();
        let log = [seen(100, E2, Lifted), seen(300, E4, Placed)];
        let e3 = "e3".parse::<San>().unwrap().to_move(&start).unwrap();
        let ask = Ask {
            reports: &[],
            prefix: &[e3],
            max_plies: 6,
            margin: 20,
        };
        let found = find_as(&start, &log, ask);
        let b = found.best().unwrap();
        assert_eq!(sans(&start, &b.moves)[0], "e3");
        assert!(b.cost >= cost::OWED + cost::ILLEGAL.min(cost::UNEXPLAINED));
    }

    /// Stories of `start` with `prefix` as their first moves, the search as the engine runs it.
    fn find_with(start: &Chess, log: &[Seen], reports: &[Millis], prefix: &[Move]) -> Found {
        let ask = Ask {
            reports,
            prefix,
            max_plies: 8.max(prefix.len()),
            margin: 3,
        };
        find_as(start, log, ask)
    }

    #[test]
    fn a_story_is_found_as_cheap_as_when_its_moves_are_given() {
        // A game's end (issue 25, a late model): Qd2+ whose placement was never read, then
        // its lift read as the square stood (an echo), Kc6, Qg2+ sliding over e2 and f2, and
        // Kd6 seen only in a whole-board report. The search once lost the echo in one of its
        // branches (what a square was owed since was not put back), and took Qe2 Kd6 Qg2.
        let start = pos("7k/PR6/2K3p1/8/1P1q4/7p/8/8 b - - 0 60");
        let log = [
            seen(784, D4, Lifted),
            seen(1242, C3, Glitch),
            seen(1274, C3, Placed),
            seen(1401, D7, Placed),
            seen(1445, C6, Lifted),
            seen(1926, C3, Lifted),
            seen(2386, D2, Glitch),
            seen(2516, D7, Glitch),
            seen(2549, D7, Lifted),
            seen(2953, C6, Glitch),
            seen(2987, C6, Placed),
            seen(3388, D2, Echo { occupied: false }),
            seen(3393, D2, Glitch),
            seen(3460, E2, Glitch),
            seen(3491, E2, Placed),
            seen(3541, E2, Lifted),
            seen(3592, F2, Placed),
            seen(3656, F2, Lifted),
            seen(3723, G2, Placed),
            frame(4279, C6, Lifted),
            frame(4279, D6, Placed),
        ];
        let reports = [4279];
        let played = ["Qc3", "Kd7", "Qd2", "Kc6", "Qg2", "Kd6"];
        let mut p = start.clone();
        let moves: Vec<Move> = played
            .iter()
            .map(|san| {
                let m = san.parse::<San>().unwrap().to_move(&p).unwrap();
                p.play_unchecked(m);
                m
            })
            .collect();
        let given = find_with(&start, &log, &reports, &moves);
        let played_cost = given.best().expect("the game's story").cost;
        let found = find_with(&start, &log, &reports, &[]);
        let best = found.best().expect("a story");
        assert!(found.complete);
        assert_eq!(sans(&start, &best.moves), played);
        assert_eq!(best.cost, played_cost);
    }

    #[test]
    fn a_piece_seen_set_down_long_before_its_lift_needs_the_lift_late() {
        // 1. e4: the pawn's placement read before its lift. Within a DGT board's scan (250 ms)
        // that is the board's order of reading; 700 ms before, the lift's reading came late,
        // unless its lift flickered before the placement (the lift begun, its settled reading
        // late). A late lift seen in a whole-board report costs less.
        let start = Chess::default();
        let cost_of_e4 = |log: &[Seen]| {
            let found = find(&start, log);
            let e4 = found
                .stories
                .iter()
                .find(|s| sans(&start, &s.moves) == ["e4"])
                .expect("the story of e4");
            (e4.cost, e4.departures.late)
        };
        let scan = [seen(100, E4, Placed), seen(350, E2, Lifted)];
        assert_eq!(cost_of_e4(&scan), (0, 0));
        let late = [seen(100, E4, Placed), seen(800, E2, Lifted)];
        assert_eq!(cost_of_e4(&late), (cost::LATE, 1));
        let flickered = [
            seen(60, E2, Glitch),
            seen(100, E4, Placed),
            seen(800, E2, Lifted),
        ];
        let (cost, late) = cost_of_e4(&flickered);
        assert!(late == 0 && cost < cost::LATE, "{cost} {late}");
        let reported = [seen(100, E4, Placed), frame(800, E2, Lifted)];
        assert_eq!(cost_of_e4(&reported), (cost::LATE_FRAME, 1));
    }

    #[test]
    fn a_lift_owed_after_its_piece_was_set_down_is_overdue_from_the_placement() {
        // Nf3's knight set down at 2,000 ms, its lift from g1 not read: 3 s after the last
        // move, but only 1.5 s after the placement, the lift is not overdue yet; 2.6 s after
        // the placement it is.
        let start = Chess::default();
        let cost_at = |now: Millis| {
            let log = [seen(2000, F3, Placed), seen(now, H7, Glitch)];
            let found = find(&start, &log);
            let nf3 = found
                .stories
                .iter()
                .find(|s| sans(&start, &s.moves) == ["Nf3"])
                .expect("the story of Nf3");
            assert_eq!(nf3.departures.owed, 1);
            nf3.cost
        };
        assert!(
            cost_at(3500) < cost::OWED + cost::OVERDUE,
            "{}",
            cost_at(3500)
        );
        assert!(
            cost_at(4600) >= cost::OWED + cost::OVERDUE,
            "{}",
            cost_at(4600)
        );
    }

    #[test]
    fn the_cheapest_run_in_order() {
        let (mut runs, mut keep) = (Runs::default(), Vec::new());
        let mut run = |order: &[Stamp], weight: &dyn Fn(usize) -> u32| {
            cheapest_in_order(order, weight, &mut runs, &mut keep);
            keep.clone()
        };
        let order = [(0, 0, 0), (1, 1, 1), (2, 1, 2), (3, 0, 3)];
        let one = |_| 1;
        assert_eq!(run(&order, &one), vec![true, true, true, false]);
        assert_eq!(run(&[], &one), Vec::<bool>::new());
        // The one left out is the lightest, though keeping it would keep more.
        let heavy_last = |j| if j == 3 { 10 } else { 1 };
        assert_eq!(run(&order, &heavy_last), vec![true, false, false, true]);
        // (The room of a longer run used again: nothing of it is left.)
        assert_eq!(run(&order[..2], &one), vec![true, true]);
    }

    #[test]
    fn stories_added_are_kept_once_cheapest_first_within_the_margin() {
        let pos = Chess::default();
        let mv = |san: &str| san.parse::<San>().unwrap().to_move(&pos).unwrap();
        let story = |san: &str, cost: u32| Story {
            moves: vec![mv(san)],
            times: vec![0],
            cost,
            departures: Departures::default(),
            owed: Bitboard::EMPTY,
            beyond: Verdict::Home,
            matched: Vec::new(),
            late: Vec::new(),
            unordered: false,
        };
        let mut found = Found {
            stories: vec![story("e4", 4)],
            complete: false,
            nodes: 0,
        };
        // d4 is cheaper than the one found: it goes first, e4 twice is kept once (the first
        // time's cost), and Nf3 is dearer than the best by more than the margin.
        found.add(vec![story("d4", 2), story("e4", 3), story("Nf3", 6)], 3);
        let kept: Vec<(String, u32)> = found
            .stories
            .iter()
            .map(|s| (sans(&pos, &s.moves)[0].clone(), s.cost))
            .collect();
        assert_eq!(kept, vec![("d4".into(), 2), ("e4".into(), 4)]);
    }
}
