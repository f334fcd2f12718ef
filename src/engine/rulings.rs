//! The arbiter's rulings: touch-move (Art. 4.3-4.6), illegal moves and their penalties (7.4),
//! draw offers and claims (9.1-9.5), the flag (6.9-6.10) and the end of the game.

use shakmaty::attacks;
use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Rank, Role, Square};

use super::arbiter::{Engine, Phase, Ruling};
use super::clock::Pace;
use super::decoder::log::Trace;
use super::decoder::recognise::{footprint, king_to};
use super::event::{EndReason, Event, EventKind, IllegalReason, Penalty, Priority, TouchRule};
use super::game::Ending;
use super::touch::obligation;
use super::turn::{Commit, Touch};

/// Why moving the piece on `from` to `to` is not legal.
pub fn illegal_reason(pos: &Chess, from: Square, to: Square) -> IllegalReason {
    let board = pos.board();
    let Some(piece) = board.piece_at(from) else {
        return IllegalReason::NotAMove;
    };
    if piece.color != pos.turn() {
        return IllegalReason::OpponentPiece;
    }
    if board.color_at(to) == Some(piece.color) {
        return IllegalReason::OwnPieceOnSquare;
    }
    if piece.role == Role::King && from.rank() == to.rank() && from.distance(to) == 2 {
        return IllegalReason::CastlingNotAllowed;
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
        return IllegalReason::NotALegalMove;
    }
    let mut after: Board = board.clone();
    after.discard_piece_at(to);
    after.discard_piece_at(from);
    after.set_piece_at(to, piece);
    if let Some(king) = after.king_of(piece.color) {
        if after.attacks_to(king, !piece.color, after.occupied()).any() {
            return if pos.is_check() {
                IllegalReason::KingInCheck
            } else {
                IllegalReason::LeavesKingInCheck
            };
        }
    }
    IllegalReason::NotALegalMove
}

