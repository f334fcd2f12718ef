//! Rule profiles: the differences between the editions of the Laws as a table of values.
//!
//! One profile is one row; the engine reads values from it and never asks which edition it is.

use std::fmt;
use std::str::FromStr;

use super::clock::{Pace, TimeControl};

/// What happens to a player who makes a wrong draw claim (Art. 9.5).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WrongClaim {
    /// 1997: the claimant loses half his remaining time, at most three minutes; the opponent
    /// gets three minutes.
    HalfUpToThree,
    /// 2005: the opponent gets three minutes; the claimant with more than two minutes loses half
    /// of it up to three minutes, with one to two minutes is left with one, under one keeps it.
    Graded2005,
    /// 2014 onwards: the opponent gets two minutes.
    OpponentTwoMinutes,
}

/// Penalties for completed illegal moves in one kind of game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IllegalPenalty {
    /// Time given to the opponent for each illegal move that does not lose.
    pub extra_ms: i64,
    /// The completed illegal move that loses the game (`None`: never).
    pub loses_at: Option<u32>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RuleProfile {
    pub name: &'static str,
    pub illegal_standard: IllegalPenalty,
    pub illegal_rapid_blitz: IllegalPenalty,
    /// The game is drawn at once on a fivefold repetition (9.6.1, 2014+).
    pub automatic_fivefold: bool,
    /// The game is drawn at once after 75 moves each without pawn move or capture (9.6.2).
    pub automatic_seventyfive: bool,
    pub wrong_claim: WrongClaim,
    /// Upper bound (exclusive) of blitz, in ms of base time + 60 increments.
    pub blitz_below_ms: i64,
    /// Upper bound (inclusive) of rapid.
    pub rapid_up_to_ms: i64,
}

const MIN: i64 = 60_000;

pub const FIDE_1997: RuleProfile = RuleProfile {
    name: "fide-1997",
    illegal_standard: IllegalPenalty {
        extra_ms: 0,
        loses_at: None,
    },
    illegal_rapid_blitz: IllegalPenalty {
        extra_ms: 0,
        loses_at: None,
    },
    automatic_fivefold: false,
    automatic_seventyfive: false,
    wrong_claim: WrongClaim::HalfUpToThree,
    blitz_below_ms: 15 * MIN,
    rapid_up_to_ms: 60 * MIN,
};

pub const FIDE_2005: RuleProfile = RuleProfile {
    name: "fide-2005",
    illegal_standard: IllegalPenalty {
        extra_ms: 2 * MIN,
        loses_at: Some(3),
    },
    illegal_rapid_blitz: IllegalPenalty {
        extra_ms: 2 * MIN,
        loses_at: Some(3),
    },
    automatic_fivefold: false,
    automatic_seventyfive: false,
    wrong_claim: WrongClaim::Graded2005,
    blitz_below_ms: 15 * MIN,
    rapid_up_to_ms: 60 * MIN,
};

pub const FIDE_2023: RuleProfile = RuleProfile {
    name: "fide-2023",
    illegal_standard: IllegalPenalty {
        extra_ms: 2 * MIN,
        loses_at: Some(2),
    },
    illegal_rapid_blitz: IllegalPenalty {
        extra_ms: MIN,
        loses_at: Some(2),
    },
    automatic_fivefold: true,
    automatic_seventyfive: true,
    wrong_claim: WrongClaim::OpponentTwoMinutes,
    blitz_below_ms: 10 * MIN + 1,
    rapid_up_to_ms: 60 * MIN - 1,
};

pub const PROFILES: [RuleProfile; 3] = [FIDE_1997, FIDE_2005, FIDE_2023];

impl Default for RuleProfile {
    fn default() -> RuleProfile {
        FIDE_2005
    }
}

impl FromStr for RuleProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<RuleProfile, String> {
        PROFILES
            .iter()
            .find(|p| p.name == s)
            .copied()
            .ok_or_else(|| {
                format!("unknown rules '{s}' (accepted: fide-1997, fide-2005, fide-2023)")
            })
    }
}

impl fmt::Display for RuleProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl RuleProfile {
    pub fn pace(&self, tc: Option<&TimeControl>) -> Pace {
        match tc {
            None => Pace::Standard,
            Some(tc) => {
                let n = tc.nominal_ms();
                if n < self.blitz_below_ms {
                    Pace::Blitz
                } else if n <= self.rapid_up_to_ms {
                    Pace::Rapid
                } else {
                    Pace::Standard
                }
            }
        }
    }

    pub fn illegal_penalty(&self, tc: Option<&TimeControl>) -> IllegalPenalty {
        match self.pace(tc) {
            Pace::Standard => self.illegal_standard,
            Pace::Rapid | Pace::Blitz => self.illegal_rapid_blitz,
        }
    }

    /// The clock changes after a wrong claim: (claimant's new time, time added to opponent).
    pub fn wrong_claim_times(&self, claimant_ms: i64) -> (i64, i64) {
        const THREE: i64 = 3 * MIN;
        match self.wrong_claim {
            WrongClaim::HalfUpToThree => (claimant_ms - (claimant_ms / 2).min(THREE), THREE),
            WrongClaim::Graded2005 => {
                let new = if claimant_ms > 2 * MIN {
                    claimant_ms - (claimant_ms / 2).min(THREE)
                } else if claimant_ms >= MIN {
                    MIN
                } else {
                    claimant_ms
                };
                (new, THREE)
            }
            WrongClaim::OpponentTwoMinutes => (claimant_ms, 2 * MIN),
        }
    }
}

/// Tournament: an arbiter's rules. Casual: only help.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Tournament,
    Casual,
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "tournament" => Ok(Mode::Tournament),
            "casual" => Ok(Mode::Casual),
            _ => Err(format!("unknown mode '{s}' (accepted: tournament, casual)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_claim_2005_is_graded() {
        let p = FIDE_2005;
        assert_eq!(p.wrong_claim_times(10 * MIN), (7 * MIN, 3 * MIN));
        assert_eq!(p.wrong_claim_times(4 * MIN), (2 * MIN, 3 * MIN));
        assert_eq!(p.wrong_claim_times(90_000), (MIN, 3 * MIN));
        assert_eq!(p.wrong_claim_times(30_000), (30_000, 3 * MIN));
        assert_eq!(FIDE_1997.wrong_claim_times(90_000), (45_000, 3 * MIN));
        assert_eq!(FIDE_2023.wrong_claim_times(90_000), (90_000, 2 * MIN));
    }

    #[test]
    fn pace_by_profile() {
        let tc: TimeControl = "600+0".parse().unwrap();
        assert_eq!(FIDE_2005.pace(Some(&tc)), Pace::Blitz);
        assert_eq!(FIDE_2023.pace(Some(&tc)), Pace::Blitz);
        let tc: TimeControl = "900+0".parse().unwrap();
        assert_eq!(FIDE_2005.pace(Some(&tc)), Pace::Rapid);
        let tc: TimeControl = "5400+30".parse().unwrap();
        assert_eq!(FIDE_2023.pace(Some(&tc)), Pace::Standard);
        assert_eq!(
            FIDE_2023
                .illegal_penalty(Some(&"300+3".parse().unwrap()))
                .extra_ms,
            MIN
        );
        assert_eq!(FIDE_2023.illegal_penalty(None).loses_at, Some(2));
        assert_eq!(FIDE_1997.illegal_penalty(None).loses_at, None);
    }
}
