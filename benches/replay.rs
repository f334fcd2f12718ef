//! Replay throughput over the 400 self-play games turned into lifts and placements (with
//! people's move orders and contact bounce): raw events per second and moves per second.
//!
//! `cargo bench --bench replay` prints both as criterion throughputs ("thrpt").

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use chessboardd::engine::Settings;
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures, SimInput};
use shakmaty::Chess;

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
