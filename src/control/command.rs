//! The command language, defined once: [`COMMANDS`] has one row per command, and the socket's
//! parser, the help list, the errors' list of accepted commands, the spoken names of keys and
//! buttons all come from it.
//!
//! Adding a command is one row here, one arm where the engine carries it out
//! (`engine::answers`), and its spoken name in each language (the row's `words` key).

use shakmaty::{Color, File, Rank, Role, Square};

use crate::engine::{Button, Command, Dir, Help, Look, Query, VoiceChange};

/// One command: how it is written, what follows its name, how it is spoken, what it does.
#[derive(Copy, Clone, Debug)]
pub struct Spec {
    /// The words a command line begins with: its name, and a fixed argument if the row has one
    /// ("rate up" and "rate down" are two rows of the command `rate`).
    pub name: &'static str,
    /// The arguments that follow, and the engine command made of them.
    pub args: Args,
    /// The key of its spoken name (`[speech.words] commands`).
    pub words: &'static str,
}

/// The arguments a command takes after its name, each with the engine command it makes.
#[derive(Copy, Clone, Debug)]
pub enum Args {
    /// None: the command is always this one.
    None(Command),
    /// `N`, a number above 0; 1 when left out.
    Count(fn(u32) -> Command),
    /// `[white|black] [PIECE]`, both optional, in either order.
    Side(fn(Option<Color>, Option<Role>) -> Command),
    /// `N`, a rank 1 to 8.
    Rank(fn(Rank) -> Command),
    /// `X`, a file a to h.
    File(fn(File) -> Command),
    /// `SQ`, a square a1 to h8.
    Square(fn(Square) -> Command),
    /// `PIECE`, a piece a pawn may become.
    Promotion(fn(Role) -> Command),
    /// `DIR`, a direction: up, down, left, right, up-left, up-right, down-left, down-right.
    Direction(fn(Dir) -> Command),
}

impl Args {
    /// How the arguments are shown in the help (" N"), after the name.
    fn usage(self) -> &'static str {
        match self {
            Args::None(_) => "",
            Args::Count(_) | Args::Rank(_) => " N",
            Args::Side(_) => " [white|black] [PIECE]",
            Args::File(_) => " X",
            Args::Square(_) => " SQ",
            Args::Promotion(_) => " PIECE",
            Args::Direction(_) => " DIR",
        }
    }

    /// How many arguments it takes, at least and at most.
    fn count(self) -> (usize, usize) {
        match self {
            Args::None(_) => (0, 0),
            Args::Count(_) => (0, 1),
            Args::Side(_) => (0, 2),
            Args::Rank(_)
            | Args::File(_)
            | Args::Square(_)
            | Args::Promotion(_)
            | Args::Direction(_) => (1, 1),
        }
    }

    /// The command the arguments make, or what is wrong with them (their number is right).
    fn parse(self, args: &[&str]) -> Result<Command, &'static str> {
        let arg = args.first().copied();
        match self {
            Args::None(c) => Ok(c),
            Args::Count(make) => match arg {
                None => Ok(make(1)),
                Some(n) => n
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .map(make)
                    .ok_or("N must be a number above 0"),
            },
            Args::Side(make) => {
                let mut color = None;
                let mut piece = None;
                for a in args {
                    match *a {
                        side if side.parse::<Color>().is_ok() => color = side.parse().ok(),
                        other => piece = Some(role(other).ok_or("neither a side nor a piece")?),
                    }
                }
                Ok(make(color, piece))
            }
            Args::Rank(make) => arg
                .and_then(|r| r.parse::<u32>().ok())
                .filter(|r| (1..=8).contains(r))
                .map(|r| make(Rank::new(r - 1)))
                .ok_or("the rank is 1 to 8"),
            Args::File(make) => arg
                .and_then(|f| f.chars().next().filter(|_| f.len() == 1))
                .and_then(|c| File::from_char(c.to_ascii_lowercase()))
                .map(make)
                .ok_or("the file is a to h"),
            Args::Square(make) => arg
                .and_then(|s| s.parse::<Square>().ok())
                .map(make)
                .ok_or("a square is a1 to h8"),
            Args::Promotion(make) => match arg.and_then(role) {
                Some(r @ (Role::Queen | Role::Rook | Role::Bishop | Role::Knight)) => Ok(make(r)),
                _ => Err("the piece is queen, rook, bishop or knight"),
            },
            Args::Direction(make) => Dir::NAMES
                .iter()
                .find(|(n, _)| arg.is_some_and(|a| a.eq_ignore_ascii_case(n)))
                .map(|&(_, d)| make(d))
                .ok_or(
                    "the direction is up, down, left, right, up-left, up-right, down-left or \
                     down-right",
                ),
        }
    }
}

