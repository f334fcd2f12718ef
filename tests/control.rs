//! Commands a blind player or an arbiter gives (issue 5's command set): answered in words, by the
//! engine directly and through the control socket of a running daemon.

use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use chessboardd::control::Parsed;
use chessboardd::engine::{Engine, Settings};
use chessboardd::replay;
use shakmaty::Color;

/// The default settings, speaking `lang` (files by their phonetic names, short style).
fn in_lang(lang: chessboardd::words::Lang) -> Settings {
    use chessboardd::words::{FileWords, Phrases, Style};
    Settings {
        phrases: Phrases::new(lang, Style::Short, FileWords::Phonetic),
        ..Settings::default()
    }
}

/// An engine after the moves of `script` (replay format), at the script's end.
fn engine_after(script: &str, args: Settings) -> (Engine, u64) {
    let lines = replay::parse_script(script, &["board".to_string()]).unwrap();
    let end = lines.last().map_or(0, |l| l.t) + 10_000;
    (replay::run(&lines, args, |_| {}), end)
}

fn ask(engine: &mut Engine, t: u64, line: &str) -> String {
    let cmd = line.parse::<Parsed>().unwrap().0;
    engine.command(t, cmd, &mut Vec::new())
}

const FOOLS_MATE_MINUS_ONE: &str = "lift f2\nplace f3\nlift e7\nplace e5\nlift g2\nplace g4\n";

#[test]
fn questions_are_answered_in_words() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(ask(&mut e, t, "last"), "Gustav vier");
    assert_eq!(
        ask(&mut e, t, "moves 2"),
        "1. Schwarz Eva fünf, 2. Weiß Gustav vier"
    );
    assert_eq!(
        ask(&mut e, t, "moves 9"),
        "1. Weiß Felix drei, Schwarz Eva fünf, 2. Weiß Gustav vier"
    );
    assert_eq!(ask(&mut e, t, "turn"), "Schwarz am Zug");
    assert_eq!(ask(&mut e, t, "time"), "2 Züge. Schwarz am Zug");
    assert_eq!(ask(&mut e, t, "square g4"), "Weißer Bauer auf Gustav vier");
    assert_eq!(ask(&mut e, t, "square g2"), "Gustav zwei leer");
    assert_eq!(ask(&mut e, t, "file g"), "Linie Gustav: Weiß: Springer Gustav eins, Bauer Gustav vier. Schwarz: Springer Gustav acht, Bauer Gustav sieben");
    assert_eq!(
        ask(&mut e, t, "rank 5"),
        "Reihe fünf: Schwarz: Bauer Eva fünf"
    );
    assert_eq!(ask(&mut e, t, "rank 6"), "Reihe sechs: leer");
    assert_eq!(
        ask(&mut e, t, "position black Q"),
        "Schwarz: Dame David acht"
    );
    assert_eq!(ask(&mut e, t, "position white K"), "Weiß: König Eva eins");
}

#[test]
fn resigning_wants_a_confirmation_that_names_it() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(
        ask(&mut e, t, "resign"),
        "Schwarz gibt auf? Zum Bestätigen nochmals"
    );
    assert!(!e.is_over());
    // Too late: the first press has lapsed, this one asks again.
    assert_eq!(
        ask(&mut e, t + 6000, "resign"),
        "Schwarz gibt auf? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask(&mut e, t + 7000, "resign"),
        "Schwarz gibt auf. Weiß gewinnt"
    );
    assert!(e.is_over());
}

/// A command of a player's own keypad (issue 26: the keys that can harm).
fn ask_as(engine: &mut Engine, t: u64, by: Color, line: &str) -> String {
    let cmd = line.parse::<Parsed>().unwrap().0;
    engine.command_by(t, cmd, Some(by), &mut Vec::new())
}

/// White touches the e-pawn and puts it back, then plays e4; Black lifts the b-knight, touches
/// the g-knight meanwhile and puts it back, plays Nc6; White holds the d-pawn.
const TOUCHES: &str = "lift e2\nplace e2\nlift e2\nplace e4\nlift b8\nlift g8\nplace g8\n\
place c6\nlift d2\n";

/// Appendix F2.9 (e): `touches` tells the asker's opponent's touches since the last move, as
/// the assistant reports them to the arbiter: in the asker's turn, the pieces the opponent
/// touched and put back in his; in the opponent's turn, every piece he has lifted.
#[test]
fn touches_tells_the_opponents_touches_since_the_last_move() {
    use chessboardd::words::Lang;
    let (mut e, t) = engine_after(TOUCHES, Settings::default());
    assert_eq!(
        ask_as(&mut e, t, Color::White, "touches"),
        "Schwarz berührt Springer Gustav acht"
    );
    assert_eq!(
        ask_as(&mut e, t, Color::Black, "touches"),
        "Weiß berührt Bauer David zwei"
    );
    // A shared control: every player's, since the last move.
    assert_eq!(
        ask(&mut e, t, "touches"),
        "Schwarz berührt Springer Gustav acht. Weiß berührt Bauer David zwei"
    );
    let en = in_lang(Lang::En);
    let (mut e, t) = engine_after("lift e2\nplace e4\nlift e7\nplace e5\n", en.clone());
    assert_eq!(ask_as(&mut e, t, Color::White, "touches"), "No touches");
    let (mut e, t) = engine_after(TOUCHES, en);
    assert_eq!(
        ask_as(&mut e, t, Color::White, "touches"),
        "Black touches Knight Gustav eight"
    );
}

/// `legal`: the legal moves of the piece on the cursor's square, the last moved piece's when the
/// board is not explored; a piece of the player not to move, as if it were his turn.
#[test]
fn legal_says_where_a_piece_can_go() {
    use chessboardd::words::Lang;
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(
        ask(&mut e, t, "legal"),
        "Weißer Bauer auf Gustav vier: Gustav fünf"
    );
    ask(&mut e, t, "go e8");
    assert_eq!(
        ask(&mut e, t, "legal"),
        "Schwarzer König auf Eva acht: König Eva sieben"
    );
    ask(&mut e, t, "go d1");
    assert_eq!(
        ask(&mut e, t, "legal"),
        "Weiße Dame auf David eins: keine Züge"
    );
    ask(&mut e, t, "go d8");
    let queen = ask(&mut e, t, "legal");
    let (piece, moves) = queen.split_once(": ").unwrap();
    assert_eq!(piece, "Schwarze Dame auf David acht");
    let mut moves: Vec<&str> = moves.split(", ").collect();
    moves.sort_unstable();
    assert_eq!(
        moves,
        [
            "Dame Eva sieben",
            "Dame Felix sechs",
            "Dame Gustav fünf",
            "Dame Hector vier Schachmatt"
        ]
    );
    let en = in_lang(Lang::En);
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, en);
    ask(&mut e, t, "go d1");
    assert_eq!(
        ask(&mut e, t, "legal"),
        "White queen on David one: no moves"
    );
}

