//! Touch-move (Art. 4.3-4.5): from the pieces the player to move has touched, in order, which
//! moves he may still make.

use shakmaty::{CastlingSide, Chess, Move, MoveList, Piece, Position, Role, Square};

/// What the touched pieces oblige the player to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obligation {
    /// The article that applies ("4.3a", "4.4a", ...).
    pub rule: &'static str,
    /// The piece that must be moved, or captured.
    pub square: Square,
    /// The moves that fulfil the obligation; never empty.
    pub allowed: Vec<Move>,
}

impl Obligation {
    pub fn allows(&self, m: Move) -> bool {
        self.allowed.contains(&m)
    }
}

fn captured_square(m: &Move) -> Option<Square> {
    match *m {
        Move::Normal {
            capture: Some(_),
            to,
            ..
        } => Some(to),
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ => None,
    }
}

fn castle_side_of(m: &Move) -> Option<CastlingSide> {
    match *m {
        Move::Castle { king, rook } => Some(if rook > king {
            CastlingSide::KingSide
        } else {
            CastlingSide::QueenSide
        }),
        _ => None,
    }
}

fn moves_of(legal: &MoveList, sq: Square) -> Vec<Move> {
    legal
        .iter()
        .filter(|m| m.from() == Some(sq))
        .copied()
        .collect()
}

fn captures_of(legal: &MoveList, sq: Square) -> Vec<Move> {
    legal
        .iter()
        .filter(|m| captured_square(m) == Some(sq))
        .copied()
        .collect()
}

