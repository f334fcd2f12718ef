//! Playing against the computer, engine side (issue 18): the game fed move by move, the
//! computer's moves given as the daemon gives them (`computer_move`), the board executing them
//! through occupancy readings.

use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
use chessboardd::engine::game::fen_of;
use chessboardd::engine::rules::Mode;
use chessboardd::engine::table::Table;
use chessboardd::engine::{
    Asked, Button, Command, ComputerAnswer, Engine, Event, EventKind, Reading, Resumed, Settings,
    UciClocks,
};
use chessboardd::words::{FileWords, Lang, Phrases, Style};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::uci::UciMove;
use shakmaty::{ByColor, CastlingMode, Chess, Color, Move, Position, Role, Square};

const STOCKFISH: &str = "Stockfish 16, Elo 1500";

/// One board, one engine, simulated time, and what came out.
struct Game {
    e: Engine,
    t: u64,
    ev: Vec<Event>,
}

fn casual() -> Settings {
    Settings {
        mode: Mode::Casual,
        ..Settings::default()
    }
}

impl Game {
    /// A new game set up on the board, the computer playing `computer`.
    fn new(s: Settings, computer: Color) -> Game {
        let mut e = Engine::new(s);
        e.set_computer(Some((computer, STOCKFISH.to_string())));
        let mut ev = Vec::new();
        e.new_game(0, Chess::default(), true, &mut ev);
        Game { e, t: 0, ev }
    }

    fn read(&mut self, dt: u64, sq: Square, state: u8) {
        self.t += dt;
        self.e
            .reading(self.t, Reading::Square(sq, state), &mut self.ev);
    }

    fn lift(&mut self, sq: Square) {
        self.read(250, sq, EMPTY);
    }

    fn place(&mut self, sq: Square) {
        self.read(250, sq, OCCUPIED);
    }

    fn wait(&mut self, dt: u64) {
        self.t += dt;
        self.e.advance(self.t, &mut self.ev);
    }

    /// The events since the last call.
    fn take(&mut self) -> Vec<Event> {
        // Whatever the debouncer holds is read first.
        self.wait(50);
        std::mem::take(&mut self.ev)
    }

    fn pos(&self) -> Chess {
        self.e.game().pos.clone()
    }

    /// A move in UCI in the current position.
    fn mv(&self, uci: &str) -> Move {
        uci.parse::<UciMove>()
            .unwrap()
            .to_move(&self.pos())
            .unwrap()
    }

    /// The player makes `uci` on the board the way a person does: a victim lifted first, the
    /// piece lifted and placed, a castling's rook after its king.
    fn player(&mut self, uci: &str) {
        let m = self.mv(uci);
        self.execute(m);
    }

    /// Lifts and places what `m` moves, in the current position.
    fn execute(&mut self, m: Move) {
        match m {
            Move::Castle { king, rook } => {
                let side = m.castling_side().unwrap();
                let turn = self.pos().turn();
                self.lift(king);
                self.place(side.king_to(turn));
                self.lift(rook);
                self.place(side.rook_to(turn));
            }
            Move::EnPassant { from, to } => {
                self.lift(Square::from_coords(to.file(), from.rank()));
                self.lift(from);
                self.place(to);
            }
            _ => {
                if m.is_capture() {
                    self.lift(m.to());
                }
                self.lift(m.from().unwrap());
                self.place(m.to());
            }
        }
    }

    /// The computer answers `uci` for the position it was asked about.
    fn computer(&mut self, uci: &str) -> bool {
        // (The player's last placement read first.)
        self.wait(50);
        let req = self
            .e
            .computer_request(self.t)
            .expect("the computer is asked");
        let m = self.mv(uci);
        self.e.computer_move(self.t, req.key, m, &mut self.ev)
    }

    fn command(&mut self, c: Command) -> String {
        self.t += 100;
        self.e.command(self.t, c, &mut self.ev)
    }
}

fn said(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e.kind.spoken().map(|(t, _)| t.to_string()))
        .collect()
}

fn moves(events: &[Event]) -> Vec<(Color, String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Move {
                color, san, say, ..
            } => Some((*color, san.clone(), say.clone())),
            _ => None,
        })
        .collect()
}

fn replicated(events: &[Event]) -> Vec<(u64, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Replicated { uci } => Some((e.t, uci.clone())),
            _ => None,
        })
        .collect()
}

fn touched(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Touched { .. }))
        .count()
}

fn mismatches(events: &[Event]) -> Vec<(Vec<Square>, Vec<Square>)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Mismatch { missing, extra } => Some((missing.clone(), extra.clone())),
            _ => None,
        })
        .collect()
}

