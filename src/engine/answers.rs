//! Buttons and commands: what each does to the game, and the answers to questions (F2.9d: the
//! number of moves and both players' time; the position; the last moves). Every question, from
//! the controls or a button, is answered by [`Engine::ask`].

use shakmaty::{Bitboard, Chess, Color, Piece, Position, Role, Square};

use super::arbiter::{Engine, Held, Phase};
use super::computer::Asked;
use super::event::{Event, EventKind, Millis, Priority};
use super::game::Ply;
use super::input::{Button, Command, Help, Query, VoiceChange, CONFIRM_MS};
use super::rules::Mode;
use super::settings::TimeAnswer;
use crate::words::{sentences, Style};

impl Engine {
    /// A button pressed at time `t` (a board's, a script's, or a command's): acts at once. A
    /// button that asks a question is answered by [`Engine::ask`].
    pub fn press(&mut self, t: Millis, button: Button, out: &mut Vec<Event>) {
        if let Some(q) = button.query() {
            self.ask(t, q, out);
            return;
        }
        self.advance(t, out);
        // (An adjourned game stands too: only a draw, a resignation, a new game, resuming.)
        let over = self.standing();
        match button {
            // Pressing the clock completes whatever the player left standing, now.
            Button::Clock => {
                if !over {
                    // The clock pressed ends a j'adoube (4.2).
                    self.turn.adjusting = false;
                    self.pressing = true;
                    if let Some(h) = self.alt.take() {
                        self.turn.touches_deferred = false;
                        self.settle(h, out);
                        self.report_touches(out);
                        self.evaluate(out);
                    } else if let Phase::Holding(_) = self.phase {
                        self.hold_due(out);
                    }
                    self.pressing = false;
                }
                return;
            }
            Button::Promote(role) => {
                // The choice of the player not to move: his next promotion's, ahead.
                if let Some(a) = self.actor().filter(|&a| !over && a != self.game.pos.turn()) {
                    self.promo_ahead = Some((a, role));
                    let text = self.s.phrases.words.piece(role).to_string();
                    self.say(out, text, Priority::Info);
                    return;
                }
                if !over {
                    if let Phase::Holding(h) = &self.phase {
                        if !matches!(h.held, Held::Promotion(_)) {
                            self.settle_hold(out);
                        }
                    }
                    self.turn.promo_choice = Some(role);
                    if let Phase::Holding(h) = &self.phase {
                        if matches!(h.held, Held::Promotion(_)) {
                            let candidates = self.matching_moves();
                            if let Some(m) = candidates.iter().find(|c| c.promotion() == Some(role))
                            {
                                self.phase = Phase::Moving;
                                self.complete(*m, false, out);
                                // (The move's announcement names the piece.)
                                return;
                            }
                        }
                    }
                    // The choice confirmed aloud: the next promotion takes this piece (not
                    // while a move is sealed: the opponent is not to know it).
                    let sealing = self.sealing == Some(self.game.pos.turn());
                    if !sealing {
                        let text = self.s.phrases.words.piece(role).to_string();
                        self.say(out, text, Priority::Info);
                    }
                    // A promotion the board was not seen making may be waiting for it.
                    if self.phase == Phase::Moving && self.alt.is_none() && !self.passive() {
                        self.revise(false, None, out);
                    }
                }
                return;
            }
            _ => {}
        }
        // Any other button comes after what the board shows: a held move counts first.
        self.settle_hold(out);
        self.resolve_alt_as_continued(out);
        let over = self.phase == Phase::Over;
        let standing = self.standing();
        let w = &self.s.phrases.words;
        match button {
            // (Asked above.)
            Button::Clock
            | Button::Promote(_)
            | Button::Repeat
            | Button::Time
            | Button::Moves
            | Button::Position => {}
            Button::Draw => {
                if !over {
                    self.draw_button(out);
                }
            }
            Button::Claim => {
                if !standing {
                    self.claim(out);
                }
            }
            Button::Resign => {
                if !over {
                    self.resign(out);
                }
            }
            Button::Adjust => {
                if !standing {
                    self.turn.adjusting = true;
                    let text = w.adjust.clone();
                    self.say(out, text, Priority::Info);
                }
            }
            Button::NewGame => self.new_game(self.now, Chess::default(), false, out),
            Button::Adjourn => self.adjourn_button(out),
            Button::Resume => {
                let text = self.clock_command(Command::Resume, out);
                if !text.is_empty() {
                    self.answer(text, out);
                }
            }
            Button::Takeback if self.adjourned() => {
                let text = w.adjourned.clone();
                self.say(out, text, Priority::Info);
            }
            Button::Takeback => {
                let plies = self.takeback_plies();
                if let (Mode::Casual, Some(n)) = (self.s.mode, plies) {
                    // The record goes back at once; the board is still to be put back (the
                    // move standing there is not made again), and is reported if it is not.
                    for _ in 0..n {
                        self.take_back(out);
                    }
                    self.phase = Phase::Restoring {
                        diff: (Bitboard::EMPTY, Bitboard::EMPTY),
                    };
                    self.mismatch.owe_restored = true;
                    self.evaluate(out);
                } else {
                    let text = if self.s.mode == Mode::Casual {
                        w.no_move_yet.clone()
                    } else {
                        w.no_takeback.clone()
                    };
                    self.say(out, text, Priority::Info);
                }
            }
        }
    }

