//! Partitioned index and filters (format version 2): the same answers as an unpartitioned
//! table for every filter layout, far fewer filter bytes per empty lookup under a small
//! cache, per-part cache priorities, and the filter manager's entry points.

use super::*;
use crate::cache::Priority;
use crate::cursor::VecCursor;
use crate::filter::{BloomLayout, FilterSpec, ModuleSizes, Role};
use crate::io::BlockKind;

/// Every filter layout a table can carry.
fn specs() -> Vec<FilterSpec> {
    let modular = |count| FilterSpec::ModularBloom {
        bits_per_key: 10.0,
        modules: ModuleSizes::Equal { count },
        layout: BloomLayout::Blocked,
    };
    vec![
        FilterSpec::Bloom { bits_per_key: 10.0 },
        modular(1),
        modular(2),
        modular(3),
        FilterSpec::Elastic { bits_per_key: 10.0, units: 3, layout: BloomLayout::Blocked },
        FilterSpec::Ribbon { fp_rate: 0.01 },
        FilterSpec::ModularRibbon { fp_rate: 0.01, modules: ModuleSizes::Equal { count: 2 } },
    ]
}

fn table_opts(filter: FilterSpec, partitioned: bool, block_size: usize, partition_size: usize) -> TableOptions {
    TableOptions {
        block_size,
        restart_interval: 4,
        filter,
        partition_index_and_filters: partitioned,
        metadata_partition_size: partition_size,
        ..TableOptions::default()
    }
}

/// A user key and its versions, newest first.
type Versions = (Vec<u8>, Vec<(SeqNo, ValueKind, Vec<u8>)>);

/// The versions of each user key, for a fast model lookup.
fn versions_by_user_key(entries: &Entries) -> Vec<Versions> {
    let mut out: Vec<Versions> = Vec::new();
    for (k, v) in entries {
        let p = parse_internal_key(k).unwrap();
        if out.last().is_none_or(|(uk, _)| uk.as_slice() != p.user_key) {
            out.push((p.user_key.to_vec(), Vec::new()));
        }
        out.last_mut().unwrap().1.push((p.seq, p.kind, v.clone()));
    }
    out
}

/// Every user key at snapshots around each of its versions, and absent keys between them,
/// against the model; `FilteredOut` and `NotFound` both mean "not here".
fn check_lookups(r: &TableReader, entries: &Entries, what: &str) {
    let ro = ReadOptions::default();
    for (uk, versions) in versions_by_user_key(entries) {
        let digest = Digest::of(&uk);
        let mut snapshots = vec![MAX_SEQ, 0];
        for (s, _, _) in &versions {
            snapshots.extend([*s, s - 1, s + 1]);
        }
        for snap in snapshots {
            let got = r.get(&seek_key(&uk, snap), &digest, &ro).unwrap();
            let want = versions.iter().find(|(s, _, _)| *s <= snap);
            match (got, want) {
                (TableGet::Found { seq, kind, value }, Some((s, k, v))) => {
                    assert_eq!((seq, kind, &value), (*s, *k, v), "{what}: {uk:?} at {snap}")
                }
                // A seek below every version can land in the next partition, whose filter
                // rightly says no.
                (TableGet::NotFound | TableGet::FilteredOut, None) => {}
                (got, want) => {
                    panic!("{what}: {:?} at {snap}: got {got:?}, want {want:?}", String::from_utf8_lossy(&uk))
                }
            }
        }
        let mut absent = uk.clone();
        absent.push(b'~');
        let got = r.get(&seek_key(&absent, MAX_SEQ), &Digest::of(&absent), &ro).unwrap();
        assert!(!matches!(got, TableGet::Found { .. }), "{what}: absent {absent:?} found");
    }
}

