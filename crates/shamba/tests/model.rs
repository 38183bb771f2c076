//! Model-based test: random sequences of writes, reads, snapshots, flushes, compactions
//! and reopens, checked against a `BTreeMap`. Tiny memtables and files make flushes and
//! multi-level compactions happen within a few dozen operations.
//!
//! `SHAMBA_MODEL_CASES=1000 cargo test --release --test model` runs a longer soak.

use proptest::prelude::*;
use shamba::{CompactionStyle, Db, Options, Snapshot, WriteBatch};
use std::collections::BTreeMap;
use std::ops::Bound;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// `delete_range(lo..hi)`, unbounded where `None`.
    DeleteRange(Option<Vec<u8>>, Option<Vec<u8>>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Get(Vec<u8>),
    /// `multi_get` of these keys (repeats and absent keys included).
    MultiGet(Vec<Vec<u8>>),
    Range(Option<Vec<u8>>, Option<Vec<u8>>, bool),
    /// On `range(lo..hi)`, `seek(at)` then up to `take` items forward, or `seek_for_prev(at)`
    /// then up to `take` items backward.
    Seek {
        lo: Option<Vec<u8>>,
        hi: Option<Vec<u8>>,
        at: Vec<u8>,
        back: bool,
        take: usize,
    },
    Prefix(Vec<u8>, bool),
    /// Take a checkpoint, open it and compare it with the model of that moment.
    Checkpoint,
    TakeSnapshot,
    SnapshotGet(usize, Vec<u8>),
    SnapshotMultiGet(usize, Vec<Vec<u8>>),
    SnapshotRange(usize, bool),
    Flush,
    Compact,
    Reopen,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    // A small key space so keys are overwritten and deleted often; varied lengths so
    // prefix compression and separators are exercised.
    (0u16..120, 0usize..3).prop_map(|(k, pad)| {
        let mut v = format!("k{k:03}").into_bytes();
        v.extend(std::iter::repeat_n(b'_', pad * 5));
        v
    })
}

/// Keys of one `multi_get`: up to 40 of the small key space, some of them twice.
fn multi_get_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    (prop::collection::vec(key(), 1..40), any::<u8>()).prop_map(|(mut keys, repeat)| {
        if let Some(k) = keys.get(usize::from(repeat) % keys.len()).cloned() {
            keys.push(k);
        }
        keys
    })
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::collection::vec(any::<u8>(), 200..1500),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        8 => key().prop_map(Op::Delete),
        2 => (prop::option::of(key()), prop::option::of(key())).prop_map(|(lo, hi)| Op::DeleteRange(lo, hi)),
        6 => prop::collection::vec((key(), prop::option::of(value())), 1..8).prop_map(Op::Batch),
        12 => key().prop_map(Op::Get),
        4 => multi_get_keys().prop_map(Op::MultiGet),
        5 => (prop::option::of(key()), prop::option::of(key()), any::<bool>()).prop_map(|(a, b, r)| Op::Range(a, b, r)),
        3 => (prop::option::of(key()), prop::option::of(key()), key(), any::<bool>(), 1usize..6)
            .prop_map(|(lo, hi, at, back, take)| Op::Seek { lo, hi, at, back, take }),
        2 => ((0u16..120), 1usize..4, any::<bool>()).prop_map(|(k, len, rev)| {
            let mut p = format!("k{k:03}").into_bytes();
            p.truncate(len);
            Op::Prefix(p, rev)
        }),
        2 => Just(Op::TakeSnapshot),
        1 => Just(Op::Checkpoint),
        4 => (any::<usize>(), key()).prop_map(|(i, k)| Op::SnapshotGet(i, k)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(i, r)| Op::SnapshotRange(i, r)),
        2 => (any::<usize>(), multi_get_keys()).prop_map(|(i, k)| Op::SnapshotMultiGet(i, k)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

/// Filter layouts and probe policies: they may change what a lookup costs, never what it
/// returns, so every combination must agree with the model.
#[derive(Debug, Clone, Copy)]
enum FilterSetup {
    Plain,
    ModulesShambaFull,
    ModulesPropPartial,
    UnitsElastic,
    RibbonNoLastLevel,
    ModularRibbonShamba,
    PartitionedPlain,
    PartitionedModulesShamba,
    PartitionedMonkeyRibbonOdds,
}

fn filter_setup() -> impl Strategy<Value = FilterSetup> {
    prop_oneof![
        Just(FilterSetup::Plain),
        Just(FilterSetup::ModulesShambaFull),
        Just(FilterSetup::ModulesPropPartial),
        Just(FilterSetup::UnitsElastic),
        Just(FilterSetup::RibbonNoLastLevel),
        Just(FilterSetup::ModularRibbonShamba),
        Just(FilterSetup::PartitionedPlain),
        Just(FilterSetup::PartitionedModulesShamba),
        Just(FilterSetup::PartitionedMonkeyRibbonOdds),
    ]
}

fn apply(setup: FilterSetup, o: &mut Options) {
    use shamba::filter::{FilterLayout, ModuleSizes};
    use shamba::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};
    // A tiny warm-up so skipping decisions start within a few lookups.
    let shamba =
        |skipping| ProbePolicy::Shamba(ShambaPolicy { skipping, warmup_lookups: 5, ..ShambaPolicy::default() });
    match setup {
        FilterSetup::Plain => o.prefetch_min_filter_bytes = Options::default().prefetch_min_filter_bytes,
        FilterSetup::ModulesShambaFull => {
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 3 });
            o.probe_policy = shamba(Skipping::Full);
        }
        FilterSetup::ModulesPropPartial => {
            o.filter_policy.layout =
                FilterLayout::Modules(ModuleSizes::Proportional { count: 2, first_bits_per_key: 2.0 });
            o.probe_policy = shamba(Skipping::Partial);
            o.cache_index_and_filter_blocks = true;
        }
        FilterSetup::UnitsElastic => {
            o.filter_policy.layout = FilterLayout::Units { count: 4 };
            o.probe_policy = ProbePolicy::Elastic(ElasticPolicy { life_time: 10, budget_bytes: 2048 });
            o.cache_index_and_filter_blocks = true;
        }
        FilterSetup::RibbonNoLastLevel => {
            o.filter_policy.ribbon_from_level = Some(1);
            o.probe_policy = ProbePolicy::NoLastLevel;
        }
        FilterSetup::PartitionedPlain => {
            o.partition_index_and_filters = true;
            o.metadata_partition_size = 128;
            o.cache_index_and_filter_blocks = true;
        }
        FilterSetup::PartitionedModulesShamba => {
            o.partition_index_and_filters = true;
            o.metadata_partition_size = 96;
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
            o.probe_policy = shamba(Skipping::Full);
        }
        FilterSetup::PartitionedMonkeyRibbonOdds => {
            o.partition_index_and_filters = true;
            o.metadata_partition_size = 96;
            o.filter_policy.ribbon_from_level = Some(0);
            o.filter_policy.allocation = shamba::filter::Allocation::Monkey;
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
            o.probe_policy = shamba(Skipping::HitOdds);
            o.cache_index_and_filter_blocks = true;
        }
        FilterSetup::ModularRibbonShamba => {
            o.filter_policy.ribbon_from_level = Some(0);
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
            o.probe_policy = shamba(Skipping::Full);
        }
    }
}