    /// Answers a question, from a command or a button: the one place questions are answered.
    /// The answer is spoken (query priority) and returned, for the control socket's answer.
    pub fn ask(&mut self, t: Millis, q: Query, out: &mut Vec<Event>) -> String {
        self.advance(t, out);
        // A question comes after what the board shows: a held move counts first.
        self.settle_hold(out);
        self.resolve_alt_as_continued(out);
        let p = self.s.phrases.clone();
        let w = &p.words;
        let text = match q {
            Query::Last => self.last_say().unwrap_or_else(|| w.no_move_yet.clone()),
            Query::Moves(n) => {
                let plies = &self.game.plies;
                let from = plies.len().saturating_sub(n.max(1) as usize);
                let said = self.moves_said(&plies[from..]);
                if said.is_empty() {
                    w.no_move_yet.clone()
                } else {
                    said
                }
            }
            Query::Time { show_clock } => {
                let text = self.time_text();
                if show_clock {
                    self.emit_clock(out);
                }
                text
            }
            Query::Turn => format!("{} {}", w.color(self.game.pos.turn()), w.to_move),
            Query::Position(color, role) => self.pieces_text(color, role, Bitboard::FULL),
            Query::Rank(r) => {
                let text = self.pieces_text(None, None, Bitboard::from_rank(r));
                format!("{} {}: {text}", w.rank, w.rank(r))
            }
            Query::File(f) => {
                let text = self.pieces_text(None, None, Bitboard::from_file(f));
                format!("{} {}: {text}", w.file_word, w.file(f))
            }
            Query::Square(sq) => self.square_text(sq),
            Query::Look(l) => self.look(l),
            Query::Touches => self.touches_text(),
            Query::Material => self.material_text(),
            Query::Players => self.players_text(),
            Query::MoveNumber(n) => {
                let plies = &self.game.plies;
                let of_n = |ply: &Ply| ply.before.fullmoves().get() == n;
                let from = plies.iter().position(of_n).unwrap_or(plies.len());
                let to = plies.iter().rposition(of_n).map_or(from, |i| i + 1);
                let said = self.moves_said(&plies[from..to]);
                if said.is_empty() {
                    w.no_move_yet.clone()
                } else {
                    said
                }
            }
            Query::Help(part) => self.help_text(part),
        };
        self.answer(text, out)
    }

    /// Carries out a command of `by`'s control (a blind player's own keypad): resigning,
    /// claiming, offering or accepting a draw and choosing a promotion's piece are his, in
    /// either player's turn; a claim out of his turn is refused with words. `None`: a shared
    /// control, as [`Engine::command`].
    pub fn command_by(
        &mut self,
        t: Millis,
        cmd: Command,
        by: Option<Color>,
        out: &mut Vec<Event>,
    ) -> String {
        self.by = by;
        let text = self.command(t, cmd, out);
        self.by = None;
        text
    }

