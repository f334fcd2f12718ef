//! Recognising moves on the board: which legal moves the board shows, what an unfinished or
//! an illegal move looks like, and which short sequences of legal moves explain a board the
//! engine did not see change step by step. Pure: positions and the board in, answers out.
//!
//! The board is compared with the game as whole positions: a legal move is made when the board
//! shows the position after it and every piece it captured was seen leaving the board. The
//! order of lifts and placements therefore does not matter, which is how people really move.

use shakmaty::{
    Bitboard, CastlingMode, Chess, Color, File, Move, MoveList, Piece, Position, Rank, Role, Square,
};

use super::log::{Seen, Trace};
use super::physical::{piece_code, Physical};
use crate::engine::event::Millis;

/// The legal moves of a position, worked out once for the position; every reading of the board
/// then looks only at the moves from the squares it shows empty.
#[derive(Clone, Debug)]
pub struct Legal {
    pub moves: MoveList,
    /// The squares some move leaves (a castling: the king's square).
    origins: Bitboard,
}

/// The square a move leaves (castling: the king's).
fn origin(m: &Move) -> Square {
    match *m {
        Move::Castle { king, .. } => king,
        _ => m.from().unwrap_or(m.to()),
    }
}

impl Legal {
    pub fn of(pos: &Chess) -> Legal {
        let moves = pos.legal_moves();
        let mut origins = Bitboard::EMPTY;
        for m in &moves {
            origins.add(origin(m));
        }
        Legal { moves, origins }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Move> {
        self.moves.iter()
    }

    /// The moves that leave `sq`.
    pub fn from(&self, sq: Square) -> impl Iterator<Item = &Move> {
        let any = self.origins.contains(sq);
        self.moves.iter().filter(move |m| any && origin(m) == sq)
    }

    /// The moves that leave the board of `pos` with the occupancy `occ`.
    pub fn leaving(&self, pos: &Chess, occ: Bitboard) -> Vec<Move> {
        let before = pos.board().occupied();
        // Every move empties the square it starts from (and at most one more), and fills at
        // most two: most boards are no move's result at a glance.
        let emptied = before & !occ;
        if (emptied & self.origins).is_empty() || emptied.count() > 2 || (occ & !before).count() > 2
        {
            return Vec::new();
        }
        let turn = pos.turn();
        let mut found = Vec::new();
        for m in &self.moves {
            if emptied.contains(origin(m)) && occupancy_after(before, turn, m) == occ {
                found.push(*m);
            }
        }
        found
    }
}

/// Squares a legal move empties and fills, and the square of the piece it captures.
pub fn footprint(color: Color, m: &Move) -> (Bitboard, Bitboard, Option<Square>) {
    match *m {
        Move::Normal {
            from, to, capture, ..
        } => (
            Bitboard::from_square(from),
            Bitboard::from_square(to),
            capture.map(|_| to),
        ),
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            (
                Bitboard::from_square(from) | Bitboard::from_square(victim),
                Bitboard::from_square(to),
                Some(victim),
            )
        }
        Move::Castle { king, rook } => {
            let side = m
                .castling_side()
                .unwrap_or(shakmaty::CastlingSide::KingSide);
            let filled = Bitboard::from_square(side.king_to(color))
                | Bitboard::from_square(side.rook_to(color));
            (
                (Bitboard::from_square(king) | Bitboard::from_square(rook)) & !filled,
                filled & !Bitboard::from_square(king) & !Bitboard::from_square(rook),
                None,
            )
        }
        Move::Put { to, .. } => (Bitboard::EMPTY, Bitboard::from_square(to), None),
    }
}

pub fn occupancy_after(occ: Bitboard, color: Color, m: &Move) -> Bitboard {
    let (emptied, filled, _) = footprint(color, m);
    (occ & !emptied) | filled
}

/// Where the king of a castling move goes (the castling as the king's two-square move).
pub fn king_to(color: Color, m: &Move) -> Option<Square> {
    m.castling_side().map(|s| s.king_to(color))
}

