//! The speech thread: takes announcements, orders them by the queue's rules, synthesizes them
//! and plays them, interrupting a query answer when something more important comes.
//!
//! The synthesizer is made once, when the thread starts (the voice is initialised once, not per
//! phrase); the audio device is opened once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::audio::{earcon, Earcon, Player};
use super::queue::{Class, Item, Queue};
use super::synth::{Backend, SpeechError, Synth, Voice};
use crate::engine::{EventKind, Priority};

/// How the daemon speaks.
#[derive(Clone, Debug)]
pub struct SpeechConfig {
    pub backend: Backend,
    pub voice: Voice,
    /// The voice pack for the `clips` backend.
    pub voice_pack: PathBuf,
    /// Sound card (part of its name); `None`: the default one.
    pub device: Option<String>,
    /// 0.0 to 2.0.
    pub volume: f32,
    /// Write what would be played to this WAV file instead of a sound card.
    pub audio_out: Option<PathBuf>,
    pub announce: Announce,
}

impl Default for SpeechConfig {
    fn default() -> SpeechConfig {
        SpeechConfig {
            backend: Backend::default(),
            voice: Voice::default(),
            voice_pack: PathBuf::from("/usr/share/chessboardd/voice"),
            device: None,
            volume: 1.0,
            audio_out: None,
            announce: Announce::default(),
        }
    }
}

/// What is announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Announce {
    /// The player who listens: `None` for both (one speaker for the table).
    pub listener: Option<shakmaty::Color>,
    /// The listener's own moves, as a confirmation.
    pub own_moves: bool,
    pub opponent_moves: bool,
    /// Name every piece as it is lifted.
    pub touched: bool,
    /// How the listener hears the opponent's touches (a piece touched and put back).
    pub opponent_touches: TouchesTold,
    /// The short tones that sound (the others are silent).
    pub sounds: Vec<Earcon>,
}

impl Default for Announce {
    fn default() -> Announce {
        Announce {
            listener: None,
            own_moves: true,
            opponent_moves: true,
            touched: false,
            opponent_touches: TouchesTold::Tone,
            sounds: vec![
                Earcon::Lift,
                Earcon::Move,
                Earcon::Illegal,
                Earcon::Mismatch,
                Earcon::LowTime,
                Earcon::Flag,
            ],
        }
    }
}

/// How the opponent's touches are told to the listener (Appendix F2.9 (e)).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TouchesTold {
    Off,
    /// A short tone of its own.
    Tone,
    /// "Weiß berührt Springer Gustav eins".
    Words,
}

impl TouchesTold {
    pub const NAMES: crate::words::Names<TouchesTold> = crate::words::Names {
        what: "way to tell a touch",
        table: &[
            (TouchesTold::Off, "off"),
            (TouchesTold::Tone, "tone"),
            (TouchesTold::Words, "words"),
        ],
    };
}

crate::named!(TouchesTold);

/// What to do about one game event: words to say and a tone to play.
#[derive(Clone, Debug, PartialEq)]
pub struct Spoken {
    pub text: Option<(String, Class, Option<u32>)>,
    pub earcon: Option<Earcon>,
    /// A move was taken back: announcements from this ply on are void.
    pub retract: Option<u32>,
    /// The voice was changed: rate (words a minute) and volume (percent).
    pub voice: Option<(u32, u32)>,
    /// The listener silenced the speech (see [`Queue::silence`](super::queue::Queue::silence)).
    pub silence: bool,
}

