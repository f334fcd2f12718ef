//! The blind player's scoresheet (Appendix F5: he records in Braille) as a Braille Ready Format
//! file: ASCII Braille, 40 cells a line, 25 lines a page, CR LF line ends, a form feed after each
//! page, ready for a Braille embosser or a refreshable display. The moves are written in the
//! notation of the game's language (German K D T L S for a German game, English K Q R B N) and
//! translated by liblouis (`lou_translate`, Debian's `liblouis-bin`) with the language's
//! uncontracted table ([`table_for`]) or the table given. The tables chosen write the check and
//! mate signs as the language's Braille does and no letter sign before a square; the
//! back-translation (`lou_translate --backward`) gives the moves again.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::pgn;
use crate::words::Lang;

/// Cells a line and lines a page of the standard BRF page.
pub const CELLS: usize = 40;
pub const LINES: usize = 25;

/// The piece letters of a language's notation: king, queen, rook, bishop, knight.
pub fn piece_letters(lang: Lang) -> [char; 5] {
    match lang {
        Lang::En => ['K', 'Q', 'R', 'B', 'N'],
        Lang::AppendixF | Lang::De | Lang::Sv => ['K', 'D', 'T', 'L', 'S'],
        Lang::Ro => ['R', 'D', 'T', 'N', 'C'],
    }
}

/// The liblouis table for a language's scoresheet: uncontracted, with North American ASCII
/// Braille out (`en-us-brf.dis` before a table whose own display is another). English is
/// Unified English Braille (no letter sign before a square; check `"6`, mate `_?`); German and
/// Swedish are their uncontracted tables (check `@6`, mate `@#` in German). Romanian has no
/// table that translates back, so its notation is written with the English one.
pub fn table_for(lang: Lang) -> &'static str {
    match lang {
        Lang::En | Lang::Ro => "en-ueb-g1.ctb",
        Lang::AppendixF | Lang::De => "en-us-brf.dis,de-g0.utb",
        Lang::Sv => "en-us-brf.dis,sv-g0.utb",
    }
}

/// A move in SAN with the language's piece letters (`Qxf7#` is `Dxf7#` in German).
pub fn in_language(san: &str, lang: Lang) -> String {
    let letters = piece_letters(lang);
    san.chars()
        .map(|c| "KQRBN".find(c).map_or(c, |i| letters[i]))
        .collect()
}

