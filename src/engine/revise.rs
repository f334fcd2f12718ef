//! Revising the reading. The record since the agreed point, with the rulings given since, is
//! one story of what the board did; the decoder's stories are the others. When the readings
//! tell another story clearly better (a reading came late, one was lost), the arbiter takes
//! it: the moves the board was not seen making are recorded (`recovered`), and moves already
//! announced or rulings already given that were not what happened are withdrawn in a
//! `correction` and replaced. A story is taken only when waiting cannot tell more: while the
//! board may still show which of several stories it was, or a reading a story needs may still
//! come, the arbiter waits (and rules nothing), until the board has stood still for the
//! mismatch delay.

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Move, Position, Role, Square};

use super::arbiter::{
    Credit, Engine, Fruitless, Held, Hold, LastSaid, Mismatch, Phase, Ruling, AGREE_AFTER_PLIES,
};
use super::decoder::debounce::EMPTY;
use super::decoder::log::{Seen, Trace};
use super::decoder::recognise::{self, Verdict};
use super::decoder::stories::{self, Found, Query, Story};
use super::event::{Event, EventKind, Millis, Priority};
use super::game::ply_number;
use super::turn::Turn;

/// What revising the reading came to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Revision {
    /// A story was taken: moves recorded, or a correction made.
    Taken,
    /// Stories of legal moves explain the board better than the record does, but the board
    /// does not tell which yet, or one needs a reading still to come: wait, and rule nothing.
    Waiting,
    /// The record, and what the board shows beyond it, is the best story.
    Current,
    /// No story explains the board.
    Nothing,
}

/// A story this much cheaper than the record's replaces it (the players heard the record).
const CORRECTION_MARGIN: u32 = 3;
/// Stories within this much of the best are its rivals: the board does not tell them apart.
const RIVALS: u32 = 1;
/// Plies after a story taken over a rival ending elsewhere before the record is agreed on
/// (see `rival_plies`).
const RIVAL_OPEN_PLIES: usize = 8;
/// Stories kept beyond the cheapest.
const MARGIN: u32 = 3;
/// Moves a story may have beyond the record: as many as people make while a late reading is
/// waited for (2.5 s); after a gap, fewer (its report shows them in no order, and more moves
/// explain it in more ways).
const BEYOND_RECORD: usize = 6;
const BEYOND_RECORD_GAP: usize = 4;
/// The most moves a story has: a record as old as is not yet agreed (`AGREE_AFTER_PLIES`,
/// moves read with readings lost or late, none plainly) and the moves beyond it that a late
/// reading may hide. (With fewer, a record that old leaves no story room for the next move,
/// and nothing more is recorded.)
const MOST_PLIES: usize = AGREE_AFTER_PLIES + BEYOND_RECORD;

/// A story that explains the board at this cost (three readings lost or late) is doubtful:
/// the move agreed before may be another than it looked (a rook slid over g8 to e8, its
/// passage read as its placement and the rest lost, is no Rg8 followed by moves of both
/// sides that nobody saw).
const DOUBTFUL: u32 = 12;

/// How long after its first new move a story that needs readings lost or late waits for a
/// rival's owed readings: a lost reading's report (once a second), most late readings. (2 s
/// saved more corrections, but announced a capture after a lost placement half a second
/// later than the readings allowed.)
const OWED_RIVAL_MS: Millis = 1500;
/// As long, for a story that needs a change the board never showed at all (a capture whose
/// captured piece's lift was lost, the square staying full; a placement overtaken by its lift):
/// `Re6-e7` with its placement read 1.9 s late was taken at 1.5 s for `Rxd6`, the knight's
/// lift from d6 lost, and put right after (the tempo bench: 12 corrections fewer of 450,
/// nothing else changed).
const OWED_RIVAL_UNTRACED_MS: Millis = 2000;
/// How long `story` waits for a rival's owed readings.
fn owed_rival_ms(story: &Story) -> Millis {
    if story.departures.vanished > 0 {
        OWED_RIVAL_UNTRACED_MS
    } else {
        OWED_RIVAL_MS
    }
}

/// Meanwhile a story this much dearer is its rival too: a reading late still to come may tell
/// them apart (the order of three captures on one square, their readings late).
const NEAR_RIVAL: u32 = 2;

/// Stories held open between searches, and the nodes each is searched with again.
const HELD_OPEN: usize = 8;
const OPEN_BUDGET: usize = stories::BUDGET / 2;

/// Searches that the board's going on asks for after one found no story wait until the log has
/// grown by this many observations at most (1, 2, 4, ... after each fruitless one): a board
/// nothing explains (garbage, a game the record lost) is not searched at every reading.
const FRUITLESS_STEP: usize = 32;

/// The nodes searches may spend, as a bucket that fills with the board's time: as many as
/// eight whole searches at once (the board's report after a gap, and the moves people go on
/// making while its stories are told apart, ask for several in a row), and one every two and
/// a half seconds on end (people playing on make a move in that time, and a story not searched
/// for by then may be out of reach). Players reading a board spend far less; a board gone wild
/// (contacts chattering, a stream of garbage) spends it all, and then the searches it asks for
/// wait. A board standing still, and a move held, are searched whatever is left: rulings wait
/// on them.
const CREDIT_MOST: usize = 8 * stories::SEARCH_BUDGET;
const CREDIT_PER_MS: usize = 16;
/// A search the board's going on asks for is not begun with fewer nodes left than this.
const CREDIT_LEAST: usize = stories::BUDGET / 4;

impl Default for Credit {
    fn default() -> Self {
        Credit {
            nodes: CREDIT_MOST,
            at: 0,
        }
    }
}

impl Credit {
    /// Filled up to `now`: the nodes a search may spend.
    fn fill(&mut self, now: Millis) -> usize {
        let ms = usize::try_from(now.saturating_sub(self.at)).unwrap_or(usize::MAX);
        self.nodes = self
            .nodes
            .saturating_add(ms.saturating_mul(CREDIT_PER_MS))
            .min(CREDIT_MOST);
        self.at = self.at.max(now);
        self.nodes
    }
}

