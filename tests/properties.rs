//! Property tests of the engine as a whole, driven through the simulated board.
//!
//! 1. Random event streams (raw square readings, whole-board frames, every button, and legal
//!    moves made the way people make them, at random times) under random settings: the engine
//!    never panics, its record is a legal game, its events are in time order, and its `move` /
//!    `takeback` events reconstruct the record exactly.
//! 2. Real games played on the simulated board, at a leisurely tempo or at people's (replies
//!    from 40 ms), with or without sensor losses, then perturbed (a reading dropped or repeated,
//!    contact flickers, a piece lifted and put back): the same invariants; and flickers shorter
//!    than the debounce change nothing at all.
//! 3. The same settings and inputs give the same events.

use std::sync::OnceLock;

use chessboardd::engine::clock::TimeControl;
use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::game::{fen_of, ply_number};
use chessboardd::engine::rules::{Mode, FIDE_1997, FIDE_2005, FIDE_2023};
use chessboardd::engine::{Button, Engine, Event, EventKind, Millis, Reading, Settings};
use chessboardd::pgn::{self, PgnGame};
use chessboardd::sim::{self, Faults, Gestures, SimInput, Tempo};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use proptest::test_runner::Config;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, CastlingSide, Chess, Move, Position, Role, Square};

/// What the replay lets pass after the last input, so pending timeouts fire.
const TAIL: Millis = 10_000;

type Inputs = Vec<(Millis, SimInput)>;

// ---------------------------------------------------------------------------------------------
// Settings

const TIME_CONTROLS: [Option<&str>; 6] = [
    None,
    None,
    Some("60+1"),
    Some("600+5"),
    Some("40/120+5:60+1"),
    Some("90d3"),
];

/// A small, printable description of the settings (proptest prints it on failure).
#[derive(Clone, Debug)]
struct Conf {
    casual: bool,
    /// 0 = FIDE_1997, 1 = FIDE_2005, 2 = FIDE_2023.
    rules: usize,
    time_control: Option<&'static str>,
    debounce_ms: Millis,
}

impl Conf {
    fn settings(&self) -> Settings {
        Settings {
            mode: if self.casual {
                Mode::Casual
            } else {
                Mode::Tournament
            },
            rules: [FIDE_1997, FIDE_2005, FIDE_2023][self.rules],
            time_control: self
                .time_control
                .map(|tc| tc.parse::<TimeControl>().expect("a valid time control")),
            debounce_ms: self.debounce_ms,
            ..Settings::default()
        }
    }
}

