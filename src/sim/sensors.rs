//! The choreography rendered as timed sensor readings, for the in-process board (the demo,
//! `run --board sim:`, the tests and the benchmarks): the board's quirks are added here
//! (contact bounce, and the fault models of [`Faults`]: lost, late and swapped readings, pulled
//! cables), and the people's tempo.

use shakmaty::{Bitboard, Chess, Move, Piece, Position, Square};

use super::faults::{Channel, Due, Faults, Trace, FAULT_PER_MILLE};
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
    /// What goes wrong between the sensors and the host (see [`Faults`]): lost, late and
    /// swapped readings, pulled cables (the link lost for a second or so while the players go
    /// on; when it comes back, the board reports its whole board).
    pub faults: Faults,
}

impl Default for Gestures {
    fn default() -> Gestures {
        Gestures {
            seed: 1,
            vary_order: false,
            bounce: false,
            quirks: false,
            tempo: None,
            faults: Faults::NONE,
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
    /// Every pulled cable's time away (nothing the board sends then is heard).
    outages: Vec<(Millis, Millis)>,
    /// The fault layer (`lost-periodic`, `late`).
    ch: Channel,
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
        self.due_by_now();
        self.sync_link();
        for sq in lifted.iter().chain(placed.iter().map(|(sq, _)| sq)) {
            self.ch.changed(*sq);
        }
        self.occ = gestures::after(self.occ, lifted, placed);
        self.ch.truth(self.t, self.occ);
        self.send(whole(self.ch.shown(self.occ)));
    }

    fn sweep(&mut self, sq: Square, _: Piece) {
        self.due_by_now();
        self.sync_link();
        self.occ.discard(sq);
        self.ch.truth(self.t, self.occ);
        self.send(read(sq, false));
        self.t += self.rng.range(4, 15);
        self.due_by_now();
        self.occ.add(sq);
        self.send(read(sq, true));
        self.ch.truth(self.t, self.occ);
    }

    fn press(&mut self, b: Button) {
        self.due_by_now();
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
    /// What the board sends, unless the sensor loses it (or holds it back). After a reading
    /// lost in `lost-next` the board's next report shows its whole board; one lost in
    /// `lost-periodic` shows in the next periodic frame.
    fn send(&mut self, input: SimInput) {
        if !matches!(input, SimInput::Reading(_)) {
            self.out.push((self.t, input));
            return;
        }
        // A new reading of a square: one of it still held back never comes.
        let held_before = match &input {
            SimInput::Reading(Reading::Square(sq, _)) => self.ch.changed(*sq),
            _ => None,
        };
        self.sync_link();
        if self.outage.is_some_and(|(from, _)| from <= self.t) {
            // Nobody hears the board: the reading is lost, the board is seen again whole.
            self.report_due = None;
            return;
        }
        self.report_overdue();
        if self.g.faults.lost_next && self.rng.next_u64() % 1000 < LOST_READING_PER_MILLE {
            self.report_due.get_or_insert(self.t + REPORT_AFTER_LOSS_MS);
            self.ch.trace.lost.push(self.t);
            return;
        }
        if self.ch.lose(self.t) {
            return;
        }
        let input = match self.report_due.take() {
            Some(_) => whole(self.ch.shown(self.occ_now(&input))),
            None => input,
        };
        if let SimInput::Reading(Reading::Square(sq, state)) = &input {
            // Until a late reading comes, the board shows the square as it last reported it.
            let occupied = *state != EMPTY;
            let before = held_before.unwrap_or(!occupied);
            if self.ch.delay(self.t, *sq, occupied, before) {
                return;
            }
        }
        self.out.push((self.t, input));
    }

    /// Nothing the board sends at `t` is heard: a cable is pulled.
    fn unheard(&self, t: Millis) -> bool {
        self.outages.iter().any(|(from, to)| *from <= t && t < *to)
    }

    /// Sends the late readings and periodic frames due by now (call before the board changes).
    fn due_by_now(&mut self) {
        self.due_by(self.t);
    }

    fn due_by(&mut self, until: Millis) {
        while let Some((t, due)) = self.ch.next_due(until) {
            if self.unheard(t) {
                continue;
            }
            let input = match due {
                Due::Late(sq, occupied) => read(sq, occupied),
                Due::Frame => whole(self.ch.shown(self.occ)),
            };
            self.out.push((t, input));
        }
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
        if self.g.faults.pulls && self.outage.is_none() && self.rng.chance(PULL_PERCENT) {
            let from = self.t + self.rng.range(0, 1500);
            let to = from + self.rng.range(PULL_MS.0, PULL_MS.1);
            self.outage = Some((from, to));
            self.outages.push((from, to));
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
            self.out
                .push((report.min(self.t), whole(self.ch.shown(self.occ))));
        }
    }

    /// The once-a-second report after a loss, when no reading came before it.
    fn report_overdue(&mut self) {
        if let Some(due) = self.report_due.filter(|d| *d <= self.t) {
            self.report_due = None;
            self.out.push((due, whole(self.ch.shown(self.occ))));
        }
    }

    fn square(&mut self, sq: Square, occupied: bool) {
        self.due_by_now();
        self.sync_link();
        if self.g.bounce && self.rng.chance(30) {
            // The switch chatters before it settles.
            let was = self.occ.contains(sq);
            self.send(read(sq, occupied));
            self.t += self.rng.range(1, 4);
            self.due_by_now();
            self.send(read(sq, was));
            self.t += self.rng.range(1, 4);
            self.due_by_now();
        }
        self.occ.set(sq, occupied);
        self.ch.truth(self.t, self.occ);
        self.send(read(sq, occupied));
    }

    /// The inputs, with the report a loss at the very end still owes, the late readings still
    /// held back, and the periodic frames up to the first after the last of them.
    fn finish(mut self) -> (Vec<(Millis, SimInput)>, Trace) {
        if let Some((_, to)) = self.outage {
            // The cable is plugged in again after the last move.
            self.t = self.t.max(to);
            self.sync_link();
        }
        if let Some(due) = self.report_due.take() {
            self.out
                .push((due.max(self.t), whole(self.ch.shown(self.occ))));
        }
        let faults = self.g.faults;
        if faults.late || faults.lost_periodic {
            let last = self.ch.held_until().unwrap_or(0).max(self.t);
            self.due_by(last);
            if let Some(f) = self.ch.next_frame() {
                self.due_by(f);
            }
        }
        if faults.late || faults.lost_periodic || faults.pulls {
            // In time order: what came due in a pulled cable went in at its time, the link's
            // return before a button pressed while it was away.
            self.out.sort_by_key(|(t, _)| *t);
        }
        (self.out, self.ch.trace)
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
    game_trace(start, moves, g, t0).0
}

/// [`game_inputs`], with what the fault layer did (the late readings, the losses, the periodic
/// frames) and the board as it really was.
pub fn game_trace(
    start: &Chess,
    moves: &[Move],
    g: &Gestures,
    t0: Millis,
) -> (Vec<(Millis, SimInput)>, Trace) {
    let mut ch = Channel::new(g.faults, g.seed, t0, FAULT_PER_MILLE);
    ch.truth(t0, start.board().occupied());
    let mut w = Writer {
        g,
        rng: Rng::new(g.seed),
        t: t0,
        occ: start.board().occupied(),
        out: Vec::new(),
        report_due: None,
        outage: None,
        outage_begun: false,
        outages: Vec::new(),
        ch,
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
            sweeps: self.faults.swaps,
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

#[cfg(test)]
mod tests {
    //! The fault models' generators: what each sends, when, and how often.

    use super::*;
    use crate::sim::faults::LateReading;
    use crate::sim::{people, FRAME_EVERY_MS, LATE_MS};

    fn games(n: usize) -> Vec<(Chess, Vec<Move>)> {
        crate::pgn::parse(include_str!("../../tests/data/games/selfplay-400.pgn"))
            .unwrap()
            .into_iter()
            .take(n)
            .map(|g| (g.start, g.moves))
            .collect()
    }

    /// FNV-1a, 64 bits: a hash that does not change between releases.
    fn fnv(s: &str) -> u64 {
        s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    #[test]
    fn lost_next_and_swaps_give_the_scripts_of_earlier_releases() {
        // The hashes of `bench script --reply-ms MS [--losses] --games 30 selfplay-400.pgn`
        // before the fault models were split (sensor losses were one bool then).
        let games = games(30);
        for (min, faults, hash) in [
            (40, Faults::LOSSES, 0x111b_f85c_29dc_0df0),
            (300, Faults::LOSSES, 0xe663_d4a6_32bb_7f3c),
            (120, Faults::NONE, 0x085a_36c3_b704_e181),
        ] {
            let script = games_script(&games, |i| people(i, min, faults));
            assert_eq!(fnv(&script), hash, "{faults} from {min} ms");
        }
    }

    /// The board as it really was just before `t` (the trace's truth).
    fn truth_before(trace: &Trace, t: Millis) -> Bitboard {
        trace
            .truth
            .iter()
            .take_while(|(u, _)| *u < t)
            .last()
            .unwrap_or(&trace.truth[0])
            .1
    }

    fn square_readings(inputs: &[(Millis, SimInput)]) -> usize {
        inputs
            .iter()
            .filter(|(_, i)| matches!(i, SimInput::Reading(Reading::Square(..))))
            .count()
    }

    /// What a host that applies every reading in order ends up seeing.
    fn seen_at_the_end(start: &Chess, inputs: &[(Millis, SimInput)]) -> Bitboard {
        let mut occ = start.board().occupied();
        for (_, i) in inputs {
            match i {
                SimInput::Reading(Reading::Square(sq, s)) => occ.set(*sq, *s != EMPTY),
                SimInput::Reading(Reading::Frame(states)) => {
                    occ = Bitboard(
                        states
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| **s != EMPTY)
                            .fold(0, |m, (i, _)| m | 1 << i),
                    )
                }
                _ => {}
            }
        }
        occ
    }

    fn frame_at(inputs: &[(Millis, SimInput)], t: Millis) -> Vec<Bitboard> {
        inputs
            .iter()
            .filter(|(u, _)| *u == t)
            .filter_map(|(_, i)| match i {
                SimInput::Reading(r @ Reading::Frame(_)) => Some(seen_at_the_end(
                    &Chess::default(),
                    &[(t, SimInput::Reading(r.clone()))],
                )),
                _ => None,
            })
            .collect()
    }

    fn in_order(inputs: &[(Millis, SimInput)]) -> bool {
        inputs.windows(2).all(|w| w[0].0 <= w[1].0)
    }

    #[test]
    fn late_readings_come_late_never_after_a_change_and_with_others_in_between() {
        let (mut late, mut delivered, mut with_others, mut readings) = (0, 0, 0, 0);
        for min in [40, 300] {
            for (i, (start, moves)) in games(200).iter().enumerate() {
                let g = people(i, min, Faults::LATE);
                let (inputs, trace) = game_trace(start, moves, &g, 1000);
                assert!(in_order(&inputs), "game {i}");
                // The same gestures as without the fault: `late` draws from its own generator.
                let (_, clean) = game_trace(start, moves, &people(i, min, Faults::NONE), 1000);
                assert_eq!(trace.truth, clean.truth, "game {i}");
                // Nothing is lost for good: the host ends up seeing the board as it is.
                let last = trace.truth.last().unwrap().1;
                assert_eq!(seen_at_the_end(start, &inputs), last, "game {i}");
                for l in &trace.late {
                    let LateReading {
                        at,
                        due,
                        sq,
                        occupied,
                        before,
                        delivered: came,
                    } = *l;
                    assert!((LATE_MS.0..=LATE_MS.1).contains(&(due - at)), "{l:?}");
                    let reading = SimInput::Reading(Reading::Square(
                        sq,
                        if occupied { OCCUPIED } else { EMPTY },
                    ));
                    let arrived = inputs.iter().any(|(t, i)| *t == due && *i == reading);
                    assert_eq!(came, arrived, "game {i}: {l:?}");
                    // Its square did not change between the reading and its coming (the truth
                    // never left the reading's state; a change in the very ms it comes follows
                    // it) and no reading of it came meanwhile.
                    let between = |t: Millis| at < t && t < due;
                    let others_of_sq = inputs.iter().filter(|(t, i)| {
                        between(*t)
                            && matches!(i, SimInput::Reading(Reading::Square(s, _)) if *s == sq)
                    });
                    if came {
                        assert!(
                            trace
                                .truth
                                .iter()
                                .filter(|(t, _)| at <= *t && *t < due)
                                .all(|(_, occ)| occ.contains(sq) == occupied),
                            "game {i}: {l:?} came after its square changed"
                        );
                        assert_eq!(truth_before(&trace, due).contains(sq), occupied);
                        assert_eq!(others_of_sq.count(), 0, "game {i}: {l:?}");
                        // Whole-board frames meanwhile show the square as it was.
                        for (t, input) in inputs.iter().filter(|(t, _)| between(*t)) {
                            if let SimInput::Reading(Reading::Frame(s)) = input {
                                assert_eq!(s[sq as usize] != EMPTY, before, "@{t} {l:?}");
                            }
                        }
                        delivered += 1;
                        let others = inputs
                            .iter()
                            .filter(|(t, i)| between(*t) && matches!(i, SimInput::Reading(_)))
                            .count();
                        with_others += usize::from(others > 0);
                    }
                }
                late += trace.late.len();
                readings +=
                    square_readings(&inputs) + trace.late.iter().filter(|l| !l.delivered).count();
            }
        }
        // About 1% of the single-square readings; about half of them come (those of bounce and
        // of the squares a slide passes over never do: the square changes again within ms),
        // most with other readings in between (84% when written: the others are delays short
        // enough that nobody touched the board meanwhile).
        assert!(
            late * 1000 >= readings * 7 && late * 1000 <= readings * 13,
            "{late} of {readings}"
        );
        assert!(delivered * 10 >= late * 4, "{delivered} of {late} came");
        assert!(
            with_others * 4 >= delivered * 3,
            "{with_others} of {delivered}"
        );
    }

    #[test]
    fn periodic_frames_come_every_second_and_show_every_loss() {
        let (mut lost, mut readings) = (0, 0);
        for min in [40, 300] {
            for (i, (start, moves)) in games(200).iter().enumerate() {
                let g = people(i, min, Faults::LOST_PERIODIC);
                let (inputs, trace) = game_trace(start, moves, &g, 1000);
                assert!(in_order(&inputs), "game {i}");
                let frames = &trace.frames;
                assert!((1000..2000).contains(&frames[0]), "game {i}: {}", frames[0]);
                assert!(frames.windows(2).all(|w| w[1] - w[0] == FRAME_EVERY_MS));
                // A frame after the last change and the last loss, and each frame shows the
                // board as it is, new or not.
                let last = inputs.last().unwrap().0;
                assert_eq!(*frames.last().unwrap(), last, "game {i}");
                for f in frames {
                    assert!(
                        frame_at(&inputs, *f).contains(&truth_before(&trace, *f)),
                        "@{f}"
                    );
                }
                // So every lost reading shows in the next frame, at most a second later.
                for l in &trace.lost {
                    assert!(
                        frames.iter().any(|f| l < f && *f <= l + FRAME_EVERY_MS),
                        "@{l}"
                    );
                }
                assert_eq!(
                    seen_at_the_end(start, &inputs),
                    trace.truth.last().unwrap().1
                );
                let (_, clean) = game_trace(start, moves, &people(i, min, Faults::NONE), 1000);
                assert_eq!(trace.truth, clean.truth, "game {i}");
                lost += trace.lost.len();
                readings += inputs
                    .iter()
                    .filter(|(_, i)| matches!(i, SimInput::Reading(_)))
                    .count()
                    - frames.len()
                    + trace.lost.len();
            }
        }
        assert!(
            lost * 1000 >= readings * 7 && lost * 1000 <= readings * 13,
            "{lost} of {readings}"
        );
    }

    #[test]
    fn after_a_reading_lost_in_lost_next_the_next_report_is_the_whole_board() {
        let (mut lost, mut readings) = (0, 0);
        for (i, (start, moves)) in games(200).iter().enumerate() {
            let g = people(i, 40, Faults::LOST_NEXT);
            let (inputs, trace) = game_trace(start, moves, &g, 1000);
            for l in &trace.lost {
                let next = inputs
                    .iter()
                    .find(|(t, i)| t > l && matches!(i, SimInput::Reading(_)));
                assert!(
                    matches!(next, Some((t, SimInput::Reading(Reading::Frame(_)))) if *t <= l + REPORT_AFTER_LOSS_MS),
                    "game {i}: lost @{l}, then {next:?}"
                );
            }
            lost += trace.lost.len();
            readings += inputs
                .iter()
                .filter(|(_, i)| matches!(i, SimInput::Reading(_)))
                .count()
                + trace.lost.len();
        }
        assert!(
            lost * 1000 >= readings * 7 && lost * 1000 <= readings * 13,
            "{lost} of {readings}"
        );
    }

    #[test]
    fn swaps_sweep_one_capture_in_twenty() {
        let (mut captures, mut sweeps) = (0, 0);
        for (i, (start, moves)) in games(400).iter().enumerate() {
            let (_, trace) = game_trace(start, moves, &people(i, 40, Faults::SWAPS), 1000);
            captures += moves
                .iter()
                .filter(|m| {
                    matches!(
                        m,
                        Move::Normal {
                            capture: Some(_),
                            ..
                        }
                    )
                })
                .count();
            // A square emptied and filled again within 15 ms: a captured piece swept off.
            sweeps += trace
                .truth
                .windows(3)
                .filter(|w| {
                    let emptied = w[0].1 & !w[1].1;
                    w[2].0 - w[1].0 <= 15 && emptied.any() && (w[2].1 & emptied) == emptied
                })
                .count();
        }
        assert!(
            sweeps * 100 >= captures * 4 && sweeps * 100 <= captures * 6,
            "{sweeps} of {captures}"
        );
    }

    #[test]
    fn every_model_together_keeps_its_promises() {
        let all = Faults::COMBINED
            .union(Faults::LOST_NEXT)
            .union(Faults::PULLS);
        for faults in [Faults::COMBINED, all, Faults::PULLS] {
            for (i, (start, moves)) in games(100).iter().enumerate() {
                let (inputs, trace) = game_trace(start, moves, &people(i, 80, faults), 1000);
                assert!(in_order(&inputs), "{faults} game {i}");
                assert!(trace
                    .frames
                    .windows(2)
                    .all(|w| w[1] - w[0] == FRAME_EVERY_MS));
                for l in &trace.late {
                    assert!((LATE_MS.0..=LATE_MS.1).contains(&(l.due - l.at)), "{l:?}");
                }
                // The last frame shows the board as it is.
                assert_eq!(trace.frames.is_empty(), !faults.lost_periodic);
                if let Some(last) = trace.frames.last() {
                    assert!(frame_at(&inputs, *last).contains(&trace.truth.last().unwrap().1));
                }
            }
        }
    }
}