/// How far two sequences of moves agree.
fn common(a: &[Move], b: &[Move]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The same position (pieces and the side to move).
fn same(a: &Chess, b: &Chess) -> bool {
    a.board() == b.board() && a.turn() == b.turn()
}

/// Of the stories costing `cost`, the one whose moves capture the most (pawn 1, knight and
/// bishop 3, rook 5, queen 9), if one does.
fn richest(stories: &[Story], cost: u32) -> Option<&Story> {
    let taken = |s: &Story| -> u32 {
        s.moves
            .iter()
            .filter_map(|m| m.capture())
            .map(|r| match r {
                Role::Pawn => 1,
                Role::Knight | Role::Bishop => 3,
                Role::Rook => 5,
                Role::Queen => 9,
                Role::King => 0,
            })
            .sum()
    };
    alone_least(stories, cost, |s| std::cmp::Reverse(taken(s)))
}

/// Of the stories costing `cost`, the one alone in needing the fewest changes the board never
/// showed at all (a placement and the lift after it), if one is: a reading late is one
/// reading, kept back; two never shown are two (the pawn's b5-b6 read late and the bishop's
/// capture there, or the pawn's capture on a6 and b6 read as it stood, unseen twice).
fn least_vanished(stories: &[Story], cost: u32) -> Option<&Story> {
    alone_least(stories, cost, |s| s.departures.vanished)
}

/// The first of the moves of `story` the record keeps (its first `kept`) that a rival as cheap,
/// of as many moves, ending in the same position, has otherwise (two knights' moves whose
/// squares the late readings leave to either: Nd4-e2 ... Nc3-b5 or Nd4-b5 ... Nc3-e2): the
/// record's moves from there were a guess the board does not tell.
fn kept_rivalled_from(found: &Found, story: &Story, start: &Chess, kept: usize) -> Option<usize> {
    let end = story.position(start);
    found
        .stories
        .iter()
        .filter(|s| {
            s.moves.len() == story.moves.len()
                && s.moves != story.moves
                && s.cost <= story.cost
                && same(&s.position(start), &end)
        })
        .map(|s| common(&s.moves, &story.moves))
        .filter(|&i| i < kept)
        .min()
}

/// Of the stories costing `cost`, the one alone in having the least `key`, if one is.
fn alone_least<K: Ord>(stories: &[Story], cost: u32, key: impl Fn(&Story) -> K) -> Option<&Story> {
    let tied: Vec<(&Story, K)> = stories
        .iter()
        .filter(|s| s.cost == cost)
        .map(|s| (s, key(s)))
        .collect();
    let least = tied.iter().map(|(_, k)| k).min()?;
    let mut top = tied.iter().filter(|(_, k)| k == least);
    match (top.next(), top.next()) {
        (Some(&(s, _)), None) => Some(s),
        _ => None,
    }
}

/// Of the stories costing `cost`, the one alone in taking as late no change whose square
/// chattered as it was read (a glitch within `chatter_ms` of it: a change is logged when it
/// has stood for the debounce time), if one is: a reading that comes late is one reading sent
/// again, while a piece set down or lifted makes the switch chatter there and then.
fn chatter_not_late<'a>(
    stories: &'a [Story],
    cost: u32,
    log: &[Seen],
    chatter_ms: Millis,
) -> Option<&'a Story> {
    let chattered = |i: usize| {
        let seen = &log[i];
        log.iter().any(|g| {
            g.what == Trace::Glitch && g.square == seen.square && g.t.abs_diff(seen.t) <= chatter_ms
        })
    };
    alone_least(stories, cost, |s| {
        s.late.iter().filter(|&&i| chattered(i)).count()
    })
}

impl Engine {
    /// The position every explanation agrees on.
    pub(super) fn agreed_position(&self) -> Chess {
        self.game
            .plies
            .get(self.agreed.plies)
            .map_or_else(|| self.game.pos.clone(), |p| p.before.clone())
    }

    /// The moves recorded since the agreed point.
    fn announced(&self) -> Vec<Move> {
        let from = self.agreed.plies.min(self.game.plies.len());
        self.game.plies[from..].iter().map(|p| p.m).collect()
    }

    /// Moves a story may have beyond the record (see [`BEYOND_RECORD`]).
    fn beyond_record(&self) -> usize {
        if self.gaps.is_empty() {
            BEYOND_RECORD
        } else {
            BEYOND_RECORD_GAP
        }
    }

    /// Reads again from the point agreed before the last (when one is kept), and stays there
    /// (until the next plain move), when a story from there costs less than `best`, the
    /// cheapest from the agreed point (or when none is). A story from there replaces the
    /// record only when cheaper than the record's own by the correction margin, and the
    /// record's own is the move agreed on and a story from the agreed point: when none costs
    /// less, the reading from there tells what the reading from the agreed point tells, at
    /// many times the cost, and the agreed point stays.
    fn read_deeper(&mut self, best: Option<u32>, budget: usize) -> bool {
        let Some(prior) = self.prior.clone() else {
            return false;
        };
        let agreed = self.agreed;
        self.unagree();
        let start = self.agreed_position();
        let beyond = self.announced().len() + self.beyond_record();
        let below = best.map_or(u32::MAX, |b| b.saturating_sub(1));
        if self
            .stories(&start, &[], beyond, budget, below)
            .best()
            .is_some()
        {
            return true;
        }
        self.reagree(agreed, prior);
        false
    }

    /// The decoder's stories of the log from `start`, beginning with `prefix`.
    fn stories_from(&self, start: &Chess, prefix: &[Move], beyond: usize, budget: usize) -> Found {
        self.stories(start, prefix, beyond, budget, u32::MAX)
    }

