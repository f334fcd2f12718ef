//! Shared by the test programs that read the PGN the daemon writes.

/// The PGN's movetext without its `{[%clk ...]}` comments (and the black move numbers they
/// bring), and how many there were.
pub fn without_clk(pgn: &str) -> (String, usize) {
    let mut out = String::new();
    let mut rest = pgn;
    let mut n = 0;
    while let Some(i) = rest.find("{[%clk ") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("]}").expect("a closed [%clk]") + i + 2;
        rest = &rest[end..];
        n += 1;
    }
    out.push_str(rest);
    // A black move after a comment is numbered ("1..."): without the comment it is not.
    let tokens: Vec<&str> = out
        .split_whitespace()
        .filter(|t| !(t.ends_with("...") && t.trim_end_matches('.').parse::<u32>().is_ok()))
        .collect();
    (tokens.join(" "), n)
}

/// The `[%clk]` times of a PGN, in seconds, in the order of the moves.
pub fn clk_seconds(pgn: &str) -> Vec<i64> {
    pgn.split("[%clk ")
        .skip(1)
        .map(|rest| {
            let hms = &rest[..rest.find(']').expect("a closed [%clk]")];
            hms.split(':')
                .map(|p| p.parse::<i64>().expect("a number"))
                .fold(0, |acc, p| acc * 60 + p)
        })
        .collect()
}