/// The scoresheet's text, one entry a line: the players, the event and date, one full move a
/// line in the language's notation, the result.
pub fn sheet_lines(pgn_text: &str, lang: Lang) -> Result<Vec<String>, String> {
    let game = pgn::parse(pgn_text)
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .ok_or("the PGN holds no game")?;
    let tag = |k: &str| {
        pgn_text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("[{k} \"")))
            .and_then(|v| v.strip_suffix("\"]"))
            .filter(|v| !v.is_empty() && *v != "?" && !v.contains("??"))
            .map(str::to_string)
    };
    let mut lines = Vec::new();
    lines.push(format!(
        "{} - {}",
        tag("White").unwrap_or_else(|| "White".into()),
        tag("Black").unwrap_or_else(|| "Black".into())
    ));
    if let Some(e) = tag("Event") {
        lines.push(e);
    }
    if let Some(d) = tag("Date") {
        lines.push(d);
    }
    lines.push(String::new());
    let mut pos = game.start.clone();
    let mut line = String::new();
    for m in &game.moves {
        use shakmaty::Position;
        let number = pos.fullmoves().get();
        let white = pos.turn() == shakmaty::Color::White;
        let san = in_language(
            &shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string(),
            lang,
        );
        if white {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            line = format!("{number}. {san}");
        } else if line.is_empty() {
            line = format!("{number}... {san}");
        } else {
            line = format!("{line} {san}");
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.push(String::new());
    lines.push(tag("Result").unwrap_or_else(|| "*".into()));
    Ok(lines)
}

/// Translates lines to ASCII Braille with liblouis, line for line.
pub fn translate(lines: &[String], table: &str) -> Result<Vec<String>, String> {
    let mut child = Command::new("lou_translate")
        .args(["--forward", table])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("lou_translate (liblouis) cannot be run: {e}; install it: apt-get install liblouis-bin")
        })?;
    // Empty lines are kept apart from liblouis, which drops them.
    let text: String = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let mut stdin = child.stdin.take().ok_or("lou_translate: no input")?;
    stdin
        .write_all(text.as_bytes())
        .map_err(|e| format!("lou_translate: {e}"))?;
    drop(stdin);
    let out = child
        .wait_with_output()
        .map_err(|e| format!("lou_translate: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "lou_translate --forward {table}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut braille = stdout.lines();
    let mut result = Vec::new();
    for l in lines {
        if l.is_empty() {
            result.push(String::new());
        } else {
            result.push(
                braille
                    .next()
                    .ok_or("lou_translate gave fewer lines than it was given")?
                    .to_string(),
            );
        }
    }
    Ok(result)
}

/// Breaks lines longer than a line of cells at spaces (a word longer than a line is cut).
pub fn wrap(lines: &[String], cells: usize) -> Vec<String> {
    let mut out = Vec::new();
    for l in lines {
        let mut cur = String::new();
        for word in l.split(' ') {
            let mut word = word.to_string();
            while word.chars().count() > cells {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                let head: String = word.chars().take(cells).collect();
                word = word.chars().skip(cells).collect();
                out.push(head);
            }
            let len = cur.chars().count() + usize::from(!cur.is_empty()) + word.chars().count();
            if len > cells {
                out.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(&word);
        }
        out.push(cur);
    }
    out
}

/// The pages: `LINES` lines each, CR LF line ends, a form feed after each page.
pub fn paginate(lines: &[String]) -> String {
    let mut out = String::new();
    for page in lines.chunks(LINES) {
        for l in page {
            out.push_str(l);
            out.push_str("\r\n");
        }
        out.push('\x0c');
    }
    out
}

/// A game's scoresheet in BRF, in the language's notation, by `table` or the language's.
pub fn scoresheet(pgn_text: &str, lang: Lang, table: Option<&str>) -> Result<String, String> {
    let lines = sheet_lines(pgn_text, lang)?;
    let braille = translate(&lines, table.unwrap_or(table_for(lang)))?;
    Ok(paginate(&wrap(&braille, CELLS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_wrapped_at_spaces_and_pages_have_25_lines() {
        let long = vec!["aaaa bbbb cccc".to_string(), "x".repeat(20)];
        assert_eq!(
            wrap(&long, 9),
            ["aaaa bbbb", "cccc", "xxxxxxxxx", "xxxxxxxxx", "xx"]
        );
        let lines: Vec<String> = (0..60).map(|i| format!("{i}")).collect();
        let brf = paginate(&lines);
        assert_eq!(brf.matches('\x0c').count(), 3);
        assert!(brf
            .split('\x0c')
            .all(|p| p.matches("\r\n").count() <= LINES));
    }

    #[test]
    fn the_sheet_has_one_full_move_a_line() {
        let pgn = "[White \"Anna\"]\n[Black \"Bert\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n";
        let l = sheet_lines(pgn, Lang::En).unwrap();
        assert_eq!(l[0], "Anna - Bert");
        assert!(l.contains(&"1. e4 e5".to_string()));
        assert!(l.contains(&"4. Qxf7#".to_string()));
        assert_eq!(l.last().unwrap(), "1-0");
        let de = sheet_lines(pgn, Lang::De).unwrap();
        assert!(de.contains(&"2. Dh5 Sc6".to_string()), "{de:?}");
        assert!(de.contains(&"3. Lc4 Sf6".to_string()), "{de:?}");
        assert!(de.contains(&"4. Dxf7#".to_string()), "{de:?}");
        assert_eq!(sheet_lines(pgn, Lang::AppendixF).unwrap(), de);
    }

    #[test]
    fn piece_letters_castling_and_promotion_in_each_notation() {
        assert_eq!(in_language("exd8=Q+", Lang::De), "exd8=D+");
        assert_eq!(in_language("Rxe1#", Lang::De), "Txe1#");
        assert_eq!(in_language("O-O-O", Lang::De), "O-O-O");
        assert_eq!(in_language("Nbd7", Lang::Sv), "Sbd7");
        assert_eq!(in_language("Kg1", Lang::Ro), "Rg1");
        assert_eq!(in_language("Bb5", Lang::Ro), "Nb5");
        assert_eq!(in_language("Nb5", Lang::En), "Nb5");
    }
}
