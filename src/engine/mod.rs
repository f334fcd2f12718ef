//! The pure core: no I/O, no wall clock. Timestamped readings and button presses go in, game
//! events come out. The live daemon and `chessboardd replay` both drive this engine.
//!
//! How a reading becomes an event:
//!
//! - [`input`]: what comes in (readings, link states, buttons, commands); [`settings`].
//! - [`debounce`]: a square's change counts once it has held for the debounce time; changes
//!   read at the same moment (a whole-board frame) come out together.
//! - [`physical`]: the debounced board (occupancy, piece identities where the board has them).
//! - [`turn`]: what the board did since the last agreed position, and the pieces touched.
//! - [`recognise`]: which legal moves the board shows, unfinished and illegal moves, and the
//!   short sequences of moves that explain a board the engine did not see change step by step.
//! - [`arbiter`]: the [`Engine`]: its named phases and one transition per input. [`holds`]
//!   (what it holds back a moment, and settles), [`recovery`] (moves read from the board
//!   afterwards), [`games`] (new, resumed, followed), [`rulings`] (touch-move, illegal moves,
//!   claims, the end), [`takeback`], [`timers`] (what falls due, low-time warnings), [`answers`]
//!   (buttons and questions), [`announce`] (what is said besides moves).
//! - [`touch`]: Art. 4.3-4.5 as a function of the touches; [`rules`]: the editions as data;
//!   [`clock`]; [`game`]: the record and PGN; [`dead`]: dead positions (Art. 5.2b, 9.6);
//!   [`table`]: one game on two boards; [`event`]: what comes out; [`computer`]: a game
//!   against the computer (a UCI engine the daemon runs), its requests and answers.

pub mod announce;
pub mod answers;
pub mod arbiter;
pub mod clock;
pub mod computer;
pub mod dead;
pub mod debounce;
pub mod event;
pub mod game;
pub mod games;
pub mod holds;
pub mod input;
pub mod physical;
pub mod recognise;
pub mod recovery;
pub mod rules;
pub mod rulings;
pub mod settings;
pub mod table;
pub mod takeback;
pub mod timers;
pub mod touch;
pub mod turn;

pub use arbiter::Engine;
pub use computer::{Asked, ComputerAnswer, ComputerRequest, PositionKey, UciClocks};
pub use event::{Event, EventKind, Millis, Priority};
pub use games::Resumed;
pub use input::{
    Button, Command, LinkState, PortError, Query, Reading, VoiceChange, VoiceLevel, CONFIRM_MS,
};
pub use physical::{code_piece, piece_code};
pub use settings::{Settings, TIME_WARNINGS_MS};