    /// Carries out a command; a question is answered by [`Engine::ask`]. Returns the text
    /// said, for the control socket's answer.
    pub fn command(&mut self, t: Millis, cmd: Command, out: &mut Vec<Event>) -> String {
        // An adjourned game is resumed by `resume` confirmed (A7: the envelope is opened once).
        let cmd = match cmd {
            Command::Resume if self.adjourned() => Command::Press(Button::Resume),
            other => other,
        };
        // A confirmation is the same command next: any other in between drops it.
        if self.unconfirmed.is_some_and(|(u, _)| u != cmd) {
            self.unconfirmed = None;
        }
        if let Command::Ask(q) = cmd {
            return self.ask(t, q, out);
        }
        self.advance(t, out);
        if !matches!(cmd, Command::Press(_)) {
            // An order comes after what the board shows: a held move counts first.
            self.settle_hold(out);
            self.resolve_alt_as_continued(out);
        }
        let w = &self.s.phrases.words;
        let text = match cmd {
            Command::Ask(_) => unreachable!("answered above"),
            Command::Pause | Command::Resume | Command::TogglePause | Command::Start => {
                let text = self.clock_command(cmd, out);
                if text.is_empty() {
                    return String::new();
                }
                text
            }
            Command::Voice(change) => {
                let v = self.voice;
                let next = v.changed(change);
                let text = if next == v {
                    w.voice_limit.clone()
                } else {
                    match change {
                        VoiceChange::Faster => w.faster.clone(),
                        VoiceChange::Slower => w.slower.clone(),
                        VoiceChange::Louder => w.louder.clone(),
                        VoiceChange::Quieter => w.quieter.clone(),
                    }
                };
                self.voice = next;
                // The new voice speaks its own confirmation.
                self.emit(
                    out,
                    EventKind::Voice {
                        rate: next.rate,
                        volume: next.volume,
                    },
                );
                text
            }
            Command::Press(b) if self.irrevocable(b) => {
                if let Some(text) = self.claim_refused().filter(|_| b == Button::Claim) {
                    return self.answer(text, out);
                }
                if let Some(text) = self.adjourn_refused().filter(|_| b == Button::Adjourn) {
                    return self.answer(text, out);
                }
                if let Some(text) = self.unconfirmed(cmd, out) {
                    return text;
                }
                let before = out.len();
                self.press(self.now, b, out);
                return said_since(out, before);
            }
            Command::Silence => {
                self.emit(out, EventKind::Silence);
                return String::new();
            }
            Command::Hint => return self.ask_computer(Asked::Hint, out),
            Command::Evaluate => return self.ask_computer(Asked::Evaluate, out),
            Command::Switch => {
                let refusal = if self.s.mode == Mode::Tournament {
                    Some(w.training_only.clone())
                } else if self.computer.is_none() {
                    Some(w.no_computer.clone())
                } else {
                    None
                };
                if let Some(text) = refusal {
                    return self.answer(text, out);
                }
                if let Some(text) = self.unconfirmed(cmd, out) {
                    return text;
                }
                let before = out.len();
                self.switch_colours(out);
                return said_since(out, before);
            }
            Command::Press(b) => {
                let before = out.len();
                self.press(self.now, b, out);
                return said_since(out, before);
            }
        };
        self.answer(text, out)
    }

    /// Pause, resume, start: the clocks stopped for the arbiter and started again (Art.
    /// 6.13); an adjourned game resumed (A5, A9). Returns the text to answer (empty when it
    /// was said already).
    fn clock_command(&mut self, cmd: Command, out: &mut Vec<Event>) -> String {
        let w = &self.s.phrases.words;
        if self.adjourned() {
            if cmd == Command::Resume {
                // (Said there: the envelope opened, or the position to set up first.)
                self.resume_adjourned(out);
                return String::new();
            }
            // Only `resume` opens the envelope; a pause asks for it no longer.
            if let Phase::Adjourned { opening, .. } = &mut self.phase {
                *opening = false;
            }
            return w.adjourned.clone();
        }
        let standing = self.clock.as_ref().is_some_and(|c| c.is_paused());
        let pause = match cmd {
            Command::Pause => true,
            Command::TogglePause => !standing,
            _ => false,
        };
        let turn = self.game.pos.turn();
        let over = self.phase == Phase::Over;
        if let Some(c) = &mut self.clock {
            if pause {
                c.pause(self.now);
            } else if standing {
                c.resume(self.now);
            } else if cmd == Command::Start && c.running().is_none() && !over {
                c.start(turn, self.now);
            }
        }
        let text = if pause {
            w.paused.clone()
        } else if cmd == Command::Start {
            w.clock_started.clone()
        } else {
            w.resumed.clone()
        };
        self.emit_clock(out);
        text
    }

