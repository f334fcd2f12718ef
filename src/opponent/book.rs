//! A Polyglot opening book (`.bin`), read by the daemon itself so the computer varies its
//! openings.
//!
//! The file is a list of entries of 16 bytes, sorted by key: the position's Zobrist key (u64,
//! big-endian, with Polyglot's random numbers: shakmaty's [`Zobrist64`] are those), the move
//! (u16), its weight (u16) and a learn field (u32, unused). The move's bits: to-square 0-5,
//! from-square 6-11 (file in the low three bits, rank in the next three), promotion 12-14 (1
//! knight, 2 bishop, 3 rook, 4 queen). Castling is written as the king taking its own rook
//! (e1h1, e1a1, e8h8, e8a8).
//!
//! The entries of a position are found by binary search on the file (a few reads of 16 bytes,
//! nothing loaded), and one is picked at random, each as likely as its weight.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Move, Position, Role};

/// The bytes of one entry.
pub const ENTRY: u64 = 16;
/// The most entries taken for one position (a book holds a handful).
const MAX_ENTRIES: usize = 256;

/// Why a book cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error("[opponent] book = \"{}\": cannot read it: {why}", .path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "[opponent] book = \"{}\": not a Polyglot book ({len} bytes, not a multiple of 16)",
        .path.display()
    )]
    NotPolyglot { path: PathBuf, len: u64 },
}

/// One entry of the book.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: u64,
    pub raw_move: u16,
    pub weight: u16,
    pub learn: u32,
}

impl Entry {
    fn parse(b: &[u8; 16]) -> Entry {
        Entry {
            key: u64::from_be_bytes(b[0..8].try_into().expect("8 bytes")),
            raw_move: u16::from_be_bytes([b[8], b[9]]),
            weight: u16::from_be_bytes([b[10], b[11]]),
            learn: u32::from_be_bytes(b[12..16].try_into().expect("4 bytes")),
        }
    }
}

/// An open book.
#[derive(Debug)]
pub struct Book {
    file: File,
    entries: u64,
    path: PathBuf,
}

/// The position's Polyglot key.
pub fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// A move in Polyglot's encoding (castling as the king taking its rook).
pub fn encode(m: &Move) -> u16 {
    let sq = |s: shakmaty::Square| u16::from(s.file()) | (u16::from(s.rank()) << 3);
    let from = m.from().map_or(0, sq);
    let promotion = match m.promotion() {
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(Role::Queen) => 4,
        _ => 0,
    };
    // For castling `to()` is the rook's square, as Polyglot writes it.
    sq(m.to()) | (from << 6) | (promotion << 12)
}

/// The legal move of `pos` that `raw` encodes, if any (a key shared by two positions gives
/// moves that are not legal here: they are left out).
pub fn decode(pos: &Chess, raw: u16) -> Option<Move> {
    pos.legal_moves()
        .into_iter()
        .find(|m| encode(m) == raw & 0x7fff)
}

impl Book {
    /// Opens a book and checks its size.
    pub fn open(path: &Path) -> Result<Book, BookError> {
        let unreadable = |e: std::io::Error| BookError::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        };
        let file = File::open(path).map_err(unreadable)?;
        let meta = file.metadata().map_err(unreadable)?;
        if meta.is_dir() {
            return Err(BookError::Unreadable {
                path: path.to_path_buf(),
                why: "it is a directory".into(),
            });
        }
        if meta.len() % ENTRY != 0 {
            return Err(BookError::NotPolyglot {
                path: path.to_path_buf(),
                len: meta.len(),
            });
        }
        Ok(Book {
            file,
            entries: meta.len() / ENTRY,
            path: path.to_path_buf(),
        })
    }

    /// How many entries the book holds.
    pub fn len(&self) -> u64 {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    fn entry(&self, i: u64) -> std::io::Result<Entry> {
        let mut b = [0u8; 16];
        self.file.read_exact_at(&mut b, i * ENTRY)?;
        Ok(Entry::parse(&b))
    }

    /// The entries for a key, in the book's order.
    pub fn entries_for(&self, key: u64) -> std::io::Result<Vec<Entry>> {
        // The first entry whose key is not below `key`.
        let (mut lo, mut hi) = (0, self.entries);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid)?.key < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut found = Vec::new();
        let mut i = lo;
        while i < self.entries && found.len() < MAX_ENTRIES {
            let e = self.entry(i)?;
            if e.key != key {
                break;
            }
            found.push(e);
            i += 1;
        }
        Ok(found)
    }

    /// The legal moves the book gives for `pos`, each with its weight.
    pub fn moves(&self, pos: &Chess) -> Vec<(Move, u16)> {
        match self.entries_for(key(pos)) {
            Ok(entries) => entries
                .iter()
                .filter_map(|e| decode(pos, e.raw_move).map(|m| (m, e.weight)))
                .collect(),
            Err(e) => {
                tracing::warn!("opponent: book {}: {e}", self.path.display());
                Vec::new()
            }
        }
    }

    /// A move for `pos` picked at random by weight (`seed` decides), or `None`: out of book.
    /// Moves of weight 0 are played only when all have weight 0.
    pub fn pick(&self, pos: &Chess, seed: u64) -> Option<Move> {
        let moves = self.moves(pos);
        let total: u64 = moves.iter().map(|(_, w)| u64::from(*w)).sum();
        if total == 0 {
            return (!moves.is_empty()).then(|| moves[(mix(seed) % moves.len() as u64) as usize].0);
        }
        let mut r = mix(seed) % total;
        for (m, w) in &moves {
            let w = u64::from(*w);
            if r < w {
                return Some(*m);
            }
            r -= w;
        }
        None
    }
}