/// UCI notation of a move, castling as the king's two-square move ("e1g1").
pub fn uci(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// A queen, rook or bishop that stopped on a square from which it could slide on along the same
/// line may still be moving: the move waits for the settle time.
pub fn could_slide_on(pos: &Chess, m: &Move) -> bool {
    let Move::Normal {
        role,
        from,
        to,
        capture: None,
        promotion: None,
    } = *m
    else {
        return false;
    };
    if !matches!(role, Role::Queen | Role::Rook | Role::Bishop) {
        return false;
    }
    let step = |a: u32, b: u32| (b as i32 - a as i32).signum();
    let df = step(u32::from(from.file()), u32::from(to.file()));
    let dr = step(u32::from(from.rank()), u32::from(to.rank()));
    let nf = u32::from(to.file()) as i32 + df;
    let nr = u32::from(to.rank()) as i32 + dr;
    if !(0..8).contains(&nf) || !(0..8).contains(&nr) {
        return false;
    }
    let next = Square::from_coords(File::new(nf as u32), Rank::new(nr as u32));
    !pos.board().occupied().contains(next)
}

/// Legal moves whose result the board shows, with every captured piece seen removed: its
/// square seen empty (`vacated`), or, on a board that identifies pieces, a piece of the mover's
/// colour standing there now (the captured piece swept off and replaced, a promotion included).
pub fn matching_moves(pos: &Chess, legal: &Legal, phys: &Physical, vacated: Bitboard) -> Vec<Move> {
    let turn = pos.turn();
    let mut found = Vec::new();
    for m in legal.leaving(pos, phys.occupied()) {
        if let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = m
        {
            let replaced = phys.piece(to).is_some_and(|p| p.color == turn);
            if !vacated.contains(to) && !replaced {
                continue;
            }
        }
        if phys.ids() {
            let mut after = pos.clone();
            after.play_unchecked(m);
            let (_, filled, _) = footprint(turn, &m);
            let pawn_on_last = m.is_promotion()
                && phys.code(m.to())
                    == piece_code(Piece {
                        color: turn,
                        role: Role::Pawn,
                    });
            let ok = filled.into_iter().all(|sq| {
                let code = phys.code(sq);
                code < 2 || pawn_on_last || after.board().piece_at(sq).map(piece_code) == Some(code)
            });
            if !ok {
                continue;
            }
        }
        found.push(m);
    }
    found
}

/// The board shows a piece moved from one square to another (possibly onto a square whose
/// piece was lifted), and that is not a legal move: the attempted move. `last` is the last
/// change of the board (a square, and whether it was a placement).
pub fn attempted_move(
    pos: &Chess,
    legal: &Legal,
    phys: &Physical,
    vacated: Bitboard,
    last: Option<(Square, bool)>,
) -> Option<(Square, Square)> {
    let (to, placed) = last?;
    if !placed {
        return None;
    }
    let pos_occ = pos.board().occupied();
    let occ = phys.occupied();
    let missing = pos_occ & !occ;
    let extra = occ & !pos_occ;
    // Only the player's own pieces make moves; an enemy piece moved is a displacement.
    let from = if extra == Bitboard::from_square(to) {
        match missing.count() {
            1 => (missing & pos.us()).first()?,
            2 => {
                // A piece of the player moved while an enemy piece is off the board.
                let ours = missing & pos.us();
                if ours.count() != 1 {
                    return None;
                }
                ours.first()?
            }
            _ => return None,
        }
    } else if extra.is_empty()
        && missing.count() == 1
        && vacated.contains(to)
        && pos.them().contains(to)
    {
        // Set down on the square of an enemy piece that was taken off: a capture attempt.
        (missing & pos.us()).first()?
    } else {
        return None;
    };
    // A legal move with something else off the board is not an illegal move: the board
    // must be put right (mismatch), and the move is then made.
    let legal = legal
        .iter()
        .any(|m| matches!(m, Move::Normal { .. }) && m.from() == Some(from) && m.to() == to);
    (from != to && !legal).then_some((from, to))
}

/// The piece stands where a legal move that is not finished yet puts it: the king on its
/// castling square with the rook still to come (Art. 4.6b), or a pawn on its en passant
/// square with the captured pawn still to be removed. Not an illegal move, not yet a move.
pub fn partial_move(pos: &Chess, legal: &Legal, from: Square, to: Square) -> bool {
    legal.iter().any(|m| match *m {
        Move::Castle { king, .. } => king == from && king_to(pos.turn(), m) == Some(to),
        Move::EnPassant { from: f, to: t } => f == from && t == to,
        _ => false,
    })
}

/// The board differs from the game only by pieces of the player to move in his hand
/// (with or without an enemy piece he can capture), or by a castling in progress.
pub fn in_progress(pos: &Chess, legal: &Legal, phys: &Physical) -> bool {
    let pos_occ = pos.board().occupied();
    let occ = phys.occupied();
    let missing = pos_occ & !occ;
    let extra = occ & !pos_occ;
    if phys.wrong_pieces(pos.board()).any() {
        return false;
    }
    if missing.is_empty() && extra.is_empty() {
        return true;
    }
    let castling_in_progress = |king_to_sq: Option<Square>| {
        legal.iter().any(|m| match *m {
            Move::Castle { king, rook } => {
                let side = king_to(pos.turn(), m);
                let in_hand = Bitboard::from_square(king) | Bitboard::from_square(rook);
                (missing & !in_hand).is_empty()
                    && missing.contains(king)
                    && king_to_sq.is_none_or(|k| side == Some(k))
            }
            _ => false,
        })
    };
    if extra.any() {
        return extra.count() == 1 && castling_in_progress(extra.first());
    }
    let ours = missing & pos.us();
    let theirs = missing & pos.them();
    if ours.count() > 2 || theirs.count() > 1 {
        return false;
    }
    if ours.count() == 2 && (theirs.any() || !castling_in_progress(None)) {
        return false;
    }
    if let Some(victim) = theirs.first() {
        return legal.iter().any(|m| {
            footprint(pos.turn(), m).2 == Some(victim)
                && (ours.is_empty() || m.from().is_some_and(|f| ours.contains(f)))
        });
    }
    true
}

/// What the board shows, seen from the position of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The position itself.
    Home,
    /// The result of these legal moves (more than one: promotions, whose piece may be unknown).
    Moves(Vec<Move>),
    /// A piece where a legal move not yet finished puts it (castling king, en passant pawn).
    Partial { from: Square, to: Square },
    /// A piece moved where no legal move takes it.
    Illegal { from: Square, to: Square },
    /// Pieces of the player to move in his hand.
    InProgress,
    /// Nothing the player to move could be doing.
    Unexplained,
}

