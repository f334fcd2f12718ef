//! Replay throughput over the 400 self-play games turned into lifts and placements (with
//! people's move orders and contact bounce): raw events per second and moves per second.
//!
//! `cargo bench --bench replay` prints both as criterion throughputs ("thrpt").
//!
//! `replay_long_turn` reads one turn that never ends (a pawn lifted and put back, a switch of an
//! empty square chattering while a knight is held) of 20,000 and of 200,000 readings: the time
//! a reading takes must not grow with the length of the turn, so both print about the same
//! throughput.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::{Reading, Settings};
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures, SimInput};
use shakmaty::{Chess, Square};

struct Workload {
    games: Vec<(Chess, Vec<(u64, SimInput)>)>,
    raw_events: u64,
    moves: u64,
}

fn workload() -> Workload {
    let text = include_str!("../tests/data/games/selfplay-400.pgn");
    let games = pgn::parse(text).expect("selfplay-400.pgn parses");
    let mut out = Vec::new();
    let (mut raw_events, mut moves) = (0, 0);
    for (i, g) in games.iter().enumerate() {
        let gestures = Gestures {
            seed: i as u64,
            vary_order: true,
            bounce: true,
            quirks: true,
            ..Gestures::default()
        };
        let inputs = sim::game_inputs(&g.start, &g.moves, &gestures, 1000);
        raw_events += inputs
            .iter()
            .filter(|(_, i)| matches!(i, SimInput::Reading(_)))
            .count() as u64;
        moves += g.moves.len() as u64;
        out.push((g.start.clone(), inputs));
    }
    Workload {
        games: out,
        raw_events,
        moves,
    }
}

fn replay_all(w: &Workload, json: bool) -> usize {
    let mut n = 0;
    for (start, inputs) in &w.games {
        let (_, events) = sim::run(Settings::default(), start, inputs, 10_000);
        n += if json {
            events.iter().map(|e| e.to_json().len()).sum()
        } else {
            events.len()
        };
    }
    n
}

/// One turn of `n` readings 300 ms apart: the e-pawn lifted and put back over and over
/// (`held` false), or the g-knight held while an empty square's switch chatters (`held`).
fn long_turn(n: usize, held: bool) -> Vec<(u64, SimInput)> {
    let mut out = Vec::with_capacity(n + 1);
    if held {
        out.push((500, SimInput::Reading(Reading::Square(Square::G1, EMPTY))));
    }
    let (square, first, second) = if held {
        (Square::H5, OCCUPIED, EMPTY)
    } else {
        (Square::E2, EMPTY, OCCUPIED)
    };
    for i in 0..n {
        let state = if i % 2 == 0 { first } else { second };
        let reading = SimInput::Reading(Reading::Square(square, state));
        out.push((1_000 + 300 * i as u64, reading));
    }
    out
}

fn bench(c: &mut Criterion) {
    let w = workload();
    eprintln!(
        "workload: {} games, {} raw events, {} moves",
        w.games.len(),
        w.raw_events,
        w.moves
    );
    for (name, elements) in [("raw_events", w.raw_events), ("moves", w.moves)] {
        let mut g = c.benchmark_group(format!("replay_{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(elements));
        g.bench_function("engine", |b| b.iter(|| replay_all(&w, false)));
        g.bench_function("engine_and_json", |b| b.iter(|| replay_all(&w, true)));
        g.finish();
    }
    let mut g = c.benchmark_group("replay_long_turn");
    g.sample_size(10);
    for n in [20_000, 200_000] {
        g.throughput(Throughput::Elements(n as u64));
        for (name, held) in [("put_back", false), ("held", true)] {
            let inputs = long_turn(n, held);
            g.bench_function(format!("{name}_{n}"), |b| {
                b.iter(|| {
                    sim::run(Settings::default(), &Chess::default(), &inputs, 0)
                        .1
                        .len()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