/// A game fed move by move: the player's moves on the board, the computer's given and executed
/// on the board by the player, once correctly and once wrongly then put right.
#[test]
fn a_game_against_the_computer_move_by_move() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    assert_eq!(g.e.computer(), Some(Color::Black));
    // White (the player) has the move: the computer is not asked.
    assert!(g.e.computer_request(g.t).is_none());
    g.take();

    g.player("e2e4");
    let ev = g.take();
    assert_eq!(moves(&ev), [(Color::White, "e4".into(), "Eva vier".into())]);
    let req =
        g.e.computer_request(g.t)
            .expect("black to move: the computer");
    assert_eq!(req.moves_uci, ["e2e4"]);
    assert_eq!(req.position_command(), "position startpos moves e2e4");
    assert!(req.clocks.is_none());

    // The computer answers; its move is announced like any move.
    assert!(g.computer("e7e5"));
    let ev = g.take();
    assert_eq!(moves(&ev), [(Color::Black, "e5".into(), "Eva fünf".into())]);
    // Now the board must show it: no new request, the player's lifts are no touches.
    assert!(g.e.computer_request(g.t).is_none());
    g.lift(E7);
    g.place(E5);
    let ev = g.take();
    assert_eq!(touched(&ev), 0, "{ev:?}");
    assert_eq!(replicated(&ev).len(), 1);
    assert_eq!(replicated(&ev)[0].1, "e7e5");

    // The next move, executed wrongly: the knight to a6 instead of c6.
    g.player("g1f3");
    g.take();
    assert!(g.computer("b8c6"));
    g.lift(B8);
    g.place(A6);
    let ev = g.take();
    assert!(replicated(&ev).is_empty());
    assert!(mismatches(&ev).is_empty(), "not before the mismatch time");
    g.wait(3000);
    let ev = g.take();
    assert_eq!(mismatches(&ev), [(vec![C6], vec![A6])]);
    assert_eq!(
        said(&ev),
        ["Auf Ihrem Brett: Springer von Bella acht nach Cesar sechs"]
    );
    // Put right.
    g.lift(A6);
    g.place(C6);
    let ev = g.take();
    assert_eq!(replicated(&ev).len(), 1);
    assert_eq!(touched(&ev), 0);

    assert_eq!(g.e.game().plies.len(), 4);
    // The PGN names the computer for its colour; the player keeps the configured name.
    let pgn = g.e.pgn();
    assert!(pgn.contains("[Black \"Stockfish 16, Elo 1500\"]"), "{pgn}");
    assert!(!pgn.contains("[White \"Stockfish"), "{pgn}");
}

/// The computer's mating move ends the game (fool's mate, the computer black).
#[test]
fn the_computer_mates() {
    let s = Settings {
        pgn_tags: vec![("White".into(), "Felix".into())],
        ..casual()
    };
    let mut g = Game::new(s, Color::Black);
    g.player("f2f3");
    assert!(g.computer("e7e5"));
    g.lift(Square::E7);
    g.place(Square::E5);
    g.player("g2g4");
    assert!(g.computer("d8h4"));
    let ev = g.take();
    assert_eq!(
        moves(&ev).last().map(|m| m.2.clone()),
        Some("Dame Hector vier Schachmatt".into())
    );
    assert!(
        ev.iter()
            .any(|e| matches!(e.kind, EventKind::GameOver { result: "0-1", .. })),
        "{ev:?}"
    );
    assert!(g.e.is_over());
    assert!(g.e.computer_request(g.t).is_none());
    assert_eq!(g.e.game().plies.len(), 4);
    let pgn = g.e.pgn();
    assert!(pgn.contains("[White \"Felix\"]"), "{pgn}");
    assert!(pgn.contains("[Black \"Stockfish 16, Elo 1500\"]"), "{pgn}");
}

/// While the computer thinks, the board is only watched: a lift is no touch, a board left wrong
/// is reported.
#[test]
fn the_board_is_watched_while_the_computer_thinks() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    g.player("d2d4");
    g.take();
    g.lift(G8);
    g.place(F6);
    g.wait(3500);
    let ev = g.take();
    assert_eq!(touched(&ev), 0, "{ev:?}");
    assert!(moves(&ev).is_empty());
    assert_eq!(mismatches(&ev), [(vec![G8], vec![F6])]);
    // Still the computer's turn, and it is asked (the board is told to be put right).
    assert!(g.e.computer_request(g.t).is_some());
    g.lift(F6);
    g.place(G8);
    let ev = g.take();
    assert!(ev
        .iter()
        .any(|e| matches!(e.kind, EventKind::Restored { .. })));
}

