//! The words the daemon speaks, in every language, and the sentences built from them
//! (docs/speech.md). Pure: text in, text out; below the engine, which speaks through it.
//!
//! Each language is a data file, `src/words/<lang>.toml`, embedded in the binary and read
//! once: a translator edits data, under the same keys as the config's `[speech.words]`
//! overrides. A [`Words`] table holds every word of one language; [`Phrases`] builds
//! announcements from it. [`Names`] gives each enumeration with names its one table.

use std::sync::{Arc, OnceLock};

use shakmaty::{Color, File, Rank, Role};

mod names;
mod phrases;

pub use names::Names;
pub use phrases::{sentences, Phrases};

/// The announcement languages. `appendix-f` is German with the words fixed by FIDE's rules for
/// blind players; `de` is German too, but every word is meant to be overridden freely.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    AppendixF,
    De,
    En,
    Ro,
    Sv,
}

impl Lang {
    pub const NAMES: Names<Lang> = Names {
        what: "language",
        table: &[
            (Lang::AppendixF, "appendix-f"),
            (Lang::De, "de"),
            (Lang::En, "en"),
            (Lang::Ro, "ro"),
            (Lang::Sv, "sv"),
        ],
    };

    /// The language's BCP 47 tag, for a screen reader ("de" for the Appendix F words).
    pub fn tag(self) -> &'static str {
        match self {
            Lang::AppendixF | Lang::De => "de",
            Lang::En => "en",
            Lang::Ro => "ro",
            Lang::Sv => "sv",
        }
    }

    pub fn name(self) -> &'static str {
        Lang::NAMES.name(self)
    }

    /// The language's data file: its words, in TOML.
    fn data(self) -> &'static str {
        match self {
            Lang::AppendixF | Lang::De => include_str!("de.toml"),
            Lang::En => include_str!("en.toml"),
            Lang::Ro => include_str!("ro.toml"),
            Lang::Sv => include_str!("sv.toml"),
        }
    }
}

crate::named!(Lang);

/// `short` speaks the SAN; `long` always names the from-square too.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Short,
    Long,
}

impl Style {
    pub const NAMES: Names<Style> = Names {
        what: "style",
        table: &[(Style::Short, "short"), (Style::Long, "long")],
    };
}

crate::named!(Style);

/// How files are spoken. Bare letters are misheard by synthesizers, so `phonetic` is default.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum FileWords {
    #[default]
    Phonetic,
    Nato,
    Letters,
}

impl FileWords {
    pub const NAMES: Names<FileWords> = Names {
        what: "file words",
        table: &[
            (FileWords::Phonetic, "phonetic"),
            (FileWords::Nato, "nato"),
            (FileWords::Letters, "letters"),
        ],
    };

    fn words(self) -> [&'static str; 8] {
        match self {
            FileWords::Phonetic => PHONETIC,
            FileWords::Nato => NATO,
            FileWords::Letters => LETTERS,
        }
    }
}

crate::named!(FileWords);

const PHONETIC: [&str; 8] = [
    "Anna", "Bella", "Cesar", "David", "Eva", "Felix", "Gustav", "Hector",
];
const NATO: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];
const LETTERS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

