//! Touch-move (Art. 4.3-4.5): from the pieces the player to move has touched, in order, which
//! moves he may still make. Pieces touched at the same moment (one whole-board frame) carry no
//! order among themselves: any of them that can be moved fulfils the obligation.

use shakmaty::{CastlingSide, Chess, Move, Position, Role, Square};

use super::event::TouchRule;
use super::turn::Touch;

/// What the touched pieces oblige the player to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obligation {
    /// The article that applies (4.3a, 4.4a, ...).
    pub rule: TouchRule,
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

fn moves_of(legal: &[Move], sq: Square) -> Vec<Move> {
    legal
        .iter()
        .filter(|m| m.from() == Some(sq))
        .copied()
        .collect()
}

fn captures_of(legal: &[Move], sq: Square) -> Vec<Move> {
    legal
        .iter()
        .filter(|m| captured_square(m) == Some(sq))
        .copied()
        .collect()
}

/// The first group of simultaneous touches (among `touches`, in order) in which some piece
/// gives moves by `moves`: those moves, and the square of the first such piece.
fn first_group(
    touches: &[Touch],
    moves: impl Fn(&Touch) -> Vec<Move>,
) -> Option<(Square, Vec<Move>)> {
    let mut i = 0;
    while i < touches.len() {
        let at = touches[i].at;
        let group = touches[i..].iter().take_while(|t| t.at == at);
        let mut found: Option<(Square, Vec<Move>)> = None;
        let mut n = 0;
        for t in group {
            n += 1;
            let allowed = moves(t);
            if allowed.is_empty() {
                continue;
            }
            match &mut found {
                Some((_, all)) => all.extend(allowed),
                None => found = Some((t.square, allowed)),
            }
        }
        if found.is_some() {
            return found;
        }
        i += n;
    }
    None
}

