use chessboardd::engine::rules::FIDE_2023;
use chessboardd::engine::Settings;
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let i: usize = args[1].parse().unwrap();
    let all =
        pgn::parse(&std::fs::read_to_string("tests/data/games/selfplay-400.pgn").unwrap()).unwrap();
    let game = &all[i];
    let settings = if i % 2 == 0 {
        Settings::default()
    } else {
        Settings {
            rules: FIDE_2023,
            ..Settings::default()
        }
    };
    let g = Gestures {
        seed: i as u64,
        vary_order: true,
        bounce: true,
        quirks: true,
    };
    let inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
    let (engine, events) = sim::run(settings, &game.start, &inputs, 10_000);
    let n = engine.game().plies.len();
    println!(
        "recorded {n} of {}; next {:?}",
        game.moves.len(),
        game.moves.get(n)
    );
    let mut evs = events
        .iter()
        .map(|e| (e.t, e.to_json()))
        .collect::<Vec<_>>();
    for (t, inp) in &inputs {
        evs.push((*t, format!("   IN {t} {:?}", inp)));
    }
    evs.sort_by_key(|e| e.0);
    for (_, e) in evs
        .iter()
        .skip_while(|(_, e)| !e.contains(&format!("\"ply\":{}", n.saturating_sub(1))))
        .take(40)
    {
        println!("{e}");
    }
}
