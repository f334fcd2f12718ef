//! Keys and buttons mapped to commands, with short and long presses.
//!
//! A key map binds a key (a Linux key name such as `KP0`, or a GPIO button) to a command for a
//! short press and, optionally, another for a long press. A key without a long binding acts as
//! soon as it goes down; a key with one acts when it is released (short) or when it has been held
//! for the long-press time (long), so the player hears the answer while still holding it.

use std::collections::BTreeMap;

use crate::engine::Millis;
use crate::words::Phrases;

/// Linux input key codes (`KEY_*` in linux/input-event-codes.h) of the keys a numeric keypad or
/// a keyboard has, by name without the `KEY_` prefix.
pub const KEY_CODES: &[(&str, u16)] = &[
    ("ESC", 1),
    ("1", 2),
    ("2", 3),
    ("3", 4),
    ("4", 5),
    ("5", 6),
    ("6", 7),
    ("7", 8),
    ("8", 9),
    ("9", 10),
    ("0", 11),
    ("MINUS", 12),
    ("EQUAL", 13),
    ("BACKSPACE", 14),
    ("TAB", 15),
    ("Q", 16),
    ("W", 17),
    ("E", 18),
    ("R", 19),
    ("T", 20),
    ("Y", 21),
    ("U", 22),
    ("I", 23),
    ("O", 24),
    ("P", 25),
    ("ENTER", 28),
    ("A", 30),
    ("S", 31),
    ("D", 32),
    ("F", 33),
    ("G", 34),
    ("H", 35),
    ("J", 36),
    ("K", 37),
    ("L", 38),
    ("Z", 44),
    ("X", 45),
    ("C", 46),
    ("V", 47),
    ("B", 48),
    ("N", 49),
    ("M", 50),
    ("KPASTERISK", 55),
    ("SPACE", 57),
    ("F1", 59),
    ("F2", 60),
    ("F3", 61),
    ("F4", 62),
    ("F5", 63),
    ("F6", 64),
    ("F7", 65),
    ("F8", 66),
    ("F9", 67),
    ("F10", 68),
    ("NUMLOCK", 69),
    ("KP7", 71),
    ("KP8", 72),
    ("KP9", 73),
    ("KPMINUS", 74),
    ("KP4", 75),
    ("KP5", 76),
    ("KP6", 77),
    ("KPPLUS", 78),
    ("KP1", 79),
    ("KP2", 80),
    ("KP3", 81),
    ("KP0", 82),
    ("KPDOT", 83),
    ("F11", 87),
    ("F12", 88),
    ("KPENTER", 96),
    ("KPSLASH", 98),
    ("UP", 103),
    ("LEFT", 105),
    ("RIGHT", 106),
    ("DOWN", 108),
    ("KPEQUAL", 117),
    ("KPCOMMA", 121),
];

/// The code of a key name (`KP0`, `kpenter`, `KEY_SPACE`).
pub fn key_code(name: &str) -> Option<u16> {
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("KEY_").unwrap_or(&upper);
    KEY_CODES.iter().find(|(n, _)| *n == bare).map(|(_, c)| *c)
}

/// The name of a key code, if it is one of [`KEY_CODES`].
pub fn key_name(code: u16) -> Option<&'static str> {
    KEY_CODES.iter().find(|(_, c)| *c == code).map(|(n, _)| *n)
}

/// How a key is named in the spoken help: a sign by its word in the language (a voice reads
/// no "." or "*"), a digit or a letter as it is.
fn spoken_key(name: &str, phrases: &Phrases) -> String {
    let twin = match name {
        "KPENTER" => "ENTER",
        "MINUS" => "KPMINUS",
        "EQUAL" => "KPEQUAL",
        other => other,
    };
    match crate::words::KEY_NAMES.iter().position(|k| *k == twin) {
        Some(i) => phrases.words.key_names[i].clone(),
        None => name.strip_prefix("KP").unwrap_or(name).to_string(),
    }
}

/// What a key does: a command for a short press, and one for a long press.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    pub short: Option<String>,
    pub long: Option<String>,
}

/// The key map of a keypad or keyboard: key code to binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyMap(pub BTreeMap<u16, Binding>);