/// A row whose spoken name's key is its name.
const fn row(name: &'static str, args: Args) -> Spec {
    Spec {
        name,
        args,
        words: name,
    }
}

/// A row without arguments that presses a button.
const fn press(name: &'static str, button: Button) -> Spec {
    row(name, Args::None(Command::Press(button)))
}

/// A row without arguments that asks a question.
const fn ask(name: &'static str, query: Query) -> Spec {
    row(name, Args::None(Command::Ask(query)))
}

/// Every command, in the order help lists them and the languages' spoken names follow.
pub const COMMANDS: &[Spec] = &[
    ask("last", Query::Last),
    row("moves", Args::Count(|n| Command::Ask(Query::Moves(n)))),
    ask("time", Query::Time { show_clock: false }),
    ask("turn", Query::Turn),
    row(
        "position",
        Args::Side(|c, r| Command::Ask(Query::Position(c, r))),
    ),
    row("rank", Args::Rank(|r| Command::Ask(Query::Rank(r)))),
    row("file", Args::File(|f| Command::Ask(Query::File(f)))),
    row("square", Args::Square(|s| Command::Ask(Query::Square(s)))),
    row(
        "promote",
        Args::Promotion(|r| Command::Press(Button::Promote(r))),
    ),
    press("draw", Button::Draw),
    press("claim", Button::Claim),
    press("resign", Button::Resign),
    press("adjust", Button::Adjust),
    row("pause", Args::None(Command::Pause)),
    row("resume", Args::None(Command::Resume)),
    press("adjourn", Button::Adjourn),
    press("new-game", Button::NewGame),
    press("takeback", Button::Takeback),
    ask("help", Query::Help(Help::All)),
    ask("help keys", Query::Help(Help::Walk)),
    row(
        "help key",
        Args::Count(|n| Command::Ask(Query::Help(Help::Key(n)))),
    ),
    ask("help end", Query::Help(Help::End)),
    press("clock", Button::Clock),
    row("start", Args::None(Command::Start)),
    row("toggle-pause", Args::None(Command::TogglePause)),
    row("rate up", Args::None(Command::Voice(VoiceChange::Faster))),
    row("rate down", Args::None(Command::Voice(VoiceChange::Slower))),
    row("volume up", Args::None(Command::Voice(VoiceChange::Louder))),
    row(
        "volume down",
        Args::None(Command::Voice(VoiceChange::Quieter)),
    ),
    row("hint", Args::None(Command::Hint)),
    row("evaluate", Args::None(Command::Evaluate)),
    row("switch", Args::None(Command::Switch)),
    row("silence", Args::None(Command::Silence)),
    ask("explore", Query::Look(Look::Toggle)),
    row(
        "step",
        Args::Direction(|d| Command::Ask(Query::Look(Look::Step(d)))),
    ),
    row(
        "jump",
        Args::Direction(|d| Command::Ask(Query::Look(Look::Jump(d)))),
    ),
    ask("guard", Query::Look(Look::Guard)),
    row(
        "go",
        Args::Square(|s| Command::Ask(Query::Look(Look::Go(s)))),
    ),
    ask("touches", Query::Touches),
    ask("legal", Query::Look(Look::Legal)),
    ask("material", Query::Material),
    ask("players", Query::Players),
    row("move", Args::Count(|n| Command::Ask(Query::MoveNumber(n)))),
];

// One spoken name for each command.
const _: () = assert!(COMMANDS.len() == crate::words::COMMAND_COUNT);

/// Every command's words key, in the order of the spoken names (`[speech.words] commands`,
/// one for each row of the table).
pub const COMMAND_NAMES: [&str; crate::words::COMMAND_COUNT] = {
    let mut names = [""; crate::words::COMMAND_COUNT];
    let mut i = 0;
    while i < COMMANDS.len() {
        names[i] = COMMANDS[i].words;
        i += 1;
    }
    names
};

impl Spec {
    /// The command's first word ("rate" of "rate up").
    pub fn first_word(&self) -> &'static str {
        self.name.split(' ').next().unwrap_or(self.name)
    }

    /// The fixed words after the first (`["up"]` of "rate up").
    fn fixed(&self) -> impl Iterator<Item = &'static str> {
        self.name.split(' ').skip(1)
    }
}