fn conf(time_controls: &'static [Option<&'static str>], debounce: bool) -> BoxedStrategy<Conf> {
    let debounce_ms = if debounce {
        prop_oneof![4 => Just(30u64), 1 => Just(0u64), 1 => 1u64..60].boxed()
    } else {
        Just(30u64).boxed()
    };
    (
        any::<bool>(),
        0usize..3,
        proptest::sample::select(time_controls),
        debounce_ms,
    )
        .prop_map(|(casual, rules, time_control, debounce_ms)| Conf {
            casual,
            rules,
            time_control,
            debounce_ms,
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Inputs

fn read(sq: Square, occupied: bool) -> SimInput {
    SimInput::Reading(Reading::Square(sq, if occupied { OCCUPIED } else { EMPTY }))
}

/// Buttons that leave the game running, and buttons that may end it or start a new one.
const QUIET_BUTTONS: [Button; 11] = [
    Button::Clock,
    Button::Repeat,
    Button::Time,
    Button::Position,
    Button::Moves,
    Button::Promote(Role::Queen),
    Button::Promote(Role::Rook),
    Button::Promote(Role::Bishop),
    Button::Promote(Role::Knight),
    Button::Adjust,
    Button::Takeback,
];
const FINAL_BUTTONS: [Button; 4] = [Button::Draw, Button::Claim, Button::Resign, Button::NewGame];
/// Appendix A: a move sealed (the game stands, the board not read for moves) and the game
/// resumed.
const ADJOURN_BUTTONS: [Button; 2] = [Button::Adjourn, Button::Resume];

fn button_name(b: Button) -> &'static str {
    match b {
        Button::Clock => "clock",
        Button::Repeat => "repeat",
        Button::Time => "time",
        Button::Position => "position",
        Button::Moves => "moves",
        Button::Promote(Role::Rook) => "promote-rook",
        Button::Promote(Role::Bishop) => "promote-bishop",
        Button::Promote(Role::Knight) => "promote-knight",
        Button::Promote(_) => "promote-queen",
        Button::Draw => "draw",
        Button::Claim => "claim",
        Button::Resign => "resign",
        Button::Adjust => "adjust",
        Button::NewGame => "new-game",
        Button::Takeback => "takeback",
        Button::Adjourn => "adjourn",
        Button::Resume => "resume",
    }
}

/// The inputs as a `chessboardd replay` script, for failure messages and bug reports.
fn script(start: &Chess, inputs: &[(Millis, SimInput)]) -> String {
    let mut s = format!("setup fen {}\n", fen_of(start));
    let mut occ = start.board().occupied().0;
    for (t, input) in inputs {
        let line = match input {
            SimInput::Press(b) => format!("press {}", button_name(*b)),
            // Not a replay verb; the generators here make none.
            SimInput::Link(l) => format!("# link {l:?}"),
            SimInput::Reading(Reading::Square(sq, state)) => {
                occ = set_bit(occ, *sq, *state != EMPTY);
                format!("{} {sq}", if *state == EMPTY { "lift" } else { "place" })
            }
            SimInput::Reading(Reading::Frame(states)) => {
                occ = mask_of(states);
                format!("occupancy {occ:016x}")
            }
        };
        s.push_str(&format!("@{t} {line}\n"));
    }
    s
}

fn set_bit(occ: u64, sq: Square, on: bool) -> u64 {
    if on {
        occ | 1 << (sq as u32)
    } else {
        occ & !(1 << (sq as u32))
    }
}

fn mask_of(states: &[u8; 64]) -> u64 {
    states
        .iter()
        .enumerate()
        .filter(|(_, s)| **s != EMPTY)
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The raw occupancy after an input, given the one before it.
fn occ_after(occ: u64, input: &SimInput) -> u64 {
    match input {
        SimInput::Reading(Reading::Square(sq, state)) => set_bit(occ, *sq, *state != EMPTY),
        SimInput::Reading(Reading::Frame(states)) => mask_of(states),
        SimInput::Press(_) | SimInput::Link(_) => occ,
    }
}

/// One step of a random stream.
#[derive(Clone, Debug)]
enum Item {
    /// A raw reading of one square.
    Square(u8, bool),
    /// A whole-board frame with a random mask.
    Frame(u64),
    /// A whole-board frame: the raw board with a few squares flipped.
    NearFrame(u64, u64, u64),
    Press(Button),
    /// The k-th legal move of the position the script believes in, as people make it.
    Move {
        k: u16,
        seed: u8,
    },
    /// The last move the script made put back physically (a takeback in casual play).
    Undo,
    /// One frame showing the position the script believes in (mends any stray readings).
    Restore,
    /// One frame showing the initial position: a new game after the end of one.
    SetUp,
}

fn item(noise: u32) -> BoxedStrategy<Item> {
    Union::new_weighted(vec![
        (
            noise + 1,
            (0u8..64, any::<bool>())
                .prop_map(|(sq, occ)| Item::Square(sq, occ))
                .boxed(),
        ),
        (2, any::<u64>().prop_map(Item::Frame).boxed()),
        (
            3,
            any::<(u64, u64, u64)>()
                .prop_map(|(a, b, c)| Item::NearFrame(a, b, c))
                .boxed(),
        ),
        (
            6,
            proptest::sample::select(&QUIET_BUTTONS[..])
                .prop_map(Item::Press)
                .boxed(),
        ),
        (
            1,
            proptest::sample::select(&FINAL_BUTTONS[..])
                .prop_map(Item::Press)
                .boxed(),
        ),
        (
            2,
            proptest::sample::select(&ADJOURN_BUTTONS[..])
                .prop_map(Item::Press)
                .boxed(),
        ),
        (
            101 - noise,
            (any::<u16>(), any::<u8>())
                .prop_map(|(k, seed)| Item::Move { k, seed })
                .boxed(),
        ),
        (5, Just(Item::Undo).boxed()),
        (3, Just(Item::Restore).boxed()),
        (1, Just(Item::SetUp).boxed()),
    ])
    .boxed()
}

fn gap() -> impl Strategy<Value = Millis> {
    prop_oneof![3 => 0u64..30, 2 => 0u64..2000]
}

/// A random stream: `noise` (0..=100) weighs random readings against legal moves.
fn items() -> impl Strategy<Value = Vec<(Millis, Item)>> {
    prop_oneof![Just(0u32), 0u32..20, 0u32..=100]
        .prop_flat_map(|noise| proptest::collection::vec((gap(), item(noise)), 0..200))
}

const STARTS: [&str; 3] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    // Castling on both sides, pins, checks.
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    // Promotions for both sides, en passant at once.
    "4k3/1P6/8/3pP3/8/8/6p1/4K3 w - d6 0 2",
];

fn start(i: usize) -> Chess {
    STARTS[i]
        .parse::<Fen>()
        .expect("a FEN")
        .into_position(CastlingMode::Standard)
        .expect("a legal position")
}

/// Turns the items into timed inputs, keeping track of the position the items believe in.
fn expand(start: &Chess, items: &[(Millis, Item)]) -> Inputs {
    let mut out: Inputs = Vec::new();
    let mut t: Millis = 0;
    let mut pos = start.clone();
    let mut history: Vec<(Chess, Move)> = Vec::new();
    let mut occ = start.board().occupied().0;
    fn push(out: &mut Inputs, occ: &mut u64, t: Millis, input: SimInput) {
        *occ = occ_after(*occ, &input);
        out.push((t, input));
    }
    for (gap, item) in items {
        t += gap;
        match item {
            Item::Square(sq, on) => push(
                &mut out,
                &mut occ,
                t,
                read(Square::new(u32::from(*sq)), *on),
            ),
            Item::Frame(mask) => push(
                &mut out,
                &mut occ,
                t,
                SimInput::Reading(Reading::occupancy(*mask)),
            ),
            Item::NearFrame(a, b, c) => {
                let frame = Reading::occupancy(occ ^ (a & b & c));
                push(&mut out, &mut occ, t, SimInput::Reading(frame));
            }
            Item::Press(b) => push(&mut out, &mut occ, t, SimInput::Press(*b)),
            Item::Move { k, seed } => {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    continue;
                }
                let m = legal[usize::from(*k) % legal.len()];
                let g = Gestures {
                    seed: u64::from(*seed),
                    vary_order: seed & 1 != 0,
                    bounce: seed & 2 != 0,
                    quirks: seed & 4 != 0,
                    ..Gestures::default()
                };
                for (u, input) in sim::game_inputs(&pos, &[m], &g, t) {
                    t = t.max(u);
                    push(&mut out, &mut occ, u, input);
                }
                history.push((pos.clone(), m));
                pos.play_unchecked(m);
            }
            Item::Undo => {
                let Some((before, m)) = history.pop() else {
                    continue;
                };
                let steps: Vec<(Square, bool)> = match m {
                    Move::Normal {
                        from, to, capture, ..
                    } => {
                        let mut v = vec![(to, false), (from, true)];
                        if capture.is_some() {
                            v.push((to, true));
                        }
                        v
                    }
                    Move::EnPassant { from, to } => vec![
                        (to, false),
                        (from, true),
                        (Square::from_coords(to.file(), from.rank()), true),
                    ],
                    Move::Castle { king, rook } => {
                        let side = if rook > king {
                            CastlingSide::KingSide
                        } else {
                            CastlingSide::QueenSide
                        };
                        let turn = before.turn();
                        vec![
                            (side.king_to(turn), false),
                            (side.rook_to(turn), false),
                            (king, true),
                            (rook, true),
                        ]
                    }
                    Move::Put { .. } => Vec::new(),
                };
                for (sq, on) in steps {
                    t += 200;
                    push(&mut out, &mut occ, t, read(sq, on));
                }
                pos = before;
            }
            Item::Restore => {
                let frame = Reading::occupancy(pos.board().occupied().0);
                push(&mut out, &mut occ, t, SimInput::Reading(frame));
            }
            Item::SetUp => {
                pos = Chess::default();
                history.clear();
                let frame = Reading::occupancy(pos.board().occupied().0);
                push(&mut out, &mut occ, t, SimInput::Reading(frame));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Invariants

fn uci_of(m: Move) -> String {
    UciMove::from_standard(m).to_string()
}

fn record_ucis(engine: &Engine) -> Vec<String> {
    engine.game().plies.iter().map(|p| uci_of(p.m)).collect()
}

fn parse_fen(fen: &str) -> Result<Chess, TestCaseError> {
    fen.parse::<Fen>()
        .map_err(|e| TestCaseError::fail(format!("bad FEN {fen}: {e}")))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| TestCaseError::fail(format!("impossible FEN {fen}: {e}")))
}

/// No panic happened (we got here); the record is a legal game; events are in time order; and
/// the `move` / `takeback` events tell exactly the story of the final record.
fn check_invariants(engine: &Engine, events: &[Event]) -> Result<(), TestCaseError> {
    // Time order (docs/replay.md: "in time order").
    for w in events.windows(2) {
        prop_assert!(
            w[0].t <= w[1].t,
            "events out of time order: {:?} then {:?}",
            w[0],
            w[1]
        );
    }

    // The record replays legally from its start.
    let game = engine.game();
    let mut pos = game.start.clone();
    for (i, ply) in game.plies.iter().enumerate() {
        prop_assert_eq!(
            fen_of(&ply.before),
            fen_of(&pos),
            "ply {}: `before` is not the position reached",
            i
        );
        prop_assert!(
            pos.is_legal(ply.m),
            "ply {}: {:?} is illegal in {}",
            i,
            ply.m,
            fen_of(&pos)
        );
        prop_assert_eq!(ply.san, SanPlus::from_move(pos.clone(), ply.m));
        pos.play_unchecked(ply.m);
    }
    prop_assert_eq!(fen_of(&game.pos), fen_of(&pos), "the game's position");

    // The events reconstruct the record.
    let mut starts = 0;
    let mut cur: Option<Chess> = None;
    /// Per move told and not taken back: the position before, uci, san, time, clocks, and
    /// whether it was read from the board afterwards (`recovered`).
    type Told = (Chess, String, String, Millis, Option<(i64, i64)>, bool);
    let mut stack: Vec<Told> = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::GameStart { fen } => {
                starts += 1;
                cur = Some(parse_fen(fen)?);
                stack.clear();
            }
            EventKind::Move {
                ply,
                color,
                uci,
                san,
                fen,
                white_ms,
                black_ms,
                recovered,
                ..
            } => {
                let Some(p) = cur.as_mut() else {
                    return Err(TestCaseError::fail(format!(
                        "a move before game_start: {e:?}"
                    )));
                };
                let m = uci.parse::<UciMove>().ok().and_then(|u| u.to_move(p).ok());
                let Some(m) = m else {
                    return Err(TestCaseError::fail(format!(
                        "move event {e:?} is not legal in {}",
                        fen_of(p)
                    )));
                };
                prop_assert_eq!(&uci_of(m), uci, "uci form of {:?}", e);
                prop_assert_eq!(*ply, ply_number(p), "ply number of {:?}", e);
                prop_assert_eq!(*color, p.turn(), "colour of {:?}", e);
                prop_assert_eq!(
                    san,
                    &SanPlus::from_move(p.clone(), m).to_string(),
                    "san of {:?}",
                    e
                );
                let clocks = white_ms.zip(*black_ms);
                stack.push((p.clone(), uci.clone(), san.clone(), e.t, clocks, *recovered));
                p.play_unchecked(m);
                prop_assert_eq!(fen, &fen_of(p), "fen after {:?}", e);
            }
            EventKind::Takeback { ply, san } => {
                let Some((before, _, said, ..)) = stack.pop() else {
                    return Err(TestCaseError::fail(format!(
                        "takeback {e:?} with no move to take back"
                    )));
                };
                prop_assert_eq!(*ply, ply_number(&before), "ply number of {:?}", e);
                prop_assert_eq!(san, &said, "san of {:?}", e);
                cur = Some(before);
            }
            // Applied like a takeback of every ply from `ply` on (docs/replay.md).
            EventKind::Correction { ply, withdrawn, .. } => {
                let Some(first) = (*ply as usize).checked_sub(1) else {
                    return Err(TestCaseError::fail(format!("correction of ply 0: {e:?}")));
                };
                let Some(from) = stack.iter().position(|s| ply_number(&s.0) as usize > first)
                else {
                    prop_assert!(withdrawn.is_empty(), "withdrawn plies not told: {:?}", e);
                    continue;
                };
                let said: Vec<String> = stack[from..].iter().map(|s| s.2.clone()).collect();
                prop_assert_eq!(&said, withdrawn, "the plies withdrawn by {:?}", e);
                cur = Some(stack[from].0.clone());
                stack.truncate(from);
            }
            _ => {}
        }
    }
    prop_assert!(starts >= 1, "no game_start");
    let last_start = events
        .iter()
        .rev()
        .find_map(|e| match &e.kind {
            EventKind::GameStart { fen } => Some(fen.clone()),
            _ => None,
        })
        .unwrap_or_default();
    prop_assert_eq!(last_start, fen_of(&game.start), "the last game_start");
    let told: Vec<String> = stack.iter().map(|(_, u, ..)| u.clone()).collect();
    prop_assert_eq!(
        told,
        record_ucis(engine),
        "move/takeback events vs the record"
    );
    // The record keeps the time and the clocks its move events told; a move read from the
    // board afterwards is dated when the board shows it was made: no later than it was told,
    // and never before the move before it.
    let mut previous = 0;
    for (i, (told, ply)) in stack.iter().zip(&game.plies).enumerate() {
        prop_assert_eq!(told.4, ply.clocks, "clocks of ply {}", i);
        if told.5 {
            prop_assert!(
                ply.t <= told.3 && ply.t >= previous,
                "ply {}, recovered, dated {} (told at {}, the ply before at {})",
                i,
                ply.t,
                told.3,
                previous
            );
        } else {
            prop_assert_eq!(told.3, ply.t, "time of ply {}", i);
        }
        previous = ply.t;
    }
    if let Some(p) = &cur {
        prop_assert_eq!(fen_of(p), fen_of(&game.pos), "position told by the events");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Games and perturbations

/// Games for the perturbation tests: the sample games, and selfplay games that between them
/// castle both ways, capture en passant and underpromote.
fn pool() -> &'static [(String, PgnGame)] {
    static POOL: OnceLock<Vec<(String, PgnGame)>> = OnceLock::new();
    POOL.get_or_init(|| {
        let read = |file: &str| {
            let path = format!("{}/tests/data/games/{file}", env!("CARGO_MANIFEST_DIR"));
            pgn::parse(&std::fs::read_to_string(path).expect("game file")).expect("PGN")
        };
        let mut pool = Vec::new();
        for file in ["seed-example.pgn", "molinari-bordais-1979.pgn"] {
            for (i, g) in read(file).into_iter().enumerate() {
                pool.push((format!("{file}#{i}"), g));
            }
        }
        let selfplay = read("selfplay-400.pgn");
        let mut wanted: Vec<usize> = vec![0, 1, 2];
        let has = |g: &PgnGame, f: &dyn Fn(&Move) -> bool| g.moves.iter().any(f);
        let kinds: [&dyn Fn(&Move) -> bool; 3] = [
            &|m| m.is_en_passant(),
            &|m| matches!(m.promotion(), Some(r) if r != Role::Queen),
            &|m| matches!(m, Move::Castle { king, rook } if rook < king),
        ];
        for kind in kinds {
            if let Some(i) = selfplay.iter().position(|g| has(g, kind)) {
                wanted.push(i);
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        for i in wanted {
            pool.push((format!("selfplay-400.pgn#{i}"), selfplay[i].clone()));
        }
        pool
    })
}

/// People's gestures, at the leisurely tempo or at people's (replies from 40 to 300 ms at the
/// quickest), with sensor losses when `losses`.
fn gestures(losses: bool) -> impl Strategy<Value = Gestures> {
    let tempo = prop_oneof![
        Just(None),
        (40u64..=300).prop_map(|min| Some(Tempo::people(min)))
    ];
    (
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        tempo,
        any::<bool>(),
    )
        .prop_map(
            move |(seed, vary_order, bounce, quirks, tempo, lose)| Gestures {
                seed,
                vary_order,
                bounce,
                quirks,
                tempo,
                faults: if losses && lose {
                    Faults::LOSSES
                } else {
                    Faults::NONE
                },
            },
        )
}

#[derive(Clone, Debug)]
enum Perturb {
    /// One input lost.
    Drop(Index),
    /// One input sent again, `delay` ms later.
    Dup(Index, Millis),
    /// A square reads the opposite for `dur` ms, `offset` ms after an input; on the square of
    /// that input when `sq` is `None`.
    Flicker {
        at: Index,
        offset: Millis,
        sq: Option<u8>,
        dur: Millis,
    },
    /// A piece lifted `offset` ms after an input and put back on its square `hold` ms later.
    Touch {
        at: Index,
        offset: Millis,
        pick: Index,
        hold: Millis,
    },
}

fn flicker() -> impl Strategy<Value = Perturb> {
    (
        any::<Index>(),
        prop_oneof![0u64..60, 0u64..1000],
        prop_oneof![Just(None), (0u8..64).prop_map(Some)],
        0u64..20,
    )
        .prop_map(|(at, offset, sq, dur)| Perturb::Flicker {
            at,
            offset,
            sq,
            dur,
        })
}

fn perturb() -> impl Strategy<Value = Perturb> {
    prop_oneof![
        any::<Index>().prop_map(Perturb::Drop),
        (any::<Index>(), prop_oneof![Just(0u64), 0u64..600])
            .prop_map(|(i, delay)| Perturb::Dup(i, delay)),
        flicker(),
        (any::<Index>(), 0u64..1000, any::<Index>(), 0u64..2500).prop_map(
            |(at, offset, pick, hold)| Perturb::Touch {
                at,
                offset,
                pick,
                hold
            }
        ),
    ]
}

/// Inserts an input after every input at the same or an earlier time.
fn insert(inputs: &mut Inputs, t: Millis, input: SimInput) {
    let i = inputs.partition_point(|(u, _)| *u <= t);
    inputs.insert(i, (t, input));
}

/// The raw occupancy after every input up to time `t`.
fn raw_at(start: &Chess, inputs: &[(Millis, SimInput)], t: Millis) -> u64 {
    inputs
        .iter()
        .take_while(|(u, _)| *u <= t)
        .fold(start.board().occupied().0, |occ, (_, i)| occ_after(occ, i))
}

/// When the raw state of `sq` changes.
fn changes_of(start: &Chess, inputs: &[(Millis, SimInput)], sq: Square) -> Vec<Millis> {
    let bit = 1u64 << (sq as u32);
    let mut occ = start.board().occupied().0;
    let mut out = Vec::new();
    for (t, input) in inputs {
        let next = occ_after(occ, input);
        if (next ^ occ) & bit != 0 {
            out.push(*t);
        }
        occ = next;
    }
    out
}

/// Applies one perturbation. For a flicker, returns whether it is clean: both of its changes
/// fall where no other change of that square is within the debounce time, so the debouncer
/// must swallow it whole. Other perturbations return false.
fn apply(start: &Chess, inputs: &mut Inputs, p: &Perturb, debounce: Millis) -> bool {
    if inputs.is_empty() {
        return false;
    }
    match p {
        Perturb::Drop(i) => {
            inputs.remove(i.index(inputs.len()));
            false
        }
        Perturb::Dup(i, delay) => {
            let (t, input) = inputs[i.index(inputs.len())].clone();
            insert(inputs, t + delay, input);
            false
        }
        Perturb::Flicker {
            at,
            offset,
            sq,
            dur,
        } => {
            let (t0, ref input) = inputs[at.index(inputs.len())];
            let sq = match (sq, input) {
                (Some(s), _) => Square::new(u32::from(*s)),
                (None, SimInput::Reading(Reading::Square(s, _))) => *s,
                (None, _) => Square::new((t0 % 64) as u32),
            };
            let t = t0 + offset;
            let was = raw_at(start, inputs, t) & (1 << (sq as u32)) != 0;
            let clean = changes_of(start, inputs, sq)
                .iter()
                .all(|&c| c + debounce < t || c > t + dur);
            insert(inputs, t, read(sq, !was));
            insert(inputs, t + dur, read(sq, was));
            clean
        }
        Perturb::Touch {
            at,
            offset,
            pick,
            hold,
        } => {
            let t = inputs[at.index(inputs.len())].0 + offset;
            let occ = raw_at(start, inputs, t);
            let squares: Vec<u32> = (0..64).filter(|i| occ & (1 << i) != 0).collect();
            if !squares.is_empty() {
                let sq = Square::new(squares[pick.index(squares.len())]);
                insert(inputs, t, read(sq, false));
                insert(inputs, t + hold, read(sq, true));
            }
            false
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The properties

fn config(cases: u32) -> Config {
    // PROPTEST_CASES (proptest's own variable) overrides the count, for a quicker or longer run.
    // The counts below keep `make test` within its time on a 2-core machine: a random stream
    // is a board nothing explains, and the decoder's stories are searched for it (128 cases of
    // property 1 took 24 s here, 64 of property 3 20 s, 128 of property 2 5 s: property 1 at
    // 2048 cases was six minutes of one core); `PROPTEST_CASES=4096` runs a deeper check.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(1024))]

    /// Property 1: whatever the board and the buttons do, the engine keeps a legal record and
    /// tells it truthfully.
    #[test]
    fn random_streams_keep_a_legal_truthfully_told_record(
        conf in conf(&TIME_CONTROLS, true),
        start_ix in 0usize..STARTS.len(),
        items in items(),
    ) {
        let start = start(start_ix);
        let inputs = expand(&start, &items);
        let (engine, events) = sim::run(conf.settings(), &start, &inputs, TAIL);
        check_invariants(&engine, &events).map_err(|e| {
            let script = script(&start, &inputs);
            TestCaseError::fail(format!("{e}\nsettings {conf:?}\nscript:\n{script}"))
        })?;
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Property 3: the engine is a function of its settings and inputs.
    #[test]
    fn same_settings_and_inputs_give_the_same_events(
        conf in conf(&TIME_CONTROLS, true),
        start_ix in 0usize..STARTS.len(),
        items in items(),
    ) {
        let start = start(start_ix);
        let inputs = expand(&start, &items);
        let (e1, ev1) = sim::run(conf.settings(), &start, &inputs, TAIL);
        let (e2, ev2) = sim::run(conf.settings(), &start, &inputs, TAIL);
        prop_assert_eq!(ev1, ev2);
        prop_assert_eq!(record_ucis(&e1), record_ucis(&e2));
        prop_assert_eq!(e1.pgn(), e2.pgn());
    }
}

const GAME_TIME_CONTROLS: [Option<&str>; 4] = [None, None, Some("5400+30"), Some("60+1")];

proptest! {
    #![proptest_config(config(2048))]

    /// Property 2: real games with lost, repeated and spurious readings and stray touches.
    #[test]
    fn perturbed_games_keep_a_legal_truthfully_told_record(
        conf in conf(&GAME_TIME_CONTROLS, false),
        game in any::<Index>(),
        g in gestures(true),
        perturbs in proptest::collection::vec(perturb(), 1..5),
    ) {
        let (name, game) = &pool()[game.index(pool().len())];
        let mut inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
        for p in &perturbs {
            apply(&game.start, &mut inputs, p, conf.debounce_ms);
        }
        let (engine, events) = sim::run(conf.settings(), &game.start, &inputs, TAIL);
        check_invariants(&engine, &events).map_err(|e| {
            let script = script(&game.start, &inputs);
            TestCaseError::fail(format!("{name}: {e}\nsettings {conf:?}\nscript:\n{script}"))
        })?;
    }

    /// Property 2, flickers only: contact flickers shorter than the debounce time are never
    /// seen, so the game is recorded move for move, with exactly the events of the clean run.
    #[test]
    fn flickers_shorter_than_the_debounce_change_nothing(
        conf in conf(&GAME_TIME_CONTROLS[..3], false),
        game in any::<Index>(),
        g in gestures(false),
        flickers in proptest::collection::vec(flicker(), 1..12),
    ) {
        let (name, game) = &pool()[game.index(pool().len())];
        let clean_inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
        let mut inputs = clean_inputs.clone();
        for f in &flickers {
            let mut tried = inputs.clone();
            if apply(&game.start, &mut tried, f, conf.debounce_ms) {
                inputs = tried;
            }
        }
        let (clean_engine, clean_events) =
            sim::run(conf.settings(), &game.start, &clean_inputs, TAIL);
        let (engine, events) = sim::run(conf.settings(), &game.start, &inputs, TAIL);
        let ctx = || {
            let script = script(&game.start, &inputs);
            format!("{name}\nsettings {conf:?}\nscript:\n{script}")
        };
        check_invariants(&engine, &events)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{}", ctx())))?;
        prop_assert_eq!(&events, &clean_events, "{}", ctx());
        {
            let wanted: Vec<String> = game.moves.iter().map(|m| uci_of(*m)).collect();
            let clean = record_ucis(&clean_engine);
            prop_assert_eq!(clean, wanted.clone(), "the clean run: {}", name);
            prop_assert_eq!(record_ucis(&engine), wanted, "{}", ctx());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Engine faults the properties found: minimal reproductions, kept as regression tests once
// fixed (one not fixed yet would be marked `#[ignore]`, so that the suite stays green, and run
// with `cargo test --test properties -- --ignored`; none is now).

fn timed(steps: &[(Millis, &str)]) -> Inputs {
    steps
        .iter()
        .map(|&(t, step)| {
            let (verb, arg) = step.split_once(' ').expect("verb and argument");
            let input = match verb {
                "lift" => read(arg.parse().expect("a square"), false),
                "place" => read(arg.parse().expect("a square"), true),
                _ => SimInput::Press(arg.parse().expect("a button")),
            };
            (t, input)
        })
        .collect()
}

/// Events must come out in time order (docs/replay.md: "in time order"). After a promotion the
/// lift of the new piece may be the promoting player's swap; when the next change shows it was
/// the opponent's touch, that touch must not be dated before events that came in between (here
/// the answer to `press repeat`). Regression test for a bug the properties found.
#[test]
fn the_touch_of_a_promoted_piece_is_reported_out_of_time_order() {
    let start = parse_fen("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    let inputs = timed(&[
        (500, "lift b7"),
        (1000, "place b8"),
        (1100, "press promote-queen"),
        (1500, "lift b8"),
        (1600, "press repeat"),
        (2000, "lift e8"),
    ]);
    let (_, events) = sim::run(Settings::default(), &start, &inputs, TAIL);
    let times: Vec<(Millis, &str)> = events.iter().map(|e| (e.t, e.kind.type_name())).collect();
    assert!(
        times.windows(2).all(|w| w[0].0 <= w[1].0),
        "events out of time order: {times:?}"
    );
}

/// A flicker on a square just after a piece settled there is that placement's contact bounce:
/// it changes nothing (property 2). Here Black's Rc7-e7 and White's Qh5-h7+ (its placement read
/// before its lift) are taken together when h5 is seen empty; a 3 ms flicker on h7 40 ms later
/// made the engine wait, and read both moves and the reply Qxh7 at once, without its touches.
/// Regression test for a case the properties found.
#[test]
fn a_flicker_just_after_a_placement_is_its_bounce() {
    let start = parse_fen("4Rrk1/2r3q1/5b2/p4pNQ/P1pP3P/1pP3P1/1P6/5K2 b - - 1 37").unwrap();
    let mut steps = vec![
        (64692, "lift c7"),
        (65245, "place e7"),
        (65463, "place h7"),
        (65464, "lift h7"),
        (65466, "place h7"),
        (65506, "lift h5"),
        (65969, "lift g7"),
        (65971, "place g7"),
        (65975, "lift g7"),
        (66516, "lift h7"),
        (67064, "place h7"),
    ];
    let flicker = [(65533, "lift h7"), (65536, "place h7")];
    flicker_changes_nothing(&start, &mut steps, &["c7e7", "h5h7", "g7h7"], 6, flicker);
}

/// `steps` from `start` record `wanted`; with `flicker` inserted at `at`, every event is as
/// without it.
fn flicker_changes_nothing(
    start: &Chess,
    steps: &mut Vec<(Millis, &str)>,
    wanted: &[&str],
    at: usize,
    flicker: [(Millis, &'static str); 2],
) {
    let (clean_engine, clean) = sim::run(Settings::default(), start, &timed(steps), TAIL);
    assert_eq!(record_ucis(&clean_engine), wanted);
    steps.splice(at..at, flicker);
    let (_, flickered) = sim::run(Settings::default(), start, &timed(steps), TAIL);
    assert_eq!(flickered, clean);
}

/// A flicker on a square a piece left a moment before, no move's: it changes nothing
/// (property 2). Here White's Rg6-b6 (a slide), Black's Rc4-c2 (its placement read before its
/// lift) and a 12 ms flicker on g6, then White's Rb6-b3. The flicker, 556 ms before the rook
/// on b6 was lifted, made a story of Rb6-g6 (the flicker its placement, lost again) a rival,
/// one dearer, of the first two moves with the flicker unexplained: they were not agreed at
/// the lift, and Rb3+ was read through the stories (`recovered`, at the placement, not after the
/// settle time of a slide that may go on) where the clean run reads it plainly. Found by the
/// properties (`selfplay-400.pgn` #1, one run of 2048 cases in many). Regression test.
#[test]
fn a_flicker_on_a_square_a_piece_left_changes_nothing() {
    let start = parse_fen("8/8/6R1/2p5/2r3p1/3k2P1/8/4BK2 w - - 0 74").unwrap();
    let mut steps = vec![
        (120145, "lift g6"),
        (120211, "place f6"),
        (120280, "lift f6"),
        (120342, "place e6"),
        (120403, "lift e6"),
        (120464, "place d6"),
        (120527, "lift d6"),
        (120587, "place c6"),
        (120648, "lift c6"),
        (120718, "place b6"),
        (120952, "place c2"),
        (121032, "lift c4"),
        (121606, "lift b6"),
        (121723, "place b3"),
        (122389, "lift d3"),
        (122816, "place c4"),
    ];
    let flicker = [(121050, "place g6"), (121062, "lift g6")];
    flicker_changes_nothing(
        &start,
        &mut steps,
        &["g6b6", "c4c2", "b6b3", "d3c4"],
        12,
        flicker,
    );
}

/// A flicker on a piece half a second before another piece that could capture it is lifted is
/// no capture swapped faster than the debounce time: it changes nothing (property 2). Here
/// White's Qf3-e2 and Black's Ra8-c8 (its placement read before its lift), an 18 ms flicker on
/// the pawn f7, then White's Rf1-f4 and Black's f7-f5. The flicker, read as Rxf7 swapped, with
/// the rook's lift read 487 ms after it and nothing in between, cost less than the flicker
/// unexplained: the first two moves were not agreed at the rook's lift, and Rf4 was read
/// through the stories (`recovered`, without its touch) where the clean run reads it plainly.
/// Found by the properties (one run of 30,000 cases in three). Regression test.
#[test]
fn a_flicker_on_a_piece_long_before_a_capturer_is_lifted_changes_nothing() {
    let start = parse_fen("r4rk1/2qbbppp/4p3/p3P3/1ppP4/2P1NQPN/PP5P/4RRK1 w - - 0 20").unwrap();
    let mut steps = vec![
        (37436, "lift f3"),
        (38126, "place e2"),
        (38343, "place c8"),
        (38386, "lift a8"),
        (38387, "place a8"),
        (38389, "lift a8"),
        (38888, "lift f1"),
        (38890, "place f1"),
        (38892, "lift f1"),
        (39386, "place f4"),
        (39836, "lift f7"),
        (39931, "place f5"),
    ];
    let flicker = [(38401, "lift f7"), (38419, "place f7")];
    flicker_changes_nothing(
        &start,
        &mut steps,
        &["f3e2", "a8c8", "f1f4", "f7f5"],
        6,
        flicker,
    );
}

/// A flicker on an empty square a quarter of a second before a rook that could go there is
/// lifted changes nothing either (property 2). Here White's Be1-b4, Black's Rd5-b5 (its
/// placement read before its lift), a 4 ms flicker on a5, then White's Ra6-d6+ slid over b6
/// and c6. The flicker, read as Ra6-a5's placement lost again, 274 ms before the rook's lift,
/// was a rival, one dearer, of the flicker unexplained: Rd6+ was read through the stories where
/// the clean run reads it plainly. (Longer than a board's scan before its move, such a
/// placement needs a reading late too.) Found by the properties. Regression test.
#[test]
fn a_flicker_a_moment_before_a_slide_begins_changes_nothing() {
    let start = parse_fen("8/8/R7/3r4/2p5/3k2P1/6K1/4B3 w - - 4 83").unwrap();
    let mut steps = vec![
        (132077, "lift e1"),
        (132730, "place b4"),
        (132844, "place b5"),
        (132906, "lift d5"),
        (133223, "lift a6"),
        (133286, "place b6"),
        (133340, "lift b6"),
        (133397, "place c6"),
        (133447, "lift c6"),
        (133517, "place d6"),
        (134059, "place e2"),
        (134137, "lift d3"),
    ];
    let flicker = [(132949, "place a5"), (132953, "lift a5")];
    flicker_changes_nothing(
        &start,
        &mut steps,
        &["e1b4", "d5b5", "a6d6", "d3e2"],
        4,
        flicker,
    );
}

/// A flicker on the square a piece came from, after both players moved, changes nothing
/// (property 2). Here Black's Rh7-h4 slid over h6 and h5, White's Bg7-e5 (its placement read
/// before its lift), a 3 ms flicker on h7, then Black's Rh4-h5. The flicker made a story of
/// Rh4-h7 (the flicker its placement, lost again) a rival, one dearer, of the two moves with
/// the flicker unexplained; as it ends elsewhere the two moves were not taken at the lift of
/// h4, and Rh5 was read through the stories where the clean run reads it plainly. A story
/// that tells the candidate's moves and more is no rival of them. Found by the properties
/// (`selfplay-400.pgn` #1). Regression test.
#[test]
fn a_flicker_read_as_a_move_beyond_the_story_changes_nothing() {
    let start = parse_fen("8/5KBr/8/5RP1/8/8/4k3/8 b - - 4 98").unwrap();
    let mut steps = vec![
        (146313, "lift h7"),
        (146313, "place a1"),
        (146313, "lift a1"),
        (146363, "place h6"),
        (146413, "lift h6"),
        (146480, "place h5"),
        (146539, "lift h5"),
        (146594, "place h4"),
        (146886, "place e5"),
        (146941, "lift g7"),
        (147079, "lift h4"),
        (147142, "place h5"),
        (147780, "lift f7"),
        (148386, "place f6"),
    ];
    let flicker = [(147006, "place h7"), (147009, "lift h7")];
    flicker_changes_nothing(
        &start,
        &mut steps,
        &["h7h4", "g7e5", "h4h5", "f7f6"],
        10,
        flicker,
    );
}

/// Casual mode: a board that scans the new square before the old one shows, for one scan, the
/// occupancy of the position before the opponent's capture (2...dxe4 emptied d5; 3.Nd5 fills it
/// before c3 is seen empty). That moment must not take 2...dxe4 back: the knight's move is
/// recorded as in tournament mode. Regression test for a bug the properties found.
#[test]
fn casual_mode_takes_back_a_move_the_board_shows_for_a_scan_only() {
    let inputs = timed(&[
        (500, "lift e2"),
        (1000, "place e4"),
        (1500, "lift d7"),
        (2000, "place d5"),
        (2500, "lift b1"),
        (3000, "place c3"),
        (3500, "lift d5"),
        (3800, "lift e4"),
        (4100, "place e4"),
        (5000, "place d5"),
        (5050, "lift c3"),
    ]);
    let wanted = ["e2e4", "d7d5", "b1c3", "d5e4", "c3d5"];
    let tournament = sim::run(Settings::default(), &Chess::default(), &inputs, TAIL).0;
    assert_eq!(record_ucis(&tournament), wanted, "tournament mode");
    let settings = Settings {
        mode: Mode::Casual,
        ..Settings::default()
    };
    let (casual, events) = sim::run(settings, &Chess::default(), &inputs, TAIL);
    let takebacks: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Takeback { .. }))
        .collect();
    assert_eq!(
        record_ucis(&casual),
        wanted,
        "casual mode; takebacks: {takebacks:?}"
    );
}

/// A stream of random moves, a new game, takebacks and an adjournment (property 1): a story
/// taken as the game was adjourned had its move sealed, no ply recorded (the first of the
/// game), and asking whether that ply left a square a marked route reached subtracted one from
/// a count of none. Found by the properties (`make test`, one run). Regression test.
#[test]
fn a_story_taken_as_the_game_is_adjourned_marks_no_ply_it_did_not_record() {
    let conf = Conf {
        casual: false,
        rules: 0,
        time_control: None,
        debounce_ms: 30,
    };
    let mv_at = |t: Millis, k: u16, seed: u8| (t, Item::Move { k, seed });
    let start = start(0);
    let items = vec![
        mv_at(0, 41721, 0),
        mv_at(0, 15057, 0),
        mv_at(0, 1784, 0),
        mv_at(0, 28219, 0),
        mv_at(0, 28093, 0),
        mv_at(0, 41042, 0),
        mv_at(0, 24385, 0),
        mv_at(0, 59900, 0),
        mv_at(0, 58322, 0),
        mv_at(0, 57980, 0),
        mv_at(0, 30652, 0),
        mv_at(0, 5240, 0),
        mv_at(0, 43431, 0),
        mv_at(0, 29690, 0),
        mv_at(0, 64482, 0),
        mv_at(0, 48691, 0),
        mv_at(0, 55534, 0),
        mv_at(0, 14198, 0),
        mv_at(0, 2345, 0),
        mv_at(0, 57804, 0),
        mv_at(0, 58629, 0),
        mv_at(0, 42800, 0),
        mv_at(0, 14095, 0),
        mv_at(0, 34023, 0),
        mv_at(0, 28563, 186),
        mv_at(764, 46205, 253),
        mv_at(10, 2631, 116),
        mv_at(14, 30138, 109),
        mv_at(27, 51498, 236),
        mv_at(6, 19775, 226),
        mv_at(28, 43558, 94),
        mv_at(1612, 36872, 223),
        mv_at(789, 23727, 77),
        mv_at(23, 48810, 220),
        mv_at(102, 7850, 48),
        mv_at(1170, 31491, 8),
        mv_at(5, 45449, 219),
        mv_at(14, 21958, 193),
        mv_at(16, 39736, 31),
        mv_at(965, 19645, 250),
        mv_at(13, 46548, 108),
        mv_at(450, 953, 60),
        mv_at(546, 29868, 229),
        mv_at(8, 50216, 170),
        (1853, Item::Undo),
        mv_at(24, 27649, 214),
        mv_at(1455, 19236, 2),
        mv_at(23, 22534, 56),
        mv_at(25, 48100, 7),
        mv_at(5, 52181, 59),
        mv_at(752, 12068, 209),
        mv_at(7, 11910, 86),
        mv_at(1, 36791, 220),
        mv_at(1796, 36401, 121),
        (471, Item::Press(Button::NewGame)),
        mv_at(1142, 25359, 205),
        mv_at(1546, 39051, 167),
        mv_at(13, 22603, 76),
        mv_at(995, 31108, 117),
        mv_at(18, 47692, 165),
        mv_at(728, 22572, 48),
        mv_at(24, 52613, 71),
        mv_at(10, 35514, 19),
        mv_at(29, 8784, 15),
        mv_at(571, 33631, 48),
        mv_at(4, 9533, 141),
        mv_at(11, 3939, 121),
        mv_at(7, 57008, 98),
        mv_at(20, 43944, 169),
        (1574, Item::Undo),
        mv_at(1559, 30676, 164),
        (1965, Item::Press(Button::Adjourn)),
        (88, Item::Square(20, true)),
        mv_at(21, 14528, 245),
    ];
    let inputs = expand(&start, &items);
    let (engine, events) = sim::run(conf.settings(), &start, &inputs, TAIL);
    check_invariants(&engine, &events).unwrap();
}
