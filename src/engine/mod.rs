//! The pure core: no I/O, no wall clock. Timestamped readings and button presses go in, game
//! events come out. The live daemon and `chessboardd replay` both drive this engine.
//!
//! How a reading becomes an event, layer by layer (each file imports only its own layer's
//! files, without a cycle, or those below; `tests/layers.rs` checks it):
//!
//! 1. The vocabulary: [`event`] (what comes out), [`input`] (what comes in: readings, link
//!    states, buttons, commands), [`settings`], [`rules`] (the editions as data), [`clock`],
//!    [`dead`] (dead positions, Art. 5.2b, 9.6).
//! 2. [`decoder`]: the reading of the board, legality only: the debouncer, the debounced board,
//!    the observation log, which legal moves the board shows, and the stories of legal moves
//!    that explain readings seen late, lost, or not at all.
//! 3. [`game`] (the record and PGN), [`turn`] (the pieces the player to move has touched, what
//!    he is bound to), [`touch`] (Art. 4.3-4.5 as a function of the touches).
//! 4. [`arbiter`]: the [`Engine`]'s state, its named phases and its inputs.
//! 5. The arbiter's concerns over that state, one a file: [`reading`] (each batch of changes
//!    read: moves, touches, what the board shows), [`holds`] (what it holds back a moment, and
//!    settles), [`recovery`] and [`revise`] (moves read from the board afterwards, and the
//!    corrections when later readings tell another story), [`rulings`] (touch-move, illegal
//!    moves, claims, the end), [`takeback`], [`timers`] (what falls due, low-time warnings),
//!    [`answers`] (buttons and questions), [`adjourn`] (an adjourned game's sealed move,
//!    Appendix A), [`explore`] (the keypad's cursor over the board), [`announce`] (what is
//!    said besides moves), [`games`] (new, resumed, followed), [`computer`] (a game against
//!    the computer: its requests and answers).
//! 6. [`table`]: one game on two boards.

pub mod adjourn;
pub mod announce;
pub mod answers;
pub mod arbiter;
pub mod clock;
pub mod computer;
pub mod dead;
pub mod decoder;
pub mod event;
pub mod explore;
pub mod game;
pub mod games;
pub mod holds;
pub mod input;
pub mod reading;
pub mod recovery;
pub mod revise;
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
pub use decoder::{debounce, physical, recognise};
pub use event::{Event, EventKind, Millis, Priority};
pub use game::Envelope;
pub use games::Resumed;
pub use input::{
    Button, Command, Dir, Help, LinkState, Look, PortError, Query, Reading, VoiceChange,
    VoiceLevel, CONFIRM_MS,
};
pub use physical::{code_piece, piece_code};
pub use settings::{Settings, TIME_WARNINGS_MS};
