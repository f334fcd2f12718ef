//! Recognising moves on the board: which legal moves the board shows, and what an unfinished
//! or an illegal move looks like (the stories of moves not seen made are `stories`'). Pure:
//! positions and the board in, answers out.
//!
//! The board is compared with the game as whole positions: a legal move is made when the board
//! shows the position after it and every piece it captured was seen leaving the board. The
//! order of lifts and placements therefore does not matter, which is how people really move.

use shakmaty::san::SanPlus;
use shakmaty::{
    Bitboard, CastlingMode, Chess, Color, File, Move, MoveList, Piece, Position, Rank, Role, Square,
};

use super::physical::{piece_code, Physical};

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
    let mut text = String::with_capacity(5);
    m.to_uci(CastlingMode::Standard).append_to_string(&mut text);
    text
}

/// A move in SAN as the events and the record write it ("Nbxd7+"), written at once (not a
/// character at a time through the formatter: it is written for every move).
pub fn san_text(san: SanPlus) -> String {
    let mut text = String::with_capacity(8);
    san.append_to_string(&mut text);
    text
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
    let mut found = legal.leaving(pos, phys.occupied());
    found.retain(|&m| {
        if let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = m
        {
            let replaced = phys.piece(to).is_some_and(|p| p.color == turn);
            if !vacated.contains(to) && !replaced {
                return false;
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
            return filled.into_iter().all(|sq| {
                let code = phys.code(sq);
                code < 2 || pawn_on_last || after.board().piece_at(sq).map(piece_code) == Some(code)
            });
        }
        true
    });
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

    /// Written at once, SAN and UCI are what shakmaty's `Display` writes: every legal move of
    /// positions with castling, promotions (with capture and check), en passant, mate.
    #[test]
    fn san_and_uci_are_written_as_display_writes_them() {
        for fen in [
            "r3k2r/pPpp1ppp/8/3Pp3/8/8/P1PP1PPP/R3K2R w KQkq e6 0 1",
            "1r2k3/P4P2/8/8/8/8/6p1/R3K2R b KQ - 0 1",
            "6k1/5ppp/8/8/8/8/8/R3K1R1 w - - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/N4N2/PPPPPPPP/R1BQKB1R w KQkq - 0 1",
        ] {
            let p = pos(fen);
            for m in p.legal_moves() {
                let san = SanPlus::from_move(p.clone(), m);
                assert_eq!(san_text(san), san.to_string(), "{fen} {m:?}");
                assert_eq!(
                    uci(m),
                    m.to_uci(CastlingMode::Standard).to_string(),
                    "{fen} {m:?}"
                );
            }
        }
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
