//! One place for settings: the config file and the command line's flags become one validated
//! [`Settings`], here and nowhere else.
//!
//! [`Settings::load`] reads the file (`file.rs`: TOML, each error with its file:line:col), then
//! puts the flags given over it (`flags.rs`), each value checked once. `run` loads its settings
//! this way at start and again at SIGHUP. Each board's own settings are a [`BoardSettings`];
//! the subsystems' settings live with them (`board::gpio_settings`, `control::settings`,
//! `mqtt::MqttSettings`, `opponent::OpponentSettings`, `speech::speaker::SpeechConfig`, the engine's `engine::Settings`), and
//! only the top of the program (the command line, the daemon) uses this module.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::board::gpio_settings::GpioConfig;
use crate::control::settings::ControlConfig;
use crate::mqtt::MqttSettings;
use crate::opponent::OpponentSettings;
use crate::speech::speaker::SpeechConfig;
use crate::words::{FileWords, Lang, Phrases, Style};

mod board;
mod file;
mod flags;

pub use board::BoardSettings;
pub use flags::Flags;

/// Where the daemon looks when `--config` is not given.
pub const DEFAULT_PATH: &str = "/etc/chessboardd/config.toml";

/// The largest config read (a config is a page of text; this refuses `/dev/zero`).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// A config problem (in the file or in a flag); its text is phrased for a person.
#[derive(Debug)]
pub struct ConfigError {
    pub kind: ConfigErrorKind,
}

