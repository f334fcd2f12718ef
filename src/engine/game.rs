//! The logical game: position, moves made, repetitions, automatic endings, PGN export.

use std::fmt::Write as _;

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingSide, Chess, Color, EnPassantMode, Move, MoveList, Piece, Position, Role};

use super::dead;
use super::decoder::recognise::Legal;
use super::event::EndReason;
use super::event::Millis;
use super::rules::RuleProfile;
use crate::words::Phrases;

/// One completed move.
#[derive(Clone, Debug)]
pub struct Ply {
    pub before: Chess,
    pub m: Move,
    pub san: SanPlus,
    pub t: Millis,
    /// Clocks after the move, when there is a clock.
    pub clocks: Option<(i64, i64)>,
    /// Read from the board afterwards, not seen being made.
    pub recovered: bool,
    /// Read from the board afterwards, in an order (or by a route) the board could not tell:
    /// the likeliest was taken.
    pub uncertain: bool,
}

/// How a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    pub winner: Option<Color>,
    pub reason: EndReason,
}

impl Ending {
    pub fn result(&self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }

    /// The PGN `Termination` tag value for this ending.
    pub fn termination(&self) -> &'static str {
        match self.reason {
            EndReason::TimeForfeit => "time forfeit",
            EndReason::IllegalMoves => "rules infraction",
            EndReason::Checkmate
            | EndReason::Stalemate
            | EndReason::DeadPosition
            | EndReason::FivefoldRepetition
            | EndReason::SeventyfiveMoves
            | EndReason::ThreefoldRepetition
            | EndReason::FiftyMoves
            | EndReason::Agreement
            | EndReason::Resignation => "normal",
        }
    }

    /// The announcement of the end: "Schachmatt. Weiß gewinnt".
    pub fn say(&self, phrases: &Phrases) -> String {
        phrases.game_over(self.winner, self.reason.words(&phrases.words))
    }
}

/// The envelope of an adjourned game (Appendix A2 of the 1997 and 2005 Laws): the sealed move,
/// who sealed it and its number, both clocks, a draw offer standing. The position before the
/// sealed move is the game's position: the sealed move is not played until the game resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub sealer: Color,
    pub sealed: Move,
    pub move_number: u32,
    /// Both clocks as they stood (what each player has left).
    pub clocks: Option<(i64, i64)>,
    /// The time each player used (A2c).
    pub used: Option<(i64, i64)>,
    pub draw_offer: Option<Color>,
}

#[derive(Clone, Debug)]
pub struct Game {
    pub start: Chess,
    /// The position now (changed only by [`Game::play`] and [`Game::undo`]).
    pub pos: Chess,
    /// Its legal moves.
    legal: Legal,
    pub plies: Vec<Ply>,
    /// What the scoresheet notes besides moves (F2.5: draw offers, claims, penalties), each
    /// after the number of plies it follows, in English: the PGN's comments.
    pub notes: Vec<(usize, String)>,
    /// Zobrist keys of every position of the game, the start included.
    keys: Vec<u64>,
    pub ending: Option<Ending>,
}

fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The position in FEN (an en passant square only when the capture is legal), as shakmaty
/// writes it; written directly, for it is written for every move.
pub fn fen_of(pos: &Chess) -> String {
    let board = pos.board();
    // The piece letter of every square, from the twelve bitboards.
    let mut letters = [0u8; 64];
    for color in Color::ALL {
        for role in Role::ALL {
            let letter = Piece { color, role }.char() as u8;
            for sq in board.by_piece(Piece { color, role }) {
                letters[sq as usize] = letter;
            }
        }
    }
    let mut out: Vec<u8> = Vec::with_capacity(90);
    for rank in (0..8).rev() {
        let mut empty = 0u8;
        for &letter in &letters[rank * 8..rank * 8 + 8] {
            if letter == 0 {
                empty += 1;
                continue;
            }
            if empty > 0 {
                out.push(b'0' + empty);
                empty = 0;
            }
            out.push(letter);
        }
        if empty > 0 {
            out.push(b'0' + empty);
        }
        if rank > 0 {
            out.push(b'/');
        }
    }
    out.extend_from_slice(if pos.turn() == Color::White {
        b" w "
    } else {
        b" b "
    });
    let castles = pos.castles();
    let before = out.len();
    for (color, side, c) in [
        (Color::White, CastlingSide::KingSide, b'K'),
        (Color::White, CastlingSide::QueenSide, b'Q'),
        (Color::Black, CastlingSide::KingSide, b'k'),
        (Color::Black, CastlingSide::QueenSide, b'q'),
    ] {
        if castles.has(color, side) {
            out.push(c);
        }
    }
    if out.len() == before {
        out.push(b'-');
    }
    out.push(b' ');
    match pos.ep_square(EnPassantMode::Legal) {
        Some(sq) => out.extend_from_slice(&[sq.file().char() as u8, sq.rank().char() as u8]),
        None => out.push(b'-'),
    }
    out.push(b' ');
    super::event::push_number(&mut out, u64::from(pos.halfmoves()));
    out.push(b' ');
    super::event::push_number(&mut out, u64::from(pos.fullmoves().get()));
    // Only ASCII was written.
    String::from_utf8(out).unwrap_or_default()
}

