//! One board's settings: a `[board]` table, or one of the `[[board]]` tables.

use shakmaty::Color;

use crate::board::{BoardSpec, LinkSettings};
use crate::speech::speaker::SpeechConfig;

/// One board: its name, who plays on it, how it is read, and what its player hears.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardSettings {
    /// `board` for the only one; with several, `board.name` (default `boardN`): the replay's
    /// `BOARD:` prefix and the events' `board`.
    pub name: String,
    /// Who plays on this board (`None`: both, one shared board).
    pub player: Option<Color>,
    /// The driver and port, when given.
    pub spec: Option<BoardSpec>,
    /// How a serial board's link is read (orientation, DGT settle).
    pub link: LinkSettings,
    /// This board's player's sound card, when he has his own.
    pub device: Option<String>,
    /// Whether this board's player hears his own moves (`None`: as `[announce]`).
    pub own_moves: Option<bool>,
    /// Whether this board's player hears his opponent's moves (`None`: as `[announce]`).
    pub opponent_moves: Option<bool>,
}

impl Default for BoardSettings {
    fn default() -> BoardSettings {
        BoardSettings {
            name: "board".to_string(),
            player: None,
            spec: None,
            link: LinkSettings::default(),
            device: None,
            own_moves: None,
            opponent_moves: None,
        }
    }
}

impl BoardSettings {
    /// The speech of this board's player when there are several boards: `speech` as he hears
    /// it (his side, his sound card, his own and his opponent's moves).
    pub fn speech_of_player(&self, speech: &SpeechConfig) -> SpeechConfig {
        let mut sc = speech.clone();
        sc.announce.listener = self.player;
        if let Some(d) = self.device.clone() {
            sc.device = Some(d);
        }
        sc.announce.own_moves = self.own_moves.unwrap_or(sc.announce.own_moves);
        sc.announce.opponent_moves = self.opponent_moves.unwrap_or(sc.announce.opponent_moves);
        sc
    }
}
