//! The floors of the house (DESIGN.md, "The house") hold: every `crate::…` path in the
//! engine's code names a module on the same floor or below, and the folders' imports form
//! no circle. A new import that runs up the house fails here, naming the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The engine's top-level modules, floor by floor from the ground up. Keep in step with
/// DESIGN.md. `filter` is the shamba-filter crate, re-exported: it is below everything.
const FLOORS: &[&[&str]] = &[
    &["error", "number_map", "filter", "key", "io", "cursor", "verify_report", "range_del"],
    &["options"],
    &["cache", "wal", "memtable", "stats", "table", "version"],
    &["manager"],
    &["compaction"],
    &["db"],
    &["lib", "lab"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("read src dir").map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/db/read.rs` -> `db`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("file under src");
    let first = rel.components().next().expect("non-empty path").as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The modules named by `crate::<module>` in a line of code (comments skipped).
fn crate_paths(line: &str) -> Vec<String> {
    let code = line.trim_start();
    if code.starts_with("//") {
        return Vec::new();
    }
    let code = code.split(" //").next().unwrap_or(code);
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `shamba_crate::x` or `$crate::x` is not this crate's path.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            // `crate::{a, b}`: name each.
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or("");
                for part in group.split(',') {
                    let part: String = part.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !part.is_empty() {
                        found.push(part);
                    }
                }
            }
        } else if name.chars().next().is_some_and(char::is_lowercase) {
            found.push(name);
        }
    }
    found
}

/// What breaks the floors in `sources` (module, file name, text): imports up the house,
/// modules on no floor, and circles among the imports that stay on a floor.
fn violations(sources: &[(String, String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, file, text) in sources {
        let Some(from_floor) = floor_of(from) else {
            found.push(format!("{file}: module `{from}` is on no floor (add it to FLOORS and DESIGN.md)"));
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for to in crate_paths(line) {
                if &to == from {
                    continue;
                }
                match floor_of(&to) {
                    None => found.push(format!("{file}:{}: `crate::{to}` is on no floor", n + 1)),
                    Some(to_floor) if to_floor > from_floor => found.push(format!(
                        "{file}:{}: `{from}` (floor {from_floor}) imports `{to}` (floor {to_floor}), up the house",
                        n + 1
                    )),
                    Some(_) => {
                        graph.entry(from.clone()).or_default().insert(to);
                    }
                }
            }
        }
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        find_circles(node, &graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// Depth-first search from `node`, reporting each circle met as "a -> b -> a".
fn find_circles(
    node: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
    found: &mut Vec<String>,
) {
    if let Some(at) = path.iter().position(|p| p == node) {
        let mut circle = path[at..].to_vec();
        circle.push(node.to_string());
        found.push(format!("imports close a circle: {}", circle.join(" -> ")));
        return;
    }
    if !done.insert(node.to_string()) {
        return;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        find_circles(next, graph, path, done, found);
    }
    path.pop();
}

#[test]
fn every_import_runs_down_the_house_or_along_its_floor_and_closes_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources: Vec<_> = files
        .iter()
        .map(|f| (module_of(&src, f), f.display().to_string(), fs::read_to_string(f).expect("read source")))
        .collect();
    let found = violations(&sources);
    assert!(found.is_empty(), "the house's floors are broken:\n{}", found.join("\n"));
}

#[test]
fn the_filter_crate_knows_nothing_of_the_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shamba-filter/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(!files.is_empty(), "shamba-filter's sources are where DESIGN.md says");
    for file in files {
        let text = fs::read_to_string(&file).expect("read source");
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")) {
            assert!(!line.contains("shamba::"), "{}:{}: the filter crate names the engine", file.display(), n + 1);
        }
    }
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shamba-filter/Cargo.toml"))
        .expect("read shamba-filter's Cargo.toml");
    assert!(
        !manifest.lines().any(|l| l.trim_start().starts_with("shamba ") || l.trim_start().starts_with("shamba=")),
        "shamba-filter depends on the engine"
    );
}

#[test]
fn the_checker_sees_grouped_and_inline_paths_and_ignores_comments() {
    assert_eq!(crate_paths("use crate::db::Db;"), ["db"]);
    assert_eq!(crate_paths("use crate::{key, table::Spot};"), ["key", "table"]);
    assert_eq!(crate_paths("    let c = crate::options::Compression::None; // crate::db"), ["options"]);
    assert!(crate_paths("/// See [`crate::db::Db`].").is_empty());
    assert!(crate_paths("use shamba_crate::x;").is_empty());
}

#[test]
fn an_upward_import_a_circle_and_a_stray_module_are_caught() {
    let src = |m: &str, text: &str| (m.to_string(), format!("src/{m}.rs"), text.to_string());
    let upward = violations(&[src("table", "use crate::manager::FilterManager;")]);
    assert!(upward.len() == 1 && upward[0].contains("up the house"), "{upward:?}");
    let circle = violations(&[src("cache", "use crate::wal::LogWriter;"), src("wal", "use crate::cache::BlockCache;")]);
    assert!(circle.len() == 1 && circle[0].contains("circle"), "{circle:?}");
    let stray = violations(&[src("helpers", "use crate::key::SeqNo;")]);
    assert!(stray.len() == 1 && stray[0].contains("no floor"), "{stray:?}");
    assert!(
        violations(&[src("db", "use crate::table::TableReader;"), src("table", "use crate::cache::Pool;")]).is_empty()
    );
    let mut seen = BTreeSet::new();
    for m in FLOORS.iter().flat_map(|f| f.iter()) {
        assert!(seen.insert(*m), "module {m} is on two floors");
    }
}