/// The default key map (README "Keypad"): a numeric keypad, with the digit row and Enter of a
/// keyboard doing the same as the keypad's.
pub const DEFAULT_KEYS: &[(&str, &str, Option<&str>)] = &[
    ("KP0", "last", Some("turn")),
    ("KP1", "time", Some("moves 10")),
    ("KP2", "position", Some("position white")),
    ("KP3", "moves 5", Some("position black")),
    ("KP4", "draw", Some("resign")),
    ("KP5", "claim", Some("takeback")),
    ("KP6", "promote knight", Some("new-game")),
    // (Long: training help against the computer, casual mode.)
    ("KP7", "promote queen", Some("hint")),
    ("KP8", "promote rook", Some("evaluate")),
    ("KP9", "promote bishop", Some("switch")),
    // (Long: explore the board, the digits a compass, until . or Enter.)
    ("KPDOT", "adjust", Some("explore")),
    ("KPENTER", "clock", Some("toggle-pause")),
    // (Long: the opponent's touches since the last move, Appendix F2.9 (e).)
    ("KPPLUS", "volume up", Some("touches")),
    // (Long: the sentence being said stops; so does the Backspace key.)
    ("KPMINUS", "volume down", Some("silence")),
    // (Long: the material balance and the pieces captured.)
    ("KPASTERISK", "rate up", Some("material")),
    // (Long: a move by its number: the digits, then Enter.)
    ("KPSLASH", "rate down", Some("move")),
    // (Short: the help a key at a time, 6 next, 4 back, any key says what it does, until . or
    // Enter. Long: who plays.)
    ("NUMLOCK", "help keys", Some("players")),
    ("BACKSPACE", "silence", None),
];

impl Default for KeyMap {
    fn default() -> KeyMap {
        let mut map = BTreeMap::new();
        for (name, short, long) in DEFAULT_KEYS {
            let binding = Binding {
                short: Some(short.to_string()),
                long: long.map(str::to_string),
            };
            if let Some(code) = key_code(name) {
                map.insert(code, binding.clone());
            }
            // The digit row and Enter of a keyboard.
            let twin = match *name {
                "KPENTER" => Some("ENTER".to_string()),
                n => n
                    .strip_prefix("KP")
                    .filter(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_digit())
                    .map(str::to_string),
            };
            if let Some(code) = twin.as_deref().and_then(key_code) {
                map.insert(code, binding);
            }
        }
        KeyMap(map)
    }
}

impl KeyMap {
    /// The keys as help tells them, one binding each: keypad keys first, and the keyboard's
    /// keys that only repeat one of them left out (their codes are the binding's too).
    pub fn pages(&self) -> Vec<(Vec<u16>, &'static str, &Binding)> {
        let mut keys: Vec<(u16, &'static str, &Binding)> = self
            .0
            .iter()
            .filter_map(|(code, b)| key_name(*code).map(|n| (*code, n, b)))
            .collect();
        keys.sort_by_key(|(_, n, _)| (!n.starts_with("KP") && *n != "NUMLOCK", *n));
        let mut pages: Vec<(Vec<u16>, &'static str, &Binding)> = Vec::new();
        for (code, name, b) in keys {
            match pages.iter_mut().find(|(_, _, seen)| *seen == b) {
                Some((codes, _, _)) => codes.push(code),
                None => pages.push((vec![code], name, b)),
            }
        }
        pages
    }

    /// Each key's help, in the order of [`KeyMap::pages`]: "Punkt J'adoube, lang erkunden".
    pub fn key_help(&self, phrases: &Phrases) -> Vec<String> {
        self.pages()
            .into_iter()
            .map(|(_, name, b)| binding_help(&spoken_key(name, phrases), b, phrases))
            .collect()
    }

    /// The help for these keys: "Tasten: 0 letzter Zug, lang am Zug; 1 Zeit, ...".
    pub fn help(&self, phrases: &Phrases) -> String {
        let parts = self.key_help(phrases);
        format!("{}: {}", phrases.words.keys_intro, parts.join("; "))
    }
}

/// "0 letzter Zug, lang am Zug".
pub fn binding_help(key: &str, b: &Binding, phrases: &Phrases) -> String {
    let mut s = key.to_string();
    if let Some(c) = &b.short {
        s.push(' ');
        s.push_str(&spoken_command(c, phrases));
    }
    if let Some(c) = &b.long {
        s.push_str(&format!(
            ", {} {}",
            phrases.words.long_press,
            spoken_command(c, phrases)
        ));
    }
    // (On a key, `move` waits for the number's digits.)
    if [&b.short, &b.long]
        .iter()
        .any(|c| c.as_deref() == Some(NUMBER_ENTRY))
    {
        s.push_str(&format!(": {}", phrases.words.digits_then_enter));
    }
    s
}

/// A command line in words: its name from the language's list, its arguments as words.
pub fn spoken_command(line: &str, phrases: &Phrases) -> String {
    let w = &phrases.words;
    // The longest name the line starts with ("rate up" before "rate").
    let Some(spec) = super::COMMANDS
        .iter()
        .filter(|c| line == c.name || line.starts_with(&format!("{} ", c.name)))
        .max_by_key(|c| c.name.len())
    else {
        return line.to_string();
    };
    let mut out = spoken_name(spec, phrases).to_string();
    for arg in line[spec.name.len()..].split_whitespace() {
        out.push(' ');
        let piece = ["king", "queen", "rook", "bishop", "knight", "pawn"]
            .iter()
            .position(|p| *p == arg.to_ascii_lowercase());
        match (arg.parse::<shakmaty::Color>(), piece) {
            (Ok(side), _) => out.push_str(w.color(side)),
            (Err(_), Some(p)) => out.push_str(&w.pieces[p]),
            (Err(_), None) => out.push_str(arg),
        }
    }
    out
}

/// A command's spoken name, by its words key.
pub fn spoken_name<'a>(spec: &super::Spec, phrases: &'a Phrases) -> &'a str {
    phrases.words.command(spec.words)
}