/// Walks both ways and seeks against a vector of the entries.
fn check_cursor(r: &Arc<TableReader>, entries: &Entries, what: &str) {
    let mut c = r.cursor(&ReadOptions::default());
    assert_eq!(walk_forward(&mut *c).unwrap(), *entries, "{what}: forward");
    assert_eq!(walk_backward(&mut *c).unwrap(), *entries, "{what}: backward");
    let mut m = VecCursor::new(entries.clone());
    let mut targets = vec![seek_key(b"", MAX_SEQ), seek_key(b"zzzz", 0)];
    for (k, _) in entries.iter().step_by(13) {
        let p = parse_internal_key(k).unwrap();
        targets.extend([k.clone(), seek_key(p.user_key, p.seq.saturating_sub(1)), seek_key(p.user_key, MAX_SEQ)]);
    }
    agrees_with_model(&mut *c, &mut m, &targets, &[false, false, true, true, true], what);
}

#[test]
fn partitioned_tables_answer_lookups_and_cursors_like_unpartitioned_ones() {
    let entries = versioned_entries(2000);
    for spec in specs() {
        for partitioned in [false, true] {
            // Small blocks and partitions: many of each, and user keys whose versions
            // straddle a partition cut.
            let f = build(entries.clone(), table_opts(spec.clone(), partitioned, 256, 512));
            for cache_meta in [false, true] {
                let what = format!("{spec:?} partitioned={partitioned} cached={cache_meta}");
                let r = open(&f.path, ctx(1 << 20, cache_meta)).unwrap();
                assert_eq!(r.is_partitioned(), partitioned, "{what}");
                if partitioned {
                    assert!(r.partition_count() > 10, "{what}: {} partitions", r.partition_count());
                    assert_eq!(r.footer().format_version, FORMAT_VERSION_PARTITIONED);
                } else {
                    assert_eq!((r.partition_count(), r.footer().format_version), (0, FORMAT_VERSION_FLAT));
                }
                check_lookups(&r, &f.entries, &what);
                check_cursor(&r, &f.entries, &what);
            }
        }
    }
}

#[test]
fn versions_of_one_key_straddling_partitions_are_found_at_every_snapshot() {
    let mut entries = Vec::new();
    for uk in [&b"a"[..], b"m", b"z"] {
        for seq in (1..=60u64).rev() {
            let kind = if seq % 7 == 0 { ValueKind::Delete } else { ValueKind::Put };
            entries.push((internal_key(uk, seq, kind), format!("{seq}").into_bytes()));
        }
    }
    let f = build(entries, table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, true, 32, 64));
    let r = open(&f.path, ctx(1 << 20, true)).unwrap();
    assert!(r.partition_count() >= 10, "{} partitions", r.partition_count());
    check_gets(&r, &f.entries);
    check_cursor(&r, &f.entries, "straddling");
}

#[test]
fn partitions_are_cut_near_the_target_size_and_described_in_properties() {
    let target = 1024;
    let spec = FilterSpec::ModularBloom {
        bits_per_key: 10.0,
        modules: ModuleSizes::Equal { count: 2 },
        layout: BloomLayout::Blocked,
    };
    let f = build(versioned_entries(20_000), table_opts(spec, true, 4096, target));
    let r = open(&f.path, ctx(0, false)).unwrap();
    let p = r.properties();
    let n = r.partition_count();
    assert_eq!(p.index_partitions, n as u64);
    assert_eq!(p.filter.role, Some(Role::Module));
    assert_eq!((r.filter_role(), r.filter_kind(), r.filter_part_count()), (Some(Role::Module), "ModularBloom", 2));
    assert_eq!(r.filter_part_bytes(), p.filter.part_bytes);
    assert_eq!(r.filter_part_bytes().iter().sum::<u64>(), p.filter_bytes);
    assert_eq!(r.metadata_bytes(), (p.index_bytes, p.filter_bytes));
    assert_eq!((f.summary.index_bytes, f.summary.filter_bytes), (p.index_bytes, p.filter_bytes));
    // Pinned: the blocks, and index fences: 8 bytes per data block and each index
    // partition's shared key prefix.
    let fences = r.pinned_bytes() as u64 - p.index_bytes - p.filter_bytes;
    assert!((8 * p.data_blocks..=8 * p.data_blocks + 64 * n as u64).contains(&fences), "{fences}");
    assert!(p.top_level_index_bytes > 0 && p.top_level_index_bytes < p.index_bytes);
    // The filter decides the cuts here (index partitions of 4 KiB blocks stay small).
    let per_partition = p.filter_bytes as f64 / n as f64;
    assert!(
        per_partition > 0.7 * target as f64 && per_partition < 1.5 * target as f64,
        "{per_partition} filter bytes per partition for a target of {target}"
    );
    // One digest per distinct user key, plus one per key straddling a cut.
    let users = versions_by_user_key(&f.entries).len() as u64;
    assert!(p.filter.digests >= users && p.filter.digests <= users + n as u64);

    let flat =
        build(versioned_entries(20_000), table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, false, 4096, target));
    let r = open(&flat.path, ctx(0, true)).unwrap();
    assert_eq!((r.partition_count(), r.pinned_bytes()), (0, 0));
    assert_eq!(r.metadata_bytes(), (r.properties().index_bytes, r.properties().filter_bytes));
    assert_eq!(r.filter_role(), Some(Role::Whole));
}

