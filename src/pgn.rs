//! A small PGN reader: enough to turn game files into positions and legal moves.

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Move, Position};

#[derive(Clone, Debug)]
pub struct PgnGame {
    pub tags: Vec<(String, String)>,
    pub start: Chess,
    pub moves: Vec<Move>,
    /// The `Result` tag, or the result token of the movetext.
    pub result: String,
    /// The movetext has a null move (`Z0`, `--`, `0000`): a board cannot play it, so `moves`
    /// holds the moves before it only.
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
    pub game: usize,
    pub msg: String,
}

fn strip_comments(movetext: &str) -> String {
    let mut out = String::with_capacity(movetext.len());
    let mut brace = false;
    let mut paren = 0usize;
    let mut line_comment = false;
    for c in movetext.chars() {
        match c {
            '\n' if line_comment => {
                line_comment = false;
                out.push(' ');
            }
            _ if line_comment => {}
            '{' if !brace => brace = true,
            '}' if brace => brace = false,
            _ if brace => {}
            ';' => line_comment = true,
            '(' => paren += 1,
            ')' if paren > 0 => paren -= 1,
            _ if paren > 0 => {}
            _ => out.push(c),
        }
    }
    out
}

/// Reads every game of a PGN text.
pub fn parse(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    let mut games = Vec::new();
    let mut tags = Vec::new();
    let mut movetext = String::new();
    let mut finish =
        |tags: &mut Vec<(String, String)>, movetext: &mut String| -> Result<(), PgnError> {
            if tags.is_empty() && movetext.trim().is_empty() {
                return Ok(());
            }
            let n = games.len() + 1;
            let game = parse_one(std::mem::take(tags), &std::mem::take(movetext))
                .map_err(|msg| PgnError { game: n, msg })?;
            games.push(game);
            Ok(())
        };
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') && l.ends_with(']') {
            if !movetext.trim().is_empty() {
                finish(&mut tags, &mut movetext)?;
            }
            let inner = &l[1..l.len() - 1];
            if let Some((k, v)) = inner.split_once(' ') {
                tags.push((
                    k.to_string(),
                    v.trim().trim_matches('"').replace("\\\"", "\""),
                ));
            }
        } else if !l.starts_with('%') {
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    finish(&mut tags, &mut movetext)?;
    Ok(games)
}

fn parse_one(tags: Vec<(String, String)>, movetext: &str) -> Result<PgnGame, String> {
    let start: Chess = match tags.iter().find(|(k, _)| k == "FEN") {
        Some((_, fen)) => fen
            .parse::<Fen>()
            .map_err(|e| format!("bad FEN tag: {e}"))?
            .into_position(CastlingMode::Standard)
            .map_err(|e| format!("impossible FEN tag: {e}"))?,
        None => Chess::default(),
    };
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut null_move = false;
    let mut result = tags
        .iter()
        .find(|(k, _)| k == "Result")
        .map(|(_, v)| v.clone());
    for token in strip_comments(movetext).split_whitespace() {
        if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
            result.get_or_insert_with(|| token.to_string());
            break;
        }
        // A move number ("12." or "12...") may stand alone or before the move.
        let token = match token.find('.') {
            Some(dot) if token[..dot].bytes().all(|b| b.is_ascii_digit()) => {
                token[dot..].trim_start_matches('.')
            }
            _ => token,
        };
        if token.is_empty() || token.starts_with('$') {
            continue;
        }
        if matches!(token, "Z0" | "--" | "0000" | "@@@@") {
            null_move = true;
            break;
        }
        let san: SanPlus = token.parse().map_err(|_| format!("'{token}' is not SAN"))?;
        let m = san
            .san
            .to_move(&pos)
            .map_err(|_| format!("'{token}' is not legal here"))?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok(PgnGame {
        null_move,
        tags,
        start,
        moves,
        result: result.unwrap_or_else(|| "*".to_string()),
    })
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
}
