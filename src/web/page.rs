//! The spectators' page, drawn on the server: the first view (board, pieces, last move, check,
//! names, clocks, moves, result) is in the HTML, so a browser without JavaScript, a screenshot or
//! a screen reader has it at once; the page's script takes over from the state embedded in it.
//!
//! The template is `index.html` (its `{{slot}}`s filled here, `{{t:key}}` a label), the pieces
//! `pieces.svg` (one `<symbol>` per kind, drawn for the project), the words `labels.toml` (one
//! table per language: the page speaks the announcements' language). Every text from outside
//! (names, event, the state) is escaped here.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

const TEMPLATE: &str = include_str!("index.html");
const PIECES: &str = include_str!("pieces.svg");
const LABELS: &str = include_str!("labels.toml");
/// A square's size in the board's SVG (the board is 8 of them: viewBox 0 0 400 400).
const SQ: usize = 50;
/// The kinds in the order of the labels' `pieces` lists and the symbols' ids (`p-k`...).
const KINDS: &str = "kqrbnp";

/// The page's words in one language (`labels.toml`).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Labels {
    white: String,
    black: String,
    to_move_white: String,
    to_move_black: String,
    game_over: String,
    white_wins: String,
    black_wins: String,
    draw: String,
    moves: String,
    announcement: String,
    download: String,
    round: String,
    board: String,
    clock: String,
    chess_board: String,
    nothing: String,
    last_move: String,
    to: String,
    check: String,
    loading: String,
    connection_lost: String,
    reconnecting: String,
    pieces: [String; 6],
    pieces_many: [String; 6],
    /// The reasons a game ends, by their names in the state (`checkmate`...).
    reasons: BTreeMap<String, String>,
}

fn all_labels() -> &'static BTreeMap<String, Labels> {
    static ALL: OnceLock<BTreeMap<String, Labels>> = OnceLock::new();
    // The file is part of the program; the tests below read every language of it.
    ALL.get_or_init(|| toml::from_str(LABELS).expect("src/web/labels.toml (checked by its tests)"))
}

/// The words for the language tag `lang` ("de"); English for a language without its table.
fn labels(lang: &str) -> &'static Labels {
    let all = all_labels();
    all.get(lang)
        .or_else(|| all.get("en"))
        .expect("labels.toml has en")
}

/// `s` as HTML text or an attribute's value.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON for a `<script type="application/json">`: nothing in it can end the script element.
fn script_json(v: &Value) -> String {
    v.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v[key].as_str().filter(|s| !s.is_empty())
}

fn is_square(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 2 && (b'a'..=b'h').contains(&b[0]) && (b'1'..=b'8').contains(&b[1])
}

/// The top-left corner of square `sq` ("e4"), White at the bottom.
fn xy(sq: &str) -> (usize, usize) {
    let b = sq.as_bytes();
    ((b[0] - b'a') as usize * SQ, (b'8' - b[1]) as usize * SQ)
}

/// The pieces of a FEN's placement: ("e4", 'P'), in the order the script draws them.
fn placement(fen: &str) -> Vec<(String, char)> {
    let rows: Vec<&str> = fen.split(' ').next().unwrap_or("").split('/').collect();
    let mut out = Vec::new();
    if rows.len() != 8 {
        return out;
    }
    for (i, row) in rows.iter().enumerate() {
        let mut file = 0u8;
        for c in row.chars() {
            if let Some(n) = c.to_digit(10).filter(|n| (1..=8).contains(n)) {
                file += n as u8;
            } else if file < 8 && KINDS.contains(c.to_ascii_lowercase()) {
                out.push((format!("{}{}", (b'a' + file) as char, 8 - i), c));
                file += 1;
            }
        }
    }
    out
}

/// A clock's time as the page shows it: m:ss, tenths under ten seconds (as the script's `fmt`).
fn clock_text(ms: i64) -> String {
    let ms = ms.max(0);
    let (m, s) = (ms / 60000, ms / 1000 % 60);
    if ms < 10000 {
        format!("0:0{s}.{}", ms / 100 % 10)
    } else {
        format!("{m}:{s:02}")
    }
}

