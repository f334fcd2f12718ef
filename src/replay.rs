//! `chessboardd replay`: event scripts in, game events out (docs/replay.md).
//!
//! The whole script is parsed before anything runs, so a malformed script prints nothing but
//! its error. Running it feeds the same engine the daemon uses, in simulated time.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Square};

use crate::engine::debounce::{EMPTY, OCCUPIED};
use crate::engine::table::Table;
use crate::engine::{Button, Engine, Event, Millis, Reading, Settings};
use crate::sim::{drive, SimInput, Step};

/// Time between lines that give none.
pub const DEFAULT_STEP_MS: Millis = 250;
/// Simulated time let pass after the last line, so pending timeouts fire.
pub const TAIL_MS: Millis = 10_000;
/// The latest time a script may name (about 31 years), so that no timer can overflow.
pub const MAX_TIME_MS: Millis = 1_000_000_000_000;

#[derive(Clone, Debug, PartialEq)]
pub enum Verb {
    /// A new game; `None` is the initial position.
    Setup(Option<Box<Chess>>),
    Lift(Square),
    Place(Square),
    Occupancy(u64),
    Press(Button),
    Wait(Millis),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub line_no: usize,
    pub t: Millis,
    pub board: usize,
    pub verb: Verb,
}

/// A script error: the line and what is wrong with it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {msg}")]
pub struct ScriptError {
    pub line: usize,
    pub msg: String,
}

/// The largest fullmove number a FEN may give: no game comes near it (the longest possible game
/// under the 75-move rule has under 9000 moves).
pub const MAX_FULLMOVES: u32 = 10_000;
/// The largest halfmove clock a FEN may give: the 75-move rule ends a game at 150.
pub const MAX_HALFMOVES: u32 = 1000;

/// A FEN's move counters (its fifth and sixth fields, where given) are in range: the halfmove
/// clock up to [`MAX_HALFMOVES`], the fullmove number from 1 to [`MAX_FULLMOVES`].
pub fn check_counters(fen: &str) -> Result<(), String> {
    let mut fields = fen.split_whitespace().skip(4);
    let number = |f: &str| -> Option<u64> {
        f.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| f.parse::<u64>().unwrap_or(u64::MAX))
    };
    if let Some(half) = fields.next() {
        if number(half).is_some_and(|n| n > u64::from(MAX_HALFMOVES)) {
            return Err(format!(
                "halfmove clock {half} is out of range (accepted: 0 to {MAX_HALFMOVES})"
            ));
        }
    }
    if let Some(full) = fields.next() {
        if number(full).is_some_and(|n| n == 0 || n > u64::from(MAX_FULLMOVES)) {
            return Err(format!(
                "fullmove number {full} is out of range (accepted: 1 to {MAX_FULLMOVES})"
            ));
        }
    }
    Ok(())
}

fn square(s: &str) -> Result<Square, String> {
    s.parse::<Square>()
        .ok()
        .filter(|_| {
            s.len() == 2
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        .ok_or_else(|| format!("'{s}' is not a square (a1 .. h8)"))
}

fn millis(s: &str, what: &str) -> Result<Millis, String> {
    s.parse::<Millis>()
        .map_err(|_| format!("'{s}' is not a number of milliseconds for {what}"))
}

/// The lines of a text, as `str::lines` gives them (a `\r` before the `\n` dropped), found
/// byte by byte: quicker on a script of many short lines.
fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = &text[start..end];
        let ended = end < bytes.len();
        start = end + 1;
        // (A `\r` is dropped only before a `\n`.)
        Some(match ended {
            true => line.strip_suffix('\r').unwrap_or(line),
            false => line,
        })
    })
}

/// The words of a script line, up to a `#` (a comment), split at whitespace.
fn split_words<'a>(line: &'a str, words: &mut Vec<&'a str>) {
    words.clear();
    // Plain ASCII (every script the daemon's tools write) is split by hand, which is quicker.
    let bytes = line.as_bytes();
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x80 {
            words.clear();
            let content = line.split_once('#').map_or(line, |(before, _)| before);
            words.extend(content.split_whitespace());
            return;
        }
        if b == b'#' {
            break;
        }
        match (b.is_ascii_whitespace() || b == 0x0b, start) {
            (true, Some(s)) => {
                words.push(&line[s..i]);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        let end = line.find('#').unwrap_or(line.len());
        words.push(&line[s..end]);
    }
}

