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
    /// How fast the players are. `None`: a move every second or two, each left standing until
    /// the engine has surely taken it (the settle and promotion times) before the reply begins.
    pub tempo: Option<Tempo>,
    /// Sensor losses: a lift or placement lost now and then (seen again in the board's next
    /// whole-board report), and captured pieces lifted more briefly than the debounce time.
    pub losses: bool,
    /// Pulled cables: now and then the board's link is lost for a second or three while the
    /// players go on; when it comes back, the board reports its whole board.
    pub pulls: bool,
}

impl Default for Gestures {
    fn default() -> Gestures {
        Gestures {
            seed: 1,
            vary_order: false,
            bounce: false,
            quirks: false,
            tempo: None,
            losses: false,
            pulls: false,
        }
    }
}

/// People's tempo: how soon the opponent answers, and how far apart the steps of a move are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tempo {
    /// The opponent's first lift comes this long after the mover's last step (lo..=hi ms).
    pub reply_ms: (Millis, Millis),
    /// Lifts and placements of one move are this far apart (lo..=hi ms).
    pub step_ms: (Millis, Millis),
}

impl Tempo {
    /// People playing quickly: replies from `min_reply_ms` to 700 ms after the release, steps
    /// 60 to 900 ms apart.
    pub fn people(min_reply_ms: Millis) -> Tempo {
        Tempo {
            reply_ms: (min_reply_ms, min_reply_ms.max(700)),
            step_ms: (60, 900),
        }
    }
}

/// How often a sensor loses a reading, in thousandths (1%).
pub const LOST_READING_PER_MILLE: u64 = 10;
/// How often a captured piece is lifted and replaced more briefly than the debounce time (5%).
pub const SHORT_VICTIM_LIFT_PERCENT: u64 = 5;
/// A board that lost a reading shows it again in its next report of the whole board: its
/// next reading (a DIY or ChessLink board reports the whole board at every change, a DGT
/// board is read whole when it has changed), or at the latest this long after the loss (a DIY
/// board reports its whole board at least once a second).
pub const REPORT_AFTER_LOSS_MS: Millis = 1000;
/// How often a cable is pulled at the start of a move, in percent (with `pulls`).
pub const PULL_PERCENT: u64 = 5;
/// How long a pulled cable stays out, in ms (`lo..=hi`).
pub const PULL_MS: (Millis, Millis) = (500, 1500);
/// A board back on its link reports its whole board this long after the link (`lo..=hi` ms).
pub const REPORT_AFTER_LINK_MS: (Millis, Millis) = (20, 120);

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
    /// The board as it really is (what the sensors would report without losses).
    occ: Bitboard,
    out: Vec<(Millis, SimInput)>,
    /// A reading was lost: the board's next reading is a whole-board report, and one comes by
    /// this time at the latest.
    report_due: Option<Millis>,
    /// A pulled cable: the link is away from the first time to the second.
    outage: Option<(Millis, Millis)>,
    /// The link's loss for `outage` has been sent.
    outage_begun: bool,
}