/// A key went down or up, or was held long enough.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyEvent {
    Down(u16),
    Up(u16),
}

/// Exploring the board from the keypad: the digits are a compass over the board instead of
/// their commands (8 up, 2 down, 4 left, 6 right, 7 9 1 3 the diagonals; held: along the line
/// to the next piece), 5 says who guards the square (held: where its piece can go), 0 then two
/// digits goes to a square (file 1-8 for a-h, then rank), 0 held then a digit 1-6 says where
/// the pieces of a kind stand (pawns, knights, bishops, rooks, queens, kings); `.` or Enter
/// leaves. The other keys keep their commands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Explore {
    Off,
    Compass,
    /// 0 was pressed: the file's digit comes next, then the rank's.
    File,
    Rank(char),
    /// 0 was held: a kind of piece's digit comes next.
    Piece,
}

/// The kinds of piece by their digit after 0 held while exploring, the least valuable first.
const PIECE_DIGITS: [&str; 6] = ["pawn", "knight", "bishop", "rook", "queen", "king"];

/// The compass: a digit's direction.
const COMPASS: [(u8, &str); 8] = [
    (8, "up"),
    (2, "down"),
    (4, "left"),
    (6, "right"),
    (7, "up-left"),
    (9, "up-right"),
    (1, "down-left"),
    (3, "down-right"),
];

/// The digit of a digit key, of the keypad or the digit row.
fn digit(code: u16) -> Option<u8> {
    let name = key_name(code)?;
    let d = name.strip_prefix("KP").unwrap_or(name);
    (d.len() == 1)
        .then(|| d.as_bytes()[0].checked_sub(b'0'))
        .flatten()
        .filter(|d| *d <= 9)
}

/// What a key does while the board is explored, if it does something else then.
fn explore_binding(code: u16) -> Option<Binding> {
    let b = |short: &str, long: Option<String>| Binding {
        short: Some(short.to_string()),
        long,
    };
    if let Some(d) = digit(code) {
        return Some(match COMPASS.iter().find(|(k, _)| *k == d) {
            Some((_, dir)) => b(&format!("step {dir}"), Some(format!("jump {dir}"))),
            None if d == 5 => b("guard", Some("legal".to_string())),
            None => b(SQUARE_ENTRY, Some(PIECE_ENTRY.to_string())),
        });
    }
    matches!(key_name(code)?, "KPDOT" | "KPENTER" | "ENTER").then(|| b("explore", None))
}