/// The obligation created by `touches` (squares and the pieces that stood there at the start of
/// the turn, in the order touched), or `None` when any legal move may be made (nothing touched,
/// or Art. 4.5: none of the touched pieces can be moved or captured).
pub fn obligation(pos: &Chess, touches: &[(Square, Piece)]) -> Option<Obligation> {
    let us = pos.turn();
    let legal = pos.legal_moves();
    let own: Vec<(Square, Role)> = touches
        .iter()
        .filter(|(_, p)| p.color == us)
        .map(|(s, p)| (*s, p.role))
        .collect();
    let theirs: Vec<Square> = touches
        .iter()
        .filter(|(_, p)| p.color != us)
        .map(|(s, _)| *s)
        .collect();

    // 4.4: king and rook.
    if let Some(&(first_sq, first_role)) = own.first() {
        // Only a rook that can still castle with this king makes 4.4 apply.
        let castling_side_of = |sq: Square| {
            [CastlingSide::KingSide, CastlingSide::QueenSide]
                .into_iter()
                .find(|side| pos.castles().rook(us, *side) == Some(sq))
        };
        let rook_after = || {
            own.iter()
                .skip(1)
                .filter(|(_, r)| *r == Role::Rook)
                .find_map(|(sq, _)| castling_side_of(*sq))
        };
        if first_role == Role::King {
            if let Some(side) = rook_after() {
                let castle: Vec<Move> = legal
                    .iter()
                    .filter(|m| castle_side_of(m) == Some(side))
                    .copied()
                    .collect();
                if !castle.is_empty() {
                    return Some(Obligation {
                        rule: "4.4a",
                        square: first_sq,
                        allowed: castle,
                    });
                }
                // 4.4c: castling that way is illegal: another king move, if there is one.
                let king_moves: Vec<Move> = moves_of(&legal, first_sq)
                    .into_iter()
                    .filter(|m| castle_side_of(m) != Some(side))
                    .collect();
                if !king_moves.is_empty() {
                    return Some(Obligation {
                        rule: "4.4c",
                        square: first_sq,
                        allowed: king_moves,
                    });
                }
                return None;
            }
        }
        if first_role == Role::Rook
            && castling_side_of(first_sq).is_some()
            && own.iter().skip(1).any(|(_, r)| *r == Role::King)
        {
            // 4.4b: rook first, then king: no castling on that side; move the rook (4.3a).
            let rook_moves = moves_of(&legal, first_sq);
            if !rook_moves.is_empty() {
                return Some(Obligation {
                    rule: "4.4b",
                    square: first_sq,
                    allowed: rook_moves,
                });
            }
        }
    }

    // 4.3c: one piece of each colour: capture the touched enemy piece with the touched own one.
    if !own.is_empty() && !theirs.is_empty() {
        let both: Vec<Move> = legal
            .iter()
            .filter(|m| {
                m.from().is_some_and(|f| own.iter().any(|(s, _)| *s == f))
                    && captured_square(m).is_some_and(|c| theirs.contains(&c))
            })
            .copied()
            .collect();
        if !both.is_empty() {
            return Some(Obligation {
                rule: "4.3c",
                square: theirs[0],
                allowed: both,
            });
        }
        // Otherwise move or capture the first touched piece that can be; own pieces count
        // first when touched at once (the order of `touches` already reflects that).
        for (sq, p) in touches {
            let allowed = if p.color == us {
                moves_of(&legal, *sq)
            } else {
                captures_of(&legal, *sq)
            };
            if !allowed.is_empty() {
                return Some(Obligation {
                    rule: "4.3c",
                    square: *sq,
                    allowed,
                });
            }
        }
        return None;
    }

    // 4.3a: own pieces: the first that can be moved.
    for (sq, _) in &own {
        let allowed = moves_of(&legal, *sq);
        if !allowed.is_empty() {
            return Some(Obligation {
                rule: "4.3a",
                square: *sq,
                allowed,
            });
        }
    }
    // 4.3b: opponent's pieces: capture the first that can be captured.
    for sq in &theirs {
        let allowed = captures_of(&legal, *sq);
        if !allowed.is_empty() {
            return Some(Obligation {
                rule: "4.3b",
                square: *sq,
                allowed,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn t(pos: &Chess, sqs: &[Square]) -> Vec<(Square, Piece)> {
        sqs.iter()
            .map(|s| (*s, pos.board().piece_at(*s).unwrap()))
            .collect()
    }

    #[test]
    fn first_movable_own_piece_must_move() {
        let p = Chess::default();
        // The rook on a1 cannot move; the knight touched after it must.
        let o = obligation(&p, &t(&p, &[Square::A1, Square::G1])).unwrap();
        assert_eq!((o.rule, o.square), ("4.3a", Square::G1));
        assert_eq!(o.allowed.len(), 2);
        assert!(
            obligation(&p, &t(&p, &[Square::A1])).is_none(),
            "4.5: any move"
        );
    }

    #[test]
    fn king_then_rook_must_castle() {
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let o = obligation(&p, &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule, "4.4a");
        assert_eq!(
            o.allowed,
            vec![Move::Castle {
                king: Square::E1,
                rook: Square::H1
            }]
        );
        let o = obligation(&p, &t(&p, &[Square::H1, Square::E1])).unwrap();
        assert_eq!((o.rule, o.square), ("4.4b", Square::H1));
        assert!(o.allowed.iter().all(|m| m.role() == Role::Rook));
    }

    #[test]
    fn only_a_castling_rook_makes_4_4_apply() {
        // The h4 rook has nothing to do with castling: king first means 4.3a, the king moves.
        let p = pos("4k3/8/8/8/7R/8/8/4K2R w K - 0 1");
        let o = obligation(&p, &t(&p, &[Square::E1, Square::H4])).unwrap();
        assert_eq!((o.rule, o.square), ("4.3a", Square::E1));
        let o = obligation(&p, &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule, "4.4a");
    }

    #[test]
    fn illegal_castling_obliges_another_king_move() {
        // f1 attacked by the black rook: no short castling; long castling is allowed (4.4c).
        let p = pos("1k3r2/8/8/8/8/8/8/R3K2R w KQ - 0 1");
        let o = obligation(&p, &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule, "4.4c");
        assert!(o.allowed.iter().all(|m| m.role() == Role::King));
        assert!(o.allowed.contains(&Move::Castle {
            king: Square::E1,
            rook: Square::A1
        }));
    }

    #[test]
    fn touched_enemy_piece_must_be_captured() {
        let p = pos("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let o = obligation(&p, &t(&p, &[Square::D5])).unwrap();
        assert_eq!((o.rule, o.square), ("4.3b", Square::D5));
        assert_eq!(o.allowed.len(), 1);
        let o = obligation(&p, &t(&p, &[Square::D5, Square::E4])).unwrap();
        assert_eq!(o.rule, "4.3c");
        // The d1 queen cannot take on d5 (d2 blocks) but can move: the first touched moves.
        let o = obligation(&p, &t(&p, &[Square::D1, Square::D5])).unwrap();
        assert_eq!((o.rule, o.square), ("4.3c", Square::D1));
        assert!(o.allowed.iter().all(|m| m.from() == Some(Square::D1)));
    }
}
