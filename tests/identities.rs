//! Boards that identify pieces (DGT, ChessLink): the set-up is checked piece by piece.

use chessboardd::engine::piece_code;
use chessboardd::engine::{Engine, EventKind, Reading, Settings};
use shakmaty::{Chess, Position, Square};

fn frame(pos: &Chess, swap: Option<(Square, Square)>) -> Reading {
    let mut states = [0u8; 64];
    for (sq, p) in pos.board().iter() {
        states[sq as usize] = piece_code(p);
    }
    if let Some((a, b)) = swap {
        states.swap(a as usize, b as usize);
    }
    Reading::Frame(Box::new(states))
}

#[test]
fn king_and_queen_swapped_at_the_set_up_is_a_mismatch_until_put_right() {
    let mut e = Engine::new(Settings::default());
    let mut out = Vec::new();
    e.new_game(0, Chess::default(), true, &mut out);
    e.reading(
        100,
        frame(&Chess::default(), Some((Square::D1, Square::E1))),
        &mut out,
    );
    e.advance(5000, &mut out);
    let mismatch: Vec<_> = out
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Mismatch { .. }))
        .collect();
    assert_eq!(mismatch.len(), 1, "{out:?}");
    let EventKind::Mismatch { missing, extra } = &mismatch[0].kind else {
        unreachable!()
    };
    assert_eq!(
        (missing.clone(), extra.clone()),
        (vec![Square::D1, Square::E1], vec![])
    );
    let said: Vec<_> = out
        .iter()
        .filter_map(|e| e.kind.spoken())
        .map(|(t, _)| t.to_string())
        .collect();
    assert!(
        said.iter()
            .any(|t| t.contains("Dame auf David eins") && t.contains("König auf Eva eins")),
        "{said:?}"
    );
    out.clear();
    e.reading(6000, frame(&Chess::default(), None), &mut out);
    e.advance(7000, &mut out);
    assert!(
        out.iter()
            .any(|e| matches!(e.kind, EventKind::Restored { .. })),
        "{out:?}"
    );
    // And the game goes on: 1.e4 read from the pieces.
    let mut after = Chess::default();
    let m = shakmaty::san::San::from_ascii(b"e4")
        .unwrap()
        .to_move(&after)
        .unwrap();
    after.play_unchecked(m);
    out.clear();
    e.reading(8000, frame(&after, None), &mut out);
    e.advance(9000, &mut out);
    assert!(
        out.iter()
            .any(|e| matches!(&e.kind, EventKind::Move { san, .. } if san == "e4")),
        "{out:?}"
    );
}