/// The absolute ply number of the move about to be made in `pos` (1 = white's first move).
pub fn ply_number(pos: &Chess) -> u32 {
    let n = 2 * (u64::from(pos.fullmoves().get()) - 1) + u64::from(pos.turn() == Color::Black) + 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Game {
    pub fn new(start: Chess) -> Game {
        Game {
            keys: vec![key(&start)],
            legal: Legal::of(&start),
            pos: start.clone(),
            start,
            plies: Vec::new(),
            notes: Vec::new(),
            ending: None,
        }
    }

    /// Notes `text` after the moves made so far.
    pub fn note(&mut self, text: String) {
        self.notes.push((self.plies.len(), text));
    }

    /// The legal moves of the position now.
    pub fn legal(&self) -> &Legal {
        &self.legal
    }

    /// Plays a legal move and returns its SAN.
    pub fn play(&mut self, m: Move, t: Millis) -> SanPlus {
        let before = self.pos.clone();
        // The position's legal moves are at hand: SAN's disambiguation needs those of the same
        // piece to the same square.
        let mut rivals = MoveList::new();
        for c in &self.legal.moves {
            if c.to() == m.to() && c.role() == m.role() {
                rivals.push(*c);
            }
        }
        let san = San::disambiguate(m, &rivals);
        self.pos.play_unchecked(m);
        self.legal = Legal::of(&self.pos);
        let suffix = match (self.pos.is_check(), self.legal.moves.is_empty()) {
            (true, true) => Some(Suffix::Checkmate),
            (true, false) => Some(Suffix::Check),
            (false, _) => None,
        };
        let san = SanPlus { san, suffix };
        self.keys.push(key(&self.pos));
        self.plies.push(Ply {
            before,
            m,
            san,
            t,
            clocks: None,
            recovered: false,
            uncertain: false,
        });
        san
    }

    /// Takes back the last move.
    pub fn undo(&mut self) -> Option<Ply> {
        let ply = self.plies.pop()?;
        let left = self.plies.len();
        self.notes.retain(|(after, _)| *after <= left);
        self.keys.pop();
        self.pos = ply.before.clone();
        self.legal = Legal::of(&self.pos);
        self.ending = None;
        Some(ply)
    }

    /// How often the current position has stood on the board (9.2: same player to move,
    /// same pieces, same possible moves).
    pub fn repetitions(&self) -> usize {
        let Some(&cur) = self.keys.last() else {
            return 0;
        };
        let back = self.pos.halfmoves() as usize + 1;
        self.keys
            .iter()
            .rev()
            .take(back)
            .filter(|&&k| k == cur)
            .count()
    }

    /// The game ends by itself after the last move: mate, stalemate, dead position, and under
    /// the later Laws fivefold repetition and the 75-move rule.
    pub fn automatic_ending(&self, rules: &RuleProfile) -> Option<Ending> {
        let pos = &self.pos;
        let stuck = self.legal.moves.is_empty();
        if stuck && pos.is_check() {
            return Some(Ending {
                winner: Some(!pos.turn()),
                reason: EndReason::Checkmate,
            });
        }
        if stuck {
            return Some(Ending {
                winner: None,
                reason: EndReason::Stalemate,
            });
        }
        if dead::is_dead(pos) {
            return Some(Ending {
                winner: None,
                reason: EndReason::DeadPosition,
            });
        }
        if rules.automatic_fivefold && self.repetitions() >= 5 {
            return Some(Ending {
                winner: None,
                reason: EndReason::FivefoldRepetition,
            });
        }
        if rules.automatic_seventyfive && pos.halfmoves() >= 150 {
            return Some(Ending {
                winner: None,
                reason: EndReason::SeventyfiveMoves,
            });
        }
        None
    }

    /// The game in PGN export format: seven-tag roster, extra tags, movetext, result.
    pub fn to_pgn(&self, extra_tags: &[(&str, String)]) -> String {
        let result = self.ending.map_or("*", |e| e.result());
        let mut out = String::new();
        let roster = [
            ("Event", "chessboardd game".to_string()),
            ("Site", "?".to_string()),
            ("Date", "????.??.??".to_string()),
            ("Round", "-".to_string()),
            ("White", "?".to_string()),
            ("Black", "?".to_string()),
        ];
        for (k, v) in roster.iter() {
            let v = extra_tags
                .iter()
                .find(|(ek, _)| ek == k)
                .map_or(v, |(_, ev)| ev);
            let _ = writeln!(out, "[{k} \"{}\"]", escape(v));
        }
        let _ = writeln!(out, "[Result \"{result}\"]");
        if let Some((_, tc)) = extra_tags.iter().find(|(k, _)| *k == "TimeControl") {
            let _ = writeln!(out, "[TimeControl \"{}\"]", escape(tc));
        }
        let termination = match self.ending {
            Some(e) => e.termination(),
            None => "unterminated",
        };
        let _ = writeln!(out, "[Termination \"{termination}\"]");
        if self.start != Chess::default() {
            let _ = writeln!(out, "[SetUp \"1\"]");
            let _ = writeln!(out, "[FEN \"{}\"]", fen_of(&self.start));
        }
        for (k, v) in extra_tags.iter().filter(|(k, _)| {
            !roster.iter().any(|(rk, _)| rk == k)
                && !matches!(
                    *k,
                    "TimeControl" | "Termination" | "Result" | "SetUp" | "FEN"
                )
        }) {
            let _ = writeln!(out, "[{k} \"{}\"]", escape(v));
        }
        out.push('\n');

        let mut tokens: Vec<String> = Vec::new();
        // The comments of the notes after `n` plies (its words tokens, to break long lines).
        let notes_after = |n: usize, tokens: &mut Vec<String>| {
            let mut any = false;
            for (_, text) in self.notes.iter().filter(|(after, _)| *after == n) {
                let comment = format!("{{{}}}", text.replace(['{', '}'], ""));
                tokens.extend(comment.split(' ').map(str::to_string));
                any = true;
            }
            any
        };
        notes_after(0, &mut tokens);
        // A black move needs its number at the start and after a comment.
        let mut numbered = true;
        for (i, ply) in self.plies.iter().enumerate() {
            let turn = ply.before.turn();
            let number = ply.before.fullmoves().get();
            if turn == Color::White {
                tokens.push(format!("{number}."));
            } else if numbered {
                tokens.push(format!("{number}..."));
            }
            tokens.push(ply.san.to_string());
            numbered = ply.recovered || ply.uncertain || ply.clocks.is_some();
            if let Some((w, b)) = ply.clocks {
                let left = if turn == Color::White { w } else { b };
                tokens.push(format!("{{[%clk {}]}}", clk(left)));
            }
            // (A move seen made, which later readings showed might have been another by a route
            // or an order the board does not tell, is marked as well.)
            if ply.recovered || ply.uncertain {
                // The comment's words are tokens, so that a long line can break inside it.
                let comment = if ply.uncertain {
                    UNCERTAIN_COMMENT
                } else {
                    RECOVERED_COMMENT
                };
                tokens.extend(comment.split(' ').map(str::to_string));
            }
            numbered |= notes_after(i + 1, &mut tokens);
        }
        if let Some(e) = self.ending {
            tokens.push(format!("{{{}}}", e.reason.name().replace('_', " ")));
        }
        tokens.push(result.to_string());
        let mut line = String::new();
        for tok in tokens {
            if !line.is_empty() && line.len() + 1 + tok.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&tok);
        }
        out.push_str(&line);
        out.push_str("\n\n");
        out
    }
}