/// The computer's clock runs from the player's move until its move; no clock runs while the
/// player executes it; the player's clock starts when it stands on the board.
#[test]
fn the_clocks_against_the_computer() {
    use Square::*;
    let s = Settings {
        time_control: Some("600+5".parse().unwrap()),
        ..casual()
    };
    let mut g = Game::new(s, Color::Black);
    g.player("e2e4");
    let ev = g.take();
    let t_e4 = ev
        .iter()
        .find(|e| matches!(e.kind, EventKind::Move { .. }))
        .unwrap()
        .t;
    let white = 600_000 - t_e4 as i64 + 5_000;
    assert_eq!(g.e.running_clock(), Some(Color::Black));
    g.wait(2_000);
    let req = g.e.computer_request(g.t).unwrap();
    let clocks = req.clocks.unwrap();
    let black_used = (g.t - t_e4) as i64;
    assert_eq!(
        (clocks.wtime, clocks.btime, clocks.winc, clocks.binc),
        (white, 600_000 - black_used, 5_000, 5_000)
    );
    assert_eq!(clocks.movestogo, None);
    // It may think twice its share of its time (20 moves to go) and its increment, no more.
    let own = 600_000 - black_used;
    assert_eq!(clocks.budget_ms, 2 * (own / 20) + 5_000);
    assert_eq!(UciClocks::budget(3_000, 0, None), 300);
    assert_eq!(UciClocks::budget(700, 2_000, Some(1)), 200);
    assert_eq!(UciClocks::budget(300, 0, None), 100);
    assert_eq!(
        clocks.go_args(),
        format!(
            "wtime {white} btime {} winc 5000 binc 5000",
            600_000 - black_used
        )
    );
    let black = 600_000 - black_used + 5_000;
    let c5 = g.mv("c7c5");
    assert!(g.e.computer_move(g.t, req.key, c5, &mut g.ev));
    assert_eq!(g.e.running_clock(), None);
    // The player listens and executes: nobody's time.
    g.wait(4_000);
    assert_eq!(g.e.clocks(g.t), Some((white, black)));
    g.lift(C7);
    g.place(C5);
    let ev = g.take();
    let t_done = replicated(&ev)[0].0;
    assert_eq!(g.e.clocks(t_done), Some((white, black)));
    assert_eq!(g.e.running_clock(), Some(Color::White));
    let now = g.t;
    assert_eq!(
        g.e.clocks(now),
        Some((white - (now - t_done) as i64, black))
    );
    assert!(ev.iter().any(|e| matches!(
        e.kind,
        EventKind::Clock {
            running: Some(Color::White),
            ..
        }
    )));
}

/// A period with a move count gives UCI's `movestogo`.
#[test]
fn a_period_with_a_move_count_gives_moves_to_go() {
    let s = Settings {
        time_control: Some("40/5400+30:1800+30".parse().unwrap()),
        ..casual()
    };
    let mut g = Game::new(s, Color::White);
    let c = g.e.computer_request(g.t).unwrap().clocks.unwrap();
    assert_eq!(c.movestogo, Some(40));
    assert!(g.computer("e2e4"));
    g.lift(Square::E2);
    g.place(Square::E4);
    g.player("e7e5");
    g.wait(50);
    let c = g.e.computer_request(g.t).unwrap().clocks.unwrap();
    assert_eq!(c.movestogo, Some(39));
    assert_eq!((c.winc, c.binc), (30_000, 30_000));
}

/// A late answer for a position that is gone is dropped; an illegal move is refused.
#[test]
fn a_stale_key_and_an_illegal_move_are_refused() {
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    g.take();
    let old = g.e.computer_request(g.t).unwrap().key;
    // The player takes his move back (confirmed) and plays another one with the same number
    // of plies: the old answer must not be taken.
    g.command(Command::Press(Button::Takeback));
    g.command(Command::Press(Button::Takeback));
    assert_eq!(g.e.game().plies.len(), 0);
    g.lift(Square::E4);
    g.place(Square::E2);
    g.player("d2d4");
    g.take();
    let new = g.e.computer_request(g.t).unwrap().key;
    assert_ne!(old, new);
    assert_eq!(new.plies(), old.plies());
    let e5 = g.mv("e7e5");
    assert!(!g.e.computer_move(g.t, old, e5, &mut g.ev));
    assert!(g.take().is_empty());
    // A move the position does not allow (the queen through her own pawn).
    let illegal = Move::Normal {
        role: Role::Queen,
        from: Square::D8,
        capture: None,
        to: Square::H4,
        promotion: None,
    };
    assert!(!g.e.computer_move(g.t, new, illegal, &mut g.ev));
    assert!(g.take().is_empty());
    assert_eq!(g.e.game().plies.len(), 1);
    // A key for the player's own turn is not a request either.
    assert!(g.computer("e7e5"));
    let key = g.e.position_key();
    let m = g.mv("g1f3");
    assert!(!g.e.computer_move(g.t, key, m, &mut g.ev));
}