/// Filter bytes read from the device per empty lookup, with a cache of 10% of the table's
/// index and filter bytes and index and filter blocks in the cache.
fn filter_bytes_per_empty_lookup(partitioned: bool) -> (f64, f64) {
    let f =
        build(versioned_entries(60_000), table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, partitioned, 4096, 4096));
    let probe = open(&f.path, ctx(0, true)).unwrap();
    let (index, filter) = probe.metadata_bytes();
    let c = ctx(((index + filter) / 10) as usize, true);
    let io = c.io.clone();
    let r = open(&f.path, c).unwrap();
    let ro = ReadOptions::default();
    let lookups = 2000u64;
    let mut outcome_bytes = 0;
    let before = io.snapshot();
    for i in 0..lookups {
        // Present user keys are multiples of 3; absent ones in a scattered order.
        let uk = format!("user{:06}", (i * 2_654_435_761) % 60_000 * 3 + 1);
        let (got, outcome) =
            r.get_planned(&seek_key(uk.as_bytes(), MAX_SEQ), &Digest::of(uk.as_bytes()), &ro, ProbePlan::ALL).unwrap();
        assert!(!matches!(got, TableGet::Found { .. }));
        outcome_bytes += outcome.filter_bytes_read_from_device;
    }
    let d = io.snapshot().since(&before);
    assert_eq!(outcome_bytes, d.bytes_of(BlockKind::Filter), "probe outcomes account for every filter read");
    let n = lookups as f64;
    (d.bytes_of(BlockKind::Filter) as f64 / n, d.bytes_of(BlockKind::Index) as f64 / n)
}

#[test]
fn at_a_cache_of_a_tenth_of_metadata_a_partitioned_empty_lookup_reads_far_fewer_filter_bytes() {
    let (whole_filter, whole_index) = filter_bytes_per_empty_lookup(false);
    let (part_filter, part_index) = filter_bytes_per_empty_lookup(true);
    eprintln!(
        "per empty lookup at a 10% cache: whole filter {whole_filter:.0} B filter + {whole_index:.0} B index; \
         partitioned {part_filter:.0} B filter + {part_index:.0} B index"
    );
    assert!(whole_filter > 50_000.0, "the whole filter ({whole_filter} B) does not fit and is read every time");
    assert!(part_filter < 6_000.0, "a partitioned lookup reads about one filter partition, got {part_filter}");
    assert!(part_filter * 10.0 < whole_filter);
}

