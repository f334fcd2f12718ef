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

fn position(fen: &str) -> Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap()
}

/// Plays `sans` from `start` on a board that reports every piece, one whole frame for each move
/// (as a ChessLink board sends one status a move); returns the moves recorded and the rules
/// broken, if any.
fn frames_of(start: &str, sans: &[&str]) -> (Vec<String>, Vec<String>) {
    let start = position(start);
    let mut e = Engine::new(Settings::default());
    let mut out = Vec::new();
    e.new_game(0, start.clone(), true, &mut out);
    e.reading(100, frame(&start, None), &mut out);
    let mut pos = start;
    for (i, san) in sans.iter().enumerate() {
        let m = shakmaty::san::San::from_ascii(san.as_bytes())
            .unwrap()
            .to_move(&pos)
            .unwrap();
        pos.play_unchecked(m);
        e.reading(1000 * (i as u64 + 1), frame(&pos, None), &mut out);
    }
    e.advance(1000 * (sans.len() as u64 + 2), &mut out);
    let moves = out
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Move { san, .. } => Some(san.clone()),
            _ => None,
        })
        .collect();
    let broken = out
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TouchMove { rule, .. } => Some(rule.to_string()),
            EventKind::Illegal { reason, .. } => Some(reason.to_string()),
            EventKind::Mismatch { .. } => Some("mismatch".into()),
            _ => None,
        })
        .collect();
    (moves, broken)
}

#[test]
fn a_capture_promotion_shown_in_one_frame_is_taken() {
    // The pawn's square empty and the captured rook replaced by the new queen, in one status.
    let (moves, broken) = frames_of("r3k3/1P6/8/8/8/8/8/4K3 w q - 0 1", &["bxa8=Q+"]);
    assert_eq!(moves, ["bxa8=Q+"]);
    assert!(broken.is_empty(), "{broken:?}");
    // An underpromotion by capture the same way: the piece on the square says which.
    let (moves, _) = frames_of("r3k3/1P6/8/8/8/8/8/4K3 w q - 0 1", &["bxa8=N"]);
    assert_eq!(moves, ["bxa8=N"]);
}

#[test]
fn castling_and_captures_shown_in_one_frame_are_taken_with_no_touch_order() {
    // Queenside castling in one status has the rook's square before the king's: no 4.4b.
    let (moves, broken) = frames_of(
        "r3k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/R3K2R w KQkq - 0 1",
        &["O-O-O", "O-O", "Nxe5", "Nxe5"],
    );
    assert_eq!(moves, ["O-O-O", "O-O", "Nxe5", "Nxe5"]);
    assert!(broken.is_empty(), "{broken:?}");
}