impl Engine {
    /// The rule a completed move breaks, with the square of the piece concerned (tournament).
    pub(super) fn breach(&self, m: Move) -> Option<(TouchRule, Square)> {
        let pos = &self.game.pos;
        // Art. 4.6b/c: a king released on its castling square, a pawn on its promotion square,
        // binds the move, whatever is touched after that.
        match self.turn.committed {
            Some(Commit::Castle { king, king_to: to }) => {
                let castles_there = m.from() == Some(king) && king_to(pos.turn(), &m) == Some(to);
                return (!castles_there).then_some((TouchRule::Art4_6b, king));
            }
            Some(Commit::Promote { pawn, to }) => {
                let promotes_there = m.from() == Some(pawn) && m.to() == to && m.is_promotion();
                return (!promotes_there).then_some((TouchRule::Art4_6c, pawn));
            }
            None => {}
        }
        // The obligation stands from the touches made before the player began this move
        // (touching a piece to move it is not what obliges him), and from all touches (a king
        // touched, then the rook, must castle even if the king moves).
        let (emptied, _, victim) = footprint(pos.turn(), &m);
        let involved = emptied | victim.map_or(Bitboard::EMPTY, Bitboard::from_square);
        // (The opponent's pieces lifted and not taken were his adjustments, if so set.)
        let kept: Vec<Touch>;
        let touches = if self.s.owner_adjusts {
            kept = self
                .turn
                .touches
                .iter()
                .filter(|t| t.piece.color == pos.turn() || involved.contains(t.square))
                .copied()
                .collect();
            &kept[..]
        } else {
            &self.turn.touches[..]
        };
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
        rule: TouchRule,
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
        self.note_ruling("touch_move");
        self.emit(
            out,
            EventKind::TouchMove {
                color,
                square,
                rule,
            },
        );
        let what = match (rule, self.game.pos.board().piece_at(square)) {
            (TouchRule::Art4_4a, _) => self.s.phrases.words.must_castle.clone(),
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
        self.note_ruling("illegal");
        self.illegal_counts[color] += 1;
        let count = self.illegal_counts[color];
        let pace = self.pace();
        let quickplay = self
            .clock
            .as_ref()
            .is_some_and(|c| c.in_quickplay_finish(color));
        let penalty = self.s.rules.illegal_penalty(pace, quickplay);
        let loses = penalty.loses_at.is_some_and(|n| count >= n);
        let (penalty_name, extra_ms) = if loses {
            (Penalty::Loss, None)
        } else if penalty.claim_win {
            // Appendix C3: the opponent may claim the win until he makes his own move.
            self.win_claim = Some(!color);
            (Penalty::ClaimWin, None)
        } else if penalty.extra_ms == 0 {
            (Penalty::None, None)
        } else if let Some(clock) = &mut self.clock {
            clock.add(!color, penalty.extra_ms);
            (Penalty::ExtraTime, Some(penalty.extra_ms))
        } else {
            (Penalty::Warning, None)
        };
        let sealing = self.sealing == Some(color);
        self.emit(
            out,
            EventKind::Illegal {
                color,
                count,
                reason,
                penalty: penalty_name,
                extra_ms,
                // (A move being sealed is not told, not even an illegal attempt at it.)
                attempted: if sealing {
                    String::new()
                } else {
                    format!("{from}{to}")
                },
            },
        );
        let piece = self.game.pos.board().piece_at(from).filter(|_| !sealing);
        let w = &self.s.phrases.words;
        let mut text = w.illegal_move.clone();
        if let Some(p) = piece {
            text = format!("{text}. {}", self.s.phrases.piece_on(p.role, from));
        }
        if penalty.claim_win {
            let side = w.color(!color);
            text = format!("{text}. {}", w.may_claim_win.replace("{side}", side));
        }
        self.say(out, text, Priority::Error);
        if loses {
            // 7.4b (2005), 10.3 (1997): lost. 2023's 7.5.5: drawn if the opponent cannot mate
            // by any series of legal moves.
            let cannot_mate = self.game.pos.has_insufficient_material(!color);
            let winner = (!(penalty.draw_if_cannot_mate && cannot_mate)).then_some(!color);
            self.end_game(
                Ending {
                    winner,
                    reason: EndReason::IllegalMoves,
                },
                out,
            );
        }
    }

    /// Keeps a ruling given now, on the board's last placement, so that a correction can
    /// withdraw it; the story it was given in is no longer agreed as plain.
    fn note_ruling(&mut self, kind: &'static str) {
        let now = self.now;
        let placed = self
            .log
            .iter()
            .rposition(|s| s.what == Trace::Placed && s.t <= now);
        self.rulings.push(Ruling {
            kind,
            plies: self.game.plies.len(),
            placed,
        });
        self.plain_run = 0;
    }

    /// The kind of game: as set, else by the time control and the profile's limits.
    pub(super) fn pace(&self) -> Pace {
        self.s
            .kind
            .unwrap_or_else(|| self.s.rules.pace(self.s.time_control.as_ref()))
    }

    /// Whether `color` could mate the other king: by any series of legal moves, and in a 1997
    /// blitz game with the "mating potential" of Appendix C4 (no win with a king alone, a king
    /// and one minor piece, or two knights against a bare king).
    fn can_win(&self, color: Color) -> bool {
        let pos = &self.game.pos;
        if pos.has_insufficient_material(color) {
            return false;
        }
        if self.s.rules.blitz_mating_potential && self.pace() == Pace::Blitz {
            let board = pos.board();
            let ours = board.by_color(color);
            let minors = (board.knights() | board.bishops()) & ours;
            let others = ours & !board.kings() & !minors;
            let theirs_bare = (board.by_color(!color) & !board.kings()).is_empty();
            if others.is_empty()
                && (minors.count() <= 1
                    || (minors.count() == 2 && (board.knights() & ours) == minors && theirs_bare))
            {
                return false;
            }
        }
        true
    }

    pub(super) fn draw_button(&mut self, out: &mut Vec<Event>) {
        let to_move = self.game.pos.turn();
        let actor = self.actor();
        match self.draw_offer {
            // (The offer is not the offerer's to accept.)
            Some(o) if actor == Some(o) => {
                let text = self.s.phrases.words.draw_offer_stands.clone();
                self.say(out, text, Priority::Info);
            }
            Some(_) => self.end_game(
                Ending {
                    winner: None,
                    reason: EndReason::Agreement,
                },
                out,
            ),
            None => {
                // Art. 9.1a: the offer belongs to the player who has just moved, while the
                // opponent has not touched a piece; otherwise to the player to move.
                let by = match actor {
                    Some(a) => a,
                    None if self.turn.touches.is_empty() && !self.game.plies.is_empty() => !to_move,
                    None => to_move,
                };
                self.draw_offer = Some(by);
                self.game
                    .note(format!("{} offers a draw", super::event::side_name(by)));
                let w = &self.s.phrases.words;
                let text = format!("{} {}", w.color(by), w.draw_offer);
                self.say(out, text, Priority::Info);
            }
        }
    }

    /// What the board shows entitles the player to move to a draw by 9.2b or 9.3b.
    fn draw_claim_on_board(&self) -> Option<(&'static str, EndReason)> {
        if self.game.repetitions() >= 3 {
            Some(("threefold", EndReason::ThreefoldRepetition))
        } else if self.game.pos.halfmoves() >= 100 {
            Some(("fifty_moves", EndReason::FiftyMoves))
        } else {
            None
        }
    }

    pub(super) fn claim(&mut self, out: &mut Vec<Event>) {
        let color = self.game.pos.turn();
        // Blitz, Appendix C3: after an illegal move, the opponent's claim is of the win.
        if let Some(by) = self.win_claim.take() {
            self.emit(
                out,
                EventKind::Claim {
                    color: by,
                    kind: "illegal_move",
                    valid: true,
                    with_move: false,
                },
            );
            // (C3 of 2005: a claimant who cannot mate gets a draw; 1997: C4.)
            let winner = self.can_win(by).then_some(by);
            self.end_game(
                Ending {
                    winner,
                    reason: EndReason::IllegalMoves,
                },
                out,
            );
            return;
        }
        if self.draw_claim_on_board().is_some() {
            self.judge_draw_claim(color, false, out);
            return;
        }
        // 9.2a, 9.3a: the claim is of the position the player's next move makes. He stops
        // both clocks (9.5) and makes the move; it is judged when it is made.
        self.claim_with_move = Some(color);
        if let Some(c) = &mut self.clock {
            c.pause(self.now);
        }
        self.mismatch.due = Some(self.now + self.s.mismatch_ms);
        let text = self.s.phrases.words.claim_with_move.clone();
        self.say(out, text, Priority::Info);
        self.emit_clock(out);
    }

    /// The move a claim waited for is made: the claim is judged on the position it made.
    pub(super) fn judge_claim_with_move(&mut self, color: Color, out: &mut Vec<Event>) {
        self.claim_with_move = None;
        if !self.judge_draw_claim(color, true, out) {
            if let Some(c) = &mut self.clock {
                // The clocks stood from the claim; the game goes on with the opponent's.
                c.resume(self.now);
            }
            self.emit_clock(out);
        }
    }

    /// Judges `color`'s draw claim (9.2, 9.3) on the position standing: right, the game is
    /// drawn; wrong, the 9.5b penalty. Says whether it was right.
    fn judge_draw_claim(&mut self, color: Color, with_move: bool, out: &mut Vec<Event>) -> bool {
        let found = self.draw_claim_on_board();
        let kind = match found {
            Some((kind, _)) => kind,
            None if self.game.pos.halfmoves() >= 90 => "fifty_moves",
            None => "threefold",
        };
        self.emit(
            out,
            EventKind::Claim {
                color,
                kind,
                valid: found.is_some(),
                with_move,
            },
        );
        let Some((_, reason)) = found else {
            self.wrong_claim(color, out);
            return false;
        };
        let text = self.s.phrases.words.claim_valid.clone();
        self.say(out, text, Priority::Result);
        self.end_game(
            Ending {
                winner: None,
                reason,
            },
            out,
        );
        true
    }

    /// 9.5b: the game goes on; the profile's penalty.
    fn wrong_claim(&mut self, color: Color, out: &mut Vec<Event>) {
        let text = self.s.phrases.words.claim_invalid.clone();
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
    }

    pub(super) fn resign(&mut self, out: &mut Vec<Event>) {
        // (A player may resign in either player's turn.)
        let loser = self.actor().unwrap_or(self.game.pos.turn());
        self.end_game(
            Ending {
                winner: Some(!loser),
                reason: EndReason::Resignation,
            },
            out,
        );
    }

    pub(super) fn flag_falls(&mut self, out: &mut Vec<Event>) {
        let Some(flagged) = self.clock.as_ref().and_then(|c| c.running()) else {
            return;
        };
        // 1997 Art. 6.9, 2005 Art. 6.10: a draw when the opponent could not mate by any series
        // of legal moves; 1997 blitz (C4): when he has no mating potential.
        let winner = self.can_win(!flagged).then_some(!flagged);
        self.end_game(
            Ending {
                winner,
                reason: EndReason::TimeForfeit,
            },
            out,
        );
    }

    pub(super) fn end_game(&mut self, ending: Ending, out: &mut Vec<Event>) {
        self.game.ending = Some(ending);
        self.phase = Phase::Over;
        self.sealing = None;
        self.alt = None;
        self.mismatch.due = None;
        self.draw_offer = None;
        self.claim_with_move = None;
        self.win_claim = None;
        self.emit(
            out,
            EventKind::GameOver {
                result: ending.result(),
                reason: ending.reason,
            },
        );
        let text = ending.say(&self.s.phrases);
        self.say(out, text, Priority::Result);
        if let Some(clock) = &mut self.clock {
            clock.stop(self.now);
        }
        self.emit_clock(out);
    }
}
