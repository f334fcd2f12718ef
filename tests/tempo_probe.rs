use chessboardd::engine::Settings;
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures, Tempo};

#[test]
#[ignore]
fn probe() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/selfplay-400.pgn"
    ))
    .unwrap();
    let games = pgn::parse(&text).unwrap();
    for losses in [false, true] {
        for min in [40u64, 80, 120, 200, 300] {
            let (mut g_ok, mut m, mut m_ok) = (0, 0, 0);
            for (i, game) in games.iter().enumerate() {
                let g = Gestures {
                    seed: i as u64,
                    vary_order: true,
                    bounce: true,
                    quirks: true,
                    tempo: Some(Tempo::people(min)),
                    losses,
                };
                let r = sim::read_game(&Settings::default(), &game.start, &game.moves, &g);
                g_ok += r.exact as usize;
                m += r.moves;
                m_ok += r.moves_exact;
            }
            println!(
                "losses {losses} min {min}: games {g_ok}/{} moves {m_ok}/{m} ({:.1}%)",
                games.len(),
                100.0 * m_ok as f64 / m as f64
            );
        }
    }
}

#[test]
#[ignore]
fn diag() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/selfplay-400.pgn"
    ))
    .unwrap();
    let games = pgn::parse(&text).unwrap();
    let min: u64 = std::env::var("MIN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let which: usize = std::env::var("NTH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let only: Option<usize> = std::env::var("GAME").ok().and_then(|s| s.parse().ok());
    let mut n = 0;
    for (i, game) in games.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let g = Gestures {
            seed: i as u64,
            vary_order: true,
            bounce: true,
            quirks: true,
            tempo: Some(Tempo::people(min)),
            losses: true,
        };
        let inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
        let (engine, events) = sim::run(Settings::default(), &game.start, &inputs, 10_000);
        let rec: Vec<_> = engine.game().plies.iter().map(|p| p.m).collect();
        let r = sim::compare(&game.moves, &rec);
        if r.exact {
            continue;
        }
        if n < which {
            n += 1;
            continue;
        }
        let bad = r.moves_exact;
        println!(
            "game {i}: first wrong ply {bad} of {} (true {:?}, got {:?})",
            game.moves.len(),
            game.moves.get(bad),
            rec.get(bad)
        );
        // time of ply bad-1 in events
        let t0 = events
            .iter()
            .filter(|e| matches!(e.kind, chessboardd::engine::EventKind::Move { .. }))
            .nth(bad.saturating_sub(1))
            .map(|e| e.t)
            .unwrap_or(0);
        let mut s = String::new();
        sim::write_script(&mut s, &game.start, 0, &inputs);
        for l in s.lines() {
            if let Some(t) = l
                .strip_prefix('@')
                .and_then(|x| x.split(' ').next())
                .and_then(|x| x.parse::<u64>().ok())
            {
                if t + 3000 >= t0 && t <= t0 + 6000 {
                    println!("  {l}");
                }
            }
        }
        let mut pos = game.start.clone();
        use shakmaty::Position;
        for m in &game.moves[..bad.min(game.moves.len())] {
            pos.play_unchecked(*m);
        }
        println!("  position: {}", chessboardd::engine::game::fen_of(&pos));
        for e in &events {
            if e.t + 3000 >= t0 && e.t <= t0 + 8000 {
                println!("  > {}", e.to_json());
            }
        }
        break;
    }
}

#[test]
#[ignore]
fn dump() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/selfplay-400.pgn"
    ))
    .unwrap();
    let games = pgn::parse(&text).unwrap();
    let min: u64 = std::env::var("MIN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let i: usize = std::env::var("GAME")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let game = &games[i];
    let g = Gestures {
        seed: i as u64,
        vary_order: true,
        bounce: true,
        quirks: true,
        tempo: Some(Tempo::people(min)),
        losses: true,
    };
    let inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
    let mut s = String::new();
    sim::write_script(&mut s, &game.start, 0, &inputs);
    std::fs::write("/tmp/exp/game.script", s).unwrap();
}

#[test]
#[ignore]
fn summary() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/selfplay-400.pgn"
    ))
    .unwrap();
    let games = pgn::parse(&text).unwrap();
    let min: u64 = std::env::var("MIN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mut n = 0;
    for (i, game) in games.iter().enumerate() {
        let g = Gestures {
            seed: i as u64,
            vary_order: true,
            bounce: true,
            quirks: true,
            tempo: Some(Tempo::people(min)),
            losses: true,
        };
        let inputs = sim::game_inputs(&game.start, &game.moves, &g, 1000);
        let (engine, events) = sim::run(Settings::default(), &game.start, &inputs, 10_000);
        let rec: Vec<_> = engine.game().plies.iter().map(|p| p.m).collect();
        let r = sim::compare(&game.moves, &rec);
        if r.exact {
            continue;
        }
        n += 1;
        if n > 40 {
            break;
        }
        let bad = r.moves_exact;
        let kinds: Vec<&str> = events
            .iter()
            .filter_map(|e| match &e.kind {
                chessboardd::engine::EventKind::Illegal { .. } => Some("illegal"),
                chessboardd::engine::EventKind::TouchMove { .. } => Some("touch"),
                chessboardd::engine::EventKind::Mismatch { .. } => Some("mismatch"),
                _ => None,
            })
            .collect();
        let recov = engine.game().plies.iter().filter(|p| p.recovered).count();
        println!(
            "game {i}: ply {bad}/{} true {:?} got {:?}; recorded {} (recovered {recov}); {:?}",
            game.moves.len(),
            game.moves.get(bad).map(|m| m.to_string()),
            rec.get(bad).map(|m| m.to_string()),
            rec.len(),
            &kinds[..kinds.len().min(4)]
        );
    }
}