impl Verdict {
    /// The board may be the player to move at work.
    pub fn explained(&self) -> bool {
        *self != Verdict::Unexplained
    }
}

/// What the board shows in `pos`: `vacated` are the squares of the position seen empty during
/// the turn, `last` the last change of the board.
pub fn classify(
    pos: &Chess,
    legal: &Legal,
    phys: &Physical,
    vacated: Bitboard,
    last: Option<(Square, bool)>,
) -> Verdict {
    if phys.shows(pos.board()) {
        return Verdict::Home;
    }
    let moves = matching_moves(pos, legal, phys, vacated);
    if !moves.is_empty() {
        return Verdict::Moves(moves);
    }
    if let Some((from, to)) = attempted_move(pos, legal, phys, vacated, last) {
        return if partial_move(pos, legal, from, to) {
            Verdict::Partial { from, to }
        } else {
            Verdict::Illegal { from, to }
        };
    }
    if in_progress(pos, legal, phys) {
        Verdict::InProgress
    } else {
        Verdict::Unexplained
    }
}

/// The squares whose occupancy a move changes in `pos`.
fn flipped(pos: &Chess, m: &Move) -> Bitboard {
    let occ = pos.board().occupied();
    occ ^ occupancy_after(occ, pos.turn(), m)
}

/// How hard the search for an explanation looks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Search {
    /// Every square a move empties or fills was seen changing (`changed`), and after the
    /// moves the board shows the position or the next player's move under way. Cheap: used at
    /// every change the board makes that nothing else explains.
    Seen(Bitboard),
    /// The board shows the position after the moves, however it got there (readings lost,
    /// moves made while the board was away). Used when the board has stood unexplained.
    Stood,
    /// The board came back from a lost link: it shows the position after the moves, or the
    /// next player's move under way. The moves change squares seen changing (`changed`), and
    /// at most [`GAP_UNSEEN`] others: squares that changed and changed back while nobody saw
    /// them (a pawn's first square of two moves, a piece captured where it had just gone).
    Gap(Bitboard),
}

/// Squares the moves made unseen across a lost link may change that the board was never seen
/// changing (see [`Search::Gap`]).
pub const GAP_UNSEEN: usize = 2;

/// Nodes a search visits at most (a few milliseconds); past that it gives up.
pub const SEARCH_BUDGET: usize = 20_000;

/// The sequences of exactly `depth` legal moves from `pos` after which the board is explained
/// (see [`Search`]); `None` when the search ran out of `budget` before it could tell.
/// A board that cannot see pieces cannot tell a promotion's piece: `promotion` is taken.
pub fn explanations(
    pos: &Chess,
    phys: &Physical,
    search: Search,
    promotion: Role,
    depth: usize,
    budget: &mut usize,
) -> Option<Vec<Vec<Move>>> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    let ctx = Ctx {
        phys,
        search,
        promotion,
    };
    explain(
        pos,
        &ctx,
        depth,
        Bitboard::EMPTY,
        &mut path,
        &mut found,
        budget,
    )
    .then_some(found)
}

struct Ctx<'a> {
    phys: &'a Physical,
    search: Search,
    promotion: Role,
}

