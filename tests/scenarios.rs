//! Scenario tests: each `tests/scenarios/NAME.script` is replayed by the real binary and its
//! events are compared with `NAME.expect`, written by hand from the specs.
//!
//! Matching: the actual events are filtered to the `type`s that appear in the expect file; the
//! filtered list must be as long as the expect list, and each expected object must be a subset
//! of the actual event at the same position. A script line `#! absent: TYPE...` asserts that
//! no event of those types comes at all.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| subset(v, av))),
        _ => expected == actual,
    }
}

fn run_one(script: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(script).unwrap();
    let args: Vec<String> = text
        .lines()
        .find_map(|l| l.strip_prefix("#! args:"))
        .map(|a| a.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let out = Command::new(env!("CARGO_BIN_EXE_chessboardd"))
        .arg("replay")
        .args(&args)
        .arg(script)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let actual: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("not JSON: {l}: {e}")))
        .collect::<Result<_, _>>()?;
    let expect_path = script.with_extension("expect");
    let expect_text = std::fs::read_to_string(&expect_path)
        .map_err(|e| format!("{}: {e}", expect_path.display()))?;
    let expected: Vec<Value> = expect_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| serde_json::from_str(l).map_err(|e| format!("bad expect line {l}: {e}")))
        .collect::<Result<_, _>>()?;
    // `#! absent: TYPE ...`: no event of these types at all.
    for absent in text
        .lines()
        .filter_map(|l| l.strip_prefix("#! absent:"))
        .flat_map(str::split_whitespace)
    {
        if let Some(e) = actual.iter().find(|a| a["type"] == absent) {
            return Err(format!("no `{absent}` event expected, got {e}"));
        }
    }
    let types: Vec<&str> = expected.iter().filter_map(|e| e["type"].as_str()).collect();
    let filtered: Vec<&Value> = actual
        .iter()
        .filter(|a| a["type"].as_str().is_some_and(|t| types.contains(&t)))
        .collect();
    let show = |v: &[&Value]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\n  ")
    };
    if filtered.len() != expected.len()
        || !expected.iter().zip(&filtered).all(|(e, a)| subset(e, a))
    {
        let exp: Vec<&Value> = expected.iter().collect();
        return Err(format!(
            "expected:\n  {}\nactual:\n  {}",
            show(&exp),
            show(&filtered)
        ));
    }
    Ok(())
}

#[test]
fn scenarios() {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "script"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 40, "only {} scenarios", scripts.len());
    let failures: Vec<String> = scripts
        .iter()
        .filter_map(|s| {
            run_one(s)
                .err()
                .map(|e| format!("{}: {e}", s.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n\n")
    );
}
