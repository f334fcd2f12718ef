//! The sentences built from a language's words. Move announcements follow the SAN token by
//! token so that disambiguation, captures, promotion and check are spoken exactly as they are
//! written.

use std::fmt::Write as _;
use std::sync::Arc;

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::{CastlingSide, Color, Move, Role, Square};

use super::{FileWords, Lang, Style, Words};

/// Begins every sentence of `text` with a capital letter: the first letter of the text and the
/// first after a full stop, question or exclamation mark and a space ("noch 5 Minuten" →
/// "Noch 5 Minuten"). Nothing else changes; a sentence that begins with a number stays so.
pub fn sentences(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    let mut start = true;
    let mut prev = ' ';
    for c in text.chars() {
        if c.is_whitespace() {
            if matches!(prev, '.' | '!' | '?') {
                start = true;
            }
        } else if std::mem::take(&mut start) && c.is_lowercase() {
            out.extend(c.to_uppercase());
            prev = c;
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// [`sentences`] on a text of one's own: capitalised in place (no copy) where every capital is
/// an ASCII letter, as in every move announced.
pub fn into_sentences(mut text: String) -> String {
    let mut start = true;
    let mut prev = ' ';
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if c.is_whitespace() {
            if matches!(prev, '.' | '!' | '?') {
                start = true;
            }
        } else if std::mem::take(&mut start) && c.is_lowercase() {
            if !c.is_ascii() {
                // (Not an ASCII letter: its capital may be longer; written out afresh.)
                return sentences(&text);
            }
            text[i..i + 1].make_ascii_uppercase();
        }
        prev = c;
        i += c.len_utf8();
    }
    text
}

/// Builds every sentence the daemon speaks, in one language and style.
#[derive(Clone, Debug)]
pub struct Phrases {
    /// Shared by every copy (an engine's settings are copied for each board and game); a
    /// word set in one copy makes that copy its own.
    pub words: Arc<Words>,
    pub style: Style,
    pub lang: Lang,
}

/// Appends a word with a separating space.
fn push(out: &mut String, w: &str) {
    if w.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(w);
}

impl Phrases {
    pub fn new(lang: Lang, style: Style, files: FileWords) -> Phrases {
        Phrases {
            words: Words::shared(lang, files),
            style,
            lang,
        }
    }

    pub fn push_square(&self, out: &mut String, sq: Square) {
        push(out, self.words.file(sq.file()));
        push(out, self.words.rank(sq.rank()));
    }

    pub fn square(&self, sq: Square) -> String {
        let mut s = String::new();
        self.push_square(&mut s, sq);
        s
    }

    /// The announcement of a move, given its SAN (with suffix) and the move itself, as a
    /// sentence (its first letter a capital).
    pub fn announce(&self, san: &SanPlus, m: Move) -> String {
        let w = &self.words;
        let mut out = String::with_capacity(48);
        match san.san {
            San::Castle(CastlingSide::KingSide) => push(&mut out, &w.short_castling),
            San::Castle(CastlingSide::QueenSide) => push(&mut out, &w.long_castling),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            } => {
                if role != Role::Pawn {
                    push(&mut out, w.piece(role));
                }
                match (self.style, m.from()) {
                    (Style::Long, Some(from)) => self.push_square(&mut out, from),
                    _ => {
                        if let Some(f) = file {
                            push(&mut out, w.file(f));
                        }
                        if let Some(r) = rank {
                            push(&mut out, w.rank(r));
                        }
                    }
                }
                if capture {
                    push(&mut out, &w.capture);
                }
                self.push_square(&mut out, to);
                if let Some(p) = promotion {
                    push(&mut out, w.piece(p));
                }
                if matches!(m, Move::EnPassant { .. }) {
                    push(&mut out, &w.en_passant);
                }
            }
            San::Put { .. } | San::Null => {}
        }
        match san.suffix {
            Some(Suffix::Check) => push(&mut out, &w.check),
            Some(Suffix::Checkmate) => push(&mut out, &w.checkmate),
            None => {}
        }
        // An announcement is a sentence of its own ("Castles kingside", "Echo four").
        into_sentences(out)
    }

    /// "Feld Hector vier flackert": the board keeps reporting a square.
    pub fn square_flickers(&self, sq: Square) -> String {
        sentences(
            &self
                .words
                .square_flickers
                .replace("{square}", &self.square(sq)),
        )
    }

    /// A correction: "Korrektur: Dame Felix vier. Bauer Gustav fünf", the announcements of the
    /// moves the board shows instead of those withdrawn; with none, the ruling withdrawn.
    pub fn correction(&self, moves: &[String]) -> String {
        let w = &self.words;
        let what = if moves.is_empty() {
            w.ruling_withdrawn.clone()
        } else {
            moves.join(". ")
        };
        sentences(&format!("{}: {what}", w.correction))
    }

    /// Appendix F2.9 (e): "Weiß berührt Springer Gustav eins, Läufer Felix eins": the pieces
    /// `by` touched (and put back).
    pub fn touches(&self, by: Color, pieces: &[(Role, Square)]) -> String {
        let list: Vec<String> = pieces.iter().map(|&(r, sq)| self.piece_on(r, sq)).collect();
        sentences(
            &self
                .words
                .touches
                .replace("{side}", self.words.color(by))
                .replace("{piece}", &list.join(", ")),
        )
    }

    /// "Springer Felix drei": a piece and where it stands.
    pub fn piece_on(&self, role: Role, sq: Square) -> String {
        let mut out = self.words.piece(role).to_string();
        self.push_square(&mut out, sq);
        out
    }

    /// The end of a game: `why` is the words of its reason (the engine's `EndReason::words`),
    /// then the winner, or the draw (unless the reason says it already: "Remis vereinbart").
    pub fn game_over(&self, winner: Option<Color>, why: &str) -> String {
        let w = &self.words;
        // `{side}` in the words of an ending is the side that lost ("{side} ger upp"); in a
        // draw it is left out.
        let loser = winner.map_or("", |c| w.color(!c));
        let why = why.replace("{side}", loser);
        let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
        sentences(&match winner {
            Some(c) => format!("{why}. {} {}", w.color(c), w.wins),
            None if why.to_lowercase().contains(&w.draw.to_lowercase()) => why,
            None => format!("{why}. {}", w.draw),
        })
    }

    /// Guidance for a board that differs from the game: what is missing where, what is extra.
    pub fn mismatch(&self, missing: &[(Square, Option<Role>)], extra: &[Square]) -> String {
        let w = &self.words;
        let mut out = w.check_board.clone();
        if !missing.is_empty() {
            let _ = write!(out, ". {}:", w.missing);
            for (i, (sq, role)) in missing.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(r) = role {
                    push(&mut out, w.piece(*r));
                    push(&mut out, &w.on);
                }
                self.push_square(&mut out, *sq);
            }
        }
        if !extra.is_empty() {
            let _ = write!(out, ". {}:", w.extra);
            for (i, sq) in extra.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                self.push_square(&mut out, *sq);
            }
        }
        sentences(&out)
    }

    /// Two boards: the move to execute on one's own board, whole (F2.1): "Auf Ihrem Brett:
    /// Springer von Gustav eins nach Felix drei", "Bauer von David fünf schlägt Eva vier".
    pub fn on_your_board(&self, m: Move) -> String {
        let w = &self.words;
        let what = match m {
            Move::Castle { .. } => match m.castling_side() {
                Some(CastlingSide::KingSide) => w.short_castling.clone(),
                _ => w.long_castling.clone(),
            },
            _ => {
                let mut s = w.piece(m.role()).to_string();
                push(&mut s, &w.from);
                self.push_square(&mut s, m.from().unwrap_or(m.to()));
                // A capture says so: the captured piece is to be taken off too.
                push(&mut s, if m.is_capture() { &w.capture } else { &w.to });
                self.push_square(&mut s, m.to());
                if let Some(p) = m.promotion() {
                    push(&mut s, w.piece(p));
                }
                if m.is_en_passant() {
                    push(&mut s, &w.en_passant);
                }
                s
            }
        };
        sentences(&format!("{}: {what}", w.on_your_board))
    }

    /// A duration as "4 Minuten 30 Sekunden".
    pub fn duration(&self, ms: i64) -> String {
        let secs = (ms.max(0) + 999) / 1000;
        let w = &self.words;
        let minutes = |m: i64| w.count(m as u64, &w.one_minute, &w.minutes);
        let seconds = |s: i64| w.count(s as u64, &w.one_second, &w.seconds);
        match (secs / 60, secs % 60) {
            (0, s) => seconds(s),
            (m, 0) => minutes(m),
            (m, s) => format!("{} {}", minutes(m), seconds(s)),
        }
    }

    /// The record repaired at start, and how many of its entries were lost, if any:
    /// "Aufzeichnung repariert. 3 Einträge verloren".
    pub fn record_repaired(&self, lost: usize) -> String {
        let w = &self.words;
        sentences(&match lost {
            0 => w.record_repaired.clone(),
            n => format!(
                "{}. {}",
                w.record_repaired,
                w.count(n as u64, &w.one_entry_lost, &w.entries_lost)
            ),
        })
    }

    /// A UCI engine's score in words. `cp` (centipawns) and `mate` (moves; negative: the side
    /// to move is mated) are from the side to move's (`turn`) view, as UCI gives them; a mate
    /// wins over centipawns. Within 0.3 pawns "Ausgeglichen"; below 1 pawn "{side} steht etwas
    /// besser"; below 3 "{side} steht besser, etwa {pawns}" (rounded to whole pawns); from 3
    /// on "{side} steht deutlich besser"; a mate "{side} setzt in {moves} matt".
    pub fn evaluation(&self, turn: Color, cp: Option<i32>, mate: Option<i32>) -> String {
        let w = &self.words;
        let side = |c: Color| w.color(c).to_string();
        if let Some(n) = mate {
            // Mate in 0: the side to move is mated already.
            let winner = if n > 0 { turn } else { !turn };
            let moves = w.count(
                u64::from(n.unsigned_abs()).max(1),
                &w.mate_one_move,
                &w.mate_moves,
            );
            return sentences(
                &w.mate_in
                    .replace("{side}", &side(winner))
                    .replace("{moves}", &moves),
            );
        }
        let cp = i64::from(cp.unwrap_or(0));
        // White's view.
        let white = if turn == Color::White { cp } else { -cp };
        let better = if white > 0 {
            Color::White
        } else {
            Color::Black
        };
        let text = match white.unsigned_abs() {
            0..30 => w.eval_equal.clone(),
            30..100 => w.eval_slightly.replace("{side}", &side(better)),
            100..300 => {
                let pawns = (white.unsigned_abs() + 50) / 100;
                w.eval_better
                    .replace("{side}", &side(better))
                    .replace("{pawns}", &w.count(pawns, &w.one_pawn, &w.pawns))
            }
            _ => w.eval_clearly.replace("{side}", &side(better)),
        };
        sentences(&text)
    }

    /// A low-time warning: "Weiß noch eine Minute".
    pub fn low_time(&self, side: Color, left_ms: i64) -> String {
        sentences(
            &self
                .words
                .low_time
                .replace("{side}", self.words.color(side))
                .replace("{time}", &self.duration(left_ms)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::COMMAND_COUNT;
    use shakmaty::fen::Fen;
    use shakmaty::File;
    use shakmaty::{CastlingMode, Chess};

    fn say(lang: Lang, style: Style, fen: &str, san: &str) -> String {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        let sp = SanPlus::from_move(pos, m);
        Phrases::new(lang, style, FileWords::Phonetic).announce(&sp, m)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    /// The SAN table of docs/speech.md: a position for each row, and the words in every
    /// language, written out by hand from the spec's word tables.
    const TABLE: [(&str, &str, [&str; 4]); 13] = [
        (
            START,
            "e4",
            ["Eva vier", "Eva four", "Eva patru", "Eva fyra"],
        ),
        (
            START,
            "Nf3",
            [
                "Springer Felix drei",
                "Knight Felix three",
                "Cal Felix trei",
                "Springare Felix tre",
            ],
        ),
        (
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "exd5",
            [
                "Eva schlägt David fünf",
                "Eva takes David five",
                "Eva ia David cinci",
                "Eva slår David fem",
            ],
        ),
        (
            "rnbqk1nr/pppp1ppp/8/4p3/1b2P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 3 3",
            "Bxc3",
            [
                "Läufer schlägt Cesar drei",
                "Bishop takes Cesar three",
                "Nebun ia Cesar trei",
                "Löpare slår Cesar tre",
            ],
        ),
        (
            "rnbqkbnr/ppp1pppp/8/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq - 1 2",
            "Nbd2",
            [
                "Springer Bella David zwei",
                "Knight Bella David two",
                "Cal Bella David doi",
                "Springare Bella David två",
            ],
        ),
        (
            "6k1/5ppp/8/8/8/4R3/5PPP/4R1K1 w - - 0 1",
            "R1e2",
            [
                "Turm eins Eva zwei",
                "Rook one Eva two",
                "Turn unu Eva doi",
                "Torn ett Eva två",
            ],
        ),
        (
            "8/k7/6K1/8/4Q2Q/8/8/4r2Q w - - 0 1",
            "Qh4xe1",
            [
                "Dame Hector vier schlägt Eva eins",
                "Queen Hector four takes Eva one",
                "Damă Hector patru ia Eva unu",
                "Dam Hector fyra slår Eva ett",
            ],
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "O-O",
            [
                "Kurze Rochade",
                "Castles kingside",
                "Rocada mică",
                "Kort rockad",
            ],
        ),
        (
            "8/3k4/8/8/8/8/8/R3K3 w Q - 0 1",
            "O-O-O+",
            [
                "Lange Rochade Schach",
                "Castles queenside check",
                "Rocada mare șah",
                "Lång rockad schack",
            ],
        ),
        (
            "8/4P3/8/8/8/8/k7/7K w - - 0 1",
            "e8=Q",
            [
                "Eva acht Dame",
                "Eva eight Queen",
                "Eva opt Damă",
                "Eva åtta Dam",
            ],
        ),
        (
            "7k/7p/8/8/8/8/1pK5/R7 b - - 0 1",
            "bxa1=N+",
            [
                "Bella schlägt Anna eins Springer Schach",
                "Bella takes Anna one Knight check",
                "Bella ia Anna unu Cal șah",
                "Bella slår Anna ett Springare schack",
            ],
        ),
        (
            "rnbqkbnr/ppp1p1pp/5p2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 1",
            "exd6",
            [
                "Eva schlägt David sechs en passant",
                "Eva takes David six en passant",
                "Eva ia David șase en passant",
                "Eva slår David sex en passant",
            ],
        ),
        (
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "Qxf7#",
            [
                "Dame schlägt Felix sieben Schachmatt",
                "Queen takes Felix seven checkmate",
                "Damă ia Felix șapte mat",
                "Dam slår Felix sju schackmatt",
            ],
        ),
    ];

    #[test]
    fn every_row_of_the_speech_table_in_every_language() {
        for (fen, san, said) in TABLE {
            let german = said[0];
            assert_eq!(
                say(Lang::AppendixF, Style::Short, fen, san),
                german,
                "appendix-f {san}"
            );
            assert_eq!(say(Lang::De, Style::Short, fen, san), german, "de {san}");
            assert_eq!(say(Lang::En, Style::Short, fen, san), said[1], "en {san}");
            assert_eq!(say(Lang::Ro, Style::Short, fen, san), said[2], "ro {san}");
            assert_eq!(say(Lang::Sv, Style::Short, fen, san), said[3], "sv {san}");
        }
    }

    #[test]
    fn files_can_be_nato_words_or_letters() {
        let pos: Chess = Chess::default();
        let m = "Nf3".parse::<San>().unwrap().to_move(&pos).unwrap();
        let sp = SanPlus::from_move(pos, m);
        assert_eq!(
            Phrases::new(Lang::En, Style::Short, FileWords::Nato).announce(&sp, m),
            "Knight foxtrot three"
        );
        assert_eq!(
            Phrases::new(Lang::De, Style::Long, FileWords::Letters).announce(&sp, m),
            "Springer g eins f drei"
        );
    }

    #[test]
    fn long_style_names_the_from_square() {
        assert_eq!(
            say(Lang::AppendixF, Style::Long, START, "Nf3"),
            "Springer Gustav eins Felix drei"
        );
        assert_eq!(
            say(Lang::AppendixF, Style::Long, START, "e4"),
            "Eva zwei Eva vier"
        );
        let fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
        assert_eq!(
            say(Lang::AppendixF, Style::Long, fen, "exd5"),
            "Eva vier schlägt David fünf"
        );
    }

    #[test]
    fn other_languages_use_their_tables() {
        assert_eq!(
            say(Lang::En, Style::Short, START, "Nf3"),
            "Knight Felix three"
        );
        assert_eq!(
            say(Lang::Sv, Style::Short, START, "Nf3"),
            "Springare Felix tre"
        );
        assert_eq!(say(Lang::Ro, Style::Short, START, "e4"), "Eva patru");
        let w = Words::new(Lang::En, FileWords::Nato);
        assert_eq!(w.file(File::C), "charlie");
    }

    #[test]
    fn a_word_set_in_one_copy_of_the_phrases_changes_only_that_copy() {
        let mut mine = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let other = mine.clone();
        let fresh = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        // (The words are made once and shared.)
        assert!(Arc::ptr_eq(&mine.words, &fresh.words));
        Arc::make_mut(&mut mine.words)
            .set("capture", &toml::Value::String("seizes".into()))
            .unwrap();
        assert_eq!(mine.words.capture, "seizes");
        assert_eq!(other.words.capture, fresh.words.capture);
        assert_ne!(fresh.words.capture, "seizes");
        assert_eq!(
            Phrases::new(Lang::En, Style::Short, FileWords::Phonetic)
                .words
                .capture,
            fresh.words.capture
        );
    }

    #[test]
    fn every_word_can_be_overridden_by_key() {
        let mut w = Words::new(Lang::AppendixF, FileWords::Phonetic);
        w.set("capture", &toml::Value::String("nimmt".into()))
            .unwrap();
        assert_eq!(w.capture, "nimmt");
        let files: Vec<toml::Value> = ["A", "B", "C", "D", "E", "F", "G", "H"]
            .iter()
            .map(|s| toml::Value::String(s.to_string()))
            .collect();
        w.set("files", &toml::Value::Array(files)).unwrap();
        assert_eq!(w.file(File::H), "H");
        assert!(w.set("files", &toml::Value::Array(vec![])).is_err());
        assert!(w.set("capture", &toml::Value::Integer(3)).is_err());
        assert!(w
            .set("captur", &toml::Value::String("x".into()))
            .unwrap_err()
            .contains("capture"));
        // Every key is settable, and every text of the table is listed.
        for key in Words::KEYS.iter().filter(|k| {
            !matches!(
                **k,
                "files"
                    | "ranks"
                    | "pieces"
                    | "white_pieces"
                    | "black_pieces"
                    | "key_names"
                    | "commands"
            )
        }) {
            w.set(key, &toml::Value::String(format!("<{key}>")))
                .unwrap();
        }
        let texts = w.all_texts();
        assert_eq!(
            texts.len(),
            8 + 8 + 6 + 11 + 12 + COMMAND_COUNT + Words::KEYS.len() - 7
        );
        assert!(texts.contains(&"<board_lost>"));
    }

    #[test]
    fn a_flickering_square_is_named_as_squares_are_spoken() {
        let say = |lang, files| Phrases::new(lang, Style::Short, files).square_flickers(Square::E4);
        assert_eq!(
            say(Lang::AppendixF, FileWords::Phonetic),
            "Feld Eva vier flackert"
        );
        assert_eq!(
            say(Lang::En, FileWords::Nato),
            "Square echo four is flickering"
        );
        assert_eq!(
            say(Lang::Ro, FileWords::Phonetic),
            "Câmpul Eva patru pâlpâie"
        );
        assert_eq!(say(Lang::Sv, FileWords::Letters), "Rutan e fyra flimrar");
    }

    #[test]
    fn the_record_repair_says_how_many_entries_were_lost() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        assert_eq!(de.record_repaired(0), "Aufzeichnung repariert");
        assert_eq!(
            de.record_repaired(1),
            "Aufzeichnung repariert. 1 Eintrag verloren"
        );
        assert_eq!(
            de.record_repaired(3),
            "Aufzeichnung repariert. 3 Einträge verloren"
        );
        let ro = Phrases::new(Lang::Ro, Style::Short, FileWords::Phonetic);
        assert_eq!(
            ro.record_repaired(1),
            "Înregistrare reparată. O intrare pierdută"
        );
        assert_eq!(
            ro.record_repaired(20),
            "Înregistrare reparată. 20 de intrări pierdute"
        );
    }

    #[test]
    fn durations_round_up_to_the_second() {
        let p = Phrases::new(Lang::De, Style::Short, FileWords::Phonetic);
        assert_eq!(p.duration(270_000), "4 Minuten 30 Sekunden");
        assert_eq!(p.duration(59_001), "eine Minute");
        assert_eq!(p.duration(61_000), "eine Minute eine Sekunde");
        assert_eq!(p.duration(1_000), "eine Sekunde");
        assert_eq!(p.low_time(Color::White, 60_000), "Weiß noch eine Minute");
        assert_eq!(p.low_time(Color::Black, 10_000), "Schwarz noch 10 Sekunden");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(en.low_time(Color::White, 300_000), "White: 5 minutes left");
        assert_eq!(p.duration(9_500), "10 Sekunden");
    }

    #[test]
    fn english_castles_kingside_and_queenside() {
        let castle = |lang| {
            say(
                lang,
                Style::Short,
                "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
                "O-O",
            )
        };
        assert_eq!(castle(Lang::En), "Castles kingside");
        assert_eq!(
            say(
                Lang::En,
                Style::Long,
                "8/3k4/8/8/8/8/8/R3K3 w Q - 0 1",
                "O-O-O+"
            ),
            "Castles queenside check"
        );
        // Appendix F keeps its own words.
        assert_eq!(castle(Lang::AppendixF), "Kurze Rochade");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let m = Move::Castle {
            king: Square::E1,
            rook: Square::A1,
        };
        assert_eq!(en.on_your_board(m), "On your board: castles queenside");
    }

    #[test]
    fn romanian_counts_from_twenty_take_de() {
        let ro = Words::new(Lang::Ro, FileWords::Phonetic);
        let moves = |n| ro.count(n, &ro.one_move, &ro.moves_made);
        assert_eq!(moves(0), "0 mutări");
        assert_eq!(moves(1), "o mutare");
        assert_eq!(moves(2), "2 mutări");
        assert_eq!(moves(19), "19 mutări");
        assert_eq!(moves(20), "20 de mutări");
        assert_eq!(moves(25), "25 de mutări");
        assert_eq!(moves(99), "99 de mutări");
        assert_eq!(moves(100), "100 de mutări");
        assert_eq!(moves(101), "101 mutări");
        assert_eq!(moves(119), "119 mutări");
        assert_eq!(moves(120), "120 de mutări");
        assert_eq!(moves(200), "200 de mutări");
        assert_eq!(moves(1_005), "1005 mutări");
        let p = Phrases::new(Lang::Ro, Style::Short, FileWords::Phonetic);
        assert_eq!(p.duration(51_000), "51 de secunde");
        assert_eq!(p.duration(19_000), "19 secunde");
        assert_eq!(p.duration(20 * 60_000), "20 de minute");
        assert_eq!(p.duration(19 * 60_000 + 2_000), "19 minute 2 secunde");
        assert_eq!(
            p.duration(90 * 60_000 + 30_000),
            "90 de minute 30 de secunde"
        );
        assert_eq!(p.duration(61_000), "un minut o secundă");
        assert_eq!(
            p.low_time(Color::Black, 25_000),
            "Negrul mai are 25 de secunde"
        );
        // The other languages have no such word.
        let de = Phrases::new(Lang::De, Style::Short, FileWords::Phonetic);
        assert_eq!(de.duration(25 * 60_000), "25 Minuten");
        let w = &de.words;
        assert_eq!(w.count(25, &w.one_move, &w.moves_made), "25 Züge");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(en.duration(51_000), "51 seconds");
        let sv = Phrases::new(Lang::Sv, Style::Short, FileWords::Phonetic);
        assert_eq!(sv.duration(20 * 60_000), "20 minuter");
    }

    #[test]
    fn romanian_words_of_the_laws() {
        let ro = Words::new(Lang::Ro, FileWords::Phonetic);
        // Art. 2.4 "coloană", Art. 4.2 "j'adoube" or "aranjez"; a takeback is no retreat.
        assert_eq!(ro.file_word, "Coloana");
        assert_eq!(ro.adjust, "Aranjez");
        assert_eq!(ro.takeback, "Mutare luată înapoi");
        let named = |c| ro.command(c).to_string();
        assert_eq!(named("file"), "coloană");
        assert_eq!(named("adjust"), "aranjez");
        assert_eq!(named("takeback"), "mutare luată înapoi");
        for word in ["coloană", "aranjez", "mutare luată înapoi"] {
            assert!(ro.help.contains(word), "{word} in the help");
        }
        for text in ro.all_texts() {
            for old in [
                "verticală",
                "Verticala",
                "ajustez",
                "retragere",
                "Retragerea",
                "retrasă",
            ] {
                assert!(!text.contains(old), "{old} in {text:?}");
            }
        }
    }

    #[test]
    fn swedish_words_of_the_laws() {
        let sv = Phrases::new(Lang::Sv, Style::Short, FileWords::Phonetic);
        let w = &sv.words;
        assert_eq!(w.checkmate, "schackmatt");
        assert_eq!(
            sv.game_over(Some(Color::White), &w.resignation),
            "Svart ger upp. Vit vinner"
        );
        assert_eq!(
            sv.game_over(Some(Color::Black), &w.resignation),
            "Vit ger upp. Svart vinner"
        );
        assert_eq!(
            sv.game_over(Some(Color::White), &w.checkmate),
            "Schackmatt. Vit vinner"
        );
        // Art. 9.5: "Om kravet visar sig vara riktigt / oriktigt".
        assert_eq!(w.claim_valid, "Kravet är riktigt");
        assert_eq!(w.claim_invalid, "Kravet är oriktigt");
        assert_eq!(w.takeback, "Draget återtaget");
        assert_eq!(w.command("claim"), "krav");
        assert!(w.help.contains(", krav, ge upp,"), "{}", w.help);
        for text in w.all_texts() {
            assert!(
                !text.to_lowercase().contains("reklamation")
                    && !text.contains("schack matt")
                    && !text.contains("Uppgivet"),
                "{text:?}"
            );
        }
        // The other languages name who resigned too; a draw agreed is said once.
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(
            en.game_over(Some(Color::White), &en.words.resignation),
            "Black resigns. White wins"
        );
        let de = Phrases::new(Lang::De, Style::Short, FileWords::Phonetic);
        assert_eq!(
            de.game_over(Some(Color::Black), &de.words.resignation),
            "Weiß gibt auf. Schwarz gewinnt"
        );
        assert_eq!(de.game_over(None, &de.words.agreement), "Remis vereinbart");
        assert_eq!(en.game_over(None, &en.words.agreement), "Draw agreed");
        assert_eq!(de.game_over(None, &de.words.stalemate), "Patt. Remis");
    }

    #[test]
    fn sentences_begin_with_a_capital() {
        assert_eq!(sentences("noch 5 Minuten"), "Noch 5 Minuten");
        assert_eq!(sentences("leer"), "Leer");
        assert_eq!(
            sentences("o mutare. negrul la mutare"),
            "O mutare. Negrul la mutare"
        );
        assert_eq!(sentences("5 Züge. Weiß am Zug"), "5 Züge. Weiß am Zug");
        assert_eq!(sentences("Touch move: castling"), "Touch move: castling");
        assert_eq!(
            sentences("1. Eva vier, 1... echo five"),
            "1. Eva vier, 1... Echo five"
        );
        assert_eq!(sentences("ärger! über? ja"), "Ärger! Über? Ja");
        assert_eq!(sentences(""), "");
    }

    #[test]
    fn sentences_in_place_are_the_sentences_written_afresh() {
        for text in [
            "noch 5 Minuten",
            "o mutare. negrul la mutare",
            "5 Züge. weiß am Zug",
            "1. eva vier, 1... echo five",
            "ärger! über? ja",
            "ja. ärger",
            "ǆ x. ß y",
            "a.b c! d",
            "  leer  ",
            "",
        ] {
            assert_eq!(
                into_sentences(text.to_string()),
                sentences(text),
                "{text:?}"
            );
        }
    }

    /// Whether `text` begins as a sentence does: with a capital letter (or a number).
    fn begins_a_sentence(text: &str) -> bool {
        text.chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
    }

    #[test]
    fn every_announcement_begins_with_a_capital_in_every_language() {
        let castle = Move::Castle {
            king: Square::E1,
            rook: Square::H1,
        };
        let push = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        for lang in [Lang::AppendixF, Lang::De, Lang::En, Lang::Ro, Lang::Sv] {
            for files in [FileWords::Phonetic, FileWords::Nato, FileWords::Letters] {
                let p = Phrases::new(lang, Style::Short, files);
                let mut said = Vec::new();
                for (fen, san, _) in TABLE {
                    for style in [Style::Short, Style::Long] {
                        let pos: Chess = fen
                            .parse::<Fen>()
                            .unwrap()
                            .into_position(CastlingMode::Standard)
                            .unwrap();
                        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                        let sp = SanPlus::from_move(pos, m);
                        let p = Phrases::new(lang, style, files);
                        said.push(p.announce(&sp, m));
                    }
                }
                // The words of every reason a game ends by (the engine's `EndReason`).
                let w = &p.words;
                for why in [
                    &w.checkmate,
                    &w.stalemate,
                    &w.dead_position,
                    &w.fivefold,
                    &w.seventyfive,
                    &w.threefold,
                    &w.fifty_moves,
                    &w.agreement,
                    &w.resignation,
                    &w.time_forfeit,
                    &w.illegal_moves,
                ] {
                    for winner in [Some(Color::White), Some(Color::Black), None] {
                        said.push(p.game_over(winner, why));
                    }
                }
                for ms in [0, 1_000, 25_000, 60_000, 1_500_000] {
                    said.push(p.low_time(Color::White, ms));
                    said.push(p.low_time(Color::Black, ms));
                }
                said.push(p.mismatch(&[(Square::E4, Some(Role::Pawn))], &[Square::E5]));
                said.push(p.mismatch(&[], &[Square::A1]));
                said.push(p.on_your_board(castle));
                said.push(p.on_your_board(push));
                said.push(p.piece_on(Role::Knight, Square::F3));
                said.push(p.square_flickers(Square::A1));
                for lost in [0, 1, 3, 20] {
                    said.push(p.record_repaired(lost));
                }
                // What the engine says alone, as a whole answer.
                let w = &p.words;
                for text in [
                    &w.to_move,
                    &w.empty,
                    &w.one_move,
                    &w.must_castle,
                    &w.draw_offer,
                ] {
                    said.push(sentences(text));
                }
                for text in [
                    &w.restored,
                    &w.new_game,
                    &w.claim_valid,
                    &w.claim_invalid,
                    &w.draw_offer_lapsed,
                    &w.takeback,
                    &w.order_uncertain,
                    &w.adjust,
                    &w.no_takeback,
                    &w.no_move_yet,
                    &w.starting,
                    &w.board_connected,
                    &w.board_lost,
                    &w.board_silent,
                    &w.board_reconnected,
                    &w.board_waiting,
                    &w.board_no_permission,
                    &w.board_not_a_tty,
                    &w.board_port_error,
                    &w.confirm,
                    &w.paused,
                    &w.resumed,
                    &w.help,
                    &w.game_resumed,
                    &w.clock_started,
                    &w.faster,
                    &w.slower,
                    &w.louder,
                    &w.quieter,
                    &w.voice_limit,
                    &w.illegal_move,
                    &w.touch_move,
                    &w.check_board,
                    &w.record_unreadable,
                    &w.storage_full,
                    &w.storage_free,
                    &w.record_failed,
                    &w.record_written,
                ] {
                    said.push(text.clone());
                }
                for text in said {
                    assert!(
                        begins_a_sentence(&text),
                        "{} {files:?}: {text:?}",
                        lang.name()
                    );
                }
            }
        }
    }
}
