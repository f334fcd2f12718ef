//! `chessboardd broadcast`: follows every board that publishes to an MQTT broker and keeps the
//! games of the round in a directory, as tournament broadcasts poll them:
//!
//! - `DIR/ID.pgn`: each board's game in progress (or its last);
//! - `DIR/earlier/ID-N.pgn`: a board's earlier games (a new game set up after one ended: the
//!   ended one is kept, not overwritten);
//! - `DIR/round.pgn`: every game of every board, in the order of the boards.
//!
//! Two messages are the same game when their `Date` and `Time` tags (when the game began) are
//! the same: a takeback replaces the game, as does a correction (the daemon's game rewritten from
//! a ply on: the moves announced withdrawn, those the board showed in their place, with the
//! same number of plies or another); a new game does not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use crate::mqtt::{spawn_connection, MqttSettings, Net};

/// The round file beside the boards' files.
pub const ROUND_FILE: &str = "round.pgn";
/// The directory of the boards' earlier games.
const EARLIER: &str = "earlier";
/// Boards followed at most: a broker user who makes up ids without end does not fill the disk.
const MAX_BOARDS: usize = 1000;
/// Earlier games kept for one board at most; beyond, a new game replaces the last.
const MAX_EARLIER: usize = 100;

/// Checks a board id as the broadcast takes it: a topic level
/// ([`crate::mqtt::check_topic_id`]) that is not the round file's name, since each board's
/// game is kept in a file named after its id beside the round file.
pub fn check_board_id(id: &str) -> Result<(), String> {
    crate::mqtt::check_topic_id(id)?;
    if id == ROUND_FILE.trim_end_matches(".pgn") {
        return Err(format!(
            "'{id}' is taken by the round file ({ROUND_FILE}); choose another id"
        ));
    }
    Ok(())
}

/// One game as received.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Game {
    text: String,
    plies: usize,
    result: String,
    /// When the game began (`Date`, `Time`): what tells one game of a board from the next.
    began: (String, String),
}

impl Game {
    fn parse(text: &str) -> Result<Game, String> {
        let games = crate::pgn::parse(text).map_err(|e| format!("not a PGN game: {e}"))?;
        let [g] = games.as_slice() else {
            return Err(format!("{} games in one message, not one", games.len()));
        };
        let tag = |t: &str| g.tag(t).unwrap_or("").to_string();
        let mut text = text.trim_end().to_string();
        text.push('\n');
        Ok(Game {
            text,
            plies: g.moves.len(),
            result: g.result.clone(),
            began: (tag("Date"), tag("Time")),
        })
    }

    fn summary(&self) -> String {
        let plies = if self.plies == 1 { "ply" } else { "plies" };
        format!("{} {plies}, {}", self.plies, self.result)
    }
}

#[derive(Debug, Default)]
struct Board {
    /// The earlier games with the number of their file, in the order they began.
    earlier: Vec<(u64, Game)>,
    current: Option<Game>,
}

impl Board {
    /// The number for the next earlier game's file: after every number there is.
    fn next_number(&self) -> u64 {
        self.earlier.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1
    }

    /// Keeps `game` as an earlier game with file number `n`, in the order the games began
    /// (in the place of one that began when it did).
    fn keep(&mut self, n: u64, game: Game) {
        self.earlier.retain(|(_, g)| g.began != game.began);
        let at = self
            .earlier
            .iter()
            .position(|(_, g)| g.began > game.began)
            .unwrap_or(self.earlier.len());
        self.earlier.insert(at, (n, game));
    }
}

/// The games of a round as `broadcast` keeps them.
#[derive(Debug, Default)]
pub struct Round {
    dir: PathBuf,
    boards: BTreeMap<String, Board>,
    /// Messages that were not a game, dropped.
    pub rejected: u64,
}

/// Orders board ids as people number boards: "board2" before "board10".
fn natural_key(id: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut chars = id.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u64::from(d));
                chars.next();
            }
            key.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    key.push((text, u64::MAX));
    key
}

/// The PGN files of a directory: (file stem, game); files that are not one game are left out.
fn games_in(dir: &Path) -> Vec<(String, Game)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            if path.extension()? != "pgn" {
                return None;
            }
            let stem = path.file_stem()?.to_str()?.to_string();
            let game = Game::parse(&std::fs::read_to_string(&path).ok()?).ok()?;
            Some((stem, game))
        })
        .collect()
}

