//! The choreography rendered as timed sensor readings, for the in-process board (the demo,
//! `run --board sim:`, the tests and the benchmarks): the board's quirks are added here
//! (contact bounce, lost readings, pulled cables), and the people's tempo.

use shakmaty::{Bitboard, Chess, Move, Piece, Position, Square};

use super::gestures::{self, Hands, Manner};
use super::Rng;
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
pub use super::gestures::SHORT_VICTIM_LIFT_PERCENT;
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

impl Hands for Writer<'_> {
    fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    fn begin_move(&mut self) {
        self.maybe_pull();
        match self.g.tempo {
            // The opponent answers as soon as the mover's last step is done.
            Some(tempo) => self.gap(tempo.reply_ms.0, tempo.reply_ms.1),
            None => self.gap(400, 900),
        }
    }

    fn end_move(&mut self) {
        if self.g.tempo.is_none() {
            // Let a slide's settle time and any promotion choice pass before the next player.
            self.gap(400, 500);
        }
    }

    /// `lo..=hi` ms at the leisurely tempo, the tempo's step otherwise.
    fn step(&mut self, lo: u64, hi: u64) {
        let (lo, hi) = self.g.tempo.map_or((lo, hi), |t| t.step_ms);
        self.gap(lo, hi);
    }

    fn gap(&mut self, lo: u64, hi: u64) {
        self.t += self.rng.range(lo, hi);
    }

    fn lift(&mut self, sq: Square, _: Piece) {
        self.square(sq, false);
    }

    fn place(&mut self, sq: Square, _: Piece) {
        self.square(sq, true);
    }

    fn frame(&mut self, lifted: &[Square], placed: &[(Square, Piece)]) {
        self.sync_link();
        self.occ = gestures::after(self.occ, lifted, placed);
        self.send(whole(self.occ));
    }

    fn sweep(&mut self, sq: Square, _: Piece) {
        self.sync_link();
        self.occ.discard(sq);
        self.send(read(sq, false));
        self.t += self.rng.range(4, 15);
        self.occ.add(sq);
        self.send(read(sq, true));
    }

    fn press(&mut self, b: Button) {
        self.out.push((self.t, SimInput::Press(b)));
    }

    fn await_promotion(&mut self) {
        // At the leisurely tempo the timeout passes before the opponent moves.
        if self.g.tempo.is_none() {
            self.gap(3100, 3300);
        }
    }
}

impl Writer<'_> {
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
    gestures::game(&mut w, start, moves, &g.manner());
    w.finish()
}

impl Gestures {
    /// The choreography's part of these gestures.
    pub fn manner(&self) -> Manner {
        Manner {
            vary_order: self.vary_order,
            vary_captures: false,
            quirks: self.quirks,
            scan_order: false,
            queen_by_timeout: true,
            sweeps: self.losses,
        }
    }
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
