//! A simulated serial board whose moves are decided as the game goes (not a game known in
//! advance): a pseudo-terminal speaking one of the board protocols, and hands that make a move
//! on it at people's tempo through the choreography of [`gestures`](super::gestures). Playing
//! against the computer needs it: the simulated player answers the computer's moves, and
//! executes them on the board for it (`demo --opponent engine`, the tests).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serialport::TTYPort;
use shakmaty::{Board, Chess, Move, Piece, Square};

use super::gestures::{self, Hands, Manner};
use super::Rng;
use crate::board::BoardProtocol;
use crate::engine::Button;

enum Change {
    Lift(Square),
    Place(Square, Piece),
    Frame(Vec<Square>, Vec<(Square, Piece)>),
}

/// The board, served on a pseudo-terminal by a thread until dropped.
pub struct LiveBoard {
    tx: mpsc::Sender<Change>,
    board: Arc<Mutex<Board>>,
    leds: Arc<AtomicU64>,
    connected: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    link: PathBuf,
}

impl LiveBoard {
    /// Opens the pseudo-terminal, points the symlink `link` at it, and serves the host from a
    /// thread: its commands answered, the changes reported.
    pub fn open(
        protocol: &'static BoardProtocol,
        link: &Path,
        start: Board,
    ) -> std::io::Result<LiveBoard> {
        let (mut master, slave, _) = super::pty::pseudo_terminal(link)?;
        let (tx, rx) = mpsc::channel();
        let board = Arc::new(Mutex::new(start));
        let leds = Arc::new(AtomicU64::new(0));
        let connected = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = (board.clone(), leds.clone(), connected.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // The slave end stays open here: the host may close and open it again.
            let _slave = slave;
            serve(protocol, &mut master, rx, shared);
        });
        Ok(LiveBoard {
            tx,
            board,
            leds,
            connected,
            stop,
            thread: Some(thread),
            link: link.to_path_buf(),
        })
    }

    /// The pieces on the board now.
    pub fn board(&self) -> Board {
        self.board.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// How many LED patterns the host has sent (ChessLink: its lights).
    pub fn leds(&self) -> u64 {
        self.leds.load(Ordering::Relaxed)
    }

    /// Whether the host has asked for something (it reads the board).
    pub fn connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }

    pub fn lift(&self, sq: Square) {
        let _ = self.tx.send(Change::Lift(sq));
    }

    pub fn place(&self, sq: Square, piece: Piece) {
        let _ = self.tx.send(Change::Place(sq, piece));
    }

    /// Hands making moves on this board; `speed` over people's tempo.
    pub fn hands(&self, seed: u64, speed: f64) -> LiveHands<'_> {
        LiveHands {
            board: self,
            rng: Rng::new(seed),
            speed: speed.max(0.01),
        }
    }
}

impl Drop for LiveBoard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.link);
    }
}

type Shared = (
    Arc<Mutex<Board>>,
    Arc<AtomicU64>,
    Arc<AtomicBool>,
    Arc<AtomicBool>,
);

fn serve(
    protocol: &'static BoardProtocol,
    master: &mut TTYPort,
    rx: mpsc::Receiver<Change>,
    (board, leds, connected, stop): Shared,
) {
    let mut device = (protocol.device)(false);
    let mut buf = [0u8; 256];
    let mut beat = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let mut out = Vec::new();
        match master.read(&mut buf) {
            Ok(n) if n > 0 => {
                let b = board.lock().map(|b| b.clone()).unwrap_or_default();
                device.answer(&buf[..n], &b, &mut out);
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            // The host has closed its end: wait for the next one.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
        connected.store(device.connected(), Ordering::Relaxed);
        leds.store(device.leds(), Ordering::Relaxed);
        while let Ok(change) = rx.try_recv() {
            let Ok(mut b) = board.lock() else { return };
            let changed: Vec<Square> = match change {
                Change::Lift(sq) => {
                    b.discard_piece_at(sq);
                    vec![sq]
                }
                Change::Place(sq, p) => {
                    b.set_piece_at(sq, p);
                    vec![sq]
                }
                Change::Frame(lifted, placed) => {
                    for sq in &lifted {
                        b.discard_piece_at(*sq);
                    }
                    for (sq, p) in &placed {
                        b.set_piece_at(*sq, *p);
                    }
                    lifted
                        .into_iter()
                        .chain(placed.iter().map(|(s, _)| *s))
                        .collect()
                }
            };
            if device.connected() {
                for sq in changed {
                    let bytes = device.report(&b, sq);
                    if !out.ends_with(&bytes) {
                        out.extend(bytes);
                    }
                }
            }
        }
        if let Some((every, bytes)) = board
            .lock()
            .ok()
            .and_then(|b| device.heartbeat(&b))
            .filter(|_| device.connected())
        {
            if beat.elapsed() >= every {
                out.extend(bytes);
                beat = Instant::now();
            }
        }
        if !out.is_empty() {
            let _ = master.write_all(&out);
        }
    }
}

/// Hands on a [`LiveBoard`]: each step of a move at people's tempo, in real time.
pub struct LiveHands<'a> {
    board: &'a LiveBoard,
    rng: Rng,
    speed: f64,
}

impl LiveHands<'_> {
    /// Makes `m` in `pos` on the board, as people do.
    pub fn play(&mut self, pos: &Chess, m: Move) {
        let manner = Manner {
            queen_by_timeout: true,
            ..Manner::default()
        };
        gestures::one_move(self, pos, m, &manner);
    }

    fn sleep(&mut self, lo: u64, hi: u64) {
        let ms = self.rng.range(lo, hi.max(lo));
        std::thread::sleep(Duration::from_secs_f64(ms as f64 / 1000.0 / self.speed));
    }
}

impl Hands for LiveHands<'_> {
    fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }
    fn begin_move(&mut self) {}
    fn end_move(&mut self) {}
    fn step(&mut self, lo: u64, hi: u64) {
        // At least what a board's debounce and settle see.
        self.sleep(lo.max(120), hi.max(150));
    }
    fn gap(&mut self, lo: u64, hi: u64) {
        self.sleep(lo, hi);
    }
    fn lift(&mut self, sq: Square, _piece: Piece) {
        self.board.lift(sq);
    }
    fn place(&mut self, sq: Square, piece: Piece) {
        self.board.place(sq, piece);
    }
    fn frame(&mut self, lifted: &[Square], placed: &[(Square, Piece)]) {
        let _ = self
            .board
            .tx
            .send(Change::Frame(lifted.to_vec(), placed.to_vec()));
    }
    fn sweep(&mut self, sq: Square, piece: Piece) {
        self.board.lift(sq);
        self.board.place(sq, piece);
    }
    fn press(&mut self, _b: Button) {}
    fn await_promotion(&mut self) {
        // The promotion timeout (3 s by default) passes: a queen.
        std::thread::sleep(Duration::from_millis(3500));
    }
}