impl Round {
    /// A round kept in `dir`, with the games already there (a broadcast started again keeps
    /// the games it had, even of boards that have gone). Fails when `dir` cannot be written.
    pub fn open(dir: &Path) -> Result<Round, String> {
        let err = |e: std::io::Error| format!("{}: {e}", dir.display());
        std::fs::create_dir_all(dir.join(EARLIER)).map_err(err)?;
        let mut boards: BTreeMap<String, Board> = BTreeMap::new();
        for (stem, game) in games_in(dir) {
            if check_board_id(&stem).is_ok() {
                boards.entry(stem).or_default().current = Some(game);
            }
        }
        for (stem, g) in games_in(&dir.join(EARLIER)) {
            let Some((id, n)) = stem.rsplit_once('-') else {
                continue;
            };
            if let (Ok(n), Ok(())) = (n.parse::<u64>(), check_board_id(id)) {
                boards.entry(id.to_string()).or_default().keep(n, g);
            }
        }
        // Files half written when a broadcast stopped (their names end in .tmp).
        for d in [dir.to_path_buf(), dir.join(EARLIER)] {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') && name.ends_with(".tmp") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let round = Round {
            dir: dir.to_path_buf(),
            boards,
            rejected: 0,
        };
        // Written at once: a directory that cannot be written is found now, not at the first
        // move.
        round.write(ROUND_FILE, &round.round_pgn())?;
        Ok(round)
    }

    pub fn boards(&self) -> usize {
        self.boards.len()
    }