impl Writer<'_> {
    /// A pause of the leisurely tempo (`lo..=hi` ms).
    fn gap(&mut self, lo: u64, hi: u64) {
        self.t += self.rng.range(lo, hi);
    }

    /// The pause between two steps of one move: `lo..=hi` ms at the leisurely tempo, the
    /// tempo's step otherwise.
    fn step(&mut self, lo: u64, hi: u64) {
        let (lo, hi) = self.g.tempo.map_or((lo, hi), |t| t.step_ms);
        self.gap(lo, hi);
    }

    /// What the board sends, unless the sensor loses it. After a lost reading the board's
    /// next report shows its whole board.
    fn send(&mut self, input: SimInput) {
        if !matches!(input, SimInput::Reading(_)) {
            self.out.push((self.t, input));
            return;
        }
        self.sync_link();
        if self.outage.is_some_and(|(from, _)| from <= self.t) {
            // Nobody hears the board: the reading is lost, the board is seen again whole.
            self.report_due = None;
            return;
        }
        self.report_overdue();
        if self.g.losses && self.rng.next_u64() % 1000 < LOST_READING_PER_MILLE {
            self.report_due.get_or_insert(self.t + REPORT_AFTER_LOSS_MS);
            return;
        }
        let input = match self.report_due.take() {
            Some(_) => whole(self.occ_now(&input)),
            None => input,
        };
        self.out.push((self.t, input));
    }

    /// The board as this reading shows it (the real board, with the reading's own state).
    fn occ_now(&self, input: &SimInput) -> Bitboard {
        let mut occ = self.occ;
        if let SimInput::Reading(Reading::Square(sq, state)) = input {
            occ.set(*sq, *state != EMPTY);
        }
        occ
    }

    /// Pulls the cable now and then at the start of a move (with `pulls`), for a while.
    fn maybe_pull(&mut self) {
        if self.g.pulls && self.outage.is_none() && self.rng.chance(PULL_PERCENT) {
            let from = self.t + self.rng.range(0, 1500);
            let to = from + self.rng.range(PULL_MS.0, PULL_MS.1);
            self.outage = Some((from, to));
            self.outage_begun = false;
        }
    }

    /// The link's changes due by now, with the board as it is (call before changing it): its
    /// loss, and its return with the whole board reported.
    fn sync_link(&mut self) {
        let Some((from, to)) = self.outage else {
            return;
        };
        if !self.outage_begun && from <= self.t {
            self.outage_begun = true;
            self.out
                .push((from, SimInput::Link(crate::engine::LinkState::Lost)));
        }
        if self.outage_begun && to <= self.t {
            self.outage = None;
            self.out
                .push((to, SimInput::Link(crate::engine::LinkState::Reconnected)));
            let report = to
                + self
                    .rng
                    .range(REPORT_AFTER_LINK_MS.0, REPORT_AFTER_LINK_MS.1);
            self.out.push((report.min(self.t), whole(self.occ)));
        }
    }

    /// The once-a-second report after a loss, when no reading came before it.
    fn report_overdue(&mut self) {
        if let Some(due) = self.report_due.filter(|d| *d <= self.t) {
            self.report_due = None;
            self.out.push((due, whole(self.occ)));
        }
    }

    fn square(&mut self, sq: Square, occupied: bool) {
        self.sync_link();
        if self.g.bounce && self.rng.chance(30) {
            // The switch chatters before it settles.
            let was = self.occ.contains(sq);
            self.send(read(sq, occupied));
            self.t += self.rng.range(1, 4);
            self.send(read(sq, was));
            self.t += self.rng.range(1, 4);
        }
        self.occ.set(sq, occupied);
        self.send(read(sq, occupied));
    }

    fn lift(&mut self, sq: Square) {
        self.square(sq, false);
    }

    fn place(&mut self, sq: Square) {
        self.square(sq, true);
    }

    /// Several changes seen at once in one whole-board frame.
    fn frame(&mut self, lifted: &[Square], placed: &[Square]) {
        self.sync_link();
        for sq in lifted {
            self.occ.discard(*sq);
        }
        for sq in placed {
            self.occ.add(*sq);
        }
        self.send(whole(self.occ));
    }

    fn press(&mut self, b: Button) {
        self.out.push((self.t, SimInput::Press(b)));
    }

    /// The inputs, with the report a loss at the very end still owes.
    fn finish(mut self) -> Vec<(Millis, SimInput)> {
        if let Some((_, to)) = self.outage {
            // The cable is plugged in again after the last move.
            self.t = self.t.max(to);
            self.sync_link();
        }
        if let Some(due) = self.report_due.take() {
            self.out.push((due.max(self.t), whole(self.occ)));
        }
        self.out
    }
}