    /// A button whose command cannot be undone, and wants the same command again to confirm:
    /// resigning, claiming, accepting a draw, a new game, a takeback, adjourning.
    fn irrevocable(&self, b: Button) -> bool {
        let over = self.phase == Phase::Over;
        match b {
            Button::Adjourn => !over && self.sealing.is_none() && !self.adjourned(),
            Button::Resume => self.adjourned(),
            Button::Claim => !self.standing(),
            Button::Resign => !over,
            Button::Draw => !over && self.draw_offer.is_some_and(|o| self.actor() != Some(o)),
            Button::NewGame | Button::Takeback => true,
            _ => false,
        }
    }

    /// Why the claim button is not the actor's to press now, in words: a claim is the player
    /// to move's (Art. 9.2, 9.3), or, in blitz, the illegal move's opponent's (Appendix C3).
    fn claim_refused(&self) -> Option<String> {
        let by = self.actor()?;
        let his =
            self.phase == Phase::Over || by == self.game.pos.turn() || self.win_claim == Some(by);
        let w = &self.s.phrases.words;
        (!his).then(|| w.not_to_move.replace("{side}", w.color(by)))
    }

    /// A command that wants the same command again to confirm: `Some(text said)` when this
    /// is not yet the confirmation (it is asked for, naming what it confirms), `None` when it
    /// is.
    fn unconfirmed(&mut self, cmd: Command, out: &mut Vec<Event>) -> Option<String> {
        let confirmed = self
            .unconfirmed
            .take()
            .is_some_and(|(u, at)| u == cmd && self.now.saturating_sub(at) <= CONFIRM_MS);
        if confirmed {
            return None;
        }
        self.unconfirmed = Some((cmd, self.now));
        let w = &self.s.phrases.words;
        let side = |c: Color| w.color(c);
        let turn = self.game.pos.turn();
        let what = match cmd {
            Command::Press(Button::Resign) => w
                .confirm_resign
                .replace("{side}", side(self.actor().unwrap_or(turn))),
            Command::Press(Button::Claim) => w.confirm_claim.replace(
                "{side}",
                side(self.actor().or(self.win_claim).unwrap_or(turn)),
            ),
            Command::Press(Button::Draw) => {
                let offered = self.draw_offer.unwrap_or(!turn);
                w.confirm_draw.replace("{side}", side(!offered))
            }
            Command::Press(Button::NewGame) => format!("{}?", w.command("new-game")),
            Command::Press(Button::Takeback) => format!("{}?", w.command("takeback")),
            Command::Press(Button::Adjourn) => format!("{}?", w.command("adjourn")),
            Command::Press(Button::Resume) => format!("{}?", w.command("resume")),
            Command::Switch => format!("{}?", w.command("switch")),
            _ => String::new(),
        };
        let text = sentences(format!("{what} {}", w.confirm).trim_start());
        self.say(out, text.clone(), Priority::Query);
        Some(text)
    }

    /// Says `text` as a sentence with query priority, and returns it as said.
    fn answer(&mut self, text: String, out: &mut Vec<Event>) -> String {
        let text = sentences(&text);
        self.say(out, text.clone(), Priority::Query);
        text
    }

    /// The pieces on `squares`, of one side or kind if asked, white first, kings first.
    pub(super) fn pieces_text(
        &self,
        color: Option<Color>,
        role: Option<Role>,
        squares: Bitboard,
    ) -> String {
        let p = &self.s.phrases;
        let board = self.game.pos.board();
        let mut parts = Vec::new();
        for c in [Color::White, Color::Black]
            .into_iter()
            .filter(|c| color.is_none_or(|x| x == *c))
        {
            let mut side = Vec::new();
            for r in [
                Role::King,
                Role::Queen,
                Role::Rook,
                Role::Bishop,
                Role::Knight,
                Role::Pawn,
            ] {
                if role.is_some_and(|x| x != r) {
                    continue;
                }
                for sq in board.by_piece(Piece { color: c, role: r }) & squares {
                    side.push(p.piece_on(r, sq));
                }
            }
            if !side.is_empty() {
                parts.push(format!("{}: {}", p.words.color(c), side.join(", ")));
            }
        }
        if parts.is_empty() {
            p.words.empty.clone()
        } else {
            parts.join(". ")
        }
    }

