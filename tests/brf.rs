//! The Braille scoresheet (`chessboardd games --brf N`): BRF pages of 40 cells and 25 lines,
//! translated by liblouis (`make test` installs liblouis-bin).

use std::path::Path;
use std::process::Command;

fn state_with(game: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("chessboardd-brf-{}-{game}", std::process::id()));
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
    // "1. d4 d5": number sign, a (1), period (dots 2-5-6 = '4'); letter sign before a lone
    // letter; d, number sign, d (4).
    assert!(brf.contains("\r\n#a4 ;d#d ;d#e\r\n"), "{brf}");
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