/// `takeback` against the computer takes back the player's move and the computer's reply;
/// the board must then show the earlier position. While the computer thinks, only the
/// player's move.
#[test]
fn takeback_of_two_plies() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    assert!(g.computer("e7e5"));
    g.lift(E7);
    g.place(E5);
    g.player("g1f3");
    assert!(g.computer("b8c6"));
    g.lift(B8);
    g.place(C6);
    g.take();
    let before_nf3 = fen_of(&g.e.game().plies[2].before);
    assert_eq!(
        g.command(Command::Press(Button::Takeback)),
        "Zurücknehmen? Zum Bestätigen nochmals"
    );
    g.command(Command::Press(Button::Takeback));
    let ev = g.take();
    let taken: Vec<String> = ev
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Takeback { san, .. } => Some(san.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(taken, ["Nc6", "Nf3"]);
    assert_eq!(fen_of(&g.pos()), before_nf3);
    assert_eq!(g.pos().turn(), Color::White);
    assert!(g.e.computer_request(g.t).is_none());
    // The board still shows both moves: told to put them back.
    g.wait(3_000);
    let ev = g.take();
    let (missing, extra) = &mismatches(&ev)[0];
    assert_eq!(
        (missing.clone(), extra.clone()),
        (vec![G1, B8], vec![F3, C6])
    );
    g.lift(C6);
    g.place(B8);
    g.lift(F3);
    g.place(G1);
    let ev = g.take();
    assert!(ev
        .iter()
        .any(|e| matches!(e.kind, EventKind::Restored { .. })));
    // The player moves again; the computer thinks; a takeback now is his move alone.
    g.player("d2d4");
    g.take();
    assert!(g.e.computer_request(g.t).is_some());
    g.command(Command::Press(Button::Takeback));
    g.command(Command::Press(Button::Takeback));
    assert_eq!(g.e.game().plies.len(), 2);
    assert_eq!(g.pos().turn(), Color::White);
    g.lift(D4);
    g.place(D2);
    // While the computer's move is being executed: that move and the player's.
    g.player("d2d4");
    assert!(g.computer("d7d5"));
    g.lift(D7);
    g.command(Command::Press(Button::Takeback));
    g.command(Command::Press(Button::Takeback));
    assert_eq!(g.e.game().plies.len(), 2);
    assert_eq!(g.pos().turn(), Color::White);
    // With only the computer's first move made, there is nothing of the player's to take back.
    let mut g = Game::new(casual(), Color::White);
    assert!(g.computer("e2e4"));
    g.command(Command::Press(Button::Takeback));
    let text = g.command(Command::Press(Button::Takeback));
    assert_eq!(text, "Noch kein Zug");
    assert_eq!(g.e.game().plies.len(), 1);
}

/// `switch`: a new game, the colours swapped; the computer moves once the board shows the
/// start position.
#[test]
fn switch_swaps_the_colours_in_a_new_game() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    assert!(g.computer("e7e5"));
    g.lift(E7);
    g.place(E5);
    g.take();
    assert_eq!(
        g.command(Command::Switch),
        "Farben tauschen? Zum Bestätigen nochmals"
    );
    assert_eq!(g.e.computer(), Some(Color::Black));
    let text = g.command(Command::Switch);
    assert!(text.contains("Sie spielen Schwarz"), "{text}");
    assert_eq!(g.e.computer(), Some(Color::White));
    assert_eq!(g.e.games_started(), 2);
    assert!(g.e.game().plies.is_empty());
    // The board still shows the last game: the computer waits for the start position.
    assert!(g.e.computer_request(g.t).is_none());
    g.lift(E4);
    g.place(E2);
    g.lift(E5);
    g.place(E7);
    g.take();
    let req =
        g.e.computer_request(g.t)
            .expect("white to move: the computer");
    assert!(req.moves_uci.is_empty());
    assert!(g.computer("g1f3"));
    assert!(g.e.pgn().contains("[White \"Stockfish 16, Elo 1500\"]"));
}