/// Maps a game event to speech, by the announce settings. Pure.
pub fn spoken(kind: &EventKind, a: &Announce, phrases: &crate::words::Phrases) -> Spoken {
    let sound = |e| a.sounds.contains(&e).then_some(e);
    let nothing = Spoken {
        text: None,
        earcon: None,
        retract: None,
        voice: None,
        silence: false,
    };
    match kind {
        // A move of a correction was said in the correction's sentence.
        EventKind::Move {
            corrected: true, ..
        } => nothing,
        EventKind::Move {
            say, ply, color, ..
        } => {
            let own = a.listener.is_none_or(|l| l == *color);
            let wanted = if own && a.listener.is_some() {
                a.own_moves
            } else {
                a.opponent_moves || own && a.own_moves
            };
            Spoken {
                text: wanted.then(|| (say.clone(), Class::Move, Some(*ply))),
                earcon: sound(Earcon::Move),
                ..nothing
            }
        }
        EventKind::Touched { square, piece, .. } => Spoken {
            text: a.touched.then(|| {
                let text = crate::words::sentences(&phrases.piece_on(*piece, *square));
                (text, Class::Info, None)
            }),
            earcon: sound(Earcon::Lift),
            ..nothing
        },
        // Only a listener has an opponent: with one speaker for the table, nothing is told.
        EventKind::PutBack {
            square, piece, by, ..
        } if a.listener.is_some_and(|l| l != *by) => match a.opponent_touches {
            TouchesTold::Off => nothing,
            TouchesTold::Tone => Spoken {
                earcon: Some(Earcon::Touch),
                ..nothing
            },
            TouchesTold::Words => Spoken {
                text: Some((
                    phrases.touches(*by, &[(*piece, *square)]),
                    Class::Info,
                    None,
                )),
                ..nothing
            },
        },
        EventKind::Say { text, priority } => {
            let class = match priority {
                Priority::Error => Class::Error,
                Priority::Result => Class::Result,
                Priority::Info => Class::Info,
                Priority::Query => Class::Query,
            };
            Spoken {
                text: Some((text.clone(), class, None)),
                ..nothing
            }
        }
        EventKind::Illegal { .. } | EventKind::TouchMove { .. } => Spoken {
            earcon: sound(Earcon::Illegal),
            ..nothing
        },
        EventKind::Mismatch { .. } => Spoken {
            earcon: sound(Earcon::Mismatch),
            ..nothing
        },
        EventKind::Takeback { ply, .. } => Spoken {
            retract: Some(*ply),
            ..nothing
        },
        // Every ply from `ply` on is withdrawn: what is queued of them is not said (and one
        // being said stops); then the correction, which says the moves the board shows, to
        // every listener (it is an error: the players heard a wrong move). Its ply makes it
        // void in turn when those moves are taken back or corrected again before it is said.
        EventKind::Correction { ply, say, .. } => Spoken {
            text: Some((say.clone(), Class::Error, Some(*ply))),
            retract: Some(*ply),
            ..nothing
        },
        EventKind::TimeWarning { say, .. } => Spoken {
            text: Some((say.clone(), Class::Error, None)),
            earcon: sound(Earcon::LowTime),
            ..nothing
        },
        EventKind::GameOver {
            reason: crate::engine::event::EndReason::TimeForfeit,
            ..
        } => Spoken {
            earcon: sound(Earcon::Flag),
            ..nothing
        },
        EventKind::Voice { rate, volume } => Spoken {
            voice: Some((*rate, *volume)),
            ..nothing
        },
        EventKind::Silence => Spoken {
            silence: true,
            ..nothing
        },
        _ => nothing,
    }
}

enum Cmd {
    Say(Item, Instant),
    Retract(u32),
    /// Stop what is being said, and drop the answers waiting.
    Silence,
    Earcon(Earcon),
    /// Rate (words a minute) and volume (percent) from the next phrase on.
    Voice(u32, u32),
    /// Answer when everything queued has been played.
    Sync(Sender<()>),
    Finish,
}

/// The speech thread's commands for what a game event calls for, in order: a retraction first
/// (a correction's withdrawn moves are gone from the queue before the correction is queued),
/// then the voice, the tone, the words; `next_id` numbers the words.
fn commands(s: &Spoken, next_id: &mut u64) -> Vec<Cmd> {
    let mut out = Vec::new();
    if let Some(ply) = s.retract {
        out.push(Cmd::Retract(ply));
    }
    if s.silence {
        out.push(Cmd::Silence);
    }
    if let Some((rate, volume)) = s.voice {
        out.push(Cmd::Voice(rate, volume));
    }
    if let Some(e) = s.earcon {
        out.push(Cmd::Earcon(e));
    }
    if let Some((text, class, ply)) = &s.text {
        *next_id += 1;
        let item = Item {
            id: *next_id,
            text: text.clone(),
            class: *class,
            ply: *ply,
        };
        out.push(Cmd::Say(item, Instant::now()));
    }
    out
}

