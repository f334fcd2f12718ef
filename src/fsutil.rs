//! Replacing a file at once: what is written goes to a temporary file of this process's own
//! beside it, is synced, then renamed over the old name, and the directory is synced. A reader
//! never sees half a file, and a power cut leaves the old file or the new one.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name beside `path` that this process writes to: `.NAME.PID.tmp` (hidden, and
/// known as half written by its `.tmp` ending).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Syncs a directory, so that a rename in it survives a power cut. A directory that cannot be
/// synced (some filesystems refuse) is left as it is: the file is in place all the same.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Replaces `path` by what `make` puts at the temporary path it is given; the temporary file
/// is removed when that fails (a full disk wants its space back).
fn replace_by(path: &Path, make: impl FnOnce(&Path) -> std::io::Result<()>) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let _ = std::fs::remove_file(&tmp);
    let replaced = make(&tmp).and_then(|()| std::fs::rename(&tmp, path));
    if replaced.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => sync_dir(Path::new(".")),
    }
    replaced
}

/// Replaces the file at `path` by `data` at once (see the module's description).
pub fn replace(path: &Path, data: &[u8]) -> std::io::Result<()> {
    replace_by(path, |tmp| {
        let mut f = File::create(tmp)?;
        f.write_all(data)?;
        f.sync_all()
    })
}

/// Makes `path` a symbolic link to `target` at once, replacing what link was there.
pub fn replace_symlink(target: &Path, path: &Path) -> std::io::Result<()> {
    replace_by(path, |tmp| std::os::unix::fs::symlink(target, tmp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsutil-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_a_file_and_leaves_no_temporary_file() {
        let d = dir("file");
        let f = d.join("a.pgn");
        replace(&f, b"one").unwrap();
        replace(&f, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_replace_keeps_the_old_file() {
        let d = dir("fail");
        let f = d.join("a.pgn");
        replace(&f, b"old").unwrap();
        // A directory in the way of the rename: the write fails, the old name is untouched.
        let blocked = d.join("sub");
        std::fs::create_dir_all(blocked.join("x")).unwrap();
        assert!(replace(&blocked, b"new").is_err());
        assert!(!temp_path(&blocked).exists());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn replaces_a_symlink() {
        let d = dir("link");
        let l = d.join("board");
        replace_symlink(Path::new("/dev/null"), &l).unwrap();
        replace_symlink(Path::new("/dev/zero"), &l).unwrap();
        assert_eq!(std::fs::read_link(&l).unwrap(), Path::new("/dev/zero"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
