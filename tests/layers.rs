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

/// The engine's own modules (`src/engine/`), layer by layer, lowest first: the vocabulary, the
/// reading of the board (`decoder/`, a layer of its own beneath everything that rules), the
/// record and the touches, the arbiter's state, the arbiter's rulings and transitions (each
/// file one concern, over the state), and the table of several boards.
const ENGINE_LAYERS: &[(&str, &[&str])] = &[
    (
        "vocabulary",
        &["event", "input", "clock", "rules", "settings", "dead"],
    ),
    ("decoder", &["decoder"]),
    ("record and touches", &["game", "turn", "touch"]),
    ("arbiter state", &["arbiter"]),
    (
        "arbiter",
        &[
            "adjourn", "announce", "answers", "computer", "explore", "games", "holds", "reading",
            "recovery", "revise", "rulings", "takeback", "timers",
        ],
    ),
    ("table", &["table"]),
];

/// The decoder's own modules (`src/engine/decoder/`), lowest first.
const DECODER_LAYERS: &[(&str, &[&str])] = &[
    ("readings", &["debounce", "physical", "log"]),
    ("moves", &["recognise"]),
    ("stories", &["stories"]),
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

/// The modules of `dir` (a folder of `src/`) that a source text names through `super::` (or
/// `crate::<prefix>::`), grouped or plain; `use super::*` (a test module) names none.
fn inner_imports(text: &str, prefix: &str) -> BTreeSet<String> {
    let as_crate = text.replace(&format!("crate::{prefix}::"), "super::");
    imports(&as_crate.replace("super::", "crate::"))
}

/// Who imports whom among the modules of a folder of `src/` (`engine`, `engine/decoder`), with
/// one file as the example of each edge. A module is a file or a folder of the folder.
fn inner_graph(dir: &str, prefix: &str) -> (BTreeSet<String>, BTreeMap<(String, String), PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let mut modules = BTreeSet::new();
    let mut edges = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(&root, &file).filter(|m| m != "mod") else {
            continue;
        };
        modules.insert(from.clone());
        let text = std::fs::read_to_string(&file).expect("a source file is readable");
        // Inside a folder module, `super::` is the folder itself: its files name each other.
        let nested = file.parent() != Some(root.as_path());
        let text = if nested {
            text.replace("super::", "super_of_folder::")
        } else {
            text
        };
        for to in inner_imports(&text, prefix) {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| file.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    (modules, edges)
}

/// The layer rules (a layer for every module, no import upwards, no cycle within a layer) for
/// the modules of one folder.
fn check_inner(dir: &str, prefix: &str, layers: &[(&str, &[&str])]) {
    let layer = |m: &str| layers.iter().position(|(_, ms)| ms.contains(&m));
    let (modules, edges) = inner_graph(dir, prefix);
    let missing: Vec<&String> = modules.iter().filter(|m| layer(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "src/{dir}: modules without a layer in tests/layers.rs: {missing:?}"
    );
    let mut upward = Vec::new();
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for ((from, to), file) in &edges {
        let (Some(a), Some(b)) = (layer(from), layer(to)) else {
            continue;
        };
        if b > a {
            upward.push(format!(
                "{from} ({}) imports {to} ({}) in src/{dir}/{}",
                layers[a].0,
                layers[b].0,
                file.display()
            ));
        }
        if a == b {
            next.entry(from).or_default().push(to);
        }
    }
    assert!(
        upward.is_empty(),
        "src/{dir}: imports upwards:\n{}",
        upward.join("\n")
    );
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
    assert!(
        cycles.is_empty(),
        "src/{dir}: import cycles:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_engine_imports_downward_only_and_the_decoder_is_beneath_the_arbiter() {
    check_inner("engine", "engine", ENGINE_LAYERS);
    check_inner("engine/decoder", "engine::decoder", DECODER_LAYERS);
    // The decoder knows nothing of the arbiter: no decoder file names a module above it.
    let (_, edges) = inner_graph("engine", "engine");
    for ((from, to), file) in &edges {
        if from == "decoder" {
            assert!(
                ["event", "input"].contains(&to.as_str()),
                "the decoder imports {to} in src/engine/{}",
                file.display()
            );
        }
    }
}

#[test]
fn the_inner_reader_sees_super_and_crate_paths() {
    let found = inner_imports(
        "use super::arbiter::{Engine, Phase};\nuse super::{event::Event, input};\n\
         use crate::engine::decoder::log::Seen;\nuse crate::words::Phrases;\nuse super::*;\n",
        "engine",
    );
    let want: BTreeSet<String> = ["arbiter", "event", "input", "decoder", "words"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
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
