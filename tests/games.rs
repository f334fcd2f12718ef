//! Every game of tests/data/games played on the simulated board with people's physical orders,
//! contact bounce and sensor quirks: every move must be recorded, once, and every ending found.

use chessboardd::engine::dead;
use chessboardd::engine::rules::FIDE_2023;
use chessboardd::engine::{EventKind, Settings};
use chessboardd::pgn::{self, PgnGame};
use chessboardd::sim::{self, Gestures};
use shakmaty::{Chess, Position};

fn games(file: &str) -> Vec<PgnGame> {
    let path = format!("{}/tests/data/games/{file}", env!("CARGO_MANIFEST_DIR"));
    pgn::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The ending the Laws make automatic in the final position, if any.
fn expected_ending(game: &PgnGame, seventyfive: bool) -> Option<(&'static str, &'static str)> {
    let mut pos = game.start.clone();
    for m in &game.moves {
        pos.play_unchecked(*m);
    }
    if pos.is_checkmate() {
        return Some((
            if pos.turn().is_white() { "0-1" } else { "1-0" },
            "checkmate",
        ));
    }
    if pos.is_stalemate() {
        return Some(("1/2-1/2", "stalemate"));
    }
    if dead::is_dead(&pos) {
        return Some(("1/2-1/2", "dead_position"));
    }
    if seventyfive && pos.halfmoves() >= 150 {
        return Some(("1/2-1/2", "seventyfive_moves"));
    }
    None
}

fn check_game(name: &str, game: &PgnGame, settings: &Settings, g: &Gestures) {
    let inputs = sim::game_inputs(&game.start, &game.moves, g, 1000);
    let (engine, events) = sim::run(settings.clone(), &game.start, &inputs, 10_000);
    let recorded: Vec<_> = engine.game().plies.iter().map(|p| p.m).collect();
    assert_eq!(
        recorded.len(),
        game.moves.len(),
        "{name} seed {}: moves recorded",
        g.seed
    );
    assert_eq!(recorded, game.moves, "{name} seed {}", g.seed);
    let moves: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Move { .. }))
        .collect();
    assert_eq!(
        moves.len(),
        game.moves.len(),
        "{name}: every move reported once"
    );
    let problems: Vec<_> = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Illegal { .. }
                    | EventKind::TouchMove { .. }
                    | EventKind::Mismatch { .. }
                    | EventKind::Takeback { .. }
            )
        })
        .collect();
    assert!(problems.is_empty(), "{name} seed {}: {problems:?}", g.seed);
    let seventyfive = settings.rules.automatic_seventyfive;
    let over: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GameOver { result, reason } => Some((*result, reason.name())),
            _ => None,
        })
        .collect();
    if game.null_move {
        return;
    }
    match expected_ending(game, seventyfive) {
        Some(end) => {
            assert_eq!(over, vec![end], "{name}: ending");
            if end.1 == "checkmate" {
                assert_eq!(game.result, end.0, "{name}: the PGN's result");
            }
        }
        None => assert!(over.is_empty(), "{name}: no ending expected, got {over:?}"),
    }
}

fn varied(seed: u64) -> Gestures {
    Gestures {
        seed,
        vary_order: true,
        bounce: true,
        quirks: true,
        ..Gestures::default()
    }
}

#[test]
fn real_games_with_varied_physical_orders() {
    for file in [
        "seed-example.pgn",
        "kasparov-deep-blue-1997.pgn",
        "nepomniachtchi-liren-game1.pgn",
        "molinari-bordais-1979.pgn",
        "anastasian-lewis.pgn",
    ] {
        for (i, game) in games(file).iter().enumerate() {
            for seed in 0..8 {
                check_game(
                    &format!("{file}#{i}"),
                    game,
                    &Settings::default(),
                    &varied(seed),
                );
            }
            check_game(
                &format!("{file}#{i} plain"),
                game,
                &Settings::default(),
                &Gestures::default(),
            );
        }
    }
}

#[test]
fn four_hundred_selfplay_games_under_two_profiles() {
    let all = games("selfplay-400.pgn");
    assert_eq!(all.len(), 400);
    let plies: usize = all.iter().map(|g| g.moves.len()).sum();
    assert_eq!(plies, 44_998);
    let mut endings = std::collections::BTreeMap::new();
    for (i, game) in all.iter().enumerate() {
        let settings = if i % 2 == 0 {
            Settings::default()
        } else {
            Settings {
                rules: FIDE_2023,
                ..Settings::default()
            }
        };
        check_game(&format!("selfplay#{i}"), game, &settings, &varied(i as u64));
        if let Some((_, reason)) = expected_ending(game, true) {
            *endings.entry(reason).or_insert(0) += 1;
        }
    }
    assert_eq!(endings.get("checkmate"), Some(&393));
    assert_eq!(endings.get("dead_position"), Some(&5));
    assert_eq!(endings.get("seventyfive_moves"), Some(&2));
}

#[test]
fn the_start_position_is_the_default_start() {
    assert_eq!(games("seed-example.pgn")[0].start, Chess::default());
}
