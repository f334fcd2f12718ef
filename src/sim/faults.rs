//! What goes wrong between the board's sensors and the host, written once for both renderers
//! (`sensors`, the in-process board; `pty`, a DIY board on a pseudo-terminal): the fault models
//! ([`Faults`]) and the [`Channel`] that delays, loses and repeats the board's reports as they
//! say. The people's quirks (bounce, scan order, frames, slides) are not faults: they are always
//! there (see `drive::people`).
//!
//! The models, each on its own or combined:
//! - `lost-next`: a reading lost now and then (1%); the board's very next report is a whole-board
//!   frame that shows it (or, when no reading comes, one a second after the loss);
//! - `lost-periodic`: a reading lost now and then (1%); the readings of single squares go on as
//!   usual meanwhile, and the board reports its whole board once a second ([`FRAME_EVERY_MS`], at
//!   a phase drawn for each game), new or not: the loss shows in the next of those frames;
//! - `late`: a single-square reading now and then (1%) comes 0.2 to 2.5 s late ([`LATE_MS`]),
//!   with the other readings in between; the board's reports show the square as it was until
//!   then (the sensor is slow, not the line). When the square changes again before the late
//!   reading would come, it never comes: the later change is reported as usual (and may be late
//!   itself);
//! - `swaps`: 5% of the captures swapped quicker than the debounce time (the captured piece swept
//!   off and the capturing piece set down within a few ms);
//! - `pulls`: now and then the board's link is lost for a second or so while the players go on,
//!   and the board reports its whole board when it is back.
//!
//! `lost-next` and `swaps` together are the sensor losses of earlier releases (`losses`): for a
//! seed they give the same inputs as then. `lost-next` draws from the choreography's generator
//! (as it always did); `lost-periodic` and `late` draw from the channel's own, so that a game
//! with them is played with the same gestures as without.

use shakmaty::{Bitboard, Square};

use super::Rng;
use crate::engine::Millis;

/// The fault models a simulated board suffers (see the module's text); any combination.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Faults {
    /// A reading lost now and then, shown by the board's very next report, a whole-board frame.
    pub lost_next: bool,
    /// A reading lost now and then, shown by the board's next periodic whole-board frame (once a
    /// second, always sent in this model).
    pub lost_periodic: bool,
    /// A single-square reading now and then 0.2 to 2.5 s late (never, when its square changed
    /// again meanwhile).
    pub late: bool,
    /// 5% of the captures swapped quicker than the debounce time.
    pub swaps: bool,
    /// Cables pulled now and then while the players go on.
    pub pulls: bool,
}

/// How often `lost-periodic` and `late` strike, in thousandths of the readings (1%); `lost-next`
/// has its own, the same ([`LOST_READING_PER_MILLE`](super::LOST_READING_PER_MILLE)).
pub const FAULT_PER_MILLE: u64 = 10;
/// How late a late reading comes, in ms (`lo..=hi`).
pub const LATE_MS: (Millis, Millis) = (200, 2500);
/// How often the board reports its whole board in `lost-periodic`, in ms.
pub const FRAME_EVERY_MS: Millis = 1000;

/// The names of the single models, in the order a combination is written.
const PARTS: [(&str, Faults); 5] = [
    ("lost-next", Faults::LOST_NEXT),
    ("lost-periodic", Faults::LOST_PERIODIC),
    ("late", Faults::LATE),
    ("swaps", Faults::SWAPS),
    ("pulls", Faults::PULLS),
];

impl Faults {
    pub const NONE: Faults = Faults {
        lost_next: false,
        lost_periodic: false,
        late: false,
        swaps: false,
        pulls: false,
    };
    pub const LOST_NEXT: Faults = Faults {
        lost_next: true,
        ..Faults::NONE
    };
    pub const LOST_PERIODIC: Faults = Faults {
        lost_periodic: true,
        ..Faults::NONE
    };
    pub const LATE: Faults = Faults {
        late: true,
        ..Faults::NONE
    };
    pub const SWAPS: Faults = Faults {
        swaps: true,
        ..Faults::NONE
    };
    pub const PULLS: Faults = Faults {
        pulls: true,
        ..Faults::NONE
    };
    /// The sensor losses of earlier releases: `lost-next` and `swaps`.
    pub const LOSSES: Faults = Faults {
        lost_next: true,
        swaps: true,
        ..Faults::NONE
    };
    /// What a board that revises its reading must survive: `lost-periodic`, `late` and `swaps`.
    pub const COMBINED: Faults = Faults {
        lost_periodic: true,
        late: true,
        swaps: true,
        ..Faults::NONE
    };

    /// The models of `bench tempo`'s table, in its order.
    pub const TABLE: [Faults; 7] = [
        Faults::NONE,
        Faults::LOST_NEXT,
        Faults::LOST_PERIODIC,
        Faults::LATE,
        Faults::SWAPS,
        Faults::COMBINED,
        Faults::PULLS,
    ];

