//! `chessboardd simulate` when its host dies: the test is the host (it opens the pseudo-terminal
//! and speaks the board's protocol itself), drops the port as a SIGKILL would (no clean-up of the
//! terminal), stays away, and comes back. While nobody listens the players finish at most the
//! move in hand and start no new one; the board sends nothing until the new host has sent its
//! start-up commands, answers them with the board as it stands, and plays the game to its end.

use std::io::{Read, Write};
use std::os::fd::IntoRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chessboardd::board::{chesslink, dgt, diy};
use chessboardd::engine::Button;
use chessboardd::pgn;
use serialport::TTYPort;
use shakmaty::{Board, Position, Role};

/// Ten moves with captures and castling on both sides.
const GAME: &str = "[Event \"host loss\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 \
6. Bxc6 dxc6 7. Re1 Nd7 8. d4 exd4 9. Qxd4 O-O 10. Bf4 Nc5 *\n";

/// How long the host stays away: time for two or three moves at the test's speed.
const AWAY: Duration = Duration::from_millis(1500);

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Proto {
    Diy,
    Dgt,
    ChessLink,
}

impl Proto {
    fn name(self) -> &'static str {
        match self {
            Proto::Diy => "diy",
            Proto::Dgt => "dgt",
            Proto::ChessLink => "chesslink",
        }
    }

    fn baud(self) -> u32 {
        match self {
            Proto::Diy => 115_200,
            Proto::Dgt => 9600,
            Proto::ChessLink => 38_400,
        }
    }

    /// The start-up commands of the daemon's drivers (`on_open`).
    fn start_up(self) -> Vec<u8> {
        match self {
            Proto::Diy => b"?".to_vec(),
            Proto::Dgt => vec![
                dgt::RESET,
                dgt::SEND_VERSION,
                dgt::SEND_BOARD,
                dgt::UPDATE_BOARD,
            ],
            Proto::ChessLink => ["V", "W0203", "X", "S"]
                .into_iter()
                .flat_map(chesslink::wire)
                .collect(),
        }
    }

    /// What the host can know of a board: the pieces (DGT, ChessLink) or the occupancy (DIY).
    fn view(self, board: &Board) -> Vec<u8> {
        match self {
            Proto::Diy => board.occupied().0.to_le_bytes().to_vec(),
            Proto::Dgt => dgt::dump(board)[3..].to_vec(),
            Proto::ChessLink => chesslink::status(board, false).as_bytes()[1..65].to_vec(),
        }
    }
}

/// The test's host end of the port, keeping the board as the reports show it.
struct Host {
    proto: Proto,
    port: Option<TTYPort>,
    /// The board as last reported; `None` until the board has answered the start-up.
    view: Option<Vec<u8>>,
    /// Promotion buttons pressed (DIY).
    presses: Vec<Role>,
    bytes: usize,
    diy: diy::Decoder,
    dgt: dgt::Decoder,
    chesslink: chesslink::Decoder,
}

impl Host {
    fn new(proto: Proto) -> Host {
        Host {
            proto,
            port: None,
            view: None,
            presses: Vec::new(),
            bytes: 0,
            diy: diy::Decoder::default(),
            dgt: dgt::Decoder::default(),
            chesslink: chesslink::Decoder::default(),
        }
    }

    fn open(&mut self, link: &Path) {
        let port = serialport::new(link.to_string_lossy(), self.proto.baud())
            .timeout(Duration::from_millis(10))
            .open_native()
            .unwrap_or_else(|e| panic!("{}: {e}", link.display()));
        self.port = Some(port);
        self.view = None;
        self.bytes = 0;
        self.diy = diy::Decoder::default();
        self.dgt = dgt::Decoder::default();
        self.chesslink = chesslink::Decoder::default();
    }

    fn start_up(&mut self) {
        let bytes = self.proto.start_up();
        self.port.as_mut().unwrap().write_all(&bytes).unwrap();
    }

