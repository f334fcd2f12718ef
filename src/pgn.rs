//! The PGN reader: games as people write them, turned into a start position and legal moves.
//!
//! The text is read by `pgn-reader` (tags, move numbers, comments `{...}` and `;...`, `%`
//! escape lines, NAGs `$14` and glyphs `!?`, variations, results); this module keeps the main
//! line, plays it with shakmaty from the start the tags give (`[FEN]`, unless `[SetUp "0"]`),
//! and names the game, the move number and the SAN of a move that is illegal or ambiguous.
//! Annotations, comments and variations are dropped. A word that is not a move at all (`e.p.`
//! after an en-passant capture, a stray letter) is skipped, as pgn-reader skips it; the main
//! line then goes on, and a move missing from it shows as the next move being illegal.

use std::ops::ControlFlow;

use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::{CastlingMode, Chess, Move, Position};

#[derive(Clone, Debug)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub start: Chess,
    pub moves: Vec<Move>,
    /// The `Result` tag, or the result token of the movetext.
    pub result: String,
    /// The movetext has a null move (`Z0`, `--`): a board cannot play it, so `moves` holds
    /// the moves before it only.
    pub null_move: bool,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("game {game}: {msg}")]
pub struct PgnError {
    /// The game's number in the file, from 1.
    pub game: usize,
    pub msg: String,
}

/// Reads every game of a PGN text.
pub fn parse(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    let mut reader = Reader::new(text.as_bytes());
    let mut games = Vec::new();
    while let Some(game) = read_one(&mut reader, games.len() + 1)? {
        games.push(game);
    }
    Ok(games)
}

/// Reads the `n`th game of a PGN text (from 1); the games before it are skipped unread, so a
/// mistake in one of them does not matter.
pub fn nth(text: &str, n: usize) -> Result<PgnGame, PgnError> {
    if n == 0 {
        return Err(PgnError {
            game: 0,
            msg: "games are counted from 1".into(),
        });
    }
    let mut reader = Reader::new(text.as_bytes());
    let fewer = |had: usize| PgnError {
        game: n,
        msg: format!(
            "no such game: the file holds {had} game{}",
            if had == 1 { "" } else { "s" }
        ),
    };
    for skipped in 0..n - 1 {
        let more = reader.skip_game().map_err(|e| PgnError {
            game: skipped + 1,
            msg: unreadable(&e),
        })?;
        if !more {
            return Err(fewer(skipped));
        }
    }
    read_one(&mut reader, n)?.ok_or_else(|| fewer(n - 1))
}

/// The next game of `reader`, game `number` of the file.
fn read_one(reader: &mut Reader<&[u8]>, number: usize) -> Result<Option<PgnGame>, PgnError> {
    match reader.read_game(&mut GameVisitor) {
        Ok(None) => Ok(None),
        Ok(Some(game)) => game.map(Some).map_err(|msg| PgnError { game: number, msg }),
        Err(e) => Err(PgnError {
            game: number,
            msg: unreadable(&e),
        }),
    }
}

/// pgn-reader's few errors ("unterminated tag", "unterminated comment") in words.
fn unreadable(e: &std::io::Error) -> String {
    match e.to_string().as_str() {
        "unterminated tag" => "a tag pair [Name \"value\"] is not closed".into(),
        "unterminated comment" => "a comment { is not closed by }".into(),
        other => format!("unreadable PGN: {other}"),
    }
}

/// Reads one game a call: its tags, then its main line played from its start.
struct GameVisitor;

struct Movetext {
    tags: Vec<(String, String)>,
    start: Chess,
    pos: Chess,
    moves: Vec<Move>,
    outcome: Option<String>,
    null_move: bool,
    /// A result token or a null move ended the main line: the words after it are not moves.
    ended: bool,
}