/// The obligation created by `touches` (squares and the pieces that stood there at the start of
/// the turn, in the order touched), or `None` when any legal move may be made (nothing touched,
/// or Art. 4.5: none of the touched pieces can be moved or captured).
pub fn obligation(pos: &Chess, legal: &[Move], touches: &[Touch]) -> Option<Obligation> {
    if touches.is_empty() {
        return None;
    }
    let us = pos.turn();
    let own: Vec<Touch> = touches
        .iter()
        .filter(|t| t.piece.color == us)
        .copied()
        .collect();
    let theirs: Vec<Touch> = touches
        .iter()
        .filter(|t| t.piece.color != us)
        .copied()
        .collect();

    // 4.4: king and rook.
    if let Some(first) = own.first() {
        let (first_sq, first_role) = (first.square, first.piece.role);
        // Only a rook that can still castle with this king makes 4.4 apply.
        let castling_side_of = |sq: Square| {
            [CastlingSide::KingSide, CastlingSide::QueenSide]
                .into_iter()
                .find(|side| pos.castles().rook(us, *side) == Some(sq))
        };
        let rook_after = || {
            own.iter()
                .skip(1)
                .filter(|t| t.piece.role == Role::Rook)
                .find_map(|t| castling_side_of(t.square))
        };
        if first_role == Role::King {
            if let Some(side) = rook_after() {
                let castle: Vec<Move> = legal
                    .iter()
                    .filter(|m| m.castling_side() == Some(side))
                    .copied()
                    .collect();
                if !castle.is_empty() {
                    return Some(Obligation {
                        rule: TouchRule::Art4_4a,
                        square: first_sq,
                        allowed: castle,
                    });
                }
                // 4.4c: castling that way is illegal: another king move, if there is one.
                let king_moves: Vec<Move> = moves_of(legal, first_sq)
                    .into_iter()
                    .filter(|m| m.castling_side() != Some(side))
                    .collect();
                if !king_moves.is_empty() {
                    return Some(Obligation {
                        rule: TouchRule::Art4_4c,
                        square: first_sq,
                        allowed: king_moves,
                    });
                }
                return None;
            }
        }
        // 4.4b: rook first, then king (touched later, not at the same moment): no castling on
        // that side; move the rook (4.3a).
        if first_role == Role::Rook
            && castling_side_of(first_sq).is_some()
            && own
                .iter()
                .skip(1)
                .any(|t| t.piece.role == Role::King && t.at > first.at)
        {
            let rook_moves = moves_of(legal, first_sq);
            if !rook_moves.is_empty() {
                return Some(Obligation {
                    rule: TouchRule::Art4_4b,
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
                m.from().is_some_and(|f| own.iter().any(|t| t.square == f))
                    && captured_square(m).is_some_and(|c| theirs.iter().any(|t| t.square == c))
            })
            .copied()
            .collect();
        if !both.is_empty() {
            return Some(Obligation {
                rule: TouchRule::Art4_3c,
                square: theirs[0].square,
                allowed: both,
            });
        }
        // Otherwise move or capture the first touched piece that can be; own pieces count
        // first when touched at once (the order of `touches` already reflects that).
        return first_group(touches, |t| {
            if t.piece.color == us {
                moves_of(legal, t.square)
            } else {
                captures_of(legal, t.square)
            }
        })
        .map(|(square, allowed)| Obligation {
            rule: TouchRule::Art4_3c,
            square,
            allowed,
        });
    }

    // 4.3a: own pieces: the first that can be moved.
    if let Some((square, allowed)) = first_group(&own, |t| moves_of(legal, t.square)) {
        return Some(Obligation {
            rule: TouchRule::Art4_3a,
            square,
            allowed,
        });
    }
    // 4.3b: opponent's pieces: capture the first that can be captured.
    first_group(&theirs, |t| captures_of(legal, t.square)).map(|(square, allowed)| Obligation {
        rule: TouchRule::Art4_3b,
        square,
        allowed,
    })
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

    fn t(pos: &Chess, sqs: &[Square]) -> Vec<Touch> {
        sqs.iter()
            .enumerate()
            .map(|(i, s)| Touch {
                square: *s,
                piece: pos.board().piece_at(*s).unwrap(),
                at: i as u64,
            })
            .collect()
    }

    #[test]
    fn first_movable_own_piece_must_move() {
        let p = Chess::default();
        // The rook on a1 cannot move; the knight touched after it must.
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::A1, Square::G1])).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.3a", Square::G1));
        assert_eq!(o.allowed.len(), 2);
        assert!(
            obligation(&p, &p.legal_moves(), &t(&p, &[Square::A1])).is_none(),
            "4.5: any move"
        );
    }

    #[test]
    fn king_then_rook_must_castle() {
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule.name(), "4.4a");
        assert_eq!(
            o.allowed,
            vec![Move::Castle {
                king: Square::E1,
                rook: Square::H1
            }]
        );
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::H1, Square::E1])).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.4b", Square::H1));
        assert!(o.allowed.iter().all(|m| m.role() == Role::Rook));
    }

    #[test]
    fn only_a_castling_rook_makes_4_4_apply() {
        // The h4 rook has nothing to do with castling: king first means 4.3a, the king moves.
        let p = pos("4k3/8/8/8/7R/8/8/4K2R w K - 0 1");
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::E1, Square::H4])).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.3a", Square::E1));
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule.name(), "4.4a");
    }

    #[test]
    fn illegal_castling_obliges_another_king_move() {
        // f1 attacked by the black rook: no short castling; long castling is allowed (4.4c).
        let p = pos("1k3r2/8/8/8/8/8/8/R3K2R w KQ - 0 1");
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::E1, Square::H1])).unwrap();
        assert_eq!(o.rule.name(), "4.4c");
        assert!(o.allowed.iter().all(|m| m.role() == Role::King));
        assert!(o.allowed.contains(&Move::Castle {
            king: Square::E1,
            rook: Square::A1
        }));
    }

    #[test]
    fn pieces_touched_at_once_may_any_of_them_move() {
        let p = Chess::default();
        let at_once: Vec<Touch> = [Square::B1, Square::G1]
            .iter()
            .map(|s| Touch {
                square: *s,
                piece: p.board().piece_at(*s).unwrap(),
                at: 7,
            })
            .collect();
        let o = obligation(&p, &p.legal_moves(), &at_once).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.3a", Square::B1));
        assert_eq!(o.allowed.len(), 4, "both knights' moves");
        // Rook and king at once is no 4.4b: castling is what they mean.
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let together = vec![
            Touch {
                square: Square::E1,
                piece: p.board().piece_at(Square::E1).unwrap(),
                at: 3,
            },
            Touch {
                square: Square::A1,
                piece: p.board().piece_at(Square::A1).unwrap(),
                at: 3,
            },
        ];
        assert_eq!(
            obligation(&p, &p.legal_moves(), &together)
                .unwrap()
                .rule
                .name(),
            "4.4a"
        );
    }

    #[test]
    fn touched_enemy_piece_must_be_captured() {
        let p = pos("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::D5])).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.3b", Square::D5));
        assert_eq!(o.allowed.len(), 1);
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::D5, Square::E4])).unwrap();
        assert_eq!(o.rule.name(), "4.3c");
        // The d1 queen cannot take on d5 (d2 blocks) but can move: the first touched moves.
        let o = obligation(&p, &p.legal_moves(), &t(&p, &[Square::D1, Square::D5])).unwrap();
        assert_eq!((o.rule.name(), o.square), ("4.3c", Square::D1));
        assert!(o.allowed.iter().all(|m| m.from() == Some(Square::D1)));
    }
}
