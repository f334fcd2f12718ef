//! The controls: one command language (`time`, `moves 5`, `square e4`, ...) for three input
//! paths. The control socket (a Unix domain socket, one command a line, one JSON answer a line;
//! `chessboardd ctl` is its client), a USB keypad or keyboard ([`keypad`]), and buttons on GPIO
//! lines ([`buttons`]). Keys and buttons are mapped to commands by [`keys::KeyMap`].

pub mod buttons;
pub mod keypad;
pub mod keys;
pub mod socket;

use std::str::FromStr;

use shakmaty::{Color, File, Rank, Role, Square};

use crate::engine::Command;
use crate::engine::{Button, VoiceChange};

/// The command names, for help and errors.
pub const COMMANDS: &str =
    "last, moves N, time, turn, position [white|black] [PIECE], rank N, file X, \
square SQ, promote PIECE, draw, claim, resign, adjust, pause, resume, new-game, takeback, help, \
clock, start, toggle-pause, rate up|down, volume up|down";

/// Every command's name, in the order of the spoken names (`[speech.words] commands`).
pub const COMMAND_NAMES: [&str; crate::words::COMMAND_COUNT] = [
    "last",
    "moves",
    "time",
    "turn",
    "position",
    "rank",
    "file",
    "square",
    "promote",
    "draw",
    "claim",
    "resign",
    "adjust",
    "pause",
    "resume",
    "new-game",
    "takeback",
    "help",
    "clock",
    "start",
    "toggle-pause",
    "rate up",
    "rate down",
    "volume up",
    "volume down",
];

fn role(s: &str) -> Option<Role> {
    Some(match s.to_ascii_lowercase().as_str() {
        "k" | "king" => Role::King,
        "q" | "queen" => Role::Queen,
        "r" | "rook" => Role::Rook,
        "b" | "bishop" => Role::Bishop,
        "n" | "knight" => Role::Knight,
        "p" | "pawn" => Role::Pawn,
        _ => return None,
    })
}

/// A command line as the socket takes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Parsed(pub Command);

impl FromStr for Parsed {
    type Err = String;
    fn from_str(line: &str) -> Result<Parsed, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (name, args) = words.split_first().ok_or("an empty command")?;
        let arg = |i: usize| args.get(i).copied();
        let bad = |what: &str| format!("{name}: {what} (commands: {COMMANDS})");
        let cmd = match (*name, args.len()) {
            ("last", 0) => Command::Last,
            ("moves", 0) => Command::Moves(1),
            ("moves", 1) => Command::Moves(
                arg(0)
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad("N must be a number above 0"))?,
            ),
            ("time", 0) => Command::Time,
            ("turn", 0) => Command::Turn,
            ("position", n) if n <= 2 => {
                let mut color = None;
                let mut piece = None;
                for a in args {
                    match *a {
                        side if side.parse::<Color>().is_ok() => color = side.parse().ok(),
                        other => {
                            piece =
                                Some(role(other).ok_or_else(|| bad("neither a side nor a piece"))?)
                        }
                    }
                }
                Command::Position(color, piece)
            }
            ("rank", 1) => Command::Rank(
                arg(0)
                    .and_then(|r| r.parse::<u32>().ok())
                    .filter(|r| (1..=8).contains(r))
                    .map(|r| Rank::new(r - 1))
                    .ok_or_else(|| bad("the rank is 1 to 8"))?,
            ),
            ("file", 1) => Command::File(
                arg(0)
                    .and_then(|f| f.chars().next().filter(|_| f.len() == 1))
                    .and_then(|c| File::from_char(c.to_ascii_lowercase()))
                    .ok_or_else(|| bad("the file is a to h"))?,
            ),
            ("square", 1) => Command::Square(
                arg(0)
                    .and_then(|s| s.parse::<Square>().ok())
                    .ok_or_else(|| bad("a square is a1 to h8"))?,
            ),
            ("promote", 1) => match arg(0).and_then(role) {
                Some(r @ (Role::Queen | Role::Rook | Role::Bishop | Role::Knight)) => {
                    Command::Press(Button::Promote(r))
                }
                _ => return Err(bad("the piece is queen, rook, bishop or knight")),
            },
            ("draw", 0) => Command::Press(Button::Draw),
            ("claim", 0) => Command::Press(Button::Claim),
            ("resign", 0) => Command::Press(Button::Resign),
            ("adjust", 0) => Command::Press(Button::Adjust),
            ("pause", 0) => Command::Pause,
            ("resume", 0) => Command::Resume,
            ("new-game", 0) => Command::Press(Button::NewGame),
            ("takeback", 0) => Command::Press(Button::Takeback),
            ("help", 0) => Command::Help,
            ("clock", 0) => Command::Press(Button::Clock),
            ("start", 0) => Command::Start,
            ("toggle-pause", 0) => Command::TogglePause,
            ("rate", 1) => match arg(0) {
                Some("up") => Command::Voice(VoiceChange::Faster),
                Some("down") => Command::Voice(VoiceChange::Slower),
                _ => return Err(bad("up or down")),
            },
            ("volume", 1) => match arg(0) {
                Some("up") => Command::Voice(VoiceChange::Louder),
                Some("down") => Command::Voice(VoiceChange::Quieter),
                _ => return Err(bad("up or down")),
            },
            (
                "last" | "moves" | "time" | "turn" | "position" | "rank" | "file" | "square"
                | "promote" | "draw" | "claim" | "resign" | "adjust" | "pause" | "resume"
                | "new-game" | "takeback" | "help" | "clock" | "start" | "toggle-pause" | "rate"
                | "volume",
                _,
            ) => return Err(bad("wrong number of arguments")),
            // What the client sent is not repeated (it may be long, or made to mislead).
            _ => return Err(format!("unknown command (commands: {COMMANDS})")),
        };
        Ok(Parsed(cmd))
    }
}

