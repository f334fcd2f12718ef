//! The arbiter's rulings: touch-move (Art. 4.3-4.6), illegal moves and their penalties (7.4),
//! draw offers and claims (9.1-9.5), the flag (6.9-6.10) and the end of the game.

use shakmaty::attacks;
use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Rank, Role, Square};

use super::arbiter::{Engine, Phase};
use super::event::{Event, EventKind, Priority};
use super::game::Ending;
use super::recognise::{footprint, king_to};
use super::touch::obligation;
use super::turn::Commit;

/// Why moving the piece on `from` to `to` is not legal.
pub fn illegal_reason(pos: &Chess, from: Square, to: Square) -> &'static str {
    let board = pos.board();
    let Some(piece) = board.piece_at(from) else {
        return "not_a_move";
    };
    if piece.color != pos.turn() {
        return "opponent_piece";
    }
    if board.color_at(to) == Some(piece.color) {
        return "own_piece_on_square";
    }
    if piece.role == Role::King && from.rank() == to.rank() && from.distance(to) == 2 {
        return "castling_not_allowed";
    }
    let occupied = board.occupied();
    let reachable = match piece.role {
        Role::Pawn => {
            let forward = if piece.color == Color::White { 8 } else { -8 };
            let one = from.offset(forward);
            let start_rank = if piece.color == Color::White {
                Rank::Second
            } else {
                Rank::Seventh
            };
            let pushes = one == Some(to) && !occupied.contains(to)
                || (from.rank() == start_rank
                    && one.is_some_and(|o| !occupied.contains(o))
                    && from.offset(2 * forward) == Some(to)
                    && !occupied.contains(to));
            let capture_target = board.color_at(to) == Some(!piece.color)
                || pos.ep_square(shakmaty::EnPassantMode::Legal) == Some(to);
            pushes || (attacks::pawn_attacks(piece.color, from).contains(to) && capture_target)
        }
        _ => attacks::attacks(from, piece, occupied).contains(to),
    };
    if !reachable {
        return "not_a_legal_move";
    }
    let mut after: Board = board.clone();
    after.discard_piece_at(to);
    after.discard_piece_at(from);
    after.set_piece_at(to, piece);
    if let Some(king) = after.king_of(piece.color) {
        if after.attacks_to(king, !piece.color, after.occupied()).any() {
            return if pos.is_check() {
                "king_in_check"
            } else {
                "leaves_king_in_check"
            };
        }
    }
    "not_a_legal_move"
}

impl Engine {
    /// The rule a completed move breaks, with the square of the piece concerned (tournament).
    pub(super) fn breach(&self, m: Move) -> Option<(&'static str, Square)> {
        let pos = &self.game.pos;
        // Art. 4.6b/c: a king released on its castling square, a pawn on its promotion square,
        // binds the move, whatever is touched after that.
        match self.turn.committed {
            Some(Commit::Castle { king, king_to: to }) => {
                let castles_there = m.from() == Some(king) && king_to(pos.turn(), &m) == Some(to);
                return (!castles_there).then_some(("4.6b", king));
            }
            Some(Commit::Promote { pawn, to }) => {
                let promotes_there = m.from() == Some(pawn) && m.to() == to && m.is_promotion();
                return (!promotes_there).then_some(("4.6c", pawn));
            }
            None => {}
        }
        // The obligation stands from the touches made before the player began this move
        // (touching a piece to move it is not what obliges him), and from all touches (a king
        // touched, then the rook, must castle even if the king moves).
        let (emptied, _, victim) = footprint(pos.turn(), &m);
        let involved = emptied | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        let touches = &self.turn.touches;
        // Only the pieces this move uses were touched (the piece moved, the piece captured):
        // it fulfils whatever they oblige. Not so for castling (4.4b: rook first, no castling).
        if !m.is_castle() && touches.iter().all(|t| involved.contains(t.square)) {
            return None;
        }
        let began = touches
            .iter()
            .position(|t| involved.contains(t.square))
            .map_or(touches.len(), |i| {
                // Touches at the same moment as the first of the move's own are not before it.
                let at = touches[i].at;
                touches.iter().position(|t| t.at == at).unwrap_or(i)
            });
        let legal = &self.game.legal().moves;
        obligation(pos, legal, &touches[..began])
            .filter(|o| !o.allows(m))
            .or_else(|| obligation(pos, legal, touches).filter(|o| !o.allows(m)))
            .map(|o| (o.rule, o.square))
    }

    pub(super) fn refuse_touch_move(
        &mut self,
        rule: &'static str,
        square: Square,
        out: &mut Vec<Event>,
    ) {
        let pos = &self.game.pos;
        let color = pos.turn();
        let pos_occ = pos.board().occupied();
        let occ = self.phys.occupied();
        self.phase = Phase::Restoring {
            diff: (pos_occ & !occ, occ & !pos_occ),
        };
        self.alt = None;
        self.emit(
            out,
            EventKind::TouchMove {
                color,
                square,
                rule,
            },
        );
        let what = match (rule, self.game.pos.board().piece_at(square)) {
            ("4.4a", _) => self.s.phrases.words.must_castle.clone(),
            (_, Some(p)) => self.s.phrases.piece_on(p.role, square),
            (_, None) => self.s.phrases.square(square),
        };
        let text = format!("{}: {what}", self.s.phrases.words.touch_move);
        self.say(out, text, Priority::Error);
    }

