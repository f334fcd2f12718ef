//! The physical board as the sensors show it, after debouncing: a state per square (empty,
//! occupied, or which piece, on boards that identify pieces) and the occupancy.

use shakmaty::{Bitboard, Board, Color, Piece, Role, Square};

use super::debounce::Change;
use crate::engine::input::{SquareState, EMPTY, OCCUPIED};

/// The state code a board that identifies pieces reports for a piece.
pub fn piece_code(p: Piece) -> SquareState {
    let role = match p.role {
        Role::Pawn => 0,
        Role::Knight => 1,
        Role::Bishop => 2,
        Role::Rook => 3,
        Role::Queen => 4,
        Role::King => 5,
    };
    2 + role + if p.color == Color::White { 0 } else { 6 }
}

/// The piece behind a state code, for codes that name one.
pub fn code_piece(code: SquareState) -> Option<Piece> {
    if !(2..=13).contains(&code) {
        return None;
    }
    let c = code - 2;
    let color = if c < 6 { Color::White } else { Color::Black };
    let role = Role::ALL[usize::from(c % 6)];
    Some(Piece { color, role })
}

/// A square's state on a board found to name its pieces, where `board` was taken to stand: an
/// unknown piece is the piece `board` has there (and stays unknown where it has none).
pub fn named(board: &Board, sq: Square, state: SquareState) -> SquareState {
    if state == OCCUPIED {
        board.piece_at(sq).map_or(state, piece_code)
    } else {
        state
    }
}

/// The debounced board.
#[derive(Clone, Debug)]
pub struct Physical {
    states: [SquareState; 64],
    occ: Bitboard,
    /// The board has reported piece identities.
    ids: bool,
}

impl Default for Physical {
    fn default() -> Physical {
        Physical {
            states: [EMPTY; 64],
            occ: Bitboard::EMPTY,
            ids: false,
        }
    }
}

impl Physical {
    /// The occupied squares.
    pub fn occupied(&self) -> Bitboard {
        self.occ
    }

    /// The board identifies pieces.
    pub fn ids(&self) -> bool {
        self.ids
    }

    pub fn code(&self, sq: Square) -> SquareState {
        self.states[sq as usize]
    }

    /// The piece the board reports on `sq`, on a board that identifies pieces.
    pub fn piece(&self, sq: Square) -> Option<Piece> {
        code_piece(self.code(sq))
    }

    /// Takes a debounced change.
    pub fn apply(&mut self, c: &Change) {
        self.states[c.square as usize] = c.state;
        self.occ.set(c.square, c.state != EMPTY);
        if c.state >= 2 {
            self.ids = true;
        }
    }

    /// The states a board showing `board` reports.
    pub fn states_of(&self, board: &Board) -> [SquareState; 64] {
        let mut states = [EMPTY; 64];
        for (sq, p) in board.iter() {
            states[sq as usize] = if self.ids { piece_code(p) } else { OCCUPIED };
        }
        states
    }

    /// Takes the board to show `states` (until readings say otherwise).
    pub fn assume(&mut self, states: &[SquareState; 64]) {
        self.states = *states;
        self.ids |= states.iter().any(|s| *s >= 2);
        self.occ = states
            .iter()
            .enumerate()
            .filter(|(_, s)| **s != EMPTY)
            .map(|(i, _)| Square::new(i as u32))
            .collect();
    }

    /// The board names its pieces: a square taken as occupied by an unknown piece holds the
    /// piece `board` has there (see [`named`]).
    pub fn name_pieces(&mut self, board: &Board) {
        self.ids = true;
        for sq in Square::ALL {
            self.states[sq as usize] = named(board, sq, self.states[sq as usize]);
        }
    }

    /// The board shows exactly `board` (piece identities compared where reported).
    pub fn shows(&self, board: &Board) -> bool {
        self.occ == board.occupied() && self.wrong_pieces(board).is_empty()
    }

    /// Squares where the board reports another piece than `board` has.
    pub fn wrong_pieces(&self, board: &Board) -> Bitboard {
        if !self.ids {
            return Bitboard::EMPTY;
        }
        (board.occupied() & self.occ)
            .into_iter()
            .filter(|sq| {
                let code = self.code(*sq);
                code >= 2 && board.piece_at(*sq).map(piece_code) != Some(code)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_codes_round_trip() {
        for color in Color::ALL {
            for role in Role::ALL {
                let p = Piece { color, role };
                assert_eq!(code_piece(piece_code(p)), Some(p));
            }
        }
        assert_eq!(code_piece(EMPTY), None);
        assert_eq!(code_piece(OCCUPIED), None);
        assert_eq!(code_piece(14), None);
    }

    #[test]
    fn a_board_that_names_pieces_must_name_the_right_ones() {
        let mut phys = Physical::default();
        let start = Board::default();
        phys.assume(&[OCCUPIED; 64]);
        assert!(!phys.shows(&start), "all 64 occupied");
        phys.assume(&phys.states_of(&start));
        assert!(phys.shows(&start));
        phys.apply(&Change {
            t: 0,
            square: Square::E1,
            state: piece_code(Piece {
                color: Color::White,
                role: Role::Queen,
            }),
            whole: false,
        });
        assert!(phys.ids());
        assert_eq!(phys.wrong_pieces(&start), Bitboard::from_square(Square::E1));
        assert!(!phys.shows(&start));
    }
}