/// Parses a whole script. `boards` are the board names the config knows; the first is the
/// default board.
pub fn parse_script(text: &str, boards: &[String]) -> Result<Vec<Line>, ScriptError> {
    let mut lines = Vec::new();
    parse_script_into(text, boards, |line| lines.push(line))?;
    Ok(lines)
}

/// Parses a script, handing each line to `lines` as it is read (`replay` runs the engine on
/// them while the rest is parsed). On an error, the lines before it have been handed on.
pub fn parse_script_into(
    text: &str,
    boards: &[String],
    mut lines: impl FnMut(Line),
) -> Result<(), ScriptError> {
    let mut prev: Millis = 0;
    let mut all_words: Vec<&str> = Vec::new();
    for (i, raw) in text_lines(text).enumerate() {
        let line_no = i + 1;
        let err = |msg: String| ScriptError { line: line_no, msg };
        split_words(raw, &mut all_words);
        if all_words.is_empty() {
            continue;
        }
        // The line every tool writes most, `@T lift SQ` or `@T place SQ`, read at once.
        if let [at, verb @ ("lift" | "place"), sq] = all_words[..] {
            let square = sq.as_bytes();
            let time = at.strip_prefix('@').and_then(|d| {
                (!d.is_empty() && d.len() < 14 && d.bytes().all(|b| b.is_ascii_digit())).then(
                    || {
                        d.bytes()
                            .fold(0, |n: Millis, b| n * 10 + Millis::from(b - b'0'))
                    },
                )
            });
            if let (Some(t), [f @ b'a'..=b'h', r @ b'1'..=b'8']) = (time, square) {
                if (prev..=MAX_TIME_MS).contains(&t) {
                    let sq = Square::from_coords(
                        shakmaty::File::new(u32::from(f - b'a')),
                        shakmaty::Rank::new(u32::from(r - b'1')),
                    );
                    let verb = if verb == "lift" {
                        Verb::Lift(sq)
                    } else {
                        Verb::Place(sq)
                    };
                    lines(Line {
                        line_no,
                        t,
                        board: 0,
                        verb,
                    });
                    prev = t;
                    continue;
                }
            }
        }
        let mut words: &[&str] = &all_words;
        let mut t = prev + DEFAULT_STEP_MS;
        let mut explicit = None;
        if let Some(first) = words.first() {
            if let Some(abs) = first.strip_prefix('@') {
                let at = millis(abs, "@TIME").map_err(err)?;
                if at > MAX_TIME_MS {
                    return Err(err(format!(
                        "time out of range: @{at} (at most {MAX_TIME_MS} ms)"
                    )));
                }
                if at < prev {
                    return Err(err(format!(
                        "time goes backwards: @{at} is before {prev} ms"
                    )));
                }
                explicit = Some(at);
                words = &words[1..];
            } else if let Some(rel) = first.strip_prefix('+') {
                let rel = millis(rel, "+TIME").map_err(err)?;
                explicit = Some(
                    prev.checked_add(rel)
                        .filter(|t| *t <= MAX_TIME_MS)
                        .ok_or_else(|| {
                            err(format!(
                                "time out of range: +{rel} (at most {MAX_TIME_MS} ms in all)"
                            ))
                        })?,
                );
                words = &words[1..];
            }
        }
        let mut board = 0;
        if let Some(first) = words.first() {
            if let Some(name) = first.strip_suffix(':') {
                board = boards.iter().position(|b| b == name).ok_or_else(|| {
                    err(format!(
                        "unknown board '{name}' (the config names: {})",
                        boards.join(", ")
                    ))
                })?;
                words = &words[1..];
            }
        }
        let Some((&verb, args)) = words.split_first() else {
            return Err(err("a time or board but no verb".into()));
        };
        let want = |n: usize| -> Result<(), ScriptError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(format!(
                    "'{verb}' takes {n} argument(s), got {}",
                    args.len()
                )))
            }
        };
        if verb == "end" {
            break;
        }
        if verb == "wait" {
            want(1)?;
            let ms = millis(args[0], "wait").map_err(err)?;
            let at = explicit.unwrap_or(prev);
            lines(Line {
                line_no,
                t: at,
                board,
                verb: Verb::Wait(ms),
            });
            prev = at
                .checked_add(ms)
                .filter(|t| *t <= MAX_TIME_MS)
                .ok_or_else(|| {
                    err(format!(
                        "time out of range: wait {ms} (at most {MAX_TIME_MS} ms in all)"
                    ))
                })?;
            continue;
        }
        if let Some(at) = explicit {
            t = at;
        } else if t > MAX_TIME_MS {
            return Err(err(format!("time out of range (at most {MAX_TIME_MS} ms)")));
        }
        let verb = match verb {
            "setup" => match args.first() {
                Some(&"startpos") if args.len() == 1 => Verb::Setup(None),
                Some(&"fen") if args.len() > 1 => {
                    let fen_text = args[1..].join(" ");
                    let fen: Fen = fen_text.parse().map_err(|e| err(format!("bad FEN '{fen_text}': {e}")))?;
                    check_counters(&fen_text).map_err(|e| err(format!("bad FEN '{fen_text}': {e}")))?;
                    let pos: Chess = fen
                        .into_position(CastlingMode::Standard)
                        .map_err(|e| err(format!("impossible position '{fen_text}': {e}")))?;
                    Verb::Setup(Some(Box::new(pos)))
                }
                _ => return Err(err("'setup' takes 'startpos' or 'fen FEN'".into())),
            },
            "lift" => {
                want(1)?;
                Verb::Lift(square(args[0]).map_err(err)?)
            }
            "place" => {
                want(1)?;
                Verb::Place(square(args[0]).map_err(err)?)
            }
            "occupancy" => {
                want(1)?;
                let hex = args[0].trim_start_matches("0x");
                if hex.is_empty() || hex.len() > 16 {
                    return Err(err(format!("'{}' is not a 64-bit hex mask", args[0])));
                }
                Verb::Occupancy(
                    u64::from_str_radix(hex, 16)
                        .map_err(|_| err(format!("'{}' is not a 64-bit hex mask", args[0])))?,
                )
            }
            "press" => {
                want(1)?;
                Verb::Press(args[0].parse().map_err(err)?)
            }
            other => {
                return Err(err(format!(
                    "unknown verb '{other}' (accepted: setup, lift, place, occupancy, press, wait, end)"
                )))
            }
        };
        lines(Line {
            line_no,
            t,
            board,
            verb,
        });
        prev = t;
    }
    Ok(())
}

