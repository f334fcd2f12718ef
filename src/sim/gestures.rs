//! The choreography: how people move their pieces for a move, written once. Every human order
//! and quirk is here (which piece of a capture is lifted first, the orders of castling and en
//! passant, how a promotion piece is chosen, the new square seen before the old one, a whole
//! move in one frame, a piece slid over the squares on its way, a captured piece swept off in
//! one motion), with the identity of every piece handled. Pure: it tells a [`Hands`] what the
//! people do, and the hands render it, as timed sensor readings (`sensors`) or as a board's
//! protocol bytes on a pseudo-terminal (`pty`). The pauses and every random choice come from
//! the hands' generator, in the order written here, so that a seed gives the same game.

use shakmaty::{Bitboard, CastlingSide, Chess, File, Move, Piece, Position, Rank, Role, Square};

use super::Rng;
use crate::engine::Button;

/// What the people do, as the choreography tells it; a renderer decides what a board makes of
/// it and when.
pub trait Hands {
    /// The generator every choice and pause is drawn from.
    fn rng(&mut self) -> &mut Rng;
    /// The player to move begins a move (after the opponent's).
    fn begin_move(&mut self);
    /// The move is done.
    fn end_move(&mut self);
    /// The pause between two steps of one move: `lo..=hi` ms at a leisurely tempo.
    fn step(&mut self, lo: u64, hi: u64);
    /// A pause of `lo..=hi` ms, whatever the tempo.
    fn gap(&mut self, lo: u64, hi: u64);
    /// `piece` is lifted from `sq`.
    fn lift(&mut self, sq: Square, piece: Piece);
    /// `piece` is set down on `sq`.
    fn place(&mut self, sq: Square, piece: Piece);
    /// Several changes seen at once in one whole-board report.
    fn frame(&mut self, lifted: &[Square], placed: &[(Square, Piece)]);
    /// A captured piece is swept off `sq` and `piece` set down there in one motion: the square
    /// is empty for less than the debounce time.
    fn sweep(&mut self, sq: Square, piece: Piece);
    fn press(&mut self, b: Button);
    /// The promotion piece is left to the promotion timeout (a queen).
    fn await_promotion(&mut self);
}

/// Which of the people's orders and quirks the choreography uses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Manner {
    /// Vary the physical order of captures, en passant, castling and promotion.
    pub vary_order: bool,
    /// Vary which piece of a capture is lifted first (also with `vary_order`).
    pub vary_captures: bool,
    /// Sensor quirks of a scanning board: the new square before the old one, a whole move in one
    /// frame, slides over the squares on the way.
    pub quirks: bool,
    /// Only the first of those quirks, three moves in ten (a DGT board's scan order).
    pub scan_order: bool,
    /// A queen is chosen by letting the promotion time pass, not by a button.
    pub queen_by_timeout: bool,
    /// A captured piece is now and then swept off in one motion ([`SHORT_VICTIM_LIFT_PERCENT`]).
    pub sweeps: bool,
}

/// How often a captured piece is lifted and replaced more briefly than the debounce time (5%).
pub const SHORT_VICTIM_LIFT_PERCENT: u64 = 5;

/// Squares strictly between two squares on a line (empty for knight jumps).
pub fn between(from: Square, to: Square) -> Vec<Square> {
    let (ff, fr) = (u32::from(from.file()) as i32, u32::from(from.rank()) as i32);
    let (tf, tr) = (u32::from(to.file()) as i32, u32::from(to.rank()) as i32);
    let (df, dr) = (tf - ff, tr - fr);
    if !(df == 0 || dr == 0 || df.abs() == dr.abs()) {
        return Vec::new();
    }
    let n = df.abs().max(dr.abs());
    (1..n)
        .map(|i| {
            Square::from_coords(
                File::new((ff + df.signum() * i) as u32),
                Rank::new((fr + dr.signum() * i) as u32),
            )
        })
        .collect()
}

/// The gestures of a whole game from `start`.
pub fn game(h: &mut impl Hands, start: &Chess, moves: &[Move], manner: &Manner) {
    let mut pos = start.clone();
    for &m in moves {
        h.begin_move();
        one_move(h, &pos, m, manner);
        h.end_move();
        pos.play_unchecked(m);
    }
}

