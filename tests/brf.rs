//! The Braille scoresheet (`chessboardd games --brf N`): BRF pages of 40 cells and 25 lines,
//! translated by liblouis (`make test` installs liblouis-bin), in the game's notation; liblouis's
//! back-translation gives the moves again.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A state directory of its own (tests run at once) that keeps one game.
fn state_with(game: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("chessboardd-brf-{}-{n}-{game}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("games")).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(game);
    std::fs::copy(src, dir.join("games/2026-11-30_100000.pgn")).unwrap();
    dir
}

#[test]
fn a_scoresheet_in_braille_ready_format() {
    let dir = state_with("selfplay-10-mate.pgn");
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--brf", "1"])
        .args(["--lang", "en"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} (is liblouis-bin installed? make test installs it)",
        String::from_utf8_lossy(&o.stderr)
    );
    let brf = String::from_utf8(o.stdout).unwrap();
    // ASCII Braille only, CR LF line ends, a form feed after every page.
    assert!(brf
        .bytes()
        .all(|b| b == b'\r' || b == b'\n' || b == 0x0c || (0x20..0x7f).contains(&b)));
    assert!(brf.ends_with('\x0c'));
    let pages: Vec<&str> = brf.split('\x0c').filter(|p| !p.is_empty()).collect();
    // 37 moves, the players, event, date and result: two pages.
    assert_eq!(pages.len(), 2, "{brf}");
    for page in &pages {
        let lines: Vec<&str> = page.split_terminator("\r\n").collect();
        assert!(lines.len() <= 25, "{} lines on a page", lines.len());
        assert!(lines.iter().all(|l| l.len() <= 40 && !l.contains('\n')));
    }
    // "1. d4 d5" in Unified English Braille: number sign, a (1), period (dots 2-5-6 = '4');
    // d, number sign, d (4), and no letter sign before the square.
    assert!(brf.contains("\r\n#a4 d#d d#e\r\n"), "{brf}");
    // The result line, 1-0: number sign a, hyphen, number sign j.
    assert!(
        brf.contains("\r\n#a-#j\r\n") || brf.contains("\r\n#a-j\r\n"),
        "{brf}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_liblouis_it_says_what_to_install() {
    let dir = state_with("molinari-bordais-1979.pgn");
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--brf", "1"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("liblouis-bin"), "{err}");
}

/// The full moves of a PGN file's movetext, one a line ("1. d4 d5"), piece letters mapped.
fn full_moves(game: &str, letters: &[(char, char)]) -> Vec<String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/games")
            .join(game),
    )
    .unwrap();
    let movetext: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('['))
        .flat_map(str::split_whitespace)
        .filter(|t| !["1-0", "0-1", "1/2-1/2", "*"].contains(t))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for t in movetext {
        let t: String = t
            .chars()
            .map(|c| letters.iter().find(|(en, _)| *en == c).map_or(c, |l| l.1))
            .collect();
        if t.ends_with('.') {
            out.push(t);
        } else {
            let last = out.last_mut().unwrap();
            last.push(' ');
            last.push_str(&t);
        }
    }
    out
}