/// `players`: who plays, the asker's opponent or both, from `[game]`; `move N`: move number N.
#[test]
fn players_and_a_move_by_its_number() {
    use chessboardd::words::Lang;
    let tags = |lang| Settings {
        pgn_tags: vec![
            ("White".into(), "Magnus Carlsen".into()),
            ("WhiteTitle".into(), "GM".into()),
            ("WhiteElo".into(), "2830".into()),
            ("Black".into(), "?".into()),
        ],
        ..in_lang(lang)
    };
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, tags(Lang::AppendixF));
    assert_eq!(
        ask_as(&mut e, t, Color::Black, "players"),
        "Weiß: GM Magnus Carlsen, 2830"
    );
    assert_eq!(
        ask_as(&mut e, t, Color::White, "players"),
        "Schwarz: unbekannt"
    );
    assert_eq!(
        ask(&mut e, t, "players"),
        "Weiß: GM Magnus Carlsen, 2830. Schwarz: unbekannt"
    );
    assert_eq!(
        ask(&mut e, t, "move 1"),
        "1. Weiß Felix drei, Schwarz Eva fünf"
    );
    assert_eq!(ask(&mut e, t, "move 2"), "2. Weiß Gustav vier");
    assert_eq!(ask(&mut e, t, "move 3"), "Noch kein Zug");
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, tags(Lang::En));
    assert_eq!(ask_as(&mut e, t, Color::White, "players"), "Black: unknown");
    assert_eq!(
        ask(&mut e, t, "move 1"),
        "1. White Felix three, Black Eva five"
    );
}

/// `material`: the balance in pawns and the pieces each side has lost; a pawn promoted is no
/// piece lost.
#[test]
fn material_says_the_balance_and_the_pieces_captured() {
    use chessboardd::words::Lang;
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(ask(&mut e, t, "material"), "Material gleich");
    // 1. e4 d5 2. exd5 Qxd5 3. Nc3: a pawn each, even.
    let even = "lift e2\nplace e4\nlift d7\nplace d5\nlift d5\nlift e4\nplace d5\n\
lift d8\nlift d5\nplace d5\nlift b1\nplace c3\n";
    let (mut e, t) = engine_after(even, Settings::default());
    assert_eq!(
        ask(&mut e, t, "material"),
        "Material gleich. Geschlagen: Weiß: Bauer. Schwarz: Bauer"
    );
    // bxa8=Q: a queen for the pawn, the rook taken; the knight stays: 9 against 3.
    let promote = Settings::default();
    let lines = "setup fen rn2k3/1P6/8/8/8/8/8/4K3 w - - 0 1\nlift b7\nlift a8\nplace a8\n";
    let (mut e, t) = engine_after(lines, promote);
    assert_eq!(
        ask(&mut e, t, "material"),
        "Weiß: 6 Bauern mehr. Geschlagen: Schwarz: Turm"
    );
    let en = in_lang(Lang::En);
    let (mut e, t) = engine_after(even, en);
    assert_eq!(
        ask(&mut e, t, "material"),
        "Material even. Captured: White: Pawn. Black: Pawn"
    );
}

/// Three times the same position: Black to move may claim (Art. 9.2b).
const THREEFOLD: &str =
    "lift g1\nplace f3\nlift g8\nplace f6\nlift f3\nplace g1\nlift f6\nplace g8\n\
lift g1\nplace f3\nlift g8\nplace f6\nlift f3\nplace g1\nlift f6\nplace g8\nlift g1\nplace f3\n";

#[test]
fn a_draw_claim_wants_a_confirmation_that_names_it() {
    let (mut e, t) = engine_after(THREEFOLD, Settings::default());
    // The key a hand finds first (5) claims: nothing is decided on the first press.
    assert_eq!(
        ask(&mut e, t, "claim"),
        "Schwarz reklamiert? Zum Bestätigen nochmals"
    );
    assert!(!e.is_over());
    // Another command in between: the claim is asked again.
    ask(&mut e, t + 500, "last");
    assert_eq!(
        ask(&mut e, t + 1000, "claim"),
        "Schwarz reklamiert? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask(&mut e, t + 2000, "claim"),
        "Reklamation berechtigt. Dreimalige Stellungswiederholung. Remis"
    );
    assert_eq!(
        e.game().ending.map(|x| x.result()).unwrap_or("*"),
        "1/2-1/2"
    );
}

#[test]
fn a_players_keypad_claims_and_resigns_for_him_only() {
    let (mut e, t) = engine_after(THREEFOLD, Settings::default());
    // Black has the move: White's keypad may not claim for him.
    assert_eq!(
        ask_as(&mut e, t, Color::White, "claim"),
        "Weiß ist nicht am Zug"
    );
    assert_eq!(
        ask_as(&mut e, t + 100, Color::White, "claim"),
        "Weiß ist nicht am Zug"
    );
    assert!(!e.is_over());
    // White resigns in Black's turn: White loses, not the player to move.
    assert_eq!(
        ask_as(&mut e, t + 200, Color::White, "resign"),
        "Weiß gibt auf? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask_as(&mut e, t + 300, Color::White, "resign"),
        "Weiß gibt auf. Schwarz gewinnt"
    );
    assert_eq!(e.game().ending.map(|x| x.result()).unwrap_or("*"), "0-1");
}

/// One reading on the engine's board, then past the settle time.
fn board(engine: &mut Engine, t: u64, square: &str, occupied: bool) {
    use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
    use chessboardd::engine::Reading;
    let state = if occupied { OCCUPIED } else { EMPTY };
    let mut out = Vec::new();
    engine.reading(t, Reading::Square(square.parse().unwrap(), state), &mut out);
    engine.advance(t + 400, &mut out);
}

/// Appendix A1 (1997 and 2005; F2.9 (f)): `adjourn` is the player to move's, confirmed; the
/// sealed move made on the board is in no answer; A4 and A6: a draw offered and accepted before
/// the game resumes ends it, the sealed move never played.
#[test]
fn adjourning_is_the_player_to_moves_and_the_sealed_move_stays_in_the_envelope() {
    let (mut e, t) = engine_after(
        "lift e2\nplace e4\nlift e7\nplace e5\n",
        Settings::default(),
    );
    assert_eq!(
        ask_as(&mut e, t, Color::Black, "adjourn"),
        "Schwarz ist nicht am Zug"
    );
    assert_eq!(
        ask(&mut e, t + 100, "adjourn"),
        "Hängepartie? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask(&mut e, t + 200, "adjourn"),
        "Die Partie wird abgebrochen: Weiß macht den Abgabezug auf dem Brett, er wird nicht angesagt"
    );
    board(&mut e, t + 1000, "g1", false);
    board(&mut e, t + 2000, "f3", true);
    assert_eq!(e.game().plies.len(), 2);
    let sealed = e.envelope().expect("sealed");
    assert_eq!((sealed.sealer, sealed.move_number), (Color::White, 2));
    assert_eq!(ask(&mut e, t + 3000, "last"), "Eva fünf");
    assert_eq!(
        ask(&mut e, t + 3100, "moves 9"),
        "1. Weiß Eva vier, Schwarz Eva fünf"
    );
    assert_eq!(
        ask(&mut e, t + 3200, "adjourn"),
        "Abgabezug versiegelt, die Uhren stehen. Die Partie ist abgebrochen"
    );
    // The board is not read while the game stands: the knight back to g1 is no move.
    board(&mut e, t + 4000, "f3", false);
    board(&mut e, t + 5000, "g1", true);
    assert_eq!(e.game().plies.len(), 2);
    assert_eq!(
        ask_as(&mut e, t + 6000, Color::Black, "draw"),
        "Schwarz bietet Remis an"
    );
    assert_eq!(
        ask_as(&mut e, t + 6100, Color::White, "draw"),
        "Weiß nimmt Remis an? Zum Bestätigen nochmals"
    );
    ask_as(&mut e, t + 6200, Color::White, "draw");
    assert_eq!(e.game().ending.map(|x| x.result()), Some("1/2-1/2"));
    assert!(e.envelope().is_none());
    assert!(!e.pgn().contains("Nf3"), "{}", e.pgn());
}