#[test]
fn first_modules_go_to_their_pool_later_modules_to_the_low_pool_and_the_rest_to_the_high_pool() {
    let modular = FilterSpec::ModularBloom {
        bits_per_key: 12.0,
        modules: ModuleSizes::Equal { count: 3 },
        layout: BloomLayout::Blocked,
    };
    let units = FilterSpec::Elastic { bits_per_key: 12.0, units: 3, layout: BloomLayout::Blocked };
    let whole = FilterSpec::Bloom { bits_per_key: 10.0 };
    let cases = [
        (modular, Priority::First, Priority::Low),
        (units, Priority::High, Priority::High),
        (whole, Priority::High, Priority::High),
    ];
    for (spec, first_part, later_parts) in cases {
        for (partitioned, first_pool) in [(false, false), (true, false), (false, true), (true, true)] {
            let f = build(versioned_entries(3000), table_opts(spec.clone(), partitioned, 1024, 1024));
            let mut c = ctx(4 << 20, true);
            if first_pool {
                c.cache = Arc::new(crate::cache::BlockCache::with_first_pool(4 << 20, 0.5, 0.25));
            }
            let cache = c.cache.clone();
            let r = open(&f.path, c).unwrap();
            let what = format!("{spec:?} partitioned={partitioned} first_pool={first_pool}");
            // A present key passes every part, so every part of its partition is read.
            let (k, _) = &f.entries[f.entries.len() / 2];
            let p = parse_internal_key(k).unwrap();
            let seek = seek_key(p.user_key, MAX_SEQ);
            let (got, outcome) =
                r.get_planned(&seek, &Digest::of(p.user_key), &ReadOptions::default(), ProbePlan::ALL).unwrap();
            assert!(matches!(got, TableGet::Found { .. }), "{what}");
            let q = r.partition_index_for(&seek).unwrap();
            let parts = r.filter_handles_of(q);
            assert_eq!(outcome.parts_probed as usize, parts.len(), "{what}");
            assert_eq!(outcome.filter_blocks_read_from_device as usize, parts.len(), "{what}");
            for (i, h) in parts.iter().enumerate() {
                // Without a pool of their own, first modules share the high pool.
                let want = match i {
                    0 if first_pool => first_part,
                    0 => Priority::High,
                    _ => later_parts,
                };
                assert_eq!(cache.pool_of((7, h.offset)), Some(want), "{what}: part {i}");
            }
            let index = r.index_handle_of(q).unwrap();
            assert_eq!(cache.pool_of((7, index.offset)), Some(Priority::High), "{what}: index");
            let (block, offset) = r.index_block_of(q).unwrap();
            let mut c = block.cursor(compare_internal_keys);
            c.seek(&seek).unwrap();
            let data = r.decode_index_value(c.value(), offset).unwrap();
            assert_eq!(cache.pool_of((7, data.offset)), Some(Priority::Low), "{what}: data");
            if partitioned {
                assert_eq!(cache.pool_of((7, r.footer().index.offset)), None, "{what}: the top level is pinned");
            }
        }
    }
}

#[test]
fn probe_plans_limit_the_parts_of_the_partition_and_never_change_answers() {
    let spec = FilterSpec::ModularBloom {
        bits_per_key: 12.0,
        modules: ModuleSizes::Equal { count: 3 },
        layout: BloomLayout::Blocked,
    };
    let f = build(versioned_entries(1500), table_opts(spec, true, 512, 512));
    let r = open(&f.path, ctx(1 << 20, true)).unwrap();
    let ro = ReadOptions::default();
    for (uk, versions) in versions_by_user_key(&f.entries).iter().step_by(7) {
        for max_parts in [0, 1, 2, 3, usize::MAX] {
            let plan = ProbePlan::first(max_parts);
            let (got, outcome) = r.get_planned(&seek_key(uk, MAX_SEQ), &Digest::of(uk), &ro, plan).unwrap();
            let (seq, kind, value) = versions[0].clone();
            assert_eq!(got, TableGet::Found { seq, kind, value }, "{max_parts} parts");
            assert_eq!(outcome.parts_probed as usize, max_parts.min(3));
        }
    }
    // Past the last partition nothing is read, not even a filter part.
    let (got, outcome) = r.get_planned(&seek_key(b"zzz", MAX_SEQ), &Digest::of(b"zzz"), &ro, ProbePlan::ALL).unwrap();
    assert_eq!((got, outcome), (TableGet::NotFound, ProbeOutcome::default()));
}