/// Every word of one language. Owned so that a config can override any of them.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Words {
    pub files: [String; 8],
    pub ranks: [String; 8],
    /// King, queen, rook, bishop, knight, pawn.
    pub pieces: [String; 6],
    /// The keys whose labels are signs a voice does not read ("." is silent), in the order
    /// of [`KEY_NAMES`].
    pub key_names: [String; KEY_NAMES.len()],
    /// The pieces of each side as a phrase says which piece stands where, the colour an
    /// adjective agreeing with the piece ("weißer Bauer", "weiße Dame", "vitt torn"), in the
    /// order of `pieces`.
    pub white_pieces: [String; 6],
    pub black_pieces: [String; 6],
    pub capture: String,
    pub check: String,
    pub checkmate: String,
    pub en_passant: String,
    pub short_castling: String,
    pub long_castling: String,
    pub white: String,
    pub black: String,
    pub wins: String,
    pub draw: String,
    pub stalemate: String,
    pub dead_position: String,
    pub fivefold: String,
    pub seventyfive: String,
    pub threefold: String,
    pub fifty_moves: String,
    pub agreement: String,
    pub resignation: String,
    pub time_forfeit: String,
    pub illegal_moves: String,
    pub illegal_move: String,
    pub touch_move: String,
    pub must_castle: String,
    pub check_board: String,
    pub missing: String,
    pub extra: String,
    pub on: String,
    pub restored: String,
    pub new_game: String,
    pub claim_valid: String,
    pub claim_invalid: String,
    pub draw_offer: String,
    pub draw_offer_lapsed: String,
    pub takeback: String,
    /// Later readings showed that moves already announced were not what happened: said before
    /// the moves the board shows instead ("Korrektur: Dame Felix vier").
    pub correction: String,
    /// A correction that withdraws a ruling and no move ("Korrektur: Entscheidung zurückgenommen").
    pub ruling_withdrawn: String,
    /// Moves read from the board afterwards whose order or route the board cannot tell.
    pub order_uncertain: String,
    pub adjust: String,
    pub no_takeback: String,
    pub moves_made: String,
    pub minutes: String,
    pub seconds: String,
    /// The word a language puts between a count and its noun when the count's last two digits
    /// are 00 or 20 to 99 (0 excepted): Romanian "25 de mutări", "120 de mutări", but
    /// "19 mutări", "101 mutări". Empty in the languages that have no such word.
    pub count_link: String,
    pub no_move_yet: String,
    pub to_move: String,
    pub starting: String,
    pub board_connected: String,
    pub board_lost: String,
    /// The board's port is open but it has stopped answering.
    pub board_silent: String,
    /// A square the board keeps reporting (its sensor flickers): "{square}" is the square.
    pub square_flickers: String,
    pub board_reconnected: String,
    pub board_waiting: String,
    /// The board's serial port may not be opened by the daemon's user (EACCES).
    pub board_no_permission: String,
    /// The board's port is not a serial device (ENOTTY: a wrong path in the config).
    pub board_not_a_tty: String,
    /// The board's port cannot be opened for another reason (the log says which).
    pub board_port_error: String,
    pub confirm: String,
    /// What a confirmation is asked for, before `confirm`: "{side}" resigns, claims (a draw,
    /// or the win of Appendix C3), accepts the draw offered.
    pub confirm_resign: String,
    pub confirm_claim: String,
    pub confirm_draw: String,
    /// A command of the keypad's owner that only the player to move may give (a claim).
    pub not_to_move: String,
    /// The draw button pressed again by the player whose offer is pending.
    pub draw_offer_stands: String,
    /// Exploring the board from the keypad: begun, ended; the cursor at the board's edge;
    /// who defends and attacks a square ("gedeckt von", "angegriffen von"), and no one.
    pub explore_on: String,
    pub explore_off: String,
    pub edge: String,
    pub defended_by: String,
    pub attacked_by: String,
    /// Appendix F2.9 (e): the opponent touched a piece and put it back, "{side} berührt
    /// {piece}" ({piece}: the piece and its square); no touches since the last move.
    pub touches: String,
    pub no_touches: String,
    /// A piece that has no legal move (the `legal` question).
    pub no_moves: String,
    /// The material balance, in pawns: "{side}: {pawns} mehr", or even; the pieces lost.
    pub material_ahead: String,
    pub material_equal: String,
    pub captured: String,
    /// A player whose name the config does not give.
    pub unknown_player: String,
    pub nobody: String,
    pub paused: String,
    pub resumed: String,
    pub empty: String,
    pub rank: String,
    pub file_word: String,
    pub help: String,
    pub one_move: String,
    pub game_resumed: String,
    pub on_your_board: String,
    pub from: String,
    pub to: String,
    pub one_minute: String,
    pub one_second: String,
    pub low_time: String,
    pub clock_started: String,
    pub faster: String,
    pub slower: String,
    pub louder: String,
    pub quieter: String,
    pub voice_limit: String,
    pub keys_intro: String,
    pub long_press: String,
    /// The keypad's help, key by key: how to walk it, the keys of the exploration, the end of
    /// the keys, and the help left.
    pub help_keys: String,
    pub explore_keys: String,
    /// After the help of a key that asks for a move by its number: "Ziffern, dann Enter".
    pub digits_then_enter: String,
    pub help_end: String,
    pub help_off: String,
    /// A claim pressed before the move that makes it (9.2a, 9.3a): the move is awaited.
    pub claim_with_move: String,
    /// That claim still waiting, and the player has touched nothing.
    pub waiting_for_move: String,
    /// Blitz, Appendix C3: "{side}" may claim the win after an illegal move.
    pub may_claim_win: String,
    /// After a clock time: the time used, not the time left (F2.9d).
    pub used: String,
    /// The game record was damaged and has been repaired (at start).
    pub record_repaired: String,
    /// After `record_repaired`: one entry of the record lost, and the noun of more.
    pub one_entry_lost: String,
    pub entries_lost: String,
    /// The game record exists but the daemon may not read it: it does not start.
    pub record_unreadable: String,
    /// The disk is full: moves are kept in memory until it takes them.
    pub storage_full: String,
    /// Everything kept in memory is written: the disk took it.
    pub storage_free: String,
    /// The record cannot be written for another reason (a disk error, read-only).
    pub record_failed: String,
    /// ... and now it can.
    pub record_written: String,
    /// Against the computer: a hint, "Hinweis: Springer Felix drei".
    pub hint: String,
    /// The evaluation in words: within 0.3 pawns.
    pub eval_equal: String,
    /// 0.3 to 1 pawn: "{side} steht etwas besser".
    pub eval_slightly: String,
    /// 1 to 3 pawns: "{side} steht besser, etwa {pawns}".
    pub eval_better: String,
    /// 3 pawns or more: "{side} steht deutlich besser".
    pub eval_clearly: String,
    /// The pawns of `eval_better`: one, and the noun of more.
    pub one_pawn: String,
    pub pawns: String,
    /// A mate found: "{side} setzt in {moves} matt", with one move and the noun of more.
    pub mate_in: String,
    pub mate_one_move: String,
    pub mate_moves: String,
    /// Hint, evaluation, colour switch asked with no computer opponent.
    pub no_computer: String,
    /// ... or in tournament mode.
    pub training_only: String,
    /// After the colours are switched: "{side}" is the player's colour.
    pub you_play: String,
    /// The computer has had the move a few seconds and not answered yet.
    pub computer_thinking: String,
    /// Appendix A1: the game is being adjourned, "{side}" (the player to move) is to make his
    /// sealed move on the board, which is not announced.
    pub adjourn_seal: String,
    /// The sealed move is recorded, the clocks stand: the game is adjourned.
    pub adjourned: String,
    /// A5: the position before the sealed move is to be set up before the game resumes.
    pub adjourn_set_up: String,
    /// A9: said before the sealed move's announcement when the game resumes.
    pub envelope_opened: String,
    /// `adjourn` where it cannot be: the 2023 Laws, a game over, against the computer, two
    /// boards.
    pub no_adjournment: String,
    /// The spoken name of each command, in the order of [`COMMAND_KEYS`]; by name:
    /// [`Words::command`].
    pub commands: CommandWords,
}