fn whole(occ: Bitboard) -> SimInput {
    SimInput::Reading(Reading::occupancy(occ.0))
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
        report_due: None,
        outage: None,
        outage_begun: false,
    };
    let mut pos = start.clone();
    for &m in moves {
        w.maybe_pull();
        match g.tempo {
            // The opponent answers as soon as the mover's last step is done.
            Some(tempo) => w.gap(tempo.reply_ms.0, tempo.reply_ms.1),
            None => w.gap(400, 900),
        }
        move_gestures(&mut w, &pos, m);
        if g.tempo.is_none() {
            // Let a slide's settle time and any promotion choice pass before the next player.
            w.gap(400, 500);
        }
        pos.play_unchecked(m);
    }
    w.finish()
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
                // How the piece is chosen: 0 button first, 1 button after, 2 the timeout
                // (queen), or at people's tempo the opponent's reply (the default, queen).
                let how = match (vary, p) {
                    (false, Role::Queen) => 2,
                    (false, _) => 1,
                    (true, Role::Queen) => w.rng.range(0, 2),
                    (true, _) => w.rng.range(0, 1),
                };
                if how == 0 {
                    w.press(Button::Promote(p));
                    w.step(100, 300);
                }
                carry(w, from, to, capture.is_some(), role, false);
                if vary && w.rng.chance(50) {
                    // Swap the pawn for the new piece on the promotion square.
                    w.step(300, 700);
                    w.lift(to);
                    w.step(500, 1500);
                    w.place(to);
                }
                match how {
                    1 => {
                        w.step(200, 800);
                        w.press(Button::Promote(p));
                    }
                    2 if w.g.tempo.is_none() => w.gap(3100, 3300),
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
                    w.step(150, 400);
                    w.lift(from);
                    w.step(150, 400);
                    w.place(to);
                }
                1 => {
                    w.lift(from);
                    w.step(150, 400);
                    w.lift(victim);
                    w.step(150, 400);
                    w.place(to);
                }
                _ => {
                    w.lift(from);
                    w.step(150, 400);
                    w.place(to);
                    w.step(150, 400);
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
            if quirks && w.rng.chance(20) {
                // One frame shows the whole castling.
                w.frame(&[king, rook], &[king_to, rook_to]);
            } else if vary && w.rng.chance(50) {
                w.lift(king);
                w.step(100, 300);
                w.lift(rook);
                w.step(100, 300);
                w.place(king_to);
                w.step(100, 300);
                w.place(rook_to);
            } else {
                w.lift(king);
                w.step(150, 400);
                w.place(king_to);
                w.step(150, 400);
                w.lift(rook);
                w.step(150, 400);
                w.place(rook_to);
            }
        }
        Move::Put { .. } => {}
    }
}

/// Carries a piece from `from` to `to`, removing a captured piece first or second.
fn carry(w: &mut Writer, from: Square, to: Square, capture: bool, role: Role, quirks: bool) {
    if capture {
        if w.g.losses && w.rng.chance(SHORT_VICTIM_LIFT_PERCENT) {
            // The captured piece is swept off and the capturing piece set down in one motion:
            // its square is empty for less than the debounce time.
            w.lift(from);
            w.step(150, 400);
            w.sync_link();
            w.occ.discard(to);
            w.send(read(to, false));
            w.t += w.rng.range(4, 15);
            w.occ.add(to);
            w.send(read(to, true));
            return;
        }
        if w.g.vary_order && w.rng.chance(50) {
            w.lift(to);
            w.step(150, 400);
            w.lift(from);
        } else {
            w.lift(from);
            w.step(150, 400);
            w.lift(to);
        }
        w.step(150, 400);
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
    w.step(150, 600);
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

/// How well a game played on the simulated board was read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// The moves of the game.
    pub moves: usize,
    /// The moves the record has right, from the first up to the first one it has wrong.
    pub moves_exact: usize,
    /// The record is the game, move for move, and nothing more.
    pub exact: bool,
    /// The record has as many moves as the game (right or not): the reader never lost its
    /// place for good.
    pub to_the_end: bool,
}

/// Compares a record with the game that was played.
pub fn compare(played: &[Move], recorded: &[Move]) -> Read {
    let moves_exact = played
        .iter()
        .zip(recorded)
        .take_while(|(a, b)| a == b)
        .count();
    Read {
        moves: played.len(),
        moves_exact,
        exact: played == recorded,
        to_the_end: recorded.len() >= played.len(),
    }
}

/// Plays a game on the simulated board with `gestures` and says how well the engine read it.
pub fn read_game(
    settings: &crate::engine::Settings,
    start: &Chess,
    moves: &[Move],
    gestures: &Gestures,
) -> Read {
    let inputs = game_inputs(start, moves, gestures, 1000);
    let (engine, _) = run(settings.clone(), start, &inputs, 10_000);
    let recorded: Vec<Move> = engine.game().plies.iter().map(|p| p.m).collect();
    compare(moves, &recorded)
}

/// Appends a game to a `chessboardd replay` script (docs/replay.md): `setup` of `start` at
/// `t_setup`, then every input at its absolute time. A link change, which scripts cannot say,
/// becomes a comment.
pub fn write_script(
    out: &mut String,
    start: &Chess,
    t_setup: Millis,
    inputs: &[(Millis, SimInput)],
) {
    use std::fmt::Write as _;
    if *start == Chess::default() {
        let _ = writeln!(out, "@{t_setup} setup startpos");
    } else {
        let _ = writeln!(
            out,
            "@{t_setup} setup fen {}",
            crate::engine::game::fen_of(start)
        );
    }
    for (t, input) in inputs {
        let _ = match input {
            SimInput::Press(b) => writeln!(out, "@{t} press {}", b.name()),
            SimInput::Link(l) => writeln!(out, "# @{t} link {}", l.name()),
            SimInput::Reading(Reading::Square(sq, state)) => {
                let verb = if *state == EMPTY { "lift" } else { "place" };
                writeln!(out, "@{t} {verb} {sq}")
            }
            SimInput::Reading(Reading::Frame(states)) => {
                let mask = states
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s != EMPTY)
                    .fold(0u64, |m, (i, _)| m | 1 << i);
                writeln!(out, "@{t} occupancy {mask:016x}")
            }
        };
    }
}