    /// Appendix F2.9 (e), as the assistant reports to the arbiter: the pieces the asker's
    /// opponent touched since the last move (in his turn, every piece he lifted; in the asker's
    /// turn, those he touched and put back in his own, and his adjustments since). Asked from
    /// a shared control (no asker known): every player's.
    fn touches_text(&self) -> String {
        let of = self.actor().map(|a| !a);
        let mut by: Vec<(Color, Vec<(Role, Square)>)> = Vec::new();
        let current = self.turn.touches.iter().map(|x| (*x, self.toucher(x)));
        for (x, who) in self.touches_before.iter().copied().chain(current) {
            if of.is_some_and(|o| o != who) {
                continue;
            }
            match by.iter_mut().find(|(c, _)| *c == who) {
                Some((_, list)) if !list.iter().any(|&(_, sq)| sq == x.square) => {
                    list.push((x.piece.role, x.square));
                }
                Some(_) => {}
                None => by.push((who, vec![(x.piece.role, x.square)])),
            }
        }
        if by.is_empty() {
            return self.s.phrases.words.no_touches.clone();
        }
        let said: Vec<String> = by
            .iter()
            .map(|(who, list)| self.s.phrases.touches(*who, list))
            .collect();
        said.join(". ")
    }

    /// The `plies`, each with its side, so that White's and Black's sound different when
    /// heard ("1. Weiß Eva vier, Schwarz Eva fünf"): the number before White's, or before the
    /// first when it is Black's.
    fn moves_said(&self, plies: &[Ply]) -> String {
        let p = &self.s.phrases;
        let w = &p.words;
        let said: Vec<String> = plies
            .iter()
            .enumerate()
            .map(|(i, ply)| {
                let side = ply.before.turn();
                let said = format!("{} {}", w.color(side), p.announce(&ply.san, ply.m));
                if side == Color::White || i == 0 {
                    format!("{}. {said}", ply.before.fullmoves().get())
                } else {
                    said
                }
            })
            .collect();
        said.join(", ")
    }

    /// Who plays ("Weiß: GM Magnus Carlsen, 2830"): the asker's opponent, or both players from
    /// a shared control. Names, titles and ratings are those of `[game]`; the computer without
    /// a name there is named as the record names it.
    /// The help: the whole of it, or the keypad's keys one at a time (the keypad keeps the
    /// place: `help key N`).
    fn help_text(&self, part: Help) -> String {
        let w = &self.s.phrases.words;
        let pages = &self.s.help_pages;
        let whole = || self.s.help.clone().unwrap_or_else(|| w.help.clone());
        match part {
            Help::All => whole(),
            Help::Walk => match pages.first() {
                Some(first) => format!("{}. {first}", w.help_keys),
                None => whole(),
            },
            Help::Key(n) => n
                .checked_sub(1)
                .and_then(|i| pages.get(i as usize))
                .unwrap_or(&w.help_end)
                .clone(),
            Help::End => w.help_off.clone(),
        }
    }

    fn players_text(&self) -> String {
        let w = &self.s.phrases.words;
        let tag = |name: &str| {
            self.s
                .pgn_tags
                .iter()
                .find(|(t, v)| t == name && !v.is_empty() && v != "?")
                .map(|(_, v)| v.clone())
        };
        let one = |c: Color| -> String {
            let (name, title, elo) = match c {
                Color::White => (tag("White"), tag("WhiteTitle"), tag("WhiteElo")),
                Color::Black => (tag("Black"), tag("BlackTitle"), tag("BlackElo")),
            };
            let name = name.or_else(|| {
                self.computer
                    .as_ref()
                    .filter(|(cc, _)| *cc == c)
                    .map(|(_, n)| n.clone())
            });
            let mut said = match (title, name) {
                (Some(t), Some(n)) => format!("{t} {n}"),
                (None, Some(n)) => n,
                (_, None) => w.unknown_player.clone(),
            };
            if let Some(elo) = elo {
                said = format!("{said}, {elo}");
            }
            format!("{}: {said}", w.color(c))
        };
        match self.actor() {
            Some(a) => one(!a),
            None => format!("{}. {}", one(Color::White), one(Color::Black)),
        }
    }

