//! The engine's settings, validated (the config and the command line make them).

use shakmaty::Role;

use super::clock::{ClockSwitch, Pace, TimeControl};
use super::event::Millis;
use super::input::VoiceLevel;
use super::rules::{Mode, RuleProfile};
use crate::words::{Names, Phrases};

/// Everything the engine needs to know, validated.
#[derive(Clone, Debug)]
pub struct Settings {
    pub rules: RuleProfile,
    pub mode: Mode,
    /// A lift of a piece of the player not to move, put back, is its owner's adjustment, never
    /// a touch that binds the player to move to capture it (Art. 4.3b): on a shared board with a
    /// blind player, whose opponent straightens his own pieces. Off: every lift is the player to
    /// move's (the replay contract, docs/replay.md "Who acts").
    pub owner_adjusts: bool,
    pub debounce_ms: Millis,
    /// How long a sliding piece may rest on a square it could still be passing, and how long
    /// an illegally placed piece stands before the illegal move counts.
    pub settle_ms: Millis,
    pub mismatch_ms: Millis,
    /// Against the computer: the player's clock starts this long after the computer's move
    /// is announced, executed on the board or not (0: only when it stands there).
    pub execution_ms: Millis,
    pub promotion_ms: Millis,
    pub promotion_default: Role,
    pub time_control: Option<TimeControl>,
    /// Standard, rapid or blitz, as the config says (`game.kind`); `None`: by the time
    /// control, with the rule profile's limits (Appendix B1, C1), standard without one.
    pub kind: Option<Pace>,
    /// How a move is completed on the clock: at once (Appendix F2.3) or by a clock button
    /// (Art. 6.8).
    pub switch: ClockSwitch,
    /// What `time` tells of each clock: the time left, or the time used (F2.9d); the long
    /// style tells both.
    pub time_answer: TimeAnswer,
    /// A new game's clock stands until it is started (`start`).
    pub wait_for_start: bool,
    /// Time left at which a player is warned, largest first; `None`: by the mode (none in
    /// tournament mode, where Appendix F2.9d has the time told on request only; the default
    /// thresholds in casual mode).
    pub time_warnings_ms: Option<Vec<Millis>>,
    /// The speech rate and volume at start; `rate up` and the like change them.
    pub voice: VoiceLevel,
    /// What `help` says, when the keys and buttons configured should be told; default: the
    /// language's list of commands.
    pub help: Option<String>,
    /// The keypad's help a key at a time (`help key N`), the exploration's keys last; empty
    /// without a keypad.
    pub help_pages: Vec<String>,
    /// PGN tags of the games (Event, Round, White, Black and the like), from the config.
    pub pgn_tags: Vec<(String, String)>,
    pub phrases: Phrases,
}

/// What the `time` answer tells of each clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TimeAnswer {
    /// The time left.
    #[default]
    Remaining,
    /// The time used so far (Appendix F2.9d's words).
    Used,
}

impl TimeAnswer {
    pub const NAMES: Names<TimeAnswer> = Names {
        what: "time answer",
        table: &[
            (TimeAnswer::Remaining, "remaining"),
            (TimeAnswer::Used, "used"),
        ],
    };
}

crate::named!(TimeAnswer);

/// The default low-time warnings: 5 minutes, 1 minute, 10 seconds.
pub const TIME_WARNINGS_MS: [Millis; 3] = [300_000, 60_000, 10_000];

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rules: RuleProfile::default(),
            mode: Mode::Tournament,
            owner_adjusts: false,
            debounce_ms: 30,
            settle_ms: 300,
            mismatch_ms: 3000,
            execution_ms: 10_000,
            promotion_ms: 3000,
            promotion_default: Role::Queen,
            time_control: None,
            kind: None,
            switch: ClockSwitch::Auto,
            time_answer: TimeAnswer::Remaining,
            wait_for_start: false,
            time_warnings_ms: None,
            voice: VoiceLevel::default(),
            help: None,
            help_pages: Vec::new(),
            pgn_tags: Vec::new(),
            phrases: Phrases::new(Default::default(), Default::default(), Default::default()),
        }
    }
}

impl Settings {
    /// The low-time warnings in force: as set, else by the mode.
    pub fn warnings(&self) -> &[Millis] {
        match (&self.time_warnings_ms, self.mode) {
            (Some(v), _) => v,
            (None, Mode::Tournament) => &[],
            (None, Mode::Casual) => &TIME_WARNINGS_MS,
        }
    }
}