/// The keypad's own line for 0 in the compass: a square is entered next (never sent).
const SQUARE_ENTRY: &str = "#square";
/// ... and for 0 held: a kind of piece is entered next (never sent).
const PIECE_ENTRY: &str = "#piece";
/// `move` without its number, on a key: the number's digits come next, then Enter or `.`.
const NUMBER_ENTRY: &str = "move";
/// The largest move number the keys take (more digits are not taken).
const MOST_MOVES: u32 = 9999;

/// Turns key downs and ups into commands, short and long presses told apart by time. Pure: the
/// caller gives the time of each event and calls [`Presses::advance`] at [`Presses::due`].
#[derive(Clone, Debug)]
pub struct Presses {
    map: KeyMap,
    long_ms: Millis,
    /// Keys held: since when, and whether the long press has fired.
    held: BTreeMap<u16, (Millis, bool)>,
    explore: Explore,
    /// The help being walked: the key told last (1 the first; one past the pages, its end).
    help: Option<u32>,
    /// The pages of the walk: the keys' bindings, then the exploration's keys.
    pages: u32,
    /// A move's number being entered (`move` on a key): the digits so far.
    number: Option<u32>,
}

impl Presses {
    pub fn new(map: KeyMap, long_ms: Millis) -> Presses {
        Presses {
            long_ms,
            held: BTreeMap::new(),
            explore: Explore::Off,
            help: None,
            pages: u32::try_from(map.pages().len() + 1).unwrap_or(u32::MAX),
            number: None,
            map,
        }
    }

    /// What `code` does while the help is walked: 6 and 4 the next and the previous key, `.`
    /// and Enter leave, silence still silences, and every other key says what it does.
    fn help_binding(&self, code: u16, at: u32) -> Option<Binding> {
        let say = |line: String| Binding {
            short: Some(line),
            long: None,
        };
        match digit(code) {
            Some(6) => return Some(say(format!("help key {}", (at + 1).min(self.pages + 1)))),
            Some(4) => return Some(say(format!("help key {}", at.saturating_sub(1).max(1)))),
            _ => {}
        }
        if matches!(key_name(code)?, "KPDOT" | "KPENTER" | "ENTER") {
            return Some(say("help end".into()));
        }
        let pages = self.map.pages();
        let page = pages.iter().position(|(codes, _, _)| codes.contains(&code));
        match page {
            Some(i) if pages[i].2.short.as_deref() == Some("silence") => None,
            Some(i) => Some(say(format!("help key {}", i + 1))),
            // A key with nothing to tell does nothing.
            None => Some(Binding::default()),
        }
    }

    /// What `code` does now.
    fn binding(&self, code: u16) -> Option<Binding> {
        if let Some(at) = self.help {
            if let Some(b) = self.help_binding(code, at) {
                return Some(b);
            }
        }
        if self.explore != Explore::Off {
            if let Some(b) = explore_binding(code) {
                return Some(b);
            }
        }
        self.map.0.get(&code).cloned()
    }

    /// A command the keys give: the exploration's own lines are taken here.
    fn give(&mut self, line: String, out: &mut Vec<String>) {
        if line.starts_with("help ") {
            self.help = match line.as_str() {
                "help keys" => Some(1),
                "help end" => None,
                key => key
                    .strip_prefix("help key ")
                    .and_then(|n| n.parse().ok())
                    .or(self.help),
            };
        }
        match line.as_str() {
            SQUARE_ENTRY => self.explore = Explore::File,
            PIECE_ENTRY => self.explore = Explore::Piece,
            NUMBER_ENTRY => {
                self.number = Some(0);
                // (A square or a piece half entered is given up.)
                if self.explore != Explore::Off {
                    self.explore = Explore::Compass;
                }
            }
            "explore" => {
                self.explore = match self.explore {
                    Explore::Off => Explore::Compass,
                    _ => Explore::Off,
                };
                out.push(line);
            }
            _ => out.push(line),
        }
    }

