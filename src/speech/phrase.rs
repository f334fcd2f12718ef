//! What the daemon says, word by word (docs/speech.md). Pure: text in, text out.
//!
//! A [`Words`] table holds every word of one language; [`Phrases`] builds announcements from it.
//! Move announcements follow the SAN token by token so that disambiguation, captures, promotion
//! and check are spoken exactly as they are written.

use std::fmt::Write as _;
use std::str::FromStr;

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::{CastlingSide, Color, File, Move, Rank, Role, Square};

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

impl FromStr for Lang {
    type Err = String;
    fn from_str(s: &str) -> Result<Lang, String> {
        match s {
            "appendix-f" => Ok(Lang::AppendixF),
            "de" => Ok(Lang::De),
            "en" => Ok(Lang::En),
            "ro" => Ok(Lang::Ro),
            "sv" => Ok(Lang::Sv),
            _ => Err(format!(
                "unknown language '{s}' (accepted: appendix-f, de, en, ro, sv)"
            )),
        }
    }
}

impl Lang {
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
        match self {
            Lang::AppendixF => "appendix-f",
            Lang::De => "de",
            Lang::En => "en",
            Lang::Ro => "ro",
            Lang::Sv => "sv",
        }
    }
}

/// `short` speaks the SAN; `long` always names the from-square too.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Short,
    Long,
}

impl FromStr for Style {
    type Err = String;
    fn from_str(s: &str) -> Result<Style, String> {
        match s {
            "short" => Ok(Style::Short),
            "long" => Ok(Style::Long),
            _ => Err(format!("unknown style '{s}' (accepted: short, long)")),
        }
    }
}

/// How files are spoken. Bare letters are misheard by synthesizers, so `phonetic` is default.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum FileWords {
    #[default]
    Phonetic,
    Nato,
    Letters,
}

impl FromStr for FileWords {
    type Err = String;
    fn from_str(s: &str) -> Result<FileWords, String> {
        match s {
            "phonetic" => Ok(FileWords::Phonetic),
            "nato" => Ok(FileWords::Nato),
            "letters" => Ok(FileWords::Letters),
            _ => Err(format!(
                "unknown file words '{s}' (accepted: phonetic, nato, letters)"
            )),
        }
    }
}

const PHONETIC: [&str; 8] = [
    "Anna", "Bella", "Cesar", "David", "Eva", "Felix", "Gustav", "Hector",
];
const NATO: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];
const LETTERS: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

/// Every word of one language. Owned so that a config can override any of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Words {
    pub files: [String; 8],
    pub ranks: [String; 8],
    /// King, queen, rook, bishop, knight, pawn.
    pub pieces: [String; 6],
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
    /// The spoken name of each command, in the order of `control::COMMAND_NAMES`.
    pub commands: [String; COMMAND_COUNT],
}

/// How many commands there are (`control::COMMAND_NAMES`).
pub const COMMAND_COUNT: usize = 25;

/// The words that are patterns, with the placeholders each must hold.
pub const PATTERNS: &[(&str, &[&str])] = &[
    ("low_time", &["{side}", "{time}"]),
    ("may_claim_win", &["{side}"]),
    ("square_flickers", &["{square}"]),
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
            pub const KEYS: &'static [&'static str] = &["files", "ranks", "pieces", "commands", $(stringify!($f)),*];

            /// Every text of the table.
            pub fn all_texts(&self) -> Vec<&str> {
                let mut v: Vec<&str> = Vec::new();
                v.extend(self.files.iter().map(String::as_str));
                v.extend(self.ranks.iter().map(String::as_str));
                v.extend(self.pieces.iter().map(String::as_str));
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
                    "commands" => self.commands = word_list(key, value)?,
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
);

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

fn s<const N: usize>(a: [&str; N]) -> [String; N] {
    a.map(str::to_string)
}

impl Words {
    pub fn new(lang: Lang, files: FileWords) -> Words {
        let mut w = match lang {
            Lang::AppendixF | Lang::De => Words::german(),
            Lang::En => Words::english(),
            Lang::Ro => Words::romanian(),
            Lang::Sv => Words::swedish(),
        };
        w.files = s(match files {
            FileWords::Phonetic => PHONETIC,
            FileWords::Nato => NATO,
            FileWords::Letters => LETTERS,
        });
        w
    }