#[test]
fn prefetch_uses_only_resident_filter_parts_and_reads_nothing() {
    // Both passes, as a lookup runs them: whether the spot's first filter part was resident.
    let prefetch = |r: &TableReader, seek: &[u8], digest: &Digest| {
        let mut spot = r.locate(seek);
        r.prefetch_filter_header(&mut spot);
        r.prefetch_filter_at(&mut spot, digest)
    };
    for partitioned in [false, true] {
        let f = build(
            versioned_entries(2000),
            table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, partitioned, 1024, 1024),
        );
        let c = ctx(1 << 20, true);
        let (io, cache) = (c.io.clone(), c.cache.clone());
        let r = open(&f.path, c).unwrap();
        let (k, _) = &f.entries[100];
        let uk = parse_internal_key(k).unwrap().user_key.to_vec();
        let (seek, digest) = (seek_key(&uk, MAX_SEQ), Digest::of(&uk));
        let (reads, counters) = (io.snapshot(), cache.counters());
        assert!(!prefetch(&r, &seek, &digest), "nothing is cached yet");
        assert_eq!((io.snapshot(), cache.counters()), (reads, counters), "a miss reads and counts nothing");
        r.get(&seek, &digest, &ReadOptions::default()).unwrap();
        let reads = io.snapshot();
        assert!(prefetch(&r, &seek, &digest));
        assert_eq!(io.snapshot(), reads, "a resident part is not read again");
        if partitioned {
            // Another partition's filter is not resident yet.
            let (far, _) = &f.entries[f.entries.len() - 1];
            let far = parse_internal_key(far).unwrap().user_key.to_vec();
            assert!(!prefetch(&r, &seek_key(&far, MAX_SEQ), &Digest::of(&far)));
            assert!(!prefetch(&r, &seek_key(b"zzz", MAX_SEQ), &Digest::of(b"zzz")), "past the end");
        }
        let pinned = open(&f.path, ctx(0, false)).unwrap();
        assert!(prefetch(&pinned, &seek, &digest));
    }
}

#[test]
fn dump_shows_the_partitions() {
    let f = build(versioned_entries(300), table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, true, 256, 256));
    let out = dump_table(&FsStorage, &f.path, 3).unwrap();
    let r = open(&f.path, ctx(0, false)).unwrap();
    let n = r.partition_count();
    assert!(n > 2);
    for needle in [
        "footer: format version 2",
        &format!("partitions: {n} (top-level index"),
        "partition 0: up to 'user",
        "index partition offset",
        "blocked-bloom whole",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert_eq!(out.matches("filter parts: 1").count(), n);
}

#[test]
fn a_probe_after_the_prefetch_passes_counts_one_cache_access_per_part() {
    let f = build(versioned_entries(2000), table_opts(FilterSpec::Bloom { bits_per_key: 10.0 }, true, 1024, 1024));
    let c = ctx(1 << 20, true);
    let cache = c.cache.clone();
    let r = open(&f.path, c).unwrap();
    let (k, _) = &f.entries[100];
    let uk = parse_internal_key(k).unwrap().user_key.to_vec();
    let (seek, digest) = (seek_key(&uk, MAX_SEQ), Digest::of(&uk));
    let ro = ReadOptions::default();
    let filter = |c: &[crate::cache::KindCounters; 4]| (c[2].hits, c[2].misses);
    for (round, expected) in [(0, (0, 1)), (1, (1, 0))] {
        let before = filter(&cache.counters());
        let mut spot = r.locate(&seek);
        r.prefetch_filter_header(&mut spot);
        assert_eq!(r.prefetch_filter_at(&mut spot, &digest), round == 1, "resident only once read");
        let (got, outcome) = r.get_at_spot(&spot, &seek, &digest, &ro, ProbePlan::ALL).unwrap();
        assert!(matches!(got, TableGet::Found { .. }));
        assert_eq!(outcome.filter_blocks_read_from_device, 1 - round);
        let after = filter(&cache.counters());
        assert_eq!((after.0 - before.0, after.1 - before.1), expected, "round {round}: (hits, misses)");
    }
}