/// A7: the envelope is opened by `resume`, confirmed; the clock keys do not open it. An
/// illegal attempt while the move is sealed tells neither its squares nor its piece.
#[test]
fn the_envelope_is_opened_by_resume_confirmed_and_an_illegal_attempt_tells_no_piece() {
    use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
    use chessboardd::engine::{EventKind, Reading};
    let (mut e, t) = engine_after("lift e2\nplace e4\n", Settings::default());
    ask(&mut e, t, "adjourn");
    ask(&mut e, t + 100, "adjourn");
    // Black's knight set down on g6, where it cannot go, and back: ruled, and told plainly.
    let mut out = Vec::new();
    for (dt, sq, state) in [
        (1000, "g8", EMPTY),
        (1500, "g6", OCCUPIED),
        (5000, "g6", EMPTY),
        (5500, "g8", OCCUPIED),
    ] {
        e.reading(
            t + dt,
            Reading::Square(sq.parse().unwrap(), state),
            &mut out,
        );
    }
    e.advance(t + 8000, &mut out);
    let illegal: Vec<&EventKind> = out
        .iter()
        .map(|x| &x.kind)
        .filter(|k| matches!(k, EventKind::Illegal { .. }))
        .collect();
    assert!(
        matches!(illegal[..], [EventKind::Illegal { attempted, .. }] if attempted.is_empty()),
        "{illegal:?}"
    );
    let said: Vec<&str> = out
        .iter()
        .filter_map(|x| x.kind.spoken())
        .map(|x| x.0)
        .collect();
    assert!(said.contains(&"Unzulässiger Zug"), "{said:?}");
    assert!(!said.iter().any(|s| s.contains("Gustav")), "{said:?}");
    board(&mut e, t + 9000, "g8", false);
    board(&mut e, t + 10000, "f6", true);
    assert!(e.envelope().is_some());
    // The knight back on g8 (A5); the clock keys say the game stands.
    board(&mut e, t + 11000, "f6", false);
    board(&mut e, t + 12000, "g8", true);
    let stands = "Abgabezug versiegelt, die Uhren stehen. Die Partie ist abgebrochen";
    assert_eq!(ask(&mut e, t + 13000, "toggle-pause"), stands);
    assert_eq!(ask(&mut e, t + 13100, "start"), stands);
    assert!(e.envelope().is_some());
    assert_eq!(
        ask(&mut e, t + 13200, "resume"),
        "Weiter? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask(&mut e, t + 13300, "resume"),
        "Umschlag geöffnet. Abgabezug. Springer Felix sechs"
    );
    assert_eq!(e.game().plies.len(), 2);
}

/// A takeback while a move is being sealed (casual play) ends the sealing: the move after it
/// is an ordinary move, announced.
#[test]
fn a_takeback_while_sealing_ends_the_sealing() {
    let casual = Settings {
        mode: chessboardd::engine::rules::Mode::Casual,
        ..Settings::default()
    };
    let (mut e, t) = engine_after("lift e2\nplace e4\n", casual);
    ask(&mut e, t, "adjourn");
    ask(&mut e, t + 100, "adjourn");
    ask(&mut e, t + 200, "takeback");
    assert_eq!(ask(&mut e, t + 300, "takeback"), "Zurückgenommen: Eva vier");
    board(&mut e, t + 1000, "e4", false);
    board(&mut e, t + 2000, "e2", true);
    board(&mut e, t + 3000, "d2", false);
    board(&mut e, t + 4000, "d4", true);
    board(&mut e, t + 5000, "g8", false);
    board(&mut e, t + 6000, "f6", true);
    assert_eq!(e.game().plies.len(), 2);
    assert!(e.envelope().is_none());
    assert_eq!(ask(&mut e, t + 7000, "last"), "Springer Felix sechs");
}

/// The Laws of 2023 no longer adjourn; nor does a game against the computer.
#[test]
fn adjourning_is_refused_where_the_laws_have_no_adjournment() {
    use chessboardd::words::Lang;
    let rules = "fide-2023".parse().unwrap();
    let settings = Settings {
        rules,
        ..in_lang(Lang::En)
    };
    let (mut e, t) = engine_after("lift e2\nplace e4\n", settings);
    assert_eq!(ask(&mut e, t, "adjourn"), "This game cannot be adjourned");
    assert_eq!(
        ask(&mut e, t + 100, "adjourn"),
        "This game cannot be adjourned"
    );
    board(&mut e, t + 1000, "g8", false);
    board(&mut e, t + 2000, "f6", true);
    assert_eq!(e.game().plies.len(), 2);
    assert_eq!(ask(&mut e, t + 3000, "last"), "Knight Felix six");
}

#[test]
fn a_players_keypad_offers_a_draw_and_never_accepts_its_own_offer() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    // White offers in Black's turn (after his move, Art. 9.1a); pressing again is no acceptance.
    assert_eq!(
        ask_as(&mut e, t, Color::White, "draw"),
        "Weiß bietet Remis an"
    );
    assert_eq!(
        ask_as(&mut e, t + 100, Color::White, "draw"),
        "Remisangebot steht"
    );
    assert!(!e.is_over());
    // Black's keypad accepts, confirmed.
    assert_eq!(
        ask_as(&mut e, t + 200, Color::Black, "draw"),
        "Schwarz nimmt Remis an? Zum Bestätigen nochmals"
    );
    assert!(!e.is_over());
    assert_eq!(
        ask_as(&mut e, t + 300, Color::Black, "draw"),
        "Remis vereinbart"
    );
    assert_eq!(
        e.game().ending.map(|x| x.result()).unwrap_or("*"),
        "1/2-1/2"
    );
}

#[test]
fn a_promotion_chosen_on_a_players_keypad_in_the_opponents_turn_is_his_next() {
    // White's pawn on c7; Black to move plays h7-h6; White's keypad chose the bishop while
    // Black was still moving, and c7-c8 is then c8=B at once.
    let script = "setup fen 8/2P4p/k7/8/8/8/8/7K b - - 0 1\nlift h7\n";
    let (mut e, t) = engine_after(script, Settings::default());
    assert_eq!(ask_as(&mut e, t, Color::White, "promote bishop"), "Läufer");
    let mut out = Vec::new();
    use chessboardd::engine::Reading;
    use shakmaty::Square;
    e.reading(t + 300, Reading::Square(Square::H6, 1), &mut out);
    e.reading(t + 1000, Reading::Square(Square::C7, 0), &mut out);
    e.reading(t + 1300, Reading::Square(Square::C8, 1), &mut out);
    e.advance(t + 1400, &mut out);
    let sans: Vec<String> = e.game().plies.iter().map(|p| p.san.to_string()).collect();
    assert_eq!(sans, ["h6", "c8=B+"]);
}

#[test]
fn silence_is_a_command_with_nothing_to_say() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    let mut out = Vec::new();
    let cmd = "silence".parse::<Parsed>().unwrap().0;
    assert_eq!(e.command(t, cmd, &mut out), "");
    let kinds: Vec<&str> = out.iter().map(|e| e.kind.type_name()).collect();
    assert_eq!(kinds, ["silence"]);
}