/// The spoken name of each command, in the order of [`COMMAND_KEYS`] (an array too long for
/// `Default` to be derived).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandWords(pub [String; COMMAND_COUNT]);

impl Default for CommandWords {
    fn default() -> CommandWords {
        CommandWords(std::array::from_fn(|_| String::new()))
    }
}

impl std::ops::Deref for CommandWords {
    type Target = [String; COMMAND_COUNT];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for CommandWords {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The keys named in words (`key_names`), by their Linux names: the keypad's signs, and the
/// keyboard keys a voice would spell.
pub const KEY_NAMES: [&str; 11] = [
    "KPDOT",
    "KPPLUS",
    "KPMINUS",
    "KPASTERISK",
    "KPSLASH",
    "ENTER",
    "NUMLOCK",
    "BACKSPACE",
    "SPACE",
    "KPCOMMA",
    "KPEQUAL",
];

/// How many commands there are.
pub const COMMAND_COUNT: usize = 43;

/// The commands' names, as the `[commands]` table of a language's data file has them, in the
/// order a list of them is given in the config (`[speech.words] commands = [...]`).
pub const COMMAND_KEYS: [&str; COMMAND_COUNT] = [
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
    "adjourn",
    "new-game",
    "takeback",
    "help",
    "help keys",
    "help key",
    "help end",
    "clock",
    "start",
    "toggle-pause",
    "rate up",
    "rate down",
    "volume up",
    "volume down",
    "hint",
    "evaluate",
    "switch",
    "silence",
    "explore",
    "step",
    "jump",
    "guard",
    "go",
    "touches",
    "legal",
    "material",
    "players",
    "move",
];

/// The words that are patterns, with the placeholders each must hold.
pub const PATTERNS: &[(&str, &[&str])] = &[
    ("low_time", &["{side}", "{time}"]),
    ("may_claim_win", &["{side}"]),
    ("square_flickers", &["{square}"]),
    ("eval_slightly", &["{side}"]),
    ("eval_better", &["{side}", "{pawns}"]),
    ("eval_clearly", &["{side}"]),
    ("mate_in", &["{side}", "{moves}"]),
    ("you_play", &["{side}"]),
    ("confirm_resign", &["{side}"]),
    ("confirm_claim", &["{side}"]),
    ("confirm_draw", &["{side}"]),
    ("not_to_move", &["{side}"]),
    ("adjourn_seal", &["{side}"]),
    ("touches", &["{side}", "{piece}"]),
    ("material_ahead", &["{side}", "{pawns}"]),
];

/// A pattern word (`low_time = "{side} noch {time}"`) holds each of its placeholders, and no
/// other: without them the announcement would not say whose time or which square.
pub fn check_placeholders(key: &str, text: &str) -> Result<(), String> {
    let Some((_, needed)) = PATTERNS.iter().find(|(k, _)| *k == key) else {
        return Ok(());
    };
    let accepted = needed.join(" and ");
    for p in needed.iter() {
        if !text.contains(p) {
            return Err(format!(
                "'{text}' lacks the placeholder {p} (accepted: a text with {accepted})"
            ));
        }
    }
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        let found = &rest[open..close];
        if !needed.contains(&found) {
            return Err(format!(
                "'{text}': unknown placeholder {found} (accepted: {accepted})"
            ));
        }
        rest = &rest[close..];
    }
    Ok(())
}

/// Defines, from one list of the table's single-word fields, the config keys, the setter and the
/// list of all texts, so that the three cannot drift apart.
macro_rules! word_fields {
    ($($f:ident),* $(,)?) => {
        impl Words {
            /// The keys of `[speech.words]`.
            pub const KEYS: &'static [&'static str] = &["files", "ranks", "pieces", "white_pieces", "black_pieces", "key_names", "commands", $(stringify!($f)),*];

            /// Every text of the table.
            pub fn all_texts(&self) -> Vec<&str> {
                let mut v: Vec<&str> = Vec::new();
                v.extend(self.files.iter().map(String::as_str));
                v.extend(self.ranks.iter().map(String::as_str));
                v.extend(self.pieces.iter().map(String::as_str));
                v.extend(self.key_names.iter().map(String::as_str));
                v.extend(self.white_pieces.iter().map(String::as_str));
                v.extend(self.black_pieces.iter().map(String::as_str));
                v.extend(self.commands.iter().map(String::as_str));
                $( v.push(&self.$f); )*
                v
            }

            /// Overrides a word or a list of words (config `[speech.words]`).
            pub fn set(&mut self, key: &str, value: &toml::Value) -> Result<(), String> {
                match key {
                    "files" => self.files = word_list(key, value)?,
                    "ranks" => self.ranks = word_list(key, value)?,
                    "pieces" => self.pieces = word_list(key, value)?,
                    "key_names" => self.key_names = word_list(key, value)?,
                    "white_pieces" => self.white_pieces = word_list(key, value)?,
                    "black_pieces" => self.black_pieces = word_list(key, value)?,
                    "commands" => self.set_commands(value)?,
                    $( stringify!($f) => {
                        self.$f = value
                            .as_str()
                            .ok_or_else(|| format!("{key} must be a string, like {key} = \"{}\"", self.$f))?
                            .to_string()
                    } )*
                    _ => return Err(format!("unknown word '{key}' (accepted: {})", Self::KEYS.join(", "))),
                }
                Ok(())
            }
        }
    };
}