/// The PGN comment after a move read from the board afterwards.
pub const RECOVERED_COMMENT: &str = "{recovered from the board}";
/// ... and after one whose order or route the board could not tell.
pub const UNCERTAIN_COMMENT: &str = "{recovered from the board, order uncertain}";

/// The tags of every PGN the daemon writes, from one place: `extra` (the date and time, which
/// the engine does not know) wins over the config's tags; then the time control, when there is
/// one. [`Game::to_pgn`] puts them in order (the roster, `Result`, `TimeControl`,
/// `Termination`, then the others).
pub fn tag_set<'a>(
    config: &'a [(String, String)],
    extra: &[(&'a str, String)],
    time_control: Option<String>,
) -> Vec<(&'a str, String)> {
    let mut tags: Vec<(&str, String)> = extra.to_vec();
    for (k, v) in config {
        if !tags.iter().any(|(t, _)| t == k) {
            tags.push((k.as_str(), v.clone()));
        }
    }
    if let Some(tc) = time_control {
        tags.retain(|(k, _)| *k != "TimeControl");
        tags.push(("TimeControl", tc));
    }
    tags
}

/// A clock's time as PGN's `[%clk]` writes it: `H:MM:SS`, whole seconds (rounded down), never
/// below zero.
pub fn clk(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn play(g: &mut Game, san: &str) {
        let m = san.parse::<San>().unwrap().to_move(&g.pos).unwrap();
        g.play(m, 0);
    }

    #[test]
    fn counts_repetitions_and_detects_fivefold_only_when_the_profile_says_so() {
        let mut g = Game::new(Chess::default());
        for _ in 0..4 {
            for s in ["Nf3", "Nf6", "Ng1", "Ng8"] {
                play(&mut g, s);
            }
        }
        assert_eq!(g.repetitions(), 5);
        assert!(g
            .automatic_ending(&crate::engine::rules::FIDE_2005)
            .is_none());
        assert_eq!(
            g.automatic_ending(&crate::engine::rules::FIDE_2023)
                .map(|e| e.reason.name()),
            Some("fivefold_repetition")
        );
    }

    #[test]
    fn fen_is_written_as_shakmaty_writes_it() {
        let mut g = Game::new(Chess::default());
        let check = |g: &Game| {
            assert_eq!(
                fen_of(&g.pos),
                Fen::from_position(&g.pos, EnPassantMode::Legal).to_string()
            );
        };
        check(&g);
        // Castling rights lost one by one, en passant possible and not, promotion.
        for s in [
            "e4", "d5", "e5", "f5", "exf6", "Nc6", "fxg7", "Bh3", "gxh8=Q", "Kd7", "Ke2", "a5",
            "Qxg8", "Ra6",
        ] {
            play(&mut g, s);
            check(&g);
        }
    }

    #[test]
    fn the_scoresheets_notes_are_comments_after_their_moves() {
        let mut g = Game::new(Chess::default());
        g.note("White offers a draw".into());
        play(&mut g, "e4");
        g.note("Illegal move by Black (1): 120 s added to White's clock".into());
        play(&mut g, "e5");
        play(&mut g, "Nf3");
        g.note("Black claims a draw by threefold repetition: refused".into());
        let pgn = g.to_pgn(&[]);
        let moves = pgn.split("\n\n").nth(1).unwrap().replace('\n', " ");
        assert_eq!(
            moves.trim(),
            "{White offers a draw} 1. e4 {Illegal move by Black (1): 120 s added to White's \
             clock} 1... e5 2. Nf3 {Black claims a draw by threefold repetition: refused} *"
        );
        // A move taken back takes the notes after it along; the ones before it stay.
        g.undo();
        assert_eq!(g.notes.len(), 2);
        g.undo();
        g.undo();
        assert_eq!(g.notes, [(0, "White offers a draw".to_string())]);
    }

    #[test]
    fn pgn_has_the_roster_and_the_result() {
        let mut g = Game::new(Chess::default());
        for s in ["f3", "e5", "g4", "Qh4#"] {
            play(&mut g, s);
        }
        g.ending = g.automatic_ending(&RuleProfile::default());
        let pgn = g.to_pgn(&[("TimeControl", "300+2".into())]);
        assert!(pgn.starts_with("[Event \"chessboardd game\"]\n[Site \"?\"]"));
        assert!(pgn.contains("[Result \"0-1\"]"));
        assert!(pgn.contains("[TimeControl \"300+2\"]"));
        assert!(pgn.contains("[Termination \"normal\"]"));
        assert!(pgn.contains("1. f3 e5 2. g4 Qh4# {checkmate} 0-1"));
        assert!(!pgn.contains("SetUp"));
    }

    #[test]
    fn a_recovered_move_carries_a_comment_and_black_is_numbered_after_it() {
        let mut g = Game::new(Chess::default());
        for s in ["e4", "e5", "Nf3"] {
            play(&mut g, s);
        }
        g.plies[0].recovered = true;
        let pgn = g.to_pgn(&[]);
        assert!(
            pgn.contains("1. e4 {recovered from the board} 1... e5 2. Nf3 *"),
            "{pgn}"
        );
    }
}
