//! The README's examples compile and run against the front door, and the README shows
//! them as they are here: each test holds a README code block between two marker comments
//! (indented, with the README's database path replaced by a temporary one), and checks that
//! the README still shows that code.

use std::path::Path;

/// The `rust` code blocks of the README, in order.
fn readme_blocks() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).expect("README");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```rust") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The code between the `n`th pair of markers in this file, dedented, as the README would
/// show it (`path` for the README's database path).
fn marked_block(n: usize) -> String {
    let source = include_str!("readme.rs");
    // Built from pieces, so that only the markers themselves match.
    let (start, end) = (["// READ", "ME {"].concat(), ["// } READ", "ME"].concat());
    let body =
        source.split(start.as_str()).nth(n + 1).and_then(|rest| rest.split(end.as_str()).next()).expect("markers");
    let lines: Vec<&str> = body.lines().skip(1).collect();
    let lines = &lines[..lines.len().saturating_sub(1)];
    let indent =
        lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let dedented: Vec<&str> = lines.iter().map(|l| l.get(indent..).unwrap_or("")).collect();
    dedented.join("\n").replace("Db::open(&path,", "Db::open(\"/tmp/my-db\",")
}

/// Whitespace-insensitive: rustfmt may align comments differently from the README.
fn squeezed(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_in_readme(n: usize) {
    let code = marked_block(n);
    let blocks = readme_blocks();
    assert!(
        blocks.iter().any(|b| squeezed(b) == squeezed(&code)),
        "the README no longer shows:\n{code}\nIt shows:\n{blocks:#?}"
    );
}

#[test]
#[allow(unused_variables)]
fn the_library_example_runs_as_the_readme_shows_it() -> shamba::Result<()> {
    assert_in_readme(0);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("my-db");
    // README {
    use shamba::{Db, Options, Readable, WriteBatch, WriteOptions};

    let db = Db::open(&path, Options::default())?;
    db.put(b"apple", b"red")?;
    assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"red"[..]));

    // Atomic batches; `sync` makes the write durable before it is acknowledged.
    let mut batch = WriteBatch::new();
    batch.put(b"pear", b"green").delete(b"apple");
    db.write_opt(batch, &WriteOptions { sync: true, ..Default::default() })?;

    // Ordered, double-ended range scans; snapshots.
    let snap = db.snapshot();
    for kv in db.range(&b"a"[..]..&b"q"[..]).rev() {
        let (key, value) = kv?;
    }
    assert_eq!(snap.get(b"pear")?.as_deref(), Some(&b"green"[..]));
    let mut it = db.prefix(b"pe"); // keys starting with "pe"; seek / seek_for_prev restart a walk
    it.seek(b"pear");

    db.flush()?; // memtable -> L0
    db.compact()?; // everything -> one sorted run
    println!("{:?}", db.stats().io); // block reads by kind
    db.close()?;
    // } README
    Ok(())
}

#[test]
#[allow(clippy::field_reassign_with_default, reason = "the README's code, verbatim")]
fn the_filter_policy_example_opens_a_database_as_the_readme_shows_it() -> shamba::Result<()> {
    assert_in_readme(1);
    // README {
    use shamba::filter::{FilterLayout, ModuleSizes};
    use shamba::{ProbePolicy, ShambaPolicy, Skipping};

    let mut opts = shamba::Options::default();
    opts.partition_index_and_filters = true;
    opts.filter_policy.ribbon_from_level = Some(0);
    opts.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
    opts.probe_policy = ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::HitOdds, ..Default::default() });
    opts.cache_index_and_filter_blocks = true; // filters compete for the block cache
                                               // } README

    use shamba::Readable;
    let dir = tempfile::tempdir()?;
    let db = shamba::Db::open(dir.path(), opts)?;
    db.put(b"k", b"v")?;
    db.flush()?;
    assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
    db.close()
}