word_fields!(
    capture,
    check,
    checkmate,
    en_passant,
    short_castling,
    long_castling,
    white,
    black,
    wins,
    draw,
    stalemate,
    dead_position,
    fivefold,
    seventyfive,
    threefold,
    fifty_moves,
    agreement,
    resignation,
    time_forfeit,
    illegal_moves,
    illegal_move,
    touch_move,
    must_castle,
    check_board,
    missing,
    extra,
    on,
    restored,
    new_game,
    claim_valid,
    claim_invalid,
    draw_offer,
    draw_offer_lapsed,
    takeback,
    correction,
    ruling_withdrawn,
    order_uncertain,
    adjust,
    no_takeback,
    moves_made,
    minutes,
    seconds,
    count_link,
    no_move_yet,
    to_move,
    starting,
    board_connected,
    board_lost,
    board_silent,
    square_flickers,
    board_reconnected,
    board_waiting,
    board_no_permission,
    board_not_a_tty,
    board_port_error,
    confirm,
    confirm_resign,
    confirm_claim,
    confirm_draw,
    not_to_move,
    draw_offer_stands,
    explore_on,
    explore_off,
    edge,
    defended_by,
    attacked_by,
    touches,
    no_touches,
    no_moves,
    material_ahead,
    material_equal,
    captured,
    unknown_player,
    nobody,
    paused,
    resumed,
    empty,
    rank,
    file_word,
    help,
    one_move,
    game_resumed,
    on_your_board,
    from,
    to,
    one_minute,
    one_second,
    low_time,
    clock_started,
    faster,
    slower,
    louder,
    quieter,
    voice_limit,
    keys_intro,
    long_press,
    help_keys,
    explore_keys,
    digits_then_enter,
    help_end,
    help_off,
    claim_with_move,
    waiting_for_move,
    may_claim_win,
    used,
    record_repaired,
    one_entry_lost,
    entries_lost,
    record_unreadable,
    storage_full,
    storage_free,
    record_failed,
    record_written,
    hint,
    eval_equal,
    eval_slightly,
    eval_better,
    eval_clearly,
    one_pawn,
    pawns,
    mate_in,
    mate_one_move,
    mate_moves,
    no_computer,
    training_only,
    you_play,
    computer_thinking,
    adjourn_seal,
    adjourned,
    adjourn_set_up,
    envelope_opened,
    no_adjournment,
);

