//! The PGN reader's speed over the 400 self-play games (326 kB): games, bytes and moves read
//! into `PgnGame`s (legal moves, a position each) per second.
//!
//! `cargo bench --bench pgn` prints them as criterion throughputs ("thrpt").

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use chessboardd::pgn;

fn bench(c: &mut Criterion) {
    let text = include_str!("../tests/data/games/selfplay-400.pgn");
    let games = pgn::parse(text).expect("selfplay-400.pgn parses");
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    eprintln!(
        "workload: {} games, {} bytes, {moves} moves",
        games.len(),
        text.len()
    );
    let mut g = c.benchmark_group("pgn_parse");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("bytes", |b| b.iter(|| pgn::parse(text).map(|g| g.len())));
    g.throughput(Throughput::Elements(moves as u64));
    g.bench_function("moves", |b| b.iter(|| pgn::parse(text).map(|g| g.len())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