    /// [`Engine::stories_from`], only those costing `ceiling` at most.
    fn stories(
        &self,
        start: &Chess,
        prefix: &[Move],
        beyond: usize,
        budget: usize,
        ceiling: u32,
    ) -> Found {
        let from = self.agreed.plies.min(self.game.plies.len());
        let promoted: Vec<Move> = self.game.plies[from..]
            .iter()
            .map(|p| p.m)
            .filter(|m| m.is_promotion())
            .collect();
        let q = Query {
            start,
            log: &self.log,
            phys: &self.phys,
            last_change: self.last_change,
            settle_ms: self.s.settle_ms,
            promotion: self.story_promotion().unwrap_or(self.s.promotion_default),
            promoted: &promoted,
            max_plies: (prefix.len() + beyond).min(MOST_PLIES),
            prefix,
            margin: MARGIN,
            now: self.now,
            gaps: &self.gaps,
            reports: &self.reports,
            budget,
            ceiling,
        };
        let found = stories::search(&q);
        let mut credit = self.credit.get();
        credit.nodes = credit.nodes.saturating_sub(found.nodes);
        self.credit.set(credit);
        found
    }

    /// A search stopped by its budget may not have reached the stories that matter most: the
    /// record's, and those held open from the searches before (the log has only grown since).
    /// Each is searched again from its own moves, which is far cheaper, and what is found is
    /// added to `found`. The record's own search is returned when it was complete (it is then
    /// the record's best story's search too).
    fn search_open(&self, start: &Chess, announced: &[Move], found: &mut Found) -> Option<Found> {
        let record = (!announced.is_empty())
            .then(|| self.stories_from(start, announced, self.beyond_record(), OPEN_BUDGET));
        if let Some(r) = &record {
            found.add(r.stories.clone(), MARGIN);
        }
        let held = if self.open.0 == self.agreed {
            &self.open.1[..]
        } else {
            &[]
        };
        // (The stories held are each other moves: a search's stories are, once each.)
        for prefix in held {
            if prefix[..] == *announced || prefix.len() >= MOST_PLIES {
                continue;
            }
            let more = self.stories_from(start, prefix, self.beyond_record(), OPEN_BUDGET);
            found.add(more.stories, MARGIN);
        }
        record.filter(|r| r.complete)
    }

    /// Keeps the cheapest stories' moves open for the searches to come: every one within the
    /// margin of the best, not only its rivals (a story a little dearer now, a castling whose
    /// rook's lift is still owed, is the one a reading still to come bears out, when the
    /// search from the agreed point may no longer reach it).
    fn hold_open(&mut self, found: &Found) {
        let Some(best) = found.best().map(|s| s.cost) else {
            return;
        };
        let open: Vec<Vec<Move>> = found
            .stories
            .iter()
            .filter(|s| s.cost <= best + MARGIN && !s.moves.is_empty())
            .take(HELD_OPEN)
            .map(|s| s.moves.clone())
            .collect();
        self.open = (self.agreed, open);
    }

    /// The rulings since the agreed point that `story` does not bear out: given in a turn it
    /// does not reach as the record did (after it leaves the record), or on a placement it
    /// reads as part of a legal move.
    /// (Of the rulings and the agreed plies, not the engine: the stories are compared with it
    /// while the engine notes what the comparison tells.)
    fn not_borne_out(rulings: &[Ruling], agreed: usize, story: &Story, common: usize) -> bool {
        rulings.iter().any(|r| {
            r.plies > agreed + common
                || r.placed
                    .is_some_and(|i| story.matched.binary_search(&i).is_ok())
        })
    }

    /// The game's plies since the agreed point include the computer's (its moves are not read
    /// from the board: they are not revised).
    fn computer_since_agreed(&self) -> bool {
        let Some(c) = self.computer() else {
            return false;
        };
        self.game.plies[self.agreed.plies.min(self.game.plies.len())..]
            .iter()
            .any(|p| p.before.turn() == c)
    }

    /// Reads the log again from the agreed point and takes the story it tells, if the board
    /// can tell it (`still`: it has stood so for the mismatch delay, and waiting would tell no
    /// more). `held`: a move held back a moment, seen being made; a story that begins with it
    /// takes it as seen.
    pub(super) fn revise(
        &mut self,
        still: bool,
        held: Option<&Hold>,
        out: &mut Vec<Event>,
    ) -> Revision {
        self.revise_from(still, held, out, false)
    }

