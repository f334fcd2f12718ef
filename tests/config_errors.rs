//! A corpus of broken configs (`tests/data/configs/`): `chessboardd check-config` must refuse each
//! with exit 78 and a message that names the file and line (`FILE:LINE`) and says exactly what is
//! wrong. Each file says in its head comments what is expected: `# line: N` and `# says: TEXT`.

use std::path::Path;
use std::process::Command;

fn check(path: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .args(["check-config"])
        .arg(path)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn every_broken_config_is_refused_with_its_line_and_what_is_wrong() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/configs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus has {} files", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let line: usize = text
            .lines()
            .find_map(|l| l.strip_prefix("# line: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{}: no '# line: N'", file.display()));
        let says: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# says: "))
            .collect();
        assert!(!says.is_empty(), "{}: no '# says:'", file.display());
        let (code, err) = check(file);
        let at = format!("{}:{line}:", file.display());
        let missing: Vec<&&str> = says.iter().filter(|s| !err.contains(**s)).collect();
        if code != Some(78) || !err.contains(&at) || !missing.is_empty() || err.lines().count() != 1
        {
            failures.push(format!(
                "{}: exit {code:?}, wanted {at} and {missing:?} on one line, got: {err}",
                file.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_missing_config_file_is_named() {
    let (code, err) = check(Path::new("/nonexistent/chessboardd.toml"));
    assert_eq!(code, Some(78));
    assert!(
        err.contains("/nonexistent/chessboardd.toml: cannot read the config: No such file"),
        "{err}"
    );
}

#[test]
fn the_reference_config_is_valid() {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/chessboardd.toml");
    let (code, err) = check(&reference);
    assert_eq!(code, Some(0), "{err}");
}