/// What the speech thread measured.
#[derive(Debug, Default)]
pub struct Report {
    /// For each utterance that reached the device: from being handed to the speaker to its
    /// first sample handed to the audio device.
    pub latencies: Vec<Duration>,
    /// Why there was no sound card output, if there was none.
    pub no_device: Option<String>,
    pub spoken: Vec<String>,
    pub errors: Vec<String>,
}

/// The handle of the speech thread.
pub struct Speaker {
    tx: Sender<Cmd>,
    next_id: u64,
    thread: Option<JoinHandle<Report>>,
}

fn make_synth(cfg: &SpeechConfig) -> Result<Box<dyn Synth>, SpeechError> {
    cfg.backend.make(cfg)
}

fn make_player(cfg: &SpeechConfig) -> Result<Player, SpeechError> {
    Ok(match &cfg.audio_out {
        Some(path) => Player::to_wav(path, cfg.volume)?,
        None if !cfg.backend.row().played => Player::silent(),
        None => Player::to_device(cfg.device.as_deref(), cfg.volume),
    })
}

impl Speaker {
    /// Starts the speech thread with its synthesizer and audio output. Errors in making the
    /// synthesizer (no voice, no voice pack) are returned here; a missing sound card is not an
    /// error (see [`Speaker::no_device`]).
    pub fn start(cfg: SpeechConfig) -> Result<(Speaker, Option<String>), SpeechError> {
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("speech".into())
            .spawn(move || {
                let made = make_synth(&cfg).and_then(|s| make_player(&cfg).map(|p| (s, p)));
                match made {
                    Ok((synth, player)) => {
                        let _ = ready_tx.send(Ok(player.no_device.clone()));
                        run(synth, player, rx, cfg.device.clone())
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        Report::default()
                    }
                }
            })
            .map_err(|e| SpeechError::Audio(format!("cannot start the speech thread: {e}")))?;
        let no_device = ready_rx
            .recv()
            .map_err(|_| SpeechError::Audio("the speech thread stopped".into()))??;
        Ok((
            Speaker {
                tx,
                next_id: 0,
                thread: Some(thread),
            },
            no_device,
        ))
    }

    /// Queues an announcement; returns its id.
    pub fn say(&mut self, text: &str, class: Class, ply: Option<u32>) -> u64 {
        self.next_id += 1;
        let item = Item {
            id: self.next_id,
            text: text.to_string(),
            class,
            ply,
        };
        let _ = self.tx.send(Cmd::Say(item, Instant::now()));
        self.next_id
    }

    /// Speaks what a game event calls for.
    pub fn event(&mut self, s: &Spoken) {
        for cmd in commands(s, &mut self.next_id) {
            let _ = self.tx.send(cmd);
        }
    }