    /// [`Engine::revise`]; `deepened`: read again from the point agreed before the last.
    fn revise_from(
        &mut self,
        still: bool,
        held: Option<&Hold>,
        out: &mut Vec<Event>,
        deepened: bool,
    ) -> Revision {
        if self.standing() || self.passive() || self.computer_since_agreed() || self.log_full() {
            return Revision::Nothing;
        }
        // (A held move or a board standing still is always searched: rulings wait on it.)
        let idle = !still && held.is_none();
        let len = self.log.len();
        let heard = (self.gaps.len(), self.reports.len(), self.last_change);
        if self.fruitless.is_some_and(|f| {
            f.agreed == self.agreed
                && ((idle && (f.log_len..f.log_len + f.step).contains(&len))
                    || (f.log_len == len && f.heard == heard))
        }) {
            return Revision::Nothing;
        }
        let mut filled = self.credit.get();
        let credit = filled.fill(self.now);
        self.credit.set(filled);
        if idle && credit < CREDIT_LEAST {
            return Revision::Nothing;
        }
        let budget = if idle {
            credit.min(stories::SEARCH_BUDGET)
        } else {
            stories::SEARCH_BUDGET
        };
        let start = self.agreed_position();
        let announced = self.announced();
        let mut found =
            self.stories_from(&start, &[], announced.len() + self.beyond_record(), budget);
        let n = announced.len();
        // (A search that looked at everything within its bounds, its best story as long as
        // they let a story be: the stories held open may reach further.)
        let horizon = (n + self.beyond_record()).min(MOST_PLIES);
        let bounded = found.best().is_some_and(|b| b.moves.len() >= horizon);
        let record = if found.complete && !bounded {
            None
        } else {
            self.search_open(&start, &announced, &mut found)
        };
        // No plain story from the agreed point (a story that needs readings lost, or none; or
        // one that explains the board only at a cost of several faults): the move before it
        // may be another than the board showed plainly. Read again from
        // the point before when a story from there costs less (`read_deeper`). (A lone placement,
        // the last thing the board did, is the first half of a piece slid or set down before
        // its lift more often than that: not for it alone, while the board goes on.)
        let doubtful = found.best().is_none_or(|b| {
            let lone_placement = b.moves.is_empty()
                && b.beyond == Verdict::Unexplained
                && self.last_change.is_some_and(|(_, placed)| placed);
            b.cost > 0
                && (!matches!(
                    b.beyond,
                    Verdict::InProgress | Verdict::Home | Verdict::Moves(_)
                ) || b.cost >= DOUBTFUL)
                && (still || !lone_placement)
        });
        if doubtful && self.read_deeper(found.best().map(|b| b.cost), budget) {
            return self.revise_from(still, held, out, true);
        }
        self.hold_open(&found);
        if found.best().is_none() {
            let step = match self.fruitless {
                Some(f) if f.agreed == self.agreed && idle => (f.step * 2).min(FRUITLESS_STEP),
                Some(f) if f.agreed == self.agreed => f.step,
                _ => 1,
            };
            self.fruitless = Some(Fruitless {
                agreed: self.agreed,
                log_len: len,
                step,
                heard,
            });
            return Revision::Nothing;
        }
        self.fruitless = None;
        // A move held back for breaking touch-move is a ruling to give: the stories that take
        // it as the next move are the record's, at the cost of an illegal move.
        let breach = match held.map(|h| &h.held) {
            Some(Held::Breach(m)) => Some(*m),
            _ => None,
        };
        // (The record's story with the board showing that move made beyond it is the same
        // story: no legal rival of the ruling.)
        let ruled = |s: &Story| {
            breach.is_some_and(|m| {
                s.moves.get(n) == Some(&m)
                    || s.moves.len() == n
                        && matches!(&s.beyond, Verdict::Moves(shown) if shown.contains(&m))
            })
        };
        let (rulings, agreed) = (&self.rulings, self.agreed.plies);
        let keeps = |s: &Story| {
            s.moves.starts_with(&announced)
                && !Self::not_borne_out(rulings, agreed, s, n)
                && !ruled(s)
        };
        let best = match found.stories.iter().find(|s| !ruled(s)) {
            Some(b) => b.clone(),
            None => return Revision::Current,
        };
        let best = &best;
        // The record's own best story: it, and what the board shows beyond it.
        let kept = match found.stories.iter().find(|s| keeps(s)) {
            Some(s) => Some(s.clone()),
            None => record
                .unwrap_or_else(|| {
                    self.stories_from(&start, &announced, self.beyond_record(), budget)
                })
                .stories
                .into_iter()
                .find(|s| keeps(s)),
        };
        // An illegal move held back a moment is a story too: one the search does not tell
        // (the opponent's reply begun on a board that must be put back first).
        let held_illegal =
            held.is_some_and(|h| matches!(h.held, Held::Illegal(..) | Held::Breach(_)));
        let mut record_cost = kept.as_ref().map_or(u32::MAX, |s| s.cost);
        if held_illegal {
            let breaching = found
                .stories
                .iter()
                .find(|s| ruled(s))
                .map_or(0, |s| s.cost);
            // (While the board goes on, a ruling wants legal stories dearer than it by more
            // than a reading late: the reading may be on its way.)
            let going_on = if still { 0 } else { stories::cost::LATE };
            record_cost = record_cost.min(stories::cost::ILLEGAL + going_on + breaching);
        }
        // A story as long as a story may be, owing nothing, that explains the board: the
        // players' next move would leave every story behind, so their moves will not tell it
        // from its rivals any better than now.
        let at_horizon = |s: &Story| {
            s.moves.len() + 1 >= horizon && s.owed.is_empty() && s.beyond != Verdict::Unexplained
        };
        // Replacing what the players heard wants a clear margin, except by a story at the
        // horizon (the record's own story waits for its cheaper rival for ever there, and
        // nothing more would be recorded); what was only held back wants less. (The horizon
        // does not count after a gap: stories reach fewer moves then, and their horizon comes
        // while the board's report still leaves the order of the moves open; such corrections
        // made right records wrong with pulled cables.)
        let stuck = at_horizon(best) && self.gaps.is_empty();
        let margin = if keeps(best) {
            0
        } else if (common(&best.moves, &announced) < n || !self.rulings.is_empty()) && !stuck {
            CORRECTION_MARGIN
        } else {
            1
        };
        // The record's story waits for a reading still to come: no correction while it may.
        let record_waits = kept.as_ref().is_some_and(|k| !k.owed.is_empty());
        let mut candidate = if best.cost.saturating_add(margin) <= record_cost
            && !(margin > 1 && record_waits && !still)
        {
            best.clone()
        } else {
            // A cheaper story, if not by the margin: the record is not agreed meanwhile (see
            // `rival_until`), and an illegal move held back that it explains is not ruled
            // while the board may still tell.
            if best.cost < record_cost && !keeps(best) {
                self.rival_until = self.rival_until.max(self.now + stories::OWED_PATIENCE_MS);
                if held_illegal && !still {
                    return Revision::Waiting;
                }
            }
            match kept {
                Some(k) if k.cost <= record_cost => k,
                _ => return Revision::Current,
            }
        };
        // The record's story, the board standing still showing a move beyond it that was not
        // completed (a capture whose captured piece was lifted in the turn before, its mover's
        // placement lost): the record will not complete it by itself. The story that makes
        // it, as cheap, is taken.
        if still && keeps(&candidate) && candidate.moves.len() == n {
            if let Verdict::Moves(shown) = &candidate.beyond {
                let made = found.stories.iter().find(|s| {
                    s.moves.len() == n + 1
                        && s.moves.starts_with(&candidate.moves)
                        && shown.contains(&s.moves[n])
                        && s.cost <= candidate.cost
                });
                if let Some(s) = made {
                    candidate = s.clone();
                }
            }
        }
        // (Read again from the point before: a story of fewer moves than the record is not
        // told by the readings lost, which hide moves, never make them.)
        if keeps(&candidate) && candidate.moves.len() == n || deepened && candidate.moves.len() < n
        {
            return Revision::Current;
        }
        // Can the board tell? Rivals that end elsewhere: not yet. Rivals that end in the same
        // position are other orders of the same moves (or other routes): the board will never
        // tell, and the likeliest is taken.
        let end = candidate.position(&start);
        let mut other_end = None::<u32>;
        let mut same_end = false;
        for s in &found.stories {
            if s.moves == candidate.moves || s.cost > candidate.cost + RIVALS {
                continue;
            }
            // (The candidate's moves but the last, the board showing that one made: no rival.)
            if matches!(s.beyond, Verdict::Moves(_)) && candidate.moves.starts_with(&s.moves) {
                continue;
            }
            // (The candidate's moves and more: it tells the candidate's moves as well, and what
            // comes after them is read from there.)
            if s.moves.len() > candidate.moves.len() && s.moves.starts_with(&candidate.moves) {
                continue;
            }
            // (The record's story and a rival that tells the moves announced otherwise, the
            // moves beyond them alike: the rival the record was taken over, kept open while
            // the moves may still tell it (`rival_plies`). The moves beyond are told.)
            let beyond_alike = s.moves.len() == candidate.moves.len()
                && s.moves.get(n..) == candidate.moves.get(n..)
                && common(&s.moves, &announced) < n;
            if beyond_alike && keeps(&candidate) {
                continue;
            }
            if same(&s.position(&start), &end) {
                same_end |= s.cost <= candidate.cost;
            } else {
                other_end = Some(other_end.map_or(s.cost, |c| c.min(s.cost)));
            }
        }
        let mut unsure = same_end;
        if let Some(rival) = other_end {
            // Rivals the players' moves have not told apart as far as a story reaches (the
            // next move would leave every story behind): waiting tells no more. The one whose
            // moves capture the most is taken, marked, if one does (typically: which piece a
            // capture on a square that stayed full took, while the board was not heard); else
            // the one alone in taking no chattering change as late (`chatter_not_late`).
            // (Rivals a little dearer, at the horizon: the cheapest is taken, marked.)
            let at_horizon = at_horizon(&candidate);
            let richest = (rival == candidate.cost && at_horizon)
                .then(|| {
                    richest(&found.stories, candidate.cost)
                        .or_else(|| {
                            chatter_not_late(
                                &found.stories,
                                candidate.cost,
                                &self.log,
                                2 * self.s.debounce_ms,
                            )
                        })
                        .or_else(|| least_vanished(&found.stories, candidate.cost))
                })
                .flatten();
            match richest {
                Some(s) => {
                    candidate = s.clone();
                    unsure = true;
                }
                None if at_horizon && rival > candidate.cost => unsure = true,
                // (The record's own story as long as a story may be, a cheaper rival that may
                // not replace the record by the margin: the next move leaves every story
                // behind, and nothing more would be recorded. The record goes on, marked.)
                None if candidate.moves.len() + 1 >= MOST_PLIES && rival < candidate.cost => {
                    unsure = true
                }
                None if !still || rival <= candidate.cost => return Revision::Waiting,
                None => {}
            }
        }
        // A story that needs readings lost or late, and another that ends elsewhere and would
        // cost no more once the readings it is owed come (a lost reading comes back with the
        // board's next report, a late one within seconds), or little more already: not taken
        // while they may still come, for a while after the story's first new move. (Not after
        // a gap: its report shows where the pieces stand, and the readings owed there do not
        // come.)
        let first_new = candidate
            .times
            .get(common(&candidate.moves, &announced))
            .copied()
            .unwrap_or(self.now);
        if !still
            && candidate.cost > 0
            && self.gaps.is_empty()
            && self.now < first_new.saturating_add(owed_rival_ms(&candidate))
            && self.owed_rival(&found, &candidate, &start, &end)
        {
            return Revision::Waiting;
        }
        // A story that withdraws moves announced for one that ends in an illegal move, or for
        // fewer moves: not while the board may still tell (the reply's first placement read
        // before its lift; the players taking a move back piece by piece, a takeback once the
        // position before it stands).
        let withdraws = common(&candidate.moves, &announced) < n;
        if !still
            && withdraws
            && (matches!(candidate.beyond, Verdict::Illegal { .. }) || candidate.moves.len() < n)
        {
            return Revision::Waiting;
        }
        if !still && (!candidate.owed.is_empty() || candidate.beyond == Verdict::Unexplained) {
            return Revision::Waiting;
        }
        // Its last move one whose piece the board has not shown set down (the placement read
        // as lost): the piece may be in the hand still, its placement read in a moment.
        if !still && self.lands_unseen(&start, &candidate, n) {
            return Revision::Waiting;
        }
        // Its last move a slide that may go on, set down a moment ago, the board showing
        // nothing after it: as a slide seen made is held back. Lifted again from where it was
        // set down (the piece in the hand, its square empty), it goes on, or is being taken:
        // the next reading tells. (Not after a gap: its report shows where pieces stand, not
        // where they went by.)
        if let Some((last, before)) = candidate.moves.split_last().filter(|_| {
            !still
                && held.is_none()
                && candidate.moves.len() > n
                && matches!(candidate.beyond, Verdict::Home | Verdict::InProgress)
        }) {
            let mut pos = start.clone();
            for m in before {
                pos.play_unchecked(*m);
            }
            let done = candidate.times.last().copied().unwrap_or(self.now);
            let waits = match candidate.beyond {
                Verdict::Home => self.now.saturating_sub(done) < self.s.settle_ms,
                // (Lifted again: its square empty.)
                _ => self.gaps.is_empty() && self.phys.code(last.to()) == EMPTY,
            };
            if waits && recognise::could_slide_on(&pos, last) {
                return Revision::Waiting;
            }
        }
        // Its last move a promotion whose piece is not chosen yet: as a promotion seen made, it
        // waits for the choice for the promotion delay (a press then searches again).
        if let Some(due) = self.promotion_unchosen(&candidate, n) {
            if still {
                self.mismatch.due = Some(due);
            }
            return Revision::Waiting;
        }
        let kept = common(&candidate.moves, &announced);
        let doubted_from = kept_rivalled_from(&found, &candidate, &start, kept);
        if other_end.is_some() {
            self.rival_plies = self.agreed.plies + candidate.moves.len() + RIVAL_OPEN_PLIES;
        }
        let unsure = unsure
            || doubted_from.is_some()
            || self.another_order(&start, &candidate, n)
            || self.unseen_route(&start, &candidate, kept)
            || self.another_piece(&start, &candidate, kept);
        self.take(&announced, candidate, unsure, doubted_from, held, out);
        Revision::Taken
    }

