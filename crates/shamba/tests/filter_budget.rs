//! One budget on the filter bytes held in memory (`Options::filter_memory_budget`), and
//! Elastic units resident only while enabled: the bytes held never pass the budget, the
//! loads and evictions are counted, and answers are those of Plain.

use shamba::filter::{FilterLayout, ModuleSizes};
use shamba::BlockKind;
use shamba::{Db, Options, Readable, Stats};
use shamba::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};

fn base() -> Options {
    Options {
        write_buffer_size: 64 << 10,
        target_file_size: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        level0_compaction_trigger: 2,
        size_ratio: 4,
        block_size: 1024,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:07}", i).into_bytes()
}

/// 6,000 even keys, settled.
fn load(dir: &std::path::Path) {
    let db = Db::open(dir, base()).expect("open");
    for i in 0..6000u32 {
        db.put(key(2 * i), format!("value-{i}")).expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    db.close().expect("close");
}

fn filter_bytes(s: &Stats) -> u64 {
    s.levels.iter().map(|l| l.filter_bytes).sum()
}

/// Lookups whose hot tenth of the key space moves half-way through, half of them for
/// absent keys; each answer checked, and the bytes held after each.
fn lookups(db: &Db, cap: u64) {
    for i in 0..8000u32 {
        let hot_base = if i < 4000 { 0 } else { 6000 };
        let id = if i % 4 != 0 { hot_base + (i * 7) % 1200 } else { (i * 13) % 12000 };
        let found = db.get(key(id)).expect("get");
        assert_eq!(found.is_some(), id % 2 == 0, "key {id}");
        let s = db.stats();
        assert!(s.filter_resident_bytes <= cap, "lookup {i}: {} bytes held, cap {cap}", s.filter_resident_bytes);
    }
    let s = db.stats();
    assert!(s.filter_resident_peak_bytes <= cap, "peak {} over {cap}", s.filter_resident_peak_bytes);
}

#[test]
fn elastic_units_are_in_memory_only_while_enabled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let units = |o: &mut Options| o.filter_policy.layout = FilterLayout::Units { count: 4 };
    {
        let mut o = base();
        units(&mut o);
        let db = Db::open(dir.path(), o).expect("open");
        for i in 0..6000u32 {
            db.put(key(2 * i), format!("value-{i}")).expect("put");
        }
        db.flush().expect("flush");
        db.wait_for_compactions().expect("settle");
        db.close().expect("close");
    }
    // Plain pins every unit of every table at open.
    let mut o = base();
    units(&mut o);
    let plain = Db::open(dir.path(), o.clone()).expect("open");
    lookups(&plain, 0);
    let pinned_plain = plain.stats().pinned_table_bytes;
    let all_units = filter_bytes(&plain.stats());
    plain.close().expect("close");

    let budget = all_units / 4;
    o.probe_policy = ProbePolicy::Elastic(ElasticPolicy { life_time: 100, budget_bytes: budget });
    let db = Db::open(dir.path(), o).expect("open");
    lookups(&db, budget);
    let s = db.stats();
    assert_eq!(pinned_plain - s.pinned_table_bytes, all_units, "Elastic tables pin no unit");
    assert!(s.filter_loads > 0 && s.filter_evictions > 0, "{} loads, {} evictions", s.filter_loads, s.filter_evictions);
    assert!(s.filter_resident_bytes > 0 && s.filter_resident_bytes <= s.elastic_enabled_bytes);
    // Units are read only to be enabled: one filter-block read per load (one thread, so no
    // lookup raced a disable and read a unit for itself).
    assert_eq!(s.io.reads_of(BlockKind::Filter), s.filter_loads);
}