/// Depth-first search of sequences of exactly `left` more moves; false when out of budget.
fn explain(
    pos: &Chess,
    ctx: &Ctx,
    left: usize,
    unseen: Bitboard,
    path: &mut Vec<Move>,
    found: &mut Vec<Vec<Move>>,
    budget: &mut usize,
) -> bool {
    let phys = ctx.phys;
    let target = phys.occupied();
    for m in pos.legal_moves() {
        if m.promotion().is_some_and(|r| r != ctx.promotion) && !phys.ids() {
            continue;
        }
        let flips = flipped(pos, &m);
        let mut unseen = unseen;
        match ctx.search {
            Search::Seen(changed) if !(flips & !changed).is_empty() => continue,
            Search::Gap(changed) => {
                unseen |= flips & !changed;
                if unseen.count() > GAP_UNSEEN {
                    continue;
                }
            }
            _ => {}
        }
        // (Moves ruled out by the squares alone cost next to nothing.)
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let mut next = pos.clone();
        next.play_unchecked(m);
        let diff = next.board().occupied() ^ target;
        // A move changes at most four squares (castling): what is left must fit in the moves
        // left (and, read at once, the next player's move under way).
        let slack = if ctx.search == Search::Stood { 0 } else { 4 };
        if diff.count() > 4 * (left - 1) + slack {
            continue;
        }
        path.push(m);
        if left == 1 {
            let explained = match ctx.search {
                Search::Seen(_) | Search::Gap(_) => {
                    phys.shows(next.board()) || in_progress(&next, &Legal::of(&next), phys)
                }
                Search::Stood => phys.shows(next.board()),
            };
            if explained {
                found.push(path.clone());
            }
        } else if !explain(&next, ctx, left - 1, unseen, path, found, budget) {
            return false;
        }
        path.pop();
    }
    true
}

/// When each move of `seq` (from `start`) was made, as the board showed it, and whether the
/// board can have shown them in that order, with what it shows beyond them (`board`, the
/// occupancy now: the next player's move under way) after them. Each change a move makes is matched with the
/// square's next change of that kind in `seen`. A move is complete at its last change: known
/// for a change seen alone; for one seen together with others (a whole-board report, perhaps
/// after a lost reading), only known to be by then. The moves are dated as early as that
/// allows, in order. `None` when a move made a change the board never showed, unless
/// `lenient` (such a change then tells nothing of the time, and the moves are not in order).
pub fn ply_times(
    start: &Chess,
    seq: &[Move],
    seen: &[Seen],
    board: Bitboard,
    lenient: bool,
) -> Option<Timing> {
    let mut pos = start.clone();
    let mut cursor: Millis = 0;
    let mut in_order = true;
    // Per square, how far its changes have been matched.
    let mut used = [0usize; 64];
    let mut matched = Vec::new();
    let mut untraced = 0;
    let mut complete = true;
    let mut times = Vec::with_capacity(seq.len());
    for m in seq {
        let flips = flipped(&pos, m);
        pos.play_unchecked(*m);
        let after = pos.board().occupied();
        // The move was complete no earlier than `lo` and no later than `hi`.
        let (mut lo, mut hi) = (0, 0);
        for sq in flips {
            let want = if after.contains(sq) {
                Trace::Placed
            } else {
                Trace::Lifted
            };
            let i = sq as usize;
            match seen[used[i]..]
                .iter()
                .position(|s| s.square == sq && s.what == want)
            {
                Some(k) => {
                    let s = seen[used[i] + k];
                    matched.push(used[i] + k);
                    used[i] += k + 1;
                    hi = hi.max(s.t);
                    if !s.late {
                        lo = lo.max(s.t);
                    }
                }
                None if lenient => {
                    hi = Millis::MAX;
                    complete = false;
                }
                None => return None,
            }
        }
        // A captured piece taken off and the capturing piece set down in its place: the
        // square's lift and placement, when the board showed them, are the capture's.
        if let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = *m
        {
            let i = to as usize;
            let lift = seen[used[i]..]
                .iter()
                .position(|s| s.square == to && s.what == Trace::Lifted)
                .map(|k| used[i] + k);
            let place = lift.and_then(|l| {
                seen[l + 1..]
                    .iter()
                    .position(|s| s.square == to && s.what == Trace::Placed)
                    .map(|k| l + 1 + k)
            });
            if let (Some(l), Some(p)) = (lift, place) {
                matched.extend([l, p]);
                used[i] = p + 1;
                hi = hi.max(seen[p].t);
                if !seen[p].late {
                    lo = lo.max(seen[p].t);
                }
            } else if !seen
                .iter()
                .any(|s| s.square == to && s.what == Trace::Glitch && s.t >= cursor)
            {
                // Nothing on the board says the captured piece left.
                untraced += 1;
            }
        }
        let t = cursor.max(lo);
        in_order &= t <= hi.max(lo);
        cursor = t;
        times.push(t);
    }
    // What the board shows beyond the moves (the next player's move under way) came after them.
    for sq in pos.board().occupied() ^ board {
        let last = seen
            .iter()
            .rev()
            .find(|s| s.square == sq && s.what != Trace::Glitch);
        if last.is_some_and(|s| !s.late && s.t < cursor) {
            in_order = false;
        }
    }
    matched.sort_unstable();
    Some(Timing {
        times,
        in_order: in_order && complete,
        matched,
        untraced,
        lost: lost_readings(start, seq, seen),
    })
}