    /// The story's last move beyond the first `n` is no capture (whose piece may be set down
    /// on a square that stays full), no placement of it on a square it fills is among the
    /// observations the story accounts for, nor (after the board was not heard) does the board
    /// show every square it fills full (a move made then, on a square emptied and filled again
    /// meanwhile: the report shows the piece there).
    fn lands_unseen(&self, start: &Chess, story: &Story, n: usize) -> bool {
        let Some(&last) = story.moves.last().filter(|_| story.moves.len() > n) else {
            return false;
        };
        if last.is_capture() {
            return false;
        }
        let color = if story.moves.len() % 2 == 1 {
            start.turn()
        } else {
            !start.turn()
        };
        let (_, filled, _) = recognise::footprint(color, &last);
        !filled.is_empty()
            && !story.matched.iter().any(|&i| {
                let s = &self.log[i];
                s.what == Trace::Placed && filled.contains(s.square)
            })
            && (self.gaps.is_empty() || filled.into_iter().any(|sq| self.phys.code(sq) == EMPTY))
    }

    /// The piece chosen for a promotion of a story's moves: in this turn, or ahead by either
    /// player (a story's promotion may be the next player's).
    fn story_promotion(&self) -> Option<Role> {
        let ahead = self.promo_ahead.map(|(_, r)| r);
        self.turn.promo_choice.or(ahead)
    }