#[test]
fn every_policy_keeps_its_filters_under_one_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    load(dir.path());
    let shamba = |skipping| ProbePolicy::Shamba(ShambaPolicy { skipping, warmup_lookups: 100, ..Default::default() });
    let modules = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
    let setups: Vec<(&str, ProbePolicy, FilterLayout, bool)> = vec![
        ("plain", ProbePolicy::Plain, FilterLayout::Whole, false),
        ("plain partitioned", ProbePolicy::Plain, FilterLayout::Whole, true),
        ("no-last-level", ProbePolicy::NoLastLevel, FilterLayout::Whole, false),
        ("shamba-F", shamba(Skipping::Full), modules, false),
        ("shamba-O partitioned", shamba(Skipping::HitOdds), modules, true),
    ];
    for (name, policy, layout, partitioned) in setups {
        // The layout is a build choice: rewrite the tables with it first.
        let mut o = base();
        o.filter_policy.layout = layout;
        o.partition_index_and_filters = partitioned;
        o.metadata_partition_size = 512;
        let db = Db::open(dir.path(), o.clone()).expect("open");
        db.compact().expect("compact");
        let all = filter_bytes(&db.stats());
        db.close().expect("close");

        let budget = all / 4;
        o.probe_policy = policy;
        o.filter_memory_budget = Some(budget);
        let db = Db::open(dir.path(), o).expect("open");
        assert_eq!(db.stats().filter_resident_bytes, 0, "{name}: nothing held before a lookup");
        lookups(&db, budget);
        let s = db.stats();
        assert!(s.filter_resident_bytes > 0, "{name}: nothing held");
        assert!(
            s.filter_loads > 0 && s.filter_evictions > 0,
            "{name}: {} loads, {} evictions",
            s.filter_loads,
            s.filter_evictions
        );
        db.close().expect("close");
    }
}

/// The budget is one cap for the whole database: two keyspaces with filters of about the
/// same size, each wanting more than the cap, share it (neither may take it all twice).
#[test]
fn every_keyspace_counts_against_one_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fill = |ks: &shamba::Keyspace| {
        for i in 0..6000u32 {
            ks.put(key(2 * i), format!("value-{i}")).expect("put");
        }
    };
    let whole = {
        let db = Db::open(dir.path(), base()).expect("open");
        fill(&db.keyspace("default").expect("default"));
        fill(&db.keyspace("other").expect("other"));
        db.wait_for_compactions().expect("settle");
        let whole = filter_bytes(&db.stats());
        db.close().expect("close");
        whole
    };
    let cap = whole / 2;
    let db = Db::open(dir.path(), Options { filter_memory_budget: Some(cap), ..base() }).expect("reopen");
    let other = db.keyspace("other").expect("other");
    for round in 0..3 {
        for i in 0..4000u32 {
            let id = (i * 7 + round) % 12000;
            assert_eq!(db.get(key(id)).expect("get").is_some(), id % 2 == 0);
            assert_eq!(other.get(key(id)).expect("get").is_some(), id % 2 == 0);
        }
    }
    let (mine, theirs) = (db.stats(), other.stats());
    assert_eq!(mine.filter_resident_peak_bytes, theirs.filter_resident_peak_bytes, "the figures are the database's");
    assert!(mine.filter_loads > 0, "filters were loaded");
    assert!(mine.filter_resident_peak_bytes <= cap, "peak {} over the cap {cap}", mine.filter_resident_peak_bytes);
    assert!(
        mine.filter_resident_peak_bytes > cap / 2,
        "the keyspaces together used the budget (peak {}, cap {cap})",
        mine.filter_resident_peak_bytes
    );
}

/// A table of 6000 keys (even ids) whose filter is `modules` equal Ribbon modules of
/// `bits_per_key` in all, in 512-byte partitions; and the options that reopen it with
/// nothing cached and nothing resident (every part probed is read) under a SHaMBa policy
/// that skips nothing.
fn modular_table(modules: u8, bits_per_key: f64, policy: ShambaPolicy) -> (tempfile::TempDir, Options) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = base();
    o.partition_index_and_filters = true;
    o.metadata_partition_size = 512;
    o.filter_policy.ribbon_from_level = Some(0);
    o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: modules });
    o.filter_policy.bits_per_key = bits_per_key;
    let db = Db::open(dir.path(), o.clone()).expect("open");
    for i in 0..6000u32 {
        db.put(key(2 * i), format!("value-{i}")).expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    db.close().expect("close");
    o.cache_index_and_filter_blocks = true;
    o.cache_capacity = 0;
    o.filter_memory_budget = Some(0);
    o.probe_policy = ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::None, ..policy });
    (dir, o)
}

