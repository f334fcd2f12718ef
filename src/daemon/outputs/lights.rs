//! The boards' lights as an output: the last move, the squares to put right, and (for a board
//! that identifies pieces) the positions the game can explain.

use super::{Batch, Output};
use crate::board::serial::Show;
use crate::engine::{Event, EventKind};

/// Tells a board with lights what to show: the last move, the squares to put right.
#[derive(Clone, Default)]
pub struct Lights(pub(in crate::daemon) Option<std::sync::mpsc::Sender<Show>>);

impl Lights {
    /// The positions the game can explain (a board that identifies pieces learns from them
    /// which way round it reports its squares).
    pub fn positions(&self, positions: &[[u8; 64]]) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(Show::Positions(positions.to_vec()));
        }
    }

    /// What an event calls for on the board's lights.
    pub fn event(&self, kind: &EventKind) {
        let Some(tx) = &self.0 else { return };
        let sq = |s: Option<&str>| s.and_then(|s| s.parse::<shakmaty::Square>().ok());
        let show = match kind {
            EventKind::Move { uci, .. } => Show::Move(
                [sq(uci.get(0..2)), sq(uci.get(2..4))]
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            EventKind::Mismatch { missing, extra } => {
                Show::Fix(missing.iter().chain(extra).copied().collect())
            }
            // A correction's moves follow it (each shown in turn); a move withdrawn is not
            // shown any longer.
            EventKind::Restored { .. }
            | EventKind::GameStart { .. }
            | EventKind::Correction { .. } => Show::Nothing,
            _ => return,
        };
        let _ = tx.send(show);
    }
}

/// Every board's lights, by board index.
pub struct BoardLights {
    lights: Vec<Lights>,
    /// The position the boards were last told about.
    explained_for: Option<shakmaty::Chess>,
}

impl BoardLights {
    pub fn new(lights: Vec<Lights>) -> BoardLights {
        BoardLights {
            lights,
            explained_for: None,
        }
    }
}

impl Output for BoardLights {
    /// The boards learn which way round they stand from the game's position.
    fn batch(&mut self, batch: &mut Batch) {
        let pos = &batch.leader.game().pos;
        if self.explained_for.as_ref() != Some(pos) {
            self.explained_for = Some(pos.clone());
            let positions = crate::board::explained(pos);
            for l in &self.lights {
                l.positions(&positions);
            }
        }
    }

    fn event(&mut self, board: usize, event: &Event) {
        if let Some(l) = self.lights.get(board) {
            l.event(&event.kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Square;

    #[test]
    fn a_correction_puts_out_the_withdrawn_move_and_its_moves_are_shown() {
        let (tx, rx) = std::sync::mpsc::channel();
        let lights = Lights(Some(tx));
        let mv = |uci: &str| EventKind::Move {
            ply: 3,
            color: shakmaty::Color::White,
            uci: uci.into(),
            san: String::new(),
            fen: String::new(),
            say: String::new(),
            white_ms: None,
            black_ms: None,
            recovered: true,
            touch_checked: false,
            corrected: true,
        };
        lights.event(&mv("g1f3"));
        lights.event(&EventKind::Correction {
            ply: 3,
            withdrawn: vec!["Nf3".into()],
            rulings: vec![],
            say: String::new(),
        });
        lights.event(&mv("b1c3"));
        let shown: Vec<Show> = rx.try_iter().collect();
        assert_eq!(
            shown,
            [
                Show::Move(vec![Square::G1, Square::F3]),
                Show::Nothing,
                Show::Move(vec![Square::B1, Square::C3]),
            ]
        );
    }
}