/// The words a screen reader reads for the board (as the script's `describe`).
fn describe(state: &Value, list: &[(String, char)], l: &Labels) -> String {
    let side = |white: bool| {
        let parts: Vec<String> = KINDS
            .chars()
            .enumerate()
            .filter_map(|(i, k)| {
                let squares: Vec<&str> = list
                    .iter()
                    .filter(|(_, p)| p.to_ascii_lowercase() == k && p.is_ascii_uppercase() == white)
                    .map(|(sq, _)| sq.as_str())
                    .collect();
                let name = if squares.len() > 1 {
                    &l.pieces_many[i]
                } else {
                    &l.pieces[i]
                };
                (!squares.is_empty()).then(|| format!("{name} {}", squares.join(", ")))
            })
            .collect();
        if parts.is_empty() {
            l.nothing.clone()
        } else {
            parts.join("; ")
        }
    };
    let mut t = format!(
        "{}. {}: {}. {}: {}.",
        l.chess_board,
        l.white,
        side(true),
        l.black,
        side(false)
    );
    let last = text(state, "last_move").unwrap_or("");
    let san = state["moves"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["san"].as_str());
    if let (Some(san), Some(from), Some(to)) = (san, last.get(0..2), last.get(2..4)) {
        if is_square(from) && is_square(to) {
            let _ = write!(t, " {} {san}, {from} {} {to}.", l.last_move, l.to);
        }
    }
    if text(state, "check").is_some_and(is_square) {
        let _ = write!(t, " {}.", l.check);
    }
    t
}

/// The 64 squares and the coordinates inside the edge squares, as lichess draws them.
fn squares() -> String {
    let mut out = String::new();
    for row in 0..8 {
        for file in 0..8 {
            let light = (file + (7 - row)) % 2 == 1;
            let _ = write!(
                out,
                "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{SQ}\" height=\"{SQ}\"/>",
                if light { "sq-l" } else { "sq-d" },
                file * SQ,
                row * SQ
            );
        }
    }
    for i in 0..8 {
        // Files along the bottom edge (rank 1), ranks along the left edge (the a-file); each in
        // the colour of the other squares.
        let on = |light: bool| if light { "on-l" } else { "on-d" };
        let _ = write!(
            out,
            "<text class=\"coord {}\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            on(i % 2 == 1),
            i * SQ + SQ - 3,
            8 * SQ - 3,
            (b'a' + i as u8) as char
        );
        let _ = write!(
            out,
            "<text class=\"coord {}\" x=\"3\" y=\"{}\">{}</text>",
            on(i % 2 == 0),
            i * SQ + 10,
            8 - i
        );
    }
    out
}

/// The last move's tint and the check's glow.
fn marks(state: &Value) -> String {
    let mut out = String::new();
    let last = text(state, "last_move").unwrap_or("");
    for sq in [last.get(0..2), last.get(2..4)].into_iter().flatten() {
        if is_square(sq) {
            let (x, y) = xy(sq);
            let _ = write!(
                out,
                "<rect class=\"last\" data-square=\"{sq}\" x=\"{x}\" y=\"{y}\" width=\"{SQ}\" height=\"{SQ}\"/>"
            );
        }
    }
    if let Some(sq) = text(state, "check").filter(|s| is_square(s)) {
        let (x, y) = xy(sq);
        let _ = write!(
            out,
            "<rect class=\"check\" data-square=\"{sq}\" x=\"{x}\" y=\"{y}\" width=\"{SQ}\" height=\"{SQ}\" fill=\"url(#check-glow)\"/>"
        );
    }
    out
}

fn pieces(list: &[(String, char)]) -> String {
    let mut out = String::new();
    for (sq, p) in list {
        let (x, y) = xy(sq);
        let color = if p.is_ascii_uppercase() { "pw" } else { "pb" };
        let _ = write!(
            out,
            "<g class=\"piece {color}\" data-square=\"{sq}\" data-piece=\"{p}\"><use href=\"#p-{}\" x=\"{x}\" y=\"{y}\" width=\"{SQ}\" height=\"{SQ}\"/></g>",
            p.to_ascii_lowercase()
        );
    }
    out
}

/// SAN in figurine notation, the letter kept for screen readers.
fn figurine(san: &str) -> String {
    let mut out = String::new();
    let mut plain = String::new();
    for c in san.chars() {
        if !"KQRBN".contains(c) {
            plain.push(c);
            continue;
        }
        out.push_str(&esc(&std::mem::take(&mut plain)));
        let _ = write!(
            out,
            "<svg class=\"fig piece pw\" viewBox=\"0 0 45 45\" aria-hidden=\"true\"><use href=\"#p-{}\"></use></svg><span class=\"sr\">{c}</span>",
            c.to_ascii_lowercase()
        );
    }
    out.push_str(&esc(&plain));
    out
}

