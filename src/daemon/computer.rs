//! The computer as one more thing the daemon's loop waits for: after each batch the engine is
//! asked whether the computer has the move (`computer_request`), and the UCI engine (or the
//! opening book) is asked for it; the answer becomes `computer_move`. The player's `hint` and
//! `evaluate` (`computer_ask` events) become searches whose answers are spoken
//! (`computer_answer`). Every search carries the position's key: an answer for a position that
//! is gone is dropped.

use std::collections::HashMap;

use shakmaty::uci::UciMove;
use shakmaty::Color;

use crate::engine::table::Table;
use crate::engine::{
    Asked, ComputerAnswer, ComputerRequest, Event, EventKind, Millis, PositionKey,
};
use crate::opponent::book::Book;
use crate::opponent::uci::{Answer, Go, Score, Search, Uci};
use crate::opponent::OpponentSettings;

/// The least time a hint or an evaluation searches.
const ASK_MS: u64 = 500;

/// What a search was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Move(PositionKey),
    Ask(Asked, PositionKey),
}

/// The computer the player plays against: the UCI engine, the book, and the searches asked.
pub struct Computer {
    uci: Uci,
    book: Option<Book>,
    settings: OpponentSettings,
    /// The searches sent and not answered, by id.
    asked: HashMap<u64, Purpose>,
    next_id: u64,
    /// The position whose move was asked (of the engine or the book).
    move_asked: Option<(u64, PositionKey)>,
    /// The games started when last looked: a new game is `ucinewgame`.
    games_started: Option<u64>,
    /// Varies the book's choices from one run to the next.
    seed: u64,
}

impl std::fmt::Debug for Computer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Computer")
            .field("engine", &self.uci.info().pgn_name())
            .field("pid", &self.uci.pid())
            .finish()
    }
}