    /// A message on `topic` (`PREFIX/ID/pgn`). Returns what changed, for the log; `Ok(None)`
    /// when nothing did; `Err` for a message that is no game (dropped and counted) or a file
    /// that could not be written.
    pub fn take(
        &mut self,
        prefix: &str,
        topic: &str,
        payload: &[u8],
    ) -> Result<Option<String>, String> {
        let (id, game) = match check(prefix, topic, payload) {
            Ok(Some(v)) => v,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.rejected += 1;
                return Err(format!("dropped: {e} ({} dropped so far)", self.rejected));
            }
        };
        if !self.boards.contains_key(&id) && self.boards.len() >= MAX_BOARDS {
            self.rejected += 1;
            return Err(format!(
                "dropped: {topic}: already {MAX_BOARDS} boards ({} dropped so far)",
                self.rejected
            ));
        }
        let board = self.boards.entry(id.clone()).or_default();
        // A game kept earlier, sent again (a broker's old retained message): that one is
        // brought up to date; the game in progress stays.
        if let Some(i) = board
            .earlier
            .iter()
            .position(|(_, g)| g.began == game.began)
        {
            if board.earlier[i].1 == game {
                return Ok(None);
            }
            let n = board.earlier[i].0;
            let summary = format!("board {id}: its earlier game {n}: {}", game.summary());
            self.write(&format!("{EARLIER}/{id}-{n}.pgn"), &game.text)?;
            if let Some(b) = self.boards.get_mut(&id) {
                b.earlier[i].1 = game;
            }
            self.write(ROUND_FILE, &self.round_pgn())?;
            return Ok(Some(summary));
        }
        let n = board.next_number();
        let name = format!("{EARLIER}/{id}-{n}.pgn");
        let mut note = String::new();
        match &board.current {
            Some(c) if *c == game => return Ok(None),
            // The game in progress, gone on or taken back.
            Some(c) if c.began == game.began => {}
            // A game older than the one in progress, not known: kept as an earlier game.
            Some(c) if game.began < c.began => {
                let summary = format!("board {id}: an earlier game ({name}): {}", game.summary());
                self.write(&name, &game.text)?;
                if let Some(b) = self.boards.get_mut(&id) {
                    b.keep(n, game);
                }
                self.write(ROUND_FILE, &self.round_pgn())?;
                return Ok(Some(summary));
            }
            // A new game after one that was played: that one is kept (up to a limit).
            Some(c) if c.plies > 0 => {
                // Kept already (the broadcast stopped before it wrote the new game): that file.
                let n = board
                    .earlier
                    .iter()
                    .find(|(_, g)| g.began == c.began)
                    .map_or(n, |(k, _)| *k);
                let name = format!("{EARLIER}/{id}-{n}.pgn");
                if board.earlier.len() < MAX_EARLIER {
                    let kept = c.clone();
                    self.write(&name, &kept.text)?;
                    note = format!("; the game before is kept as {name}");
                    if let Some(b) = self.boards.get_mut(&id) {
                        b.keep(n, kept);
                    }
                } else {
                    note = format!(
                        "; {MAX_EARLIER} earlier games of this board are kept already: the game \
                         before is not"
                    );
                }
            }
            _ => {}
        }
        let summary = format!("board {id}: {}{note}", game.summary());
        self.write(&format!("{id}.pgn"), &game.text)?;
        if let Some(b) = self.boards.get_mut(&id) {
            b.current = Some(game);
        }
        self.write(ROUND_FILE, &self.round_pgn())?;
        Ok(Some(summary))
    }

    /// Every board's games, in the order of the boards, each board's earlier games first; a
    /// board's new game is left out until its first move when an earlier one is there.
    pub fn round_pgn(&self) -> String {
        let mut ids: Vec<&String> = self.boards.keys().collect();
        ids.sort_by_key(|id| natural_key(id));
        let mut texts = Vec::new();
        for id in ids {
            let b = &self.boards[id];
            texts.extend(b.earlier.iter().map(|(_, g)| g.text.as_str()));
            if let Some(c) = &b.current {
                let kept = b.earlier.iter().any(|(_, g)| g.began == c.began);
                if !kept && (c.plies > 0 || b.earlier.is_empty()) {
                    texts.push(c.text.as_str());
                }
            }
        }
        texts.join("\n")
    }

    /// Replaces `dir/name` by `text` at once: written to a file of this process's own, synced,
    /// then renamed over the old (and the directory synced), so a poller never reads half a
    /// file and a power cut leaves the old file or the new.
    fn write(&self, name: &str, text: &str) -> Result<(), String> {
        let path = self.dir.join(name);
        crate::fsutil::replace(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The board and game of a message; `None` when the message is not a board's game.
fn check(prefix: &str, topic: &str, payload: &[u8]) -> Result<Option<(String, Game)>, String> {
    let Some(rest) = topic.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) else {
        return Ok(None);
    };
    let Some(id) = rest.strip_suffix("/pgn") else {
        return Ok(None);
    };
    check_board_id(id).map_err(|e| format!("{topic}: {e}"))?;
    // An empty retained message clears the topic: the game stays as it was.
    if payload.is_empty() {
        return Ok(None);
    }
    let text = std::str::from_utf8(payload).map_err(|_| format!("{topic}: not UTF-8 text"))?;
    let game = Game::parse(text).map_err(|e| format!("{topic}: {e}"))?;
    Ok(Some((id.to_string(), game)))
}

/// Follows every board under the prefix and keeps their games in `out` until `shutdown`
/// completes. Fails on settings it cannot use or a directory it cannot write.
pub async fn broadcast(
    settings: &MqttSettings,
    out: &Path,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Round, String> {
    let mut round = Round::open(out)?;
    if round.boards() > 0 {
        tracing::info!(
            "{}: the games of {} boards already there",
            out.display(),
            round.boards()
        );
    }
    settings.warn_clear_password();
    let id = format!(
        "chessboardd-broadcast-{}-{}",
        std::process::id(),
        crate::mqtt::random_suffix()
    );
    let o = settings.options_v5(&id)?;
    let (net_tx, mut net) = mpsc::unbounded_channel();
    let connection = spawn_connection::<rumqttc::v5::EventLoop>(o, net_tx, None);
    let mut client = None;
    let filter = format!("{}/+/pgn", settings.prefix);
    let broker = settings.url.to_string();
    let mut last_error = String::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            n = net.recv() => match n {
                Some(Net::Connected(c)) => {
                    tracing::info!("connected to {broker}, following {filter}");
                    last_error.clear();
                    // A clean session: the subscription is made again each time, and the
                    // broker sends the retained games with it.
                    let qos = rumqttc::v5::mqttbytes::QoS::AtLeastOnce;
                    if let Err(e) = c.try_subscribe(filter.clone(), qos) {
                        tracing::warn!("cannot subscribe to {filter}: {e}");
                    }
                    client = Some(c);
                }
                Some(Net::Message(topic, payload)) => {
                    match round.take(&settings.prefix, &topic, &payload) {
                        Ok(Some(summary)) => tracing::info!("{summary}"),
                        Ok(None) => {}
                        Err(e) => tracing::warn!("{e}"),
                    }
                }
                Some(Net::Down(e)) => {
                    if e != last_error {
                        tracing::warn!("{broker}: {e}; connecting again");
                    }
                    last_error = e;
                }
                Some(Net::Acked) => {}
                None => break,
            },
            _ = &mut shutdown => break,
        }
    }
    if let Some(c) = client {
        let _ = c.try_disconnect();
    }
    connection.abort();
    Ok(round)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_id_is_not_the_round_file() {
        assert!(check_board_id("board-1").is_ok());
        for bad in ["round", "", "a/b", ".hidden"] {
            assert!(check_board_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn boards_in_the_order_people_number_them() {
        let mut ids = vec!["board10", "board2", "board1", "a", "board2b"];
        ids.sort_by_key(|id| natural_key(id));
        assert_eq!(ids, ["a", "board1", "board2", "board2b", "board10"]);
    }

    fn game(white: &str, time: &str, moves: &str) -> String {
        format!(
            "[Date \"2026.11.30\"]\n[White \"{white}\"]\n[Result \"*\"]\n[Time \"{time}\"]\n\n\
             {moves} *\n"
        )
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("chessboardd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_round_keeps_each_boards_latest_game_and_refuses_the_rest() {
        let dir = scratch("round");
        let mut r = Round::open(&dir).unwrap();
        // Whether a message changed the board's game.
        let mut changed = |topic: &str, white: &str, moves: &str| {
            r.take(
                "chessboardd",
                topic,
                game(white, "10:00:00", moves).as_bytes(),
            )
            .unwrap()
            .is_some()
        };
        assert!(changed("chessboardd/b2/pgn", "B", "1. d4"));
        assert!(changed("chessboardd/b10/pgn", "C", "1. c4"));
        assert!(changed("chessboardd/b1/pgn", "A", "1. e4"));
        // The same again changes nothing; the game gone on (or taken back) replaces it.
        assert!(!changed("chessboardd/b1/pgn", "A", "1. e4"));
        assert!(changed("chessboardd/b1/pgn", "A", "1. e4 e5"));
        let p = "chessboardd";
        // Not games, not ours: dropped, counted, the files untouched.
        assert!(r.take(p, "chessboardd/b1/pgn", b"1. e4 Ke7 Kd6").is_err());
        assert!(r.take(p, "chessboardd/b1/pgn", &[0xff, 0xfe]).is_err());
        let g = game("X", "10:00:00", "1. e4");
        assert!(r.take(p, "chessboardd/round/pgn", g.as_bytes()).is_err());
        let two = format!("{g}\n{g}");
        assert!(r.take(p, "chessboardd/b1/pgn", two.as_bytes()).is_err());
        assert_eq!(r.rejected, 4);
        assert!(r.take(p, "other/b1/pgn", g.as_bytes()).unwrap().is_none());
        assert!(r.take(p, "chessboardd/b1/state", b"{}").unwrap().is_none());
        assert!(r.take(p, "chessboardd/b1/pgn", b"").unwrap().is_none());
        let round = std::fs::read_to_string(dir.join(ROUND_FILE)).unwrap();
        let whites: Vec<&str> = round.lines().filter(|l| l.starts_with("[White")).collect();
        assert_eq!(whites, ["[White \"A\"]", "[White \"B\"]", "[White \"C\"]"]);
        assert!(round.contains("1. e4 e5 *"));
        assert_eq!(
            std::fs::read_to_string(dir.join("b1.pgn")).unwrap(),
            game("A", "10:00:00", "1. e4 e5")
        );
        // Started again, it has the games it had.
        let again = Round::open(&dir).unwrap();
        assert_eq!(again.round_pgn(), round);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrected_game_replaces_the_one_announced() {
        let dir = scratch("corrected");
        let mut r = Round::open(&dir).unwrap();
        let p = "chessboardd";
        let announced = game("A", "10:00:00", "1. e4 e5 2. Nf3 Nc6");
        r.take(p, "chessboardd/b1/pgn", announced.as_bytes())
            .unwrap();
        let corrected = game(
            "A",
            "10:00:00",
            "1. e4 e5 2. Nc3 {recovered from the board} 2... Nc6 {recovered from the board}",
        );
        let said = r
            .take(p, "chessboardd/b1/pgn", corrected.as_bytes())
            .unwrap();
        assert_eq!(said.as_deref(), Some("board b1: 4 plies, *"));
        assert_eq!(
            std::fs::read_to_string(dir.join("b1.pgn")).unwrap(),
            corrected
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(ROUND_FILE)).unwrap(),
            corrected
        );
        assert_eq!(std::fs::read_dir(dir.join(EARLIER)).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_game_on_a_board_keeps_the_one_before() {
        let dir = scratch("next-game");
        let mut r = Round::open(&dir).unwrap();
        let p = "chessboardd";
        let first = game("A", "10:00:00", "1. e4 e5 2. Qh5");
        r.take(p, "chessboardd/b1/pgn", first.as_bytes()).unwrap();
        // The pieces set up again: a new game, no move yet. The round still shows the first.
        let next = game("A", "11:30:00", "");
        let said = r.take(p, "chessboardd/b1/pgn", next.as_bytes()).unwrap();
        assert!(said.unwrap().contains("earlier/b1-1.pgn"));
        let round = std::fs::read_to_string(dir.join(ROUND_FILE)).unwrap();
        assert_eq!(round, first);
        assert_eq!(std::fs::read_to_string(dir.join("b1.pgn")).unwrap(), next);
        // Its first move: both games, the earlier first.
        let moved = game("A", "11:30:00", "1. d4");
        r.take(p, "chessboardd/b1/pgn", moved.as_bytes()).unwrap();
        let round = std::fs::read_to_string(dir.join(ROUND_FILE)).unwrap();
        assert_eq!(round, format!("{first}\n{moved}"));
        // A new game set up before any move replaces the empty one, keeping nothing more.
        let empty = game("A", "12:00:00", "");
        r.take(p, "chessboardd/b1/pgn", empty.as_bytes()).unwrap();
        let again = game("A", "12:05:00", "");
        r.take(p, "chessboardd/b1/pgn", again.as_bytes()).unwrap();
        assert!(!dir.join("earlier/b1-3.pgn").exists());
        // Started again, it has them all.
        let reopened = Round::open(&dir).unwrap();
        assert_eq!(
            reopened.round_pgn(),
            format!("{first}\n{moved}"),
            "{:?}",
            reopened.boards
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn games_sent_again_or_files_removed_keep_every_game_once() {
        let dir = scratch("again");
        let mut r = Round::open(&dir).unwrap();
        let p = "chessboardd";
        let g1 = game("A", "10:00:00", "1. e4 e5 2. Qh5 Nc6");
        let g2 = game("A", "11:00:00", "1. d4 d5");
        let g3 = game("A", "12:00:00", "1. c4");
        for g in [&g1, &g2] {
            r.take(p, "chessboardd/b1/pgn", g.as_bytes()).unwrap();
        }
        // A broker restored from an old save sends game 1 again, then the board game 2.
        assert!(r
            .take(p, "chessboardd/b1/pgn", g1.as_bytes())
            .unwrap()
            .is_none());
        assert!(r
            .take(p, "chessboardd/b1/pgn", g2.as_bytes())
            .unwrap()
            .is_none());
        assert_eq!(r.round_pgn(), format!("{g1}\n{g2}"));
        // Game 1 arrives longer (its last moves came late): brought up to date in its place.
        let g1_longer = game("A", "10:00:00", "1. e4 e5 2. Qh5 Nc6 3. Bc4");
        assert!(r
            .take(p, "chessboardd/b1/pgn", g1_longer.as_bytes())
            .unwrap()
            .is_some());
        assert_eq!(r.round_pgn(), format!("{g1_longer}\n{g2}"));
        // The arbiter removed earlier/b1-1.pgn; a broadcast started again numbers after what
        // is there and overwrites nothing.
        r.take(p, "chessboardd/b1/pgn", g3.as_bytes()).unwrap();
        assert!(dir.join("earlier/b1-2.pgn").exists());
        std::fs::remove_file(dir.join("earlier/b1-1.pgn")).unwrap();
        let mut r = Round::open(&dir).unwrap();
        let g4 = game("A", "13:00:00", "1. b3");
        r.take(p, "chessboardd/b1/pgn", g4.as_bytes()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("earlier/b1-2.pgn")).unwrap(),
            g2
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("earlier/b1-3.pgn")).unwrap(),
            g3
        );
        assert_eq!(r.round_pgn(), format!("{g2}\n{g3}\n{g4}"));
        // Stopped after keeping game 4 but before writing game 5: game 4 is in both places; it
        // is counted once, and kept once when game 5 comes.
        let g5 = game("A", "14:00:00", "1. g3");
        std::fs::write(dir.join("earlier/b1-4.pgn"), &g4).unwrap();
        std::fs::write(dir.join(".b1.pgn.999.tmp"), "half").unwrap();
        let mut r = Round::open(&dir).unwrap();
        assert!(!dir.join(".b1.pgn.999.tmp").exists());
        assert_eq!(r.round_pgn(), format!("{g2}\n{g3}\n{g4}"));
        r.take(p, "chessboardd/b1/pgn", g5.as_bytes()).unwrap();
        assert!(!dir.join("earlier/b1-5.pgn").exists());
        assert_eq!(r.round_pgn(), format!("{g2}\n{g3}\n{g4}\n{g5}"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_directory_that_cannot_be_written_is_refused_at_once() {
        let file = scratch("not-a-dir");
        std::fs::write(&file, "").unwrap();
        let e = Round::open(&file).unwrap_err();
        assert!(e.contains(&file.display().to_string()), "{e}");
        let _ = std::fs::remove_file(&file);
    }
}
