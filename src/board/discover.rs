//! Finding a board nobody configured. The service of a fresh install starts before anyone has
//! chosen a board: rather than exit (and be started again and again), the daemon looks for one
//! it can recognise without a word from the user, and waits until one is plugged in.
//!
//! What it recognises, without writing a byte to any port:
//! - the names the project's udev rules give: `/dev/dgt-board` (a DGT board), `/dev/chessboard`
//!   (a home-built board its owner named by serial number);
//! - a DGT board on USB by its ids (04d8:000a), as `/dev/ttyACM*` with those ids in sysfs.
//!
//! A ChessLink board or a home-built board on a bare USB serial chip cannot be told from an
//! Arduino or a 3D printer without writing to it: those are named in the config.

use std::path::{Path, PathBuf};

use super::BoardSpec;

/// USB vendor and product of DGT's electronic boards (a Microchip CDC-ACM chip).
pub const DGT_USB: (&str, &str) = ("04d8", "000a");

/// A board found, and how it was recognised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub spec: BoardSpec,
    pub how: String,
}

/// Where to look: the device directory and sysfs (`/dev`, `/sys` on a running system; other
/// roots in tests).
#[derive(Clone, Debug)]
pub struct Roots {
    pub dev: PathBuf,
    pub sys: PathBuf,
}

impl Default for Roots {
    fn default() -> Roots {
        Roots {
            dev: PathBuf::from("/dev"),
            sys: PathBuf::from("/sys"),
        }
    }
}

impl Roots {
    /// `DIR/dev` and `DIR/sys`.
    pub fn under(dir: &Path) -> Roots {
        Roots {
            dev: dir.join("dev"),
            sys: dir.join("sys"),
        }
    }
}

/// The board to use when none is configured, if one is there.
pub fn find(roots: &Roots) -> Option<Found> {
    let named = [
        ("dgt-board", "dgt", "a DGT board"),
        ("chessboard", "diy", "a home-built board"),
    ];
    for (name, spec, what) in named {
        let path = roots.dev.join(name);
        if path.exists() {
            return Some(Found {
                spec: BoardSpec::serial(spec, path.clone()),
                how: format!("{what}, by its udev name {}", path.display()),
            });
        }
    }
    let mut ttys: Vec<String> = std::fs::read_dir(roots.sys.join("class/tty"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ttyACM") || n.starts_with("ttyUSB"))
        .collect();
    ttys.sort();
    for tty in ttys {
        let device = roots.sys.join("class/tty").join(&tty).join("device");
        if usb_ids(&device).is_some_and(|(v, p)| (v.as_str(), p.as_str()) == DGT_USB) {
            let path = roots.dev.join(&tty);
            return Some(Found {
                spec: BoardSpec::serial("dgt", path.clone()),
                how: format!(
                    "a DGT board, by its USB ids {}:{} on {}",
                    DGT_USB.0,
                    DGT_USB.1,
                    path.display()
                ),
            });
        }
    }
    None
}

/// The USB vendor and product of the device a tty belongs to: sysfs keeps them in the USB
/// device's directory, a few levels above the tty's interface.
fn usb_ids(device: &Path) -> Option<(String, String)> {
    let mut dir = std::fs::canonicalize(device).ok()?;
    for _ in 0..6 {
        let read = |f: &str| {
            std::fs::read_to_string(dir.join(f))
                .ok()
                .map(|s| s.trim().to_lowercase())
        };
        if let (Some(v), Some(p)) = (read("idVendor"), read("idProduct")) {
            return Some((v, p));
        }
        dir = dir.parent()?.to_path_buf();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "chessboardd-discover-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("dev")).unwrap();
        std::fs::create_dir_all(dir.join("sys/class/tty")).unwrap();
        dir
    }

    /// A tty in a sysfs-like tree: class/tty/NAME/device -> devices/usb/1-1/1-1:1.0, the ids in
    /// devices/usb/1-1.
    fn usb_tty(root: &Path, name: &str, ids: (&str, &str)) {
        let usb = root.join(format!("sys/devices/usb-{name}/1-1"));
        let interface = usb.join("1-1:1.0");
        std::fs::create_dir_all(&interface).unwrap();
        std::fs::write(usb.join("idVendor"), format!("{}\n", ids.0)).unwrap();
        std::fs::write(usb.join("idProduct"), format!("{}\n", ids.1)).unwrap();
        let class = root.join("sys/class/tty").join(name);
        std::fs::create_dir_all(&class).unwrap();
        std::os::unix::fs::symlink(&interface, class.join("device")).unwrap();
    }

    #[test]
    fn nothing_is_found_where_there_is_nothing_to_find() {
        let dir = scratch("none");
        // An Arduino (CH340) and a Pico: not boards, whatever they are.
        usb_tty(&dir, "ttyUSB0", ("1a86", "7523"));
        usb_tty(&dir, "ttyACM0", ("2e8a", "000a"));
        assert_eq!(find(&Roots::under(&dir)), None);
    }

    #[test]
    fn a_dgt_board_is_found_by_its_usb_ids() {
        let dir = scratch("dgt");
        usb_tty(&dir, "ttyUSB0", ("1a86", "7523"));
        usb_tty(&dir, "ttyACM1", ("04D8", "000A"));
        let found = find(&Roots::under(&dir)).unwrap();
        assert_eq!(
            found.spec,
            BoardSpec::serial("dgt", dir.join("dev/ttyACM1"))
        );
        assert!(found.how.contains("USB ids"), "{}", found.how);
    }

    #[test]
    fn udev_names_come_first() {
        let dir = scratch("udev");
        usb_tty(&dir, "ttyACM0", DGT_USB);
        std::fs::write(dir.join("dev/chessboard"), "").unwrap();
        let found = find(&Roots::under(&dir)).unwrap();
        assert_eq!(
            found.spec,
            BoardSpec::serial("diy", dir.join("dev/chessboard"))
        );
        std::fs::write(dir.join("dev/dgt-board"), "").unwrap();
        let found = find(&Roots::under(&dir)).unwrap();
        assert_eq!(
            found.spec,
            BoardSpec::serial("dgt", dir.join("dev/dgt-board"))
        );
    }
}
