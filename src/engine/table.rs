//! One game on several boards (Appendix F1: the blind player's pegged board and the sighted
//! player's normal board). Each board has its own engine, tracking its own sensors; the game
//! record is one. The player to move makes his move on his board (the leading engine applies
//! the touch and completion rules, announces it and runs the clock); every other board then
//! follows the game, and its player executes the move there (F2.1), checked and, when it is
//! done wrongly, told exactly what to do.
//!
//! With a single board this is exactly that board's engine.

use shakmaty::{Chess, Color, Move, Position};

use super::arbiter::Engine;
use super::computer::{ComputerAnswer, ComputerRequest};
use super::event::{Event, Millis, PositionKey};
use super::games::Resumed;
use super::input::{Button, Command, LinkState, Reading};
use super::settings::Settings;

/// The boards of one game.
pub struct Table {
    engines: Vec<Engine>,
    /// The board whose engine runs the game now (its player has the move).
    leader: usize,
    /// Events of one engine on their way out (kept, not made anew for every reading).
    buf: Vec<Event>,
}

/// Two mutable-and-shared borrows of different engines.
fn pair(v: &mut [Engine], i: usize, j: usize) -> (&mut Engine, &Engine) {
    debug_assert_ne!(i, j);
    if i < j {
        let (a, b) = v.split_at_mut(j);
        (&mut a[i], &b[0])
    } else {
        let (a, b) = v.split_at_mut(i);
        (&mut b[0], &a[j])
    }
}

impl Table {
    /// One engine a board; `players` says who plays on each (`None`: both, one shared board).
    pub fn new(settings: Settings, players: &[Option<Color>]) -> Table {
        let mut engines: Vec<Engine> = players
            .iter()
            .map(|p| {
                let mut e = Engine::new(settings.clone());
                e.set_player(*p);
                e
            })
            .collect();
        if engines.is_empty() {
            engines.push(Engine::new(settings));
        }
        Table {
            engines,
            leader: 0,
            buf: Vec::new(),
        }
    }

    pub fn boards(&self) -> usize {
        self.engines.len()
    }

    /// The engine that runs the game now.
    pub fn leader(&self) -> &Engine {
        &self.engines[self.leader]
    }

    pub fn leader_index(&self) -> usize {
        self.leader
    }

    pub fn engine(&self, board: usize) -> &Engine {
        &self.engines[board]
    }

    /// The board `color` plays on, if one is his.
    fn board_of(&self, color: Color) -> Option<usize> {
        self.engines.iter().position(|e| e.player() == Some(color))
    }

    /// The board whose player has the move (the leader stays when no board is his).
    fn wanted_leader(&self) -> usize {
        self.board_of(self.leader().game().pos.turn())
            .unwrap_or(self.leader)
    }

    /// After the leader changed the game: the other boards follow it, and the lead passes to
    /// the board of the player to move.
    fn sync(&mut self, t: Millis, out: &mut Vec<(usize, Event)>) {
        if self.engines.len() == 1 {
            return;
        }
        // A new game begun on any board (its start position set up after the end) is the game.
        if let Some(newest) = (0..self.engines.len())
            .max_by_key(|&i| (self.engines[i].games_started(), i == self.leader))
        {
            self.leader = newest;
        }
        let next = self.wanted_leader();
        let mut buf = Vec::new();
        if next != self.leader {
            let (new, old) = pair(&mut self.engines, next, self.leader);
            new.follow(t, old, true, &mut buf);
            out.extend(buf.drain(..).map(|e| (next, e)));
            self.leader = next;
        }
        for i in 0..self.engines.len() {
            if i != self.leader {
                let (f, l) = pair(&mut self.engines, i, self.leader);
                f.follow(t, l, false, &mut buf);
                out.extend(buf.drain(..).map(|e| (i, e)));
            }
        }
    }

    fn on(
        &mut self,
        board: usize,
        t: Millis,
        out: &mut Vec<(usize, Event)>,
        f: impl FnOnce(&mut Engine, &mut Vec<Event>),
    ) {
        if self.engines.len() == 1 {
            // One board: its engine is the game (it lets time pass itself).
            f(&mut self.engines[0], &mut self.buf);
            out.extend(self.buf.drain(..).map(|e| (0, e)));
            return;
        }
        self.advance(t, out);
        let board = board.min(self.engines.len() - 1);
        let mut buf = Vec::new();
        f(&mut self.engines[board], &mut buf);
        out.extend(buf.into_iter().map(|e| (board, e)));
        self.sync(t, out);
    }

    /// A board's sensor reading.
    pub fn reading(&mut self, board: usize, t: Millis, r: Reading, out: &mut Vec<(usize, Event)>) {
        self.on(board, t, out, |e, buf| e.reading(t, r, buf));
    }

    /// A button (a board's, or a keypad's): acts on the game, so it goes to the leading board.
    pub fn press(&mut self, t: Millis, b: Button, out: &mut Vec<(usize, Event)>) {
        let l = self.leader;
        self.on(l, t, out, |e, buf| e.press(t, b, buf));
    }

    /// A command; returns the text said.
    pub fn command(&mut self, t: Millis, c: Command, out: &mut Vec<(usize, Event)>) -> String {
        self.command_by(t, c, None, out)
    }