/// What a move must have shown on the board: a lift or a placement on each square whose
/// occupancy it changes, and for a capture the captured piece's lift and the capturing
/// piece's placement on its square (or one flicker there, when both were quicker than the
/// debounce time).
struct Shows {
    flips: Vec<(Square, Trace)>,
    capture: Option<Square>,
}

impl Shows {
    fn of(pos: &Chess, m: &Move) -> Shows {
        let after = occupancy_after(pos.board().occupied(), pos.turn(), m);
        let flips = flipped(pos, m)
            .into_iter()
            .map(|sq| {
                let what = if after.contains(sq) {
                    Trace::Placed
                } else {
                    Trace::Lifted
                };
                (sq, what)
            })
            .collect();
        let capture = match *m {
            Move::Normal {
                capture: Some(_),
                to,
                ..
            } => Some(to),
            _ => None,
        };
        Shows { flips, capture }
    }
}

/// Nodes [`lost_readings`] visits at most.
const ALIGN_BUDGET: usize = 4_000;

/// The fewest readings the board must have lost to have shown the moves of `seq` (from
/// `start`) one after the other: every change a move makes seen (or a flicker there: the
/// change seen, then lost again for a moment) no earlier than the last change of the move
/// before it (a whole-board report counts for any move up to its time); for a capture, the
/// captured piece's lift before the capturing piece's placement on its square, and that
/// placement after the capturing piece was lifted. A move's change the board never showed in
/// that order is a lost reading; a capture whose square flickered counts as shown. A flicker
/// on an occupied square that no capture of the moves accounts for and no move lifts from or
/// places on (a captured piece swept off quicker than the debounce time) counts as one more:
/// the moves leave it unexplained.
pub fn lost_readings(start: &Chess, seq: &[Move], seen: &[Seen]) -> usize {
    let mut pos = start.clone();
    let mut plies = Vec::with_capacity(seq.len());
    for m in seq {
        plies.push(Shows::of(&pos, m));
        pos.play_unchecked(*m);
    }
    let mut a = Align {
        seen,
        plies: &plies,
        occupied: start.board().occupied() | pos.board().occupied(),
        moved: plies
            .iter()
            .flat_map(|p| p.flips.iter().map(|&(sq, _)| sq))
            .collect(),
        used: vec![false; seen.len()],
        best: usize::MAX,
        budget: ALIGN_BUDGET,
    };
    a.ply(0, 0, 0);
    a.best
}

struct Align<'a> {
    seen: &'a [Seen],
    plies: &'a [Shows],
    /// Squares occupied before or after the moves.
    occupied: Bitboard,
    /// Squares a move lifts from or places on (a flicker there is contact bounce).
    moved: Bitboard,
    used: Vec<bool>,
    best: usize,
    budget: usize,
}