/// Hint and evaluation: asked of the daemon (an event with the position's key), answered in
/// words; refused in tournament mode and without a computer; a late answer dropped.
#[test]
fn hint_and_evaluation() {
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    assert!(g.computer("e7e5"));
    g.lift(Square::E7);
    g.place(Square::E5);
    g.take();
    // While the computer thinks, a hint is not for the player.
    g.player("b1c3");
    g.wait(50);
    assert_eq!(g.command(Command::Hint), "Schwarz am Zug");
    assert!(g.computer("b8c6"));
    g.lift(Square::B8);
    g.place(Square::C6);
    g.take();
    assert_eq!(g.command(Command::Hint), "");
    let ev = g.take();
    let key = g.e.position_key();
    assert_eq!(
        ev.iter()
            .filter_map(|e| match &e.kind {
                EventKind::ComputerAsk { what, key } => Some((*what, *key)),
                _ => None,
            })
            .collect::<Vec<_>>(),
        [(Asked::Hint, key)]
    );
    let line = ev
        .iter()
        .find(|e| matches!(e.kind, EventKind::ComputerAsk { .. }))
        .unwrap()
        .to_json();
    assert!(
        line.ends_with(
            r#""type":"computer_ask","what":"hint","key":{"games_started":1,"plies":4,"takebacks":0}}"#
        ),
        "{line}"
    );
    let nf3 = g.mv("g1f3");
    g.e.computer_answer(g.t, key, ComputerAnswer::Hint(nf3), &mut g.ev);
    assert_eq!(said(&g.take()), ["Hinweis: Springer Felix drei"]);
    g.command(Command::Evaluate);
    g.e.computer_answer(
        g.t,
        key,
        ComputerAnswer::Evaluation {
            cp: Some(-120),
            mate: None,
        },
        &mut g.ev,
    );
    // (From white's view, white to move: -1.2.)
    assert_eq!(said(&g.take()), ["Schwarz steht besser, etwa ein Bauer"]);
    // An answer for a position that is gone says nothing.
    g.player("g1f3");
    g.take();
    g.e.computer_answer(g.t, key, ComputerAnswer::Hint(nf3), &mut g.ev);
    assert!(said(&g.take()).is_empty());

    // Tournament mode: refused, and the daemon is not asked.
    let mut g = Game::new(Settings::default(), Color::Black);
    assert_eq!(g.command(Command::Hint), "Hilfen nur im freien Spiel");
    assert_eq!(g.command(Command::Evaluate), "Hilfen nur im freien Spiel");
    assert_eq!(g.command(Command::Switch), "Hilfen nur im freien Spiel");
    assert!(!g
        .take()
        .iter()
        .any(|e| matches!(e.kind, EventKind::ComputerAsk { .. })));
    // No computer.
    let mut e = Engine::new(casual());
    let mut ev = Vec::new();
    assert_eq!(e.command(0, Command::Hint, &mut ev), "Kein Computergegner");
    assert_eq!(
        e.command(0, Command::Switch, &mut ev),
        "Kein Computergegner"
    );
    assert!(e.computer_request(0).is_none());
}

/// The score in words, thresholds at 0.3, 1 and 3 pawns, mates for either side, from the side
/// to move's view as UCI gives it.
#[test]
fn evaluation_words() {
    let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
    let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
    use Color::{Black, White};
    /// The side to move, centipawns, mate, the German words, the English words.
    type Case = (Color, Option<i32>, Option<i32>, &'static str, &'static str);
    let cases: &[Case] = &[
        (
            White,
            Some(0),
            None,
            "Ausgeglichen",
            "The position is equal",
        ),
        (
            White,
            Some(29),
            None,
            "Ausgeglichen",
            "The position is equal",
        ),
        (
            Black,
            Some(-29),
            None,
            "Ausgeglichen",
            "The position is equal",
        ),
        (
            White,
            Some(30),
            None,
            "Weiß steht etwas besser",
            "White is slightly better",
        ),
        (
            Black,
            Some(45),
            None,
            "Schwarz steht etwas besser",
            "Black is slightly better",
        ),
        (
            White,
            Some(100),
            None,
            "Weiß steht besser, etwa ein Bauer",
            "White is better, by about one pawn",
        ),
        (
            Black,
            Some(-260),
            None,
            "Weiß steht besser, etwa 3 Bauern",
            "White is better, by about 3 pawns",
        ),
        (
            White,
            Some(-199),
            None,
            "Schwarz steht besser, etwa 2 Bauern",
            "Black is better, by about 2 pawns",
        ),
        (
            White,
            Some(300),
            None,
            "Weiß steht deutlich besser",
            "White is clearly better",
        ),
        (
            Black,
            Some(900),
            None,
            "Schwarz steht deutlich besser",
            "Black is clearly better",
        ),
        (
            White,
            None,
            Some(3),
            "Weiß setzt in 3 Zügen matt",
            "White mates in 3 moves",
        ),
        (
            White,
            Some(-50),
            Some(-1),
            "Schwarz setzt in einem Zug matt",
            "Black mates in one move",
        ),
        (
            Black,
            None,
            Some(2),
            "Schwarz setzt in 2 Zügen matt",
            "Black mates in 2 moves",
        ),
        (
            Black,
            None,
            Some(-4),
            "Weiß setzt in 4 Zügen matt",
            "White mates in 4 moves",
        ),
        (White, None, None, "Ausgeglichen", "The position is equal"),
    ];
    for (turn, cp, mate, de_text, en_text) in cases {
        assert_eq!(
            de.evaluation(*turn, *cp, *mate),
            *de_text,
            "{turn} {cp:?} {mate:?}"
        );
        assert_eq!(
            en.evaluation(*turn, *cp, *mate),
            *en_text,
            "{turn} {cp:?} {mate:?}"
        );
    }
}