    fn german() -> Words {
        Words {
            files: s(PHONETIC),
            ranks: s([
                "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht",
            ]),
            pieces: s(["König", "Dame", "Turm", "Läufer", "Springer", "Bauer"]),
            capture: "schlägt".into(),
            check: "Schach".into(),
            checkmate: "Schachmatt".into(),
            en_passant: "en passant".into(),
            short_castling: "Kurze Rochade".into(),
            long_castling: "Lange Rochade".into(),
            white: "Weiß".into(),
            black: "Schwarz".into(),
            wins: "gewinnt".into(),
            draw: "Remis".into(),
            stalemate: "Patt".into(),
            dead_position: "Tote Stellung".into(),
            fivefold: "Fünfmalige Stellungswiederholung".into(),
            seventyfive: "75-Züge-Regel".into(),
            threefold: "Dreimalige Stellungswiederholung".into(),
            fifty_moves: "50-Züge-Regel".into(),
            agreement: "Remis vereinbart".into(),
            resignation: "Aufgabe".into(),
            time_forfeit: "Zeitüberschreitung".into(),
            illegal_moves: "Unzulässige Züge".into(),
            illegal_move: "Unzulässiger Zug".into(),
            touch_move: "Berührt, geführt".into(),
            must_castle: "Rochade".into(),
            check_board: "Brett prüfen".into(),
            missing: "Fehlt".into(),
            extra: "Zu viel".into(),
            on: "auf".into(),
            restored: "Stellung wiederhergestellt".into(),
            new_game: "Neue Partie".into(),
            claim_valid: "Reklamation berechtigt".into(),
            claim_invalid: "Reklamation unberechtigt".into(),
            draw_offer: "bietet Remis an".into(),
            draw_offer_lapsed: "Remisangebot erloschen".into(),
            takeback: "Zurückgenommen".into(),
            adjust: "J'adoube".into(),
            no_takeback: "Zurücknehmen nur im freien Spiel".into(),
            moves_made: "Züge".into(),
            minutes: "Minuten".into(),
            seconds: "Sekunden".into(),
            count_link: "".into(),
            no_move_yet: "Noch kein Zug".into(),
            to_move: "am Zug".into(),
            starting: "Schachbrett startet".into(),
            board_connected: "Brett verbunden".into(),
            board_lost: "Brett getrennt".into(),
            board_silent: "Brett antwortet nicht".into(),
            square_flickers: "Feld {square} flackert".into(),
            board_reconnected: "Brett wieder verbunden".into(),
            board_waiting: "Warte auf das Brett".into(),
            board_no_permission: "Kein Zugriff auf das Brett: Benutzer zur Gruppe dialout hinzufügen".into(),
            board_not_a_tty: "Der Anschluss des Bretts ist kein serielles Gerät".into(),
            board_port_error: "Der Anschluss des Bretts lässt sich nicht öffnen".into(),
            confirm: "Zum Bestätigen nochmals".into(),
            paused: "Uhr angehalten".into(),
            resumed: "Uhr läuft weiter".into(),
            empty: "leer".into(),
            rank: "Reihe".into(),
            file_word: "Linie".into(),
            help: "Befehle: letzter Zug, Züge, Zeit, am Zug, Stellung, Reihe, Linie, Feld, Umwandlung, Remis, Reklamation, Aufgabe, J'adoube, Pause, weiter, neue Partie, zurücknehmen, Hilfe, Uhr, Uhr starten, Pause oder weiter, schneller, langsamer, lauter, leiser".into(),
            one_move: "1 Zug".into(),
            game_resumed: "Partie fortgesetzt".into(),
            on_your_board: "Auf Ihrem Brett".into(),
            from: "von".into(),
            to: "nach".into(),
            one_minute: "eine Minute".into(),
            one_second: "eine Sekunde".into(),
            low_time: "{side} noch {time}".into(),
            clock_started: "Uhr läuft".into(),
            faster: "Schneller".into(),
            slower: "Langsamer".into(),
            louder: "Lauter".into(),
            quieter: "Leiser".into(),
            voice_limit: "Grenze erreicht".into(),
            keys_intro: "Tasten".into(),
            long_press: "lang".into(),
            claim_with_move: "Reklamation mit dem nächsten Zug".into(),
            waiting_for_move: "Warte auf Ihren Zug".into(),
            may_claim_win: "{side} kann den Gewinn reklamieren".into(),
            used: "verbraucht".into(),
            record_repaired: "Aufzeichnung repariert".into(),
            one_entry_lost: "1 Eintrag verloren".into(),
            entries_lost: "Einträge verloren".into(),
            record_unreadable: "Aufzeichnung nicht lesbar".into(),
            storage_full: "Speicher voll".into(),
            storage_free: "Speicher wieder frei".into(),
            record_failed: "Aufzeichnung gestört".into(),
            record_written: "Aufzeichnung läuft wieder".into(),
            commands: s([
                "letzter Zug",
                "Züge",
                "Zeit",
                "am Zug",
                "Stellung",
                "Reihe",
                "Linie",
                "Feld",
                "Umwandlung",
                "Remis",
                "Reklamation",
                "Aufgabe",
                "J'adoube",
                "Pause",
                "weiter",
                "neue Partie",
                "zurücknehmen",
                "Hilfe",
                "Uhr",
                "Uhr starten",
                "Pause oder weiter",
                "schneller",
                "langsamer",
                "lauter",
                "leiser",
            ]),
        }
    }

    fn english() -> Words {
        Words {
            files: s(PHONETIC),
            ranks: s([
                "one", "two", "three", "four", "five", "six", "seven", "eight",
            ]),
            pieces: s(["King", "Queen", "Rook", "Bishop", "Knight", "Pawn"]),
            capture: "takes".into(),
            check: "check".into(),
            checkmate: "checkmate".into(),
            en_passant: "en passant".into(),
            short_castling: "castles kingside".into(),
            long_castling: "castles queenside".into(),
            white: "White".into(),
            black: "Black".into(),
            wins: "wins".into(),
            draw: "Draw".into(),
            stalemate: "Stalemate".into(),
            dead_position: "Dead position".into(),
            fivefold: "Fivefold repetition".into(),
            seventyfive: "Seventy-five move rule".into(),
            threefold: "Threefold repetition".into(),
            fifty_moves: "Fifty move rule".into(),
            agreement: "Draw agreed".into(),
            resignation: "Resignation".into(),
            time_forfeit: "Time forfeit".into(),
            illegal_moves: "Illegal moves".into(),
            illegal_move: "Illegal move".into(),
            touch_move: "Touch move".into(),
            must_castle: "castling".into(),
            check_board: "Check the board".into(),
            missing: "Missing".into(),
            extra: "Extra".into(),
            on: "on".into(),
            restored: "Position restored".into(),
            new_game: "New game".into(),
            claim_valid: "Claim correct".into(),
            claim_invalid: "Claim incorrect".into(),
            draw_offer: "offers a draw".into(),
            draw_offer_lapsed: "Draw offer lapsed".into(),
            takeback: "Taken back".into(),
            adjust: "J'adoube".into(),
            no_takeback: "Takeback only in casual play".into(),
            moves_made: "moves".into(),
            minutes: "minutes".into(),
            seconds: "seconds".into(),
            count_link: "".into(),
            no_move_yet: "No move yet".into(),
            to_move: "to move".into(),
            starting: "Chessboard starting".into(),
            board_connected: "Board connected".into(),
            board_lost: "Board disconnected".into(),
            board_silent: "Board not answering".into(),
            square_flickers: "Square {square} is flickering".into(),
            board_reconnected: "Board reconnected".into(),
            board_waiting: "Waiting for the board".into(),
            board_no_permission: "No access to the board: add the user to the dialout group".into(),
            board_not_a_tty: "The board's port is not a serial device".into(),
            board_port_error: "The board's port cannot be opened".into(),
            confirm: "Press again to confirm".into(),
            paused: "Clock paused".into(),
            resumed: "Clock running".into(),
            empty: "empty".into(),
            rank: "Rank".into(),
            file_word: "File".into(),
            help: "Commands: last move, moves, time, turn, position, rank, file, square, promote, draw, claim, resign, adjust, pause, resume, new game, takeback, help, clock, start the clock, pause or resume, faster, slower, louder, quieter".into(),
            one_move: "1 move".into(),
            game_resumed: "Game resumed".into(),
            on_your_board: "On your board".into(),
            from: "from".into(),
            to: "to".into(),
            one_minute: "one minute".into(),
            one_second: "one second".into(),
            low_time: "{side}: {time} left".into(),
            clock_started: "Clock started".into(),
            faster: "Faster".into(),
            slower: "Slower".into(),
            louder: "Louder".into(),
            quieter: "Quieter".into(),
            voice_limit: "Limit reached".into(),
            keys_intro: "Keys".into(),
            long_press: "held".into(),
            claim_with_move: "Claim with your next move".into(),
            waiting_for_move: "Waiting for your move".into(),
            may_claim_win: "{side} may claim the win".into(),
            used: "used".into(),
            record_repaired: "Record repaired".into(),
            one_entry_lost: "1 entry lost".into(),
            entries_lost: "entries lost".into(),
            record_unreadable: "Record cannot be read".into(),
            storage_full: "Storage full".into(),
            storage_free: "Storage free again".into(),
            record_failed: "Record cannot be written".into(),
            record_written: "Record written again".into(),
            commands: s([
                "last move",
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
                "new game",
                "takeback",
                "help",
                "clock",
                "start the clock",
                "pause or resume",
                "faster",
                "slower",
                "louder",
                "quieter",
            ]),
        }
    }

