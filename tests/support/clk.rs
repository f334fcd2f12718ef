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