impl Align<'_> {
    /// The first unused observation of `what` on `sq` at or after `floor`, after index `after`.
    fn first(&self, sq: Square, what: Trace, floor: Millis, after: usize) -> Option<usize> {
        (after..self.seen.len()).find(|&i| {
            let s = &self.seen[i];
            !self.used[i] && s.square == sq && s.what == what && s.t >= floor
        })
    }

    /// Ply `k` onwards, its changes no earlier than `floor`, `lost` readings so far.
    fn ply(&mut self, k: usize, floor: Millis, lost: usize) {
        if lost >= self.best {
            return;
        }
        if k == self.plies.len() {
            let flickers = self
                .seen
                .iter()
                .zip(&self.used)
                .filter(|(s, used)| {
                    !**used
                        && s.what == Trace::Glitch
                        && self.occupied.contains(s.square)
                        && !self.moved.contains(s.square)
                })
                .count();
            self.best = self.best.min(lost + flickers);
            return;
        }
        self.flip(k, 0, floor, floor, lost);
    }

    /// Change `j` of ply `k` onwards; `done` is when the ply's changes seen so far were made.
    fn flip(&mut self, k: usize, j: usize, floor: Millis, done: Millis, lost: usize) {
        if self.budget == 0 || lost >= self.best {
            return;
        }
        self.budget -= 1;
        let shows = &self.plies[k];
        let Some(&(sq, what)) = shows.flips.get(j) else {
            self.capture(k, floor, done, lost);
            return;
        };
        // The change itself, or a flicker there: the change seen, the sensor losing it again
        // for a moment (contact bounce).
        let shown = [
            self.first(sq, what, floor, 0),
            self.first(sq, Trace::Glitch, floor, 0),
        ];
        for i in shown.into_iter().flatten() {
            self.used[i] = true;
            let s = self.seen[i];
            let done = if s.late { done } else { done.max(s.t) };
            self.flip(k, j + 1, floor, done, lost);
            self.used[i] = false;
        }
        self.flip(k, j + 1, floor, done, lost + 1);
    }

    /// The captured piece's lift and the capturing piece's placement of ply `k`, then the
    /// next ply.
    fn capture(&mut self, k: usize, floor: Millis, done: Millis, lost: usize) {
        let Some(sq) = self.plies[k].capture else {
            self.ply(k + 1, done, lost);
            return;
        };
        // The captured piece may leave before the capturing one is lifted; the capturing
        // piece lands after it was lifted (`done`).
        let lift = self.first(sq, Trace::Lifted, floor, 0);
        let mut options: Vec<(Option<usize>, Option<usize>)> = Vec::with_capacity(4);
        if let Some(l) = lift {
            options.push((Some(l), self.first(sq, Trace::Placed, done, l + 1)));
            options.push((Some(l), None));
        }
        options.push((None, self.first(sq, Trace::Placed, done, 0)));
        options.push((None, None));
        for (l, p) in options {
            let mut shown: Vec<usize> = l.into_iter().chain(p).collect();
            let flicker = match shown.is_empty() {
                true => self.first(sq, Trace::Glitch, done, 0),
                false => None,
            };
            let lost = match flicker {
                Some(_) => lost,
                None => lost + 2 - shown.len(),
            };
            shown.extend(flicker);
            let mut done = done;
            for &i in &shown {
                self.used[i] = true;
                if !self.seen[i].late {
                    done = done.max(self.seen[i].t);
                }
            }
            self.ply(k + 1, done, lost);
            for &i in &shown {
                self.used[i] = false;
            }
        }
    }
}