    /// A command of `by`'s own control (see [`Engine::command_by`]); returns the text said.
    pub fn command_by(
        &mut self,
        t: Millis,
        c: Command,
        by: Option<Color>,
        out: &mut Vec<(usize, Event)>,
    ) -> String {
        let l = self.leader;
        let mut text = String::new();
        self.on(l, t, out, |e, buf| text = e.command_by(t, c, by, buf));
        text
    }

    /// A new game on every board; the boards are taken to show `start` when `holds`.
    pub fn new_game(
        &mut self,
        t: Millis,
        start: Chess,
        holds: bool,
        out: &mut Vec<(usize, Event)>,
    ) {
        self.advance(t, out);
        self.leader = self.board_of(start.turn()).unwrap_or(0);
        let mut buf = Vec::new();
        for (i, e) in self.engines.iter_mut().enumerate() {
            e.new_game(t, start.clone(), holds, &mut buf);
            // The game's events once, from the leading board.
            if i == self.leader {
                out.extend(buf.drain(..).map(|e| (i, e)));
            }
            buf.clear();
        }
        self.sync(t, out);
    }

    /// A game taken up again from the record, on every board.
    pub fn resume(&mut self, t: Millis, game: &Resumed, out: &mut Vec<(usize, Event)>) -> usize {
        // Whose move it is once the recorded moves are made: his board leads.
        let turn = if game.moves.len() % 2 == 1 {
            !game.start.turn()
        } else {
            game.start.turn()
        };
        self.leader = self.board_of(turn).unwrap_or(0);
        let mut taken = 0;
        let mut buf = Vec::new();
        for (i, e) in self.engines.iter_mut().enumerate() {
            taken = e.resume(t, game, &mut buf);
            // Said once, from the leading board.
            if i == self.leader {
                out.extend(buf.drain(..).map(|e| (i, e)));
            }
            buf.clear();
        }
        self.sync(t, out);
        taken
    }

    /// A board's link changed (its driver says so).
    pub fn link(
        &mut self,
        board: usize,
        t: Millis,
        state: LinkState,
        out: &mut Vec<(usize, Event)>,
    ) {
        self.on(board, t, out, |e, buf| e.link(t, state, buf));
    }

    /// A board's sensor keeps reporting a square (its driver says so).
    pub fn flicker(
        &mut self,
        board: usize,
        t: Millis,
        square: shakmaty::Square,
        out: &mut Vec<(usize, Event)>,
    ) {
        self.on(board, t, out, |e, buf| e.flicker(t, square, buf));
    }

    /// New settings for every board.
    pub fn reconfigure(&mut self, s: &Settings) {
        for e in &mut self.engines {
            e.reconfigure(s.clone());
        }
    }

    /// The earliest time at which any board has something to do.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.engines.iter().filter_map(Engine::next_deadline).min()
    }

    /// Lets time pass up to `t` on every board, in time order.
    pub fn advance(&mut self, t: Millis, out: &mut Vec<(usize, Event)>) {
        if self.engines.len() == 1 {
            self.engines[0].advance(t, &mut self.buf);
            out.extend(self.buf.drain(..).map(|e| (0, e)));
            return;
        }
        let mut buf = Vec::new();
        while let Some((i, due)) = self
            .engines
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.next_deadline().map(|d| (i, d)))
            .filter(|(_, d)| *d <= t)
            .min_by_key(|(_, d)| *d)
        {
            self.engines[i].advance(due, &mut buf);
            out.extend(buf.drain(..).map(|e| (i, e)));
            self.sync(due, out);
        }
        for (i, e) in self.engines.iter_mut().enumerate() {
            e.advance(t, &mut buf);
            out.extend(buf.drain(..).map(|e| (i, e)));
        }
    }

    /// Plays against the computer (one board): `Some((color, pgn_name))`, or `None`. Every
    /// board's engine knows it (see `Engine::set_computer`).
    pub fn set_computer(&mut self, computer: Option<(Color, String)>) {
        for e in &mut self.engines {
            e.set_computer(computer.clone());
        }
    }

    /// The computer's colour, if the player plays against the computer.
    pub fn computer(&self) -> Option<Color> {
        self.leader().computer()
    }

    /// What the UCI engine is to be told, when the computer has the move (see
    /// `Engine::computer_request`).
    pub fn computer_request(&self, now: Millis) -> Option<ComputerRequest> {
        self.leader().computer_request(now)
    }

    /// The computer's move for the position `key` (see `Engine::computer_move`).
    pub fn computer_move(
        &mut self,
        t: Millis,
        key: PositionKey,
        m: Move,
        out: &mut Vec<(usize, Event)>,
    ) -> bool {
        let l = self.leader;
        let mut done = false;
        self.on(l, t, out, |e, buf| done = e.computer_move(t, key, m, buf));
        done
    }

    /// The daemon's answer to a `computer_ask` (see `Engine::computer_answer`).
    pub fn computer_answer(
        &mut self,
        t: Millis,
        key: PositionKey,
        answer: ComputerAnswer,
        out: &mut Vec<(usize, Event)>,
    ) {
        let l = self.leader;
        self.on(l, t, out, |e, buf| e.computer_answer(t, key, answer, buf));
    }

    /// The leading engine, which holds the game (for its record).
    pub fn into_leader(mut self) -> Engine {
        self.engines.swap_remove(self.leader)
    }
}