    /// When a story's last move beyond the first `n` is a promotion whose piece neither a
    /// press nor the board has told yet, and its delay is still running: when the delay ends.
    fn promotion_unchosen(&self, story: &Story, n: usize) -> Option<Millis> {
        let promotes = story.moves.last().is_some_and(|m| m.is_promotion());
        if !promotes
            || story.moves.len() <= n
            || self.story_promotion().is_some()
            || self.phys.ids()
        {
            return None;
        }
        let done = story.times.last().copied().unwrap_or(self.now);
        let due = done.saturating_add(self.s.promotion_ms);
        (self.now < due).then_some(due)
    }

    /// A story of `found` that ends elsewhere than `candidate` (at `end`) and owes readings
    /// which, once come, would make it cost no more than `candidate`, or costs at most
    /// [`NEAR_RIVAL`] more already (not a beginning of the candidate's moves, nor the
    /// candidate's moves and more).
    fn owed_rival(&self, found: &Found, candidate: &Story, start: &Chess, end: &Chess) -> bool {
        found.stories.iter().any(|s| {
            let owed = stories::cost::OWED.saturating_mul(s.owed.count() as u32);
            (!s.owed.is_empty() && s.cost.saturating_sub(owed) <= candidate.cost
                || s.cost <= candidate.cost + NEAR_RIVAL)
                && !candidate.moves.starts_with(&s.moves)
                && !s.moves.starts_with(&candidate.moves)
                && !same(&s.position(start), end)
        })
    }

    /// The board tells the moves of `story` beyond the first `from` as well in another order:
    /// two moves of one side that do not depend on each other, swapped (the board reported
    /// them together, after a gap or a lost reading).
    fn another_order(&self, start: &Chess, story: &Story, from: usize) -> bool {
        let moves = &story.moves;
        let end = story.position(start);
        (from..moves.len().saturating_sub(2)).any(|i| {
            let mut other = moves.clone();
            other.swap(i, i + 2);
            self.told_as_well(start, story, &end, &other)
        })
    }

    /// `other` moves from `start` are legal, end where `story`'s do (`end`), and explain what
    /// the board showed at no greater cost: the board does not tell them from the story's.
    fn told_as_well(&self, start: &Chess, story: &Story, end: &Chess, other: &[Move]) -> bool {
        let mut pos = start.clone();
        for m in other {
            if !pos.is_legal(*m) {
                return false;
            }
            pos.play_unchecked(*m);
        }
        same(&pos, end)
            && self
                .stories_from(start, other, 0, stories::SEARCH_BUDGET)
                .stories
                .iter()
                .any(|s| s.moves == other && s.cost <= story.cost)
    }

    /// The board showed something on `sq` while moves `i` to `j` of `story` were made (after
    /// the move before them).
    fn seen_meanwhile(&self, story: &Story, i: usize, j: usize, sq: Square) -> bool {
        let since = i.checked_sub(1).map_or(self.agreed.t, |k| story.times[k]);
        let until = story.times[j];
        self.log
            .iter()
            .any(|o| o.square == sq && since < o.t && o.t <= until)
    }

