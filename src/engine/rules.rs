//! Rule profiles: the differences between the editions of the Laws as a table of values.
//!
//! One profile is one row; the engine reads values from it and never asks which edition it is.

use std::fmt;
use std::str::FromStr;

use super::clock::{Pace, TimeControl};
use crate::named;
use crate::words::Names;

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
    /// The game lost by illegal moves is drawn when the opponent cannot mate by any series of
    /// legal moves (2023 Art. 7.5.5; the 1997 and 2005 texts make no such exception).
    pub draw_if_cannot_mate: bool,
    /// Blitz (Appendix C3 of 1997 and 2005): the arbiter adds nothing; the opponent may claim
    /// the win before he makes his own move.
    pub claim_win: bool,
}

/// An illegal move is corrected (the position restored, 7.4a), nothing more.
const CORRECTED: IllegalPenalty = IllegalPenalty {
    extra_ms: 0,
    loses_at: None,
    draw_if_cannot_mate: false,
    claim_win: false,
};

/// Two minutes to the opponent for the first and the second, the third loses (1997 Art. 10.3,
/// 2005 Art. 7.4b).
const TWO_MINUTES_THIRD_LOSES: IllegalPenalty = IllegalPenalty {
    extra_ms: 2 * MIN,
    loses_at: Some(3),
    draw_if_cannot_mate: false,
    claim_win: false,
};

/// Blitz, Appendix C3 (1997 and 2005): the opponent may claim the win.
const CLAIM_THE_WIN: IllegalPenalty = IllegalPenalty {
    extra_ms: 0,
    loses_at: None,
    draw_if_cannot_mate: false,
    claim_win: true,
};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RuleProfile {
    pub name: &'static str,
    /// Illegal moves in a standard game, outside a quickplay finish.
    pub illegal_standard: IllegalPenalty,
    /// Illegal moves in the quickplay finish of a standard game (Art. 10: the last period, in
    /// which all the remaining moves are made in limited time).
    pub illegal_quickplay: IllegalPenalty,
    pub illegal_rapid: IllegalPenalty,
    pub illegal_blitz: IllegalPenalty,
    /// A blitz flag wins only with "mating potential" (1997 Appendix C4): a king alone, a king
    /// and a knight or a bishop, two knights against a bare king, do not win.
    pub blitz_mating_potential: bool,
    /// The game is drawn at once on a fivefold repetition (9.6.1, 2014+).
    pub automatic_fivefold: bool,
    /// The game is drawn at once after 75 moves each without pawn move or capture (9.6.2).
    pub automatic_seventyfive: bool,
    pub wrong_claim: WrongClaim,
    /// Upper bound (exclusive) of blitz, in ms of base time + 60 increments.
    pub blitz_below_ms: i64,
    /// Upper bound (inclusive) of rapid.
    pub rapid_up_to_ms: i64,
    /// Games are adjourned, a move sealed (Appendix A of 1997 and 2005; the 2023 Laws no
    /// longer adjourn).
    pub adjournment: bool,
}

const MIN: i64 = 60_000;

pub const FIDE_1997: RuleProfile = RuleProfile {
    name: "fide-1997",
    // 7.4: the position is restored, no more; 10.3 in the quickplay finish (and so in a rapid
    // game, all of it played in a fixed time); C3 in blitz.
    illegal_standard: CORRECTED,
    illegal_quickplay: TWO_MINUTES_THIRD_LOSES,
    illegal_rapid: TWO_MINUTES_THIRD_LOSES,
    illegal_blitz: CLAIM_THE_WIN,
    blitz_mating_potential: true,
    automatic_fivefold: false,
    automatic_seventyfive: false,
    wrong_claim: WrongClaim::HalfUpToThree,
    blitz_below_ms: 15 * MIN,
    rapid_up_to_ms: 60 * MIN,
    adjournment: true,
};

