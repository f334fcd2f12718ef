//! The simulated board: turns a game into the lifts and placements people make, in the orders
//! people use, with contact bounce and sensor quirks when asked. The demo, the tests and the
//! benchmark all play games through it.

use shakmaty::{Bitboard, CastlingSide, Chess, File, Move, Position, Rank, Role, Square};

use crate::engine::debounce::{EMPTY, OCCUPIED};
use crate::engine::{Button, Millis, Reading};

/// One input of the simulated board, at an absolute time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimInput {
    Reading(Reading),
    Press(Button),
    /// The board's link goes and comes back (a cable pulled, a board switched off).
    Link(crate::engine::LinkState),
}

/// How the simulated players handle their pieces.
#[derive(Clone, Debug)]
pub struct Gestures {
    /// Seed of the variations; the same seed gives the same gestures.
    pub seed: u64,
    /// Vary the physical order of captures, en passant, castling and promotion.
    pub vary_order: bool,
    /// Add contact bounce (flickers shorter than the debounce time).
    pub bounce: bool,
    /// Sometimes report the new square before the old one, slide pieces over squares, and
    /// send whole-board frames instead of single squares.
    pub quirks: bool,
}

impl Default for Gestures {
    fn default() -> Gestures {
        Gestures {
            seed: 1,
            vary_order: false,
            bounce: false,
            quirks: false,
        }
    }
}

/// A small deterministic generator (SplitMix64): no dependency, same sequence everywhere.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

struct Writer<'a> {
    g: &'a Gestures,
    rng: Rng,
    t: Millis,
    occ: Bitboard,
    out: Vec<(Millis, SimInput)>,
}

impl Writer<'_> {
    fn gap(&mut self, lo: u64, hi: u64) {
        self.t += self.rng.range(lo, hi);
    }

    fn square(&mut self, sq: Square, occupied: bool) {
        if self.g.bounce && self.rng.chance(30) {
            // The switch chatters before it settles.
            let was = self.occ.contains(sq);
            self.out.push((self.t, read(sq, occupied)));
            self.t += self.rng.range(1, 4);
            self.out.push((self.t, read(sq, was)));
            self.t += self.rng.range(1, 4);
        }
        self.occ.set(sq, occupied);
        self.out.push((self.t, read(sq, occupied)));
    }

    fn lift(&mut self, sq: Square) {
        self.square(sq, false);
    }

    fn place(&mut self, sq: Square) {
        self.square(sq, true);
    }

    /// Several changes seen at once in one whole-board frame.
    fn frame(&mut self, lifted: &[Square], placed: &[Square]) {
        for sq in lifted {
            self.occ.discard(*sq);
        }
        for sq in placed {
            self.occ.add(*sq);
        }
        self.out
            .push((self.t, SimInput::Reading(Reading::occupancy(self.occ.0))));
    }

    fn press(&mut self, b: Button) {
        self.out.push((self.t, SimInput::Press(b)));
    }
}

fn read(sq: Square, occupied: bool) -> SimInput {
    SimInput::Reading(Reading::Square(sq, if occupied { OCCUPIED } else { EMPTY }))
}