    fn romanian() -> Words {
        Words {
            files: s(PHONETIC),
            ranks: s([
                "unu", "doi", "trei", "patru", "cinci", "șase", "șapte", "opt",
            ]),
            pieces: s(["Rege", "Damă", "Turn", "Nebun", "Cal", "Pion"]),
            capture: "ia".into(),
            check: "șah".into(),
            checkmate: "mat".into(),
            en_passant: "en passant".into(),
            short_castling: "rocada mică".into(),
            long_castling: "rocada mare".into(),
            white: "Albul".into(),
            black: "Negrul".into(),
            wins: "câștigă".into(),
            draw: "Remiză".into(),
            stalemate: "Pat".into(),
            dead_position: "Poziție moartă".into(),
            fivefold: "Repetarea poziției de cinci ori".into(),
            seventyfive: "Regula celor 75 de mutări".into(),
            threefold: "Repetarea poziției de trei ori".into(),
            fifty_moves: "Regula celor 50 de mutări".into(),
            agreement: "Remiză prin acord".into(),
            resignation: "Abandon".into(),
            time_forfeit: "Depășirea timpului".into(),
            illegal_moves: "Mutări ilegale".into(),
            illegal_move: "Mutare ilegală".into(),
            touch_move: "Piesa atinsă se mută".into(),
            must_castle: "rocada".into(),
            check_board: "Verificați tabla".into(),
            missing: "Lipsește".into(),
            extra: "În plus".into(),
            on: "pe".into(),
            restored: "Poziție restabilită".into(),
            new_game: "Partidă nouă".into(),
            claim_valid: "Cerere întemeiată".into(),
            claim_invalid: "Cerere neîntemeiată".into(),
            draw_offer: "propune remiză".into(),
            draw_offer_lapsed: "Propunerea de remiză a expirat".into(),
            takeback: "Mutare luată înapoi".into(),
            adjust: "Aranjez".into(),
            no_takeback: "Mutarea se ia înapoi doar în joc liber".into(),
            moves_made: "mutări".into(),
            minutes: "minute".into(),
            seconds: "secunde".into(),
            count_link: "de".into(),
            no_move_yet: "Nicio mutare încă".into(),
            to_move: "la mutare".into(),
            starting: "Tabla pornește".into(),
            board_connected: "Tabla conectată".into(),
            board_lost: "Tabla deconectată".into(),
            board_silent: "Tabla nu răspunde".into(),
            square_flickers: "Câmpul {square} pâlpâie".into(),
            board_reconnected: "Tabla reconectată".into(),
            board_waiting: "Se așteaptă tabla".into(),
            board_no_permission: "Fără acces la tablă: adăugați utilizatorul în grupul dialout".into(),
            board_not_a_tty: "Portul tablei nu este un dispozitiv serial".into(),
            board_port_error: "Portul tablei nu poate fi deschis".into(),
            confirm: "Apăsați din nou pentru confirmare".into(),
            paused: "Ceas oprit".into(),
            resumed: "Ceasul merge".into(),
            empty: "liber".into(),
            rank: "Orizontala".into(),
            file_word: "Coloana".into(),
            help: "Comenzi: ultima mutare, mutări, timp, la mutare, poziție, orizontală, coloană, câmp, transformare, remiză, cerere, abandon, aranjez, pauză, continuare, partidă nouă, mutare luată înapoi, ajutor, ceas, pornește ceasul, pauză sau continuare, mai repede, mai lent, mai tare, mai încet".into(),
            one_move: "o mutare".into(),
            game_resumed: "Partida continuă".into(),
            on_your_board: "Pe tabla dumneavoastră".into(),
            from: "de la".into(),
            to: "la".into(),
            one_minute: "un minut".into(),
            one_second: "o secundă".into(),
            low_time: "{side} mai are {time}".into(),
            clock_started: "Ceasul a pornit".into(),
            faster: "Mai repede".into(),
            slower: "Mai lent".into(),
            louder: "Mai tare".into(),
            quieter: "Mai încet".into(),
            voice_limit: "Limită atinsă".into(),
            keys_intro: "Taste".into(),
            long_press: "lung".into(),
            claim_with_move: "Cerere cu mutarea următoare".into(),
            waiting_for_move: "Aștept mutarea dumneavoastră".into(),
            may_claim_win: "{side} poate cere câștigul".into(),
            used: "consumat".into(),
            record_repaired: "Înregistrare reparată".into(),
            one_entry_lost: "o intrare pierdută".into(),
            entries_lost: "intrări pierdute".into(),
            record_unreadable: "Înregistrarea nu poate fi citită".into(),
            storage_full: "Memorie plină".into(),
            storage_free: "Memorie liberă din nou".into(),
            record_failed: "Înregistrarea nu poate fi scrisă".into(),
            record_written: "Înregistrarea se scrie din nou".into(),
            commands: s([
                "ultima mutare",
                "mutări",
                "timp",
                "la mutare",
                "poziție",
                "orizontală",
                "coloană",
                "câmp",
                "transformare",
                "remiză",
                "cerere",
                "abandon",
                "aranjez",
                "pauză",
                "continuare",
                "partidă nouă",
                "mutare luată înapoi",
                "ajutor",
                "ceas",
                "pornește ceasul",
                "pauză sau continuare",
                "mai repede",
                "mai lent",
                "mai tare",
                "mai încet",
            ]),
        }
    }

