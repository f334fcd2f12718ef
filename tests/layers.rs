//! The dependency rule of the library, checked on its source: a module never imports one of a
//! layer above it, and the modules of one layer import each other without a cycle. The layers
//! are listed in `LAYERS` (lowest first) and in the crate doc of `src/lib.rs`; a new top-level
//! module must be given a layer here, or this test fails and names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's top-level modules, layer by layer, lowest first.
const LAYERS: &[(&str, &[&str])] = &[
    ("foundations", &["bounded", "fsutil", "words"]),
    ("engine", &["engine"]),
    ("records", &["pgn", "brf", "record"]),
    (
        "devices and outputs",
        &[
            "board",
            "speech",
            "control",
            "sim",
            "replay",
            "web",
            "mqtt",
            "broadcast",
            "notify",
            "opponent",
        ],
    ),
    ("daemon", &["daemon"]),
    ("settings", &["settings"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a library file belongs to (`src/engine/clock.rs` -> `engine`), or
/// `None` for the crate root and the binary's files.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    match name {
        "lib" | "main" | "cli" | "commands" | "bin" => None,
        _ => Some(name.to_string()),
    }
}

/// The top-level modules a source text names through `crate::`, including inside
/// `use crate::{a, b::{c, d}}` groups over several lines. Comments are left out.
fn imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.insert(ident(rest));
            continue;
        };
        // The names at depth 0 of the group: after its `{` and after each `,`.
        let mut depth = 0;
        let mut item_start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    found.insert(ident(&group[item_start..i]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    found.insert(ident(&group[item_start..i]));
                    item_start = i + 1;
                }
                _ => {}
            }
        }
    }
    found.remove("");
    found.remove("self");
    found
}

/// Who imports whom, between top-level modules, with one file as the example of each edge.
fn graph() -> BTreeMap<(String, String), PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut edges = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a source file is readable");
        for to in imports(&text) {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| file.strip_prefix(&src).unwrap().to_path_buf());
            }
        }
    }
    edges
}

#[test]
fn every_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let missing: BTreeSet<String> = files
        .iter()
        .filter_map(|f| module_of(&src, f))
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a layer in tests/layers.rs: {missing:?}"
    );
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let mut upward = Vec::new();
    for ((from, to), file) in graph() {
        let (Some(a), Some(b)) = (layer_of(&from), layer_of(&to)) else {
            continue;
        };
        if b > a {
            upward.push(format!(
                "{from} ({}) imports {to} ({}) in src/{}",
                LAYERS[a].0,
                LAYERS[b].0,
                file.display()
            ));
        }
    }
    assert!(upward.is_empty(), "imports upwards:\n{}", upward.join("\n"));
}

#[test]
fn the_modules_of_a_layer_import_each_other_without_a_cycle() {
    let edges = graph();
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        if layer_of(from).is_some() && layer_of(from) == layer_of(to) {
            next.entry(from).or_default().push(to);
        }
    }
    // A cycle is an edge a -> b with a path back from b to a.
    let mut cycles = Vec::new();
    for (from, tos) in &next {
        for to in tos {
            let mut seen = BTreeSet::new();
            let mut stack = vec![*to];
            while let Some(m) = stack.pop() {
                if m == *from {
                    cycles.push(format!("{from} -> {to} -> ... -> {from}"));
                    break;
                }
                if seen.insert(m) {
                    stack.extend(next.get(m).into_iter().flatten());
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_reader_sees_grouped_and_plain_imports() {
    let found = imports(
        "use crate::engine::X;\nuse crate::{speech::Y, board};\n// crate::daemon in a comment\n\
         use crate::{\n    record::{A, B},\n    web::{self, C},\n};\n",
    );
    let want: BTreeSet<String> = ["engine", "speech", "board", "record", "web"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
}