/// The move list: one `<li>` per full move, the current move marked.
fn moves(state: &Value) -> String {
    let list = state["moves"].as_array().map_or(&[][..], Vec::as_slice);
    let mut out = String::new();
    let mut num = None;
    for (i, m) in list.iter().enumerate() {
        let fullmove = m["fullmove"].as_u64().unwrap_or(0);
        if num != Some(fullmove) {
            if num.is_some() {
                out.push_str("</li>");
            }
            num = Some(fullmove);
            let _ = write!(
                out,
                "<li value=\"{fullmove}\" data-fullmove=\"{fullmove}\">"
            );
            if m["color"] == "black" {
                out.push_str("<span class=\"ply\">…</span>");
            }
        }
        let san = m["san"].as_str().unwrap_or("");
        let now = i + 1 == list.len();
        let _ = write!(
            out,
            " <span class=\"ply{}\" data-ply=\"{}\" data-san=\"{}\"{}>{}</span>",
            if now { " now" } else { "" },
            m["ply"].as_u64().unwrap_or(0),
            esc(san),
            if now { " aria-current=\"step\"" } else { "" },
            figurine(san)
        );
    }
    if num.is_some() {
        out.push_str("</li>");
    }
    out
}

/// One player's bar: colour, title, name, rating, score, clock.
fn player(state: &Value, side: &str, l: &Labels) -> String {
    let p = &state["players"][side];
    let label = if side == "white" { &l.white } else { &l.black };
    let mut name = String::new();
    if let Some(title) = text(p, "title") {
        let _ = write!(name, "<abbr class=\"title\">{}</abbr>", esc(title));
    }
    let _ = write!(
        name,
        "<span class=\"who-name\">{}</span>",
        esc(text(p, "name").unwrap_or(label))
    );
    if let Some(elo) = text(p, "elo") {
        let _ = write!(name, "<span class=\"elo\">{}</span>", esc(elo));
    }
    let over = text(state, "result").is_some();
    let score = match (over, text(state, "winner")) {
        (false, _) => "",
        (true, None) => "½",
        (true, Some(w)) if w == side => "1",
        (true, Some(_)) => "0",
    };
    let clock = &state["clock"];
    let ms = clock[format!("{side}_ms")].as_i64();
    let running = !over && clock["running"] == side;
    format!(
        "<span class=\"swatch {}\" aria-hidden=\"true\"></span><span class=\"name\">{name}</span>\
         <span class=\"score\">{score}</span>\
         <div class=\"clock{}\" id=\"clock-{side}\" role=\"timer\" data-running=\"{running}\">\
         <span class=\"who sr\">{}, {}: </span><span class=\"t\">{}</span></div>",
        &side[..1],
        if ms.is_some_and(|ms| ms < 20000) {
            " low"
        } else {
            ""
        },
        esc(label),
        esc(&l.clock),
        ms.map_or("–".to_string(), clock_text),
    )
}