/// No budget (filters pinned or cached as configured), or one from a few parts' worth to
/// more than the tiny trees' filters need.
fn filter_budget() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![2 => Just(None), 3 => (32u64..4096).prop_map(Some)]
}

fn options(style: CompactionStyle, ratio: u32) -> Options {
    let mut o = Options {
        write_buffer_size: 4096,
        target_file_size: 4096,
        max_bytes_for_level_base: 8192,
        size_ratio: ratio,
        num_levels: 5,
        level0_compaction_trigger: 2,
        level0_slowdown_trigger: 8,
        level0_stop_trigger: 16,
        block_size: 256,
        block_restart_interval: 4,
        cache_capacity: 64 << 10,
        compaction_style: style,
        // Tiny trees: prefetch anyway, so lookups take the prefetch passes (the Plain
        // setup keeps the default threshold and takes the level-by-level path).
        prefetch_min_filter_bytes: 0,
        ..Options::default()
    };
    o.filter_policy.bits_per_key = 8.0;
    o
}

fn expected_range(m: &Model, lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let lo = lo.clone().map_or(Bound::Unbounded, Bound::Included);
    let hi = hi.clone().map_or(Bound::Unbounded, Bound::Excluded);
    if let (Bound::Included(a), Bound::Excluded(b)) = (&lo, &hi) {
        if a > b {
            return Vec::new();
        }
    }
    m.range((lo, hi)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn collect(it: impl Iterator<Item = shamba::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.collect::<Result<Vec<_>, _>>().expect("iteration failed")
}

/// The most filter bytes the manager may hold: the budget, and an Elastic policy's own.
fn filter_cap(o: &Options) -> Option<u64> {
    let elastic = match &o.probe_policy {
        shamba::ProbePolicy::Elastic(p) => Some(p.budget_bytes),
        _ => None,
    };
    match (o.filter_memory_budget, elastic) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn run(
    ops: Vec<Op>,
    style: CompactionStyle,
    ratio: u32,
    setup: FilterSetup,
    budget: Option<u64>,
) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = || {
        let mut o = options(style, ratio);
        apply(setup, &mut o);
        o.filter_memory_budget = budget;
        o
    };
    let cap = filter_cap(&opts());
    let mut db = Some(Db::open(dir.path(), opts()).expect("open"));
    let mut model = Model::new();
    let mut snaps: Vec<(Snapshot, Model)> = Vec::new();
    for (step, op) in ops.into_iter().enumerate() {
        let d = db.as_ref().expect("db open");
        match op {
            Op::Put(k, v) => {
                d.put(&k, &v).expect("put");
                model.insert(k, v);
            }
            Op::Delete(k) => {
                d.delete(&k).expect("delete");
                model.remove(&k);
            }
            Op::DeleteRange(lo, hi) => {
                let l = lo.clone().map_or(Bound::Unbounded, Bound::Included);
                let h = hi.clone().map_or(Bound::Unbounded, Bound::Excluded);
                d.delete_range::<Vec<u8>, _>((l, h)).expect("delete_range");
                for (k, _) in expected_range(&model, &lo, &hi) {
                    model.remove(&k);
                }
            }
            Op::Batch(items) => {
                let mut b = WriteBatch::new();
                for (k, v) in &items {
                    match v {
                        Some(v) => {
                            b.put(k, v);
                            model.insert(k.clone(), v.clone());
                        }
                        None => {
                            b.delete(k);
                            model.remove(k);
                        }
                    }
                }
                d.write(b).expect("write batch");
            }
            Op::Get(k) => {
                prop_assert_eq!(d.get(&k).expect("get"), model.get(&k).cloned(), "step {}: get {:?}", step, k);
            }
            Op::MultiGet(keys) => {
                let got: Vec<_> = d.multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
                let want: Vec<_> = keys.iter().map(|k| model.get(k).cloned()).collect();
                prop_assert_eq!(got, want, "step {}: multi_get {:?}", step, keys);
            }
            Op::Range(lo, hi, rev) => {
                let want = expected_range(&model, &lo, &hi);
                let l = lo.clone().map_or(Bound::Unbounded, Bound::Included);
                let h = hi.clone().map_or(Bound::Unbounded, Bound::Excluded);
                let it = d.range::<Vec<u8>, _>((l, h));
                let got = if rev {
                    let mut g = collect(it.rev());
                    g.reverse();
                    g
                } else {
                    collect(it)
                };
                prop_assert_eq!(got, want, "step {}: range {:?}..{:?} rev={}", step, lo, hi, rev);
            }
            Op::Seek { lo, hi, at, back, take } => {
                let all = expected_range(&model, &lo, &hi);
                let want: Vec<_> = if back {
                    all.iter().rev().filter(|(k, _)| *k <= at).take(take).cloned().collect()
                } else {
                    all.iter().filter(|(k, _)| *k >= at).take(take).cloned().collect()
                };
                let l = lo.clone().map_or(Bound::Unbounded, Bound::Included);
                let h = hi.clone().map_or(Bound::Unbounded, Bound::Excluded);
                let mut it = d.range::<Vec<u8>, _>((l, h));
                // Walk a little first: a seek restarts the walk wherever it was.
                let _ = if back { it.next_back() } else { it.next() };
                let got = if back {
                    it.seek_for_prev(&at);
                    collect(it.rev().take(take))
                } else {
                    it.seek(&at);
                    collect(it.take(take))
                };
                prop_assert_eq!(got, want, "step {}: seek {:?} in {:?}..{:?} back={}", step, at, lo, hi, back);
            }
            Op::Prefix(p, rev) => {
                let want: Vec<_> =
                    model.iter().filter(|(k, _)| k.starts_with(&p)).map(|(k, v)| (k.clone(), v.clone())).collect();
                let got = if rev {
                    let mut g = collect(d.prefix(&p).rev());
                    g.reverse();
                    g
                } else {
                    collect(d.prefix(&p))
                };
                prop_assert_eq!(got, want, "step {}: prefix {:?}", step, p);
            }
            Op::Checkpoint => {
                let out = dir.path().join(format!("checkpoint-{step}"));
                d.checkpoint(&out).expect("checkpoint");
                let cp = Db::open(&out, opts()).expect("open the checkpoint");
                let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                prop_assert_eq!(collect(cp.iter()), want, "step {}: checkpoint", step);
                cp.close().expect("close the checkpoint");
            }
            Op::TakeSnapshot => snaps.push((d.snapshot(), model.clone())),
            Op::SnapshotGet(i, k) => {
                if let Some((s, m)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    prop_assert_eq!(
                        s.get(&k).expect("snapshot get"),
                        m.get(&k).cloned(),
                        "step {}: snapshot get",
                        step
                    );
                }
            }
            Op::SnapshotMultiGet(i, keys) => {
                if let Some((s, m)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    let got: Vec<_> = s.multi_get(&keys).into_iter().map(|r| r.expect("snapshot multi_get")).collect();
                    let want: Vec<_> = keys.iter().map(|k| m.get(k).cloned()).collect();
                    prop_assert_eq!(got, want, "step {}: snapshot multi_get", step);
                }
            }
            Op::SnapshotRange(i, rev) => {
                if let Some((s, m)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    let want: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    let got = if rev {
                        let mut g = collect(s.iter().rev());
                        g.reverse();
                        g
                    } else {
                        collect(s.iter())
                    };
                    prop_assert_eq!(got, want, "step {}: snapshot scan", step);
                }
            }
            Op::Flush => d.flush().expect("flush"),
            Op::Compact => d.compact().expect("compact"),
            Op::Reopen => {
                snaps.clear();
                db.take().expect("db").close().expect("close");
                db = Some(Db::open(dir.path(), opts()).expect("reopen"));
            }
        }
        // The filter bytes held never passed the cap, at any moment since open (the peak),
        // whatever the step did.
        let stats = db.as_ref().expect("db").stats();
        match cap {
            Some(cap) => prop_assert!(
                stats.filter_resident_peak_bytes <= cap,
                "step {}: {} filter bytes held at once, cap {}",
                step,
                stats.filter_resident_peak_bytes,
                cap
            ),
            None => prop_assert_eq!(stats.filter_resident_peak_bytes, 0, "step {}: no budget, nothing pooled", step),
        }
        prop_assert!(stats.filter_resident_bytes <= stats.filter_resident_peak_bytes);
    }
    // Whatever happened, the full scan in both directions equals the model.
    let d = db.as_ref().expect("db");
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    prop_assert_eq!(collect(d.iter()), want.clone());
    let mut back = collect(d.iter().rev());
    back.reverse();
    prop_assert_eq!(back, want);
    Ok(())
}

fn cases() -> u32 {
    std::env::var("SHAMBA_MODEL_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn leveled_engine_matches_btreemap(
        ops in prop::collection::vec(op(), 1..250),
        ratio in 2u32..5,
        setup in filter_setup(),
        budget in filter_budget(),
    ) {
        run(ops, CompactionStyle::Leveled, ratio, setup, budget)?;
    }

    #[test]
    fn tiered_engine_matches_btreemap(
        ops in prop::collection::vec(op(), 1..250),
        ratio in 2u32..5,
        setup in filter_setup(),
        budget in filter_budget(),
    ) {
        run(ops, CompactionStyle::Tiered, ratio, setup, budget)?;
    }
}

/// A fixed, long sequence that certainly reaches several levels, with its shape asserted,
/// so the model test cannot pass by never compacting.
#[test]
fn long_sequence_builds_several_levels_and_stays_equal_to_the_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), options(CompactionStyle::Leveled, 2)).expect("open");
    let mut model = Model::new();
    let mut x: u64 = 7;
    for i in 0..6000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let k = format!("key{:05}", (x >> 33) % 3000).into_bytes();
        if i % 7 == 3 {
            db.delete(&k).expect("delete");
            model.remove(&k);
        } else {
            let v = format!("value-{i}-{}", "x".repeat((x % 64) as usize)).into_bytes();
            db.put(&k, &v).expect("put");
            model.insert(k, v);
        }
    }
    db.wait_for_compactions().expect("settle");
    let levels = db.stats().non_empty_levels();
    assert!(levels >= 3, "expected at least 3 non-empty levels, got {levels}");
    for k in 0..3000 {
        let k = format!("key{k:05}").into_bytes();
        assert_eq!(db.get(&k).expect("get"), model.get(&k).cloned(), "key {:?}", String::from_utf8_lossy(&k));
    }
    // All of them, and as many absent keys between them, in one batch and in batches of 32.
    let keys: Vec<Vec<u8>> =
        (0..3000).flat_map(|k| [format!("key{k:05}").into_bytes(), format!("key{k:05}-").into_bytes()]).collect();
    let want: Vec<_> = keys.iter().map(|k| model.get(k).cloned()).collect();
    let whole: Vec<_> = db.multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
    assert!(whole == want, "one multi_get of every key differs from the model");
    let batched: Vec<_> = keys.chunks(32).flat_map(|c| db.multi_get(c)).map(|r| r.expect("multi_get")).collect();
    assert!(batched == want, "multi_get in batches of 32 differs from the model");
    let got = collect(db.iter());
    assert_eq!(got.len(), model.len());
    assert!(got.iter().zip(model.iter()).all(|((a, b), (c, d))| a == c && b == d));
}
