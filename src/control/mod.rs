//! The controls: one command language (`time`, `moves 5`, `square e4`, ...) for three input
//! paths. The control socket (a Unix domain socket, one command a line, one JSON answer a line;
//! `chessboardd ctl` is its client), a USB keypad or keyboard ([`keypad`]), and buttons on GPIO
//! lines ([`buttons`]). Keys and buttons are mapped to command lines by [`keys::KeyMap`].
//!
//! The language is one table, [`COMMANDS`]: a row per command (its name, its arguments and the
//! engine command they make, the key of its spoken name). Parsing, the help list, the errors and
//! the spoken names of keys all come from it.

pub mod buttons;
mod command;
pub mod keypad;
pub mod keys;
pub mod settings;
pub mod socket;

use std::str::FromStr;

use crate::engine::Command;
pub use command::{known, parse, usage, Args, Spec, COMMANDS, COMMAND_NAMES};

/// A command line as the socket takes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Parsed(pub Command);

impl FromStr for Parsed {
    type Err = String;
    fn from_str(line: &str) -> Result<Parsed, String> {
        parse(line).map(Parsed)
    }
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
    use crate::engine::{Button, Help, Query, VoiceChange};
    use shakmaty::{Color, File, Rank, Role, Square};

    fn p(s: &str) -> Result<Command, String> {
        s.parse::<Parsed>().map(|p| p.0)
    }

    #[test]
    fn every_command_parses() {
        assert_eq!(p("last"), Ok(Command::Ask(Query::Last)));
        assert_eq!(p("moves 5"), Ok(Command::Ask(Query::Moves(5))));
        assert_eq!(
            p("position white N"),
            Ok(Command::Ask(Query::Position(
                Some(Color::White),
                Some(Role::Knight)
            )))
        );
        assert_eq!(p("position"), Ok(Command::Ask(Query::Position(None, None))));
        assert_eq!(p("rank 4"), Ok(Command::Ask(Query::Rank(Rank::Fourth))));
        assert_eq!(p("file e"), Ok(Command::Ask(Query::File(File::E))));
        assert_eq!(p("square e4"), Ok(Command::Ask(Query::Square(Square::E4))));
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
        assert_eq!(p("help"), Ok(Command::Ask(Query::Help(Help::All))));
        assert_eq!(p("help key 3"), Ok(Command::Ask(Query::Help(Help::Key(3)))));
        assert_eq!(p("help keys"), Ok(Command::Ask(Query::Help(Help::Walk))));
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
                "step" => "step up",
                "jump" => "jump down-left",
                "go" => "go e4",
                n => n,
            };
            assert!(p(line).is_ok(), "{line}");
        }
        for bad in [
            "",
            "fly",
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
