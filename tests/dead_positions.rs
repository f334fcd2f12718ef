//! The dead-position detector over every game of tests/data/games (the 400 self-play games and
//! the real ones): once a position is called dead, every later position of the game is dead too
//! and the game never ends in checkmate. `cargo test --test dead_positions -- --nocapture`
//! prints how many positions were called dead, and how many of them only by the locked-position
//! rule (not by insufficient material).

use chessboardd::engine::dead::{is_dead, is_locked};
use chessboardd::pgn;
use shakmaty::{Chess, Position};

#[test]
fn once_dead_always_dead_and_never_mate_in_every_game() {
    let dir = format!("{}/tests/data/games", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data/games")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
        .collect();
    files.sort();
    let (mut games, mut positions, mut dead, mut only_locked, mut dead_games) = (0, 0, 0, 0, 0);
    for path in &files {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let text = std::fs::read_to_string(path).expect("game file");
        for (i, game) in pgn::parse(&text).expect("PGN").iter().enumerate() {
            games += 1;
            let mut pos: Chess = game.start.clone();
            let mut first_dead: Option<usize> = None;
            for ply in 0..=game.moves.len() {
                if ply > 0 {
                    pos.play_unchecked(game.moves[ply - 1]);
                }
                positions += 1;
                let is = is_dead(&pos);
                if let Some(first) = first_dead {
                    assert!(is, "{name}#{i}: dead at ply {first}, not at ply {ply}");
                }
                assert!(
                    !(first_dead.is_some() && pos.is_checkmate()),
                    "{name}#{i}: checkmate at ply {ply} after a dead position"
                );
                if is {
                    first_dead.get_or_insert(ply);
                    dead += 1;
                    if !pos.is_insufficient_material() {
                        assert!(is_locked(&pos));
                        only_locked += 1;
                    }
                }
            }
            if first_dead.is_some() {
                dead_games += 1;
            }
        }
    }
    println!(
        "{games} games, {positions} positions: {dead} dead ({dead_games} games reach one), \
         {only_locked} of them only by the locked-position rule"
    );
    assert!(games >= 410, "{games} games");
    assert!(dead > 0);
}