/// What is wrong, and where.
#[derive(Debug)]
pub enum ConfigErrorKind {
    /// The file cannot be opened: `FILE: cannot read the config: WHY`.
    Unreadable { path: PathBuf, why: String },
    /// The file is not text, or too long, from a place on: `FILE:WHERE: WHAT`.
    NotText { path: PathBuf, at: String },
    /// A value (or the syntax) at a place of the file: `FILE:LINE:COL: KEY: WHAT`.
    Value {
        path: PathBuf,
        line: usize,
        col: usize,
        key: Option<String>,
        what: String,
    },
    /// The file, without a place: `FILE: WHAT`.
    File { path: PathBuf, what: String },
    /// A flag of the command line: `--FLAG: WHAT`.
    Flag { flag: &'static str, what: String },
    /// Settings that do not go together: `WHAT`.
    Mismatch(String),
}

impl ConfigError {
    pub fn new(kind: ConfigErrorKind) -> ConfigError {
        ConfigError { kind }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use ConfigErrorKind::*;
        match &self.kind {
            Unreadable { path, why } => {
                write!(f, "{}: cannot read the config: {why}", path.display())
            }
            NotText { path, at } => write!(f, "{}:{at}", path.display()),
            Value {
                path,
                line,
                col,
                key,
                what,
            } => {
                write!(f, "{}:{line}:{col}: ", path.display())?;
                if let Some(key) = key {
                    write!(f, "{key}: ")?;
                }
                f.write_str(what)
            }
            File { path, what } => write!(f, "{}: {what}", path.display()),
            Flag { flag, what } => write!(f, "{flag}: {what}"),
            Mismatch(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The validated settings: the config file's, with the command line's flags over them.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The engine's: rules, timings, clock, words.
    pub engine: crate::engine::Settings,
    pub lang: Lang,
    pub style: Style,
    pub files: FileWords,
    /// `[speech.words]`: words that replace the language's defaults.
    pub words: Vec<(String, toml::Value)>,
    pub speech: SpeechConfig,
    pub gpio: GpioConfig,
    pub control: ControlConfig,
    /// The boards, at least one: `[board]`, each `[[board]]`, or the one of `--board`.
    pub boards: Vec<BoardSettings>,
    /// The web view's address; `None`: off.
    pub web: Option<String>,
    /// The broker the game is published to; `None`: none.
    pub mqtt: Option<MqttSettings>,
    /// `[mqtt]` as written, with a placeholder address when it has no url: the credentials,
    /// TLS files and prefix that `--mqtt URL` completes.
    mqtt_partial: Option<MqttSettings>,
    /// `[opponent]`: the computer the player plays against; `None`: no computer.
    pub opponent: Option<OpponentSettings>,
    /// `[opponent]` as written (or the defaults), which `--opponent engine` takes.
    opponent_written: OpponentSettings,
}

impl Default for Settings {
    fn default() -> Settings {
        let mut s = Settings {
            engine: crate::engine::Settings::default(),
            lang: Lang::default(),
            style: Style::default(),
            files: FileWords::default(),
            words: Vec::new(),
            speech: SpeechConfig::default(),
            gpio: GpioConfig::default(),
            control: ControlConfig::default(),
            boards: vec![BoardSettings::default()],
            web: None,
            mqtt: None,
            mqtt_partial: None,
            opponent: None,
            opponent_written: OpponentSettings::default(),
        };
        s.rebuild_phrases();
        s
    }
}

impl Settings {
    /// The settings of the config file `file` (`None`: the defaults) with `flags` over them.
    pub fn load(file: Option<&Path>, flags: &Flags) -> Result<Settings, ConfigError> {
        let mut settings = match file {
            Some(path) => file::load(path, &mut Vec::new())?,
            None => Settings::default(),
        };
        settings.apply(flags)?;
        Ok(settings)
    }

    /// Reads and validates a config file alone; also returns its warnings (things `run` takes
    /// but a person should know, like a password sent unencrypted), each with its file:line:col.
    pub fn load_checked(path: &Path) -> Result<(Settings, Vec<String>), ConfigError> {
        let mut warnings = Vec::new();
        let settings = file::load(path, &mut warnings)?;
        Ok((settings, warnings))
    }

    /// Validates config text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Settings, ConfigError> {
        file::parse(path, text, &mut Vec::new())
    }

    /// The board `run` reads when no `--board` is given: the first one's driver and port.
    pub fn board(&self) -> Option<&crate::board::BoardSpec> {
        self.boards.first().and_then(|b| b.spec.as_ref())
    }

    /// The boards' names (the replay's `BOARD:` prefix, the events of several boards).
    pub fn board_names(&self) -> Vec<String> {
        self.boards.iter().map(|b| b.name.clone()).collect()
    }

    /// Who plays on each board (`None`: both, one shared board).
    pub fn players(&self) -> Vec<Option<shakmaty::Color>> {
        self.boards.iter().map(|b| b.player).collect()
    }

    /// Builds the phrases (and the help, which tells the keys) from the language, style and
    /// words, once they are all known.
    fn rebuild_phrases(&mut self) {
        let mut phrases = Phrases::new(self.lang, self.style, self.files);
        for (key, value) in &self.words {
            // Checked when the config was read.
            let _ = Arc::make_mut(&mut phrases.words).set(key, value);
        }
        self.engine.help = self.control.help(&phrases);
        self.engine.help_pages = self.control.help_pages(&phrases);
        self.engine.phrases = phrases;
        self.speech.voice.lang = self.lang;
    }
}

/// The config path to use: the one given, or the default one when it exists.
pub fn resolve(given: Option<&Path>) -> Option<PathBuf> {
    match given {
        Some(p) => Some(p.to_path_buf()),
        None => {
            let p = PathBuf::from(DEFAULT_PATH);
            p.exists().then_some(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::Mode;
    use crate::speech::audio::Earcon;
    use crate::speech::synth::Backend;
    use shakmaty::Color;

    fn err(text: &str) -> String {
        Settings::parse(Path::new("test.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn empty_config_gives_the_defaults() {
        let c = Settings::parse(Path::new("x.toml"), "").unwrap();
        assert_eq!(c.engine.debounce_ms, 30);
        assert_eq!(c.engine.rules.name, "fide-2005");
        assert_eq!(c.engine.mode, Mode::Tournament);
        assert!(c.engine.time_control.is_none());
    }

    #[test]
    fn errors_name_file_line_key_and_accepted_values() {
        let e = err("[rules]\nprofile = \"fide-2000\"\n");
        assert!(
            e.starts_with("test.toml:2:11: rules.profile: unknown rules 'fide-2000'"),
            "{e}"
        );
        assert!(e.contains("fide-1997, fide-2005, fide-2023"), "{e}");
        let e = err("[board]\n\ndebounce_ms = 5000\n");
        assert!(
            e.contains("test.toml:3:")
                && e.contains("board.debounce_ms")
                && e.contains("0 to 1000"),
            "{e}"
        );
        let e = err("[clock]\ntime_control = \"5 minutes\"\n");
        assert!(
            e.contains("test.toml:2:") && e.contains("clock.time_control"),
            "{e}"
        );
        let e = err("[clock]\nwarnings = \"often\"\n");
        assert!(
            e.starts_with("test.toml:2:12: clock.warnings: 'often'") && e.contains("\"auto\""),
            "{e}"
        );
        let e = err("[clock]\ntime_answer = \"left\"\n");
        assert!(
            e.contains("clock.time_answer") && e.contains("remaining, used"),
            "{e}"
        );
        let e = err("[game]\nwhite_title = \"Grandmaster of chess\"\n");
        assert!(
            e.starts_with("test.toml:2:15: game.white_title: a title is short"),
            "{e}"
        );
        let e = err("[game]\nwhite = \"A\"\nkind = \"bullet\"\n");
        assert!(
            e.starts_with("test.toml:3:8: game.kind: unknown kind of game 'bullet'")
                && e.contains("standard, rapid, blitz"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_errors_with_a_suggestion() {
        let e = err("[board]\ndebounce = 30\n");
        assert!(
            e.contains("test.toml:2:") && e.contains("unknown field `debounce`"),
            "{e}"
        );
        assert!(e.contains("did you mean `debounce_ms`?"), "{e}");
        let e = err("[speach]\n");
        assert!(e.contains("did you mean `speech`?"), "{e}");
    }

    #[test]
    fn words_and_announcements_are_configurable() {
        let c = Settings::parse(
            Path::new("w.toml"),
            "[speech]\nlang = \"en\"\nbackend = \"text\"\n[speech.words]\ncapture = \"captures\"\n[announce]\nlistener = \"black\"\ntouched = true\n",
        )
        .unwrap();
        assert_eq!(c.engine.phrases.words.capture, "captures");
        assert_eq!(c.speech.backend, Backend::Text);
        assert_eq!(c.speech.announce.listener, Some(Color::Black));
        assert!(c.speech.announce.touched);
        let e = err("[speech.words]\ncaptur = \"x\"\n");
        assert!(
            e.contains("test.toml:2:")
                && e.contains("speech.words.captur")
                && e.contains("capture"),
            "{e}"
        );
        let e = err("[speech]\nrate = 9000\n");
        assert!(
            e.contains("speech.rate") && e.contains("80 to 450 words a minute"),
            "{e}"
        );
        let c = Settings::parse(Path::new("s.toml"), "[announce]\nsounds = [\"move\"]\n").unwrap();
        assert_eq!(c.speech.announce.sounds, vec![Earcon::Move]);
        let e = err("[announce]\nsounds = [\"beep\"]\n");
        assert!(
            e.contains("announce.sounds") && e.contains("lift, move, illegal, mismatch, low_time"),
            "{e}"
        );
        let e = err("[speech]\nbackend = \"festival\"\n");
        assert!(e.contains("espeak, clips, text"), "{e}");
    }

    #[test]
    fn mqtt_and_game_tags() {
        let dir = std::env::temp_dir().join(format!("chessboardd-cfg-mqtt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pw = dir.join("pw");
        std::fs::write(&pw, "top secret\n").unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let text = format!(
            "[mqtt]\nurl = \"mqtts://u:p@broker:9000\"\nboard_id = \"b3\"\n\
             topic_prefix = \"club/r3\"\nusername = \"board3\"\npassword_file = \"{}\"\n\
             ca_file = \"{}\"\n[game]\nwhite = \"Anna \\\"A\\\" Berg\"\nround = \"3\"\nsite = \"\"\n\
             white_title = \"WGM\"\nwhite_elo = \"2310\"\nblack_elo = \"\"\n",
            pw.display(),
            ca.display()
        );
        let c = Settings::parse(Path::new("t.toml"), &text).unwrap();
        let m = c.mqtt.unwrap();
        assert_eq!(
            (m.url.host.as_str(), m.url.port, m.url.tls),
            ("broker", 9000, true)
        );
        assert_eq!(m.board_id(), "b3");
        assert_eq!(m.prefix, "club/r3");
        // The config's user and password win over the url's.
        assert_eq!(m.username.as_deref(), Some("board3"));
        assert_eq!(m.password.as_deref(), Some("top secret"));
        assert_eq!(m.ca_file.as_deref(), Some(ca.as_path()));
        assert_eq!(
            c.engine.pgn_tags,
            [
                ("Round".to_string(), "3".to_string()),
                ("White".to_string(), "Anna \"A\" Berg".to_string()),
                ("WhiteTitle".to_string(), "WGM".to_string()),
                ("WhiteElo".to_string(), "2310".to_string())
            ]
        );
        // Without a url: nothing is published, but broadcast --mqtt takes the rest.
        let c = Settings::parse(Path::new("t.toml"), "[mqtt]\nusername = \"x\"\n").unwrap();
        assert!(c.mqtt.is_none());
        assert_eq!(c.mqtt_partial.unwrap().username.as_deref(), Some("x"));
        let e = err("[mqtt]\nurl = \"mqtts://b\"\nclient_cert = \"/etc/hostname\"\n");
        assert!(e.contains("t.toml:3:") || e.contains(":3:"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn opponent_settings_and_flags() {
        use crate::opponent::{ColorChoice, Strength};
        let c = Settings::parse(Path::new("o.toml"), "").unwrap();
        assert!(c.opponent.is_none());
        let text = "[opponent]\nenabled = true\nengine = \"/opt/sf\"\ncolor = \"random\"\n\
                    level = 5\nmovetime_ms = 300\nthreads = 2\nhash_mb = 64\n";
        let c = Settings::parse(Path::new("o.toml"), text).unwrap();
        let o = c.opponent.clone().unwrap();
        assert_eq!(o.engine, PathBuf::from("/opt/sf"));
        assert_eq!(o.color, ColorChoice::Random);
        assert_eq!(o.strength, Strength::Level(5));
        assert_eq!((o.movetime_ms, o.threads, o.hash_mb), (300, 2, 64));
        assert_eq!(c.engine.execution_ms, 10_000);
        let c = Settings::parse(Path::new("o.toml"), "[opponent]\nexecution_ms = 0\n").unwrap();
        assert_eq!(c.engine.execution_ms, 0);
        let e = Settings::parse(Path::new("o.toml"), "[opponent]\nexecution_ms = -5\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("o.toml:2:") && e.contains("opponent.execution_ms"),
            "{e}"
        );
        // Written but not enabled: `--opponent engine` takes it, `--elo` over its level.
        let written = "[opponent]\nengine = \"/opt/sf\"\nlevel = 5\n";
        let mut c = Settings::parse(Path::new("o.toml"), written).unwrap();
        assert!(c.opponent.is_none());
        c.apply(&Flags {
            opponent: Some("engine".into()),
            elo: Some("1500".into()),
            ..Flags::default()
        })
        .unwrap();
        let o = c.opponent.clone().unwrap();
        assert_eq!(
            (o.engine.to_str(), o.strength),
            (Some("/opt/sf"), Strength::Elo(1500))
        );
        c.apply(&Flags {
            opponent: Some("none".into()),
            ..Flags::default()
        })
        .unwrap();
        assert!(c.opponent.is_none());
        let e = c
            .apply(&Flags {
                elo: Some("1500".into()),
                ..Flags::default()
            })
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--elo: no computer"), "{e}");
        let e = c
            .apply(&Flags {
                opponent: Some("stockfish".into()),
                ..Flags::default()
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--opponent") && e.contains("engine, none"),
            "{e}"
        );
        let e = err("[opponent]\nelo = 1500\nlevel = 3\n");
        assert!(
            e.starts_with("test.toml:3:9: opponent.level: give elo or level, not both"),
            "{e}"
        );
        let e = err("[opponent]\ncolor = \"green\"\n");
        assert!(
            e.contains("opponent.color") && e.contains("white, black, random"),
            "{e}"
        );
        let e = err("[opponent]\nelo = 100\n");
        assert!(
            e.contains("test.toml:2:") && e.contains("500 to 4000"),
            "{e}"
        );
        let e = err("[opponent]\nbook = \"/nonexistent.bin\"\n");
        assert!(
            e.contains("opponent.book") && e.contains("cannot read"),
            "{e}"
        );
        let e = err("[opponent]\nengin = \"x\"\n");
        assert!(e.contains("did you mean `engine`?"), "{e}");
    }

    #[test]
    fn syntax_errors_give_the_line() {
        let e = err("[rules]\nmode = tournament\n");
        assert!(e.starts_with("test.toml:2:"), "{e}");
    }
}