/// Run `gets` on the table `dir` opened with `o`: (table visits, filter reads, filter
/// bytes read).
fn filter_reads(dir: &std::path::Path, o: Options, gets: impl FnOnce(&Db)) -> (u64, u64, u64) {
    let db = Db::open(dir, o).expect("reopen");
    let before = db.stats();
    gets(&db);
    let after = db.stats();
    let table_lookups = |s: &Stats| s.lookup_levels.iter().map(|l| l.table_lookups).sum::<u64>();
    let visits = table_lookups(&after) - table_lookups(&before);
    let reads = after.io.reads_of(BlockKind::Filter) - before.io.reads_of(BlockKind::Filter);
    let bytes = after.io.bytes_of(BlockKind::Filter) - before.io.bytes_of(BlockKind::Filter);
    db.close().expect("close");
    (visits, reads, bytes)
}

/// With `read_rest_together`, a probe that must read filter parts reads all it may still
/// probe at once: an empty lookup of a table costs at most one filter read, where one read
/// per one-column module costs about two (each passes an absent key half the time). The
/// answers are the same either way, and the bytes read are the parts' bytes. (Present keys
/// are half the lookups, so the table reads the rest of its filter, not a span of it.)
#[test]
fn parts_not_resident_are_read_together_in_one_read() {
    let measure = |together: bool| {
        let policy = ShambaPolicy { read_rest_together: together, ..ShambaPolicy::default() };
        let (dir, o) = modular_table(6, 12.0, policy);
        let (visits, reads, bytes) = filter_reads(dir.path(), o, |db| {
            for i in 0..2000u32 {
                let id = 2 * ((i * 7919) % 6000) + 1;
                assert_eq!(db.get(key(id)).expect("get"), None, "absent key {id}");
                let present = 2 * ((i * 104_729) % 6000);
                assert_eq!(
                    db.get(key(present)).expect("get").as_deref(),
                    Some(format!("value-{}", present / 2).as_bytes())
                );
            }
        });
        assert!(visits > 2000, "{visits} table visits for 2000 pairs of gets");
        (reads as f64 / visits as f64, bytes as f64 / reads.max(1) as f64)
    };
    let (each, each_bytes) = measure(false);
    let (together, together_bytes) = measure(true);
    assert!(together <= 1.0 + 1e-9, "together: {together} filter reads per table visit");
    assert!(each > 1.3, "a read per part: {each} filter reads per table visit");
    assert!(together_bytes > 2.0 * each_bytes, "a read of the rest is larger: {together_bytes} vs {each_bytes} bytes");
}

/// Reading the rest together stops where a further read becomes unlikely: of fourteen
/// one-column parts (each passes an absent key half the time) an empty lookup reads six
/// with its one read, not all fourteen, and reads again about once in 64 visits; a table
/// whose lookups find their keys reads all its parts at once, since a present key passes
/// every part and would otherwise pay a read per span.
#[test]
fn parts_read_together_stop_where_a_further_read_is_unlikely() {
    // (filter reads per table visit, bytes per filter read) of 3000 gets of absent or
    // present keys on a fresh open.
    let measure = |present: bool| {
        // The table's measured share of lookups that find their key counts at once.
        let policy = ShambaPolicy { read_rest_together: true, warmup_lookups: 1, ..ShambaPolicy::default() };
        let (dir, o) = modular_table(14, 14.0, policy);
        let (visits, reads, bytes) = filter_reads(dir.path(), o, |db| {
            for i in 0..3000u32 {
                let id = 2 * ((i * 7919) % 6000);
                let want = if present { Some(format!("value-{}", id / 2).into_bytes()) } else { None };
                assert_eq!(db.get(key(id + u32::from(!present))).expect("get"), want);
            }
        });
        assert!(visits >= 2900, "{visits} table visits for 3000 gets");
        (reads as f64 / visits as f64, bytes as f64 / reads.max(1) as f64)
    };
    let (absent_reads, absent_bytes) = measure(false);
    let (present_reads, present_bytes) = measure(true);
    assert!((1.0..1.1).contains(&absent_reads), "absent keys: {absent_reads} filter reads per table visit");
    // The table's first lookups, before its share of present keys is measured, read by span.
    assert!(present_reads <= 1.01, "present keys: {present_reads} filter reads per table visit");
    // Six parts of fourteen, against all fourteen.
    let share = absent_bytes / present_bytes;
    assert!((0.3..0.6).contains(&share), "an absent key's read is {share} of a present key's");
}
