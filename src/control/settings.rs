//! The settings of the controls (`[control]` of the config): the socket, a keypad, buttons.

use std::path::{Path, PathBuf};

use super::buttons::ButtonConfig;
use super::keypad::KeypadConfig;
use super::keys::KeyMap;
use crate::engine::Millis;
use crate::words::Phrases;

/// The controls: the socket, a keypad, buttons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlConfig {
    pub socket: Option<PathBuf>,
    /// The keypad's event device, or `auto`; `None`: no keypad.
    pub keypad: Option<String>,
    /// The player the keypad belongs to; `None`: shared (it acts for the player to move).
    pub keypad_player: Option<shakmaty::Color>,
    pub keys: KeyMap,
    pub buttons: Vec<ButtonConfig>,
    pub long_press_ms: Millis,
    pub debounce_ms: Millis,
}

impl Default for ControlConfig {
    fn default() -> ControlConfig {
        ControlConfig {
            socket: None,
            keypad: None,
            keypad_player: None,
            keys: KeyMap::default(),
            buttons: Vec::new(),
            long_press_ms: 800,
            debounce_ms: 30,
        }
    }
}

impl ControlConfig {
    /// What `help` says when there are keys or buttons: the commands, then what each does.
    pub fn help(&self, phrases: &Phrases) -> Option<String> {
        let mut parts = vec![phrases.words.help.clone()];
        if self.keypad.is_some() {
            parts.push(self.keys.help(phrases));
        }
        for b in &self.buttons {
            parts.push(crate::control::keys::binding_help(
                &b.line, &b.binding, phrases,
            ));
        }
        (parts.len() > 1).then(|| parts.join(". "))
    }

    /// The keypad's help a key at a time (`help key N`), the exploration's keys last: the
    /// pages [`super::keys::Presses`] walks. None without a keypad.
    pub fn help_pages(&self, phrases: &Phrases) -> Vec<String> {
        if self.keypad.is_none() {
            return Vec::new();
        }
        let mut pages = self.keys.key_help(phrases);
        pages.push(phrases.words.explore_keys.clone());
        pages
    }

    /// The keypad's settings, when there is one.
    pub fn keypad_config(&self) -> Option<KeypadConfig> {
        self.keypad.as_ref().map(|device| KeypadConfig {
            device: device.clone(),
            map: self.keys.clone(),
            long_ms: self.long_press_ms,
            player: self.keypad_player,
        })
    }
}

/// The directory systemd makes for the service while it runs (`RuntimeDirectory=`): not there
/// while the service is stopped, which is when its config is checked.
const SERVICE_RUNTIME_DIR: &str = "/run/chessboardd";

/// A control socket can be made at `path`: its directory exists (the daemon makes no
/// directories).
pub fn socket_dir(path: &Path) -> Result<(), String> {
    if path
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(|b| b.is_ascii_control())
    {
        return Err("a path has no control characters (a NUL, a newline)".into());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir == Path::new(SERVICE_RUNTIME_DIR) {
        return Ok(());
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("{} is not a directory", dir.display())),
        Err(e) => Err(format!(
            "the socket's directory {} cannot be used ({e}); make it, or choose another path \
             (the service's is /run/chessboardd/control.sock)",
            dir.display()
        )),
    }
}
