//! Dead positions: "the game is drawn when a position has arisen in which neither player can
//! checkmate the opponent's king with any series of legal moves" (Laws of 2005, Art. 5.2b and
//! 9.6; Laws of 2023, Art. 5.2.2). Pure: a position in, a verdict out.
//!
//! # Scope
//!
//! [`is_dead`] is sound: it never calls a position dead from which some series of legal moves
//! leads to a checkmate. It is not complete: some dead positions are not recognised, and the
//! game then goes on as before (a claim or the 75-move rule can still end it). Two rules:
//!
//! 1. Insufficient material, as `shakmaty` decides it ([`Position::is_insufficient_material`]):
//!    king against king, king and knight against a lone king, and kings with bishops that all
//!    stand on squares of one colour (no pawns, no knights).
//! 2. A locked position ([`is_locked`]): kings, pawns that can never move and, at most, bishops
//!    that all stand on squares of one colour, when neither king can ever reach a pawn it could
//!    take, no bishop can ever take a pawn or be taken by one, and a king checked by a bishop
//!    always has a flight square. The usual case is a pawn wall across the board with a king on
//!    each side of it.
//!
//! Knights, rooks and queens are never part of a locked position: they can give check on
//! squares of both colours and jump over or break through a wall, and no simple argument shows
//! they cannot mate.
//!
//! # Method
//!
//! Let `S` be the pawns on the board, `A(c)` the squares the pawns of colour `c` attack, and
//! `σ` the square colour of the bishops. The position is locked when all of this holds:
//!
//! - (L1) there are only kings, pawns and bishops, and all bishops stand on squares of colour
//!   `σ`;
//! - (L2) no en passant capture is legal;
//! - (L3) every pawn has a pawn (of either colour) on the square in front of it;
//! - (L4) no pawn attacks a pawn of the other colour;
//! - (L5) for each colour `c`, the king's region `R(c)` (the squares the king reaches by king
//!   steps, starting from its square, through squares that hold no pawn of its own and are not
//!   in `A(!c)`) starts outside `A(!c)` (the king is not in check by a pawn) and holds no enemy
//!   pawn (the flood enters an enemy pawn's square when no enemy pawn protects it, so this says
//!   the king can never come next to a pawn it could take);
//! - (L6) for each bishop, its region `B` (the squares it reaches by diagonal steps, starting
//!   from its square, through squares that hold no pawn) has no enemy pawn diagonally next to
//!   any of its squares;
//! - (L7) for each colour `c`: every square of colour `σ` in `R(c)` that lies in the region of
//!   an enemy bishop has two orthogonal neighbours in `R(c)`, or one that no square of the enemy
//!   king's region `R(!c)` is next to (the flight squares of a king checked by a bishop).
//!
//! The regions are floods over a fixed set of squares: they ignore the kings and bishops, which
//! can only make them larger than what the pieces can really reach, never smaller.
//!
//! # Why a locked position is dead
//!
//! Claim: in every position reached from a locked position `P` by legal moves, (a) the pawns
//! are exactly `S`; (b) each king stands in its region `R(c)` of `P`; (c) each bishop still on
//! the board stands in its region `B` of `P`. By induction over one legal move:
//!
//! - A pawn push (single or double, with or without promotion) needs an empty square in front;
//!   by (L3) and (a) a pawn of `S` stands there.
//! - A pawn capture takes an enemy piece diagonally in front of the pawn. Not a pawn, by (L4)
//!   and (a); never a king; not a bishop, which stands in its region (c), and a pawn diagonally
//!   next to a square of that region is excluded by (L6). En passant needs a double push just
//!   before: none is ever made, and (L2) excludes one made before `P`.
//! - A king moves to a square `t` next to its square, which is in `R(c)`. `t` is not attacked by
//!   an enemy pawn (a king never moves into check) and holds no piece of its own colour. Were an
//!   enemy pawn on `t`, the flood would have entered `t`, contrary to (L5). So `t` holds no pawn
//!   and is in `R(c)`.
//! - A bishop slides over empty squares to `t`. Every square it passes holds no pawn and is
//!   diagonally connected to its square, so it is in `B`. Were an enemy pawn on `t`, that pawn
//!   would stand diagonally next to a square of `B`, contrary to (L6); it cannot take its own
//!   pawns. So `t` holds no pawn and is in `B`. Taking an enemy bishop only removes a bishop;
//!   no piece is ever added.
//! - Castling needs a rook; there is none.
//!
//! No position reached is a checkmate. A king never gives check. A pawn gives check only to a
//! king in `A(!c)`, and `R(c)` holds no square of `A(!c)` (L5, (b)). So a check comes from a
//! bishop, to a king on a square `L` of colour `σ`; the squares between the bishop and `L` are
//! empty, so `L` is in that bishop's region. An orthogonal neighbour `D` of `L` in `R(c)` is of
//! the other colour, so no bishop stands on it or attacks it; no pawn stands on it (`R(c)`
//! holds no pawn of the king's colour by construction and no enemy pawn by (L5)); no enemy pawn
//! attacks it (`R(c)` is outside `A(!c)`). Only the enemy king can cover `D`. It always stands in
//! `R(!c)` (b), and it never stands next to `L`; every square next to two different orthogonal
//! neighbours of `L` is `L` or next to `L`, so it covers at most one of them. By (L7) `L` has
//! two such neighbours, or one the enemy king can never come next to: the king can step to one
//! of them, and the position is not a checkmate.
//!
//! The claim also shows that every position reached from a locked position is locked again,
//! with the same regions (a region is the same flood from any of its squares): once dead, a
//! game stays dead, as it must.