    pub(super) fn illegal_completed(&mut self, from: Square, to: Square, out: &mut Vec<Event>) {
        let pos = &self.game.pos;
        let color = pos.turn();
        let reason = illegal_reason(pos, from, to);
        let pos_occ = pos.board().occupied();
        let occ = self.phys.occupied();
        self.phase = Phase::Restoring {
            diff: (pos_occ & !occ, occ & !pos_occ),
        };
        self.alt = None;
        self.mismatch.owe_restored = true;
        self.illegal_counts[color] += 1;
        let count = self.illegal_counts[color];
        let penalty = self.s.rules.illegal_penalty(self.s.time_control.as_ref());
        let loses = penalty.loses_at.is_some_and(|n| count >= n);
        let (penalty_name, extra_ms) = if loses {
            ("loss", None)
        } else if penalty.loses_at.is_none() && penalty.extra_ms == 0 {
            ("none", None)
        } else if let Some(clock) = &mut self.clock {
            clock.add(!color, penalty.extra_ms);
            ("extra_time", Some(penalty.extra_ms))
        } else {
            ("warning", None)
        };
        self.emit(
            out,
            EventKind::Illegal {
                color,
                count,
                reason,
                penalty: penalty_name,
                extra_ms,
                attempted: format!("{from}{to}"),
            },
        );
        let piece = self.game.pos.board().piece_at(from);
        let mut text = self.s.phrases.words.illegal_move.clone();
        if let Some(p) = piece {
            text = format!("{text}. {}", self.s.phrases.piece_on(p.role, from));
        }
        self.say(out, text, Priority::Error);
        if loses {
            // Art. 7.4b: lost, unless the opponent cannot mate by any series of legal moves.
            let winner = (!self.game.pos.has_insufficient_material(!color)).then_some(!color);
            self.end_game(
                Ending {
                    winner,
                    reason: "illegal_moves",
                },
                out,
            );
        }
    }

    pub(super) fn draw_button(&mut self, out: &mut Vec<Event>) {
        let to_move = self.game.pos.turn();
        match self.draw_offer {
            Some(_) => self.end_game(
                Ending {
                    winner: None,
                    reason: "agreement",
                },
                out,
            ),
            None => {
                // Art. 9.1a: the offer belongs to the player who has just moved, while the
                // opponent has not touched a piece; otherwise to the player to move.
                let by = if self.turn.touches.is_empty() && !self.game.plies.is_empty() {
                    !to_move
                } else {
                    to_move
                };
                self.draw_offer = Some(by);
                let w = &self.s.phrases.words;
                let text = format!("{} {}", w.color(by), w.draw_offer);
                self.say(out, text, Priority::Info);
            }
        }
    }

    pub(super) fn claim(&mut self, out: &mut Vec<Event>) {
        let color = self.game.pos.turn();
        let (kind, valid, reason) = if self.game.repetitions() >= 3 {
            ("threefold", true, "threefold_repetition")
        } else if self.game.pos.halfmoves() >= 100 {
            ("fifty_moves", true, "fifty_moves")
        } else if self.game.pos.halfmoves() >= 50 && self.game.repetitions() < 2 {
            ("fifty_moves", false, "")
        } else {
            ("threefold", false, "")
        };
        self.emit(out, EventKind::Claim { color, kind, valid });
        let w = &self.s.phrases.words;
        if valid {
            let text = w.claim_valid.clone();
            self.say(out, text, Priority::Result);
            self.end_game(
                Ending {
                    winner: None,
                    reason,
                },
                out,
            );
            return;
        }
        let text = w.claim_invalid.clone();
        self.say(out, text, Priority::Result);
        if let Some(clock) = &mut self.clock {
            let (claimant, bonus) = self
                .s
                .rules
                .wrong_claim_times(clock.remaining(color, self.now));
            clock.set(color, claimant, self.now);
            clock.add(!color, bonus);
        }
        self.arm_warnings();
        self.emit_clock(out);
    }

    pub(super) fn resign(&mut self, out: &mut Vec<Event>) {
        let loser = self.game.pos.turn();
        self.end_game(
            Ending {
                winner: Some(!loser),
                reason: "resignation",
            },
            out,
        );
    }

    pub(super) fn flag_falls(&mut self, out: &mut Vec<Event>) {
        let Some(flagged) = self.clock.as_ref().and_then(|c| c.running()) else {
            return;
        };
        // Art. 6.10: a draw when the opponent could not mate by any series of legal moves.
        let winner = (!self.game.pos.has_insufficient_material(!flagged)).then_some(!flagged);
        self.end_game(
            Ending {
                winner,
                reason: "time_forfeit",
            },
            out,
        );
    }

    pub(super) fn end_game(&mut self, ending: Ending, out: &mut Vec<Event>) {
        self.game.ending = Some(ending);
        self.phase = Phase::Over;
        self.alt = None;
        self.mismatch.due = None;
        self.draw_offer = None;
        self.emit(
            out,
            EventKind::GameOver {
                result: ending.result(),
                reason: ending.reason,
            },
        );
        let text = self.s.phrases.game_over(ending.winner, ending.reason);
        self.say(out, text, Priority::Result);
        if let Some(clock) = &mut self.clock {
            clock.stop(self.now);
        }
        self.emit_clock(out);
    }
}