/// A piece's place in the word lists: king, queen, rook, bishop, knight, pawn.
fn role_index(r: Role) -> usize {
    match r {
        Role::King => 0,
        Role::Queen => 1,
        Role::Rook => 2,
        Role::Bishop => 3,
        Role::Knight => 4,
        Role::Pawn => 5,
    }
}

fn word_list<const N: usize>(key: &str, value: &toml::Value) -> Result<[String; N], String> {
    let err = || format!("{key} must be a list of {N} strings");
    let list = value.as_array().ok_or_else(err)?;
    let words: Vec<String> = list
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<_>>()
        .ok_or_else(err)?;
    words.try_into().map_err(|_| err())
}

impl Words {
    /// The words of `lang`, with the files spoken as `files` says.
    pub fn new(lang: Lang, files: FileWords) -> Words {
        let mut w = Words::language(lang).clone();
        w.files = files.words().map(str::to_string);
        w
    }

    /// [`Words::new`], made once for each language and way of speaking files and shared.
    pub fn shared(lang: Lang, files: FileWords) -> Arc<Words> {
        const LANGS: usize = Lang::NAMES.table.len();
        const FILES: usize = FileWords::NAMES.table.len();
        static MADE: [[OnceLock<Arc<Words>>; FILES]; LANGS] =
            [const { [const { OnceLock::new() }; FILES] }; LANGS];
        let row = Lang::NAMES.table.iter().position(|(l, _)| *l == lang);
        let column = FileWords::NAMES.table.iter().position(|(f, _)| *f == files);
        Arc::clone(
            MADE[row.unwrap_or(0)][column.unwrap_or(0)]
                .get_or_init(|| Arc::new(Words::new(lang, files))),
        )
    }