impl Computer {
    /// Starts the engine and opens the book; an error (naming the setting) when either fails.
    pub async fn start(settings: &OpponentSettings) -> Result<Computer, String> {
        let book = match &settings.book {
            Some(path) => Some(Book::open(path).map_err(|e| e.to_string())?),
            None => None,
        };
        let uci = Uci::start(settings).await.map_err(|e| e.to_string())?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id());
        Ok(Computer {
            uci,
            book,
            settings: settings.clone(),
            asked: HashMap::new(),
            next_id: 1,
            move_asked: None,
            games_started: None,
            seed,
        })
    }

    /// The name the PGN gives the computer: "Stockfish 15.1, Elo 1500".
    pub fn pgn_name(&self) -> String {
        self.uci.info().pgn_name()
    }

    /// The engine process's id (0 while it is being started again).
    pub fn pid(&self) -> u32 {
        self.uci.pid()
    }

    /// The computer's colour for a game that is not taken up again.
    pub fn colour(&self) -> Color {
        self.settings.color.pick(self.seed)
    }

    /// The next answer of the engine.
    pub async fn recv(&mut self) -> Option<Answer> {
        self.uci.recv().await
    }

    /// Sends `quit` (and kills the engine after a grace).
    pub async fn quit(self) {
        self.uci.quit().await;
    }

    /// After a batch: the `computer_ask` events among `events` become searches; a new game is
    /// `ucinewgame`; when the computer has the move and it was not asked yet, it is asked (of
    /// the book first).
    pub fn poll(&mut self, table: &mut Table, now: Millis, events: &mut Vec<(usize, Event)>) {
        let asks: Vec<(Asked, PositionKey)> = events
            .iter()
            .filter_map(|(_, e)| match e.kind {
                EventKind::ComputerAsk { what, key } => Some((what, key)),
                _ => None,
            })
            .collect();
        let key = table.leader().position_key();
        if self.games_started != Some(key.games_started()) {
            if self.games_started.is_some() {
                self.uci.new_game();
                self.asked.clear();
                self.move_asked = None;
            }
            self.games_started = Some(key.games_started());
        }
        for (what, key) in asks {
            self.ask(table, what, key);
        }
        match table.computer_request(now) {
            Some(req) if self.move_asked.map(|(_, k)| k) != Some(req.key) => {
                self.ask_move(table, now, req, events)
            }
            Some(_) => {}
            None => {
                // The position asked about is gone (a takeback, a new game): its search stops
                // and its answer is dropped. (The same position not to be answered just now, a
                // hand on the board, keeps its search: its answer is tried when it comes.)
                if let Some((id, asked_key)) = self.move_asked {
                    if asked_key != key {
                        self.move_asked = None;
                        if self.asked.remove(&id).is_some() {
                            self.uci.stop();
                        }
                    }
                }
            }
        }
    }

    fn ask_move(
        &mut self,
        table: &mut Table,
        now: Millis,
        req: ComputerRequest,
        events: &mut Vec<(usize, Event)>,
    ) {
        if let Some(book) = &self.book {
            let pos = table.leader().game().pos.clone();
            let seed = self.seed ^ (req.moves_uci.len() as u64).wrapping_mul(0x9e37_79b9);
            if let Some(m) = book.pick(&pos, seed) {
                tracing::info!(
                    "opponent: book move {}",
                    m.to_uci(shakmaty::CastlingMode::Standard)
                );
                self.move_asked = Some((0, req.key));
                if table.computer_move(now, req.key, m, events) {
                    return;
                }
            }
        }
        let go = match req.clocks {
            Some(c) => Go::Clocks {
                wtime: c.wtime.max(0) as u64,
                btime: c.btime.max(0) as u64,
                winc: c.winc.max(0) as u64,
                binc: c.binc.max(0) as u64,
                movestogo: c.movestogo,
                budget: c.budget_ms.max(0) as u64,
            },
            None => Go::MoveTime(self.settings.movetime_ms),
        };
        let id = self.search(&req.start_fen, req.moves_uci, go, Purpose::Move(req.key));
        self.move_asked = Some((id, req.key));
    }

    /// A hint or an evaluation: a search of the position as it stands.
    fn ask(&mut self, table: &Table, what: Asked, key: PositionKey) {
        let engine = table.leader();
        if engine.position_key() != key {
            return;
        }
        let game = engine.game();
        let start = crate::engine::game::fen_of(&game.start);
        let moves = game
            .plies
            .iter()
            .map(|p| p.m.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect();
        let ms = self.settings.movetime_ms.max(ASK_MS);
        self.search(&start, moves, Go::MoveTime(ms), Purpose::Ask(what, key));
    }

    fn search(&mut self, start_fen: &str, moves: Vec<String>, go: Go, purpose: Purpose) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let fen = (start_fen != crate::record::initial_fen()).then(|| start_fen.to_string());
        self.asked.insert(id, purpose);
        self.uci.search(Search { id, fen, moves, go });
        id
    }

    /// An answer of the engine: the computer's move played, a hint or an evaluation spoken.
    pub fn answer(
        &mut self,
        table: &mut Table,
        now: Millis,
        answer: Answer,
        events: &mut Vec<(usize, Event)>,
    ) {
        let (id, bestmove, score) = match answer {
            Answer::Best {
                id,
                bestmove,
                score,
            } => (id, bestmove, score),
            Answer::Down { why, retry_in } => {
                tracing::warn!(
                    "opponent: the engine {why}; the game goes on when it is back (in {} s)",
                    retry_in.as_secs()
                );
                return;
            }
            Answer::Up { name } => {
                tracing::info!("opponent: {name} is back");
                return;
            }
        };
        let Some(purpose) = self.asked.remove(&id) else {
            return;
        };
        let pos = table.leader().game().pos.clone();
        let current = table.leader().position_key();
        let parsed = bestmove
            .as_deref()
            .and_then(|m| m.parse::<UciMove>().ok())
            .and_then(|u| u.to_move(&pos).ok());
        match purpose {
            Purpose::Move(key) if key == current => {
                let played = parsed.is_some_and(|m| table.computer_move(now, key, m, events));
                if !played {
                    // Asked again at the next turn of the loop.
                    tracing::warn!(
                        "opponent: the engine gave no move that is legal here ({bestmove:?})"
                    );
                    self.move_asked = None;
                }
            }
            Purpose::Ask(Asked::Hint, key) if key == current => {
                if let Some(m) = parsed {
                    table.computer_answer(now, key, ComputerAnswer::Hint(m), events);
                }
            }
            Purpose::Ask(Asked::Evaluate, key) if key == current => {
                let (cp, mate) = match score {
                    Some(Score::Cp(cp)) => (Some(cp), None),
                    Some(Score::Mate(m)) => (None, Some(m)),
                    None => (None, None),
                };
                table.computer_answer(now, key, ComputerAnswer::Evaluation { cp, mate }, events);
            }
            // For a position that is gone.
            _ => {}
        }
    }
}
