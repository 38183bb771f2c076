//! The README's examples compile and run against the front door, and say what they say here:
//! each test holds a README code block verbatim (the database path aside) and checks that the
//! README still shows it.

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

fn assert_in_readme(source: &str) {
    let blocks = readme_blocks();
    assert!(
        blocks.iter().any(|b| b.trim() == source.trim()),
        "the README no longer shows:\n{source}\nIt shows:\n{blocks:#?}"
    );
}

const USING_THE_LIBRARY: &str = r#"use shamba::{Db, Options, WriteBatch, WriteOptions};

let db = Db::open("/tmp/my-db", Options::default())?;
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

db.flush()?;      // memtable -> L0
db.compact()?;    // everything -> one sorted run
println!("{:?}", db.stats().io);   // block reads by kind
db.close()?;
"#;

#[test]
#[allow(unused_variables)]
fn the_library_example_runs() -> shamba::Result<()> {
    assert_in_readme(USING_THE_LIBRARY);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("my-db");
    // The README's code, with its path in a temporary directory.
    use shamba::{Db, Options, WriteBatch, WriteOptions};

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

    db.flush()?; // memtable -> L0
    db.compact()?; // everything -> one sorted run
    println!("{:?}", db.stats().io); // block reads by kind
    db.close()?;
    Ok(())
}

const FILTERS: &str = r#"use shamba::filter::{FilterLayout, ModuleSizes};
use shamba::{ProbePolicy, ShambaPolicy, Skipping};

let mut opts = shamba::Options::default();
opts.partition_index_and_filters = true;
opts.filter_policy.ribbon_from_level = Some(0);
opts.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
opts.probe_policy = ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::HitOdds, ..Default::default() });
opts.cache_index_and_filter_blocks = true; // filters compete for the block cache
"#;

#[test]
#[allow(clippy::field_reassign_with_default, reason = "the README's code, verbatim")]
fn the_filter_policy_example_compiles_and_opens() -> shamba::Result<()> {
    assert_in_readme(FILTERS);
    use shamba::filter::{FilterLayout, ModuleSizes};
    use shamba::{ProbePolicy, ShambaPolicy, Skipping};

    let mut opts = shamba::Options::default();
    opts.partition_index_and_filters = true;
    opts.filter_policy.ribbon_from_level = Some(0);
    opts.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
    opts.probe_policy = ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::HitOdds, ..Default::default() });
    opts.cache_index_and_filter_blocks = true; // filters compete for the block cache

    let dir = tempfile::tempdir()?;
    let db = shamba::Db::open(dir.path(), opts)?;
    db.put(b"k", b"v")?;
    db.flush()?;
    assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
    db.close()
}