    /// The words of `lang` as its data file has them, read the first time they are needed.
    fn language(lang: Lang) -> &'static Words {
        const LANGS: usize = Lang::NAMES.table.len();
        static READ: [OnceLock<Words>; LANGS] = [const { OnceLock::new() }; LANGS];
        let row = Lang::NAMES.table.iter().position(|(l, _)| *l == lang);
        READ[row.unwrap_or(0)].get_or_init(|| {
            // The files are part of the binary and checked by the tests: an error is a bug.
            Words::from_data(lang.data())
                .unwrap_or_else(|e| panic!("src/words/{}.toml: {e}", lang.tag()))
        })
    }

    /// Reads a language's data file: every key of `[speech.words]` but `files` (which
    /// `speech.files` chooses), each command of `[commands]`, nothing else, and every pattern
    /// with its placeholders.
    pub fn from_data(text: &str) -> Result<Words, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        if let Some(k) = table
            .keys()
            .find(|k| *k == "files" || !Words::KEYS.contains(&k.as_str()))
        {
            return Err(format!("unknown word '{k}'"));
        }
        let mut w = Words {
            files: FileWords::default().words().map(str::to_string),
            ..Words::default()
        };
        for key in Words::KEYS.iter().filter(|k| **k != "files") {
            let value = table.get(*key).ok_or_else(|| format!("no word '{key}'"))?;
            w.set(key, value)?;
            if let Some(text) = value.as_str() {
                check_placeholders(key, text).map_err(|e| format!("{key}: {e}"))?;
            }
        }
        let commands = table.get("commands").and_then(toml::Value::as_table);
        if let Some(name) = COMMAND_KEYS
            .iter()
            .find(|n| commands.is_none_or(|c| !c.contains_key(**n)))
        {
            return Err(format!("no word for the command '{name}' in [commands]"));
        }
        Ok(w)
    }

    /// The spoken name of the command `name` ("claim": "Reklamation"); a name that is no
    /// command is spoken as it is.
    pub fn command<'a>(&'a self, name: &'a str) -> &'a str {
        match COMMAND_KEYS.iter().position(|n| *n == name) {
            Some(i) => &self.commands[i],
            None => name,
        }
    }

    /// Overrides the commands' words: a list in the order of [`COMMAND_KEYS`], or a table of
    /// some of them by name, as a language's data file has it.
    fn set_commands(&mut self, value: &toml::Value) -> Result<(), String> {
        let Some(table) = value.as_table() else {
            self.commands = CommandWords(word_list("commands", value)?);
            return Ok(());
        };
        for (name, text) in table {
            let i = COMMAND_KEYS.iter().position(|n| n == name).ok_or_else(|| {
                format!(
                    "unknown command '{name}' (accepted: {})",
                    COMMAND_KEYS.join(", ")
                )
            })?;
            self.commands[i] = text
                .as_str()
                .ok_or_else(|| format!("commands.{name} must be a string"))?
                .to_string();
        }
        Ok(())
    }

    pub fn piece(&self, r: Role) -> &str {
        &self.pieces[role_index(r)]
    }

    /// A piece of one side, the colour agreeing with it: "weißer Bauer", "schwarze Dame".
    pub fn side_piece(&self, c: Color, r: Role) -> &str {
        let list = match c {
            Color::White => &self.white_pieces,
            Color::Black => &self.black_pieces,
        };
        &list[role_index(r)]
    }

    pub fn file(&self, f: File) -> &str {
        &self.files[usize::from(f)]
    }

    pub fn rank(&self, r: Rank) -> &str {
        &self.ranks[usize::from(r)]
    }

    pub fn color(&self, c: Color) -> &str {
        match c {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// A count and its noun: `one` for 1 ("eine Minute"), otherwise the number and `many`, with
    /// the language's [`count_link`](Words::count_link) between them when the number's last two
    /// digits are 00 or 20 to 99: Romanian "19 mutări", "20 de mutări", "101 mutări",
    /// "120 de mutări"; "0 mutări" (zero takes no "de").
    pub fn count(&self, n: u64, one: &str, many: &str) -> String {
        let linked = n != 0 && matches!(n % 100, 0 | 20..);
        match n {
            1 => one.to_string(),
            _ if linked && !self.count_link.is_empty() => {
                format!("{n} {} {many}", self.count_link)
            }
            _ => format!("{n} {many}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANGS: [Lang; 5] = [Lang::AppendixF, Lang::De, Lang::En, Lang::Ro, Lang::Sv];

    /// Every language's data file has every key of `[speech.words]` but `files`, every command,
    /// nothing else, and its patterns hold their placeholders.
    #[test]
    fn every_language_file_has_every_word() {
        for lang in LANGS {
            let data = lang.data();
            let w = Words::from_data(data).unwrap_or_else(|e| panic!("{}: {e}", lang.name()));
            let table: toml::Table = data.parse().unwrap();
            for key in Words::KEYS.iter().filter(|k| **k != "files") {
                assert!(table.contains_key(*key), "{}: {key}", lang.name());
            }
            let commands = table["commands"].as_table().unwrap();
            assert_eq!(commands.len(), COMMAND_COUNT, "{}", lang.name());
            for name in COMMAND_KEYS {
                assert!(!w.command(name).is_empty(), "{}: {name}", lang.name());
            }
            for (key, _) in PATTERNS {
                let text = table[*key].as_str().unwrap();
                check_placeholders(key, text).unwrap();
            }
            assert!(w
                .all_texts()
                .iter()
                .all(|t| !t.is_empty() || *t == w.count_link));
        }
        assert!(Words::from_data("capture = \"x\"")
            .unwrap_err()
            .contains("no word"));
        let mut de = Lang::De.data().to_string();
        de.push_str("\"fly\" = \"fliegen\"\n");
        assert!(Words::from_data(&de)
            .unwrap_err()
            .contains("unknown command 'fly'"));
        let de = Lang::De
            .data()
            .replace("low_time = \"{side} noch {time}\"", "low_time = \"noch\"");
        assert!(Words::from_data(&de).unwrap_err().contains("{side}"));
    }

    #[test]
    fn commands_are_spoken_by_name_and_set_by_name_or_as_a_list() {
        let mut w = Words::new(Lang::En, FileWords::Phonetic);
        assert_eq!(w.command("rate up"), "faster");
        assert_eq!(w.command("fly"), "fly");
        let mut table = toml::Table::new();
        table.insert("claim".into(), "object".into());
        w.set("commands", &toml::Value::Table(table)).unwrap();
        assert_eq!(w.command("claim"), "object");
        assert_eq!(w.command("draw"), "draw");
        let list: Vec<toml::Value> = COMMAND_KEYS
            .iter()
            .map(|n| n.to_uppercase().into())
            .collect();
        w.set("commands", &toml::Value::Array(list)).unwrap();
        assert_eq!(w.command("new-game"), "NEW-GAME");
    }

    #[test]
    fn every_value_has_its_name() {
        for lang in LANGS {
            assert_eq!(lang.name().parse::<Lang>(), Ok(lang));
        }
        assert_eq!(Lang::NAMES.values().count(), LANGS.len());
        for style in [Style::Short, Style::Long] {
            assert_eq!(style.to_string().parse::<Style>(), Ok(style));
        }
        for files in [FileWords::Phonetic, FileWords::Nato, FileWords::Letters] {
            assert_eq!(files.to_string().parse::<FileWords>(), Ok(files));
        }
        assert_eq!(
            "fr".parse::<Lang>().unwrap_err(),
            "unknown language 'fr' (accepted: appendix-f, de, en, ro, sv)"
        );
        assert_eq!(
            "medium".parse::<Style>().unwrap_err(),
            "unknown style 'medium' (accepted: short, long)"
        );
        assert_eq!(
            "runes".parse::<FileWords>().unwrap_err(),
            "unknown file words 'runes' (accepted: phonetic, nato, letters)"
        );
    }
}
