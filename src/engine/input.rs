//! What goes into the engine: raw sensor readings, a board's link state, buttons and commands.

use shakmaty::{Color, File, Rank, Role, Square};

use super::event::Millis;

/// What a sensor says about one square: 0 = empty, 1 = occupied by an unknown piece,
/// 2..=13 = a known piece (see [`piece_code`](super::decoder::physical::piece_code)).
pub type SquareState = u8;

pub const EMPTY: SquareState = 0;
pub const OCCUPIED: SquareState = 1;

/// A raw sensor input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// One square's state.
    Square(Square, SquareState),
    /// The whole board at once. Its changes are simultaneous: no order is read into them.
    Frame(Box<[SquareState; 64]>),
}

impl Reading {
    /// A whole-board occupancy frame (bit 0 = a1 ... bit 63 = h8).
    pub fn occupancy(mask: u64) -> Reading {
        let mut states = [EMPTY; 64];
        for (i, s) in states.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *s = OCCUPIED;
            }
        }
        Reading::Frame(Box::new(states))
    }

    /// The reading names a piece (a board that identifies its pieces).
    pub fn names_pieces(&self) -> bool {
        match self {
            Reading::Square(_, state) => *state > OCCUPIED,
            Reading::Frame(states) => states.iter().any(|s| *s > OCCUPIED),
        }
    }
}

/// The state of a board's link, as its driver reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Not there yet at start-up: waited for.
    Waiting,
    Connected,
    Lost,
    /// Open, but the board has sent nothing for a while (3 s): hung, or not the board the
    /// driver speaks to. The port is opened again until it answers (`Reconnected`).
    Silent,
    Reconnected,
    /// The port is there but cannot be used: the daemon keeps trying.
    Unusable(PortError),
}

/// Why a board's port cannot be opened (a missing port is [`LinkState::Waiting`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PortError {
    /// No permission (EACCES): the daemon's user is not in the group `dialout`.
    NoPermission,
    /// Not a terminal (ENOTTY): the path is not a serial device.
    NotATty,
    /// Anything else (the log says what).
    Other,
}

impl LinkState {
    /// The name in the `link` event.
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Waiting => "waiting",
            LinkState::Connected => "connected",
            LinkState::Lost => "lost",
            LinkState::Silent => "silent",
            LinkState::Reconnected => "reconnected",
            LinkState::Unusable(PortError::NoPermission) => "no_permission",
            LinkState::Unusable(PortError::NotATty) => "not_a_tty",
            LinkState::Unusable(PortError::Other) => "port_error",
        }
    }

    /// Nobody hears the board in this state.
    pub fn is_down(self) -> bool {
        matches!(
            self,
            LinkState::Lost | LinkState::Silent | LinkState::Waiting | LinkState::Unusable(_)
        )
    }
}

/// A control input (docs/replay.md `press`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Button {
    Clock,
    Repeat,
    Time,
    Position,
    Moves,
    Promote(Role),
    Draw,
    Claim,
    Resign,
    Adjust,
    NewGame,
    Takeback,
    /// Appendix A1: the player to move seals his move (the 1997 and 2005 Laws).
    Adjourn,
    /// The clocks go on after a pause; an adjourned game resumes (A5, A9).
    Resume,
}