    /// The material balance in pawns ("Weiß: 3 Bauern mehr", "Material gleich"), then the
    /// pieces each side has lost since the start ("Geschlagen: Weiß: Springer. Schwarz:
    /// Bauer, Bauer"): a pawn promoted is no piece lost.
    fn material_text(&self) -> String {
        let w = &self.s.phrases.words;
        let now = self.game.pos.board();
        let start = self.game.start.board();
        const ROLES: [(Role, i64); 5] = [
            (Role::Queen, 9),
            (Role::Rook, 5),
            (Role::Bishop, 3),
            (Role::Knight, 3),
            (Role::Pawn, 1),
        ];
        let count = |b: &shakmaty::Board, c: Color, r: Role| b.by_piece(r.of(c)).count() as i64;
        let value = |c: Color| -> i64 { ROLES.iter().map(|&(r, v)| v * count(now, c, r)).sum() };
        let diff = value(Color::White) - value(Color::Black);
        let balance = if diff == 0 {
            w.material_equal.clone()
        } else {
            let ahead = if diff > 0 { Color::White } else { Color::Black };
            w.material_ahead.replace("{side}", w.color(ahead)).replace(
                "{pawns}",
                &w.count(diff.unsigned_abs(), &w.one_pawn, &w.pawns),
            )
        };
        let mut lost = Vec::new();
        for c in [Color::White, Color::Black] {
            // Pieces more than at the start came from promotions: as many pawns were not lost.
            let promoted: i64 = ROLES[..4]
                .iter()
                .map(|&(r, _)| (count(now, c, r) - count(start, c, r)).max(0))
                .sum();
            let mut names = Vec::new();
            for &(r, _) in &ROLES {
                let mut missing = count(start, c, r) - count(now, c, r);
                if r == Role::Pawn {
                    missing -= promoted;
                }
                for _ in 0..missing.max(0) {
                    names.push(w.piece(r).to_string());
                }
            }
            if !names.is_empty() {
                lost.push(format!("{}: {}", w.color(c), names.join(", ")));
            }
        }
        let text = if lost.is_empty() {
            balance
        } else {
            format!("{balance}. {}: {}", w.captured, lost.join(". "))
        };
        sentences(&text)
    }

    /// F2.9d: the number of moves made and the time of both players.
    pub(super) fn time_text(&self) -> String {
        let p = &self.s.phrases;
        let w = &p.words;
        let moves = self.game.plies.len().div_ceil(2) as u64;
        let mut text = w.count(moves, &w.one_move, &w.moves_made);
        if let Some(c) = &self.clock {
            // F2.9d speaks of the time used; the time left is what a clock shows. The long
            // style tells both.
            let tell = |color: Color| {
                let left = p.duration(c.remaining(color, self.now));
                let used = || format!("{} {}", p.duration(c.used(color, self.now)), w.used);
                match (p.style, self.s.time_answer) {
                    (Style::Long, _) => format!("{left}, {}", used()),
                    (_, TimeAnswer::Remaining) => left,
                    (_, TimeAnswer::Used) => used(),
                }
            };
            text = format!(
                "{text}. {} {}. {} {}",
                w.white,
                tell(Color::White),
                w.black,
                tell(Color::Black)
            );
        }
        // After the end, the result instead of whose move it is.
        match self.game.ending {
            Some(e) => format!("{text}. {}", e.say(p)),
            None => format!("{text}. {} {}", w.color(self.game.pos.turn()), w.to_move),
        }
    }
}

/// What was said by the events from `from` on (the answer to an order).
fn said_since(out: &[Event], from: usize) -> String {
    let said: Vec<&str> = out[from..]
        .iter()
        .filter_map(|e| e.kind.spoken().map(|(t, _)| t))
        .collect();
    said.join(". ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Settings;

    #[test]
    fn a_question_button_is_answered_as_the_command_is() {
        for (button, query) in [
            (Button::Repeat, Query::Last),
            (Button::Moves, Query::Time { show_clock: false }),
            (Button::Time, Query::Time { show_clock: true }),
            (Button::Position, Query::Position(None, None)),
        ] {
            assert_eq!(button.query(), Some(query));
            let (mut a, mut b) = (
                Engine::new(Settings::default()),
                Engine::new(Settings::default()),
            );
            let (mut pressed, mut asked) = (Vec::new(), Vec::new());
            a.press(100, button, &mut pressed);
            let text = b.command(100, Command::Ask(query), &mut asked);
            assert_eq!(pressed, asked, "{button:?}");
            assert_eq!(said_since(&asked, 0), text);
        }
        assert_eq!(Button::Draw.query(), None);
    }
}
