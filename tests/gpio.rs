//! A reed-switch board on GPIO, read through the simulated pin backend (which behaves like the
//! wiring: rows driven, registers latched and shifted): people's moves with contact bounce and
//! pieces slid over squares come out as the game's moves.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chessboardd::board::gpio::{self, Mapping, Pins, SimPins, Wiring};
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

/// Simulated pins whose reads fail while `failing` is set (a loose connector, an expander gone
/// from the bus); requesting the lines again fails too until then.
struct FailingPins {
    inner: SimPins,
    failing: Arc<AtomicBool>,
    reopened: Arc<AtomicU32>,
}

impl Pins for FailingPins {
    fn set(&mut self, line: u32, high: bool) -> Result<(), gpio::Error> {
        if self.failing.load(Ordering::Relaxed) {
            return Err(io::Error::other("Input/output error").into());
        }
        self.inner.set(line, high)
    }
    fn get(&mut self, line: u32) -> Result<bool, gpio::Error> {
        if self.failing.load(Ordering::Relaxed) {
            return Err(io::Error::other("Input/output error").into());
        }
        self.inner.get(line)
    }
    fn reopen(&mut self) -> Result<(), gpio::Error> {
        self.reopened.fetch_add(1, Ordering::Relaxed);
        if self.failing.load(Ordering::Relaxed) {
            return Err(io::Error::other("No such device").into());
        }
        Ok(())
    }
}

#[test]
fn gpio_lines_that_fail_to_read_are_reported_and_requested_again() {
    // Six plies; a second after the fourth the lines fail for 4.5 s, the fifth (Bb5) is made
    // meanwhile, the sixth after.
    let game = pgn::parse("[Event \"lines\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n")
        .unwrap()
        .remove(0);
    let g = Gestures::default();
    let mut pos = game.start.clone();
    let mut inputs = sim::game_inputs(&pos, &game.moves[..4], &g, 300);
    let fourth_done = inputs.last().unwrap().0;
    let fail_from = fourth_done + 1_000;
    let fail_until = fail_from + 4_500;
    for m in &game.moves[..4] {
        use shakmaty::Position;
        pos.play_unchecked(*m);
    }
    let mut g5 = g.clone();
    g5.seed = 5;
    inputs.extend(sim::game_inputs(
        &pos,
        &game.moves[4..5],
        &g5,
        fail_from + 200,
    ));
    {
        use shakmaty::Position;
        pos.play_unchecked(game.moves[4]);
    }
    let mut g6 = g.clone();
    g6.seed = 6;
    inputs.extend(sim::game_inputs(
        &pos,
        &game.moves[5..],
        &g6,
        fail_until + 300,
    ));
    let wiring = Wiring::Matrix {
        rows: [5, 6, 13, 19, 26, 12, 16, 20],
        cols: [4, 17, 27, 22, 10, 9, 11, 21],
    };
    let sensors = Arc::new(AtomicU64::new(0xFFFF_0000_0000_FFFF));
    let failing = Arc::new(AtomicBool::new(false));
    let reopened = Arc::new(AtomicU32::new(0));
    let pins = FailingPins {
        inner: SimPins::new(wiring.clone(), sensors.clone()),
        failing: failing.clone(),
        reopened: reopened.clone(),
    };
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let board = std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        let at =
            |ms: u64| std::thread::sleep(Duration::from_millis(ms).saturating_sub(t0.elapsed()));
        let mut fail_marks = [(fail_from, true), (fail_until, false)]
            .into_iter()
            .peekable();
        for (t, input) in inputs {
            while let Some((ft, on)) = fail_marks.next_if(|(ft, _)| *ft <= t) {
                at(ft);
                failing.store(on, Ordering::Relaxed);
            }
            at(t);
            let SimInput::Reading(Reading::Square(sq, state)) = input else {
                continue;
            };
            let bit = 1u64 << sq as u32;
            let s = sensors.load(Ordering::Relaxed);
            sensors.store(
                if state == EMPTY { s & !bit } else { s | bit },
                Ordering::Relaxed,
            );
        }
        std::thread::sleep(Duration::from_millis(1500));
        let _ = done_tx.send(());
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut events = Vec::new();
    rt.block_on(daemon::run(
        Settings::default(),
        Source::Gpio(wiring, Box::new(pins), Mapping::default(), 200),
        daemon::RunOptions {
            until_board_done: true,
            speed: 1.0,
            ..Default::default()
        },
        |e| events.push(e.clone()),
        async {
            let _ = done_rx.await;
        },
    ));
    board.join().unwrap();
    let links: Vec<(u64, &str)> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Link { state } => Some((e.t, state)),
            _ => None,
        })
        .collect();
    let states: Vec<&str> = links.iter().map(|(_, s)| *s).collect();
    assert_eq!(states, ["connected", "silent", "reconnected"]);
    let silent_said: Vec<u64> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Say { text, .. } if text == "Brett antwortet nicht" => Some(e.t),
            _ => None,
        })
        .collect();
    assert_eq!(silent_said.len(), 1);
    // 3 s after the last good scan (the board thread and the daemon start within a few ms).
    let after = silent_said[0] as i64 - fail_from as i64;
    assert!(
        (2_900..=3_600).contains(&after),
        "said {after} ms after the failure"
    );
    assert!(links[2].0 + 100 >= fail_until, "{links:?}");
    assert!(
        reopened.load(Ordering::Relaxed) >= 1,
        "the lines requested again"
    );
    let moves: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Move { uci, .. } => Some(uci.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(moves, ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]);
}
