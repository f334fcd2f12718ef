//! Exploring the board from the keypad (issue 26): a cursor a blind player moves square by
//! square, or along a line to the next piece, hearing what stands on each square and who
//! defends and attacks it. It reads the position and never touches the game (no clock, no move).

use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Color, FromSetup, Position, Setup, Square};

use super::arbiter::Engine;
use super::input::Look;

impl Engine {
    /// Carries out a step of the exploration; returns what is said.
    pub(super) fn look(&mut self, l: Look) -> String {
        let w = &self.s.phrases.words;
        let start = self.cursor.unwrap_or_else(|| self.first_look());
        match l {
            Look::Toggle if self.exploring => {
                self.exploring = false;
                self.cursor = None;
                w.explore_off.clone()
            }
            Look::Toggle => {
                self.exploring = true;
                self.cursor = Some(start);
                format!("{}. {}", w.explore_on, self.square_text(start))
            }
            Look::Step(d) => match d.from(start) {
                Some(sq) => self.look_at(sq),
                None => self.at_edge(start),
            },
            Look::Jump(d) => {
                let occupied = self.game.pos.board().occupied();
                let mut sq = start;
                while let Some(next) = d.from(sq) {
                    sq = next;
                    if occupied.contains(sq) {
                        return self.look_at(sq);
                    }
                }
                // Nothing on the way: the last square of the line.
                if sq == start {
                    self.at_edge(start)
                } else {
                    let text = self.look_at(sq);
                    format!("{text}. {}", self.s.phrases.words.edge)
                }
            }
            Look::Guard => {
                self.cursor = Some(start);
                self.guard_text(start)
            }
            Look::Go(sq) => self.look_at(sq),
            Look::Legal => self.legal_text(start),
        }
    }

    /// Where the cursor starts: the last move's square, else White's king.
    fn first_look(&self) -> Square {
        self.game
            .plies
            .last()
            .map(|p| p.m.to())
            .or_else(|| self.game.pos.board().king_of(Color::White))
            .unwrap_or(Square::E1)
    }

    fn look_at(&mut self, sq: Square) -> String {
        self.cursor = Some(sq);
        self.square_text(sq)
    }

    /// The cursor stays where it is, at the board's edge.
    fn at_edge(&mut self, sq: Square) -> String {
        self.cursor = Some(sq);
        format!("{}. {}", self.s.phrases.words.edge, self.square_text(sq))
    }

    /// What stands on `sq`: "Weißer Bauer auf Eva vier", "Eva fünf leer" (the `square` answer).
    pub(super) fn square_text(&self, sq: Square) -> String {
        let p = &self.s.phrases;
        let w = &p.words;
        match self.game.pos.board().piece_at(sq) {
            Some(pc) => {
                let mut on = w.on.clone();
                p.push_square(&mut on, sq);
                format!("{} {on}", w.side_piece(pc.color, pc.role))
            }
            None => format!("{} {}", p.square(sq), w.empty),
        }
    }

    /// The legal moves of the piece on `sq`, each as it is announced ("Weißer Springer auf
    /// Gustav eins: Springer Felix drei, Springer Hector drei"); a piece of the player not to
    /// move, as if it were his turn (none while his opponent is in check).
    fn legal_text(&self, sq: Square) -> String {
        let p = &self.s.phrases;
        let w = &p.words;
        let pos = &self.game.pos;
        let Some(pc) = pos.board().piece_at(sq) else {
            return self.square_text(sq);
        };
        let theirs;
        let pos = if pc.color == pos.turn() {
            pos
        } else {
            let setup = Setup {
                board: pos.board().clone(),
                turn: pc.color,
                castling_rights: pos.castles().castling_rights(),
                ..Setup::empty()
            };
            match Chess::from_setup(setup, CastlingMode::Standard) {
                Ok(c) => {
                    theirs = c;
                    &theirs
                }
                Err(_) => return format!("{}: {}", self.square_text(sq), w.no_moves),
            }
        };
        let said: Vec<String> = pos
            .legal_moves()
            .iter()
            .filter(|m| m.from() == Some(sq))
            .map(|m| p.announce(&SanPlus::from_move(pos.clone(), *m), *m))
            .collect();
        let list = if said.is_empty() {
            w.no_moves.clone()
        } else {
            said.join(", ")
        };
        format!("{}: {list}", self.square_text(sq))
    }

    /// Who defends and who attacks `sq`: a piece's own side defends it, the other attacks it;
    /// an empty square is attacked by both sides' pieces that reach it.
    fn guard_text(&self, sq: Square) -> String {
        let p = &self.s.phrases;
        let w = &p.words;
        let board = self.game.pos.board();
        let list = |c: Color| -> String {
            let from = board.attacks_to(sq, c, board.occupied());
            let names: Vec<String> = from
                .into_iter()
                .filter_map(|s| board.piece_at(s).map(|pc| p.piece_on(pc.role, s)))
                .collect();
            if names.is_empty() {
                w.nobody.clone()
            } else {
                names.join(", ")
            }
        };
        match board.piece_at(sq) {
            Some(pc) => format!(
                "{}. {} {}. {} {}",
                self.square_text(sq),
                w.defended_by,
                list(pc.color),
                w.attacked_by,
                list(!pc.color)
            ),
            None => format!(
                "{}. {} {}: {}; {}: {}",
                self.square_text(sq),
                w.attacked_by,
                w.color(Color::White),
                list(Color::White),
                w.color(Color::Black),
                list(Color::Black)
            ),
        }
    }
}