use shakmaty::attacks;
use shakmaty::{Bitboard, ByColor, Chess, Color, EnPassantMode, Position, Square};

/// Whether no series of legal moves from `pos` can end in a checkmate (a dead position): by
/// insufficient material or by a locked pawn structure. Sound: never true for a position from
/// which a checkmate can be reached (see the module documentation for the proof).
pub fn is_dead(pos: &Chess) -> bool {
    pos.is_insufficient_material() || is_locked(pos)
}

/// Whether `pos` is a locked position (rule 2 of the module documentation): kings, pawns that
/// can never move and bishops of one square colour, where no capture and no checkmate can ever
/// happen.
pub fn is_locked(pos: &Chess) -> bool {
    let board = pos.board();
    // (L1) Kings, pawns and bishops of one square colour only.
    if (board.queens() | board.rooks() | board.knights()).any() {
        return false;
    }
    let bishops = board.bishops();
    if bishops.intersects(Bitboard::LIGHT_SQUARES) && bishops.intersects(Bitboard::DARK_SQUARES) {
        return false;
    }
    // (L2) No en passant capture now; none can arise later.
    if pos.ep_square(EnPassantMode::Legal).is_some() {
        return false;
    }
    let pawns = board.pawns();
    // (L3) Every pawn has a pawn in front of it.
    for color in Color::ALL {
        let forward = if color.is_white() { 8 } else { -8 };
        for sq in pawns & board.by_color(color) {
            let blocked = sq
                .offset(forward)
                .is_some_and(|front| pawns.contains(front));
            if !blocked {
                return false;
            }
        }
    }
    let pawns_of = |color: Color| pawns & board.by_color(color);
    // The squares the pawns of each colour attack: `A(c)`.
    let attacked = ByColor::new_with(|color| {
        pawns_of(color)
            .into_iter()
            .fold(Bitboard::EMPTY, |acc, sq| {
                acc | attacks::pawn_attacks(color, sq)
            })
    });
    // (L4) No pawn can take a pawn.
    for color in Color::ALL {
        if attacked.get(color).intersects(pawns_of(!color)) {
            return false;
        }
    }
    // (L5) Neither king can ever reach a pawn it could take; neither is in check by a pawn.
    let mut king_regions = ByColor::new_with(|_| Bitboard::EMPTY);
    for color in Color::ALL {
        let Some(king) = board.king_of(color) else {
            return false;
        };
        let passable = !pawns_of(color) & !*attacked.get(!color);
        if !passable.contains(king) {
            return false;
        }
        let region = flood(king, passable, attacks::king_attacks);
        if region.intersects(pawns_of(!color)) {
            return false;
        }
        *king_regions.get_mut(color) = region;
    }
    // (L6) No bishop can ever take a pawn or stand where a pawn could take it.
    let mut bishop_regions = ByColor::new_with(|_| Bitboard::EMPTY);
    for sq in bishops {
        let Some(color) = board.color_at(sq) else {
            return false;
        };
        let region = flood(sq, !pawns, diagonal_steps);
        let next_to = region
            .into_iter()
            .fold(Bitboard::EMPTY, |acc, s| acc | diagonal_steps(s));
        if next_to.intersects(pawns_of(!color)) {
            return false;
        }
        *bishop_regions.get_mut(color) |= region;
    }
    // (L7) Wherever an enemy bishop could check a king, the king has a flight square of the
    // other colour that the enemy king cannot cover.
    let sigma = if bishops.intersects(Bitboard::LIGHT_SQUARES) {
        Bitboard::LIGHT_SQUARES
    } else {
        Bitboard::DARK_SQUARES
    };
    for color in Color::ALL {
        let region = *king_regions.get(color);
        let enemy_king_reach = king_regions
            .get(!color)
            .into_iter()
            .fold(Bitboard::EMPTY, |acc, s| acc | attacks::king_attacks(s));
        let checkable = region & sigma & *bishop_regions.get(!color);
        for sq in checkable {
            let flights = orthogonal_steps(sq) & region;
            if flights.count() < 2 && !flights.intersects(!enemy_king_reach) {
                return false;
            }
        }
    }
    true
}