/// The page for the state `state` (the JSON of `state_json`; `{}` before the first game).
pub fn render(state: &str) -> String {
    let state: Value = serde_json::from_str(state).unwrap_or(Value::Null);
    let state = if state.is_object() {
        state
    } else {
        serde_json::json!({})
    };
    // The announcements' language, a tag such as "de".
    let lang = text(&state, "lang")
        .filter(|t| t.len() <= 16 && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or("en");
    let l = labels(lang);
    let fen = text(&state, "fen").unwrap_or("");
    let list = placement(fen);
    let white = text(&state["players"]["white"], "name").unwrap_or(&l.white);
    let black = text(&state["players"]["black"], "name").unwrap_or(&l.black);
    let heading = format!("{white} – {black}");
    let title = match text(&state, "event") {
        Some(event) => format!("{heading} · {event}"),
        None => heading.clone(),
    };
    let mut event = Vec::new();
    if let Some(e) = text(&state, "event") {
        event.push(e.to_string());
    }
    if let Some(r) = text(&state, "round") {
        event.push(format!("{} {r}", l.round));
    }
    if let Some(b) = text(&state, "board") {
        event.push(format!("{} {b}", l.board));
    }
    for key in ["site", "date"] {
        if let Some(v) = text(&state, key) {
            event.push(v.to_string());
        }
    }
    let result = text(&state, "result");
    let result_text = match result {
        None => String::new(),
        Some(r) => {
            let who = match text(&state, "winner") {
                Some("white") => &l.white_wins,
                Some("black") => &l.black_wins,
                _ => &l.draw,
            };
            let reason = text(&state, "reason")
                .and_then(|r| l.reasons.get(r))
                .map(|r| format!(" · {r}"))
                .unwrap_or_default();
            format!(
                "<span class=\"score\">{}</span>{}",
                esc(r),
                esc(&format!("{who}{reason}"))
            )
        }
    };
    let turn = match (result, text(&state, "turn")) {
        (Some(_), _) => l.game_over.as_str(),
        (None, Some("white")) => &l.to_move_white,
        (None, Some("black")) => &l.to_move_black,
        _ => "",
    };
    let label = if fen.is_empty() {
        l.loading.clone()
    } else {
        describe(&state, &list, l)
    };
    let plies = state["moves"].as_array().map_or(0, Vec::len);
    let words = serde_json::to_value(l).unwrap_or_default();

    let slot = |key: &str| -> String {
        if let Some(k) = key.strip_prefix("t:") {
            return esc(words[k].as_str().unwrap_or(""));
        }
        match key {
            "lang" => esc(lang),
            "title" => esc(&title),
            "event" => esc(&event.join(" · ")),
            "heading" => esc(&heading),
            "player_white" => player(&state, "white", l),
            "player_black" => player(&state, "black", l),
            "board_label" => esc(&label),
            "fen" => esc(fen),
            "plies" => plies.to_string(),
            "pieces_svg" => PIECES.to_string(),
            "squares" => squares(),
            "marks" => marks(&state),
            "pieces" => pieces(&list),
            "result" => esc(result.unwrap_or("")),
            "result_text" => result_text.clone(),
            "turn" => esc(turn),
            "moves" => moves(&state),
            "state_json" => script_json(&state),
            "labels_json" => script_json(&words),
            _ => String::new(),
        }
    };
    fill(TEMPLATE, slot)
}

/// The template with each `{{key}}` replaced by `slot(key)`, in one pass (a value that holds
/// `{{` is not read again).
fn fill(template: &str, slot: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(template.len() + 16 * 1024);
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        let Some(j) = rest[i..].find("}}") else {
            break;
        };
        out.push_str(&rest[..i]);
        out.push_str(&slot(&rest[i + 2..i + j]));
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots of the template.
    fn slots() -> Vec<&'static str> {
        TEMPLATE
            .match_indices("{{")
            .map(|(i, _)| &TEMPLATE[i + 2..i + TEMPLATE[i..].find("}}").unwrap()])
            .collect()
    }

    #[test]
    fn every_language_has_every_word_and_every_reason() {
        let all = all_labels();
        assert_eq!(
            all.keys().collect::<Vec<_>>(),
            ["de", "en", "ro", "sv"],
            "the languages of the announcements"
        );
        for (lang, l) in all {
            for reason in crate::engine::event::EndReason::NAMES.table {
                assert!(
                    l.reasons.contains_key(reason.1),
                    "{lang} has no words for {}",
                    reason.1
                );
            }
            assert_eq!(
                l.reasons.len(),
                crate::engine::event::EndReason::NAMES.table.len()
            );
        }
        // Every label slot of the template names a label.
        let words = serde_json::to_value(labels("en")).unwrap();
        for s in slots() {
            if let Some(k) = s.strip_prefix("t:") {
                assert!(words[k].is_string(), "{{{{{s}}}}} is no label");
            }
        }
    }

    #[test]
    fn the_first_view_is_in_the_html() {
        let state = serde_json::json!({
            "fen": "rnbqkbnr/ppppp1pp/8/5p1Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2",
            "turn": "black",
            "lang": "de",
            "moves": [
                {"ply": 1, "color": "white", "san": "e4", "uci": "e2e4", "fullmove": 1},
                {"ply": 2, "color": "black", "san": "f5", "uci": "f7f5", "fullmove": 1},
                {"ply": 3, "color": "white", "san": "Qh5+", "uci": "d1h5", "fullmove": 2},
            ],
            "last_move": "d1h5",
            "check": "e8",
            "clock": {"white_ms": 295_000, "black_ms": 8_400, "running": "black"},
            "result": null,
            "players": {"white": {"name": "Anna Berg", "title": "WGM", "elo": "2310"},
                        "black": {"name": "<script>alert(1)</script>", "title": null, "elo": null}},
            "event": "Club & Co",
            "round": "3",
        });
        let page = render(&state.to_string());
        assert!(!page.contains("{{"), "a slot is left");
        assert!(page.starts_with("<!doctype html>\n<html lang=\"de\">"));
        // The name from the config is text, not markup, in the page and in its JSON.
        assert!(!page.contains("<script>alert"), "a name became markup");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("\\u003cscript\\u003ealert(1)"));
        assert!(page.contains(
            "<title>Anna Berg – &lt;script&gt;alert(1)&lt;/script&gt; · Club &amp; Co</title>"
        ));
        assert!(page.contains("<abbr class=\"title\">WGM</abbr>"));
        assert!(page.contains("<span class=\"elo\">2310</span>"));
        assert!(page.contains(">Club &amp; Co · Runde 3</p>"));
        // The board: 32 pieces, the last move tinted, the king in check marked.
        assert_eq!(page.matches("<g class=\"piece ").count(), 32);
        assert!(page.contains(
            "data-square=\"h5\" data-piece=\"Q\"><use href=\"#p-q\" x=\"350\" y=\"150\""
        ));
        assert!(page.contains("<rect class=\"last\" data-square=\"d1\" x=\"150\" y=\"350\""));
        assert!(page.contains("<rect class=\"last\" data-square=\"h5\""));
        assert!(page.contains("<rect class=\"check\" data-square=\"e8\" x=\"200\" y=\"0\""));
        // Clocks, whose move, the moves; in German.
        assert!(page.contains("data-running=\"true\"><span class=\"who sr\">Schwarz, Uhr: </span><span class=\"t\">0:08.4</span>"));
        assert!(page.contains("<span class=\"t\">4:55</span>"));
        assert!(page.contains("<p id=\"turn\">Schwarz am Zug</p>"));
        assert!(page.contains("<li value=\"2\" data-fullmove=\"2\"> <span class=\"ply now\" data-ply=\"3\" data-san=\"Qh5+\" aria-current=\"step\"><svg class=\"fig piece pw\" viewBox=\"0 0 45 45\" aria-hidden=\"true\"><use href=\"#p-q\"></use></svg><span class=\"sr\">Q</span>h5+</span></li>"));
        assert!(page.contains("Letzter Zug Qh5+, d1 nach h5. Schach.\""));
        assert!(page.contains("<p id=\"result\" data-result=\"\"></p>"));
    }

    #[test]
    fn the_end_and_a_state_that_is_no_game() {
        let state = serde_json::json!({
            "fen": "8/8/8/8/8/5k2/8/5K2 w - - 0 70", "turn": "white", "lang": "sv",
            "result": "1/2-1/2", "reason": "dead_position", "winner": null,
        });
        let page = render(&state.to_string());
        assert!(page.contains(
            "data-result=\"1/2-1/2\"><span class=\"score\">1/2-1/2</span>Remi · död ställning</p>"
        ));
        assert!(page.contains("<p id=\"turn\">Partiet är slut</p>"));
        assert_eq!(page.matches("<span class=\"score\">½</span>").count(), 2);
        assert!(page.contains("<title>Vit – Svart</title>"));
        // Before the first game, and for anything else: the page, without a position.
        for junk in [
            "{}",
            "",
            "[1]",
            "{\"fen\": 3, \"lang\": \"x\\\"><script>\"}",
        ] {
            let page = render(junk);
            assert!(page.contains("<html lang=\"en\">"), "{junk}");
            assert!(
                page.contains("aria-label=\"Loading the position\""),
                "{junk}"
            );
            assert!(!page.contains("<g class=\"piece"), "{junk}");
        }
        assert_eq!(clock_text(600_000), "10:00");
        assert_eq!(clock_text(-5), "0:00.0");
        assert_eq!(placement("8/8/8/8/8/8/8/9 w"), []);
    }
}
