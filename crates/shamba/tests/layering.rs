//! The guard rails over every crate of the workspace, read from the sources:
//!
//! - The floors of the house (DESIGN.md, "The house") hold in every crate that has them:
//!   each path a module names (`crate::…`, `super::…`, `self::…`, and a name the crate root
//!   re-exports, followed to the module it comes from) is on the module's own floor or
//!   below, and the imports along a floor close no circle.
//! - What each crate may use of the engine: nothing (the filter crate), the root API (the
//!   Python package), or the root and `shamba::lab` (the tools); the tests of a crate of the
//!   root may turn the `lab` feature on among its dev-dependencies.
//! - Every crate under `crates/` is described in [`CRATES`]: a new one fails here until it is.
//! - Every `// SAFETY:` note names the test that exercises it, and that test exists; a crate
//!   with unsafe code denies an unsafe block without a note (clippy).
//!
//! Only `src/` is read: the tests of a crate may reach further in than its code does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// What a crate may use of the engine (`shamba::…` paths, and its Cargo.toml).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Engine {
    /// The engine itself.
    Itself,
    /// No dependency on the engine at all.
    Nothing,
    /// The root API (`shamba::Db`, `shamba::filter`, `shamba::storage`, …), never
    /// `shamba::lab`, and no `lab` feature asked of the engine.
    Root,
    /// The root API and `shamba::lab`, the inside opened to the tools.
    Lab,
}

/// One crate of the workspace: its directory under `crates/`, its top-level modules floor by
/// floor from the ground up (the crate root is `lib` or `main`; empty: no floors inside it),
/// and what it may use of the engine.
struct CrateRules {
    dir: &'static str,
    floors: &'static [&'static [&'static str]],
    /// Whether `#[cfg(test)]` modules keep the floors too (else a module's tests may build
    /// their inputs with anything in the crate).
    tests_keep_floors: bool,
    engine: Engine,
}

/// Every crate of the workspace. Keep in step with DESIGN.md.
const CRATES: &[CrateRules] = &[
    CrateRules { dir: "shamba-filter", floors: FILTER_FLOORS, tests_keep_floors: false, engine: Engine::Nothing },
    CrateRules { dir: "shamba", floors: ENGINE_FLOORS, tests_keep_floors: true, engine: Engine::Itself },
    CrateRules { dir: "shamba-cli", floors: CLI_FLOORS, tests_keep_floors: true, engine: Engine::Root },
    // The server's session runs the commands and the commands read the session; the lab's
    // registry names every experiment and the experiments take the registry's arguments:
    // no floors inside either yet, and only the lab may open the engine's inside.
    CrateRules { dir: "shamba-server", floors: &[], tests_keep_floors: true, engine: Engine::Root },
    // openraft's storage: the log store and the state machine share one store and its
    // snapshot files; no floors inside yet, the engine's root only.
    CrateRules { dir: "shamba-raft", floors: &[], tests_keep_floors: true, engine: Engine::Root },
    CrateRules { dir: "shamba-lab", floors: &[], tests_keep_floors: true, engine: Engine::Lab },
    CrateRules { dir: "shamba-compare", floors: COMPARE_FLOORS, tests_keep_floors: true, engine: Engine::Root },
    // The Python classes name one another (a keyspace's database, a database's snapshots):
    // no floors inside, the engine's root only.
    CrateRules { dir: "shamba-py", floors: &[], tests_keep_floors: true, engine: Engine::Root },
];

/// The engine's top-level modules. `filter` is the shamba-filter crate, re-exported: it is
/// below everything.
const ENGINE_FLOORS: &[&[&str]] = &[
    &["error", "number_map", "filter", "key", "io", "cursor", "verify_report", "range_del", "expiry"],
    &["options"],
    &["cache", "wal", "memtable", "stats", "read_tier", "table", "version"],
    &["manager"],
    &["compaction"],
    &["db"],
    &["lib", "lab"],
];

/// The filter crate: the digest and the formats, the other hashes (the experiments'), the
/// filters one by one, then what builds them from a policy. Its tests may build whole
/// filters.
const FILTER_FLOORS: &[&[&str]] = &[
    &["error", "digest", "format"],
    &["hashes", "testing"],
    &["bloom_standard", "bloom_blocked", "ribbon", "monkey"],
    &["modular_bloom"],
    &["modular_ribbon", "elastic", "part"],
    &["policy"],
    &["build"],
    &["lib", "proptests"],
];

/// The `shamba` binary: the benchmark (its library part) and admin, the commands, the roots.
const CLI_FLOORS: &[&[&str]] = &[&["bench", "admin"], &["stress", "serve"], &["lib", "main"]];

/// shamba-compare: measuring and keys, the engines, the workloads, the plan, the entry point.
const COMPARE_FLOORS: &[&[&str]] = &[
    &["measure", "keys", "disk", "ycsb_requests"],
    &["engine", "report"],
    &["workload"],
    &["config", "pressure_table", "tx_table", "ycsb_table", "scale_plot", "scale", "scale_table"],
    &["main"],
];

// ---------------------------------------------------------------------------------------
// Reading Rust: tokens without comments and literals.

#[derive(Clone, PartialEq, Debug)]
enum Tok {
    /// An identifier or keyword (`$crate` kept whole, `r#x` as `x`).
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

/// The tokens of `text`, each with its 1-based line; comments, strings, characters and
/// numbers are dropped (a path in a doc comment or a format string is not an import).
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1, &mut line);
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1; // a lifetime: its name follows as an identifier
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' || (ch == '$' && (at(i + 1).is_alphabetic() || at(i + 1) == '_')) {
            let start = i;
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            match (word.as_str(), at(i)) {
                ("r", '#') if at(i + 1).is_alphabetic() || at(i + 1) == '_' => {
                    // `r#ident`: a raw identifier.
                    let start = i + 1;
                    i = start;
                    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                        i += 1;
                    }
                    out.push((Tok::Ident(c[start..i].iter().collect()), line));
                }
                ("r" | "br" | "cr", '"' | '#') => {
                    let mut hashes = 0;
                    while at(i) == '#' {
                        hashes += 1;
                        i += 1;
                    }
                    i += 1;
                    while i < c.len() {
                        if c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                            i += 1 + hashes;
                            break;
                        }
                        line += usize::from(c[i] == '\n');
                        i += 1;
                    }
                }
                ("b" | "c", '"') => i = skip_string(&c, i + 1, &mut line),
                ("b", '\'') => {
                    i += 1;
                    while i < c.len() && c[i] != '\'' {
                        i += if c[i] == '\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                _ => out.push((Tok::Ident(word), line)),
            }
        } else {
            let tok = match ch {
                ':' if at(i + 1) == ':' => {
                    i += 1;
                    Tok::PathSep
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                other => Tok::Other(other),
            };
            out.push((tok, line));
            i += 1;
        }
    }
    out
}