fn san_moves(start: &Chess, sans: &[&str]) -> Vec<Move> {
    let mut pos = start.clone();
    sans.iter()
        .map(|s| {
            let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            m
        })
        .collect()
}

fn resumed(start: Chess, moves: Vec<Move>) -> Resumed {
    Resumed {
        start,
        moves: moves.into_iter().map(|m| (m, None)).collect(),
        recovered: Vec::new(),
        illegal: ByColor { white: 0, black: 0 },
        clocks: None,
        notes: Vec::new(),
        adjourned: None,
    }
}

/// The moves the UCI engine is told, for castling (both sides), en passant and promotion,
/// against strings written by hand; a game resumed from the record, with the computer set
/// before or after.
#[test]
fn uci_moves_for_castling_en_passant_and_promotion() {
    let start = Chess::default();
    let moves = san_moves(
        &start,
        &[
            "e4", "Nf6", "e5", "d5", "exd6", "exd6", "Nf3", "Be7", "Bc4", "O-O", "O-O",
        ],
    );
    assert!(matches!(moves[4], Move::EnPassant { .. }));
    let game = resumed(start, moves);
    let hand = [
        "e2e4", "g8f6", "e4e5", "d7d5", "e5d6", "e7d6", "g1f3", "f8e7", "f1c4", "e8g8", "e1g1",
    ];
    // The computer set before the game is taken up...
    let mut e = Engine::new(casual());
    e.set_computer(Some((Color::Black, STOCKFISH.into())));
    let mut ev = Vec::new();
    assert_eq!(e.resume(10, &game, &mut ev), 11);
    let req = e.computer_request(10).expect("black to move");
    assert_eq!(req.moves_uci, hand);
    assert_eq!(
        req.position_command(),
        format!("position startpos moves {}", hand.join(" "))
    );
    // ... or after.
    let mut e = Engine::new(casual());
    e.resume(10, &game, &mut ev);
    assert!(e.computer_request(10).is_none());
    e.set_computer(Some((Color::Black, STOCKFISH.into())));
    assert_eq!(e.computer_request(10).unwrap().moves_uci, hand);
    // The computer for the other colour: not its move.
    e.set_computer(Some((Color::White, STOCKFISH.into())));
    assert!(e.computer_request(10).is_none());

    // From a set-up position: castling queenside, promotions to a queen and a knight.
    let fen = "r3k3/6P1/8/8/8/8/1p6/4K2R w Kq - 0 1";
    let start: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let moves = san_moves(&start, &["O-O", "b1=Q", "g8=N", "O-O-O"]);
    let mut e = Engine::new(casual());
    e.set_computer(Some((Color::White, STOCKFISH.into())));
    e.resume(10, &resumed(start, moves), &mut ev);
    let req = e.computer_request(10).expect("white to move");
    assert_eq!(req.start_fen, fen);
    assert_eq!(req.moves_uci, ["e1g1", "b2b1q", "g7g8n", "e8c8"]);
    assert_eq!(
        req.position_command(),
        format!("position fen {fen} moves e1g1 b2b1q g7g8n e8c8")
    );
}