/// The gestures of one move in `pos`.
pub fn one_move(h: &mut impl Hands, pos: &Chess, m: Move, manner: &Manner) {
    let turn = pos.turn();
    let vary = manner.vary_order;
    let piece = |role| Piece { color: turn, role };
    match m {
        Move::Normal {
            from,
            to,
            capture,
            promotion,
            role,
        } => {
            let victim = capture.map(|r| Piece {
                color: !turn,
                role: r,
            });
            if let Some(p) = promotion {
                // How the piece is chosen: 0 button first, 1 button after, 2 the timeout
                // (queen), or at people's tempo the opponent's reply (the default, queen).
                let how = match (vary, p) {
                    (false, Role::Queen) if manner.queen_by_timeout => 2,
                    (false, _) => 1,
                    (true, Role::Queen) => h.rng().range(0, 2),
                    (true, _) => h.rng().range(0, 1),
                };
                if how == 0 {
                    h.press(Button::Promote(p));
                    h.step(100, 300);
                }
                // (On a board that identifies pieces the new piece is the one set down; a swap
                // is then the new piece lifted and set down again.)
                carry(h, from, to, victim, piece(role), piece(p), false, manner);
                if vary && h.rng().chance(50) {
                    // Swap the pawn for the new piece on the promotion square.
                    h.step(300, 700);
                    h.lift(to, piece(p));
                    h.step(500, 1500);
                    h.place(to, piece(p));
                }
                match how {
                    1 => {
                        h.step(200, 800);
                        h.press(Button::Promote(p));
                    }
                    2 => h.await_promotion(),
                    _ => {}
                }
            } else {
                let p = piece(role);
                carry(h, from, to, victim, p, p, manner.quirks, manner);
            }
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            let (pawn, theirs) = (
                piece(Role::Pawn),
                Piece {
                    color: !turn,
                    role: Role::Pawn,
                },
            );
            match if vary { h.rng().range(0, 2) } else { 2 } {
                0 => {
                    h.lift(victim, theirs);
                    h.step(150, 400);
                    h.lift(from, pawn);
                    h.step(150, 400);
                    h.place(to, pawn);
                }
                1 => {
                    h.lift(from, pawn);
                    h.step(150, 400);
                    h.lift(victim, theirs);
                    h.step(150, 400);
                    h.place(to, pawn);
                }
                _ => {
                    h.lift(from, pawn);
                    h.step(150, 400);
                    h.place(to, pawn);
                    h.step(150, 400);
                    h.lift(victim, theirs);
                }
            }
        }
        Move::Castle { king, rook } => {
            let side = if rook > king {
                CastlingSide::KingSide
            } else {
                CastlingSide::QueenSide
            };
            let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
            let (k, r) = (piece(Role::King), piece(Role::Rook));
            if manner.quirks && h.rng().chance(20) {
                // One frame shows the whole castling.
                h.frame(&[king, rook], &[(king_to, k), (rook_to, r)]);
            } else if vary && h.rng().chance(50) {
                h.lift(king, k);
                h.step(100, 300);
                h.lift(rook, r);
                h.step(100, 300);
                h.place(king_to, k);
                h.step(100, 300);
                h.place(rook_to, r);
            } else {
                h.lift(king, k);
                h.step(150, 400);
                h.place(king_to, k);
                h.step(150, 400);
                h.lift(rook, r);
                h.step(150, 400);
                h.place(rook_to, r);
            }
        }
        Move::Put { .. } => {}
    }
}

/// Carries `piece` from `from` to `to`, where it is set down as `placed` (a promotion's new
/// piece), removing a captured `victim` first or second.
#[allow(clippy::too_many_arguments)]
fn carry(
    h: &mut impl Hands,
    from: Square,
    to: Square,
    victim: Option<Piece>,
    piece: Piece,
    placed: Piece,
    quirks: bool,
    manner: &Manner,
) {
    if let Some(victim) = victim {
        if manner.sweeps && h.rng().chance(SHORT_VICTIM_LIFT_PERCENT) {
            // The captured piece is swept off and the capturing piece set down in one motion.
            h.lift(from, piece);
            h.step(150, 400);
            h.sweep(to, placed);
            return;
        }
        if (manner.vary_order || manner.vary_captures) && h.rng().chance(50) {
            h.lift(to, victim);
            h.step(150, 400);
            h.lift(from, piece);
        } else {
            h.lift(from, piece);
            h.step(150, 400);
            h.lift(to, victim);
        }
        h.step(150, 400);
        h.place(to, placed);
        return;
    }
    let scan_first = !quirks && manner.scan_order && h.rng().chance(30);
    if quirks || scan_first {
        match if scan_first { 0 } else { h.rng().range(0, 5) } {
            0 => {
                // The board scans the new square before the old one.
                h.place(to, placed);
                h.gap(40, 80);
                h.lift(from, piece);
                return;
            }
            1 => {
                // One frame shows the whole move.
                h.frame(&[from], &[(to, placed)]);
                return;
            }
            2 if matches!(piece.role, Role::Queen | Role::Rook | Role::Bishop) => {
                // Slid over the squares on the way, each seen for a moment.
                h.lift(from, piece);
                for sq in between(from, to) {
                    h.gap(50, 70);
                    h.place(sq, piece);
                    h.gap(50, 70);
                    h.lift(sq, piece);
                }
                h.gap(50, 70);
                h.place(to, placed);
                return;
            }
            _ => {}
        }
    }
    h.lift(from, piece);
    h.step(150, 600);
    h.place(to, placed);
}

/// The squares a board shows occupied after `lifted` and `placed` (for renderers that keep the
/// occupancy).
pub fn after(mut occ: Bitboard, lifted: &[Square], placed: &[(Square, Piece)]) -> Bitboard {
    for sq in lifted {
        occ.discard(*sq);
    }
    for (sq, _) in placed {
        occ.add(*sq);
    }
    occ
}