/// Squares strictly between two squares on a line (empty for knight jumps).
fn between(from: Square, to: Square) -> Vec<Square> {
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

/// The physical gestures of a whole game from `start`, with absolute times from `t0`.
pub fn game_inputs(
    start: &Chess,
    moves: &[Move],
    g: &Gestures,
    t0: Millis,
) -> Vec<(Millis, SimInput)> {
    let mut w = Writer {
        g,
        rng: Rng::new(g.seed),
        t: t0,
        occ: start.board().occupied(),
        out: Vec::new(),
    };
    let mut pos = start.clone();
    for &m in moves {
        w.gap(400, 900);
        move_gestures(&mut w, &pos, m);
        // Let a slide's settle time and any promotion choice pass before the next player.
        w.gap(400, 500);
        pos.play_unchecked(m);
    }
    w.out
}

fn move_gestures(w: &mut Writer, pos: &Chess, m: Move) {
    let turn = pos.turn();
    let vary = w.g.vary_order;
    let quirks = w.g.quirks;
    match m {
        Move::Normal {
            from,
            to,
            capture,
            promotion,
            role,
        } => {
            if let Some(p) = promotion {
                // How the piece is chosen: 0 button first, 1 button after, 2 the timeout (queen).
                let how = match (vary, p) {
                    (false, Role::Queen) => 2,
                    (false, _) => 1,
                    (true, Role::Queen) => w.rng.range(0, 2),
                    (true, _) => w.rng.range(0, 1),
                };
                if how == 0 {
                    w.press(Button::Promote(p));
                    w.gap(100, 300);
                }
                carry(w, from, to, capture.is_some(), role, false);
                if vary && w.rng.chance(50) {
                    // Swap the pawn for the new piece on the promotion square.
                    w.gap(300, 700);
                    w.lift(to);
                    w.gap(500, 1500);
                    w.place(to);
                }
                match how {
                    1 => {
                        w.gap(200, 800);
                        w.press(Button::Promote(p));
                    }
                    2 => w.gap(3100, 3300),
                    _ => {}
                }
            } else {
                carry(w, from, to, capture.is_some(), role, quirks);
            }
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            match if vary { w.rng.range(0, 2) } else { 2 } {
                0 => {
                    w.lift(victim);
                    w.gap(150, 400);
                    w.lift(from);
                    w.gap(150, 400);
                    w.place(to);
                }
                1 => {
                    w.lift(from);
                    w.gap(150, 400);
                    w.lift(victim);
                    w.gap(150, 400);
                    w.place(to);
                }
                _ => {
                    w.lift(from);
                    w.gap(150, 400);
                    w.place(to);
                    w.gap(150, 400);
                    w.lift(victim);
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
            if vary && w.rng.chance(50) {
                w.lift(king);
                w.gap(100, 300);
                w.lift(rook);
                w.gap(100, 300);
                w.place(king_to);
                w.gap(100, 300);
                w.place(rook_to);
            } else {
                w.lift(king);
                w.gap(150, 400);
                w.place(king_to);
                w.gap(150, 400);
                w.lift(rook);
                w.gap(150, 400);
                w.place(rook_to);
            }
        }
        Move::Put { .. } => {}
    }
}

/// Carries a piece from `from` to `to`, removing a captured piece first or second.
fn carry(w: &mut Writer, from: Square, to: Square, capture: bool, role: Role, quirks: bool) {
    if capture {
        if w.g.vary_order && w.rng.chance(50) {
            w.lift(to);
            w.gap(150, 400);
            w.lift(from);
        } else {
            w.lift(from);
            w.gap(150, 400);
            w.lift(to);
        }
        w.gap(150, 400);
        w.place(to);
        return;
    }
    if quirks {
        match w.rng.range(0, 5) {
            0 => {
                // The board scans the new square before the old one.
                w.place(to);
                w.gap(40, 80);
                w.lift(from);
                return;
            }
            1 => {
                // One frame shows the whole move.
                w.frame(&[from], &[to]);
                return;
            }
            2 if matches!(role, Role::Queen | Role::Rook | Role::Bishop) => {
                // Slid over the squares on the way, each seen for a moment.
                w.lift(from);
                for sq in between(from, to) {
                    w.gap(50, 70);
                    w.place(sq);
                    w.gap(50, 70);
                    w.lift(sq);
                }
                w.gap(50, 70);
                w.place(to);
                return;
            }
            _ => {}
        }
    }
    w.lift(from);
    w.gap(150, 600);
    w.place(to);
}

/// Plays simulated inputs through a fresh engine in simulated time, starting a game from
/// `start` at time 0, and lets `tail` milliseconds pass after the last input.
pub fn run(
    settings: crate::engine::Settings,
    start: &Chess,
    inputs: &[(Millis, SimInput)],
    tail: Millis,
) -> (crate::engine::Engine, Vec<crate::engine::Event>) {
    let mut engine = crate::engine::Engine::new(settings);
    let mut out = Vec::new();
    engine.new_game(0, start.clone(), true, &mut out);
    let mut end = 0;
    for (t, input) in inputs {
        match input {
            SimInput::Reading(r) => engine.reading(*t, r.clone(), &mut out),
            SimInput::Press(b) => engine.press(*t, *b, &mut out),
            SimInput::Link(l) => engine.link(*t, *l, &mut out),
        }
        end = end.max(*t);
    }
    engine.advance(end + tail, &mut out);
    (engine, out)
}