/// Whether `name` is the name of a command (the first word of a command line).
fn known(name: &str) -> bool {
    COMMAND_NAMES
        .iter()
        .any(|c| c.split(' ').next() == Some(name))
}

/// The JSON answer to a command line whose first word is `command`. An answer never repeats
/// what the client sent: an unknown command's name is left out.
pub fn answer(command: &str, result: Result<String, String>) -> String {
    let v = match result {
        Ok(text) => serde_json::json!({"ok": true, "command": command, "text": text}),
        Err(error) if known(command) => {
            serde_json::json!({"ok": false, "command": command, "error": error, "text": error})
        }
        Err(error) => serde_json::json!({"ok": false, "error": error, "text": error}),
    };
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Command, String> {
        s.parse::<Parsed>().map(|p| p.0)
    }

    #[test]
    fn every_command_parses() {
        assert_eq!(p("last"), Ok(Command::Last));
        assert_eq!(p("moves 5"), Ok(Command::Moves(5)));
        assert_eq!(
            p("position white N"),
            Ok(Command::Position(Some(Color::White), Some(Role::Knight)))
        );
        assert_eq!(p("position"), Ok(Command::Position(None, None)));
        assert_eq!(p("rank 4"), Ok(Command::Rank(Rank::Fourth)));
        assert_eq!(p("file e"), Ok(Command::File(File::E)));
        assert_eq!(p("square e4"), Ok(Command::Square(Square::E4)));
        assert_eq!(
            p("promote knight"),
            Ok(Command::Press(Button::Promote(Role::Knight)))
        );
        for (c, b) in [
            ("draw", Button::Draw),
            ("claim", Button::Claim),
            ("resign", Button::Resign),
            ("adjust", Button::Adjust),
            ("new-game", Button::NewGame),
            ("takeback", Button::Takeback),
        ] {
            assert_eq!(p(c), Ok(Command::Press(b)));
        }
        assert_eq!(p("pause"), Ok(Command::Pause));
        assert_eq!(p("help"), Ok(Command::Help));
        assert_eq!(p("clock"), Ok(Command::Press(Button::Clock)));
        assert_eq!(p("start"), Ok(Command::Start));
        assert_eq!(p("toggle-pause"), Ok(Command::TogglePause));
        assert_eq!(p("rate up"), Ok(Command::Voice(VoiceChange::Faster)));
        assert_eq!(p("rate down"), Ok(Command::Voice(VoiceChange::Slower)));
        assert_eq!(p("volume up"), Ok(Command::Voice(VoiceChange::Louder)));
        assert_eq!(p("volume down"), Ok(Command::Voice(VoiceChange::Quieter)));
        // Every name of the spoken list is a command.
        for name in COMMAND_NAMES {
            let line = match name {
                "moves" => "moves 3",
                "rank" => "rank 1",
                "file" => "file a",
                "square" => "square e4",
                "promote" => "promote queen",
                n => n,
            };
            assert!(p(line).is_ok(), "{line}");
        }
        for bad in [
            "",
            "jump",
            "moves x",
            "moves 0",
            "rank 9",
            "file z",
            "square z9",
            "promote king",
            "time now",
            "position green",
            "rate",
            "rate sideways",
            "volume 3",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_error_answer_does_not_repeat_the_line() {
        for line in [
            "\u{1b}[2Jrm -rf / please",
            "position green",
            "moves lots-and-lots",
            "square <script>",
        ] {
            let name = line.split_whitespace().next().unwrap();
            let a = answer(name, line.parse::<Parsed>().map(|_| String::new()));
            let v: serde_json::Value = serde_json::from_str(&a).unwrap();
            assert_eq!(v["ok"], false, "{a}");
            for word in line.split_whitespace().filter(|w| !known(w)) {
                assert!(!a.contains(word), "{line}: {a}");
            }
        }
        // A known command's errors still name it.
        let a = answer("rank", "rank 9".parse::<Parsed>().map(|_| String::new()));
        assert!(a.contains("\"command\":\"rank\""), "{a}");
    }
}
