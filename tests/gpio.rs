//! A reed-switch board on GPIO, read through the simulated pin backend (which behaves like the
//! wiring: rows driven, registers latched and shifted): people's moves with contact bounce and
//! pieces slid over squares come out as the game's moves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chessboardd::board::gpio::{Mapping, SimPins, Wiring};
use chessboardd::daemon::{self, Source};
use chessboardd::engine::debounce::EMPTY;
use chessboardd::engine::{EventKind, Reading, Settings};
use chessboardd::pgn;
use chessboardd::sim::{self, Gestures, SimInput};

/// Plays a game on a board wired as `wiring` and built as `mapping`; the daemon is told
/// `configured`.
fn play(
    wiring: Wiring,
    mapping: Mapping,
    configured: Mapping,
    seed: u64,
) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/molinari-bordais-1979.pgn"
    ))
    .unwrap();
    let game = pgn::parse(&text).unwrap().remove(0);
    let inputs = sim::game_inputs(
        &game.start,
        &game.moves,
        &Gestures {
            seed,
            vary_order: true,
            bounce: true,
            quirks: true,
            ..Gestures::default()
        },
        300,
    );
    let sensor_of = move |sq: u32| (0..64).find(|i| mapping.square(*i) as u32 == sq).unwrap();
    let sensors = Arc::new(AtomicU64::new(mapping_inverse(
        &mapping,
        0xFFFF_0000_0000_FFFF,
    )));
    let pins = SimPins::new(wiring.clone(), sensors.clone());
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    // The players: the switches open and close as the pieces move (times in ms from now).
    let board = std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        for (t, input) in inputs {
            let at = Duration::from_millis(t);
            std::thread::sleep(at.saturating_sub(t0.elapsed()));
            let SimInput::Reading(r) = input else {
                continue;
            };
            let mut s = sensors.load(Ordering::Relaxed);
            match r {
                Reading::Square(sq, state) => {
                    let bit = 1u64 << sensor_of(sq as u32);
                    if state == EMPTY {
                        s &= !bit
                    } else {
                        s |= bit
                    }
                }
                Reading::Frame(states) => {
                    for (i, st) in states.iter().enumerate() {
                        let bit = 1u64 << sensor_of(i as u32);
                        if *st == EMPTY {
                            s &= !bit
                        } else {
                            s |= bit
                        }
                    }
                }
            }
            sensors.store(s, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(1500));
        let _ = done_tx.send(());
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut moves = Vec::new();
    rt.block_on(daemon::run(
        Settings::default(),
        Source::Gpio(wiring, Box::new(pins), configured, 200),
        daemon::RunOptions {
            until_board_done: true,
            speed: 1.0,
            ..Default::default()
        },
        |e| {
            if let EventKind::Move { uci, .. } = &e.kind {
                moves.push(uci.clone());
            }
        },
        async {
            let _ = done_rx.await;
        },
    ));
    board.join().unwrap();
    let mut pos = game.start.clone();
    let want = game
        .moves
        .iter()
        .map(|m| {
            use shakmaty::Position;
            let u =
                shakmaty::uci::UciMove::from_move(*m, shakmaty::CastlingMode::Standard).to_string();
            pos.play_unchecked(*m);
            u
        })
        .collect();
    (moves, want)
}

/// The sensor bits that show the squares of `occ` under `mapping`.
fn mapping_inverse(mapping: &Mapping, occ: u64) -> u64 {
    (0..64)
        .filter(|i| occ & (1 << mapping.square(*i) as u32) != 0)
        .fold(0, |a, i| a | (1 << i))
}

#[test]
fn a_diode_matrix_board_plays_a_game() {
    let wiring = Wiring::Matrix {
        rows: [5, 6, 13, 19, 26, 12, 16, 20],
        cols: [4, 17, 27, 22, 10, 9, 11, 21],
    };
    let (got, want) = play(wiring, Mapping::default(), Mapping::default(), 1);
    assert_eq!(got, want);
}

#[test]
fn a_shift_register_board_turned_round_plays_a_game() {
    let wiring = Wiring::ShiftRegister {
        load: 23,
        clock: 24,
        data: 25,
    };
    let built = Mapping {
        rotation: 180,
        ..Mapping::default()
    };
    let (got, want) = play(wiring, built, built, 2);
    assert_eq!(got, want);
}

#[test]
fn an_expander_board_built_mirrored_and_turned_plays_a_game() {
    let wiring = Wiring::Direct {
        lines: (0..64).collect(),
    };
    let built = Mapping {
        rotation: 90,
        mirror: true,
        ..Mapping::default()
    };
    let (got, want) = play(wiring, built, built, 3);
    assert_eq!(got, want);
}

#[test]
fn a_board_set_up_the_other_way_round_is_found_out_at_the_first_move() {
    let wiring = Wiring::Matrix {
        rows: [5, 6, 13, 19, 26, 12, 16, 20],
        cols: [4, 17, 27, 22, 10, 9, 11, 21],
    };
    let turned = Mapping {
        rotation: 180,
        ..Mapping::default()
    };
    let configured = Mapping {
        detect_side: true,
        ..Mapping::default()
    };
    let (got, want) = play(wiring, turned, configured, 4);
    assert_eq!(got, want);
}