/// The index after the string whose body starts at `i`.
fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < c.len() && c[i] != '"' {
        if c[i] == '\\' {
            i += 1;
        }
        *line += usize::from(c.get(i) == Some(&'\n'));
        i += 1;
    }
    i + 1
}

// ---------------------------------------------------------------------------------------
// Paths and the modules they name.

/// A path as written, where it was written: the module it is in (from the crate root) and
/// its line. An import names its leaf (or alias) in the module it is in.
#[derive(Debug, Clone)]
struct PathUse {
    module: Vec<String>,
    segments: Vec<String>,
    line: usize,
    /// For a `use`: the name it binds (`None` for a glob).
    binds: Option<String>,
    is_use: bool,
}

/// A source file's facts: the paths it writes and the inline modules it opens.
struct Facts {
    paths: Vec<PathUse>,
    inline_modules: Vec<Vec<String>>,
    /// Modules (inline or declared) under `#[cfg(test)]`.
    test_modules: Vec<Vec<String>>,
    /// `mod x;` declarations: child modules whose bodies are files (or `#[path]` files).
    declared: Vec<Vec<String>>,
}

/// The paths of a file whose module is `module`.
fn facts(module: &[String], text: &str) -> Facts {
    let toks = tokens(text);
    let mut facts =
        Facts { paths: Vec::new(), inline_modules: Vec::new(), test_modules: Vec::new(), declared: Vec::new() };
    // Open inline modules: (name, brace depth inside it).
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let here = |open: &[(String, usize)]| -> Vec<String> {
        module.iter().cloned().chain(open.iter().map(|(name, _)| name.clone())).collect()
    };
    let mut i = 0;
    while i < toks.len() {
        let tok = &toks[i].0;
        let next = toks.get(i + 1).map(|t| &t.0);
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                if open.last().is_some_and(|(_, d)| *d == depth) {
                    open.pop();
                }
                depth -= 1;
            }
            Tok::Ident(word) if word == "mod" => {
                if let Some(Tok::Ident(name)) = next {
                    let mut path = here(&open);
                    path.push(name.clone());
                    if under_cfg_test(&toks, i) {
                        facts.test_modules.push(path.clone());
                    }
                    match toks.get(i + 2).map(|t| &t.0) {
                        Some(Tok::Open) => {
                            facts.inline_modules.push(path);
                            open.push((name.clone(), depth + 1));
                        }
                        Some(Tok::Semi) => facts.declared.push(path),
                        _ => {}
                    }
                    i += 2;
                    continue;
                }
            }
            Tok::Ident(word) if word == "use" => {
                let mut items = Vec::new();
                i += 1;
                use_tree(&toks, &mut i, &[], &mut items);
                let module = here(&open);
                for (segments, binds, line) in items {
                    facts.paths.push(PathUse { module: module.clone(), segments, line, binds, is_use: true });
                }
                continue;
            }
            Tok::Ident(word) if next == Some(&Tok::PathSep) && (i == 0 || toks[i - 1].0 != Tok::PathSep) => {
                let line = toks[i].1;
                let mut segments = vec![word.clone()];
                let mut j = i + 1;
                while toks.get(j).map(|t| &t.0) == Some(&Tok::PathSep) {
                    match toks.get(j + 1).map(|t| &t.0) {
                        Some(Tok::Ident(s)) => segments.push(s.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                if !word.starts_with('$') {
                    facts.paths.push(PathUse { module: here(&open), segments, line, binds: None, is_use: false });
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    facts
}

/// Whether the item whose keyword is at `i` carries `#[cfg(test)]` (before its visibility,
/// among its other attributes).
fn under_cfg_test(toks: &[(Tok, usize)], i: usize) -> bool {
    let ident = |t: &Tok, w: &str| matches!(t, Tok::Ident(x) if x == w);
    let mut j = i;
    // Visibility: `pub`, `pub(crate)`, `pub(in path)`.
    while j > 0
        && (matches!(&toks[j - 1].0, Tok::Ident(x) if ["pub", "crate", "super", "self", "in"].contains(&x.as_str()))
            || matches!(toks[j - 1].0, Tok::Other('(' | ')') | Tok::PathSep))
    {
        j -= 1;
    }
    // Attributes, last to first: `#[...]`.
    while j > 0 && toks[j - 1].0 == Tok::Other(']') {
        let end = j - 1;
        let mut depth = 0;
        let mut k = end;
        loop {
            match toks[k].0 {
                Tok::Other(']') => depth += 1,
                Tok::Other('[') => depth -= 1,
                _ => {}
            }
            if depth == 0 || k == 0 {
                break;
            }
            k -= 1;
        }
        if k == 0 || toks[k - 1].0 != Tok::Other('#') {
            return false;
        }
        let inside: Vec<&Tok> = toks[k + 1..end].iter().map(|t| &t.0).collect();
        if inside.len() == 4
            && ident(inside[0], "cfg")
            && inside[1] == &Tok::Other('(')
            && ident(inside[2], "test")
            && inside[3] == &Tok::Other(')')
        {
            return true;
        }
        j = k - 1;
    }
    false
}

/// The imports of the use tree at `i` (after `use`), each with the name it binds and its
/// line; `i` ends after the tree.
fn use_tree(
    toks: &[(Tok, usize)],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    let mut path = prefix.to_vec();
    while let Some((tok, line)) = toks.get(*i) {
        match tok {
            Tok::PathSep => *i += 1,
            Tok::Star => {
                *i += 1;
                out.push((path, None, *line));
                return;
            }
            Tok::Open => {
                *i += 1;
                while let Some((tok, _)) = toks.get(*i) {
                    match tok {
                        Tok::Close => {
                            *i += 1;
                            break;
                        }
                        Tok::Comma => *i += 1,
                        _ => {
                            let before = *i;
                            use_tree(toks, i, &path, out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
                return;
            }
            Tok::Ident(name) => {
                *i += 1;
                if toks.get(*i).map(|t| &t.0) == Some(&Tok::PathSep) {
                    path.push(name.clone());
                    continue;
                }
                let mut binds = name.clone();
                if name != "self" {
                    path.push(name.clone());
                } else if let Some(last) = path.last() {
                    binds = last.clone();
                }
                if let (Some((Tok::Ident(kw), _)), Some((Tok::Ident(alias), _))) = (toks.get(*i), toks.get(*i + 1)) {
                    if kw == "as" {
                        binds = alias.clone();
                        *i += 2;
                    }
                }
                out.push((path, Some(binds), *line));
                return;
            }
            _ => return,
        }
    }
}

/// Where a path leads.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// An item of this crate, by its absolute path.
    Local(Vec<String>),
    /// An item of another crate: its name and the rest of the path.
    Extern(String, Vec<String>),
    /// A name in scope that this checker does not follow (a type's associated item, a
    /// local import, the prelude).
    Unknown,
}

/// One crate's sources, read: what each module writes and which modules exist.
struct CrateSources {
    /// (top-level module of the file, display name, facts)
    files: Vec<(String, String, Facts)>,
    modules: BTreeSet<Vec<String>>,
    /// Modules under `#[cfg(test)]`.
    test_modules: BTreeSet<Vec<String>>,
    /// Modules written inline in the crate root's file (they are part of the root).
    root_inline: BTreeSet<String>,
    /// For the root and its inline modules: the names their `use` items bind.
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Target>>,
    root: String,
}

impl CrateSources {
    /// `sources`: (path under src/, text). The root file is `lib.rs` or `main.rs`.
    fn read(sources: &[(String, String)]) -> Self {
        let root = if sources.iter().any(|(p, _)| p == "lib.rs") { "lib" } else { "main" }.to_string();
        let mut files = Vec::new();
        let mut modules = BTreeSet::from([Vec::new()]);
        let mut root_inline = BTreeSet::new();
        let mut test_modules = BTreeSet::new();
        for (path, text) in sources {
            let mut module: Vec<String> = path.trim_end_matches(".rs").split('/').map(str::to_string).collect();
            if module.last().is_some_and(|m| m == "mod") || module == [root.clone()] {
                module.pop();
            }
            let top = module.first().cloned().unwrap_or_else(|| root.clone());
            let facts = facts(&module, text);
            for m in facts.inline_modules.iter().chain(&facts.declared) {
                modules.insert(m.clone());
                if module.is_empty() && m.len() == 1 && facts.inline_modules.contains(m) {
                    root_inline.insert(m[0].clone());
                }
            }
            test_modules.extend(facts.test_modules.iter().cloned());
            modules.insert(module);
            files.push((top, path.clone(), facts));
        }
        let mut sources = CrateSources { files, modules, test_modules, root_inline, reexports: BTreeMap::new(), root };
        let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, Target>> = BTreeMap::new();
        for (_, _, facts) in &sources.files {
            for p in facts.paths.iter().filter(|p| p.is_use && p.module.len() <= 1) {
                if p.module.first().is_some_and(|m| !sources.root_inline.contains(m)) {
                    continue;
                }
                if let Some(name) = &p.binds {
                    reexports.entry(p.module.clone()).or_default().insert(name.clone(), sources.target(p));
                }
            }
        }
        sources.reexports = reexports;
        sources
    }

    /// Whether `module` is test code (it or a module around it is under `#[cfg(test)]`).
    fn in_test(&self, module: &[String]) -> bool {
        (1..=module.len()).any(|n| self.test_modules.contains(&module[..n]))
    }

    /// Where `p` leads, with `super::` and `self::` made absolute.
    fn target(&self, p: &PathUse) -> Target {
        let s = &p.segments;
        match s[0].as_str() {
            "crate" => Target::Local(s[1..].to_vec()),
            "self" => Target::Local(p.module.iter().chain(&s[1..]).cloned().collect()),
            "super" => {
                let ups = s.iter().take_while(|x| *x == "super").count();
                let Some(keep) = p.module.len().checked_sub(ups) else {
                    return Target::Unknown;
                };
                Target::Local(p.module[..keep].iter().chain(&s[ups..]).cloned().collect())
            }
            first => {
                let mut child = p.module.clone();
                child.push(first.to_string());
                if self.modules.contains(&child) {
                    Target::Local(p.module.iter().chain(s).cloned().collect())
                } else if first.chars().next().is_some_and(char::is_uppercase) {
                    Target::Unknown
                } else {
                    // Another crate (or a name imported into scope, which the checker does not
                    // follow: the import itself was checked).
                    Target::Extern(first.to_string(), s[1..].to_vec())
                }
            }
        }
    }

    /// The top-level module (or the root's name) that an absolute path's item lives in,
    /// following the names the root re-exports.
    fn home(&self, path: &[String]) -> String {
        self.home_within(path, 8)
    }

    fn home_within(&self, path: &[String], hops: usize) -> String {
        let Some(first) = path.first() else {
            return self.root.clone();
        };
        if self.root_inline.contains(first) {
            // A module written in the root's file: its re-exports lead elsewhere.
            return match (path.get(1), self.reexports.get(&path[..1])) {
                (Some(name), Some(map)) if hops > 0 => match map.get(name) {
                    Some(Target::Local(to)) => self.home_within(to, hops - 1),
                    Some(Target::Extern(..)) => first.clone(),
                    _ => self.root.clone(),
                },
                _ => self.root.clone(),
            };
        }
        if self.modules.contains(&path[..1]) {
            return first.clone();
        }
        match self.reexports.get(&Vec::new()).and_then(|m| m.get(first)) {
            Some(Target::Local(to)) if hops > 0 => self.home_within(to, hops - 1),
            // `pub use other_crate as name`: the name is the module (e.g. `filter`).
            Some(Target::Extern(..)) => first.clone(),
            _ => self.root.clone(),
        }
    }
}

/// What breaks `rules` in the crate read as `sources`: imports up the house, modules on no
/// floor, circles along a floor, and uses of the engine beyond what the crate may use.
fn crate_violations(rules: &CrateRules, sources: &[(String, String)]) -> Vec<String> {
    let crate_ = CrateSources::read(sources);
    let floor_of = |m: &str| rules.floors.iter().position(|f| f.contains(&m));
    let mut found = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, file, facts) in &crate_.files {
        let file = format!("crates/{}/src/{file}", rules.dir);
        let from_floor = floor_of(from);
        if !rules.floors.is_empty() && from_floor.is_none() {
            found.push(format!("{file}: module `{from}` is on no floor (add it to its crate's floors and DESIGN.md)"));
        }
        for p in &facts.paths {
            let at = format!("{file}:{}: `{}`", p.line, p.segments.join("::"));
            match crate_.target(p) {
                Target::Local(to)
                    if !rules.floors.is_empty() && (rules.tests_keep_floors || !crate_.in_test(&p.module)) =>
                {
                    let to = crate_.home(&to);
                    if &to == from {
                        continue;
                    }
                    let Some(from_floor) = from_floor else { continue };
                    match floor_of(&to) {
                        None => found.push(format!("{at} leads to `{to}`, on no floor")),
                        Some(to_floor) if to_floor > from_floor => found.push(format!(
                            "{at}: `{from}` (floor {from_floor}) imports `{to}` (floor {to_floor}), up the house"
                        )),
                        Some(_) => {
                            graph.entry(from.clone()).or_default().insert(to);
                        }
                    }
                }
                Target::Extern(name, rest) if name == "shamba" => match rules.engine {
                    Engine::Nothing => found.push(format!("{at}: `{}` uses the engine", rules.dir)),
                    Engine::Root if rest.first().is_some_and(|r| r == "lab") => {
                        found.push(format!("{at}: `{}` may use the engine's root API only, not `lab`", rules.dir))
                    }
                    Engine::Root if rest.is_empty() && p.is_use && p.binds.is_none() => {
                        found.push(format!("{at}: a glob of the engine's root: name what is used"))
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        find_circles(node, &graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// What a crate's Cargo.toml asks of the engine that its rules do not allow.
fn manifest_violations(rules: &CrateRules, manifest: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut table = String::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.to_string();
        }
        let names_engine = table.ends_with(".shamba]")
            || ["shamba ", "shamba=", "shamba."].iter().any(|p| line.starts_with(p) && table.contains("dependencies"));
        if !names_engine || rules.engine == Engine::Itself {
            continue;
        }
        match rules.engine {
            Engine::Nothing => found.push(format!("crates/{}/Cargo.toml depends on the engine: {line}", rules.dir)),
            // Its tests may reach further in than its code (only `src/` is read): a crash
            // test on the simulated disk needs `lab` among the dev-dependencies.
            Engine::Root if line.contains("\"lab\"") && !table.starts_with("[dev-dependencies") => {
                found.push(format!("crates/{}/Cargo.toml turns on the engine's `lab`: {line}", rules.dir))
            }
            _ => {}
        }
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

// ---------------------------------------------------------------------------------------
// SAFETY notes and the tests they name.

/// The `// SAFETY:` notes of a file, each whole (its comment lines joined) with its line.
fn safety_notes(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut notes = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let line = lines[n].trim_start();
        if let Some(start) = line.strip_prefix("// SAFETY:") {
            let mut note = start.trim().to_string();
            let mut m = n + 1;
            while let Some(more) = lines.get(m).and_then(|l| l.trim_start().strip_prefix("//")) {
                note.push(' ');
                note.push_str(more.trim());
                m += 1;
            }
            notes.push((n + 1, note));
            n = m;
        } else {
            n += 1;
        }
    }
    notes
}

/// The tests a note names: each name in backticks after "Exercised by" (`file.rs::name`,
/// `module::tests::name` or `name`); only the last segment is looked up.
fn named_tests(note: &str) -> Vec<String> {
    let Some(at) = note.to_ascii_lowercase().find("exercised by") else {
        return Vec::new();
    };
    note[at..]
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|name| name.rsplit("::").next())
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// The functions marked as tests in `text` (`#[test]`, `loom` models included: any
/// function whose attributes say test).
fn test_functions(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut attributed = false;
    for line in text.lines().map(str::trim_start) {
        if line.starts_with("#[test") || (line.starts_with("#[") && line.contains("::test")) {
            attributed = true;
        } else if let Some(rest) = line.strip_prefix("fn ").or_else(|| line.strip_prefix("async fn ")) {
            if attributed {
                names.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
            attributed = false;
        } else if !line.starts_with("#[") && !line.starts_with("//") && !line.is_empty() {
            attributed = false;
        }
    }
    names
}

/// What breaks the promise in `notes` (file, line, note) given the workspace's `tests`.
fn safety_violations(notes: &[(String, usize, String)], tests: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (file, line, note) in notes {
        let named = named_tests(note);
        if named.is_empty() {
            found.push(format!("{file}:{line}: the SAFETY note names no test (\"Exercised by `test_name`\")"));
        }
        for name in named.iter().filter(|name| !tests.contains(*name)) {
            found.push(format!("{file}:{line}: the SAFETY note names `{name}`, which is no test of the workspace"));
        }
    }
    found
}

// ---------------------------------------------------------------------------------------
// The workspace as it is.

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A crate's `src/` files: (path under src/, text).
fn crate_sources(dir: &str) -> Vec<(String, String)> {
    let src = workspace().join("crates").join(dir).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
            (rel, fs::read_to_string(f).expect("read source"))
        })
        .collect()
}

#[test]
fn every_crate_of_the_workspace_is_described() {
    let mut dirs: Vec<String> = fs::read_dir(workspace().join("crates"))
        .expect("read crates/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("Cargo.toml").exists())
        .map(|p| p.file_name().expect("a name").to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let described: BTreeSet<&str> = CRATES.iter().map(|c| c.dir).collect();
    let missing: Vec<_> = dirs.iter().filter(|d| !described.contains(d.as_str())).collect();
    assert!(missing.is_empty(), "crates with no rules in CRATES (tests/layering.rs): {missing:?}");
    let gone: Vec<_> = described.iter().filter(|d| !dirs.iter().any(|x| x == *d)).collect();
    assert!(gone.is_empty(), "CRATES describes crates that are not there: {gone:?}");
}

#[test]
fn every_crate_keeps_its_floors_and_its_distance_from_the_engine() {
    let mut found = Vec::new();
    for rules in CRATES {
        let sources = crate_sources(rules.dir);
        assert!(!sources.is_empty(), "crates/{}/src has no sources", rules.dir);
        found.extend(crate_violations(rules, &sources));
        let manifest = fs::read_to_string(workspace().join("crates").join(rules.dir).join("Cargo.toml"))
            .expect("read a crate's Cargo.toml");
        found.extend(manifest_violations(rules, &manifest));
        let mut seen = BTreeSet::new();
        for m in rules.floors.iter().flat_map(|f| f.iter()) {
            assert!(seen.insert(*m), "{}: module {m} is on two floors", rules.dir);
        }
    }
    assert!(found.is_empty(), "the house's floors are broken:\n{}", found.join("\n"));
}

/// Files whose SAFETY notes are not checked yet because the file is moving to another crate;
/// an entry for a file that is gone fails, so the list empties as the moves land.
const MOVING: &[&str] = &[];

#[test]
fn every_safety_note_names_a_test_that_exists() {
    let mut notes = Vec::new();
    let mut tests = BTreeSet::new();
    let mut files = Vec::new();
    for rules in CRATES {
        for part in ["src", "tests", "benches"] {
            rust_files(&workspace().join("crates").join(rules.dir).join(part), &mut files);
        }
    }
    for file in &files {
        let text = fs::read_to_string(file).expect("read source");
        tests.extend(test_functions(&text));
        let shown = file.strip_prefix(workspace()).unwrap_or(file).display().to_string();
        if shown.contains("/src/") && !MOVING.contains(&shown.as_str()) {
            notes.extend(safety_notes(&text).into_iter().map(|(line, note)| (shown.clone(), line, note)));
        }
    }
    for moving in MOVING {
        assert!(
            workspace().join(moving).exists(),
            "{moving} has moved: take it off MOVING (its notes are checked now)"
        );
    }
    assert!(notes.len() >= 15, "the SAFETY notes were not found ({} of them)", notes.len());
    let found = safety_violations(&notes, &tests);
    assert!(found.is_empty(), "SAFETY notes without their test:\n{}", found.join("\n"));
}

#[test]
fn every_crate_with_unsafe_code_denies_an_unsafe_block_without_its_note() {
    for rules in CRATES {
        let sources = crate_sources(rules.dir);
        let unsafe_at: Vec<&str> = sources
            .iter()
            .filter(|(_, text)| tokens(text).iter().any(|(t, _)| matches!(t, Tok::Ident(w) if w == "unsafe")))
            .map(|(path, _)| path.as_str())
            .collect();
        if unsafe_at.is_empty() {
            continue;
        }
        let root = sources.iter().find(|(p, _)| p == "lib.rs" || p == "main.rs").map(|(_, t)| t.as_str());
        let denies = root.is_some_and(|t| {
            t.lines().any(|l| {
                let l = l.trim_start();
                (l.starts_with("#![deny(") || l.starts_with("#![forbid("))
                    && l.contains("clippy::undocumented_unsafe_blocks")
            })
        });
        assert!(
            denies,
            "crates/{} has unsafe code ({unsafe_at:?}) but its root does not deny clippy::undocumented_unsafe_blocks",
            rules.dir
        );
    }
}

// ---------------------------------------------------------------------------------------
// The checker, checked on small sources.

fn src(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
}

const TOY: CrateRules = CrateRules {
    dir: "toy",
    floors: &[&["key", "filter"], &["options"], &["table"], &["db"], &["lib"]],
    tests_keep_floors: true,
    engine: Engine::Root,
};

#[test]
fn the_reader_sees_grouped_nested_aliased_and_inline_paths_and_skips_comments_and_strings() {
    let f = facts(
        &["db".to_string()],
        "use crate::{key, table::{self, Spot as S}};\n\
         // crate::options::x\n\
         /// [`crate::lib`]\n\
         let s = \"crate::options\"; let r = r#\"super::x\"#; let c = '\"';\n\
         mod tests { use super::super::options::X; fn f() { crate::db::g(); $crate::x(); } }\n\
         fn g<'a>(x: &'a str) -> u8 { b'\\'' }\n",
    );
    let seen: Vec<(String, usize, Vec<String>)> =
        f.paths.iter().map(|p| (p.segments.join("::"), p.line, p.module.clone())).collect();
    let db = vec!["db".to_string()];
    let tests = vec!["db".to_string(), "tests".to_string()];
    assert_eq!(
        seen,
        [
            ("crate::key".to_string(), 1, db.clone()),
            ("crate::table".to_string(), 1, db.clone()),
            ("crate::table::Spot".to_string(), 1, db.clone()),
            ("super::super::options::X".to_string(), 5, tests.clone()),
            ("crate::db::g".to_string(), 5, tests.clone()),
        ]
    );
    assert_eq!(f.paths[1].binds.as_deref(), Some("table"));
    assert_eq!(f.paths[2].binds.as_deref(), Some("S"));
    assert_eq!(f.inline_modules, [tests]);
}

#[test]
fn super_and_self_paths_resolve_to_the_module_they_name() {
    let toy = src(&[
        ("lib.rs", "mod db; mod key; mod table;"),
        ("db/mod.rs", "mod read;"),
        ("db/read.rs", "use super::super::table::Table; use self::inner::X; mod inner {}"),
        ("table/mod.rs", "mod reader;"),
        ("table/reader.rs", "use super::super::key::Key; use super::Table;"),
        ("key.rs", "use super::db::Db;"),
    ]);
    let found = crate_violations(&TOY, &toy);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("key.rs:1: `super::db::Db`") && found[0].contains("up the house"), "{found:?}");
}

#[test]
fn a_name_imported_through_the_root_resolves_to_its_module() {
    let toy = src(&[
        (
            "lib.rs",
            "mod db; mod options; mod table; pub use db::Db; pub use options::{Options, ReadOptions as Read};\n\
             pub use toy_filter as filter;\n\
             pub mod storage { pub use crate::key::Storage; pub use crate::db::Handle; }",
        ),
        ("table/mod.rs", "use crate::{Options, Read}; use crate::filter::Bloom; use crate::storage::Storage;"),
        ("options/mod.rs", "fn f(db: &crate::Db) {}"),
        ("key.rs", "use crate::storage::Handle; use crate::Undeclared;"),
    ]);
    let found = crate_violations(&TOY, &toy);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].contains("options/mod.rs:1: `crate::Db`") && found[0].contains("imports `db`"), "{found:?}");
    assert!(found[1].contains("key.rs:1: `crate::storage::Handle`") && found[1].contains("imports `db`"), "{found:?}");
    assert!(found[2].contains("`crate::Undeclared`") && found[2].contains("imports `lib`"), "{found:?}");
}

#[test]
fn an_upward_import_a_circle_a_stray_module_and_the_engine_beyond_its_rule_are_caught() {
    let upward = crate_violations(&TOY, &src(&[("table.rs", "use crate::db::Db;"), ("db.rs", "")]));
    assert!(upward.len() == 1 && upward[0].contains("up the house"), "{upward:?}");
    let circle =
        crate_violations(&TOY, &src(&[("key.rs", "use crate::filter::F;"), ("filter.rs", "use crate::key::K;")]));
    assert!(circle.len() == 1 && circle[0].contains("circle"), "{circle:?}");
    let stray = crate_violations(&TOY, &src(&[("helpers.rs", "use crate::key::SeqNo;")]));
    assert!(stray.len() == 1 && stray[0].contains("no floor"), "{stray:?}");
    let lab = crate_violations(
        &TOY,
        &src(&[("db.rs", "use shamba::{Db, lab::Fault};\nfn f() { shamba::lab::fuzz::run(); shamba::Db::open(); }")]),
    );
    assert!(lab.len() == 2 && lab.iter().all(|v| v.contains("not `lab`")), "{lab:?}");
    let filter = CrateRules { dir: "f", floors: &[], tests_keep_floors: true, engine: Engine::Nothing };
    assert_eq!(crate_violations(&filter, &src(&[("lib.rs", "use shamba::Db;")])).len(), 1);
    assert_eq!(manifest_violations(&filter, "[dependencies]\nshamba = { path = \"../shamba\" }").len(), 1);
    assert_eq!(manifest_violations(&TOY, "[dependencies]\nshamba = { path = \"x\", features = [\"lab\"] }").len(), 1);
    assert!(manifest_violations(&TOY, "[dependencies]\nshamba = { path = \"x\" }\nshamba-filter = \"1\"").is_empty());
    let dev_lab = "[dev-dependencies]\nshamba = { path = \"x\", features = [\"lab\"] }";
    assert!(manifest_violations(&TOY, dev_lab).is_empty(), "tests may use the lab");
    let fine = crate_violations(
        &TOY,
        &src(&[("db.rs", "use crate::table::T;"), ("table.rs", "use crate::key::K;"), ("key.rs", "")]),
    );
    assert!(fine.is_empty(), "{fine:?}");
}

#[test]
fn a_safety_note_without_a_test_or_naming_a_missing_one_is_caught() {
    let text = "// SAFETY: fine. Exercised by\n// `tests/x.rs::it_works` and `a::tests::also`.\nunsafe {}\n\
                // SAFETY: no test named.\nunsafe {}\n// SAFETY: Exercised by `gone`.\n";
    let notes: Vec<_> = safety_notes(text).into_iter().map(|(l, n)| ("f.rs".to_string(), l, n)).collect();
    assert_eq!(notes.iter().map(|n| n.1).collect::<Vec<_>>(), [1, 4, 6]);
    assert_eq!(named_tests(&notes[0].2), ["it_works", "also"]);
    let tests = test_functions("#[test]\nfn it_works() {}\n#[cfg(test)]\n#[test]\nfn also() {}\nfn gone() {}\n");
    assert_eq!(tests, BTreeSet::from(["it_works".to_string(), "also".to_string()]));
    let found = safety_violations(&notes, &tests);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("f.rs:4") && found[1].contains("`gone`"), "{found:?}");
}

#[test]
fn test_modules_keep_the_floors_only_where_the_crate_says_so() {
    let toy = src(&[
        ("lib.rs", "mod key; mod db;"),
        (
            "key.rs",
            "#[cfg(test)]\n#[expect(unused)]\npub(crate) mod tests { use crate::db::Db; }\n#[cfg(test)] mod more;",
        ),
        ("key/more.rs", "use crate::db::Db;"),
        ("db.rs", ""),
    ]);
    assert_eq!(crate_violations(&TOY, &toy).len(), 2);
    let lenient = CrateRules { tests_keep_floors: false, ..TOY };
    assert!(crate_violations(&lenient, &toy).is_empty());
    assert_eq!(
        crate_violations(&lenient, &src(&[("key.rs", "#[cfg(feature = \"x\")] mod m { use crate::db::Db; }")])).len(),
        1
    );
}