/// SplitMix64's finaliser: a seed spread over all bits.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::CastlingMode;

    fn play(pos: &Chess, uci: &str) -> Chess {
        let m = uci.parse::<UciMove>().unwrap().to_move(pos).unwrap();
        pos.clone().play(m).unwrap()
    }

    #[test]
    fn keys_are_polyglots() {
        let start = Chess::default();
        assert_eq!(key(&start), 0x463b_9618_1691_fc9c);
        let e4 = play(&start, "e2e4");
        assert_eq!(key(&e4), 0x823c_9b50_fd11_4196);
        let d5 = play(&e4, "d7d5");
        assert_eq!(key(&d5), 0x0756_b944_61c5_0fb0);
    }

    /// A book written here, as Polyglot lays one out: entries sorted by key, big-endian.
    fn write_book(name: &str, mut entries: Vec<(u64, &str, u16)>) -> PathBuf {
        entries.sort_by_key(|e| e.0);
        let sq = |s: &str| {
            let b = s.as_bytes();
            u16::from(b[0] - b'a') | (u16::from(b[1] - b'1') << 3)
        };
        let mut bytes = Vec::new();
        for (key, mv, weight) in entries {
            let promo = match mv.as_bytes().get(4) {
                Some(b'n') => 1,
                Some(b'q') => 4,
                _ => 0,
            };
            let raw = sq(&mv[2..4]) | (sq(&mv[0..2]) << 6) | (promo << 12);
            bytes.extend_from_slice(&key.to_be_bytes());
            bytes.extend_from_slice(&raw.to_be_bytes());
            bytes.extend_from_slice(&weight.to_be_bytes());
            bytes.extend_from_slice(&0u32.to_be_bytes());
        }
        let path =
            std::env::temp_dir().join(format!("chessboardd-{name}-{}.bin", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn a_book_gives_its_moves_by_weight() {
        let start = Chess::default();
        let e4 = play(&start, "e2e4");
        let castle: Chess = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let path = write_book(
            "book",
            vec![
                (key(&start), "e2e4", 3),
                (key(&start), "d2d4", 1),
                (key(&start), "g1f3", 0),
                (key(&e4), "c7c5", 1),
                (key(&castle), "e1h1", 1),
                // Keys around the ones asked for, so the search has to find them.
                (1, "a2a3", 1),
                (u64::MAX, "a2a3", 1),
            ],
        );
        let book = Book::open(&path).unwrap();
        assert_eq!(book.len(), 7);
        let moves = book.moves(&start);
        assert_eq!(moves.len(), 3, "{moves:?}");
        let mut counts = std::collections::HashMap::new();
        for seed in 0..400 {
            let m = book.pick(&start, seed).unwrap();
            *counts
                .entry(m.to_uci(CastlingMode::Standard).to_string())
                .or_insert(0) += 1;
        }
        // By weight: e4 three times as often as d4, never the move of weight 0.
        let (e, d) = (counts["e2e4"], counts["d2d4"]);
        assert!(e + d == 400 && e > 2 * d && d > 50, "{counts:?}");
        let reply = book.pick(&e4, 1).unwrap();
        assert_eq!(reply.to_uci(CastlingMode::Standard).to_string(), "c7c5");
        let c = book.pick(&castle, 1).unwrap();
        assert!(matches!(c, Move::Castle { .. }), "{c:?}");
        // Out of book.
        assert_eq!(book.pick(&play(&e4, "e7e5"), 1), None);
        let _ = std::fs::remove_file(&path);
        // Not a book: its size is no multiple of 16.
        std::fs::write(&path, [0u8; 17]).unwrap();
        let e = Book::open(&path).unwrap_err().to_string();
        assert!(
            e.contains("[opponent] book") && e.contains("not a Polyglot book"),
            "{e}"
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn castling_and_promotion_are_encoded_as_polyglot_writes_them() {
        let pos: Chess = "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        // e1h1: from e1 (file 4, rank 0) to h1 (7).
        let short = decode(&pos, 7 | (4 << 6)).unwrap();
        assert!(matches!(short, Move::Castle { .. }), "{short:?}");
        assert_eq!(short.to_uci(CastlingMode::Standard).to_string(), "e1g1");
        let long = decode(&pos, 4 << 6).unwrap();
        assert_eq!(long.to_uci(CastlingMode::Standard).to_string(), "e1c1");
        // b7a8=N (a capture with promotion): from b7 (1 + 6*8) to a8 (56), knight 1.
        let n = decode(&pos, 56 | ((1 + 6 * 8) << 6) | (1 << 12)).unwrap();
        assert_eq!(n.promotion(), Some(Role::Knight));
        assert_eq!(n.to_uci(CastlingMode::Standard).to_string(), "b7a8n");
        // A move that is not legal here (a key collision) decodes to nothing.
        assert_eq!(decode(&pos, 20 | (12 << 6)), None);
    }
}