/// The scoresheet of a game in a language, by the binary.
fn sheet(game: &str, lang: &str) -> String {
    let dir = state_with(game);
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--brf", "1"])
        .args(["--lang", lang])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The BRF's lines translated back by liblouis, empty lines left out.
fn back(brf: &str, table: &str) -> Vec<String> {
    let text: String = brf
        .split(['\x0c', '\r', '\n'])
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let mut child = Command::new("lou_translate")
        .args(["--backward", table])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_german_game_reads_back_in_german_notation_with_check_and_mate() {
    for lang in ["de", "appendix-f"] {
        let brf = sheet("selfplay-10-mate.pgn", lang);
        let moves = back(&brf, "en-us-brf.dis,de-g0.utb");
        // German uncontracted Braille has no capital sign: the letters read back in lower case.
        let german = [
            ('K', 'k'),
            ('Q', 'd'),
            ('R', 't'),
            ('B', 'l'),
            ('N', 's'),
            ('O', 'o'),
        ];
        let expected = full_moves("selfplay-10-mate.pgn", &german);
        assert_eq!(expected.len(), 37);
        for m in &expected {
            assert!(moves.contains(m), "{m} not in {moves:?}\n{brf}");
        }
        assert!(moves.contains(&"14. sa4 sd3+".to_string()), "{moves:?}");
        assert!(moves.contains(&"37. dd8#".to_string()), "{moves:?}");
        // The German signs (dot 4 before the sign), not a bare number sign for the mate.
        assert!(
            brf.contains(",dd#h@#\r\n") || brf.contains("DD#H@#\r\n"),
            "{brf}"
        );
        assert!(brf.contains("SD#C@6"), "{brf}");
        // No English piece letter is left in a move.
        assert!(
            !moves.iter().any(|l| l.contains('q') || l.contains('n')),
            "{moves:?}"
        );
    }
}

#[test]
fn an_english_game_reads_back_in_english_notation_without_letter_signs() {
    let brf = sheet("selfplay-10-mate.pgn", "en");
    let moves = back(&brf, "en-ueb-g1.ctb");
    let expected = full_moves("selfplay-10-mate.pgn", &[]);
    for m in &expected {
        assert!(moves.contains(m), "{m} not in {moves:?}\n{brf}");
    }
    assert!(moves.contains(&"37. Qd8#".to_string()), "{moves:?}");
    assert!(moves.contains(&"14. Na4 Nd3+".to_string()), "{moves:?}");
    // No letter sign (dots 5-6, ';' in ASCII Braille) anywhere in the move lines.
    let lines: Vec<&str> = brf.split(['\x0c', '\r', '\n']).collect();
    assert!(
        !lines.iter().any(|l| l.starts_with('#') && l.contains(';')),
        "{brf}"
    );
    // The mate sign is UEB's # (dots 4-5-6, 1-4-5-6), not a number sign.
    assert!(brf.contains(",qd#h_?\r\n"), "{brf}");
}

#[test]
fn without_lang_the_config_language_is_the_notation() {
    let dir = state_with("selfplay-10-mate.pgn");
    let run = |config: &str| {
        std::fs::write(dir.join("c.toml"), config).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
            .args(["games", "--state-dir", dir.to_str().unwrap(), "--brf", "1"])
            .args(["--config", dir.join("c.toml").to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let de = back(&run("[speech]\nlang = \"de\"\n"), "en-us-brf.dis,de-g0.utb");
    assert!(de.contains(&"2. sf3 sf6".to_string()), "{de:?}");
    let en = back(&run("[speech]\nlang = \"en\"\n"), "en-ueb-g1.ctb");
    assert!(en.contains(&"2. Nf3 Nf6".to_string()), "{en:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A state directory holding `game` (of tests/data/games) as the daemon's journal writes it
/// (an unfinished game), announced in `lang` (`None`: a journal of an older version, which
/// did not record the language).
fn journal_with(game: &str, lang: Option<&str>) -> std::path::PathBuf {
    use chessboardd::record::{initial_fen, line, Recorded, JOURNAL};
    use shakmaty::{CastlingMode, Position};
    let dir = state_with(game);
    std::fs::remove_dir_all(dir.join("games")).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/games")
            .join(game),
    )
    .unwrap();
    let g = chessboardd::pgn::parse(&text).unwrap().remove(0);
    let mut r = Recorded::new(initial_fen(), "2026.12.01".into(), "18:00:00".into(), None);
    r.lang = lang.map(str::to_string);
    let mut pos = g.start.clone();
    for m in &g.moves {
        r.moves
            .push((m.to_uci(CastlingMode::Standard).to_string(), None));
        pos.play_unchecked(*m);
    }
    let journal: String = r.entries().iter().map(line).collect();
    std::fs::write(dir.join(JOURNAL), journal).unwrap();
    dir
}

fn brf_of(dir: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--brf", "1"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn without_lang_the_game_is_written_in_the_language_it_was_announced_in() {
    // An English game in the journal: English notation, though the default is German.
    let dir = journal_with("selfplay-10-mate.pgn", Some("en"));
    let en = back(&brf_of(&dir, &[]), "en-ueb-g1.ctb");
    assert!(en.contains(&"2. Nf3 Nf6".to_string()), "{en:?}");
    // --lang and --config still choose another.
    let de = back(&brf_of(&dir, &["--lang", "de"]), "en-us-brf.dis,de-g0.utb");
    assert!(de.contains(&"2. sf3 sf6".to_string()), "{de:?}");
    std::fs::write(dir.join("c.toml"), "[speech]\nlang = \"sv\"\n").unwrap();
    let sv = brf_of(&dir, &["--config", dir.join("c.toml").to_str().unwrap()]);
    assert_eq!(
        sv,
        brf_of(&dir, &["--lang", "sv"]),
        "--config's language, not the game's"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // A journal of an older version (no language): the default, as before.
    let dir = journal_with("selfplay-10-mate.pgn", None);
    let old = brf_of(&dir, &[]);
    assert_eq!(old, brf_of(&dir, &["--lang", "appendix-f"]));
    assert_ne!(old, brf_of(&dir, &["--lang", "en"]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_finished_game_keeps_its_language_in_its_file() {
    // The file as the daemon keeps a finished game: the PGN escape line with the language.
    let dir = state_with("selfplay-10-mate.pgn");
    let file = dir.join("games/2026-11-30_100000.pgn");
    let pgn = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("% chessboardd lang=en\n{pgn}")).unwrap();
    let en = back(&brf_of(&dir, &[]), "en-ueb-g1.ctb");
    assert!(en.contains(&"2. Nf3 Nf6".to_string()), "{en:?}");
    // `games --pgn` gives the PGN alone.
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["games", "--state-dir", dir.to_str().unwrap(), "--pgn", "1"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), pgn);
    let _ = std::fs::remove_dir_all(&dir);
}