/// Runs parsed lines through a fresh engine, handing every event to `sink` in time order.
/// Returns the engine, which holds the finished game.
pub fn run(lines: &[Line], settings: Settings, mut sink: impl FnMut(Event)) -> Engine {
    run_boards(lines, settings, &[None], |_, e| sink(e))
}

/// Runs parsed lines on one game played on several boards (`players`: who plays on each), handing
/// every event with its board to `sink`. Returns the engine that holds the finished game.
pub fn run_boards(
    lines: &[Line],
    settings: Settings,
    players: &[Option<shakmaty::Color>],
    sink: impl FnMut(usize, Event),
) -> Engine {
    run_lines(lines.iter().cloned(), settings, players, sink)
}

/// [`run_boards`] on lines as they come (from a parser still reading the script).
pub fn run_lines(
    lines: impl IntoIterator<Item = Line>,
    settings: Settings,
    players: &[Option<shakmaty::Color>],
    sink: impl FnMut(usize, Event),
) -> Engine {
    let mut engine = Table::new(settings, players);
    let mut lines = lines.into_iter().peekable();
    let start = match lines.peek() {
        Some(Line {
            verb: Verb::Setup(_),
            ..
        }) => None,
        _ => Some((0, Step::Setup(Chess::default()))),
    };
    let steps = lines.map(|line| {
        let board = line.board;
        let reading = |r| Step::Input(board, SimInput::Reading(r));
        let step = match line.verb {
            Verb::Setup(pos) => Step::Setup(pos.map(|p| *p).unwrap_or_default()),
            Verb::Lift(sq) => reading(Reading::Square(sq, EMPTY)),
            Verb::Place(sq) => reading(Reading::Square(sq, OCCUPIED)),
            Verb::Occupancy(mask) => reading(Reading::occupancy(mask)),
            Verb::Press(b) => Step::Input(board, SimInput::Press(b)),
            Verb::Wait(ms) => Step::Wait(ms),
        };
        (line.t, step)
    });
    drive(&mut engine, start.into_iter().chain(steps), TAIL_MS, sink);
    engine.into_leader()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boards() -> Vec<String> {
        vec!["board".to_string()]
    }

    #[test]
    fn lines_are_the_lines_of_str_lines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb\n\nc",
            "a\r\n\r\n",
            "\r",
            "x\ry\n",
        ] {
            let ours: Vec<&str> = text_lines(text).collect();
            let std: Vec<&str> = text.lines().collect();
            assert_eq!(ours, std, "{text:?}");
        }
    }

    #[test]
    fn words_split_as_unicode_whitespace_splits_them() {
        let mut words = Vec::new();
        for line in [
            "@100 lift e2",
            "  +5\tplace   e4  # comment # more",
            "# only a comment",
            "",
            "press\u{b}clock\x0cx",
            "lift\u{a0}e2 # non-ASCII space",
            "wait 5 #",
        ] {
            split_words(line, &mut words);
            let content = line.split('#').next().unwrap_or("");
            let wanted: Vec<&str> = content.split_whitespace().collect();
            assert_eq!(words, wanted, "{line:?}");
        }
    }

    #[test]
    fn the_quick_reading_of_common_lines_is_the_general_one() {
        let text = "@100 lift e2\n@200 place e4\n@200 lift a8\n@99999 place h1\n";
        let quick = parse_script(text, &boards()).unwrap();
        // The same lines with a comment after each: read the general way.
        let general = parse_script(&text.replace('\n', " #\n"), &boards()).unwrap();
        assert_eq!(quick, general);
        assert_eq!(quick.len(), 4);
        assert_eq!(quick[1].verb, Verb::Place(Square::E4));
        // Not read at once, and refused as before.
        for bad in [
            "@100 lift e2\n@50 place e4",
            "@1 lift i9",
            "@1 lift E2",
            "@x lift e2",
        ] {
            assert!(parse_script(bad, &boards()).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_default_to_250_ms_steps() {
        let l = parse_script(
            "lift e2\n\n# c\nplace e4\n+10 lift e7\n@2000 place e5\nwait 500\nlift g1",
            &boards(),
        )
        .unwrap();
        let times: Vec<Millis> = l.iter().map(|l| l.t).collect();
        assert_eq!(times, vec![250, 500, 510, 2000, 2000, 2750]);
        assert_eq!(l[1].line_no, 4);
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let e = parse_script("lift e2\nlift z9\n", &boards()).unwrap_err();
        assert_eq!(
            e,
            ScriptError {
                line: 2,
                msg: "'z9' is not a square (a1 .. h8)".into()
            }
        );
        assert_eq!(
            parse_script("@500 lift e2\n@100 place e4", &boards())
                .unwrap_err()
                .line,
            2
        );
        assert_eq!(parse_script("jump e2", &boards()).unwrap_err().line, 1);
        assert_eq!(parse_script("press hooray", &boards()).unwrap_err().line, 1);
        assert_eq!(
            parse_script("setup fen nonsense", &boards())
                .unwrap_err()
                .line,
            1
        );
        assert_eq!(
            parse_script("other: lift e2", &boards()).unwrap_err().line,
            1
        );
        assert_eq!(
            parse_script("occupancy xyz", &boards()).unwrap_err().line,
            1
        );
        assert!(parse_script("lift e2\nend\nthis is not parsed", &boards()).is_ok());
        for huge in [
            "lift e2\n+18446744073709551615 place e4",
            "@18446744073709551615 wait 1",
            "wait 18446744073709551615",
            "@1000000000001 lift e2",
        ] {
            let e = parse_script(huge, &boards()).unwrap_err();
            assert!(e.msg.starts_with("time out of range"), "{huge}: {e}");
        }
    }
}
