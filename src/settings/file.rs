//! The config file: TOML parsed, then checked value by value. Every error names the file, the
//! line and column, the setting, what was given and what is accepted. Unknown keys are errors,
//! with a suggestion when one is close to a known key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use shakmaty::{Color, Role};
use toml::Spanned;

use super::{BoardSettings, ConfigError, ConfigErrorKind, Settings, MAX_CONFIG_BYTES};
use crate::board::gpio::Mapping;
use crate::board::gpio_settings::{GpioConfig, GpioWiring};
use crate::board::{BoardSpec, LinkSettings, Orientation};
use crate::control::buttons::ButtonConfig;
use crate::control::keys::{key_code, Binding, KEY_CODES};
use crate::control::settings::{socket_dir, ControlConfig};
use crate::engine::clock::{ClockSwitch, Pace, TimeControl};
use crate::engine::rules::{Mode, RuleProfile};
use crate::engine::settings::TimeAnswer;
use crate::engine::{Millis, VoiceLevel};
use crate::opponent::{OpponentSettings, Strength};
use crate::speech::audio::Earcon;
use crate::speech::speaker::{Announce, SpeechConfig};
use crate::speech::synth::{Backend, Voice};
use crate::words::{FileWords, Lang, Phrases, Style};

/// The config as written; `B` is one `[board]` or a list of `[[board]]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig<B = RawBoard> {
    #[serde(default)]
    pub rules: RawRules,
    #[serde(default)]
    pub board: B,
    #[serde(default)]
    pub clock: RawClock,
    #[serde(default)]
    pub speech: RawSpeech,
    #[serde(default)]
    pub announce: RawAnnounce,
    #[serde(default)]
    pub gpio: RawGpio,
    #[serde(default)]
    pub control: RawControl,
    #[serde(default)]
    pub web: RawWeb,
    #[serde(default)]
    pub mqtt: RawMqtt,
    #[serde(default)]
    pub game: RawGame,
    #[serde(default)]
    pub opponent: RawOpponent,
}

/// `[opponent]`: playing against a UCI chess engine.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOpponent {
    pub enabled: Option<bool>,
    pub engine: Option<Spanned<String>>,
    pub color: Option<Spanned<String>>,
    pub elo: Option<Spanned<i64>>,
    pub level: Option<Spanned<i64>>,
    pub movetime_ms: Option<Spanned<i64>>,
    pub execution_ms: Option<Spanned<i64>>,
    pub threads: Option<Spanned<i64>>,
    pub hash_mb: Option<Spanned<i64>>,
    pub book: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMqtt {
    pub url: Option<Spanned<String>>,
    pub board_id: Option<Spanned<String>>,
    pub topic_prefix: Option<Spanned<String>>,
    pub username: Option<Spanned<String>>,
    pub password: Option<Spanned<String>>,
    pub password_file: Option<Spanned<String>>,
    pub ca_file: Option<Spanned<String>>,
    pub client_cert: Option<Spanned<String>>,
    pub client_key: Option<Spanned<String>>,
}