fn tag_value<'a>(tags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The game's start: the FEN tag's position, unless `SetUp` says "0" (the standard start).
fn start_of(tags: &[(String, String)]) -> Result<Chess, String> {
    let fen = tag_value(tags, "FEN");
    match tag_value(tags, "SetUp").map(str::trim) {
        Some("0") => return Ok(Chess::default()),
        Some("1") if fen.is_none() => {
            return Err("the SetUp tag is \"1\" but there is no FEN tag".into())
        }
        Some("1") | None => {}
        Some(other) => return Err(format!("bad SetUp tag \"{other}\" (\"0\" or \"1\")")),
    }
    let Some(fen) = fen else {
        return Ok(Chess::default());
    };
    fen.trim()
        .parse::<Fen>()
        .map_err(|e| format!("bad FEN tag \"{fen}\": {e}"))?
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("impossible position in the FEN tag \"{fen}\": {e}"))
}

/// "14. Nf3" or "14... Nf6": the move as a person finds it in the movetext.
fn numbered(pos: &Chess, san: &SanPlus) -> String {
    let dots = if pos.turn().is_white() { "." } else { "..." };
    format!("{}{dots} {san}", pos.fullmoves())
}

impl Visitor for GameVisitor {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        match start_of(&tags) {
            Ok(start) => ControlFlow::Continue(Movetext {
                tags,
                pos: start.clone(),
                start,
                moves: Vec::new(),
                outcome: None,
                null_move: false,
                ended: false,
            }),
            Err(msg) => ControlFlow::Break(Err(msg)),
        }
    }

    fn san(&mut self, m: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if m.ended {
            return ControlFlow::Continue(());
        }
        if san_plus.san == San::Null {
            m.null_move = true;
            m.ended = true;
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&m.pos) {
            Ok(mv) => {
                m.pos.play_unchecked(mv);
                m.moves.push(mv);
                ControlFlow::Continue(())
            }
            Err(SanError::AmbiguousSan) => {
                let candidates: Vec<String> = m
                    .pos
                    .legal_moves()
                    .iter()
                    .filter(|mv| san_plus.san.matches(**mv))
                    .map(|mv| San::from_move(&m.pos, *mv).to_string())
                    .collect();
                ControlFlow::Break(Err(format!(
                    "move {}: ambiguous in this position ({})",
                    numbered(&m.pos, &san_plus),
                    candidates.join(" or ")
                )))
            }
            Err(SanError::IllegalSan) => ControlFlow::Break(Err(format!(
                "move {}: illegal in this position",
                numbered(&m.pos, &san_plus)
            ))),
        }
    }

    fn outcome(&mut self, m: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        // The first result token ends the main line (after a null move too).
        m.ended = true;
        m.outcome.get_or_insert_with(|| outcome.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, m: Self::Movetext) -> Self::Output {
        let result = tag_value(&m.tags, "Result")
            .map(str::to_string)
            .or(m.outcome)
            .unwrap_or_else(|| "*".to_string());
        Ok(PgnGame {
            tags: m.tags,
            start: m.start,
            moves: m.moves,
            result,
            null_move: m.null_move,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_moves_comments_and_results() {
        let text = "[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 {best} e5 (1... c5) 2. Nf3 $1 Nc6 ; line\n3. Bb5 1-0\n\n[Event \"y\"]\n\n1. d4 *\n";
        let g = parse(text).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].moves.len(), 5);
        assert_eq!(g[0].result, "1-0");
        assert_eq!(g[0].tag("Event"), Some("x"));
        assert_eq!(g[1].moves.len(), 1);
        assert_eq!(g[1].result, "*");
        assert!(parse("1. e4 e4").is_err());
        let g = parse("1. e4 Z0 2. d4 1-0").unwrap();
        assert!(g[0].null_move);
        assert_eq!(g[0].moves.len(), 1);
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_game_the_move_number_and_the_san() {
        let two = "[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"b\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Nf3 *\n";
        assert_eq!(
            parse(two).unwrap_err(),
            PgnError {
                game: 2,
                msg: "move 3. Nf3: illegal in this position".into()
            }
        );
        assert_eq!(
            err("1. e4 e4"),
            "game 1: move 1... e4: illegal in this position"
        );
        // The numbers count from the FEN's move number.
        let fen = "[FEN \"4k3/8/8/8/8/8/8/4K2R b K - 0 40\"]\n\n40... Kd8 41. O-O Ke8 42. O-O *";
        assert_eq!(err(fen), "game 1: move 42. O-O: illegal in this position");
        let ambiguous = err("1. d4 d5 2. Nf3 Nf6 3. Nd2 *");
        assert!(
            ambiguous.starts_with("game 1: move 3. Nd2: ambiguous in this position (N")
                && ambiguous.contains("Nbd2")
                && ambiguous.contains("Nfd2"),
            "{ambiguous}"
        );
        assert_eq!(
            err("1. e4 {never closed"),
            "game 1: a comment { is not closed by }"
        );
    }

    #[test]
    fn the_start_is_the_fen_tag_unless_setup_says_0() {
        let fen = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1";
        let g = parse(&format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n\n1. e4+ *")).unwrap();
        assert_eq!(g[0].start.board().occupied().count(), 3);
        assert_eq!(g[0].moves.len(), 1);
        // Without SetUp (as many programs write it) the FEN counts too.
        let g = parse(&format!("[FEN \"{fen}\"]\n\n1. Kd2 *")).unwrap();
        assert_eq!(g[0].start.board().occupied().count(), 3);
        let g = parse(&format!("[SetUp \"0\"]\n[FEN \"{fen}\"]\n\n1. Nf3 *")).unwrap();
        assert_eq!(g[0].start, Chess::default());
        assert_eq!(
            err("[FEN \"8/8/9/8 w - - 0 1\"]\n\n*"),
            "game 1: bad FEN tag \"8/8/9/8 w - - 0 1\": invalid board part in fen"
        );
        let two_kings = err("[FEN \"8/8/8/8/8/8/8/K6K w - - 0 1\"]\n\n*");
        assert!(
            two_kings.starts_with("game 1: impossible position in the FEN tag \"8/8/8/8/8/8/8/K6K"),
            "{two_kings}"
        );
        assert_eq!(
            err("[SetUp \"1\"]\n\n1. e4 *"),
            "game 1: the SetUp tag is \"1\" but there is no FEN tag"
        );
    }

    #[test]
    fn annotations_comments_variations_and_escapes_are_not_moves() {
        let text = "% an escape line\n[Event \"x\"]\n\n1. e4! e5?! 2. Nf3!! $14 Nc6 $1 (2... d6?? (2... f5 3. exf5)\n 3. d4) 3. Bb5 {a comment ; not a line comment} a6 ; 3... Nf6\n%4. Ba4\n4. Bxc6 dxc6 *\n";
        let g = parse(text).unwrap();
        assert_eq!(g.len(), 1);
        let sans: Vec<String> = {
            let mut pos = g[0].start.clone();
            g[0].moves
                .iter()
                .map(|m| SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string())
                .collect()
        };
        assert_eq!(
            sans,
            ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6"]
        );
        assert_eq!(g[0].result, "*");
    }

    #[test]
    fn the_result_token_ends_the_main_line_and_counts_after_a_null_move() {
        let g = parse("1. e4 e5 1-0 2. Nf3").unwrap();
        assert_eq!((g[0].moves.len(), g[0].result.as_str()), (2, "1-0"));
        let g = parse("1. e4 -- 2. d4 0-1").unwrap();
        assert!(g[0].null_move);
        assert_eq!((g[0].moves.len(), g[0].result.as_str()), (1, "0-1"));
    }

    #[test]
    fn nth_reads_one_game_and_says_how_many_there_are() {
        let text = "1. e4 e4 *\n\n[Event \"2\"]\n\n1. d4 *\n\n[Event \"3\"]\n\n1. c4 c5 *\n";
        // Game 1 is illegal; the others are read all the same.
        assert_eq!(nth(text, 2).unwrap().tag("Event"), Some("2"));
        assert_eq!(nth(text, 3).unwrap().moves.len(), 2);
        assert_eq!(nth(text, 1).unwrap_err().game, 1);
        assert_eq!(
            nth(text, 4).unwrap_err().to_string(),
            "game 4: no such game: the file holds 3 games"
        );
        assert_eq!(
            nth("1. e4 *", 2).unwrap_err().to_string(),
            "game 2: no such game: the file holds 1 game"
        );
        assert_eq!(
            nth("", 1).unwrap_err().msg,
            "no such game: the file holds 0 games"
        );
        assert!(nth(text, 0).is_err());
    }
}