/// The commands as help and errors list them: "last, moves N, ..., rate up|down, ...,
/// help [keys|key N|end], ...". Rows of one command are told together.
pub fn usage() -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = COMMANDS;
    while let Some(first) = rest.first() {
        let word = first.first_word();
        let n = rest.iter().take_while(|c| c.first_word() == word).count();
        let (group, after) = rest.split_at(n);
        rest = after;
        // What follows the command's name in a row: "up", "key N".
        let tail = |c: &Spec| {
            let fixed: Vec<&str> = c.fixed().collect();
            format!("{}{}", fixed.join(" "), c.args.usage())
        };
        let tails = |rows: &[Spec]| rows.iter().map(tail).collect::<Vec<_>>().join("|");
        parts.push(match group {
            [one] => format!("{}{}", one.name, one.args.usage()),
            // A row of the name alone, and rows with more words: these optional.
            [bare, more @ ..] if bare.fixed().next().is_none() => {
                format!("{word}{} [{}]", bare.args.usage(), tails(more))
            }
            all => format!("{word} {}", tails(all)),
        });
    }
    parts.join(", ")
}

/// Whether `name` is the name of a command (the first word of a command line).
pub fn known(name: &str) -> bool {
    COMMANDS.iter().any(|c| c.first_word() == name)
}

/// The command a line gives, or what is wrong with it (never repeating more of the line than
/// a command's name).
pub fn parse(line: &str) -> Result<Command, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (name, _) = words.split_first().ok_or("an empty command")?;
    let bad = |what: &str| format!("{name}: {what} (commands: {})", usage());
    let mut rows: Vec<&Spec> = COMMANDS
        .iter()
        .filter(|c| c.first_word() == *name)
        .collect();
    // The row with the most fixed words that match is the one ("help key 3" before "help").
    rows.sort_by_key(|c| std::cmp::Reverse(c.fixed().count()));
    if rows.is_empty() {
        // What the client sent is not repeated (it may be long, or made to mislead).
        return Err(format!("unknown command (commands: {})", usage()));
    }
    for spec in &rows {
        let fixed: Vec<&str> = spec.fixed().collect();
        if words.len() > fixed.len() && words[1..=fixed.len()] == fixed[..] {
            let args = &words[1 + fixed.len()..];
            let (least, most) = spec.args.count();
            if args.len() < least || args.len() > most {
                return Err(bad("wrong number of arguments"));
            }
            return spec.args.parse(args).map_err(bad);
        }
    }
    // A command whose rows each have a fixed argument, and none of them was given: with the
    // right number of words, the accepted ones are named ("up or down").
    let fixed: Vec<String> = rows
        .iter()
        .map(|c| c.fixed().collect::<Vec<_>>().join(" "))
        .collect();
    let words_each = rows[0].fixed().count();
    if words_each > 0 && words.len() == 1 + words_each {
        let (last, rest) = fixed.split_last().expect("rows are not empty");
        let list = if rest.is_empty() {
            last.clone()
        } else {
            format!("{} or {last}", rest.join(", "))
        };
        return Err(bad(&list));
    }
    Err(bad("wrong number of arguments"))
}

/// A piece by its name or letter.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_list_is_made_from_the_table() {
        assert_eq!(
            usage(),
            "last, moves N, time, turn, position [white|black] [PIECE], rank N, file X, \
             square SQ, promote PIECE, draw, claim, resign, adjust, pause, resume, adjourn, new-game, \
             takeback, help [keys|key N|end], clock, start, toggle-pause, rate up|down, volume up|down, hint, \
             evaluate, switch, silence, explore, step DIR, jump DIR, guard, go SQ, touches, legal, material, players, move N"
        );
    }

    #[test]
    fn every_row_has_its_own_name_and_words() {
        for (i, a) in COMMANDS.iter().enumerate() {
            for b in &COMMANDS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.words, b.words);
            }
            // Rows of one command follow each other (help tells them together).
            let same: Vec<usize> = (0..COMMANDS.len())
                .filter(|j| COMMANDS[*j].first_word() == a.first_word())
                .collect();
            assert_eq!(same.len(), same[same.len() - 1] - same[0] + 1, "{}", a.name);
        }
    }

    #[test]
    fn fixed_arguments_are_named_when_none_is_given() {
        let list = usage();
        assert_eq!(
            parse("rate sideways"),
            Err(format!("rate: up or down (commands: {list})"))
        );
        assert_eq!(
            parse("volume"),
            Err(format!(
                "volume: wrong number of arguments (commands: {list})"
            ))
        );
        assert_eq!(
            parse("rate up now"),
            Err(format!(
                "rate: wrong number of arguments (commands: {list})"
            ))
        );
        assert_eq!(
            parse("Last"),
            Err(format!("unknown command (commands: {list})"))
        );
    }
}