    /// Waits until everything queued so far has been said and played.
    pub fn sync(&self) {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(Cmd::Sync(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Says everything queued, waits until it has been played, and stops the thread.
    pub fn finish(mut self) -> Report {
        let _ = self.tx.send(Cmd::Finish);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

struct State {
    device: Option<String>,
    queue: Queue,
    syncs: Vec<Sender<()>>,
    submitted: HashMap<u64, Instant>,
    finishing: bool,
    report: Report,
    /// A new speech rate, for the synthesizer before its next phrase.
    rate: Option<u32>,
    /// Query answers dropped since the queue was last not full of them.
    dropped: u64,
}

impl State {
    fn new(device: Option<String>) -> State {
        State {
            device,
            queue: Queue::default(),
            syncs: Vec::new(),
            submitted: HashMap::new(),
            finishing: false,
            report: Report::default(),
            rate: None,
            dropped: 0,
        }
    }

    /// Takes a command; true when it interrupts what is being spoken (of class `speaking`).
    fn take(
        &mut self,
        cmd: Cmd,
        speaking: Option<(Class, Option<u32>)>,
        player: &mut Player,
    ) -> bool {
        match cmd {
            Cmd::Say(item, at) => {
                let (id, class) = (item.id, item.class);
                let pushed = self.queue.push(item, speaking.map(|s| s.0));
                if pushed.dropped {
                    // Said once when it starts, and how many when it ends: a flood of
                    // questions does not flood the log too.
                    if self.dropped == 0 {
                        tracing::warn!(
                            "speech: {} answers to questions wait to be said; more are not said                              until they are (moves are always said)",
                            super::queue::MAX_QUERIES
                        );
                    }
                    self.dropped += 1;
                } else {
                    self.submitted.insert(id, at);
                    // An answer taken again: the flood is over.
                    if self.dropped > 0 && class == Class::Query {
                        tracing::warn!(
                            "speech: {} answers to questions were not said",
                            self.dropped
                        );
                        self.dropped = 0;
                    }
                }
                pushed.interrupt
            }
            Cmd::Retract(ply) => {
                self.queue.retract_from(ply);
                // A move taken back while it is being said is not said to the end.
                speaking.is_some_and(|(_, p)| p.is_some_and(|p| p >= ply))
            }
            Cmd::Silence => {
                self.queue.silence();
                speaking.is_some()
            }
            Cmd::Earcon(e) => {
                player.write(&earcon(e));
                // Between announcements nothing else lets a tone play out.
                if speaking.is_none() {
                    player.wait_drained(Duration::from_secs(2));
                    player.idle(self.device.as_deref());
                }
                false
            }
            Cmd::Sync(tx) => {
                self.syncs.push(tx);
                false
            }
            Cmd::Voice(rate, volume) => {
                self.rate = Some(rate);
                player.set_volume(volume as f32 / 100.0);
                false
            }
            Cmd::Finish => {
                self.finishing = true;
                false
            }
        }
    }
}

fn run(
    mut synth: Box<dyn Synth>,
    mut player: Player,
    rx: Receiver<Cmd>,
    device: Option<String>,
) -> Report {
    let mut st = State::new(device);
    st.report.no_device = player.no_device.clone();
    loop {
        let Some(item) = st.queue.pop() else {
            if !st.syncs.is_empty() {
                player.wait_drained(Duration::from_secs(30));
                player.idle(st.device.as_deref());
                for tx in st.syncs.drain(..) {
                    let _ = tx.send(());
                }
            }
            if st.finishing {
                break;
            }
            match rx.recv() {
                Ok(cmd) => {
                    st.take(cmd, None, &mut player);
                }
                Err(_) => break,
            }
            continue;
        };
        if let Some(rate) = st.rate.take() {
            synth.set_rate(rate);
        }
        let speaking = Some((item.class, item.ply));
        player.mark(item.id);
        let mut interrupted = false;
        let result = synth.speak(&item.text, &mut |chunk| {
            player.write(chunk);
            while let Ok(cmd) = rx.try_recv() {
                interrupted |= st.take(cmd, speaking, &mut player);
            }
            !interrupted
        });
        player.end();
        if let Err(e) = result {
            st.report.errors.push(e.to_string());
        }
        if !interrupted {
            st.report.spoken.push(item.text.clone());
            // Let it play out, still listening for interruptions; a device that stopped taking
            // samples (unplugged) does not hold the queue up for longer than the sound lasts.
            let lasts = Duration::from_secs_f64(
                player.pending() as f64 / f64::from(super::synth::SAMPLE_RATE),
            );
            let give_up = std::time::Instant::now() + lasts + Duration::from_secs(2);
            while player.pending() > 0 && std::time::Instant::now() < give_up {
                match rx.recv_timeout(Duration::from_millis(10)) {
                    Ok(cmd) => {
                        if st.take(cmd, speaking, &mut player) {
                            interrupted = true;
                            break;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        if interrupted {
            player.flush();
        }
        player.idle(st.device.as_deref());
        for (id, at) in player.take_first_audio() {
            if let Some(sent) = st.submitted.remove(&id) {
                st.report.latencies.push(at.saturating_duration_since(sent));
            }
        }
    }
    player.wait_drained(Duration::from_secs(30));
    for (id, at) in player.take_first_audio() {
        if let Some(sent) = st.submitted.remove(&id) {
            st.report.latencies.push(at.saturating_duration_since(sent));
        }
    }
    if let Err(e) = player.finish() {
        st.report.errors.push(e.to_string());
    }
    st.report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{FileWords, Lang, Phrases, Style};
    use shakmaty::{Color, Role, Square};

    fn mv(ply: u32, color: Color) -> EventKind {
        EventKind::Move {
            ply,
            color,
            uci: "e2e4".into(),
            san: "e4".into(),
            fen: String::new(),
            say: "Eva vier".into(),
            white_ms: None,
            black_ms: None,
            recovered: false,
            touch_checked: true,
            corrected: false,
        }
    }

    #[test]
    fn announce_settings_choose_what_is_said() {
        let p = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let blind_white = Announce {
            listener: Some(Color::White),
            own_moves: false,
            ..Announce::default()
        };
        assert_eq!(spoken(&mv(1, Color::White), &blind_white, &p).text, None);
        assert_eq!(
            spoken(&mv(2, Color::Black), &blind_white, &p).text,
            Some(("Eva vier".into(), Class::Move, Some(2)))
        );
        let both = Announce::default();
        assert!(spoken(&mv(1, Color::White), &both, &p).text.is_some());
        let touched = EventKind::Touched {
            square: Square::G1,
            piece: Role::Knight,
            color: Color::White,
        };
        assert_eq!(
            spoken(&touched, &both, &p).text,
            None,
            "touched pieces are off by default"
        );
        assert_eq!(spoken(&touched, &both, &p).earcon, Some(Earcon::Lift));
        let on = Announce {
            touched: true,
            sounds: vec![],
            ..Announce::default()
        };
        assert_eq!(
            spoken(&touched, &on, &p).text.map(|t| t.0),
            Some("Springer Gustav eins".into())
        );
        assert_eq!(spoken(&touched, &on, &p).earcon, None);
    }

    /// Appendix F2.9 (e): the opponent's touches told to the listener, as a tone or in words
    /// (German and English), never his own, never to a table's one speaker.
    #[test]
    fn the_opponents_touches_are_told_as_set() {
        let put_back = EventKind::PutBack {
            square: Square::G8,
            piece: Role::Knight,
            color: Color::Black,
            by: Color::Black,
        };
        let white = |told| Announce {
            listener: Some(Color::White),
            opponent_touches: told,
            ..Announce::default()
        };
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let tone = spoken(&put_back, &white(TouchesTold::Tone), &de);
        assert_eq!((tone.text, tone.earcon), (None, Some(Earcon::Touch)));
        assert_eq!(
            Announce::default().opponent_touches,
            TouchesTold::Tone,
            "a tone by default"
        );
        let words = spoken(&put_back, &white(TouchesTold::Words), &de);
        assert_eq!(
            words.text,
            Some((
                "Schwarz berührt Springer Gustav acht".into(),
                Class::Info,
                None
            ))
        );
        assert_eq!(words.earcon, None);
        assert_eq!(
            spoken(&put_back, &white(TouchesTold::Words), &en)
                .text
                .map(|t| t.0),
            Some("Black touches Knight Gustav eight".into())
        );
        let off = spoken(&put_back, &white(TouchesTold::Off), &de);
        assert_eq!((off.text, off.earcon), (None, None));
        // Black's own touches are not told to Black; one speaker for the table hears none.
        let black = Announce {
            listener: Some(Color::Black),
            opponent_touches: TouchesTold::Words,
            ..Announce::default()
        };
        assert_eq!(spoken(&put_back, &black, &de).text, None);
        let table = Announce {
            opponent_touches: TouchesTold::Words,
            ..Announce::default()
        };
        let told = spoken(&put_back, &table, &de);
        assert_eq!((told.text, told.earcon), (None, None));
    }

    /// The move events of `sans` from the initial position, each with its announcement in
    /// `p`'s words; those from ply `corrected` on are the moves of a correction.
    fn story(p: &Phrases, sans: &[&str], corrected: u32) -> Vec<EventKind> {
        use shakmaty::san::{San, SanPlus};
        use shakmaty::{CastlingMode, Chess, Position};
        let mut pos = Chess::default();
        let mut out = Vec::new();
        for (i, san) in sans.iter().enumerate() {
            let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
            let color = pos.turn();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            let ply = i as u32 + 1;
            out.push(EventKind::Move {
                ply,
                color,
                uci: m.to_uci(CastlingMode::Standard).to_string(),
                san: san.to_string(),
                fen: String::new(),
                say: p.announce(&san, m),
                white_ms: None,
                black_ms: None,
                recovered: ply >= corrected,
                touch_checked: ply < corrected,
                corrected: ply >= corrected,
            });
        }
        out
    }

    fn say_of(e: &EventKind) -> String {
        match e {
            EventKind::Move { say, .. } => say.clone(),
            other => panic!("not a move: {other:?}"),
        }
    }

    /// 1. e4 e5 2. Nf3 announced; later readings show 2. Nc3: the correction, then its move.
    fn corrected_knight(p: &Phrases) -> Vec<EventKind> {
        let mut events = story(p, &["e4", "e5", "Nf3"], u32::MAX);
        let corrected = story(p, &["e4", "e5", "Nc3"], 3).split_off(2);
        events.push(EventKind::Correction {
            ply: 3,
            withdrawn: vec!["Nf3".into()],
            rulings: vec![],
            say: p.correction(&corrected.iter().map(say_of).collect::<Vec<_>>()),
        });
        events.extend(corrected);
        events
    }

    /// What the speech thread says of `events` handed to it before it says anything (all of
    /// them queued at once, as when they come while something else is being said).
    fn heard(events: &[EventKind], a: &Announce, p: &Phrases) -> Vec<String> {
        let mut st = State::new(None);
        let mut player = Player::silent();
        let mut id = 0;
        for e in events {
            for cmd in commands(&spoken(e, a, p), &mut id) {
                st.take(cmd, None, &mut player);
            }
        }
        std::iter::from_fn(|| st.queue.pop())
            .map(|i| i.text)
            .collect()
    }

    #[test]
    fn a_correction_is_said_once_and_the_withdrawn_move_not_at_all() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let events = corrected_knight(&de);
        assert_eq!(
            heard(&events, &Announce::default(), &de),
            ["Eva vier", "Eva fünf", "Korrektur: Springer Cesar drei"]
        );
        let en = Phrases::new(Lang::En, Style::Short, FileWords::Phonetic);
        let events = corrected_knight(&en);
        assert_eq!(
            heard(&events, &Announce::default(), &en),
            ["Eva four", "Eva five", "Correction: Knight Cesar three"]
        );
        // A listener who does not want his own moves still hears the correction of one (and
        // the corrected move is never said on its own).
        let blind_black = Announce {
            listener: Some(Color::Black),
            own_moves: false,
            ..Announce::default()
        };
        assert_eq!(
            heard(&events, &blind_black, &en),
            ["Eva four", "Correction: Knight Cesar three"]
        );
        let (last, correction) = (&events[4], &events[3]);
        assert_eq!(spoken(last, &Announce::default(), &en).text, None);
        assert_eq!(spoken(last, &Announce::default(), &en).earcon, None);
        assert_eq!(
            spoken(correction, &Announce::default(), &en),
            Spoken {
                text: Some((
                    "Correction: Knight Cesar three".into(),
                    Class::Error,
                    Some(3)
                )),
                earcon: None,
                retract: Some(3),
                voice: None,
                silence: false,
            }
        );
    }

    #[test]
    fn silence_stops_what_is_said_and_drops_the_answers_waiting_not_the_moves() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let mut player = Player::silent();
        let mut st = State::new(None);
        let mut id = 0;
        let mut take = |st: &mut State, kind: &EventKind, speaking| {
            let mut interrupted = false;
            for c in commands(&spoken(kind, &Announce::default(), &de), &mut id) {
                interrupted |= st.take(c, speaking, &mut player);
            }
            interrupted
        };
        let say = |text: &str, priority| EventKind::Say {
            text: text.into(),
            priority,
        };
        // The whole position is being said; another answer, a piece's name, a move and a
        // ruling wait.
        let position = Some((Class::Query, None));
        take(&mut st, &say("Weiß am Zug", Priority::Query), position);
        take(&mut st, &say("Läufer", Priority::Info), position);
        take(&mut st, &mv(3, Color::White), position);
        take(&mut st, &say("Unzulässiger Zug", Priority::Error), position);
        assert!(take(&mut st, &EventKind::Silence, position));
        let left: Vec<String> = std::iter::from_fn(|| st.queue.pop())
            .map(|i| i.text)
            .collect();
        assert_eq!(left, ["Eva vier", "Unzulässiger Zug"]);
        // A move being said stops too (it can be asked again); nothing said, nothing stops.
        assert!(take(
            &mut st,
            &EventKind::Silence,
            Some((Class::Move, Some(3)))
        ));
        assert!(!take(&mut st, &EventKind::Silence, None));
    }

    #[test]
    fn a_ruling_withdrawn_is_said_and_a_move_after_it_too() {
        for (lang, said) in [
            (
                Lang::AppendixF,
                [
                    "Eva vier",
                    "Korrektur: Entscheidung zurückgenommen",
                    "Eva fünf",
                ],
            ),
            (
                Lang::En,
                ["Eva four", "Correction: ruling withdrawn", "Eva five"],
            ),
        ] {
            let p = Phrases::new(lang, Style::Short, FileWords::Phonetic);
            let mut events = story(&p, &["e4", "e5"], u32::MAX);
            // The correction withdrew a touch-move ruling and no move: the next move is ply 2.
            events.insert(
                1,
                EventKind::Correction {
                    ply: 2,
                    withdrawn: vec![],
                    rulings: vec!["touch_move"],
                    say: p.correction(&[]),
                },
            );
            assert_eq!(heard(&events, &Announce::default(), &p), said);
        }
    }

    #[test]
    fn a_withdrawn_move_being_said_stops_and_an_earlier_one_is_said_to_the_end() {
        let de = Phrases::new(Lang::AppendixF, Style::Short, FileWords::Phonetic);
        let events = corrected_knight(&de);
        let mut player = Player::silent();
        let mut id = 0;
        // Whether any of the event's commands interrupts what is being said (every one taken).
        let cmds = |st: &mut State, e: &EventKind, speaking, player: &mut Player, id: &mut u64| {
            let mut interrupted = false;
            for c in commands(&spoken(e, &Announce::default(), &de), id) {
                interrupted |= st.take(c, speaking, player);
            }
            interrupted
        };
        // 2. Nf3 is being said when the correction comes: it stops.
        let mut st = State::new(None);
        assert!(cmds(
            &mut st,
            &events[3],
            Some((Class::Move, Some(3))),
            &mut player,
            &mut id
        ));
        // 1... e5 is being said: it is said to the end, the correction after it.
        let mut st = State::new(None);
        assert!(!cmds(
            &mut st,
            &events[3],
            Some((Class::Move, Some(2))),
            &mut player,
            &mut id
        ));
        assert!(!cmds(
            &mut st,
            &events[4],
            Some((Class::Move, Some(2))),
            &mut player,
            &mut id
        ));
        let said: Vec<String> = std::iter::from_fn(|| st.queue.pop())
            .map(|i| i.text)
            .collect();
        assert_eq!(said, ["Korrektur: Springer Cesar drei"]);
    }

    #[test]
    fn the_text_backend_speaks_every_announcement_in_order() {
        let cfg = SpeechConfig {
            backend: Backend::Text,
            ..SpeechConfig::default()
        };
        let (mut s, _) = Speaker::start(cfg).unwrap();
        s.say("Eva vier", Class::Move, Some(1));
        s.say("Eva fünf", Class::Move, Some(2));
        s.say("Weiß am Zug", Class::Query, None);
        let r = s.finish();
        assert_eq!(r.spoken, vec!["Eva vier", "Eva fünf", "Weiß am Zug"]);
        assert!(r.errors.is_empty());
    }

    #[test]
    fn espeak_into_a_wav_file() {
        let path =
            std::env::temp_dir().join(format!("chessboardd-speaker-{}.wav", std::process::id()));
        let cfg = SpeechConfig {
            audio_out: Some(path.clone()),
            ..SpeechConfig::default()
        };
        let (mut s, _) = Speaker::start(cfg).unwrap();
        s.say("Springer Felix drei", Class::Move, Some(3));
        let r = s.finish();
        assert_eq!(r.latencies.len(), 1);
        let samples: Vec<i16> = hound::WavReader::open(&path)
            .unwrap()
            .into_samples()
            .map(|x| x.unwrap())
            .collect();
        let secs = samples.len() as f64 / crate::speech::synth::SAMPLE_RATE as f64;
        assert!((0.6..4.0).contains(&secs), "{secs} s");
    }
}