pub const FIDE_2005: RuleProfile = RuleProfile {
    name: "fide-2005",
    // 7.4b everywhere but blitz (B6 leaves rapid to 7.4 once the opponent claims); C3 in blitz.
    illegal_standard: TWO_MINUTES_THIRD_LOSES,
    illegal_quickplay: TWO_MINUTES_THIRD_LOSES,
    illegal_rapid: TWO_MINUTES_THIRD_LOSES,
    illegal_blitz: CLAIM_THE_WIN,
    blitz_mating_potential: false,
    automatic_fivefold: false,
    automatic_seventyfive: false,
    wrong_claim: WrongClaim::Graded2005,
    blitz_below_ms: 15 * MIN,
    rapid_up_to_ms: 60 * MIN,
    adjournment: true,
};

const FIDE_2023_STANDARD: IllegalPenalty = IllegalPenalty {
    extra_ms: 2 * MIN,
    loses_at: Some(2),
    draw_if_cannot_mate: true,
    claim_win: false,
};

const FIDE_2023_RAPID_BLITZ: IllegalPenalty = IllegalPenalty {
    extra_ms: MIN,
    loses_at: Some(2),
    draw_if_cannot_mate: true,
    claim_win: false,
};

pub const FIDE_2023: RuleProfile = RuleProfile {
    name: "fide-2023",
    illegal_standard: FIDE_2023_STANDARD,
    illegal_quickplay: FIDE_2023_STANDARD,
    illegal_rapid: FIDE_2023_RAPID_BLITZ,
    illegal_blitz: FIDE_2023_RAPID_BLITZ,
    blitz_mating_potential: false,
    automatic_fivefold: true,
    automatic_seventyfive: true,
    wrong_claim: WrongClaim::OpponentTwoMinutes,
    blitz_below_ms: 10 * MIN + 1,
    rapid_up_to_ms: 60 * MIN - 1,
    adjournment: false,
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
                let accepted: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
                format!("unknown rules '{s}' (accepted: {})", accepted.join(", "))
            })
    }
}

impl fmt::Display for RuleProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl RuleProfile {
    /// The kind of game the time control makes by this edition's limits (Appendix B1, C1);
    /// standard without a clock.
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

    /// The penalty for a completed illegal move in a game of `pace`; `quickplay` when the
    /// offender is in the quickplay finish (the last period, all remaining moves in it).
    pub fn illegal_penalty(&self, pace: Pace, quickplay: bool) -> IllegalPenalty {
        match pace {
            Pace::Standard if quickplay => self.illegal_quickplay,
            Pace::Standard => self.illegal_standard,
            Pace::Rapid => self.illegal_rapid,
            Pace::Blitz => self.illegal_blitz,
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

impl Pace {
    pub const NAMES: Names<Pace> = Names {
        what: "kind of game",
        table: &[
            (Pace::Standard, "standard"),
            (Pace::Rapid, "rapid"),
            (Pace::Blitz, "blitz"),
        ],
    };
}

named!(Pace);

impl Mode {
    pub const NAMES: Names<Mode> = Names {
        what: "mode",
        table: &[(Mode::Tournament, "tournament"), (Mode::Casual, "casual")],
    };
}

named!(Mode);

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
        let blitz = FIDE_2023.pace(Some(&"300+3".parse().unwrap()));
        assert_eq!(FIDE_2023.illegal_penalty(blitz, true).extra_ms, MIN);
        assert_eq!(
            FIDE_2023.illegal_penalty(Pace::Standard, false).loses_at,
            Some(2)
        );
        assert_eq!(
            FIDE_1997.illegal_penalty(Pace::Standard, false).loses_at,
            None
        );
        // 1997 Art. 10.3: in the quickplay finish, two minutes, and the third loses.
        assert_eq!(
            FIDE_1997.illegal_penalty(Pace::Standard, true),
            TWO_MINUTES_THIRD_LOSES
        );
        assert!(FIDE_1997.illegal_penalty(Pace::Blitz, false).claim_win);
        assert!(FIDE_2005.illegal_penalty(Pace::Blitz, false).claim_win);
        assert!(!FIDE_2023.illegal_penalty(Pace::Blitz, false).claim_win);
        assert!(
            !FIDE_2005
                .illegal_penalty(Pace::Standard, false)
                .draw_if_cannot_mate
        );
        assert!(
            FIDE_2023
                .illegal_penalty(Pace::Standard, false)
                .draw_if_cannot_mate
        );
    }
}
