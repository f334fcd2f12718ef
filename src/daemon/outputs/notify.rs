//! systemd's status line as an output: what the daemon is doing, after each event that says.

use super::Output;
use crate::engine::{Event, EventKind};
use crate::notify::Notifier;

/// The status shown by `systemctl status`.
pub struct Status(pub Notifier);

impl Output for Status {
    fn event(&mut self, _board: usize, event: &Event) {
        if let Some(status) = status_of(&event.kind) {
            self.0.status(&status);
        }
    }
}

/// A line for systemd's status: what the daemon is doing.
fn status_of(kind: &EventKind) -> Option<String> {
    Some(match kind {
        EventKind::Link { state } => format!("board {state}"),
        EventKind::Flicker { square } => format!("square {square} flickers"),
        EventKind::GameStart { .. } => "new game".into(),
        EventKind::Resumed { plies, .. } => format!("game taken up again after {plies} plies"),
        EventKind::Move {
            ply,
            san,
            corrected: true,
            ..
        } => format!("ply {ply}: {san} (corrected)"),
        EventKind::Move { ply, san, .. } => format!("ply {ply}: {san}"),
        EventKind::Correction { ply, withdrawn, .. } if withdrawn.is_empty() => {
            format!("ply {ply}: a ruling withdrawn")
        }
        EventKind::Correction { ply, withdrawn, .. } => {
            format!("ply {ply}: corrected ({} withdrawn)", withdrawn.join(" "))
        }
        EventKind::GameOver { result, reason } => format!("game over: {result} {reason}"),
        // (Which move was sealed is in the journal only.)
        EventKind::Adjourned { move_number, .. } => {
            format!("adjourned: move {move_number} sealed")
        }
        _ => return None,
    })
}