/// The computer's castling and promotion, executed on an occupancy board; the daemon's table
/// passes everything on.
#[test]
fn the_computer_castles_and_promotes_through_the_table() {
    // Black may castle kingside, and has a pawn to promote.
    let start: Chess = "4k2r/8/8/8/8/8/1p6/R3K3 b k - 0 1"
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let mut table = Table::new(casual(), &[None]);
    table.set_computer(Some((Color::Black, STOCKFISH.into())));
    assert_eq!(table.computer(), Some(Color::Black));
    let mut out = Vec::new();
    table.new_game(0, start, true, &mut out);
    let req = table.computer_request(0).unwrap();
    let castle = "e8g8"
        .parse::<UciMove>()
        .unwrap()
        .to_move(&table.leader().game().pos)
        .unwrap();
    assert!(table.computer_move(100, req.key, castle, &mut out));
    // King then rook.
    let mut t = 100;
    for (sq, state) in [
        (Square::E8, EMPTY),
        (Square::G8, OCCUPIED),
        (Square::H8, EMPTY),
        (Square::F8, OCCUPIED),
    ] {
        t += 300;
        table.reading(0, t, Reading::Square(sq, state), &mut out);
    }
    table.advance(t + 100, &mut out);
    let events: Vec<Event> = out.drain(..).map(|(_, e)| e).collect();
    assert_eq!(replicated(&events).len(), 1, "{events:?}");
    assert_eq!(replicated(&events)[0].1, "e8g8");
    assert_eq!(touched(&events), 0);
    // The player's rook move, then the computer promotes.
    let mut t = t + 200;
    for (sq, state) in [(Square::A1, EMPTY), (Square::A2, OCCUPIED)] {
        t += 300;
        table.reading(0, t, Reading::Square(sq, state), &mut out);
    }
    table.advance(t + 400, &mut out);
    let req = table
        .computer_request(t + 400)
        .expect("the computer's move");
    let promote = "b2b1n"
        .parse::<UciMove>()
        .unwrap()
        .to_move(&table.leader().game().pos)
        .unwrap();
    assert!(table.computer_move(t + 400, req.key, promote, &mut out));
    let events: Vec<Event> = out.drain(..).map(|(_, e)| e).collect();
    assert_eq!(
        moves(&events).last().map(|m| m.2.clone()),
        Some("Bella eins Springer".into())
    );
    // The pawn lifted, the knight placed: executed.
    let mut t = t + 400;
    for (sq, state) in [(Square::B2, EMPTY), (Square::B1, OCCUPIED)] {
        t += 300;
        table.reading(0, t, Reading::Square(sq, state), &mut out);
    }
    table.advance(t + 100, &mut out);
    let events: Vec<Event> = out.drain(..).map(|(_, e)| e).collect();
    assert_eq!(replicated(&events).len(), 1, "{events:?}");
    assert_eq!(table.leader().game().plies.len(), 3);
    assert_eq!(table.leader().game().pos.turn(), Color::White);
}

/// Casual play: the board put back to the position before the player's move takes back his
/// move and the computer's reply; the computer's move alone put back is no takeback (the
/// computer would only move again), and is told as a board to put right.
#[test]
fn the_board_put_back_takes_back_both_moves() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    assert!(g.computer("e7e5"));
    g.lift(E7);
    g.place(E5);
    g.take();
    // The computer's pawn back alone.
    g.lift(E5);
    g.place(E7);
    g.wait(3_500);
    let ev = g.take();
    assert!(!ev
        .iter()
        .any(|e| matches!(e.kind, EventKind::Takeback { .. })));
    assert_eq!(mismatches(&ev), [(vec![E5], vec![E7])]);
    // And the player's too: both taken back, the player to move.
    g.lift(E4);
    g.place(E2);
    g.wait(500);
    let ev = g.take();
    let taken = ev
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Takeback { .. }))
        .count();
    assert_eq!(taken, 2, "{ev:?}");
    assert!(g.e.game().plies.is_empty());
    assert!(g.e.computer_request(g.t).is_none());
    g.player("d2d4");
    assert!(g.computer("d7d5"));
}

/// The hint and the evaluation in English.
#[test]
fn hint_and_evaluation_in_english() {
    let s = Settings {
        phrases: Phrases::new(Lang::En, Style::Short, FileWords::Nato),
        ..casual()
    };
    let mut g = Game::new(s, Color::White);
    assert!(g.computer("e2e4"));
    g.lift(Square::E2);
    g.place(Square::E4);
    g.take();
    g.command(Command::Hint);
    let key = g.e.position_key();
    let nf6 = g.mv("g8f6");
    g.e.computer_answer(g.t, key, ComputerAnswer::Hint(nf6), &mut g.ev);
    g.command(Command::Evaluate);
    // Black to move, -35 from black's view: white is slightly better.
    g.e.computer_answer(
        g.t,
        key,
        ComputerAnswer::Evaluation {
            cp: Some(-35),
            mate: None,
        },
        &mut g.ev,
    );
    assert_eq!(
        said(&g.take()),
        ["Hint: Knight foxtrot six", "White is slightly better"]
    );
    let mut g2 = Game::new(
        Settings {
            phrases: Phrases::new(Lang::En, Style::Short, FileWords::Nato),
            ..Settings::default()
        },
        Color::White,
    );
    assert_eq!(
        g2.command(Command::Hint),
        "Training help only in casual play"
    );
}