    /// Every name [`FromStr`](std::str::FromStr) takes alone, with what it stands for.
    pub const NAMES: [(&'static str, Faults); 8] = [
        ("none", Faults::NONE),
        ("lost-next", Faults::LOST_NEXT),
        ("lost-periodic", Faults::LOST_PERIODIC),
        ("late", Faults::LATE),
        ("swaps", Faults::SWAPS),
        ("pulls", Faults::PULLS),
        ("combined", Faults::COMBINED),
        ("losses", Faults::LOSSES),
    ];

    /// Both sets' models.
    pub fn union(self, o: Faults) -> Faults {
        Faults {
            lost_next: self.lost_next || o.lost_next,
            lost_periodic: self.lost_periodic || o.lost_periodic,
            late: self.late || o.late,
            swaps: self.swaps || o.swaps,
            pulls: self.pulls || o.pulls,
        }
    }

    /// Every model of `o` is in this set.
    pub fn contains(self, o: Faults) -> bool {
        self.union(o) == self
    }

    /// Its name: one of [`Faults::NAMES`], or its models joined by `+` (`late+pulls`).
    pub fn name(&self) -> String {
        if let Some((name, _)) = Faults::NAMES.iter().find(|(_, f)| f == self) {
            return (*name).to_string();
        }
        PARTS
            .iter()
            .filter(|(_, f)| self.contains(*f))
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join("+")
    }

    /// A reading is lost now and then, whichever way the board shows it again.
    pub fn loses(&self) -> bool {
        self.lost_next || self.lost_periodic
    }
}

impl std::fmt::Display for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl std::str::FromStr for Faults {
    type Err = String;
    /// A name of [`Faults::NAMES`], or several joined by `+` or `,` (`late+swaps`,
    /// `late,lost-periodic`): all their models.
    fn from_str(s: &str) -> Result<Faults, String> {
        let mut out = Faults::NONE;
        for part in s.split(['+', ',']).map(str::trim) {
            let (_, f) = Faults::NAMES
                .iter()
                .find(|(n, _)| *n == part)
                .ok_or_else(|| {
                    let names: Vec<&str> = Faults::NAMES.iter().map(|(n, _)| *n).collect();
                    format!(
                        "'{part}' is not a fault model (accepted: {}, or several joined by +)",
                        names.join(", ")
                    )
                })?;
            out = out.union(*f);
        }
        Ok(out)
    }
}

/// A reading of one square held back by `late`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Held {
    due: Millis,
    sq: Square,
    occupied: bool,
    /// The square as the board shows it meanwhile.
    before: bool,
    /// Its entry in [`Trace::late`].
    id: usize,
}

/// What the channel has to send, at its time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Due {
    /// A late reading of one square comes.
    Late(Square, bool),
    /// The board's periodic whole-board frame (`lost-periodic`).
    Frame,
}

/// One reading `late` held back.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LateReading {
    /// When the square changed (when the reading would have come).
    pub at: Millis,
    /// When it comes (or would have).
    pub due: Millis,
    pub sq: Square,
    pub occupied: bool,
    /// The square as the board showed it meanwhile.
    pub before: bool,
    /// It came: its square did not change again before.
    pub delivered: bool,
}

/// What a channel did, for the tests and `simulate`'s report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Every reading held back by `late`.
    pub late: Vec<LateReading>,
    /// When a reading was lost (either model).
    pub lost: Vec<Millis>,
    /// When a periodic frame was due (`lost-periodic`; one in a pulled cable is not heard).
    pub frames: Vec<Millis>,
    /// The board as it really was, from each time on (kept by the in-process renderer).
    pub truth: Vec<(Millis, Bitboard)>,
}

/// The fault layer between a board's sensors and the host: it decides which readings are lost
/// (`lost-periodic`) or late (`late`), holds the late ones back, and says when they and the
/// periodic frames are due. A renderer tells it every change of a square ([`Channel::changed`])
/// and every reading it is about to send, and asks it for what is due ([`Channel::next_due`])
/// before it sends anything later. (`lost-next`, `swaps` and `pulls` are the renderers' own: the
/// choreography's generator and the link.)
#[derive(Clone, Debug)]
pub struct Channel {
    faults: Faults,
    per_mille: u64,
    rng: Rng,
    held: Vec<Held>,
    next_frame: Option<Millis>,
    pub trace: Trace,
}

impl Channel {
    /// A channel for a game that starts at `t0`, its draws from `seed` (its own generator), each
    /// loss or late reading with probability `per_mille` thousandths ([`FAULT_PER_MILLE`]).
    pub fn new(faults: Faults, seed: u64, t0: Millis, per_mille: u64) -> Channel {
        let mut rng = Rng::new(seed ^ 0x6661_756c_7473);
        let next_frame = faults
            .lost_periodic
            .then(|| t0 + rng.range(0, FRAME_EVERY_MS - 1));
        Channel {
            faults,
            per_mille,
            rng,
            held: Vec::new(),
            next_frame,
            trace: Trace::default(),
        }
    }

    pub fn faults(&self) -> Faults {
        self.faults
    }

