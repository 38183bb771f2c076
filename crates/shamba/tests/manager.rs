//! The filter manager at work in the engine: policies change costs, never answers, and
//! per-table statistics survive flushes, compactions and reopens.

use shamba::filter::{FilterLayout, ModuleSizes};
use shamba::BlockKind;
use shamba::{Db, Options, Readable};
use shamba::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};

fn base() -> Options {
    let mut o = Options {
        write_buffer_size: 64 << 10,
        target_file_size: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        level0_compaction_trigger: 2,
        size_ratio: 4,
        block_size: 1024,
        ..Options::default()
    };
    o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:07}", i).into_bytes()
}

fn load(db: &Db, n: u32) {
    for i in 0..n {
        db.put(key(2 * i), format!("value-{i}")).expect("put");
    }
    db.wait_for_compactions().expect("settle");
}

#[test]
fn table_statistics_survive_reopen_and_are_inherited_by_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = || Options { probe_policy: ProbePolicy::Shamba(ShambaPolicy::default()), ..base() };
    {
        let db = Db::open(dir.path(), opts()).expect("open");
        load(&db, 6000);
        for round in 0..3 {
            for i in 0..6000 {
                let k = if (i + round) % 2 == 0 { key(2 * i) } else { key(2 * i + 1) };
                db.get(k).expect("get");
            }
        }
        db.close().expect("close");
    }
    let db = Db::open(dir.path(), opts()).expect("reopen");
    let files = db.files();
    assert!(files.len() > 3, "expected several tables, got {}", files.len());
    let with_stats: Vec<_> = files.iter().filter_map(|f| f.stats).collect();
    assert_eq!(with_stats.len(), files.len(), "every looked-up table has persisted statistics");
    assert!(with_stats.iter().all(|s| s.accesses > 0), "{with_stats:?}");
    assert!(with_stats.iter().any(|s| s.positives > 0), "hits were recorded: {with_stats:?}");

    // Rewrite everything: the outputs inherit the inputs' statistics.
    db.compact().expect("compact");
    let after = db.files();
    assert!(after.iter().all(|f| f.stats.is_some_and(|s| s.accesses > 0)), "{after:?}");
}

#[test]
fn full_skipping_stops_probing_filters_of_tables_whose_lookups_always_hit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = ShambaPolicy { skipping: Skipping::Full, warmup_lookups: 100, ..ShambaPolicy::default() };
    // Filters go through a block cache too small to keep them: every probe would be a read.
    let opts = Options {
        probe_policy: ProbePolicy::Shamba(policy),
        cache_index_and_filter_blocks: true,
        cache_capacity: 8 << 10,
        ..base()
    };
    let db = Db::open(dir.path(), opts).expect("open");
    load(&db, 6000);
    let probes = |db: &Db| db.stats().lookup_levels.iter().map(|l| l.filter_parts_probed).sum::<u64>();
    // Only existing keys: filters cannot save anything, so after warm-up they are skipped.
    for i in 0..6000 {
        assert!(db.get(key(2 * i)).expect("get").is_some());
    }
    let before = probes(&db);
    for i in 0..6000 {
        assert!(db.get(key(2 * i)).expect("get").is_some());
    }
    let probed = probes(&db) - before;
    assert!(probed < 600, "filters of all-hit tables should be skipped, {probed} parts probed in 6000 lookups");
}

#[test]
fn resident_filters_are_never_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = ShambaPolicy { skipping: Skipping::Full, warmup_lookups: 100, ..ShambaPolicy::default() };
    // Pinned filters cost no read, so even all-hit tables keep probing them (as Plain does).
    let db = Db::open(dir.path(), Options { probe_policy: ProbePolicy::Shamba(policy), ..base() }).expect("open");
    load(&db, 6000);
    for i in 0..12000 {
        db.get(key(2 * (i % 6000))).expect("get");
    }
    let s = db.stats();
    assert_eq!(s.lookup_levels.iter().map(|l| l.filters_skipped).sum::<u64>(), 0, "{:?}", s.lookup_levels);
}

#[test]
fn elastic_keeps_enabled_units_within_budget_and_answers_like_plain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = base();
    o.filter_policy.layout = FilterLayout::Units { count: 4 };
    o.cache_index_and_filter_blocks = true;
    o.probe_policy = ProbePolicy::Elastic(ElasticPolicy { life_time: 200, budget_bytes: 16 << 10 });
    let db = Db::open(dir.path(), o).expect("open");
    load(&db, 6000);
    for i in 0..12000u32 {
        // Skewed: a tenth of the key space gets most lookups.
        let id = if i % 4 != 0 { (i * 7) % 1200 } else { (i * 13) % 12000 };
        let found = db.get(key(id)).expect("get");
        assert_eq!(found.is_some(), id % 2 == 0, "key {id}");
        assert!(db.stats().elastic_enabled_bytes <= 16 << 10);
    }
    let s = db.stats();
    assert!(s.elastic_enabled_bytes > 0, "some units were enabled");
    assert!(s.io.reads_of(BlockKind::Filter) > 0);
}

#[test]
fn no_last_level_never_probes_the_deepest_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), Options { probe_policy: ProbePolicy::NoLastLevel, ..base() }).expect("open");
    load(&db, 6000);
    let deepest = db.stats().levels.iter().rposition(|l| l.files > 0).expect("a level");
    for i in 0..3000 {
        db.get(key(2 * i + 1)).expect("get");
    }
    let l = &db.stats().lookup_levels[deepest];
    assert!(l.table_lookups > 0);
    assert_eq!(l.filter_parts_probed, 0, "{l:?}");
    assert_eq!(l.filters_skipped, l.table_lookups);
}

#[cfg(feature = "lab")]
#[test]
fn lab_table_accesses_counts_every_lookup_at_the_tables_it_reached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options { probe_policy: ProbePolicy::Shamba(ShambaPolicy::default()), ..base() };
    let db = Db::open(dir.path(), opts).expect("open");
    load(&db, 6000);
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    // 300 lookups of loaded keys, all in the first tenth of the key space, and 200 of
    // missing keys spread over all of it.
    for i in 0..300 {
        assert!(db.get(key(2 * (i % 600))).expect("get").is_some());
    }
    for i in 0..200 {
        assert!(db.get(key(2 * (i * 29) + 1)).expect("get").is_none());
    }
    let (lookups, tables) = shamba::lab::table_accesses(&db);
    assert_eq!(lookups, 500);
    assert_eq!(tables.iter().map(|t| t.positives).sum::<u64>(), 300, "each found key counted once");
    assert!(tables.iter().all(|t| t.positives <= t.accesses && t.age <= 500 && t.accesses > 0));
    assert!(tables.iter().any(|t| t.age >= 499), "the first table reached was born at the first lookup");
    assert!(tables.iter().all(|t| t.part_fprs.len() == 2 && t.part_bytes.len() == 2), "{tables:?}");
    // The found keys all sit in the first tenth: the table holding key 0 got them.
    let first = db.files().into_iter().filter(|f| f.smallest_key <= key(0)).map(|f| f.number).collect::<Vec<_>>();
    let hot: u64 = tables.iter().filter(|t| first.contains(&t.number)).map(|t| t.positives).sum();
    assert!(hot > 0, "{tables:?}");
    db.close().expect("close");

    // Plain counts nothing.
    let db = Db::open(dir.path(), base()).expect("reopen");
    db.get(key(0)).expect("get");
    assert_eq!(shamba::lab::table_accesses(&db), (0, Vec::new()));
}