    /// A digit of a square being entered (`None`: the key is no such digit).
    fn square_digit(&mut self, code: u16, out: &mut Vec<String>) -> Option<()> {
        let d = digit(code)?;
        let step = (1..=8).contains(&d).then_some(d);
        self.explore = match (self.explore, step) {
            (Explore::Piece, Some(k)) if k <= 6 => {
                out.push(format!("position {}", PIECE_DIGITS[usize::from(k - 1)]));
                Explore::Compass
            }
            (Explore::File, Some(f)) => Explore::Rank(char::from(b'a' + f - 1)),
            (Explore::Rank(file), Some(r)) => {
                out.push(format!("go {file}{r}"));
                Explore::Compass
            }
            // 0 or 9: no square; the compass again.
            _ => Explore::Compass,
        };
        Some(())
    }

    /// A key pressed while a move's number is entered: a digit is taken, Enter or `.` asks
    /// for the move (none when no digit came); any other key ends the entry and does what it
    /// does. True when the key was taken.
    fn number_key(&mut self, code: u16, out: &mut Vec<String>) -> bool {
        let Some(n) = self.number else {
            return false;
        };
        if let Some(d) = digit(code) {
            let more = n * 10 + u32::from(d);
            self.number = Some(if more <= MOST_MOVES { more } else { n });
            return true;
        }
        self.number = None;
        // (Enter with no digit is what Enter is: the clock pressed, say.)
        if n > 0 && matches!(key_name(code), Some("KPDOT" | "KPENTER" | "ENTER")) {
            out.push(format!("move {n}"));
            return true;
        }
        false
    }

    /// The commands a key event gives at `t`.
    pub fn event(&mut self, t: Millis, e: KeyEvent) -> Vec<String> {
        let mut out = self.advance(t);
        match e {
            KeyEvent::Down(code) => {
                if self.number_key(code, &mut out) {
                    return out;
                }
                // (The help walk's keys come first: 6 and 4 are its own then.)
                if self.help.is_none()
                    && matches!(
                        self.explore,
                        Explore::File | Explore::Rank(_) | Explore::Piece
                    )
                    && self.square_digit(code, &mut out).is_some()
                {
                    return out;
                }
                let Some(b) = self.binding(code) else {
                    return out;
                };
                if self.held.contains_key(&code) {
                    return out;
                }
                if b.long.is_some() {
                    self.held.insert(code, (t, false));
                } else {
                    self.held.insert(code, (t, true));
                    if let Some(line) = b.short {
                        self.give(line, &mut out);
                    }
                }
            }
            KeyEvent::Up(code) => {
                if let Some((_, fired)) = self.held.remove(&code) {
                    if !fired {
                        if let Some(line) = self.binding(code).and_then(|b| b.short) {
                            self.give(line, &mut out);
                        }
                    }
                }
            }
        }
        out
    }

    /// Forgets the keys held (the keypad is gone: their releases will never come), and a
    /// number or a square half entered.
    pub fn release_all(&mut self) {
        self.held.clear();
        self.number = None;
        if matches!(
            self.explore,
            Explore::File | Explore::Rank(_) | Explore::Piece
        ) {
            self.explore = Explore::Compass;
        }
    }

    /// When a held key becomes a long press.
    pub fn due(&self) -> Option<Millis> {
        self.held
            .values()
            .filter(|(_, fired)| !fired)
            .map(|(since, _)| since.saturating_add(self.long_ms))
            .min()
    }