#[test]
fn pausing_stops_the_clock() {
    let settings = Settings {
        time_control: Some("60+0".parse().unwrap()),
        ..Settings::default()
    };
    let (mut e, t) = engine_after("lift e2\nplace e4\n", settings);
    let black = e.clocks(t).unwrap().1;
    assert_eq!(ask(&mut e, t, "pause"), "Uhr angehalten");
    assert_eq!(
        e.clocks(t + 100_000).unwrap().1,
        black,
        "no time passes while paused"
    );
    assert!(!e.is_over(), "no flag falls while paused");
    assert_eq!(ask(&mut e, t + 100_000, "resume"), "Uhr läuft weiter");
    assert_eq!(e.clocks(t + 110_000).unwrap().1, black - 10_000);
}

#[test]
fn the_control_socket_answers_ctl() {
    let dir = std::env::temp_dir().join(format!("chessboardd-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let socket = dir.join("control.sock");
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/molinari-bordais-1979.pgn"
    );
    let mut daemon = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args([
            "run",
            "--board",
            &format!("sim:{pgn}"),
            "--speed",
            "2",
            "--speech",
            "text",
            "--events-json",
        ])
        .args(["--socket", socket.to_str().unwrap()])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let ctl = |args: &[&str]| {
        let o = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["ctl", "--socket", socket.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    };
    // Wait for the mating move, then ask (the daemon stays a few seconds after the game).
    let t0 = Instant::now();
    loop {
        let (_, out) = ctl(&["last"]);
        if out.contains("Springer David drei Schachmatt") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no mate seen: {out}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, out) = ctl(&["square", "d3"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["text"], "Schwarzer Springer auf David drei");
    let (code, out) = ctl(&["moves", "2"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("5. Weiß Gustav drei, Schwarz Springer David drei Schachmatt"),
        "{out}"
    );
    let (code, out) = ctl(&["fly"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("\"ok\":false"), "{out}");
    let _ = Proc::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status();
    let _ = daemon.wait();
}

/// A daemon on a simulated board, with its events read as they come.
struct Daemon {
    child: std::process::Child,
    events: std::sync::mpsc::Receiver<serde_json::Value>,
    socket: std::path::PathBuf,
    dir: std::path::PathBuf,
}

impl Daemon {
    /// Starts `run` on a simulated board playing `pgn`, `speed` times faster than real time.
    fn start(name: &str, pgn: &str, speed: u32, extra: &[&str]) -> Daemon {
        use std::io::BufRead;
        let dir = std::env::temp_dir().join(format!("chessboardd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let game = dir.join("game.pgn");
        std::fs::write(&game, pgn).unwrap();
        let socket = dir.join("control.sock");
        let mut child = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["run", "--board", &format!("sim:{}", game.display())])
            .args([
                "--speed",
                &speed.to_string(),
                "--speech",
                "text",
                "--events-json",
            ])
            .args(["--socket", socket.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, events) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        Daemon {
            child,
            events,
            socket,
            dir,
        }
    }

    /// The first event from now on that `pred` accepts.
    fn wait_for(&self, what: &str, pred: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let until = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        while Instant::now() < until {
            if let Ok(v) = self.events.recv_timeout(Duration::from_millis(100)) {
                if pred(&v) {
                    return v;
                }
                seen.push(v.to_string());
            }
        }
        panic!("no {what} in 30 s; seen:\n{}", seen.join("\n"));
    }

    /// Waits for the spoken answer `text` (a `say` event).
    fn said(&self, text: &str) {
        self.wait_for(text, |v| v["type"] == "say" && v["text"] == text);
    }

    /// Sends a command through `chessboardd ctl` and returns its answer's text.
    fn ctl(&self, line: &str) -> String {
        let o = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["ctl", "--socket", self.socket.to_str().unwrap()])
            .args(line.split_whitespace())
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{line}: not JSON ({e}): {o:?}"));
        assert_eq!(v["ok"], true, "{line}: {v}");
        assert_eq!(o.status.code(), Some(0), "{line}");
        v["text"].as_str().unwrap().to_string()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // A test may have stopped it already.
        if let Ok(None) = self.child.try_wait() {
            let _ = Proc::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
        }
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const THREE_PLIES: &str = "[Event \"t\"]\n\n1. e4 e5 2. Nf3 *\n";

/// Every command of the control socket, answered in words, the words also spoken (a `say`).
#[test]
fn every_command_through_the_socket() {
    let d = Daemon::start(
        "every",
        THREE_PLIES,
        4,
        &["--mode", "casual", "--time-control", "600"],
    );
    d.wait_for("Nf3", |v| v["type"] == "move" && v["san"] == "Nf3");
    let cases: &[(&str, &str)] = &[
        ("last", "Springer Felix drei"),
        ("moves 2", "1. Schwarz Eva fünf, 2. Weiß Springer Felix drei"),
        ("turn", "Schwarz am Zug"),
        ("position white N", "Weiß: Springer Bella eins, Springer Felix drei"),
        ("position black K", "Schwarz: König Eva acht"),
        ("rank 4", "Reihe vier: Weiß: Bauer Eva vier"),
        ("file e", "Linie Eva: Weiß: König Eva eins, Bauer Eva vier. Schwarz: König Eva acht, Bauer Eva fünf"),
        ("square e5", "Schwarzer Bauer auf Eva fünf"),
        ("square e3", "Eva drei leer"),
        ("adjust", "J'adoube"),
        ("draw", "Weiß bietet Remis an"),
        ("pause", "Uhr angehalten"),
        ("resume", "Uhr läuft weiter"),
        ("toggle-pause", "Uhr angehalten"),
        ("toggle-pause", "Uhr läuft weiter"),
        ("rate up", "Schneller"),
        ("rate down", "Langsamer"),
        ("volume down", "Leiser"),
        ("volume up", "Lauter"),
        ("takeback", "Zurücknehmen? Zum Bestätigen nochmals"),
        ("takeback", "Zurückgenommen: Springer Felix drei"),
        ("new-game", "Neue Partie? Zum Bestätigen nochmals"),
        ("new-game", "Neue Partie"),
        ("resign", "Weiß gibt auf? Zum Bestätigen nochmals"),
        ("resign", "Weiß gibt auf. Schwarz gewinnt"),
    ];
    for (line, text) in cases {
        assert_eq!(d.ctl(line), *text, "{line}");
        d.said(text);
    }
    let time = d.ctl("time");
    assert!(
        time.starts_with("0 Züge. Weiß 10 Minuten. Schwarz 10 Minuten"),
        "{time}"
    );
    let help = d.ctl("help");
    assert!(help.starts_with("Befehle: letzter Zug"), "{help}");
    // The voice changes go to the speaker as events.
    d.ctl("rate up");
    let v = d.wait_for("voice", |v| v["type"] == "voice");
    assert_eq!(
        (v["rate"].as_u64(), v["volume"].as_u64()),
        (Some(200), Some(100))
    );
}

/// A player without a screen: a new game waits for the arbiter's start, the clock with a button.
#[test]
fn start_and_the_clock_button_through_the_socket() {
    let dir = std::env::temp_dir().join(format!("chessboardd-btn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[clock]\ntime_control = \"300\"\nswitch = \"button\"\nwait_for_start = true\n",
    )
    .unwrap();
    let d = Daemon::start(
        "button",
        "[Event \"t\"]\n\n1. e4 *\n",
        4,
        &["--config", config.to_str().unwrap()],
    );
    // The pawn stands on e4, but no move is complete before the clock is pressed.
    d.wait_for("the pawn placed", |v| {
        v["type"] == "touched" && v["square"] == "e2"
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(d.ctl("last"), "Noch kein Zug");
    // The clocks stood: white's five minutes are whole.
    assert!(d.ctl("time").contains("Weiß 5 Minuten. Schwarz 5 Minuten"));
    assert_eq!(d.ctl("start"), "Uhr läuft");
    assert_eq!(d.ctl("clock"), "Eva vier");
    let m = d.wait_for("e4", |v| v["type"] == "move");
    assert_eq!(m["san"], "e4");
    assert!(m["white_ms"].as_i64().unwrap() < 300_000);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Key events as a USB keypad sends them, through a FIFO standing in for its evdev device.
/// A keypad as the kernel gives it: evdev key records, written into a FIFO the daemon reads as
/// its keypad device.
struct Keypad {
    dir: std::path::PathBuf,
    fifo: std::path::PathBuf,
    writer: Option<std::fs::File>,
}

impl Keypad {
    fn new(name: &str) -> Keypad {
        let dir = std::env::temp_dir().join(format!("chessboardd-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("keypad");
        let _ = std::fs::remove_file(&fifo);
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        Keypad {
            dir,
            fifo,
            writer: None,
        }
    }

    fn path(&self) -> &str {
        self.fifo.to_str().unwrap()
    }

    /// Presses the key `name` for `hold_ms`.
    fn key(&mut self, name: &str, hold_ms: u64) {
        use chessboardd::control::keypad::{encode, EV_KEY};
        use chessboardd::control::keys::key_code;
        use std::io::Write;
        // Opening for writing waits until the daemon has opened the FIFO for reading.
        let fifo = &self.fifo;
        let w = self
            .writer
            .get_or_insert_with(|| std::fs::OpenOptions::new().write(true).open(fifo).unwrap());
        let code = key_code(name).unwrap();
        w.write_all(&encode(EV_KEY, code, 1)).unwrap();
        w.write_all(&encode(0, 0, 0)).unwrap();
        w.flush().unwrap();
        std::thread::sleep(Duration::from_millis(hold_ms));
        w.write_all(&encode(EV_KEY, code, 0)).unwrap();
        w.flush().unwrap();
    }
}

impl Drop for Keypad {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn the_keypad_gives_every_command_its_key() {
    let mut keypad = Keypad::new("kp");
    let d = Daemon::start(
        "keypad",
        THREE_PLIES,
        // Real time: a confirmation (the same key again) is waited for 5 s of the daemon's time.
        1,
        &[
            "--mode",
            "casual",
            "--time-control",
            "600",
            "--keypad",
            keypad.path(),
        ],
    );
    d.wait_for("Nf3", |v| v["type"] == "move" && v["san"] == "Nf3");
    let mut key = |name: &str, hold_ms: u64| keypad.key(name, hold_ms);
    let short = 60;
    let long = 1300;
    let cases: &[(&str, u64, &str)] = &[
        ("KP0", short, "Springer Felix drei"),
        ("KP0", long, "Schwarz am Zug"),
        ("KP3", short, "1. Weiß Eva vier, Schwarz Eva fünf, 2. Weiß Springer Felix drei"),
        ("KP2", long, "Weiß: König Eva eins, Dame David eins, Turm Anna eins, Turm Hector eins, Läufer Cesar eins, Läufer Felix eins, Springer Bella eins, Springer Felix drei, Bauer Anna zwei, Bauer Bella zwei, Bauer Cesar zwei, Bauer David zwei, Bauer Felix zwei, Bauer Gustav zwei, Bauer Hector zwei, Bauer Eva vier"),
        ("KPDOT", short, "J'adoube"),
        ("KP4", short, "Weiß bietet Remis an"),
        ("KPENTER", long, "Uhr angehalten"),
        ("KPENTER", long, "Uhr läuft weiter"),
        ("KPPLUS", short, "Lauter"),
        ("KPMINUS", short, "Leiser"),
        ("KPASTERISK", short, "Schneller"),
        ("KPSLASH", short, "Langsamer"),
        ("KPASTERISK", long, "Material gleich"),
        ("NUMLOCK", long, "Weiß: unbekannt. Schwarz: unbekannt"),
        ("KPPLUS", long, "Keine Berührungen"),
        ("5", long, "Zurücknehmen? Zum Bestätigen nochmals"),
        ("KP5", long, "Zurückgenommen: Springer Felix drei"),
    ];
    for (name, hold, text) in cases {
        key(name, *hold);
        d.said(text);
    }
    key("KP1", short);
    d.wait_for("time", |v| {
        v["type"] == "say" && v["text"].as_str().unwrap().starts_with("1 Zug. Weiß ")
    });
    // Num Lock: the help a key at a time; 6 the next key, 5 told and not claimed, the dot
    // leaves (and is no j'adoube).
    key("NUMLOCK", short);
    let help = d.wait_for("help", |v| v["type"] == "say" && v["priority"] == "query");
    let help = help["text"].as_str().unwrap();
    assert!(
        help.starts_with("Hilfe Taste für Taste: 6 nächste Taste")
            && help.ends_with(". 0 letzter Zug, lang am Zug"),
        "{help}"
    );
    for (name, text) in [
        ("KP6", "1 Zeit, lang Züge 10"),
        ("KP5", "5 Reklamation, lang zurücknehmen"),
        ("KPDOT", "Hilfe beendet"),
    ] {
        key(name, short);
        d.said(text);
    }
    // The whole position, then silence: Backspace, and a long press of minus.
    for silence in ["BACKSPACE", "KPMINUS"] {
        key("KP2", short);
        d.wait_for("position", |v| {
            v["type"] == "say" && v["text"].as_str().unwrap().starts_with("Weiß: König")
        });
        key(silence, if silence == "KPMINUS" { long } else { short });
        d.wait_for("silence", |v| v["type"] == "silence");
    }
    // Exploring (a long press of the dot): from the last move's square (Nf3 was taken back),
    // up one square, then 0 4 1 to d1, 0 5 8 to e8 and 5 held: where the king can go, 0 held
    // then 2: the knights; Enter leaves, and is no clock press. Then a move by its number.
    let explore: &[(&str, u64, &str)] = &[
        ("KPDOT", long, "Erkunden. Schwarzer Bauer auf Eva fünf"),
        ("KP8", short, "Eva sechs leer"),
        ("KP0", short, ""),
        ("KP4", short, ""),
        ("KP1", short, "Weiße Dame auf David eins"),
        ("KP0", short, ""),
        ("KP5", short, ""),
        ("KP8", short, "Schwarzer König auf Eva acht"),
        (
            "KP5",
            long,
            "Schwarzer König auf Eva acht: König Eva sieben",
        ),
        // 0 held, then 2: where the knights stand.
        ("KP0", long, ""),
        (
            "KP2",
            short,
            "Weiß: Springer Bella eins, Springer Gustav eins. Schwarz: Springer Bella acht, Springer Gustav acht",
        ),
        ("KPENTER", short, "Erkunden beendet"),
        // The slash held, 1, Enter: move number 1 (Enter is no clock press).
        ("KPSLASH", long, ""),
        ("KP1", short, ""),
        ("KPENTER", short, "1. Weiß Eva vier, Schwarz Eva fünf"),
    ];
    for (name, hold, text) in explore {
        key(name, *hold);
        if !text.is_empty() {
            d.said(text);
        }
    }
}

/// A blind player's own keypad (his speaker's listener is his colour) acts for him: in the
/// opponent's turn it refuses his claim and resigns for him, never for the player to move.
#[test]
fn a_blind_players_keypad_acts_for_him_in_the_opponents_turn() {
    let mut keypad = Keypad::new("kp-owner");
    let config = keypad.dir.join("chessboardd.toml");
    std::fs::write(&config, "[announce]\nlistener = \"white\"\n").unwrap();
    let d = Daemon::start(
        "keypad-owner",
        THREE_PLIES,
        1,
        &[
            "--config",
            config.to_str().unwrap(),
            "--keypad",
            keypad.path(),
        ],
    );
    // 1. e4 e5 2. Nf3: Black has the move.
    d.wait_for("Nf3", |v| v["type"] == "move" && v["san"] == "Nf3");
    // + held: Black's touches since the last move (Appendix F2.9 (e)).
    keypad.key("KPPLUS", 1300);
    d.said("Keine Berührungen");
    keypad.key("KP5", 60);
    d.said("Weiß ist nicht am Zug");
    keypad.key("KP4", 1300);
    d.said("Weiß gibt auf? Zum Bestätigen nochmals");
    keypad.key("KP4", 1300);
    let over = d.wait_for("game over", |v| v["type"] == "game_over");
    assert_eq!(over["result"], "0-1");
}

const TO_CASTLING: &str =
    "lift e2\nplace e4\nlift e7\nplace e5\nlift g1\nplace f3\nlift b8\nplace c6\n\
lift f1\nplace c4\nwait 500\nlift g8\nplace f6\nlift e1\nplace g1\nlift h1\nplace f1\n";

/// Every answer is a sentence that begins with a capital letter (or a number), in every
/// language and with every way of speaking files, however its words begin.
#[test]
fn answers_begin_with_a_capital_in_every_language() {
    use chessboardd::words::{FileWords, Lang, Phrases, Style};
    let questions = [
        "last",
        "moves 1",
        "moves 3",
        "time",
        "turn",
        "position",
        "position white P",
        "position black B",
        "rank 4",
        "rank 6",
        "file e",
        "square e3",
        "square e4",
        "help",
        "pause",
        "resume",
        "rate up",
        "adjust",
        "claim",
        "draw",
        "resign",
        "resign",
        "last",
    ];
    for lang in ["appendix-f", "de", "en", "ro", "sv"] {
        for files in [FileWords::Phonetic, FileWords::Nato, FileWords::Letters] {
            let settings = Settings {
                time_control: Some("60+0".parse().unwrap()),
                phrases: Phrases::new(lang.parse::<Lang>().unwrap(), Style::Short, files),
                ..Settings::default()
            };
            let (mut e, t) = engine_after(TO_CASTLING, settings);
            for (i, q) in questions.iter().enumerate() {
                let said = ask(&mut e, t + i as u64 * 100, q);
                let first = said.chars().next();
                assert!(
                    first.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()),
                    "{lang} {files:?} {q}: {said:?}"
                );
            }
        }
    }
}

#[test]
fn answers_in_the_words_of_each_language() {
    use chessboardd::words::{FileWords, Lang, Phrases, Style};
    let in_lang = |lang: Lang| Settings {
        time_control: Some("60+0".parse().unwrap()),
        phrases: Phrases::new(lang, Style::Short, FileWords::Phonetic),
        ..Settings::default()
    };
    let (mut en, t) = engine_after(TO_CASTLING, in_lang(Lang::En));
    assert_eq!(ask(&mut en, t, "last"), "Castles kingside");
    assert_eq!(ask(&mut en, t, "moves 1"), "4. White Castles kingside");
    let ro_settings = Settings {
        time_control: Some("1200+0".parse().unwrap()),
        ..in_lang(Lang::Ro)
    };
    let (mut ro, t) = engine_after("lift e2\nplace e4\n", ro_settings);
    // Black's clock has run for ten seconds less a few milliseconds.
    assert_eq!(
        ask(&mut ro, t, "time"),
        "O mutare. Albul 20 de minute. Negrul 19 minute 51 de secunde. Negrul la mutare"
    );
    assert_eq!(
        ask(&mut ro, t, "file a"),
        "Coloana Anna: Albul: Turn Anna unu, Pion Anna doi. Negrul: Turn Anna opt, Pion Anna șapte"
    );
    let (mut sv, t) = engine_after(TO_CASTLING, in_lang(Lang::Sv));
    // Not entitled by the board: the claim is of the next move (9.2a), judged when it is made.
    assert_eq!(
        ask(&mut sv, t, "claim"),
        "Svart reklamerar? Tryck igen för att bekräfta"
    );
    assert_eq!(ask(&mut sv, t, "claim"), "Krav med nästa drag");
    assert_eq!(
        ask(&mut sv, t, "resign"),
        "Svart ger upp? Tryck igen för att bekräfta"
    );
    assert_eq!(ask(&mut sv, t, "resign"), "Svart ger upp. Vit vinner");
}

/// The keypad's help a key at a time (issue 26, point 7): the keys' lines go to the engine and
/// are answered in the language's words; a key pressed during the walk is told, not done.
#[test]
fn the_keypads_help_walks_its_keys_in_words() {
    use chessboardd::control::keys::{key_code, KeyEvent, KeyMap, Presses};
    use chessboardd::control::settings::ControlConfig;
    use chessboardd::words::Lang;
    let walk = |lang: Lang, keys: &[&str]| -> Vec<String> {
        let mut settings = in_lang(lang);
        let control = ControlConfig {
            keypad: Some("auto".into()),
            ..ControlConfig::default()
        };
        settings.help_pages = control.help_pages(&settings.phrases);
        settings.help = control.help(&settings.phrases);
        let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, settings);
        let mut presses = Presses::new(KeyMap::default(), 800);
        let mut said = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let at = 1000 * i as u64;
            let code = key_code(key).unwrap();
            let mut lines = presses.event(at, KeyEvent::Down(code));
            lines.extend(presses.event(at + 100, KeyEvent::Up(code)));
            for line in lines {
                said.push(ask(&mut e, t + at, &line));
            }
        }
        said
    };
    let de = walk(
        Lang::AppendixF,
        &["NUMLOCK", "KP6", "KP4", "KP5", "KPASTERISK", "KPDOT", "KP0"],
    );
    assert_eq!(
        de,
        [
            "Hilfe Taste für Taste: 6 nächste Taste, 4 vorige, jede andere Taste sagt, was sie \
             tut; Punkt oder Enter beendet die Hilfe. 0 letzter Zug, lang am Zug",
            "1 Zeit, lang Züge 10",
            "0 letzter Zug, lang am Zug",
            "5 Reklamation, lang zurücknehmen",
            "Stern schneller, lang Material",
            "Hilfe beendet",
            // After the walk, 0 is the last move again.
            "Gustav vier",
        ]
    );
    // From Backspace, the last key, to the exploration's keys and the end.
    let en = walk(
        Lang::En,
        &[
            "NUMLOCK", "KPSLASH", "NUMLOCK", "KP6", "KP6", "KP6", "KP6", "ENTER",
        ],
    );
    assert_eq!(
        en,
        [
            "Help key by key: 6 next key, 4 back, any other key says what it does; dot or \
             enter ends the help. 0 last move, held turn",
            "Slash slower, held move number: digits, then enter",
            "Num lock help key by key, held players",
            "Backspace silence",
            "While exploring: 8, 2, 4, 6 and 7, 9, 1, 3 one square their way, held to the next \
             piece; 5 guard, held legal moves; 0, then file and rank: go to a square; 0 held, \
             then 1 to 6: where the pawns, knights, bishops, rooks, queens, kings stand; dot or \
             enter ends exploring",
            "End of the keys. 4 back; dot or enter ends the help",
            "End of the keys. 4 back; dot or enter ends the help",
            "Help ended",
        ]
    );
}

/// The scoresheet (F2.5) notes a draw offer and a claim and its verdict, as PGN comments
/// after the move they follow; and an illegal move's penalty.
#[test]
fn the_record_notes_draw_offers_claims_and_penalties() {
    use chessboardd::engine::event::{EventKind, IllegalReason, Penalty};
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    // White has just moved and Black has touched nothing: the offer is White's (9.1a).
    assert_eq!(ask(&mut e, t, "draw"), "Weiß bietet Remis an");
    assert_eq!(
        ask(&mut e, t + 100, "claim"),
        "Schwarz reklamiert? Zum Bestätigen nochmals"
    );
    // No repetition on the board: the claim is of the move Black makes next (9.2a).
    assert_eq!(
        ask(&mut e, t + 200, "claim"),
        "Reklamation mit dem nächsten Zug"
    );
    let mut out = Vec::new();
    use chessboardd::engine::debounce::{EMPTY, OCCUPIED};
    use chessboardd::engine::Reading;
    use shakmaty::Square;
    e.reading(t + 300, Reading::Square(Square::D7, EMPTY), &mut out);
    e.reading(t + 600, Reading::Square(Square::D6, OCCUPIED), &mut out);
    e.advance(t + 3_000, &mut out);
    let pgn = e.pgn().replace('\n', " ");
    assert!(
        pgn.contains(
            "2. g4 {White offers a draw} 2... d6 {Black claims a draw by threefold repetition \
             with the move made: refused}"
        ),
        "{pgn}"
    );
    let illegal = EventKind::Illegal {
        color: Color::Black,
        count: 2,
        reason: IllegalReason::NotALegalMove,
        penalty: Penalty::ExtraTime,
        extra_ms: Some(120_000),
        attempted: "e7e4".into(),
    };
    assert_eq!(
        illegal.scoresheet_note().as_deref(),
        Some("Illegal move by Black (2): 120 s added to White's clock")
    );
}

/// After a takeback, `last` is the move now last, not the one taken back.
#[test]
fn last_after_a_takeback_is_the_move_now_last() {
    let casual = Settings {
        mode: chessboardd::engine::rules::Mode::Casual,
        ..Settings::default()
    };
    let (mut e, t) = engine_after(
        "lift e2\nplace e4\nlift e7\nplace e5\nlift g1\nplace f3\n",
        casual,
    );
    assert_eq!(ask(&mut e, t, "last"), "Springer Felix drei");
    assert_eq!(
        ask(&mut e, t, "takeback"),
        "Zurücknehmen? Zum Bestätigen nochmals"
    );
    assert_eq!(
        ask(&mut e, t + 100, "takeback"),
        "Zurückgenommen: Springer Felix drei"
    );
    assert_eq!(ask(&mut e, t + 200, "last"), "Eva fünf");
    assert_eq!(ask(&mut e, t + 300, "moves 1"), "1. Schwarz Eva fünf");
}

/// The lines of the control socket's answers on one connection.
struct Conn(std::io::BufReader<std::os::unix::net::UnixStream>);

impl Conn {
    fn open(socket: &std::path::Path) -> Conn {
        let s = std::os::unix::net::UnixStream::connect(socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Conn(std::io::BufReader::new(s))
    }

    fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.0.get_mut().write_all(bytes).unwrap();
    }

    /// The next answer line, as it came.
    fn answer(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.0.read_line(&mut line).unwrap();
        line
    }

    fn ask(&mut self, bytes: &[u8]) -> serde_json::Value {
        self.send(bytes);
        let line = self.answer();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }
}

/// What a careless client sends is answered with an error that names the limit and repeats
/// nothing of it, the connection going on; one connection over the limit closes the idlest.
#[test]
fn careless_lines_are_answered_without_echo_and_do_not_shut_others_out() {
    let d = Daemon::start("careless", THREE_PLIES, 4, &[]);
    d.wait_for("Nf3", |v| v["type"] == "move" && v["san"] == "Nf3");
    let mut c = Conn::open(&d.socket);
    // A line over 4 KiB: an error naming the limit, at once, without the line.
    let long = format!("square {}", "Q".repeat(5000));
    c.send(&long.as_bytes()[..4200]);
    let v: serde_json::Value = serde_json::from_str(&c.answer()).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(error.contains("4096 bytes"), "{error}");
    assert!(!v.to_string().contains("QQ"), "{v}");
    // Its rest is skipped, and the next line is a command again.
    c.send(&long.as_bytes()[4200..]);
    assert_eq!(c.ask(b"\nlast\n")["text"], "Springer Felix drei");
    // Not UTF-8: an error, and the connection stays.
    let v = c.ask(b"squ\xffare e4\n");
    assert_eq!(v["ok"], false, "{v}");
    assert!(v["error"].as_str().unwrap().contains("UTF-8"), "{v}");
    assert_eq!(c.ask(b"turn\n")["text"], "Schwarz am Zug");
    // An unknown command and a bad argument are not repeated.
    let v = c.ask(b"MARKER-one two\n");
    assert_eq!(v["ok"], false);
    assert!(!v.to_string().contains("MARKER"), "{v}");
    let v = c.ask(b"position MARKER\n");
    assert!(!v.to_string().contains("MARKER"), "{v}");
    // 32 connections held open, and one more: the one longest without a command is closed
    // with a word why, and the newcomer is answered.
    let mut held: Vec<Conn> = (0..32).map(|_| Conn::open(&d.socket)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut late = Conn::open(&d.socket);
    assert_eq!(late.ask(b"last\n")["text"], "Springer Felix drei");
    let closed = c.answer();
    assert!(closed.contains("32 connections"), "{closed:?}");
    assert_eq!(c.answer(), "", "closed after saying why");
    assert_eq!(held[31].ask(b"turn\n")["text"], "Schwarz am Zug");
}

/// The socket file goes with the daemon, on SIGTERM and on ctrl-c.
#[test]
fn the_socket_file_is_removed_at_exit() {
    for signal in ["-TERM", "-INT"] {
        let mut d = Daemon::start("exit", THREE_PLIES, 4, &[]);
        let t0 = Instant::now();
        while std::os::unix::net::UnixStream::connect(&d.socket).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(10), "no socket");
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Proc::new("kill")
            .args([signal, &d.child.id().to_string()])
            .status();
        let status = d.child.wait().unwrap();
        assert!(status.success(), "{signal}: {status}");
        assert!(!d.socket.exists(), "{signal}: the socket file is left");
    }
}

/// The daemon's resident memory, in KiB: VmRSS and its peak, VmHWM.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Hostile clients: `n` connections, half of them sending a megabyte without a newline, half
/// holding the connection open, each opened again when the daemon closes it, until `stop`.
/// Returns the connections opened.
fn flood(socket: &std::path::Path, n: usize, stop: &std::sync::atomic::AtomicBool) -> usize {
    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::Ordering;
    let chunk = vec![b'x'; 64 * 1024];
    let open = || {
        let s = UnixStream::connect(socket).ok()?;
        s.set_nonblocking(true).ok()?;
        Some(s)
    };
    // Each connection, whether it writes, and how much it has sent.
    let mut conns: Vec<(Option<UnixStream>, bool, usize)> =
        (0..n).map(|i| (None, i % 2 == 0, 0)).collect();
    let mut opened = 0;
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        for (conn, writes, sent) in conns.iter_mut() {
            let Some(s) = conn else {
                *conn = open();
                opened += usize::from(conn.is_some());
                *sent = 0;
                continue;
            };
            let mut gone = false;
            match s.read(&mut buf) {
                Ok(0) => gone = true,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => gone = true,
            }
            if *writes && *sent < 1 << 20 && !gone {
                match s.write(&chunk[..chunk.len().min((1 << 20) - *sent)]) {
                    Ok(k) => *sent += k,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => gone = true,
                }
            }
            if gone {
                *conn = None;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    opened
}

/// Issue 15: 500 hostile clients flood the control socket. The daemon's memory stays under
/// 40 MB, the moves are recorded on time, and `ctl` is answered within a second.
#[test]
fn a_flood_on_the_socket_neither_bloats_nor_stalls_the_daemon() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let game = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/games/selfplay-400.pgn"
    ))
    .unwrap();
    let mut d = Daemon::start("flood", &game, 1, &[]);
    let pid = d.child.id();
    // The moves as they come: when, and the daemon's time of each.
    let (_keep, none) = std::sync::mpsc::channel();
    let events = std::mem::replace(&mut d.events, none);
    let moves: Arc<Mutex<Vec<(Instant, u64)>>> = Arc::default();
    let seen = moves.clone();
    std::thread::spawn(move || {
        for v in events.iter() {
            if v["type"] == "move" {
                let t = v["t"].as_u64().unwrap();
                seen.lock().unwrap().push((Instant::now(), t));
            }
        }
    });
    let moves_before = |n: usize| {
        let t0 = Instant::now();
        while moves.lock().unwrap().len() < n {
            assert!(t0.elapsed() < Duration::from_secs(20), "no moves");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    moves_before(3);
    let (rss_before, _) = rss_kib(pid);
    // How late a move arrives, against the first ones.
    let offset = |(at, t): (Instant, u64)| at - Duration::from_millis(t);
    let on_time = moves
        .lock()
        .unwrap()
        .iter()
        .map(|m| offset(*m))
        .max()
        .unwrap();
    let flood_start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let floods: Vec<_> = (0..4)
        .map(|_| {
            let (socket, stop) = (d.socket.clone(), stop.clone());
            std::thread::spawn(move || flood(&socket, 125, &stop))
        })
        .collect();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(rss_before));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(pid).0, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    // The arbiter asks, again and again, during the flood.
    std::thread::sleep(Duration::from_secs(1));
    let mut answers = Vec::new();
    while flood_start.elapsed() < Duration::from_secs(9) {
        let t = Instant::now();
        let o = Proc::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["ctl", "--socket", d.socket.to_str().unwrap(), "turn"])
            .output()
            .unwrap();
        let took = t.elapsed();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("\"ok\":true"), "ctl during the flood: {out:?}");
        answers.push(took);
        std::thread::sleep(Duration::from_millis(300));
    }
    stop.store(true, Ordering::Relaxed);
    let opened: usize = floods.into_iter().map(|f| f.join().unwrap()).sum();
    let _ = sampler.join();
    let (rss_after, hwm) = rss_kib(pid);
    let peak = peak.load(Ordering::Relaxed).max(hwm);
    let during: Vec<Duration> = moves
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, _)| *at > flood_start)
        .map(|m| offset(*m).saturating_duration_since(on_time))
        .collect();
    let slowest = answers.iter().max().copied().unwrap_or_default();
    let latest = during.iter().max().copied().unwrap_or_default();
    println!(
        "flood: {opened} hostile connections opened; daemon RSS before {} KiB, peak {} KiB, \
         after {} KiB",
        rss_before, peak, rss_after
    );
    println!(
        "ctl turn: {} answers, slowest {:.0} ms, median {:.0} ms",
        answers.len(),
        slowest.as_secs_f64() * 1000.0,
        {
            let mut a = answers.clone();
            a.sort();
            a[a.len() / 2].as_secs_f64() * 1000.0
        }
    );
    println!(
        "moves during the flood: {}, the latest {:.0} ms later than before it",
        during.len(),
        latest.as_secs_f64() * 1000.0
    );
    assert!(opened >= 500, "{opened} connections");
    assert!(peak < 40 * 1024, "peak RSS {peak} KiB");
    assert!(slowest < Duration::from_secs(1), "ctl took {slowest:?}");
    assert!(during.len() >= 3, "{} moves during the flood", during.len());
    assert!(
        latest < Duration::from_millis(500),
        "a move {latest:?} late"
    );
}

/// Exploring the board (issue 26): the cursor starts on the last move's square, steps and
/// jumps, says who defends and attacks a square, and never touches the game.
#[test]
fn the_board_is_explored_square_by_square() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    let plies = e.game().plies.len();
    assert_eq!(
        ask(&mut e, t, "explore"),
        "Erkunden. Weißer Bauer auf Gustav vier"
    );
    assert_eq!(ask(&mut e, t, "step up"), "Gustav fünf leer");
    assert_eq!(ask(&mut e, t, "step down-right"), "Hector vier leer");
    assert_eq!(
        ask(&mut e, t, "jump up"),
        "Schwarzer Bauer auf Hector sieben"
    );
    assert_eq!(
        ask(&mut e, t, "step right"),
        "Rand. Schwarzer Bauer auf Hector sieben"
    );
    assert_eq!(
        ask(&mut e, t, "jump left"),
        "Schwarzer Bauer auf Gustav sieben"
    );
    // Black's queen on d8 mates on h4: who guards h4.
    assert_eq!(ask(&mut e, t, "go h4"), "Hector vier leer");
    assert_eq!(
        ask(&mut e, t, "guard"),
        "Hector vier leer. Angegriffen von Weiß: niemandem; Schwarz: Dame David acht"
    );
    assert_eq!(ask(&mut e, t, "go e5"), "Schwarzer Bauer auf Eva fünf");
    assert_eq!(
        ask(&mut e, t, "guard"),
        "Schwarzer Bauer auf Eva fünf. Gedeckt von niemandem. Angegriffen von niemandem"
    );
    assert_eq!(ask(&mut e, t, "explore"), "Erkunden beendet");
    assert_eq!(e.game().plies.len(), plies);
    assert!(!e.is_over());
    let err = "step sideways".parse::<Parsed>().unwrap_err();
    assert!(
        err.starts_with(
            "step: the direction is up, down, left, right, up-left, up-right, down-left or \
             down-right"
        ),
        "{err}"
    );
}

/// A step from the socket before any `explore` begins no exploration: the keypad's long dot
/// (`explore`) then begins one, as the keypad's own mode does.
#[test]
fn a_step_alone_begins_no_exploration() {
    let (mut e, t) = engine_after(FOOLS_MATE_MINUS_ONE, Settings::default());
    assert_eq!(ask(&mut e, t, "step up"), "Gustav fünf leer");
    assert_eq!(ask(&mut e, t, "explore"), "Erkunden. Gustav fünf leer");
    assert_eq!(ask(&mut e, t, "explore"), "Erkunden beendet");
}