impl Button {
    /// Every button with its name in scripts and configs, in the order help lists them.
    pub const ALL: [(&'static str, Button); 17] = [
        ("clock", Button::Clock),
        ("repeat", Button::Repeat),
        ("time", Button::Time),
        ("position", Button::Position),
        ("moves", Button::Moves),
        ("promote-queen", Button::Promote(Role::Queen)),
        ("promote-rook", Button::Promote(Role::Rook)),
        ("promote-bishop", Button::Promote(Role::Bishop)),
        ("promote-knight", Button::Promote(Role::Knight)),
        ("draw", Button::Draw),
        ("claim", Button::Claim),
        ("resign", Button::Resign),
        ("adjust", Button::Adjust),
        ("new-game", Button::NewGame),
        ("takeback", Button::Takeback),
        ("adjourn", Button::Adjourn),
        ("resume", Button::Resume),
    ];

    /// The button's name (`promote-queen` for a promotion to anything but R, B, N).
    pub fn name(self) -> &'static str {
        let b = match self {
            Button::Promote(Role::Rook | Role::Bishop | Role::Knight) => self,
            Button::Promote(_) => Button::Promote(Role::Queen),
            b => b,
        };
        Button::ALL
            .iter()
            .find(|(_, x)| *x == b)
            .map_or("promote-queen", |(n, _)| n)
    }
}

impl std::str::FromStr for Button {
    type Err = String;
    fn from_str(s: &str) -> Result<Button, String> {
        Button::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, b)| *b)
            .ok_or_else(|| {
                let names: Vec<&str> = Button::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown button '{s}' (accepted: {})", names.join(", "))
            })
    }
}

/// A question or an order from the control socket, a keypad or the buttons (the names by which
/// they are given are `control::COMMANDS`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A question: answered aloud and to the asker.
    Ask(Query),
    /// Art. 6.13: the clocks stopped for the arbiter, and started again.
    Pause,
    Resume,
    /// Pause when the clocks run, resume when they stand (one key for both).
    TogglePause,
    /// Starts the clocks (a game that waits for its start, or after a pause).
    Start,
    /// A button; resign, new game and takeback want the same command again to confirm.
    Press(Button),
    /// Speech rate and volume.
    Voice(VoiceChange),
    /// Against the computer, casual play: the engine's best move, spoken.
    Hint,
    /// Against the computer, casual play: the position's score, in words.
    Evaluate,
    /// Against the computer, casual play: a new game, the colours swapped (wants the same
    /// command again to confirm, as a new game does).
    Switch,
    /// Stops the sentence being said, and the answers to questions waiting to be said (the
    /// whole position takes half a minute); moves and rulings are still said.
    Silence,
}

/// A question about the game. Every question, from a command or a button, is answered by
/// `Engine::ask`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Query {
    /// The last move again.
    Last,
    /// The last N moves.
    Moves(u32),
    /// F2.9d: moves made and both players' time; with `show_clock`, the clocks are also
    /// reported as they stand (a `clock` event).
    Time {
        show_clock: bool,
    },
    /// Whose move it is.
    Turn,
    /// The whole position, or one side's pieces, or the pieces of one kind.
    Position(Option<Color>, Option<Role>),
    Rank(Rank),
    File(File),
    Square(Square),
    Help(Help),
    /// Appendix F2.9 (e): the pieces the asker's opponent touched since the last move.
    Touches,
    /// The material balance in pawns (1, 3, 3, 5, 9) and the pieces captured.
    Material,
    /// Who plays: the asker's opponent, or both (name, title and rating from `[game]`; the
    /// computer by its name).
    Players,
    /// Move number N of the game: White's and Black's.
    MoveNumber(u32),
    /// Exploring the board square by square (the keypad's compass); never touches the game.
    Look(Look),
}

/// What of the help is said: the whole of it, or the keypad's keys one at a time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Help {
    /// The commands, and what each key and button does.
    All,
    /// How to walk the keys, then the first key.
    Walk,
    /// Key N of the walk (1 the first; past the last, the end of the keys).
    Key(u32),
    /// The walk left.
    End,
}

/// A step of the board's exploration: a cursor that starts on the last move's square.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Look {
    /// Begins exploring, or ends it.
    Toggle,
    /// One square in a direction.
    Step(Dir),
    /// Along a direction to the next piece.
    Jump(Dir),
    /// Who defends and who attacks the square.
    Guard,
    /// Straight to a square.
    Go(Square),
    /// The legal moves of the piece on the cursor's square (the last move's square when the
    /// board is not explored: the piece moved last).
    Legal,
}