    /// A piece the moves of `story` beyond the first `from` move twice, by way of a square the
    /// board showed nothing of meanwhile (its placement and its lift both lost, or late until
    /// the square changed again), where another square would serve the same route, the moves
    /// between as they are (a rook c1-a1 and on to d1 three moves later, or by b1): the board
    /// cannot tell which, and the story's is a guess.
    fn unseen_route(&self, start: &Chess, story: &Story, from: usize) -> bool {
        let moves = &story.moves;
        let mut pos = start.clone();
        for m in &moves[..from] {
            pos.play_unchecked(*m);
        }
        for i in from..moves.len().saturating_sub(2) {
            let first = moves[i];
            let before = pos.clone();
            pos.play_unchecked(first);
            let via = first.to();
            if first.is_castle() || first.is_promotion() || first.is_capture() {
                continue;
            }
            // The piece's next move, its side's: no move between touches its square.
            let Some(j) = (i + 1..moves.len()).find(|&j| {
                moves[j].from() == Some(via) || moves[j].to() == via || moves[j].is_castle()
            }) else {
                continue;
            };
            let again = moves[j];
            if (j - i) % 2 == 1 || again.from() != Some(via) {
                continue;
            }
            if self.seen_meanwhile(story, i, j, via) {
                continue;
            }
            let mut end = pos.clone();
            for m in &moves[i + 1..=j] {
                end.play_unchecked(*m);
            }
            let between = &moves[i + 1..j];
            let by_another_square = before.legal_moves().into_iter().any(|other| {
                if other.from() != first.from()
                    || other.role() != first.role()
                    || other.to() == via
                    || other.is_capture()
                    || other.is_promotion()
                    || between
                        .iter()
                        .any(|m| m.to() == other.to() || m.from() == Some(other.to()))
                {
                    return false;
                }
                let mut p = before.clone();
                p.play_unchecked(other);
                for m in between {
                    if !p.is_legal(*m) {
                        return false;
                    }
                    p.play_unchecked(*m);
                }
                let on = p.legal_moves().into_iter().find(|m| {
                    m.from() == Some(other.to())
                        && m.to() == again.to()
                        && m.role() == again.role()
                        && m.promotion() == again.promotion()
                });
                on.is_some_and(|m| {
                    p.play_unchecked(m);
                    same(&p, &end)
                })
            });
            if by_another_square {
                return true;
            }
        }
        false
    }

    /// A piece the moves of `story` beyond the first `from` take to a square and back, a reply
    /// between, where the board showed nothing of the square it left and came back to (its
    /// lift and its return both lost): another piece that can go there and back, its square
    /// showing nothing either, explains the board as cheaply, and the story's is a guess.
    fn another_piece(&self, start: &Chess, story: &Story, from: usize) -> bool {
        let moves = &story.moves;
        let end = story.position(start);
        let plain = |m: &Move| !(m.is_castle() || m.is_promotion() || m.is_capture());
        let mut pos = start.clone();
        for m in &moves[..from] {
            pos.play_unchecked(*m);
        }
        for i in from..moves.len().saturating_sub(2) {
            let (first, reply, again) = (moves[i], moves[i + 1], moves[i + 2]);
            let before = pos.clone();
            pos.play_unchecked(first);
            let (Some(origin), via) = (first.from(), first.to()) else {
                continue;
            };
            if !plain(&first) || !plain(&again) || again.from() != Some(via) || again.to() != origin
            {
                continue;
            }
            let seen = |sq| self.seen_meanwhile(story, i, i + 2, sq);
            if seen(origin) {
                continue;
            }
            for other in before.legal_moves() {
                let Some(square) = other.from() else {
                    continue;
                };
                if square == origin || other.to() != via || !plain(&other) || seen(square) {
                    continue;
                }
                let mut p = before.clone();
                p.play_unchecked(other);
                if !p.is_legal(reply) {
                    continue;
                }
                p.play_unchecked(reply);
                let Some(back) = p
                    .legal_moves()
                    .into_iter()
                    .find(|m| m.from() == Some(via) && m.to() == square && plain(m))
                else {
                    continue;
                };
                let mut alt = moves.clone();
                alt[i] = other;
                alt[i + 2] = back;
                if self.told_as_well(start, story, &end, &alt) {
                    return true;
                }
            }
        }
        false
    }