    fn swedish() -> Words {
        Words {
            files: s(PHONETIC),
            ranks: s(["ett", "två", "tre", "fyra", "fem", "sex", "sju", "åtta"]),
            pieces: s(["Kung", "Dam", "Torn", "Löpare", "Springare", "Bonde"]),
            capture: "slår".into(),
            check: "schack".into(),
            checkmate: "schackmatt".into(),
            en_passant: "en passant".into(),
            short_castling: "kort rockad".into(),
            long_castling: "lång rockad".into(),
            white: "Vit".into(),
            black: "Svart".into(),
            wins: "vinner".into(),
            draw: "Remi".into(),
            stalemate: "Patt".into(),
            dead_position: "Död ställning".into(),
            fivefold: "Femfaldig upprepning".into(),
            seventyfive: "75-dragsregeln".into(),
            threefold: "Trefaldig upprepning".into(),
            fifty_moves: "50-dragsregeln".into(),
            agreement: "Remi överenskommen".into(),
            resignation: "{side} ger upp".into(),
            time_forfeit: "Tidsöverskridning".into(),
            illegal_moves: "Otillåtna drag".into(),
            illegal_move: "Otillåtet drag".into(),
            touch_move: "Rörd pjäs ska flyttas".into(),
            must_castle: "rockad".into(),
            check_board: "Kontrollera brädet".into(),
            missing: "Saknas".into(),
            extra: "Extra".into(),
            on: "på".into(),
            restored: "Ställningen återställd".into(),
            new_game: "Nytt parti".into(),
            claim_valid: "Kravet är riktigt".into(),
            claim_invalid: "Kravet är oriktigt".into(),
            draw_offer: "erbjuder remi".into(),
            draw_offer_lapsed: "Remierbjudandet har förfallit".into(),
            takeback: "Draget återtaget".into(),
            adjust: "J'adoube".into(),
            no_takeback: "Ta tillbaka bara i fritt spel".into(),
            moves_made: "drag".into(),
            minutes: "minuter".into(),
            seconds: "sekunder".into(),
            count_link: "".into(),
            no_move_yet: "Inget drag ännu".into(),
            to_move: "vid draget".into(),
            starting: "Brädet startar".into(),
            board_connected: "Brädet anslutet".into(),
            board_lost: "Brädet frånkopplat".into(),
            board_silent: "Brädet svarar inte".into(),
            square_flickers: "Rutan {square} flimrar".into(),
            board_reconnected: "Brädet återanslutet".into(),
            board_waiting: "Väntar på brädet".into(),
            board_no_permission: "Ingen åtkomst till brädet: lägg till användaren i gruppen dialout".into(),
            board_not_a_tty: "Brädets port är ingen seriell enhet".into(),
            board_port_error: "Brädets port kan inte öppnas".into(),
            confirm: "Tryck igen för att bekräfta".into(),
            paused: "Klockan stoppad".into(),
            resumed: "Klockan går".into(),
            empty: "tom".into(),
            rank: "Rad".into(),
            file_word: "Linje".into(),
            help: "Kommandon: senaste drag, drag, tid, vid draget, ställning, rad, linje, ruta, förvandling, remi, krav, ge upp, justerar, paus, fortsätt, nytt parti, ta tillbaka, hjälp, klocka, starta klockan, paus eller fortsätt, snabbare, långsammare, högre, tystare".into(),
            one_move: "1 drag".into(),
            game_resumed: "Partiet fortsätter".into(),
            on_your_board: "På ditt bräde".into(),
            from: "från".into(),
            to: "till".into(),
            one_minute: "en minut".into(),
            one_second: "en sekund".into(),
            low_time: "{side} har {time} kvar".into(),
            clock_started: "Klockan startad".into(),
            faster: "Snabbare".into(),
            slower: "Långsammare".into(),
            louder: "Högre".into(),
            quieter: "Tystare".into(),
            voice_limit: "Gränsen nådd".into(),
            keys_intro: "Tangenter".into(),
            long_press: "länge".into(),
            claim_with_move: "Krav med nästa drag".into(),
            waiting_for_move: "Väntar på ert drag".into(),
            may_claim_win: "{side} kan kräva vinst".into(),
            used: "förbrukat".into(),
            record_repaired: "Protokollet reparerat".into(),
            one_entry_lost: "1 post förlorad".into(),
            entries_lost: "poster förlorade".into(),
            record_unreadable: "Protokollet kan inte läsas".into(),
            storage_full: "Lagringen full".into(),
            storage_free: "Lagringen ledig igen".into(),
            record_failed: "Protokollet kan inte skrivas".into(),
            record_written: "Protokollet skrivs igen".into(),
            commands: s([
                "senaste drag",
                "drag",
                "tid",
                "vid draget",
                "ställning",
                "rad",
                "linje",
                "ruta",
                "förvandling",
                "remi",
                "krav",
                "ge upp",
                "justerar",
                "paus",
                "fortsätt",
                "nytt parti",
                "ta tillbaka",
                "hjälp",
                "klocka",
                "starta klockan",
                "paus eller fortsätt",
                "snabbare",
                "långsammare",
                "högre",
                "tystare",
            ]),
        }
    }