    /// Closes the port the way a killed process does: the descriptor is closed by the kernel,
    /// nothing is undone (serialport's drop would clear the terminal's exclusive lock first).
    fn die(&mut self) {
        let fd = self.port.take().unwrap().into_raw_fd();
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(fd) };
    }

    /// Reads for at most 10 ms; `false` once the board end has gone (the simulator exited).
    fn read(&mut self) -> bool {
        let mut buf = [0u8; 512];
        let n = match self.port.as_mut().unwrap().read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return true,
            Err(_) => return false,
        };
        self.bytes += n;
        match self.proto {
            Proto::Diy => {
                let mut msgs = Vec::new();
                self.diy.feed(&buf[..n], &mut msgs);
                for m in msgs {
                    match m {
                        diy::Message::Occupancy(mask) => {
                            self.view = Some(mask.to_le_bytes().to_vec())
                        }
                        diy::Message::Press(Button::Promote(role)) => self.presses.push(role),
                        diy::Message::Press(b) => panic!("pressed {b:?}"),
                    }
                }
            }
            Proto::Dgt => {
                let mut msgs = Vec::new();
                self.dgt.feed(&buf[..n], &mut msgs);
                for (id, payload) in msgs {
                    match id {
                        dgt::MSG_BOARD_DUMP => self.view = Some(payload),
                        dgt::MSG_FIELD_UPDATE => {
                            let view = self.view.as_mut().expect("a field update before the dump");
                            view[payload[0] as usize] = payload[1];
                        }
                        _ => {}
                    }
                }
            }
            Proto::ChessLink => {
                let mut msgs = Vec::new();
                self.chesslink.feed(&buf[..n], &mut msgs);
                for m in msgs {
                    if m[0] == b's' {
                        self.view = Some(m[1..65].to_vec());
                    }
                }
            }
        }
        assert_eq!(
            self.dgt.dropped + self.chesslink.dropped + self.diy.dropped,
            0
        );
        true
    }

    /// Reads until `done` holds; panics after `limit`.
    fn read_until(&mut self, limit: Duration, what: &str, mut done: impl FnMut(&Host) -> bool) {
        let t = Instant::now();
        while !done(self) {
            assert!(t.elapsed() < limit, "{}: no {what}", self.proto.name());
            assert!(self.read(), "{}: the board went away", self.proto.name());
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("chessboardd-simhost-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Plays `pgn_text` on a simulated `proto` board; the host dies right after move `after` is
/// complete, and again as soon as move `during` has begun, and comes back each time.
fn host_dies_and_comes_back(
    proto: Proto,
    pgn_text: &str,
    after: usize,
    during: usize,
) -> (Host, String) {
    let game = pgn::parse(pgn_text).unwrap().remove(0);
    let mut pos = game.start.clone();
    let mut views = vec![proto.view(pos.board())];
    for m in &game.moves {
        pos.play_unchecked(*m);
        views.push(proto.view(pos.board()));
    }
    let n = game.moves.len();
    assert!(after < during && during < n);
    let (sim, link) = start_simulator(proto.name(), proto.name(), pgn_text);
    let name = proto.name();
    let mut host = Host::new(proto);
    host.open(&link);
    host.start_up();
    host.read_until(Duration::from_secs(5), "start position", |h| {
        h.view.as_ref() == Some(&views[0])
    });
    // How far the game is, as the host sees it.
    let mut k = 0;
    let follow = |h: &Host, k: &mut usize| {
        if *k < n && h.view.as_ref() == Some(&views[*k + 1]) {
            *k += 1;
        }
    };
    let come_back = |host: &mut Host, expected: &[u8], what: &str| {
        host.open(&link);
        // A board nobody has spoken to sends nothing: no stale reports, no heartbeat.
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(300) {
            assert!(host.read());
        }
        assert_eq!(host.bytes, 0, "{name}: bytes before the start-up");
        host.start_up();
        host.read_until(Duration::from_secs(3), "answer to the start-up", |h| {
            h.view.is_some()
        });
        let shown = views.iter().position(|v| host.view.as_ref() == Some(v));
        assert_eq!(
            host.view.as_deref(),
            Some(expected),
            "{name}: the board when the host came back {what} (game position {shown:?})"
        );
    };

    // Between moves: the next player has not begun, and must not while nobody listens.
    host.read_until(Duration::from_secs(30), "move", |h| {
        follow(h, &mut k);
        k == after + 1
    });
    host.die();
    std::thread::sleep(AWAY);
    come_back(&mut host, &views[k], "(it died between moves)");

    // In the middle of a move: the player finishes that move, and starts no other.
    host.read_until(Duration::from_secs(30), "move begun", |h| {
        follow(h, &mut k);
        k >= during && h.view.as_ref() != Some(&views[k])
    });
    host.die();
    std::thread::sleep(AWAY);
    k += 1;
    come_back(&mut host, &views[k], "(it died during a move)");

    // The rest of the game, until the simulator ends it.
    let t = Instant::now();
    while host.read() {
        follow(&host, &mut k);
        assert!(t.elapsed() < Duration::from_secs(60), "{name}: no end");
    }
    assert_eq!(k, n, "{name}: every position of the game, in order");
    assert_eq!(
        host.view.as_ref(),
        Some(&views[n]),
        "{name}: the final position"
    );
    let out = sim.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!(" {n} moves played")), "{stderr}");
    assert_eq!(
        stderr.matches("the host closed the port").count(),
        2,
        "{stderr}"
    );
    assert!(!link.exists());
    (host, stderr)
}

#[test]
fn dgt_board_waits_for_a_host_that_died() {
    host_dies_and_comes_back(Proto::Dgt, GAME, 2, 7);
}

#[test]
fn chesslink_board_waits_for_a_host_that_died() {
    host_dies_and_comes_back(Proto::ChessLink, GAME, 4, 11);
}

#[test]
fn diy_board_waits_for_a_host_that_died_and_presses_its_buttons_again() {
    // The host dies while a pawn promotes: the button pressed while nobody listened is pressed
    // again for the next host, after its frame.
    let pgn_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games/promotions.pgn"),
    )
    .unwrap();
    let (host, _) = host_dies_and_comes_back(Proto::Diy, &pgn_text, 0, 3);
    assert_eq!(
        host.presses,
        vec![Role::Knight, Role::Rook, Role::Bishop, Role::Queen],
        "every promotion button, once, in order"
    );
}