    /// The long presses that are due by `t`.
    pub fn advance(&mut self, t: Millis) -> Vec<String> {
        let mut due = Vec::new();
        for (code, (since, fired)) in self.held.iter_mut() {
            if !*fired && since.saturating_add(self.long_ms) <= t {
                *fired = true;
                due.push(*code);
            }
        }
        let mut out = Vec::new();
        for code in due {
            if let Some(line) = self.binding(code).and_then(|b| b.long) {
                self.give(line, &mut out);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{FileWords, Lang, Style};

    fn kp(n: &str) -> u16 {
        key_code(n).unwrap()
    }

    /// A short press of `key` at `t`: what it gives going down and coming up 50 ms later.
    fn tap(p: &mut Presses, t: Millis, key: &str) -> Vec<String> {
        let mut out = p.event(t, KeyEvent::Down(kp(key)));
        out.extend(p.event(t + 50, KeyEvent::Up(kp(key))));
        out
    }

    /// A long press of `key` at `t` (the long-press time is 800 ms): what it gives going down,
    /// held, and coming up 50 ms after it became long.
    fn hold(p: &mut Presses, t: Millis, key: &str) -> Vec<String> {
        let mut out = p.event(t, KeyEvent::Down(kp(key)));
        out.extend(p.advance(t + 800));
        out.extend(p.event(t + 850, KeyEvent::Up(kp(key))));
        out
    }

    #[test]
    fn key_names_and_codes() {
        assert_eq!(key_code("KP0"), Some(82));
        assert_eq!(key_code("kpenter"), Some(96));
        assert_eq!(key_code("KEY_SPACE"), Some(57));
        assert_eq!(key_code("KP10"), None);
        assert_eq!(key_name(98), Some("KPSLASH"));
        // No two names for one code, no two codes for one name.
        for (i, (n, c)) in KEY_CODES.iter().enumerate() {
            for (m, d) in &KEY_CODES[i + 1..] {
                assert!(n != m && c != d, "{n} {m}");
            }
        }
    }

    #[test]
    fn every_default_binding_is_a_command() {
        for (name, short, long) in DEFAULT_KEYS {
            assert!(key_code(name).is_some(), "{name}");
            for c in std::iter::once(short).chain(long.iter()) {
                assert!(c.parse::<super::super::Parsed>().is_ok(), "{c}");
            }
        }
        let map = KeyMap::default();
        assert_eq!(map.0.get(&kp("0")), map.0.get(&kp("KP0")));
        assert_eq!(map.0.get(&kp("ENTER")), map.0.get(&kp("KPENTER")));
    }

    #[test]
    fn short_and_long_presses() {
        let mut p = Presses::new(KeyMap::default(), 800);
        // No long binding: at once, on the way down.
        assert_eq!(p.event(0, KeyEvent::Down(kp("BACKSPACE"))), ["silence"]);
        assert!(p.event(50, KeyEvent::Up(kp("BACKSPACE"))).is_empty());
        // A long binding: a short press acts on release.
        assert!(p.event(100, KeyEvent::Down(kp("KP0"))).is_empty());
        assert_eq!(p.due(), Some(900));
        assert_eq!(p.event(300, KeyEvent::Up(kp("KP0"))), ["last"]);
        assert_eq!(p.due(), None);
        // Held: the long command when the time is up, nothing on release.
        assert!(p.event(1000, KeyEvent::Down(kp("KP0"))).is_empty());
        assert!(p.advance(1799).is_empty());
        assert_eq!(p.advance(1800), ["turn"]);
        assert!(p.advance(5000).is_empty());
        assert!(p.event(5100, KeyEvent::Up(kp("KP0"))).is_empty());
        // Autorepeat downs of a held key are not new presses; unknown keys do nothing.
        assert!(p.event(6000, KeyEvent::Down(kp("KP4"))).is_empty());
        assert!(p.event(6300, KeyEvent::Down(kp("KP4"))).is_empty());
        assert!(p.event(6400, KeyEvent::Down(kp("Q"))).is_empty());
        assert_eq!(p.event(6500, KeyEvent::Up(kp("KP4"))), ["draw"]);
        // A long press due when another key's event comes is given first.
        assert!(p.event(7000, KeyEvent::Down(kp("KP5"))).is_empty());
        assert_eq!(
            p.event(8000, KeyEvent::Down(kp("BACKSPACE"))),
            ["takeback", "silence"]
        );
    }

    /// Issue 26: a move by its number from the keypad (NVUI's "move N"): the slash held, the
    /// digits, then Enter (or the dot).
    #[test]
    fn a_move_by_its_number_is_the_slash_held_then_digits_then_enter() {
        let mut p = Presses::new(KeyMap::default(), 800);
        // Short: slower, as ever (on release now).
        assert_eq!(tap(&mut p, 0, "KPSLASH"), ["rate down"]);
        assert!(hold(&mut p, 100, "KPSLASH").is_empty());
        assert!(tap(&mut p, 1000, "KP1").is_empty());
        assert!(tap(&mut p, 1100, "2").is_empty());
        // Enter asks for the move, and is no clock press.
        assert_eq!(tap(&mut p, 1200, "KPENTER"), ["move 12"]);
        assert_eq!(tap(&mut p, 1300, "KP1"), ["time"]);
        // No digit: Enter is the clock; another key ends the entry and does what it does.
        assert!(hold(&mut p, 2000, "KPSLASH").is_empty());
        assert_eq!(tap(&mut p, 2900, "KPENTER"), ["clock"]);
        assert!(hold(&mut p, 3000, "KPSLASH").is_empty());
        assert!(tap(&mut p, 3900, "KP3").is_empty());
        assert_eq!(tap(&mut p, 4000, "KPPLUS"), ["volume up"]);
        assert_eq!(tap(&mut p, 4100, "KP3"), ["moves 5"]);
        // The key's help says how.
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let help = KeyMap::default().help(&de);
        assert!(
            help.contains("; Schrägstrich langsamer, lang Zug Nummer: Ziffern, dann Enter; "),
            "{help}"
        );
    }

    #[test]
    fn exploring_makes_the_digits_a_compass_until_dot_or_enter() {
        let mut p = Presses::new(KeyMap::default(), 800);
        // 8 is a promotion's rook until the exploration begins (a long press of the dot).
        assert_eq!(tap(&mut p, 0, "KP8"), ["promote rook"]);
        assert!(p.event(100, KeyEvent::Down(kp("KPDOT"))).is_empty());
        assert_eq!(p.advance(900), ["explore"]);
        assert!(p.event(1000, KeyEvent::Up(kp("KPDOT"))).is_empty());
        assert_eq!(tap(&mut p, 1100, "KP8"), ["step up"]);
        assert_eq!(tap(&mut p, 1200, "1"), ["step down-left"]);
        assert_eq!(tap(&mut p, 1300, "KP5"), ["guard"]);
        // Held: along the line.
        assert!(p.event(1400, KeyEvent::Down(kp("KP6"))).is_empty());
        assert_eq!(p.advance(2200), ["jump right"]);
        assert!(p.event(2300, KeyEvent::Up(kp("KP6"))).is_empty());
        // 0, then file 5 (e), then rank 4: e4. 0 again and 9 cancel an entry.
        assert!(tap(&mut p, 2400, "KP0").is_empty());
        assert!(tap(&mut p, 2500, "KP5").is_empty());
        assert_eq!(tap(&mut p, 2600, "KP4"), ["go e4"]);
        assert!(tap(&mut p, 2700, "KP0").is_empty());
        assert!(tap(&mut p, 2800, "KP9").is_empty());
        assert_eq!(tap(&mut p, 2900, "KP2"), ["step down"]);
        // 5 held: where the piece on the square can go.
        assert!(p.event(2950, KeyEvent::Down(kp("KP5"))).is_empty());
        assert_eq!(p.advance(3750), ["legal"]);
        assert!(p.event(3760, KeyEvent::Up(kp("KP5"))).is_empty());
        // The voice keys keep their commands; the clock key leaves, and is no clock.
        assert_eq!(tap(&mut p, 3800, "KPPLUS"), ["volume up"]);
        assert_eq!(tap(&mut p, 3900, "KPENTER"), ["explore"]);
        assert_eq!(tap(&mut p, 4000, "KP8"), ["promote rook"]);
        // Exploring again: 0 held, then a kind of piece (2: the knights); 7 is no kind.
        assert_eq!(hold(&mut p, 5000, "KPDOT"), ["explore"]);
        assert!(hold(&mut p, 6000, "KP0").is_empty());
        assert_eq!(tap(&mut p, 7000, "KP2"), ["position knight"]);
        assert_eq!(tap(&mut p, 7100, "KP2"), ["step down"]);
        assert!(hold(&mut p, 7200, "KP0").is_empty());
        assert!(tap(&mut p, 8200, "KP7").is_empty());
        assert_eq!(tap(&mut p, 8300, "KP6"), ["step right"]);
        // A square half entered, then the help: 6 walks the help, it enters no file.
        assert!(tap(&mut p, 8400, "KP0").is_empty());
        assert!(p.event(8500, KeyEvent::Down(kp("NUMLOCK"))).is_empty());
        assert_eq!(p.event(8600, KeyEvent::Up(kp("NUMLOCK"))), ["help keys"]);
        assert_eq!(tap(&mut p, 8700, "KP6"), ["help key 2"]);
    }

    #[test]
    fn help_names_every_key_in_words() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let help = KeyMap::default().help(&de);
        assert!(
            help.starts_with("Tasten: 0 letzter Zug, lang am Zug; "),
            "{help}"
        );
        assert!(help.contains("2 Stellung, lang Stellung Weiß"), "{help}");
        assert!(help.contains("7 Umwandlung Dame, lang Hinweis"), "{help}");
        assert!(help.contains("Enter Uhr, lang Pause oder weiter"), "{help}");
        // Signs by their words: a voice reads no "." or "*".
        assert!(help.contains("; Plus lauter, lang Berührungen; "), "{help}");
        assert!(help.contains("; Punkt J'adoube, lang erkunden; "), "{help}");
        assert!(
            help.contains("; Stern schneller, lang Material; "),
            "{help}"
        );
        assert!(
            help.contains("; Num Hilfe Taste für Taste, lang Spieler; "),
            "{help}"
        );
        // The keyboard's digit row repeats the keypad: told once.
        assert_eq!(help.matches("letzter Zug").count(), 1, "{help}");
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let help = KeyMap::default().help(&en);
        assert!(help.contains("1 time, held moves 10"), "{help}");
        assert!(
            help.contains("; slash slower, held move number: digits, then enter; "),
            "{help}"
        );
    }

    #[test]
    fn the_help_walks_the_keys_one_at_a_time() {
        let mut p = Presses::new(KeyMap::default(), 800);
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let pages = KeyMap::default().key_help(&de);
        // The keypad's keys, then the exploration's: the keyboard's twins are not pages.
        let keys = pages.len() as u32 + 1;
        assert_eq!(keys, 19);
        assert_eq!(pages[0], "0 letzter Zug, lang am Zug");
        assert_eq!(pages[1], "1 Zeit, lang Züge 10");
        // Num Lock: the walk begins (on release: the key has a long press).
        assert_eq!(tap(&mut p, 0, "NUMLOCK"), ["help keys"]);
        assert_eq!(tap(&mut p, 100, "KP6"), ["help key 2"]);
        assert_eq!(tap(&mut p, 200, "6"), ["help key 3"]);
        assert_eq!(tap(&mut p, 300, "KP4"), ["help key 2"]);
        assert_eq!(tap(&mut p, 400, "KP4"), ["help key 1"]);
        assert_eq!(tap(&mut p, 500, "KP4"), ["help key 1"]);
        // Any other key says what it does, and does not do it: 5 is no claim, held no
        // takeback; the walk goes on from there.
        let five = 1 + pages.iter().position(|h| h.starts_with("5 ")).unwrap() as u32;
        assert_eq!(tap(&mut p, 600, "KP5"), [format!("help key {five}")]);
        assert!(p.event(700, KeyEvent::Down(kp("KP5"))).len() == 1);
        assert!(p.advance(2000).is_empty());
        assert!(p.event(2100, KeyEvent::Up(kp("KP5"))).is_empty());
        assert_eq!(tap(&mut p, 2200, "KP6"), [format!("help key {}", five + 1)]);
        // Silence still silences.
        assert_eq!(tap(&mut p, 2300, "BACKSPACE"), ["silence"]);
        // Past the last key: the end, and no further.
        for i in 0..30 {
            tap(&mut p, 2400 + i * 100, "KP6");
        }
        assert_eq!(tap(&mut p, 6000, "KP6"), [format!("help key {}", keys + 1)]);
        assert_eq!(tap(&mut p, 6100, "KP4"), [format!("help key {keys}")]);
        // The dot leaves (no j'adoube); then the keys do their commands again.
        assert_eq!(tap(&mut p, 6200, "KPDOT"), ["help end"]);
        assert_eq!(tap(&mut p, 6300, "KP6"), ["promote knight"]);
        assert_eq!(tap(&mut p, 6400, "KP8"), ["promote rook"]);
    }

    /// Every command has its spoken name in the words, looked up by the command's name.
    #[test]
    fn every_command_is_spoken_by_its_name() {
        for name in super::super::COMMAND_NAMES {
            assert!(crate::words::COMMAND_KEYS.contains(&name), "{name}");
        }
        let ro = Phrases::new(Lang::Ro, Style::Short, FileWords::Phonetic);
        assert_eq!(spoken_command("new-game", &ro), "partidă nouă");
        assert_eq!(
            spoken_command("position black knight", &ro),
            "poziție Negrul Cal"
        );
    }
}
