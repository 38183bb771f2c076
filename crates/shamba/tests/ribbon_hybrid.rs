//! The Ribbon+Bloom hybrid by level (seed 004): every table of a level from
//! `ribbon_from_level` down carries a Ribbon filter, however it got there.

use shamba::lab::compact_level;
use shamba::sst::dump_table;
use shamba::storage::FsStorage;
use shamba::{Db, Options, Readable};
use std::path::Path;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

/// `(level, filter kind)` of every live table, from each table's properties.
fn filter_kinds(db: &Db, dir: &Path) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = db
        .files()
        .iter()
        .map(|f| {
            let dump = dump_table(&FsStorage, &dir.join(format!("{:06}.sst", f.number)), 0).expect("dump");
            let kind = if dump.contains("Ribbon") { "ribbon" } else { "bloom" };
            (f.level, kind.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn a_table_moved_into_a_ribbon_level_gets_a_ribbon_filter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = Options {
        num_levels: 4,
        // Every move by hand: no background compaction picks a level on its own.
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 100,
        level0_stop_trigger: 100,
        max_bytes_for_level_base: 1 << 30,
        ..Options::default()
    };
    opts.filter_policy.ribbon_from_level = Some(2);
    let db = Db::open(dir.path(), opts).expect("open");
    for i in 0..3000 {
        db.put(key(i), b"value").expect("put");
    }
    db.flush().expect("flush");
    compact_level(&db, 0).expect("L0 into L1");
    assert_eq!(filter_kinds(&db, dir.path()), [(1, "bloom".to_string())]);
    // L2 is empty: the picker moves the file down rather than merging it; the move must
    // not carry L1's Bloom filter into a Ribbon level.
    compact_level(&db, 1).expect("L1 into L2");
    assert_eq!(filter_kinds(&db, dir.path()), [(2, "ribbon".to_string())]);
    for i in (0..3000).step_by(7) {
        assert_eq!(db.get(key(i)).expect("get").as_deref(), Some(&b"value"[..]));
    }
}