/// The game's PGN tags (the names a broadcast shows).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGame {
    pub event: Option<Spanned<String>>,
    pub site: Option<Spanned<String>>,
    pub round: Option<Spanned<String>>,
    pub board: Option<Spanned<String>>,
    pub white: Option<Spanned<String>>,
    pub black: Option<Spanned<String>>,
    /// The players' FIDE titles ("GM", "WIM") and ratings ("2450"), as broadcasts show them.
    pub white_title: Option<Spanned<String>>,
    pub white_elo: Option<Spanned<String>>,
    pub black_title: Option<Spanned<String>>,
    pub black_elo: Option<Spanned<String>>,
    /// standard, rapid or blitz; by default from the time control.
    pub kind: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWeb {
    pub listen: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawControl {
    pub socket: Option<Spanned<String>>,
    pub keypad: Option<Spanned<String>>,
    pub keypad_player: Option<Spanned<String>>,
    pub long_press_ms: Option<Spanned<i64>>,
    pub debounce_ms: Option<Spanned<i64>>,
    /// Key name to a command, or to `{ short = "...", long = "..." }`.
    pub keys: Option<BTreeMap<String, Spanned<toml::Value>>>,
    pub buttons: Option<Vec<RawButton>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawButton {
    pub line: Spanned<LineSpec>,
    pub short: Option<Spanned<String>>,
    pub long: Option<Spanned<String>>,
}

/// A GPIO line: its number on the chip, or its name.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum LineSpec {
    Number(u32),
    Name(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGpio {
    pub chip: Option<Spanned<String>>,
    pub wiring: Option<Spanned<String>>,
    pub rows: Option<Spanned<Vec<LineSpec>>>,
    pub cols: Option<Spanned<Vec<LineSpec>>>,
    pub load: Option<Spanned<LineSpec>>,
    pub clock: Option<Spanned<LineSpec>>,
    pub data: Option<Spanned<LineSpec>>,
    pub lines: Option<Spanned<Vec<LineSpec>>>,
    pub rate_hz: Option<Spanned<i64>>,
    pub rotation: Option<Spanned<i64>>,
    pub mirror: Option<bool>,
    pub detect_side: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRules {
    pub profile: Option<Spanned<String>>,
    pub mode: Option<Spanned<String>>,
    pub promotion_timeout_ms: Option<Spanned<i64>>,
    pub promotion_default: Option<Spanned<String>>,
    pub opponent_lifts: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBoard {
    pub name: Option<Spanned<String>>,
    /// Two boards: who plays on this one (`white`, `black`; `both` for a shared board).
    pub player: Option<Spanned<String>>,
    /// Two boards: the sound card of this board's player ("" for speech.device).
    pub device: Option<Spanned<String>>,
    /// Two boards: what this board's player hears (over `[announce]`).
    pub own_moves: Option<bool>,
    pub opponent_moves: Option<bool>,
    pub driver: Option<Spanned<String>>,
    pub port: Option<Spanned<String>>,
    pub debounce_ms: Option<Spanned<i64>>,
    pub settle_ms: Option<Spanned<i64>>,
    pub mismatch_ms: Option<Spanned<i64>>,
    /// DGT, ChessLink: which way round the squares come (auto, normal, reversed).
    pub orientation: Option<Spanned<String>>,
    /// DGT: quiet time before a dump is asked for (250 over USB, 500 over Bluetooth).
    pub dgt_settle_ms: Option<Spanned<i64>>,
}

/// `clock.warnings`: seconds left, or "auto" (by the mode).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Warnings {
    Seconds(Vec<i64>),
    Word(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClock {
    pub time_control: Option<Spanned<String>>,
    pub switch: Option<Spanned<String>>,
    pub wait_for_start: Option<bool>,
    pub warnings: Option<Spanned<Warnings>>,
    pub time_answer: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpeech {
    pub lang: Option<Spanned<String>>,
    pub style: Option<Spanned<String>>,
    pub files: Option<Spanned<String>>,
    pub backend: Option<Spanned<String>>,
    pub voice_pack: Option<Spanned<String>>,
    pub rate: Option<Spanned<i64>>,
    pub pitch: Option<Spanned<i64>>,
    pub volume: Option<Spanned<i64>>,
    pub device: Option<Spanned<String>>,
    /// Any word of the announcement language, by key (`capture = "nimmt"`).
    pub words: Option<BTreeMap<String, Spanned<toml::Value>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAnnounce {
    pub listener: Option<Spanned<String>>,
    pub own_moves: Option<bool>,
    pub opponent_moves: Option<bool>,
    pub touched: Option<bool>,
    pub opponent_touches: Option<Spanned<String>>,
    pub sounds: Option<Spanned<Vec<String>>>,
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |nl| {
        before[nl + 1..].chars().count()
    }) + 1;
    (line, col)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Adds "did you mean" to toml's unknown-field messages.
/// The dotted key written at `offset` (`board.debounce_ms`): the table header above it and the
/// key of its line. `None` on a header line or where there is no `key =`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[start..end];
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let table = text[..start].lines().rev().find_map(|l| {
        let l = l.trim();
        l.starts_with('[')
            .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
    });
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

fn suggest(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((given, expected)) = rest.split_once("`, expected ") else {
        return message.to_string();
    };
    let best = expected
        .split(['`', ',', ' '])
        .filter(|k| !k.is_empty() && *k != "one" && *k != "of" && *k != "or")
        .map(|k| (levenshtein(given, k), k))
        .min();
    match best {
        Some((d, k)) if d <= 3 => format!("{message}; did you mean `{k}`?"),
        _ => message.to_string(),
    }
}

/// toml's and serde's words for what a value should be, in the config's own words (no type names
/// from inside the program).
fn plain_words(msg: &str, key: Option<String>) -> String {
    let key = key.unwrap_or_default();
    let list = key.ends_with(".rows") || key.ends_with(".cols") || key.ends_with(".lines");
    if msg.contains("untagged enum LineSpec") || (list && msg.contains("expected a sequence")) {
        return if list {
            "expected a list of GPIO line numbers or names, like [5, 6, 13] or [\"GPIO5\", \"GPIO6\"]"
                .into()
        } else {
            "expected a GPIO line number or name, like 5 or \"GPIO5\"".into()
        };
    }
    if msg.contains("untagged enum Warnings") {
        return "expected \"auto\" or a list of seconds, like [300, 60, 10]".into();
    }
    msg.replace("expected a sequence", "expected a list")
        .replace("expected a boolean", "expected true or false")
}

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        msg: String,
    ) -> Result<T, ConfigError> {
        let (line, col) = line_col(self.text, span.start);
        Err(ConfigError::new(ConfigErrorKind::Value {
            path: self.path.to_path_buf(),
            line,
            col,
            key: Some(key.to_string()),
            what: msg,
        }))
    }

    fn parse<T>(&self, v: &Option<Spanned<String>>, key: &str, default: T) -> Result<T, ConfigError>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        match v {
            None => Ok(default),
            Some(s) => s
                .get_ref()
                .parse()
                .or_else(|e: T::Err| self.err(s.span(), key, e.to_string())),
        }
    }

    fn millis(
        &self,
        v: &Option<Spanned<i64>>,
        key: &str,
        range: std::ops::RangeInclusive<i64>,
        default: u64,
    ) -> Result<u64, ConfigError> {
        self.number(v, key, range, default, "milliseconds")
    }

    fn number(
        &self,
        v: &Option<Spanned<i64>>,
        key: &str,
        range: std::ops::RangeInclusive<i64>,
        default: u64,
        unit: &str,
    ) -> Result<u64, ConfigError> {
        match v {
            None => Ok(default),
            Some(s) if range.contains(s.get_ref()) => Ok(*s.get_ref() as u64),
            Some(s) => self.err(
                s.span(),
                key,
                format!(
                    "{} is out of range (accepted: {} to {} {unit})",
                    s.get_ref(),
                    range.start(),
                    range.end()
                ),
            ),
        }
    }
}

/// Reads and validates a config file, adding its warnings to `warnings` (things `run` takes
/// but a person should know, like a password sent unencrypted), each with its file:line:col.
pub(super) fn load(path: &Path, warnings: &mut Vec<String>) -> Result<Settings, ConfigError> {
    let file = std::fs::File::open(path).map_err(|e| {
        ConfigError::new(ConfigErrorKind::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        })
    })?;
    let text = crate::bounded::read_text(file, MAX_CONFIG_BYTES).map_err(|e| {
        ConfigError::new(ConfigErrorKind::NotText {
            path: path.to_path_buf(),
            at: e.at_line(),
        })
    })?;
    parse(path, &text, warnings)
}

/// Validates config text, adding warnings to `warnings`; `path` is only used in messages.
pub(super) fn parse(
    path: &Path,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<Settings, ConfigError> {
    let raw = read_toml(path, text)?;
    let cx = Ctx { path, text };
    let (mut settings, lang, style, files) = engine_settings(&cx, &raw)?;
    let words = speech_words(&cx, &raw.speech, (lang, style, files))?;
    let speech = speech_config(&cx, &raw, lang)?;
    settings.owner_adjusts = owner_adjusts(&cx, &raw.rules, speech.announce.listener)?;
    let gpio = gpio_config(&cx, &raw.gpio)?;
    let control = control_config(&cx, &raw.control, speech.announce.listener)?;
    let web = web_listen(&cx, &raw.web)?;
    let (mqtt, has_url) = mqtt_config(&cx, &raw.mqtt)?;
    if let (Some(m), Some(u)) = (&mqtt, &raw.mqtt.url) {
        if has_url && !m.url.tls && (m.url.password.is_some() || m.password.is_some()) {
            let (line, col) = line_col(text, u.span().start);
            warnings.push(format!(
                "{}:{line}:{col}: mqtt.url: the password goes over the network unencrypted \
                 (mqtt://); use mqtts:// to keep it secret",
                path.display()
            ));
        }
    }
    settings.pgn_tags = game_tags(&cx, &raw.game)?;
    let boards = boards_config(&cx, &raw.board)?;
    let (opponent, play) = opponent_config(&cx, &raw.opponent)?;
    if play && boards.len() > 1 {
        return Err(ConfigError::new(ConfigErrorKind::Mismatch(
            "opponent.enabled: playing against the computer is on one board (the config names \
             several [[board]])"
                .into(),
        )));
    }
    let mut cfg = Settings {
        engine: settings,
        lang,
        style,
        files,
        words,
        speech,
        gpio,
        control,
        boards,
        web,
        mqtt: mqtt.as_ref().filter(|_| has_url).cloned(),
        mqtt_partial: mqtt,
        opponent: play.then(|| opponent.clone()),
        opponent_written: opponent,
    };
    cfg.rebuild_phrases();
    Ok(cfg)
}

/// The TOML text as written, every value with its place; at least one board.
fn read_toml(path: &Path, text: &str) -> Result<RawConfig<Vec<RawBoard>>, ConfigError> {
    // Several boards are written as [[board]] tables, one board as [board].
    let many = text
        .lines()
        .any(|l| l.trim_start().starts_with("[[board]]"));
    let parsed: Result<RawConfig<Vec<RawBoard>>, toml::de::Error> = if many {
        toml::from_str(text)
    } else {
        toml::from_str::<RawConfig>(text).map(|r| RawConfig {
            board: vec![r.board],
            rules: r.rules,
            clock: r.clock,
            speech: r.speech,
            announce: r.announce,
            gpio: r.gpio,
            control: r.control,
            web: r.web,
            mqtt: r.mqtt,
            game: r.game,
            opponent: r.opponent,
        })
    };
    let mut raw = parsed.map_err(|e| {
        // One line, in words a person reads; the key in front when the error has one.
        let msg = suggest(e.message())
            .trim()
            .replace('\n', "; ")
            .replace("expected i64", "expected a whole number")
            .replace("expected u32", "expected a whole number");
        let msg = plain_words(&msg, e.span().and_then(|s| key_at(text, s.start)));
        match e.span() {
            Some(span) => {
                let (line, col) = line_col(text, span.start);
                ConfigError::new(ConfigErrorKind::Value {
                    path: path.to_path_buf(),
                    line,
                    col,
                    key: key_at(text, span.start),
                    what: msg,
                })
            }
            None => ConfigError::new(ConfigErrorKind::File {
                path: path.to_path_buf(),
                what: msg,
            }),
        }
    })?;
    if raw.board.is_empty() {
        raw.board.push(RawBoard::default());
    }
    Ok(raw)
}

/// The engine's settings (`[rules]`, the first board's timings, `[clock]`, the voice's level),
/// and the announcements' language, style and file words.
fn engine_settings(
    cx: &Ctx,
    raw: &RawConfig<Vec<RawBoard>>,
) -> Result<(crate::engine::Settings, Lang, Style, FileWords), ConfigError> {
    let d = crate::engine::Settings::default();
    let first = &raw.board[0];
    let promotion_default = match &raw.rules.promotion_default {
        None => Role::Queen,
        Some(s) => match s.get_ref().as_str() {
            "queen" => Role::Queen,
            "rook" => Role::Rook,
            "bishop" => Role::Bishop,
            "knight" => Role::Knight,
            other => {
                return cx.err(
                    s.span(),
                    "rules.promotion_default",
                    format!("'{other}' is not a piece (accepted: queen, rook, bishop, knight)"),
                )
            }
        },
    };
    let time_control = match &raw.clock.time_control {
        None => None,
        Some(s) if s.get_ref().is_empty() || s.get_ref() == "-" => None,
        Some(s) => Some(
            s.get_ref()
                .parse::<TimeControl>()
                .or_else(|e| cx.err(s.span(), "clock.time_control", e.to_string()))?,
        ),
    };
    let lang: Lang = cx.parse(&raw.speech.lang, "speech.lang", Lang::default())?;
    let style: Style = cx.parse(&raw.speech.style, "speech.style", Style::default())?;
    let files: FileWords = cx.parse(&raw.speech.files, "speech.files", FileWords::default())?;
    let settings = crate::engine::Settings {
        rules: cx.parse(&raw.rules.profile, "rules.profile", RuleProfile::default())?,
        mode: cx.parse(&raw.rules.mode, "rules.mode", Mode::default())?,
        // (By the listener, once the speech settings are read: see `owner_adjusts`.)
        owner_adjusts: false,
        debounce_ms: cx.millis(
            &first.debounce_ms,
            "board.debounce_ms",
            0..=1000,
            d.debounce_ms,
        )?,
        settle_ms: cx.millis(&first.settle_ms, "board.settle_ms", 0..=2000, d.settle_ms)?,
        mismatch_ms: cx.millis(
            &first.mismatch_ms,
            "board.mismatch_ms",
            100..=60_000,
            d.mismatch_ms,
        )?,
        execution_ms: cx.millis(
            &raw.opponent.execution_ms,
            "opponent.execution_ms",
            0..=600_000,
            d.execution_ms,
        )?,
        promotion_ms: cx.millis(
            &raw.rules.promotion_timeout_ms,
            "rules.promotion_timeout_ms",
            0..=60_000,
            d.promotion_ms,
        )?,
        promotion_default,
        time_control,
        kind: match &raw.game.kind {
            None => None,
            Some(s) if s.get_ref().is_empty() => None,
            Some(_) => Some(cx.parse(&raw.game.kind, "game.kind", Pace::Standard)?),
        },
        switch: cx.parse(&raw.clock.switch, "clock.switch", ClockSwitch::default())?,
        wait_for_start: raw.clock.wait_for_start.unwrap_or(false),
        time_answer: cx.parse(
            &raw.clock.time_answer,
            "clock.time_answer",
            TimeAnswer::default(),
        )?,
        time_warnings_ms: match raw.clock.warnings.as_ref().map(|w| (w, w.get_ref())) {
            None => None,
            Some((_, Warnings::Word(w))) if w == "auto" => None,
            Some((w, Warnings::Word(other))) => {
                return cx.err(
                    w.span(),
                    "clock.warnings",
                    format!(
                    "'{other}' (accepted: \"auto\", or a list of seconds such as [300, 60, 10])"
                ),
                )
            }
            Some((list, Warnings::Seconds(seconds))) => {
                let mut v = Vec::new();
                for &secs in seconds {
                    if !(1..=36_000).contains(&secs) {
                        return cx.err(
                            list.span(),
                            "clock.warnings",
                            format!("{secs} is out of range (accepted: 1 to 36000 seconds)"),
                        );
                    }
                    v.push(secs as Millis * 1000);
                }
                if v.len() > 16 {
                    return cx.err(list.span(), "clock.warnings", "at most 16 warnings".into());
                }
                v.sort_unstable_by(|a, b| b.cmp(a));
                v.dedup();
                Some(v)
            }
        },
        voice: VoiceLevel {
            rate: cx.number(
                &raw.speech.rate,
                "speech.rate",
                80..=450,
                175,
                "words a minute",
            )? as u32,
            volume: cx.number(&raw.speech.volume, "speech.volume", 0..=200, 100, "percent")? as u32,
        },
        help: None,
        help_pages: Vec::new(),
        pgn_tags: Vec::new(),
        phrases: Phrases::new(lang, style, files),
    };
    Ok((settings, lang, style, files))
}

/// `[speech.words]`: each word checked in the language (its key, its placeholders).
fn speech_words(
    cx: &Ctx,
    sp: &RawSpeech,
    (lang, style, files): (Lang, Style, FileWords),
) -> Result<Vec<(String, toml::Value)>, ConfigError> {
    let mut words = Vec::new();
    let mut probe = Phrases::new(lang, style, files);
    for (key, value) in sp.words.iter().flatten() {
        Arc::make_mut(&mut probe.words)
            .set(key, value.get_ref())
            .or_else(|e| cx.err(value.span(), &format!("speech.words.{key}"), e))?;
        if let Some(text) = value.get_ref().as_str() {
            crate::words::check_placeholders(key, text)
                .or_else(|e| cx.err(value.span(), &format!("speech.words.{key}"), e))?;
        }
        words.push((key.clone(), value.get_ref().clone()));
    }
    Ok(words)
}

/// `[speech]` and `[announce]`: how the announcements are spoken, and which.
fn speech_config(
    cx: &Ctx,
    raw: &RawConfig<Vec<RawBoard>>,
    lang: Lang,
) -> Result<SpeechConfig, ConfigError> {
    let sp = &raw.speech;
    let d = SpeechConfig::default();
    let listener = match &raw.announce.listener {
        None => None,
        Some(s) => player(cx, s, "announce.listener", None)?,
    };
    let a = &raw.announce;
    let da = Announce::default();
    let speech = SpeechConfig {
        backend: cx.parse(&sp.backend, "speech.backend", Backend::default())?,
        voice: Voice {
            lang,
            rate: cx.number(
                &sp.rate,
                "speech.rate",
                80..=450,
                u64::from(d.voice.rate),
                "words a minute",
            )? as u32,
            pitch: cx.number(
                &sp.pitch,
                "speech.pitch",
                0..=100,
                u64::from(d.voice.pitch),
                "(50 is normal)",
            )? as u32,
            volume: d.voice.volume,
        },
        voice_pack: sp
            .voice_pack
            .as_ref()
            .map_or(d.voice_pack, |v| PathBuf::from(v.get_ref())),
        device: sp
            .device
            .as_ref()
            .map(|v| v.get_ref().clone())
            .filter(|v| !v.is_empty()),
        volume: cx.number(&sp.volume, "speech.volume", 0..=200, 100, "percent")? as f32 / 100.0,
        audio_out: None,
        announce: Announce {
            listener,
            own_moves: a.own_moves.unwrap_or(da.own_moves),
            opponent_moves: a.opponent_moves.unwrap_or(da.opponent_moves),
            touched: a.touched.unwrap_or(da.touched),
            opponent_touches: cx.parse(
                &a.opponent_touches,
                "announce.opponent_touches",
                da.opponent_touches,
            )?,
            sounds: match &a.sounds {
                None => da.sounds,
                Some(list) => list
                    .get_ref()
                    .iter()
                    .map(|n| n.parse::<Earcon>())
                    .collect::<Result<_, _>>()
                    .or_else(|e| cx.err(list.span(), "announce.sounds", e))?,
            },
        },
    };
    Ok(speech)
}

/// `[web]`: the web view's address, if any.
fn web_listen(cx: &Ctx, w: &RawWeb) -> Result<Option<String>, ConfigError> {
    Ok(match &w.listen {
        Some(l) if !l.get_ref().trim().is_empty() => {
            let addr = l.get_ref().trim();
            if addr.parse::<std::net::SocketAddr>().is_err() {
                return cx.err(
                    l.span(),
                    "web.listen",
                    format!(
                        "'{addr}' is not an address and port (e.g. \"127.0.0.1:8080\", \
                             \"0.0.0.0:8080\" for every network, \"[::1]:8080\")"
                    ),
                );
            }
            Some(addr.to_string())
        }
        _ => None,
    })
}

/// The `[board]` table or the `[[board]]` tables: each board's settings, each with its own
/// name, and with several boards each with its own player.
fn boards_config(cx: &Ctx, raw_boards: &[RawBoard]) -> Result<Vec<BoardSettings>, ConfigError> {
    let mut boards: Vec<BoardSettings> = Vec::new();
    for (i, b) in raw_boards.iter().enumerate() {
        let key = |k: &str| {
            if raw_boards.len() > 1 {
                format!("board[{}].{k}", i + 1)
            } else {
                format!("board.{k}")
            }
        };
        let spec = board_spec(cx, b, &key("driver"))?;
        let dl = LinkSettings::default();
        let link = LinkSettings {
            orientation: cx.parse::<Orientation>(
                &b.orientation,
                &key("orientation"),
                dl.orientation,
            )?,
            dgt_settle_ms: cx.millis(
                &b.dgt_settle_ms,
                &key("dgt_settle_ms"),
                50..=2000,
                dl.dgt_settle_ms,
            )?,
        };
        let device = b
            .device
            .as_ref()
            .map(|d| d.get_ref().trim().to_string())
            .filter(|d| !d.is_empty());
        let player = match &b.player {
            None => None,
            Some(p) => match p.get_ref().as_str() {
                "both" => None,
                side if side.parse::<Color>().is_ok() => side.parse().ok(),
                other => {
                    return cx.err(
                        p.span(),
                        &key("player"),
                        format!("'{other}' is not a player (accepted: white, black, both)"),
                    )
                }
            },
        };
        let name = b
            .name
            .as_ref()
            .map_or_else(|| format!("board{}", i + 1), |n| n.get_ref().clone());
        let name = if raw_boards.len() == 1 && b.name.is_none() {
            "board".to_string()
        } else {
            name
        };
        if boards.iter().any(|o| o.name == name) {
            let span = b.name.as_ref().map_or(0..0, |n| n.span());
            return cx.err(span, &key("name"), format!("'{name}' names two boards"));
        }
        boards.push(BoardSettings {
            name,
            player,
            spec,
            link,
            device,
            own_moves: b.own_moves,
            opponent_moves: b.opponent_moves,
        });
    }
    // Several boards: each player at his own board.
    if raw_boards.len() > 1 {
        for (i, b) in raw_boards.iter().enumerate() {
            let p = boards[i].player;
            let taken = boards[..i].iter().any(|o| o.player == p);
            if p.is_none() || taken {
                let span = b
                    .player
                    .as_ref()
                    .map_or_else(|| b.name.as_ref().map_or(0..0, |n| n.span()), |p| p.span());
                return cx.err(
                    span,
                    &format!("board[{}].player", i + 1),
                    "with several boards each needs its own player (white or black)".into(),
                );
            }
        }
    }
    Ok(boards)
}

/// `[mqtt]`: the broker's settings (with a placeholder address when no url is given, for
/// `broadcast --mqtt URL`), and whether a url was given.
fn mqtt_config(
    cx: &Ctx,
    m: &RawMqtt,
) -> Result<(Option<crate::mqtt::MqttSettings>, bool), ConfigError> {
    use crate::mqtt::{BrokerUrl, MqttSettings};
    let text = |v: &Option<Spanned<String>>| {
        v.as_ref()
            .map(|s| (s.get_ref().trim().to_string(), s.span()))
            .filter(|(s, _)| !s.is_empty())
    };
    let any = [
        &m.url,
        &m.board_id,
        &m.topic_prefix,
        &m.username,
        &m.password,
        &m.password_file,
        &m.ca_file,
        &m.client_cert,
        &m.client_key,
    ]
    .iter()
    .any(|v| text(v).is_some());
    if !any {
        return Ok((None, false));
    }
    let url = match text(&m.url) {
        Some((u, span)) => Some(
            u.parse::<BrokerUrl>()
                .or_else(|e| cx.err(span, "mqtt.url", e))?,
        ),
        None => None,
    };
    let has_url = url.is_some();
    let mut s = MqttSettings::new(url.unwrap_or(BrokerUrl {
        tls: false,
        host: "localhost".into(),
        port: 1883,
        username: None,
        password: None,
    }));
    if let Some((id, span)) = text(&m.board_id) {
        crate::broadcast::check_board_id(&id).or_else(|e| cx.err(span, "mqtt.board_id", e))?;
        s.board_id = Some(id);
    }
    if let Some((p, span)) = text(&m.topic_prefix) {
        crate::mqtt::check_prefix(&p).or_else(|e| cx.err(span, "mqtt.topic_prefix", e))?;
        s.prefix = p;
    }
    s.username = text(&m.username).map(|(u, _)| u);
    let password = m.password.as_ref().filter(|p| !p.get_ref().is_empty());
    match (password, text(&m.password_file)) {
        (Some(p), Some(_)) => {
            return cx.err(
                p.span(),
                "mqtt.password",
                "give password or password_file, not both".into(),
            )
        }
        (Some(p), None) => s.password = Some(p.get_ref().clone()),
        (None, Some((f, span))) => {
            let read = std::fs::read_to_string(&f)
                .map_err(|e| format!("cannot read {f}: {e}"))
                .or_else(|e| cx.err(span, "mqtt.password_file", e))?;
            s.password = Some(read.trim_end_matches(['\n', '\r']).to_string());
        }
        (None, None) => {}
    }
    // Without a url here, `--mqtt USER@HOST` may give the user.
    if has_url && s.password.is_some() && s.username.is_none() && s.url.username.is_none() {
        let span = password
            .map(|p| p.span())
            .or(m.password_file.as_ref().map(|p| p.span()))
            .unwrap_or_default();
        return cx.err(
            span,
            "mqtt.password",
            "a password needs its user: set mqtt.username too".into(),
        );
    }
    let tls_files = [
        ("mqtt.ca_file", &m.ca_file, "CERTIFICATE"),
        ("mqtt.client_cert", &m.client_cert, "CERTIFICATE"),
        ("mqtt.client_key", &m.client_key, "KEY"),
    ];
    let mut paths = Vec::new();
    for (key, v, what) in tls_files {
        let path = match text(v) {
            Some((f, span)) => {
                if has_url && !s.url.tls {
                    return cx.err(
                        span,
                        key,
                        "TLS files need an mqtts:// url (mqtt.url is mqtt://)".into(),
                    );
                }
                crate::mqtt::read_pem(Path::new(&f), what).or_else(|e| cx.err(span, key, e))?;
                Some(std::path::PathBuf::from(f))
            }
            None => None,
        };
        paths.push(path);
    }
    s.ca_file = paths[0].take();
    if let (Some((_, span)), true, None) = (text(&m.url), s.url.tls, &s.ca_file) {
        crate::mqtt::read_pem(Path::new(crate::mqtt::SYSTEM_CA), "CERTIFICATE").or_else(|e| {
            cx.err(
                span,
                "mqtt.url",
                format!(
                    "mqtts:// without mqtt.ca_file trusts the system's authorities, but {e} \
                     (install the package ca-certificates, or set mqtt.ca_file)"
                ),
            )
        })?;
    }
    s.client_auth = match (paths[1].take(), paths[2].take()) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            let span = m
                .client_cert
                .as_ref()
                .or(m.client_key.as_ref())
                .map(|v| v.span())
                .unwrap_or_default();
            return cx.err(
                span,
                "mqtt.client_cert",
                "client_cert and client_key go together: give both or neither".into(),
            );
        }
    };
    Ok((Some(s), has_url))
}

/// `[opponent]`: the engine's settings as written (defaults for what is not), and whether the
/// player plays against it (`enabled`).
fn opponent_config(cx: &Ctx, o: &RawOpponent) -> Result<(OpponentSettings, bool), ConfigError> {
    let d = OpponentSettings::default();
    let path = |v: &Option<Spanned<String>>, key: &str| -> Result<Option<PathBuf>, ConfigError> {
        match v {
            Some(s) if s.get_ref().chars().any(char::is_control) => cx.err(
                s.span(),
                key,
                "a path has no control characters (a NUL, a newline)".into(),
            ),
            Some(s) if !s.get_ref().trim().is_empty() => {
                Ok(Some(PathBuf::from(s.get_ref().trim())))
            }
            _ => Ok(None),
        }
    };
    let engine = match path(&o.engine, "opponent.engine")? {
        Some(p) => p,
        None if o.engine.is_some() => {
            let span = o.engine.as_ref().map(|e| e.span()).unwrap_or_default();
            return cx.err(
                span,
                "opponent.engine",
                format!(
                    "no engine given (the default is \"{}\")",
                    d.engine.display()
                ),
            );
        }
        None => d.engine.clone(),
    };
    let elo = cx.number(&o.elo, "opponent.elo", 0..=4000, 0, "(0: not limited)")?;
    let level = cx.number(&o.level, "opponent.level", 0..=20, 0, "(0: not set)")?;
    let strength = match (elo, level) {
        (0, 0) => Strength::Full,
        (e, 0) if e < 500 => {
            let span = o.elo.as_ref().map(|e| e.span()).unwrap_or_default();
            return cx.err(
                span,
                "opponent.elo",
                format!("{e} is out of range (accepted: 0 for full strength, or 500 to 4000)"),
            );
        }
        (e, 0) => Strength::Elo(e as u32),
        (0, l) => Strength::Level(l as u32),
        (_, _) => {
            let span = o.level.as_ref().map(|l| l.span()).unwrap_or_default();
            return cx.err(
                span,
                "opponent.level",
                "give elo or level, not both (0 leaves one unset)".into(),
            );
        }
    };
    let settings = OpponentSettings {
        engine,
        color: cx.parse(&o.color, "opponent.color", d.color)?,
        strength,
        movetime_ms: cx.millis(
            &o.movetime_ms,
            "opponent.movetime_ms",
            50..=600_000,
            d.movetime_ms,
        )?,
        threads: cx.number(
            &o.threads,
            "opponent.threads",
            1..=256,
            u64::from(d.threads),
            "threads",
        )? as u32,
        hash_mb: cx.number(
            &o.hash_mb,
            "opponent.hash_mb",
            1..=65_536,
            u64::from(d.hash_mb),
            "MB",
        )? as u32,
        book: path(&o.book, "opponent.book")?,
        handshake_ms: d.handshake_ms,
    };
    if let (Some(book), Some(s)) = (&settings.book, &o.book) {
        crate::opponent::book::Book::open(book)
            .or_else(|e| cx.err(s.span(), "opponent.book", e.to_string()))?;
    }
    Ok((settings, o.enabled.unwrap_or(false)))
}

/// `[game]`: the PGN tags of the games played (Event, Site, Round, Board, White, Black).
fn game_tags(cx: &Ctx, g: &RawGame) -> Result<Vec<(String, String)>, ConfigError> {
    let mut tags = Vec::new();
    for (tag, key, v) in [
        ("Event", "game.event", &g.event),
        ("Site", "game.site", &g.site),
        ("Round", "game.round", &g.round),
        ("Board", "game.board", &g.board),
        ("White", "game.white", &g.white),
        ("Black", "game.black", &g.black),
        ("WhiteTitle", "game.white_title", &g.white_title),
        ("WhiteElo", "game.white_elo", &g.white_elo),
        ("BlackTitle", "game.black_title", &g.black_title),
        ("BlackElo", "game.black_elo", &g.black_elo),
    ] {
        if let Some(s) = v {
            let value = s.get_ref().trim();
            if value.chars().any(char::is_control) || value.len() > 255 {
                return cx.err(
                    s.span(),
                    key,
                    "a PGN tag is one line of at most 255 bytes".into(),
                );
            }
            if tag.ends_with("Elo")
                && !value.is_empty()
                && !(value.len() <= 4 && value.bytes().all(|b| b.is_ascii_digit()))
            {
                return cx.err(
                    s.span(),
                    key,
                    format!("a rating is a whole number such as \"2450\", not {value:?}"),
                );
            }
            if tag.ends_with("Title") && value.len() > 8 {
                return cx.err(
                    s.span(),
                    key,
                    format!("a title is short, such as \"GM\" or \"WIM\", not {value:?}"),
                );
            }
            if !value.is_empty() {
                tags.push((tag.to_string(), value.to_string()));
            }
        }
    }
    Ok(tags)
}

/// The board of a `[board]` table: its driver and port, if given.
fn board_spec(cx: &Ctx, b: &RawBoard, key: &str) -> Result<Option<BoardSpec>, ConfigError> {
    Ok(match &b.driver {
        Some(d) if !d.get_ref().trim().is_empty() => {
            let driver = d.get_ref().trim();
            let port = b.port.as_ref().map_or("", |p| p.get_ref().trim());
            let port_key = key.replace("driver", "port");
            if let Some(p) = b
                .port
                .as_ref()
                .filter(|_| port.chars().any(char::is_control))
            {
                return cx.err(
                    p.span(),
                    &port_key,
                    "a path has no control characters (a NUL, a newline); accepted: a device \
                     such as \"/dev/ttyUSB0\", or a PGN file for sim"
                        .into(),
                );
            }
            if driver == "sim" && !port.is_empty() {
                let span = b.port.as_ref().map_or(d.span(), |p| p.span());
                crate::daemon::Source::simulated(Path::new(port), &Default::default())
                    .map(|_| ())
                    .or_else(|e| {
                        cx.err(
                            span,
                            &port_key,
                            format!("the simulated board's game cannot be read: {e}"),
                        )
                    })?;
            }
            let spec = if port.is_empty() {
                driver.to_string()
            } else {
                format!("{driver}:{port}")
            };
            Some(spec.parse::<BoardSpec>().or_else(|e| {
                cx.err(
                    d.span(),
                    key,
                    format!(
                        "{e}; as driver and port: gpio, or {} with the port \
                             (\"/dev/ttyUSB0\"), or sim with a PGN file",
                        crate::board::protocol_names(", ")
                    ),
                )
            })?)
        }
        _ => None,
    })
}

fn line_name(l: &LineSpec) -> String {
    match l {
        LineSpec::Number(n) => n.to_string(),
        LineSpec::Name(s) => s.clone(),
    }
}

type Lines = Option<Spanned<Vec<LineSpec>>>;

fn gpio_config(cx: &Ctx, g: &RawGpio) -> Result<GpioConfig, ConfigError> {
    let d = GpioConfig::default();
    let list = |v: &Lines,
                key: &str,
                n: usize,
                default: Vec<String>|
     -> Result<Vec<String>, ConfigError> {
        match v {
            None => Ok(default),
            Some(s) if s.get_ref().len() == n => Ok(s.get_ref().iter().map(line_name).collect()),
            Some(s) => cx.err(
                s.span(),
                key,
                format!(
                    "{} lines given, {n} needed (numbers or names)",
                    s.get_ref().len()
                ),
            ),
        }
    };
    let wiring_span = g.wiring.as_ref().map_or(0..0, |w| w.span());
    let one = |v: &Option<Spanned<LineSpec>>, key: &str| -> Result<String, ConfigError> {
        match v {
            Some(s) => Ok(line_name(s.get_ref())),
            None => cx.err(
                wiring_span.clone(),
                key,
                "missing: shift-register needs load, clock and data".into(),
            ),
        }
    };
    let (dr, dc) = match &d.wiring {
        GpioWiring::Matrix { rows, cols } => (rows.clone(), cols.clone()),
        _ => (vec![], vec![]),
    };
    let wiring = match g.wiring.as_ref().map(|w| w.get_ref().as_str()) {
        None | Some("matrix") => GpioWiring::Matrix {
            rows: list(&g.rows, "gpio.rows", 8, dr)?,
            cols: list(&g.cols, "gpio.cols", 8, dc)?,
        },
        Some("shift-register") => GpioWiring::ShiftRegister {
            load: one(&g.load, "gpio.load")?,
            clock: one(&g.clock, "gpio.clock")?,
            data: one(&g.data, "gpio.data")?,
        },
        Some("direct") => GpioWiring::Direct {
            lines: list(&g.lines, "gpio.lines", 64, vec![])?,
        },
        Some(other) => {
            return cx.err(
                wiring_span,
                "gpio.wiring",
                format!("'{other}' (accepted: matrix, shift-register, direct)"),
            );
        }
    };
    let rotation = cx.number(&g.rotation, "gpio.rotation", 0..=270, 0, "degrees")? as u16;
    if rotation % 90 != 0 {
        let span = g.rotation.as_ref().map_or(0..0, |r| r.span());
        return cx.err(
            span,
            "gpio.rotation",
            format!("{rotation} (accepted: 0, 90, 180, 270)"),
        );
    }
    if let Some(c) = &g.chip {
        let chip = c.get_ref().trim();
        if chip.is_empty() || chip.chars().any(char::is_control) {
            return cx.err(
                c.span(),
                "gpio.chip",
                "no GPIO chip (accepted: a chip device such as \"/dev/gpiochip0\")".into(),
            );
        }
    }
    // A line used twice would be read (or driven) for two things at once.
    let mut used: Vec<(&str, String)> = Vec::new();
    let named: Vec<(&str, &Option<Spanned<Vec<LineSpec>>>)> = vec![
        ("gpio.rows", &g.rows),
        ("gpio.cols", &g.cols),
        ("gpio.lines", &g.lines),
    ];
    let singles = [
        ("gpio.load", &g.load),
        ("gpio.clock", &g.clock),
        ("gpio.data", &g.data),
    ];
    let mut check = |key: &'static str, span: std::ops::Range<usize>, line: String| {
        if let Some((other, _)) = used.iter().find(|(_, l)| *l == line) {
            let also = if *other == key {
                format!("twice in {key}")
            } else {
                format!("in {other} too")
            };
            return cx.err(
                span,
                key,
                format!(
                    "line {line} is used {also} (each line is one row, one column or one signal)"
                ),
            );
        }
        used.push((key, line));
        Ok(())
    };
    match &wiring {
        GpioWiring::Matrix { .. } => {
            for (key, v) in &named[..2] {
                if let Some(list) = v {
                    for l in list.get_ref() {
                        check(key, list.span(), line_name(l))?;
                    }
                }
            }
        }
        GpioWiring::Direct { .. } => {
            if let Some(list) = &g.lines {
                for l in list.get_ref() {
                    check(named[2].0, list.span(), line_name(l))?;
                }
            }
        }
        GpioWiring::ShiftRegister { .. } => {
            for (key, v) in singles {
                if let Some(l) = v {
                    check(key, l.span(), line_name(l.get_ref()))?;
                }
            }
        }
    }
    Ok(GpioConfig {
        chip: g
            .chip
            .as_ref()
            .map_or(d.chip, |c| c.get_ref().trim().to_string()),
        wiring,
        rate_hz: cx.number(&g.rate_hz, "gpio.rate_hz", 10..=1000, 100, "scans a second")? as u32,
        mapping: Mapping {
            rotation,
            mirror: g.mirror.unwrap_or(false),
            detect_side: g.detect_side.unwrap_or(true),
        },
    })
}

fn command_line(cx: &Ctx, v: &Spanned<String>, key: &str) -> Result<String, ConfigError> {
    let line = v.get_ref().trim().to_string();
    match line.parse::<crate::control::Parsed>() {
        Ok(_) => Ok(line),
        // (The socket's answer leaves the command out; the config's owner wrote it: it is named,
        // shown as the line of the file is.)
        Err(e) => {
            let name = line.split_whitespace().next().unwrap_or("");
            let e = match e.strip_prefix("unknown command") {
                Some(rest) => format!("unknown command '{}'{rest}", name.escape_debug()),
                None => e,
            };
            cx.err(v.span(), key, e)
        }
    }
}

/// A setting that names a player: `white`, `black`, or `both` (none: `None`); and, where
/// `listener` is given, `listener` (that colour, if it is one).
fn player(
    cx: &Ctx,
    s: &Spanned<String>,
    key: &str,
    listener: Option<Option<Color>>,
) -> Result<Option<Color>, ConfigError> {
    match (s.get_ref().as_str(), listener) {
        ("both", _) => Ok(None),
        ("listener", Some(l)) => Ok(l),
        (side, _) if side.parse::<Color>().is_ok() => Ok(side.parse().ok()),
        (other, l) => {
            let accepted = if l.is_some() {
                "listener, both, white, black"
            } else {
                "both, white, black"
            };
            cx.err(
                s.span(),
                key,
                format!("'{other}' is not a player (accepted: {accepted})"),
            )
        }
    }
}

/// `rules.opponent_lifts`: whether a lift of the opponent's piece, put back, is its owner's
/// adjustment (true) or the player to move's touch; `auto`: an adjustment where a blind player
/// listens to his own speaker (a colour in `announce.listener`).
fn owner_adjusts(cx: &Ctx, r: &RawRules, listener: Option<Color>) -> Result<bool, ConfigError> {
    let Some(s) = &r.opponent_lifts else {
        return Ok(listener.is_some());
    };
    match s.get_ref().as_str() {
        "auto" => Ok(listener.is_some()),
        "touch" => Ok(false),
        "adjustment" => Ok(true),
        other => cx.err(
            s.span(),
            "rules.opponent_lifts",
            format!("'{other}' is no way to read such a lift (accepted: auto, touch, adjustment)"),
        ),
    }
}

fn control_config(
    cx: &Ctx,
    c: &RawControl,
    listener: Option<Color>,
) -> Result<ControlConfig, ConfigError> {
    let d = ControlConfig::default();
    // Whose the keypad is: the listener's (a blind player's own speaker and keypad), by
    // default; shared (`both`: it acts for the player to move); or a player's.
    let keypad_player = match &c.keypad_player {
        None => listener,
        Some(s) => player(cx, s, "control.keypad_player", Some(listener))?,
    };
    let mut keys = d.keys.clone();
    for (name, value) in c.keys.iter().flatten() {
        let key = format!("control.keys.{name}");
        let Some(code) = key_code(name) else {
            let names: Vec<&str> = KEY_CODES.iter().map(|(n, _)| *n).collect();
            return cx.err(
                value.span(),
                &key,
                format!("unknown key '{name}' (accepted: {})", names.join(", ")),
            );
        };
        let one = |v: &toml::Value, what: &str| -> Result<Option<String>, ConfigError> {
            let Some(text) = v.as_str() else {
                return cx.err(
                    value.span(),
                    &key,
                    format!("{what} must be a command in quotes, like \"last\""),
                );
            };
            if text.trim().is_empty() {
                return Ok(None);
            }
            let spanned = Spanned::new(value.span(), text.to_string());
            command_line(cx, &spanned, &key).map(Some)
        };
        let binding = match value.get_ref() {
            toml::Value::Table(t) => {
                if let Some(other) = t.keys().find(|k| *k != "short" && *k != "long") {
                    return cx.err(
                        value.span(),
                        &key,
                        format!("unknown field '{other}' (accepted: short, long)"),
                    );
                }
                Binding {
                    short: t
                        .get("short")
                        .map(|v| one(v, "short"))
                        .transpose()?
                        .flatten(),
                    long: t.get("long").map(|v| one(v, "long")).transpose()?.flatten(),
                }
            }
            v => Binding {
                short: one(v, "the value")?,
                long: None,
            },
        };
        if binding == Binding::default() {
            keys.0.remove(&code);
        } else {
            keys.0.insert(code, binding);
        }
    }
    let mut buttons = Vec::new();
    for (i, b) in c.buttons.iter().flatten().enumerate() {
        let key = format!("control.buttons[{}]", i + 1);
        let binding = Binding {
            short: b
                .short
                .as_ref()
                .map(|s| command_line(cx, s, &format!("{key}.short")))
                .transpose()?,
            long: b
                .long
                .as_ref()
                .map(|s| command_line(cx, s, &format!("{key}.long")))
                .transpose()?,
        };
        if binding == Binding::default() {
            return cx.err(b.line.span(), &key, "a button needs short or long".into());
        }
        buttons.push(ButtonConfig {
            line: line_name(b.line.get_ref()),
            binding,
        });
    }
    if buttons.len() > 64 {
        return cx.err(0..0, "control.buttons", "at most 64 buttons".into());
    }
    let text = |v: &Option<Spanned<String>>| {
        v.as_ref()
            .map(|s| s.get_ref().trim().to_string())
            .filter(|s| !s.is_empty())
    };
    if let (Some(sock), Some(s)) = (text(&c.socket), &c.socket) {
        socket_dir(Path::new(&sock)).or_else(|e| cx.err(s.span(), "control.socket", e))?;
    }
    Ok(ControlConfig {
        socket: text(&c.socket).map(PathBuf::from),
        keypad: text(&c.keypad),
        keypad_player,
        keys,
        buttons,
        long_press_ms: cx.millis(&c.long_press_ms, "control.long_press_ms", 200..=5000, 800)?,
        debounce_ms: cx.millis(&c.debounce_ms, "control.debounce_ms", 0..=500, 30)?,
    })
}

#[cfg(test)]
mod reference_file {
    use super::*;

    const REFERENCE: &str = include_str!("../../config/chessboardd.toml");

    /// The keys the parser accepts in a section, from its own "expected one of" message.
    fn known_keys(section: Option<&str>) -> Vec<String> {
        let doc = match section {
            Some(s) => format!("[{s}]\nzz_not_a_key = 1\n"),
            None => "zz_not_a_key = 1\n".to_string(),
        };
        let msg = Settings::parse(Path::new("probe.toml"), &doc)
            .unwrap_err()
            .to_string();
        let list = msg
            .split("expected one of")
            .nth(1)
            .or_else(|| msg.split("expected").nth(1))
            .unwrap();
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_reference_config_parses_to_the_defaults() {
        let c = Settings::parse(Path::new("config/chessboardd.toml"), REFERENCE).unwrap();
        let d = Settings::default();
        assert_eq!(c.engine.debounce_ms, d.engine.debounce_ms);
        assert_eq!(c.engine.settle_ms, d.engine.settle_ms);
        assert_eq!(c.engine.mismatch_ms, d.engine.mismatch_ms);
        assert_eq!(c.engine.promotion_ms, d.engine.promotion_ms);
        assert_eq!(c.engine.promotion_default, d.engine.promotion_default);
        assert_eq!(c.engine.rules, d.engine.rules);
        assert_eq!(c.engine.mode, d.engine.mode);
        assert_eq!(c.engine.time_control, d.engine.time_control);
        assert_eq!((c.lang, c.style, c.files), (d.lang, d.style, d.files));
        assert_eq!(c.board_names(), d.board_names());
        assert_eq!(c.speech.backend, d.speech.backend);
        assert_eq!(c.speech.voice, d.speech.voice);
        assert_eq!(c.speech.voice_pack, d.speech.voice_pack);
        assert_eq!(
            (c.speech.device.clone(), c.speech.volume),
            (d.speech.device.clone(), d.speech.volume)
        );
        assert_eq!(c.speech.announce, d.speech.announce);
        assert_eq!(c.gpio, d.gpio);
        assert_eq!(c.control, d.control);
        assert_eq!(c.engine.switch, d.engine.switch);
        assert_eq!(c.engine.wait_for_start, d.engine.wait_for_start);
        assert_eq!(c.engine.time_warnings_ms, d.engine.time_warnings_ms);
        assert_eq!(c.engine.voice, d.engine.voice);
        assert!(c.mqtt.is_none());
        assert!(c.engine.pgn_tags.is_empty());
        assert!(c.words.is_empty());
    }

    /// The comment of `[speech.words]` lists every word's key (from "Keys:" to the notes in
    /// brackets).
    #[test]
    fn the_reference_config_lists_every_word() {
        let from = REFERENCE
            .find("# Keys:")
            .expect("the list of the words' keys");
        let to = from + REFERENCE[from..].find("# (").expect("the notes after it");
        let listed: Vec<&str> = REFERENCE[from + "# Keys:".len()..to]
            .split(|c: char| c == '#' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        for key in crate::words::Words::KEYS {
            assert!(
                listed.contains(key),
                "speech.words.{key} is not listed in config/chessboardd.toml"
            );
        }
        for word in &listed {
            assert!(
                crate::words::Words::KEYS.contains(word),
                "config/chessboardd.toml lists '{word}', which is no word's key"
            );
        }
    }

    #[test]
    fn the_reference_config_documents_every_key() {
        let sections = known_keys(None);
        assert!(sections.len() >= 4, "{sections:?}");
        for section in &sections {
            assert!(
                REFERENCE.contains(&format!("[{section}]")),
                "[{section}] is not in the reference"
            );
            let keys = known_keys(Some(section));
            assert!(!keys.is_empty(), "no keys found for [{section}]");
            for key in keys {
                let documented = REFERENCE.lines().any(|l| {
                    l.trim_start().starts_with(&format!("{key} ="))
                        || l.trim() == format!("[{section}.{key}]")
                });
                assert!(
                    documented,
                    "{section}.{key} is not in config/chessboardd.toml"
                );
            }
        }
    }
}