    /// `sq` changes (any reading of it is on its way): a reading of it still held back never
    /// comes. Returns how the board showed the square meanwhile, if one was held back.
    pub fn changed(&mut self, sq: Square) -> Option<bool> {
        let i = self.held.iter().position(|h| h.sq == sq)?;
        Some(self.held.remove(i).before)
    }

    /// Whether the reading sent at `t` is lost (`lost-periodic`).
    pub fn lose(&mut self, t: Millis) -> bool {
        self.lose_if(self.faults.lost_periodic, t)
    }

    /// Whether the report sent at `t` is lost, in either model of losses (a board whose every
    /// report is its whole board, where the two cannot differ).
    pub fn lose_any(&mut self, t: Millis) -> bool {
        self.lose_if(self.faults.loses(), t)
    }

    fn lose_if(&mut self, on: bool, t: Millis) -> bool {
        let lost = on && self.rng.next_u64() % 1000 < self.per_mille;
        if lost {
            self.trace.lost.push(t);
        }
        lost
    }

    /// Whether the reading of `sq` (now `occupied`, shown as `before` until then) made at `t`
    /// comes late (`late`): then it is held back, and [`Channel::next_due`] gives it when due.
    pub fn delay(&mut self, t: Millis, sq: Square, occupied: bool, before: bool) -> bool {
        if !self.faults.late || self.rng.next_u64() % 1000 >= self.per_mille {
            return false;
        }
        let due = t + self.rng.range(LATE_MS.0, LATE_MS.1);
        self.held.retain(|h| h.sq != sq);
        self.held.push(Held {
            due,
            sq,
            occupied,
            before,
            id: self.trace.late.len(),
        });
        self.trace.late.push(LateReading {
            at: t,
            due,
            sq,
            occupied,
            before,
            delivered: false,
        });
        true
    }

    /// The earliest late reading or periodic frame due by `until`, taken (call again for the
    /// next); the earlier first, a late reading before a frame at the same time.
    pub fn next_due(&mut self, until: Millis) -> Option<(Millis, Due)> {
        let held = self
            .held
            .iter()
            .enumerate()
            .min_by_key(|(_, h)| h.due)
            .map(|(i, h)| (i, h.due));
        match (held, self.next_frame) {
            (Some((i, due)), frame) if due <= until && frame.is_none_or(|f| due <= f) => {
                let h = self.held.remove(i);
                self.trace.late[h.id].delivered = true;
                Some((h.due, Due::Late(h.sq, h.occupied)))
            }
            (_, Some(f)) if f <= until => {
                self.next_frame = Some(f + FRAME_EVERY_MS);
                self.trace.frames.push(f);
                Some((f, Due::Frame))
            }
            _ => None,
        }
    }

    /// The board as its reports show it, `occ` being the board as it is: the squares whose
    /// readings are held back as they were.
    pub fn shown(&self, mut occ: Bitboard) -> Bitboard {
        for h in &self.held {
            occ.set(h.sq, h.before);
        }
        occ
    }

    /// When the last thing held back is due (a late reading), if any.
    pub fn held_until(&self) -> Option<Millis> {
        self.held.iter().map(|h| h.due).max()
    }

    /// The next periodic frame's time, if the board sends them.
    pub fn next_frame(&self) -> Option<Millis> {
        self.next_frame
    }

    /// Notes the board as it really is from `t` on (for the tests).
    pub fn truth(&mut self, t: Millis, occ: Bitboard) {
        if self.trace.truth.last().is_none_or(|(_, o)| *o != occ) {
            self.trace.truth.push((t, occ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_combine() {
        for (name, f) in Faults::NAMES {
            assert_eq!(f.name(), name);
            assert_eq!(name.parse::<Faults>(), Ok(f));
        }
        for f in Faults::TABLE {
            assert_eq!(f.name().parse::<Faults>(), Ok(f));
        }
        let lp: Faults = "late+pulls".parse().unwrap();
        assert_eq!(lp, Faults::LATE.union(Faults::PULLS));
        assert_eq!(lp.name(), "late+pulls");
        assert_eq!("late,lost-periodic,swaps".parse(), Ok(Faults::COMBINED));
        assert_eq!(
            "lost-next+swaps".parse::<Faults>().unwrap().name(),
            "losses"
        );
        assert!("late+lost".parse::<Faults>().is_err());
        assert!("".parse::<Faults>().is_err());
    }

    #[test]
    fn a_late_reading_is_dropped_when_its_square_changes_again() {
        let e2 = Square::E2;
        let mut ch = Channel::new(Faults::LATE, 3, 0, 1000);
        assert!(ch.delay(100, e2, false, true));
        assert_eq!(ch.shown(Bitboard::EMPTY), Bitboard::from(e2));
        assert_eq!(ch.changed(e2), Some(true));
        assert_eq!(ch.next_due(10_000), None);
        assert!(!ch.trace.late[0].delivered);
        assert!(ch.delay(200, e2, false, true));
        let (t, due) = ch.next_due(10_000).unwrap();
        assert_eq!(due, Due::Late(e2, false));
        assert!((400..=2700).contains(&t));
        assert!(ch.trace.late[1].delivered);
    }
}
