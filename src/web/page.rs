//! The spectators' page.

/// The page, self-contained (no external resources).
pub const PAGE: &str = include_str!("index.html");

/// The page for the state `state` (the JSON of `state_json`).
pub fn render(_state: &str) -> String {
    PAGE.to_string()
}