/// One of the eight directions of the board, as White sees it: files right, ranks up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dir {
    pub files: i8,
    pub ranks: i8,
}

impl Dir {
    /// The directions by name (`up` is towards rank 8, `right` towards the h-file).
    pub const NAMES: [(&'static str, Dir); 8] = [
        ("up", Dir { files: 0, ranks: 1 }),
        (
            "down",
            Dir {
                files: 0,
                ranks: -1,
            },
        ),
        (
            "left",
            Dir {
                files: -1,
                ranks: 0,
            },
        ),
        ("right", Dir { files: 1, ranks: 0 }),
        (
            "up-left",
            Dir {
                files: -1,
                ranks: 1,
            },
        ),
        ("up-right", Dir { files: 1, ranks: 1 }),
        (
            "down-left",
            Dir {
                files: -1,
                ranks: -1,
            },
        ),
        (
            "down-right",
            Dir {
                files: 1,
                ranks: -1,
            },
        ),
    ];

    /// The square one step from `sq` this way, if it is on the board.
    pub fn from(self, sq: Square) -> Option<Square> {
        let f = i32::from(u8::from(sq.file())) + i32::from(self.files);
        let r = i32::from(u8::from(sq.rank())) + i32::from(self.ranks);
        ((0..8).contains(&f) && (0..8).contains(&r))
            .then(|| Square::from_coords(File::new(f as u32), Rank::new(r as u32)))
    }
}

impl Button {
    /// The question a button asks, if it asks one.
    pub fn query(self) -> Option<Query> {
        Some(match self {
            Button::Repeat => Query::Last,
            Button::Time => Query::Time { show_clock: true },
            Button::Moves => Query::Time { show_clock: false },
            Button::Position => Query::Position(None, None),
            _ => return None,
        })
    }
}

/// How long a confirmation (the same command again) is waited for.
pub const CONFIRM_MS: Millis = 5000;

/// The speech rate (words a minute) and volume (percent of normal).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VoiceLevel {
    pub rate: u32,
    pub volume: u32,
}

impl VoiceLevel {
    pub const RATES: std::ops::RangeInclusive<u32> = 80..=450;
    pub const VOLUMES: std::ops::RangeInclusive<u32> = 10..=200;
    pub const RATE_STEP: u32 = 25;
    pub const VOLUME_STEP: u32 = 10;

    /// The level after `change`, within the limits.
    pub fn changed(self, change: VoiceChange) -> VoiceLevel {
        let (rate, volume) = match change {
            VoiceChange::Faster => (self.rate + Self::RATE_STEP, self.volume),
            VoiceChange::Slower => (self.rate.saturating_sub(Self::RATE_STEP), self.volume),
            VoiceChange::Louder => (self.rate, self.volume + Self::VOLUME_STEP),
            VoiceChange::Quieter => (self.rate, self.volume.saturating_sub(Self::VOLUME_STEP)),
        };
        VoiceLevel {
            rate: rate.clamp(*Self::RATES.start(), *Self::RATES.end()),
            volume: volume.clamp(*Self::VOLUMES.start(), *Self::VOLUMES.end()),
        }
    }
}

impl Default for VoiceLevel {
    fn default() -> VoiceLevel {
        VoiceLevel {
            rate: 175,
            volume: 100,
        }
    }
}

/// A change of the voice asked for by a command.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VoiceChange {
    Faster,
    Slower,
    Louder,
    Quieter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_button_is_read_back_from_its_name() {
        for (name, b) in Button::ALL {
            assert_eq!(name.parse::<Button>(), Ok(b));
            assert_eq!(b.name(), name);
        }
        assert_eq!(Button::Promote(Role::King).name(), "promote-queen");
        let err = "hooray".parse::<Button>().unwrap_err();
        assert!(err.contains("accepted: clock, repeat"), "{err}");
    }
}