/// How well the engine reads games at people's tempo, for one minimum reply time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TempoRow {
    pub min_reply_ms: Millis,
    pub games: usize,
    pub games_exact: usize,
    /// Games recorded to their end, every move right or not (none stalled).
    pub games_to_the_end: usize,
    pub moves: usize,
    pub moves_exact: usize,
}

/// What goes wrong between the board and the engine, besides people's quirks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Sensor readings lost now and then (see [`Gestures::losses`]).
    pub losses: bool,
    /// Cables pulled while the players go on (see [`Gestures::pulls`]).
    pub pulls: bool,
}

impl Faults {
    pub const NONE: Faults = Faults {
        losses: false,
        pulls: false,
    };
    pub const LOSSES: Faults = Faults {
        losses: true,
        pulls: false,
    };
    pub const PULLS: Faults = Faults {
        losses: false,
        pulls: true,
    };
}

/// The gestures of game number `i` at people's tempo: every physical order, bounce and sensor
/// quirk, the opponent answering from `min_reply_ms` on, and the `faults` asked for.
pub fn people(i: usize, min_reply_ms: Millis, faults: Faults) -> Gestures {
    Gestures {
        seed: i as u64,
        vary_order: true,
        bounce: true,
        quirks: true,
        tempo: Some(Tempo::people(min_reply_ms)),
        losses: faults.losses,
        pulls: faults.pulls,
    }
}

/// Plays every game at people's tempo with each minimum reply time, and counts what the engine
/// read exactly (the README's table).
pub fn tempo_table(
    settings: &crate::engine::Settings,
    games: &[(Chess, Vec<Move>)],
    min_replies: &[Millis],
    faults: Faults,
) -> Vec<TempoRow> {
    min_replies
        .iter()
        .map(|&min| {
            let mut row = TempoRow {
                min_reply_ms: min,
                ..TempoRow::default()
            };
            for (i, (start, moves)) in games.iter().enumerate() {
                let read = read_game(settings, start, moves, &people(i, min, faults));
                row.games += 1;
                row.games_exact += usize::from(read.exact);
                row.games_to_the_end += usize::from(read.to_the_end);
                row.moves += read.moves;
                row.moves_exact += read.moves_exact;
            }
            row
        })
        .collect()
}

/// A `chessboardd replay` script of `games` played one after the other, game `i` with the
/// gestures `gestures(i)` gives: before each, a comment with its moves in UCI
/// (`# game N: e2e4 e7e5 ...`), then its `setup` and inputs.
pub fn games_script(games: &[(Chess, Vec<Move>)], gestures: impl Fn(usize) -> Gestures) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut t: Millis = 0;
    for (i, (start, moves)) in games.iter().enumerate() {
        let ucis: Vec<String> = moves
            .iter()
            .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect();
        let _ = writeln!(out, "# game {}: {}", i + 1, ucis.join(" "));
        let inputs = game_inputs(start, moves, &gestures(i), t + 1000);
        write_script(&mut out, start, t, &inputs);
        // (Room for what the last move left waiting: the promotion timeout, a capture in hand.)
        t = inputs.last().map_or(t + 1000, |(u, _)| *u) + 5000;
    }
    out
}