/// The computer switched off while its move is being executed (the daemon gave up on the UCI
/// engine): the move stands, and the player's clock starts when it is on the board.
#[test]
fn the_computer_switched_off_while_its_move_is_executed() {
    let s = Settings {
        time_control: Some("300".parse().unwrap()),
        ..casual()
    };
    let mut g = Game::new(s, Color::Black);
    g.player("e2e4");
    assert!(g.computer("e7e5"));
    g.e.set_computer(None);
    assert_eq!(g.e.running_clock(), None);
    g.lift(Square::E7);
    g.place(Square::E5);
    let ev = g.take();
    assert_eq!(replicated(&ev).len(), 1);
    assert_eq!(g.e.running_clock(), Some(Color::White));
    // From now on both sides are the player's: black's reply is read from the board.
    g.player("g1f3");
    g.wait(50);
    g.player("b8c6");
    assert_eq!(moves(&g.take()).len(), 2);
}

/// Issue 26, point 6: the computer thinking a while is said once, a few seconds after the
/// player's move ("Computer denkt"), in the language's words; a quick answer says nothing.
#[test]
fn the_computer_thinking_a_while_is_said() {
    for (lang, words) in [
        (Lang::AppendixF, "Computer denkt"),
        (Lang::En, "The computer is thinking"),
    ] {
        let s = Settings {
            phrases: Phrases::new(lang, Style::Short, FileWords::Phonetic),
            ..casual()
        };
        let mut g = Game::new(s, Color::Black);
        g.player("e2e4");
        g.take();
        // Answered at once: nothing said but the move.
        assert!(g.computer("e7e5"));
        g.lift(Square::E7);
        g.place(Square::E5);
        g.take();
        g.player("g1f3");
        g.take();
        g.wait(2_700);
        let ev = g.take();
        assert!(!said(&ev).iter().any(|s| s == words), "{:?}", said(&ev));
        g.wait(300);
        let ev = g.take();
        assert_eq!(said(&ev), [words]);
        // Once.
        g.wait(20_000);
        assert!(said(&g.take()).is_empty());
        assert!(g.computer("b8c6"));
        assert!(!said(&g.take()).iter().any(|s| s == words));
    }
}

/// A capture of the computer's that the player leaves half done (the captured piece taken
/// off, the capturing one not moved) is reminded, as a wrong execution is; finished, it
/// stands.
#[test]
fn a_half_executed_capture_is_reminded() {
    use Square::*;
    let mut g = Game::new(casual(), Color::Black);
    g.player("e2e4");
    assert!(g.computer("d7d5"));
    g.lift(D7);
    g.place(D5);
    g.player("b1c3");
    g.take();
    assert!(g.computer("d5e4"));
    let ev = g.take();
    assert_eq!(said(&ev), ["David schlägt Eva vier"]);
    // The white pawn taken off, the black one left on d5.
    g.lift(E4);
    g.wait(5_000);
    let ev = g.take();
    assert!(mismatches(&ev).is_empty(), "{ev:?}");
    assert!(said(&ev).is_empty(), "{:?}", said(&ev));
    g.wait(1_000);
    let ev = g.take();
    assert_eq!(mismatches(&ev), [(vec![E4], vec![D5])]);
    assert_eq!(
        said(&ev),
        ["Auf Ihrem Brett: Bauer von David fünf schlägt Eva vier"]
    );
    g.lift(D5);
    g.place(E4);
    let ev = g.take();
    assert_eq!(replicated(&ev).len(), 1, "{ev:?}");
}

/// The computer's move left unexecuted is no free thinking time: the player's clock starts
/// `execution_ms` after the move was announced, and the move is said again.
#[test]
fn the_players_clock_starts_after_a_bounded_execution_time() {
    use Square::*;
    let s = Settings {
        time_control: Some("600+0".parse().unwrap()),
        execution_ms: 8_000,
        ..casual()
    };
    let mut g = Game::new(s, Color::Black);
    g.player("e2e4");
    g.take();
    assert!(g.computer("c7c5"));
    let t_move = g.t;
    g.take();
    let white = g.e.clocks(g.t).unwrap().0;
    g.wait(t_move + 7_900 - g.t);
    assert_eq!(g.e.running_clock(), None);
    assert!(said(&g.take()).is_empty());
    g.wait(t_move + 8_000 - g.t);
    assert_eq!(g.e.running_clock(), Some(Color::White));
    let ev = g.take();
    assert_eq!(
        said(&ev),
        ["Auf Ihrem Brett: Bauer von Cesar sieben nach Cesar fünf"]
    );
    // Executed later: the clock ran from the bound, not from the execution.
    g.wait(5_000);
    g.lift(C7);
    g.place(C5);
    let ev = g.take();
    assert_eq!(replicated(&ev).len(), 1);
    assert_eq!(g.e.running_clock(), Some(Color::White));
    let used = (g.t - (t_move + 8_000)) as i64;
    assert_eq!(g.e.clocks(g.t).unwrap().0, white - used);
}