#[test]
fn a_host_that_probes_and_opens_the_port_again_at_once_is_answered() {
    // As python-mchess does: open, ask, close, and open the same device again at once (here the
    // terminal the link pointed to: a real board's device node does not change).
    for proto in [Proto::Dgt, Proto::ChessLink] {
        let game = pgn::parse(GAME).unwrap().remove(0);
        let mut pos = game.start.clone();
        for m in &game.moves {
            pos.play_unchecked(*m);
        }
        let last = proto.view(pos.board());
        let (sim, link) = start_simulator(proto.name(), &format!("probe-{}", proto.name()), GAME);
        let device = std::fs::canonicalize(&link).unwrap();
        let mut host = Host::new(proto);
        host.open(&device);
        host.start_up();
        host.read_until(Duration::from_secs(5), "answer to the probe", |h| {
            h.view.is_some()
        });
        drop(host.port.take());
        // Long enough for the board to see that the port was closed.
        std::thread::sleep(Duration::from_millis(100));
        host.open(&device);
        host.start_up();
        host.read_until(Duration::from_secs(5), "answer after reopening", |h| {
            h.view.is_some()
        });
        let t = Instant::now();
        while host.read() {
            assert!(t.elapsed() < Duration::from_secs(60), "no end");
        }
        assert_eq!(
            host.view.as_ref(),
            Some(&last),
            "{}: the final position",
            proto.name()
        );
        let out = sim.wait_with_output().unwrap();
        assert!(out.status.success());
    }
}

/// `chessboardd simulate` for protocol `name` on `game` (PGN) at speed 20, in a fresh
/// directory `dir`: the simulator and its link, once the link is there (10 s at the most).
fn start_simulator(name: &str, dir: &str, game: &str) -> (std::process::Child, PathBuf) {
    let dir = temp_dir(dir);
    let pgn_path = dir.join("game.pgn");
    std::fs::write(&pgn_path, game).unwrap();
    let link = dir.join("board");
    let _ = std::fs::remove_file(&link);
    let sim = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["simulate", "--protocol", name, "--link"])
        .arg(&link)
        .arg("--pgn")
        .arg(&pgn_path)
        .args(["--speed", "20"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !link.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    (sim, link)
}