    pub fn piece(&self, r: Role) -> &str {
        &self.pieces[match r {
            Role::King => 0,
            Role::Queen => 1,
            Role::Rook => 2,
            Role::Bishop => 3,
            Role::Knight => 4,
            Role::Pawn => 5,
        }]
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

/// Begins every sentence of `text` with a capital letter: the first letter of the text and the
/// first after a full stop, question or exclamation mark and a space ("noch 5 Minuten" →
/// "Noch 5 Minuten"). Nothing else changes; a sentence that begins with a number stays so.
pub fn sentences(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    let mut start = true;
    let mut prev = ' ';
    for c in text.chars() {
        if c.is_whitespace() {
            if matches!(prev, '.' | '!' | '?') {
                start = true;
            }
        } else if std::mem::take(&mut start) && c.is_lowercase() {
            out.extend(c.to_uppercase());
            prev = c;
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Builds every sentence the daemon speaks, in one language and style.
#[derive(Clone, Debug)]
pub struct Phrases {
    pub words: Words,
    pub style: Style,
    pub lang: Lang,
}

/// Appends a word with a separating space.
fn push(out: &mut String, w: &str) {
    if w.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(w);
}

impl Phrases {
    pub fn new(lang: Lang, style: Style, files: FileWords) -> Phrases {
        Phrases {
            words: Words::new(lang, files),
            style,
            lang,
        }
    }

    pub fn push_square(&self, out: &mut String, sq: Square) {
        push(out, self.words.file(sq.file()));
        push(out, self.words.rank(sq.rank()));
    }

    pub fn square(&self, sq: Square) -> String {
        let mut s = String::new();
        self.push_square(&mut s, sq);
        s
    }

    /// The announcement of a move, given its SAN (with suffix) and the move itself, as a
    /// sentence (its first letter a capital).
    pub fn announce(&self, san: &SanPlus, m: Move) -> String {
        let w = &self.words;
        let mut out = String::with_capacity(48);
        match san.san {
            San::Castle(CastlingSide::KingSide) => push(&mut out, &w.short_castling),
            San::Castle(CastlingSide::QueenSide) => push(&mut out, &w.long_castling),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            } => {
                if role != Role::Pawn {
                    push(&mut out, w.piece(role));
                }
                match (self.style, m.from()) {
                    (Style::Long, Some(from)) => self.push_square(&mut out, from),
                    _ => {
                        if let Some(f) = file {
                            push(&mut out, w.file(f));
                        }
                        if let Some(r) = rank {
                            push(&mut out, w.rank(r));
                        }
                    }
                }
                if capture {
                    push(&mut out, &w.capture);
                }
                self.push_square(&mut out, to);
                if let Some(p) = promotion {
                    push(&mut out, w.piece(p));
                }
                if matches!(m, Move::EnPassant { .. }) {
                    push(&mut out, &w.en_passant);
                }
            }
            San::Put { .. } | San::Null => {}
        }
        match san.suffix {
            Some(Suffix::Check) => push(&mut out, &w.check),
            Some(Suffix::Checkmate) => push(&mut out, &w.checkmate),
            None => {}
        }
        // An announcement is a sentence of its own ("Castles kingside", "Echo four").
        sentences(&out)
    }

    /// "Feld Hector vier flackert": the board keeps reporting a square.
    pub fn square_flickers(&self, sq: Square) -> String {
        sentences(
            &self
                .words
                .square_flickers
                .replace("{square}", &self.square(sq)),
        )
    }

    /// "Springer Felix drei": a piece and where it stands.
    pub fn piece_on(&self, role: Role, sq: Square) -> String {
        let mut out = self.words.piece(role).to_string();
        self.push_square(&mut out, sq);
        out
    }

    pub fn game_over(&self, winner: Option<Color>, reason: &str) -> String {
        let w = &self.words;
        let why = match reason {
            "checkmate" => &w.checkmate,
            "stalemate" => &w.stalemate,
            "dead_position" => &w.dead_position,
            "fivefold_repetition" => &w.fivefold,
            "seventyfive_moves" => &w.seventyfive,
            "threefold_repetition" => &w.threefold,
            "fifty_moves" => &w.fifty_moves,
            "agreement" => &w.agreement,
            "resignation" => &w.resignation,
            "time_forfeit" => &w.time_forfeit,
            _ => &w.illegal_moves,
        };
        // `{side}` in the words of an ending is the side that lost ("{side} ger upp"); in a
        // draw it is left out.
        let loser = winner.map_or("", |c| w.color(!c));
        let why = why.replace("{side}", loser);
        let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
        sentences(&match winner {
            Some(c) => format!("{why}. {} {}", w.color(c), w.wins),
            None => format!("{why}. {}", w.draw),
        })
    }

    /// Guidance for a board that differs from the game: what is missing where, what is extra.
    pub fn mismatch(&self, missing: &[(Square, Option<Role>)], extra: &[Square]) -> String {
        let w = &self.words;
        let mut out = w.check_board.clone();
        if !missing.is_empty() {
            let _ = write!(out, ". {}:", w.missing);
            for (i, (sq, role)) in missing.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(r) = role {
                    push(&mut out, w.piece(*r));
                    push(&mut out, &w.on);
                }
                self.push_square(&mut out, *sq);
            }
        }
        if !extra.is_empty() {
            let _ = write!(out, ". {}:", w.extra);
            for (i, sq) in extra.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                self.push_square(&mut out, *sq);
            }
        }
        sentences(&out)
    }

    /// Two boards: the move to execute on one's own board, whole (F2.1): "Auf Ihrem Brett:
    /// Springer von Gustav eins nach Felix drei".
    pub fn on_your_board(&self, m: Move) -> String {
        let w = &self.words;
        let what = match m {
            Move::Castle { king, rook } => {
                if rook.file() > king.file() {
                    w.short_castling.clone()
                } else {
                    w.long_castling.clone()
                }
            }
            _ => {
                let mut s = w.piece(m.role()).to_string();
                push(&mut s, &w.from);
                self.push_square(&mut s, m.from().unwrap_or(m.to()));
                push(&mut s, &w.to);
                self.push_square(&mut s, m.to());
                if let Some(p) = m.promotion() {
                    push(&mut s, w.piece(p));
                }
                if m.is_en_passant() {
                    push(&mut s, &w.en_passant);
                }
                s
            }
        };
        sentences(&format!("{}: {what}", w.on_your_board))
    }

    /// A duration as "4 Minuten 30 Sekunden".
    pub fn duration(&self, ms: i64) -> String {
        let secs = (ms.max(0) + 999) / 1000;
        let w = &self.words;
        let minutes = |m: i64| w.count(m as u64, &w.one_minute, &w.minutes);
        let seconds = |s: i64| w.count(s as u64, &w.one_second, &w.seconds);
        match (secs / 60, secs % 60) {
            (0, s) => seconds(s),
            (m, 0) => minutes(m),
            (m, s) => format!("{} {}", minutes(m), seconds(s)),
        }
    }

    /// The record repaired at start, and how many of its entries were lost, if any:
    /// "Aufzeichnung repariert. 3 Einträge verloren".
    pub fn record_repaired(&self, lost: usize) -> String {
        let w = &self.words;
        sentences(&match lost {
            0 => w.record_repaired.clone(),
            n => format!(
                "{}. {}",
                w.record_repaired,
                w.count(n as u64, &w.one_entry_lost, &w.entries_lost)
            ),
        })
    }

    /// A low-time warning: "Weiß noch eine Minute".
    pub fn low_time(&self, side: Color, left_ms: i64) -> String {
        sentences(
            &self
                .words
                .low_time
                .replace("{side}", self.words.color(side))
                .replace("{time}", &self.duration(left_ms)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    fn say(lang: Lang, style: Style, fen: &str, san: &str) -> String {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        let sp = SanPlus::from_move(pos, m);
        Phrases::new(lang, style, FileWords::Phonetic).announce(&sp, m)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    /// The SAN table of docs/speech.md: a position for each row, and the words in every
    /// language, written out by hand from the spec's word tables.
    const TABLE: [(&str, &str, [&str; 4]); 13] = [
        (
            START,
            "e4",
            ["Eva vier", "Eva four", "Eva patru", "Eva fyra"],
        ),
        (
            START,
            "Nf3",
            [
                "Springer Felix drei",
                "Knight Felix three",
                "Cal Felix trei",
                "Springare Felix tre",
            ],
        ),
        (
            "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
            "exd5",
            [
                "Eva schlägt David fünf",
                "Eva takes David five",
                "Eva ia David cinci",
                "Eva slår David fem",
            ],
        ),
        (
            "rnbqk1nr/pppp1ppp/8/4p3/1b2P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 3 3",
            "Bxc3",
            [
                "Läufer schlägt Cesar drei",
                "Bishop takes Cesar three",
                "Nebun ia Cesar trei",
                "Löpare slår Cesar tre",
            ],
        ),
        (
            "rnbqkbnr/ppp1pppp/8/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq - 1 2",
            "Nbd2",
            [
                "Springer Bella David zwei",
                "Knight Bella David two",
                "Cal Bella David doi",
                "Springare Bella David två",
            ],
        ),
        (
            "6k1/5ppp/8/8/8/4R3/5PPP/4R1K1 w - - 0 1",
            "R1e2",
            [
                "Turm eins Eva zwei",
                "Rook one Eva two",
                "Turn unu Eva doi",
                "Torn ett Eva två",
            ],
        ),
        (
            "8/k7/6K1/8/4Q2Q/8/8/4r2Q w - - 0 1",
            "Qh4xe1",
            [
                "Dame Hector vier schlägt Eva eins",
                "Queen Hector four takes Eva one",
                "Damă Hector patru ia Eva unu",
                "Dam Hector fyra slår Eva ett",
            ],
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "O-O",
            [
                "Kurze Rochade",
                "Castles kingside",
                "Rocada mică",
                "Kort rockad",
            ],
        ),
        (
            "8/3k4/8/8/8/8/8/R3K3 w Q - 0 1",
            "O-O-O+",
            [
                "Lange Rochade Schach",
                "Castles queenside check",
                "Rocada mare șah",
                "Lång rockad schack",
            ],
        ),
        (
            "8/4P3/8/8/8/8/k7/7K w - - 0 1",
            "e8=Q",
            [
                "Eva acht Dame",
                "Eva eight Queen",
                "Eva opt Damă",
                "Eva åtta Dam",
            ],
        ),
        (
            "7k/7p/8/8/8/8/1pK5/R7 b - - 0 1",
            "bxa1=N+",
            [
                "Bella schlägt Anna eins Springer Schach",
                "Bella takes Anna one Knight check",
                "Bella ia Anna unu Cal șah",
                "Bella slår Anna ett Springare schack",
            ],
        ),
        (
            "rnbqkbnr/ppp1p1pp/5p2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 1",
            "exd6",
            [
                "Eva schlägt David sechs en passant",
                "Eva takes David six en passant",
                "Eva ia David șase en passant",
                "Eva slår David sex en passant",
            ],
        ),
        (
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "Qxf7#",
            [
                "Dame schlägt Felix sieben Schachmatt",
                "Queen takes Felix seven checkmate",
                "Damă ia Felix șapte mat",
                "Dam slår Felix sju schackmatt",
            ],
        ),
    ];

    #[test]
    fn every_row_of_the_speech_table_in_every_language() {
        for (fen, san, said) in TABLE {
            let german = said[0];
            assert_eq!(
                say(Lang::AppendixF, Style::Short, fen, san),
                german,
                "appendix-f {san}"
            );
            assert_eq!(say(Lang::De, Style::Short, fen, san), german, "de {san}");
            assert_eq!(say(Lang::En, Style::Short, fen, san), said[1], "en {san}");
            assert_eq!(say(Lang::Ro, Style::Short, fen, san), said[2], "ro {san}");
            assert_eq!(say(Lang::Sv, Style::Short, fen, san), said[3], "sv {san}");
        }
    }

    #[test]
    fn files_can_be_nato_words_or_letters() {
        let pos: Chess = Chess::default();
        let m = "Nf3".parse::<San>().unwrap().to_move(&pos).unwrap();
        let sp = SanPlus::from_move(pos, m);
        assert_eq!(
            Phrases::new(Lang::En, Style::Short, FileWords::Nato).announce(&sp, m),
            "Knight foxtrot three"
        );
        assert_eq!(
            Phrases::new(Lang::De, Style::Long, FileWords::Letters).announce(&sp, m),
            "Springer g eins f drei"
        );
    }

    #[test]
    fn long_style_names_the_from_square() {
        assert_eq!(
            say(Lang::AppendixF, Style::Long, START, "Nf3"),
            "Springer Gustav eins Felix drei"
        );
        assert_eq!(
            say(Lang::AppendixF, Style::Long, START, "e4"),
            "Eva zwei Eva vier"
        );
        let fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
        assert_eq!(
            say(Lang::AppendixF, Style::Long, fen, "exd5"),
            "Eva vier schlägt David fünf"
        );
    }

    #[test]
    fn other_languages_use_their_tables() {
        assert_eq!(
            say(Lang::En, Style::Short, START, "Nf3"),
            "Knight Felix three"
        );
        assert_eq!(
            say(Lang::Sv, Style::Short, START, "Nf3"),
            "Springare Felix tre"
        );
        assert_eq!(say(Lang::Ro, Style::Short, START, "e4"), "Eva patru");
        let w = Words::new(Lang::En, FileWords::Nato);
        assert_eq!(w.file(File::C), "charlie");
    }

    #[test]
    fn every_word_can_be_overridden_by_key() {
        let mut w = Words::new(Lang::AppendixF, FileWords::Phonetic);
        w.set("capture", &toml::Value::String("nimmt".into()))
            .unwrap();
        assert_eq!(w.capture, "nimmt");
        let files: Vec<toml::Value> = ["A", "B", "C", "D", "E", "F", "G", "H"]
            .iter()
            .map(|s| toml::Value::String(s.to_string()))
            .collect();
        w.set("files", &toml::Value::Array(files)).unwrap();
        assert_eq!(w.file(File::H), "H");
        assert!(w.set("files", &toml::Value::Array(vec![])).is_err());
        assert!(w.set("capture", &toml::Value::Integer(3)).is_err());
        assert!(w
            .set("captur", &toml::Value::String("x".into()))
            .unwrap_err()
            .contains("capture"));
        // Every key is settable, and every text of the table is listed.
        for key in Words::KEYS
            .iter()
            .filter(|k| !matches!(**k, "files" | "ranks" | "pieces" | "commands"))
        {
            w.set(key, &toml::Value::String(format!("<{key}>")))
                .unwrap();
        }
        let texts = w.all_texts();
        assert_eq!(
            texts.len(),
            8 + 8 + 6 + COMMAND_COUNT + Words::KEYS.len() - 4
        );
        assert!(texts.contains(&"<board_lost>"));
    }

    #[test]
    fn a_flickering_square_is_named_as_squares_are_spoken() {
        let say = |lang, files| Phrases::new(lang, Style::Short, files).square_flickers(Square::E4);
        assert_eq!(
            say(Lang::AppendixF, FileWords::Phonetic),
            "Feld Eva vier flackert"
        );
        assert_eq!(
            say(Lang::En, FileWords::Nato),
            "Square echo four is flickering"
        );
        assert_eq!(
            say(Lang::Ro, FileWords::Phonetic),
            "Câmpul Eva patru pâlpâie"
        );
        assert_eq!(say(Lang::Sv, FileWords::Letters), "Rutan e fyra flimrar");
    }

    #[test]
    fn the_record_repair_says_how_many_entries_were_lost() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        assert_eq!(de.record_repaired(0), "Aufzeichnung repariert");
        assert_eq!(
            de.record_repaired(1),
            "Aufzeichnung repariert. 1 Eintrag verloren"
        );
        assert_eq!(
            de.record_repaired(3),
            "Aufzeichnung repariert. 3 Einträge verloren"
        );
        let ro = Phrases::new(Lang::Ro, Style::Short, FileWords::Phonetic);
        assert_eq!(
            ro.record_repaired(1),
            "Înregistrare reparată. O intrare pierdută"
        );
        assert_eq!(
            ro.record_repaired(20),
            "Înregistrare reparată. 20 de intrări pierdute"
        );
    }

    #[test]
    fn durations_round_up_to_the_second() {
        let p = Phrases::new(Lang::De, Style::Short, FileWords::Phonetic);
        assert_eq!(p.duration(270_000), "4 Minuten 30 Sekunden");
        assert_eq!(p.duration(59_001), "eine Minute");
        assert_eq!(p.duration(61_000), "eine Minute eine Sekunde");
        assert_eq!(p.duration(1_000), "eine Sekunde");
        assert_eq!(p.low_time(Color::White, 60_000), "Weiß noch eine Minute");
        assert_eq!(p.low_time(Color::Black, 10_000), "Schwarz noch 10 Sekunden");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(en.low_time(Color::White, 300_000), "White: 5 minutes left");
        assert_eq!(p.duration(9_500), "10 Sekunden");
    }

    #[test]
    fn english_castles_kingside_and_queenside() {
        let castle = |lang| {
            say(
                lang,
                Style::Short,
                "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
                "O-O",
            )
        };
        assert_eq!(castle(Lang::En), "Castles kingside");
        assert_eq!(
            say(
                Lang::En,
                Style::Long,
                "8/3k4/8/8/8/8/8/R3K3 w Q - 0 1",
                "O-O-O+"
            ),
            "Castles queenside check"
        );
        // Appendix F keeps its own words.
        assert_eq!(castle(Lang::AppendixF), "Kurze Rochade");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let m = Move::Castle {
            king: Square::E1,
            rook: Square::A1,
        };
        assert_eq!(en.on_your_board(m), "On your board: castles queenside");
    }

    #[test]
    fn romanian_counts_from_twenty_take_de() {
        let ro = Words::new(Lang::Ro, FileWords::Phonetic);
        let moves = |n| ro.count(n, &ro.one_move, &ro.moves_made);
        assert_eq!(moves(0), "0 mutări");
        assert_eq!(moves(1), "o mutare");
        assert_eq!(moves(2), "2 mutări");
        assert_eq!(moves(19), "19 mutări");
        assert_eq!(moves(20), "20 de mutări");
        assert_eq!(moves(25), "25 de mutări");
        assert_eq!(moves(99), "99 de mutări");
        assert_eq!(moves(100), "100 de mutări");
        assert_eq!(moves(101), "101 mutări");
        assert_eq!(moves(119), "119 mutări");
        assert_eq!(moves(120), "120 de mutări");
        assert_eq!(moves(200), "200 de mutări");
        assert_eq!(moves(1_005), "1005 mutări");
        let p = Phrases::new(Lang::Ro, Style::Short, FileWords::Phonetic);
        assert_eq!(p.duration(51_000), "51 de secunde");
        assert_eq!(p.duration(19_000), "19 secunde");
        assert_eq!(p.duration(20 * 60_000), "20 de minute");
        assert_eq!(p.duration(19 * 60_000 + 2_000), "19 minute 2 secunde");
        assert_eq!(
            p.duration(90 * 60_000 + 30_000),
            "90 de minute 30 de secunde"
        );
        assert_eq!(p.duration(61_000), "un minut o secundă");
        assert_eq!(
            p.low_time(Color::Black, 25_000),
            "Negrul mai are 25 de secunde"
        );
        // The other languages have no such word.
        let de = Phrases::new(Lang::De, Style::Short, FileWords::Phonetic);
        assert_eq!(de.duration(25 * 60_000), "25 Minuten");
        let w = &de.words;
        assert_eq!(w.count(25, &w.one_move, &w.moves_made), "25 Züge");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(en.duration(51_000), "51 seconds");
        let sv = Phrases::new(Lang::Sv, Style::Short, FileWords::Phonetic);
        assert_eq!(sv.duration(20 * 60_000), "20 minuter");
    }

    #[test]
    fn romanian_words_of_the_laws() {
        let ro = Words::new(Lang::Ro, FileWords::Phonetic);
        // Art. 2.4 "coloană", Art. 4.2 "j'adoube" or "aranjez"; a takeback is no retreat.
        assert_eq!(ro.file_word, "Coloana");
        assert_eq!(ro.adjust, "Aranjez");
        assert_eq!(ro.takeback, "Mutare luată înapoi");
        let named = |c: &str| {
            ro.commands[crate::control::COMMAND_NAMES
                .iter()
                .position(|n| *n == c)
                .unwrap()]
            .clone()
        };
        assert_eq!(named("file"), "coloană");
        assert_eq!(named("adjust"), "aranjez");
        assert_eq!(named("takeback"), "mutare luată înapoi");
        for word in ["coloană", "aranjez", "mutare luată înapoi"] {
            assert!(ro.help.contains(word), "{word} in the help");
        }
        for text in ro.all_texts() {
            for old in [
                "verticală",
                "Verticala",
                "ajustez",
                "retragere",
                "Retragerea",
                "retrasă",
            ] {
                assert!(!text.contains(old), "{old} in {text:?}");
            }
        }
    }

    #[test]
    fn swedish_words_of_the_laws() {
        let sv = Phrases::new(Lang::Sv, Style::Short, FileWords::Phonetic);
        let w = &sv.words;
        assert_eq!(w.checkmate, "schackmatt");
        assert_eq!(
            sv.game_over(Some(Color::White), "resignation"),
            "Svart ger upp. Vit vinner"
        );
        assert_eq!(
            sv.game_over(Some(Color::Black), "resignation"),
            "Vit ger upp. Svart vinner"
        );
        assert_eq!(
            sv.game_over(Some(Color::White), "checkmate"),
            "Schackmatt. Vit vinner"
        );
        // Art. 9.5: "Om kravet visar sig vara riktigt / oriktigt".
        assert_eq!(w.claim_valid, "Kravet är riktigt");
        assert_eq!(w.claim_invalid, "Kravet är oriktigt");
        assert_eq!(w.takeback, "Draget återtaget");
        let claim = crate::control::COMMAND_NAMES
            .iter()
            .position(|n| *n == "claim")
            .unwrap();
        assert_eq!(w.commands[claim], "krav");
        assert!(w.help.contains(", krav, ge upp,"), "{}", w.help);
        for text in w.all_texts() {
            assert!(
                !text.to_lowercase().contains("reklamation")
                    && !text.contains("schack matt")
                    && !text.contains("Uppgivet"),
                "{text:?}"
            );
        }
        // The other languages still name only the winner.
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        assert_eq!(
            en.game_over(Some(Color::White), "resignation"),
            "Resignation. White wins"
        );
    }

    #[test]
    fn sentences_begin_with_a_capital() {
        assert_eq!(sentences("noch 5 Minuten"), "Noch 5 Minuten");
        assert_eq!(sentences("leer"), "Leer");
        assert_eq!(
            sentences("o mutare. negrul la mutare"),
            "O mutare. Negrul la mutare"
        );
        assert_eq!(sentences("5 Züge. Weiß am Zug"), "5 Züge. Weiß am Zug");
        assert_eq!(sentences("Touch move: castling"), "Touch move: castling");
        assert_eq!(
            sentences("1. Eva vier, 1... echo five"),
            "1. Eva vier, 1... Echo five"
        );
        assert_eq!(sentences("ärger! über? ja"), "Ärger! Über? Ja");
        assert_eq!(sentences(""), "");
    }

    /// Whether `text` begins as a sentence does: with a capital letter (or a number).
    fn begins_a_sentence(text: &str) -> bool {
        text.chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
    }

    #[test]
    fn every_announcement_begins_with_a_capital_in_every_language() {
        let reasons = [
            "checkmate",
            "stalemate",
            "dead_position",
            "fivefold_repetition",
            "seventyfive_moves",
            "threefold_repetition",
            "fifty_moves",
            "agreement",
            "resignation",
            "time_forfeit",
            "illegal_moves",
        ];
        let castle = Move::Castle {
            king: Square::E1,
            rook: Square::H1,
        };
        let push = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        for lang in [Lang::AppendixF, Lang::De, Lang::En, Lang::Ro, Lang::Sv] {
            for files in [FileWords::Phonetic, FileWords::Nato, FileWords::Letters] {
                let p = Phrases::new(lang, Style::Short, files);
                let mut said = Vec::new();
                for (fen, san, _) in TABLE {
                    for style in [Style::Short, Style::Long] {
                        let pos: Chess = fen
                            .parse::<Fen>()
                            .unwrap()
                            .into_position(CastlingMode::Standard)
                            .unwrap();
                        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
                        let sp = SanPlus::from_move(pos, m);
                        let p = Phrases::new(lang, style, files);
                        said.push(p.announce(&sp, m));
                    }
                }
                for reason in reasons {
                    for winner in [Some(Color::White), Some(Color::Black), None] {
                        said.push(p.game_over(winner, reason));
                    }
                }
                for ms in [0, 1_000, 25_000, 60_000, 1_500_000] {
                    said.push(p.low_time(Color::White, ms));
                    said.push(p.low_time(Color::Black, ms));
                }
                said.push(p.mismatch(&[(Square::E4, Some(Role::Pawn))], &[Square::E5]));
                said.push(p.mismatch(&[], &[Square::A1]));
                said.push(p.on_your_board(castle));
                said.push(p.on_your_board(push));
                said.push(p.piece_on(Role::Knight, Square::F3));
                said.push(p.square_flickers(Square::A1));
                for lost in [0, 1, 3, 20] {
                    said.push(p.record_repaired(lost));
                }
                // What the engine says alone, as a whole answer.
                let w = &p.words;
                for text in [
                    &w.to_move,
                    &w.empty,
                    &w.one_move,
                    &w.must_castle,
                    &w.draw_offer,
                ] {
                    said.push(sentences(text));
                }
                for text in [
                    &w.restored,
                    &w.new_game,
                    &w.claim_valid,
                    &w.claim_invalid,
                    &w.draw_offer_lapsed,
                    &w.takeback,
                    &w.adjust,
                    &w.no_takeback,
                    &w.no_move_yet,
                    &w.starting,
                    &w.board_connected,
                    &w.board_lost,
                    &w.board_silent,
                    &w.board_reconnected,
                    &w.board_waiting,
                    &w.board_no_permission,
                    &w.board_not_a_tty,
                    &w.board_port_error,
                    &w.confirm,
                    &w.paused,
                    &w.resumed,
                    &w.help,
                    &w.game_resumed,
                    &w.clock_started,
                    &w.faster,
                    &w.slower,
                    &w.louder,
                    &w.quieter,
                    &w.voice_limit,
                    &w.illegal_move,
                    &w.touch_move,
                    &w.check_board,
                    &w.record_unreadable,
                    &w.storage_full,
                    &w.storage_free,
                    &w.record_failed,
                    &w.record_written,
                ] {
                    said.push(text.clone());
                }
                for text in said {
                    assert!(
                        begins_a_sentence(&text),
                        "{} {files:?}: {text:?}",
                        lang.name()
                    );
                }
            }
        }
    }
}