    /// Takes `story`: withdraws what it does not bear out (a correction), records its moves
    /// beyond what stays, and reads what the board did beyond them as the next turn.
    fn take(
        &mut self,
        announced: &[Move],
        story: Story,
        unsure: bool,
        doubted_from: Option<usize>,
        held: Option<&Hold>,
        out: &mut Vec<Event>,
    ) {
        let agreed = self.agreed.plies;
        let stays = common(&story.moves, announced);
        // Back to the turn of the first thing withdrawn: a move, or a ruling.
        let mut back = stays;
        for r in &self.rulings {
            let withdrawn = r.plies > agreed + stays
                || r.placed
                    .is_some_and(|i| story.matched.binary_search(&i).is_ok());
            if withdrawn {
                back = back.min(r.plies - agreed);
            }
        }
        let correction =
            back < announced.len() || self.rulings.iter().any(|r| r.plies >= agreed + back);
        let first = if correction { back } else { announced.len() };
        if correction {
            self.withdraw(agreed + back, &story.moves[back..], out);
        }
        let held_move = held.and_then(|h| match h.held {
            Held::Move(m) => Some((m, h.since)),
            Held::Promotion(m) => Some((m, h.since)),
            _ => None,
        });
        // (The plies recorded: a move sealed as the game is adjourned records none.)
        let mut recorded = Vec::new();
        for (i, (&m, &t)) in story.moves.iter().zip(&story.times).enumerate().skip(first) {
            let seen_made = !correction
                && i == first
                && held_move
                    .is_some_and(|(hm, _)| hm == m || (hm.from() == m.from() && hm.to() == m.to()));
            // (Never before the move before it: the plies kept were dated by another story.)
            let t = match held_move {
                Some((_, since)) if seen_made => since,
                _ => t,
            }
            .max(self.game.plies.last().map_or(0, |p| p.t));
            // Dated when it was made, as far as the events' order allows (a correction's moves
            // come after it, now); charged to the clock when it was made.
            self.moving_at = Some(t);
            let plies = self.game.plies.len();
            if correction {
                self.record(m, true, out);
            } else {
                self.at(t.min(self.now), |e| e.record(m, !seen_made, out));
            }
            self.moving_at = None;
            if self.game.plies.len() > plies {
                recorded.push(self.game.plies.len() - 1);
            }
            if self.standing() {
                break;
            }
        }
        self.correcting = false;
        self.plain_run = 0;
        // The moves the record keeps from the first a rival as cheap has otherwise are marked,
        // seen made or not.
        if let Some(from) = doubted_from {
            for p in self
                .game
                .plies
                .iter_mut()
                .take(agreed + first)
                .skip(agreed + from)
            {
                p.uncertain = true;
            }
        }
        // (A move read unseen from a square that a marked ply brought its piece to is no surer
        // than that ply.)
        let unsure = unsure || recorded.iter().any(|&i| self.leaves_unsure(i));
        if unsure && !recorded.is_empty() {
            for &i in &recorded {
                if let Some(p) = self.game.plies.get_mut(i) {
                    p.uncertain = p.recovered;
                }
            }
            let text = self.s.phrases.words.order_uncertain.clone();
            self.say(out, text, Priority::Info);
        }
        if self.standing() {
            return;
        }
        self.turn = self.turn_after(&story);
        if self.sealing.is_some() {
            // (The sealer's touches stay untold, A1a.)
            self.turn.touch_unknown = true;
        }
        // The last change belongs to the moves, unless the board did something after them.
        if self.turn.seen.len() == self.turn.reported {
            self.last_change = None;
        }
        self.report_touches(out);
        self.evaluate(out);
    }

    /// Ply `i` was read unseen (recovered), and the ply that brought a piece to the square it
    /// leaves is marked uncertain.
    fn leaves_unsure(&self, i: usize) -> bool {
        let plies = &self.game.plies;
        let Some(p) = plies.get(i).filter(|p| p.recovered) else {
            return false;
        };
        let Some(from) = p.m.from() else {
            return false;
        };
        plies[..i]
            .iter()
            .rev()
            .find(|q| q.m.to() == from)
            .is_some_and(|q| q.uncertain)
    }

    /// Withdraws every ply from `plies` on and the rulings given since: back to the state at
    /// the start of that turn; `correction` said with the announcements of `moves`, which
    /// replace them.
    fn withdraw(&mut self, plies: usize, moves: &[Move], out: &mut Vec<Event>) {
        let withdrawn: Vec<String> = self.game.plies[plies.min(self.game.plies.len())..]
            .iter()
            .map(|p| recognise::san_text(p.san))
            .collect();
        let rulings: Vec<&'static str> = self
            .rulings
            .iter()
            .filter(|r| r.plies >= plies)
            .map(|r| r.kind)
            .collect();
        while self.game.plies.len() > plies {
            self.game.undo();
        }
        // A move being sealed is not told: a correction made while it is says none of its moves
        // (the sealer's is the first; it goes into the envelope).
        let sealing = self.sealing.is_some();
        let mut pos = self.game.pos.clone();
        let says: Vec<String> = moves
            .iter()
            .take_while(|_| !sealing)
            .map(|&m| {
                let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
                self.s.phrases.announce(&san, m)
            })
            .collect();
        if let Some(c) = self.checkpoints.iter().find(|c| c.plies == plies).cloned() {
            self.clock = c.clock;
            self.illegal_counts = c.illegal_counts;
            self.draw_offer = c.draw_offer;
            self.claim_with_move = c.claim_with_move;
            self.win_claim = c.win_claim;
            self.warnings = c.warnings;
        }
        self.checkpoints.retain(|c| c.plies <= plies);
        self.rulings.retain(|r| r.plies < plies);
        self.phase = Phase::Moving;
        self.alt = None;
        self.mismatch = Mismatch::default();
        let ply = ply_number(&self.game.pos);
        let say = self.s.phrases.correction(&says);
        if !sealing {
            self.last_said = LastSaid::Text(say.clone());
        }
        self.emit(
            out,
            EventKind::Correction {
                ply,
                withdrawn,
                rulings,
                say,
            },
        );
        self.correcting = true;
    }

    /// The next turn after `story`'s moves: what the board did that they do not account for.
    /// What it did after them is the next player's (his touches); what it did before they
    /// were done stays in what the board was seen doing, not as touches, and when it lifted a
    /// piece then, or a whole-board report shows a lift (in no order), touches cannot be told
    /// apart: touch-move is not judged this turn.
    fn turn_after(&self, story: &Story) -> Turn {
        let done = story.times.last().copied().unwrap_or(self.agreed.t);
        let before = story
            .times
            .len()
            .checked_sub(2)
            .map_or(self.agreed.t, |i| story.times[i]);
        let unmatched = (0..self.log.len())
            .filter(|i| story.matched.binary_search(i).is_err())
            .map(|i| self.log[i]);
        let (mut seen, rest): (Vec<Seen>, Vec<Seen>) = unmatched.partition(|s| s.t <= done);
        // (A lift the board showed only in a whole-board report, no move of the story's: the
        // next player's, made when nobody knows, perhaps before what he touched since.)
        let touch_unknown = seen
            .iter()
            .any(|s| s.what == Trace::Lifted && (s.t > before || s.late));
        let reported = seen.len();
        seen.extend(rest);
        let gap = self.turn.gap && seen.len() > reported;
        Turn {
            seen,
            reported,
            touch_unknown: touch_unknown || gap,
            gap,
            ..Turn::default()
        }
    }
}