/// The squares reached from `from` by steps through `passable` squares, `from` included.
fn flood(from: Square, passable: Bitboard, steps: fn(Square) -> Bitboard) -> Bitboard {
    let mut region = Bitboard::from_square(from);
    let mut frontier = region;
    while let Some(sq) = frontier.first() {
        frontier.discard(sq);
        let new = steps(sq) & passable & !region;
        region |= new;
        frontier |= new;
    }
    region
}

/// The squares diagonally next to `sq`.
fn diagonal_steps(sq: Square) -> Bitboard {
    attacks::bishop_attacks(sq, Bitboard::FULL)
}

/// The squares orthogonally next to `sq`.
fn orthogonal_steps(sq: Square) -> Bitboard {
    attacks::rook_attacks(sq, Bitboard::FULL)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use shakmaty::fen::Fen;
    use shakmaty::{Board, CastlingMode, FromSetup, Piece, Setup};

    use super::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("FEN")
            .into_position(CastlingMode::Standard)
            .expect("legal position")
    }

    /// Dead positions, each with the reason it is dead.
    const DEAD: [(&str, &str); 10] = [
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/8 w - - 0 1",
            "a wall on ranks 4 and 5: b4, d4, f4, h4 are covered by black pawns, b5, d5, f5, \
             h5 by white ones; no pawn attacks a pawn",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/8 b - - 0 1",
            "the same wall, black to move",
        ),
        (
            "4k3/8/8/p1p1p1p1/P1P1P1P1/2P5/8/4K3 w - - 0 1",
            "the wall with a white pawn behind its own c4: blocked by a pawn that never moves",
        ),
        (
            "8/2k5/8/1p1p1p1p/pPpPpPpP/P1P1P1P1/8/4K3 w - - 0 1",
            "a zigzag wall: b3, d3, f3, h3 are covered by black pawns, a5, c5, e5, g5 by white \
             ones; white's king stays on ranks 1 and 2, black's on ranks 6 to 8",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1PpP1/5P2/3K4/8 b - - 0 1",
            "a wall with a black pawn on f4 between white's f3 and g4, no en passant",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/3B4 w - - 0 1",
            "a light-squared bishop behind its own light pawns: it never leaves ranks 1 to 3",
        ),
        (
            "8/5B2/1k6/p1p1p1p1/P1P1P1P1/8/3K4/8 b - - 0 1",
            "a light-squared bishop among the black king's squares: every black pawn is dark, \
             and a checked king always has two dark flight squares",
        ),
        (
            "k7/8/2B5/p1p1p1p1/P1P1P1P1/8/3K4/8 b - - 0 1",
            "the black king in check by the bishop: a7 and b8 are free",
        ),
        ("8/8/4k3/8/8/3K4/8/8 w - - 0 1", "king against king"),
        (
            "8/8/4k3/2b5/8/3K4/5B2/8 w - - 0 1",
            "bishops on squares of one colour, no pawns",
        ),
    ];

    /// Positions that look like those above but from which a checkmate can be reached.
    const LIVE: [(&str, &str); 12] = [
        (
            "8/8/1k6/p1p1p3/P1P1P3/8/3K4/8 w - - 0 1",
            "no pawns on the g- and h-files: the white king walks round to e5",
        ),
        (
            "8/8/1k6/p1p1pp1p/P1P1PP1P/8/3K4/8 w - - 0 1",
            "exf5 and fxe5 are possible",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/6N1 w - - 0 1",
            "a knight takes e5",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/7R w - - 0 1",
            "a rook goes to h5 and takes g5",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/7P/3K4/8 w - - 0 1",
            "h3 is free to move: h4 and hxg5",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/2B5 w - - 0 1",
            "a dark-squared bishop: Bb4 and Bxc5",
        ),
        (
            "4b3/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/8 b - - 0 1",
            "a black light-squared bishop: Bb5 and Bxc4, or it is taken on d5",
        ),
        (
            "8/8/1k6/p1p1p1p1/P1P1PpP1/5P2/3K4/8 b - g3 0 1",
            "white has just played g2-g4: fxg3 en passant frees the black pawn",
        ),
        (
            "3K4/8/1k6/p1p1p1p1/P1P1P1P1/8/8/8 w - - 0 1",
            "the white king is on the black side of the wall: Kd7-d6xc5",
        ),
        (
            "k7/8/8/3n4/8/2N5/8/4K3 w - - 0 1",
            "knight against knight: a helpmate exists",
        ),
        (
            "8/8/4k3/2b5/8/3K4/4B3/8 w - - 0 1",
            "bishops on squares of both colours",
        ),
        ("8/8/1k6/p1p1p1p1/P1P1P1P1/8/3K4/3Q4 w - - 0 1", "a queen"),
    ];

    #[test]
    fn dead_positions_are_dead() {
        for (fen, why) in DEAD {
            assert!(is_dead(&pos(fen)), "{fen}: {why}");
        }
    }

    #[test]
    fn live_positions_are_not_dead() {
        for (fen, why) in LIVE {
            assert!(!is_dead(&pos(fen)), "{fen}: {why}");
        }
    }

    /// SplitMix64: a small deterministic generator, enough to pick moves.
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn random_games_from_dead_positions_never_mate_and_stay_dead() {
        let mut rng = SplitMix64(0x00de_ad00);
        let mut plies = 0usize;
        for (fen, _) in DEAD {
            for _ in 0..100 {
                let mut p = pos(fen);
                for _ in 0..150 {
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        assert!(!p.is_check(), "{fen}: checkmate reached: {p:?}");
                        break;
                    }
                    p.play_unchecked(moves[rng.below(moves.len())]);
                    plies += 1;
                    assert!(!p.is_checkmate(), "{fen}: checkmate reached: {p:?}");
                    assert!(is_dead(&p), "{fen}: no longer dead: {p:?}");
                }
            }
        }
        assert!(plies > 100_000, "only {plies} plies played");
    }

    /// Searches every position reachable from the locked position `start` (there are few: the
    /// kings and bishops move inside their regions): none is a checkmate, each is locked.
    /// Returns how many there are.
    fn reachable_locked(start: &Chess) -> usize {
        let fen = Fen::from_position(start, EnPassantMode::Legal);
        let mut seen = HashSet::from([start.clone()]);
        let mut todo = vec![start.clone()];
        while let Some(p) = todo.pop() {
            assert!(is_locked(&p), "{fen}: reaches a position not locked: {p:?}");
            assert!(!p.is_checkmate(), "{fen}: reaches a checkmate: {p:?}");
            for m in p.legal_moves() {
                let mut next = p.clone();
                next.play_unchecked(m);
                if seen.insert(next.clone()) {
                    todo.push(next);
                }
            }
            assert!(seen.len() < 1_000_000, "{fen}: too many positions");
        }
        seen.len()
    }

    #[test]
    fn every_position_reachable_from_a_locked_one_is_locked_and_no_mate() {
        let mut searched = 0;
        for (fen, _) in DEAD {
            let start = pos(fen);
            // Without pawns (bishops of one colour) there are too many positions to search.
            if is_locked(&start) && start.board().pawns().any() {
                reachable_locked(&start);
                searched += 1;
            }
        }
        assert_eq!(searched, 8);
    }

    /// A random position with a pawn on each side of every pawn that moves towards another:
    /// on most files a column of two or three pawns, a white one at the bottom and a black one
    /// at the top; a king on each side; up to two bishops, mostly of one square colour and on
    /// their own side. `None`
    /// when the setup is not a legal position.
    fn random_blocked(rng: &mut SplitMix64) -> Option<Chess> {
        let square = |file: usize, rank: usize| Square::new((rank * 8 + file) as u32);
        let mut board = Board::empty();
        let base = 1 + rng.below(4);
        for file in 0..8 {
            if rng.below(8) == 0 {
                continue;
            }
            let len = if rng.below(5) == 0 { 3 } else { 2 };
            let low = (base + rng.below(3)).saturating_sub(1).clamp(1, 7 - len);
            for rank in low..low + len {
                let color = if rank == low {
                    Color::White
                } else if rank == low + len - 1 || rng.below(2) == 0 {
                    Color::Black
                } else {
                    Color::White
                };
                board.set_piece_at(square(file, rank), color.pawn());
            }
        }
        place(rng, &mut board, Color::White.king(), Bitboard(0xffff));
        place(rng, &mut board, Color::Black.king(), Bitboard(0xffff << 48));
        let light = rng.below(2) == 0;
        for _ in 0..rng.below(3) {
            let color = if rng.below(2) == 0 {
                Color::White
            } else {
                Color::Black
            };
            let side = match (rng.below(4), color) {
                (0, _) => Bitboard::FULL,
                (_, Color::White) => Bitboard(0xff_ffff),
                (_, Color::Black) => Bitboard(0xff_ffff << 40),
            };
            let squares = match (rng.below(6), light) {
                (0, _) => side,
                (_, true) => side & Bitboard::LIGHT_SQUARES,
                (_, false) => side & Bitboard::DARK_SQUARES,
            };
            place(rng, &mut board, color.bishop(), squares);
        }
        let turn = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        let setup = Setup {
            board,
            turn,
            ..Setup::empty()
        };
        Chess::from_setup(setup, CastlingMode::Standard).ok()
    }

    /// Puts `piece` on one of the empty `squares`, chosen at random.
    fn place(rng: &mut SplitMix64, board: &mut Board, piece: Piece, squares: Bitboard) {
        let free: Vec<Square> = (squares & !board.occupied()).into_iter().collect();
        if !free.is_empty() {
            board.set_piece_at(free[rng.below(free.len())], piece);
        }
    }

    /// Random blocked structures, kings and bishops: every one called locked is searched
    /// exhaustively for a checkmate and for a position that is no longer locked.
    #[test]
    fn random_locked_positions_searched_exhaustively() {
        let mut rng = SplitMix64(0x0b10_c4ed);
        let (mut locked, mut with_bishops, mut positions) = (0, 0, 0);
        for _ in 0..40_000 {
            let Some(start) = random_blocked(&mut rng) else {
                continue;
            };
            if !is_locked(&start) {
                continue;
            }
            locked += 1;
            if start.board().bishops().any() {
                with_bishops += 1;
            }
            positions += reachable_locked(&start);
        }
        eprintln!("{locked} locked positions ({with_bishops} with bishops), {positions} reached");
        assert!(
            locked >= 200 && with_bishops >= 20,
            "{locked} {with_bishops}"
        );
    }
}