/// When the moves of a sequence were made, as the board showed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Each move's time.
    pub times: Vec<Millis>,
    /// The board showed every change of the moves, and can have shown them in this order.
    pub in_order: bool,
    /// The observations the moves account for (indices into `seen`, ascending).
    pub matched: Vec<usize>,
    /// Captures of which the board showed nothing: neither the captured piece's square seen
    /// empty nor a glitch there.
    pub untraced: usize,
    /// The fewest readings the board must have lost to have shown the moves in their order
    /// ([`lost_readings`]).
    pub lost: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::decoder::debounce::Change;
    use shakmaty::fen::Fen;
    use shakmaty::san::San;
    use shakmaty::Board;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// UCI as the events have always written it: castling as the king's two-square move,
    /// promotions with the piece's small letter, en passant as the pawn's move.
    #[test]
    fn uci_is_written_as_the_kings_move_for_castling() {
        let said = |fen: &str, san: &str| {
            let p = pos(fen);
            uci(san.parse::<San>().unwrap().to_move(&p).unwrap())
        };
        let castles = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(said(castles, "O-O"), "e1g1");
        assert_eq!(said(castles, "O-O-O"), "e1c1");
        let black = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1";
        assert_eq!(said(black, "O-O"), "e8g8");
        assert_eq!(said(black, "O-O-O"), "e8c8");
        assert_eq!(said("8/4P3/8/8/8/8/k7/7K w - - 0 1", "e8=Q"), "e7e8q");
        assert_eq!(said("7k/7p/8/8/8/8/1pK5/R7 b - - 0 1", "bxa1=N"), "b2a1n");
        let ep = "rnbqkbnr/ppp1p1pp/5p2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 1";
        assert_eq!(said(ep, "exd6"), "e5d6");
        assert_eq!(
            said(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "Nf3"
            ),
            "g1f3"
        );
    }

    fn after(p: &Chess, sans: &[&str]) -> (Chess, Vec<Move>) {
        let mut p = p.clone();
        let mut moves = Vec::new();
        for s in sans {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
            moves.push(m);
        }
        (p, moves)
    }

    fn board_of(b: &Board) -> Physical {
        let mut phys = Physical::default();
        phys.assume(&phys.states_of(b));
        phys
    }

    fn lift(phys: &mut Physical, sq: Square) {
        phys.apply(&Change {
            t: 0,
            square: sq,
            state: crate::engine::input::EMPTY,
            whole: false,
        });
    }

    #[test]
    fn the_moves_from_a_square_are_the_legal_moves_from_it() {
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "4k3/1P6/8/3pP3/8/8/6p1/4K3 w - d6 0 2",
        ] {
            let p = pos(fen);
            let legal = Legal::of(&p);
            assert_eq!(legal.moves.len(), p.legal_moves().len());
            for sq in Square::ALL {
                let mut ours: Vec<Move> = legal.from(sq).copied().collect();
                let mut all: Vec<Move> = p
                    .legal_moves()
                    .into_iter()
                    .filter(|m| origin(m) == sq)
                    .collect();
                ours.sort_by_key(|m| format!("{m:?}"));
                all.sort_by_key(|m| format!("{m:?}"));
                assert_eq!(ours, all, "{fen} {sq}");
            }
        }
    }

    #[test]
    fn two_moves_seen_on_a_board_are_found_and_nothing_shorter() {
        let start = Chess::default();
        let (end, moves) = after(&start, &["e4", "e5"]);
        let phys = board_of(end.board());
        let changed: Bitboard = [Square::E2, Square::E4, Square::E7, Square::E5]
            .into_iter()
            .collect();
        let at = |search, depth| {
            explanations(
                &start,
                &phys,
                search,
                Role::Queen,
                depth,
                &mut SEARCH_BUDGET.clone(),
            )
            .unwrap()
        };
        assert!(at(Search::Seen(changed), 1).is_empty());
        assert_eq!(at(Search::Seen(changed), 2), vec![moves.clone()]);
        assert_eq!(at(Search::Stood, 2), vec![moves]);
        // Nothing seen changing: nothing explains it.
        assert!(at(Search::Seen(Bitboard::EMPTY), 2).is_empty());
    }

    #[test]
    fn a_capture_whose_victim_was_never_seen_leaving_explains_the_next_players_lift() {
        // 1.e4 d5: white takes on d5 with the pawn (the victim swept off unseen), then black
        // lifts his queen: in the position, white holds a pawn and black's queen is up.
        let (p, _) = after(&Chess::default(), &["e4", "d5"]);
        let mut phys = board_of(p.board());
        lift(&mut phys, Square::E4);
        lift(&mut phys, Square::D8);
        assert_eq!(
            classify(
                &p,
                &Legal::of(&p),
                &phys,
                Bitboard::EMPTY,
                Some((Square::D8, false))
            ),
            Verdict::Unexplained
        );
        let changed: Bitboard = [Square::E4, Square::D8].into_iter().collect();
        let found = explanations(
            &p,
            &phys,
            Search::Seen(changed),
            Role::Queen,
            1,
            &mut SEARCH_BUDGET.clone(),
        )
        .unwrap();
        let (_, exd5) = after(&p, &["exd5"]);
        assert_eq!(found, vec![exd5]);
    }

    #[test]
    fn the_order_of_moves_follows_the_board() {
        let start = Chess::default();
        let (_, moves) = after(&start, &["Nf3", "Nf6", "Nc3", "Nc6"]);
        let t = |t, sq, what| Seen {
            t,
            square: sq,
            what,
            late: false,
        };
        let seen = [
            t(100, Square::G1, Trace::Lifted),
            t(200, Square::F3, Trace::Placed),
            t(300, Square::G8, Trace::Lifted),
            t(400, Square::F6, Trace::Placed),
            t(500, Square::B1, Trace::Lifted),
            t(600, Square::C3, Trace::Placed),
            t(700, Square::B8, Trace::Lifted),
            t(800, Square::C6, Trace::Placed),
        ];
        let (end, _) = after(&start, &["Nf3", "Nf6", "Nc3", "Nc6"]);
        let board = end.board().occupied();
        let timing = |seq: &[Move], seen: &[Seen], lenient| {
            ply_times(&start, seq, seen, board, lenient).map(|t| (t.times, t.in_order))
        };
        assert_eq!(
            timing(&moves, &seen, false),
            Some((vec![200, 400, 600, 800], true))
        );
        // Two moves, and the next two under way: in order only if what is under way came
        // after them.
        let two = ply_times(&start, &moves[..2], &seen, board, false).unwrap();
        assert_eq!(two.matched, vec![0, 1, 2, 3]);
        assert!(two.in_order);
        let (_, nc3) = after(&start, &["Nc3"]);
        let late = ply_times(&start, &nc3, &seen, board, false).unwrap();
        assert!(!late.in_order, "g1 and f3 changed before Nc3 was made");
        let (_, swapped) = after(&start, &["Nc3", "Nf6", "Nf3", "Nc6"]);
        assert_eq!(
            timing(&swapped, &seen, false),
            Some((vec![600, 600, 600, 800], false))
        );
        let (_, unseen) = after(&start, &["Nh3", "Nf6", "Nc3", "Nc6"]);
        assert_eq!(timing(&unseen, &seen, false), None);
        // Knight on h3 instead of f3: f3 is left over, changed before the moves were done.
        assert_eq!(
            timing(&unseen, &seen, true),
            Some((vec![100, 400, 600, 800], false))
        );
        // Nf3's changes seen only in a whole-board report at 900 (its readings lost): it can
        // have come first.
        let mut late = seen;
        for s in &mut late[..2] {
            s.t = 900;
            s.late = true;
        }
        late.sort_by_key(|s| s.t);
        assert_eq!(
            timing(&moves, &late, false),
            Some((vec![0, 400, 600, 800], true))
        );
    }

    #[test]
    fn the_readings_a_story_lost_are_counted() {
        let seen_at = |t, sq, what| Seen {
            t,
            square: sq,
            what,
            late: false,
        };
        use Square::*;
        use Trace::*;
        let start = pos("rn1qkbnr/ppp2ppp/3pb3/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 4");
        let (_, moves) = after(&start, &["Nd5", "Bxd5"]);
        let lost = |seen: &[Seen]| lost_readings(&start, &moves, seen);
        // Every change seen in order: nothing lost.
        let whole = [
            seen_at(100, C3, Lifted),
            seen_at(200, D5, Placed),
            seen_at(300, E6, Lifted),
            seen_at(400, D5, Lifted),
            seen_at(500, D5, Placed),
        ];
        assert_eq!(lost(&whole), 0);
        // The captured piece's lift not seen: one.
        assert_eq!(lost(&[whole[0], whole[1], whole[2], whole[4]]), 1);
        // Nothing of the capture seen: two.
        assert_eq!(lost(&whole[..3]), 2);
        // Both readings of the capture quicker than the debounce time: a flicker, nothing lost.
        let swept = [whole[0], whole[1], whole[2], seen_at(450, D5, Glitch)];
        assert_eq!(lost(&swept), 0);
        // The knight's arrival seen as a flicker (the sensor lost it at once), the captured
        // piece's lift unseen (the square read empty already): one.
        let flicker = [
            seen_at(100, C3, Lifted),
            seen_at(200, D5, Glitch),
            seen_at(300, E6, Lifted),
            seen_at(500, D5, Placed),
        ];
        assert_eq!(lost(&flicker), 1);
        // The captured piece may leave before the capturing one is lifted, but the capturing
        // piece lands after it was lifted: a placement on d5 before the bishop's lift is not
        // the capture's (one lost), one after it is.
        let early = [
            seen_at(100, C3, Lifted),
            seen_at(150, D5, Placed),
            seen_at(200, D5, Lifted),
            seen_at(250, D5, Placed),
            seen_at(300, E6, Lifted),
        ];
        assert_eq!(lost(&early), 1, "d5 was set down before e6 was lifted");
        let mut landed = early;
        landed[3].t = 350;
        landed.sort_by_key(|s| s.t);
        assert_eq!(lost(&landed), 0);
        // Contact bounce on a square a move leaves is no capture; a flicker on another occupied
        // square may be one the moves leave out: one.
        let bounce = [
            seen_at(90, C3, Glitch),
            whole[0],
            whole[1],
            whole[2],
            whole[3],
            whole[4],
        ];
        assert_eq!(lost(&bounce), 0);
        let mut elsewhere = whole.to_vec();
        elsewhere.push(seen_at(600, A2, Glitch));
        assert_eq!(lost(&elsewhere), 1);
        // Changes in the wrong order: Bxd5 cannot come before Nd5's arrival.
        let swapped = [
            seen_at(100, E6, Lifted),
            seen_at(200, D5, Placed),
            seen_at(300, C3, Lifted),
        ];
        assert!(lost(&swapped) >= 2);
    }

    #[test]
    fn a_capture_promotion_shown_at_once_on_a_board_that_names_pieces_is_a_move() {
        let p = pos("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
        let mut phys = board_of(p.board());
        assert!(!phys.ids());
        phys.assume(&{
            let mut s = [crate::engine::input::EMPTY; 64];
            for (sq, pc) in p.board().iter() {
                s[sq as usize] = piece_code(pc);
            }
            s
        });
        assert!(phys.ids());
        lift(&mut phys, Square::B7);
        phys.apply(&Change {
            t: 0,
            square: Square::A8,
            state: piece_code(Piece {
                color: Color::White,
                role: Role::Queen,
            }),
            whole: false,
        });
        let moves = matching_moves(&p, &Legal::of(&p), &phys, Bitboard::EMPTY);
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].promotion(), Some(Role::Queen));
        assert_eq!(moves[0].to(), Square::A8);
    }
}
