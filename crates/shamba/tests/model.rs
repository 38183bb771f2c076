//! Model-based test: random sequences of writes, reads, snapshots, flushes, compactions
//! and reopens, checked against a `BTreeMap` per keyspace. Tiny memtables and files make
//! flushes and multi-level compactions happen within a few dozen operations.
//!
//! Every operation names one of three keyspaces: the default one (through `Db`'s own
//! methods), `a` (the database's options, through a `Keyspace`), and `b` (the other
//! compaction style and plain filters, from `Options::keyspace_options`). Batches mix
//! keyspaces, snapshots read all three, and `a` and `b` are dropped and come back empty.
//!
//! Transactions interleave with the rest: up to three open at once, each reading its
//! snapshot with its own writes over it (checked against the models of its moment with its
//! writes applied), some committed, some dropped, and some refused: a commit must be refused
//! when a key it wrote or read for update was written after it began, and when it commits
//! its writes reach the models. (A commit the models would let through may still be refused
//! when the writes since its snapshot were flushed: tiny memtables here flush often.)
//!
//! Some puts expire: the database runs on an injected clock that steps forward, the
//! models keep each key's deadline, and an expired key leaves every model (a snapshot's
//! and a transaction's too: expiry hides a key from every read at once) when the clock
//! passes it.
//!
//! `SHAMBA_MODEL_CASES=1000 cargo test --release --test model` runs a longer soak.

use proptest::prelude::*;
use shamba::{
    CompactionStyle, Db, DbIterator, Keyspace, KeyspaceOptions, ManualClock, Options, Readable, Snapshot, Transaction,
    Ttl, TxKeyspace, WriteBatch,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The keyspaces, by index: 0 is the default one.
const KEYSPACES: [&str; 3] = ["default", "a", "b"];

/// One model per keyspace.
type Models = [Model; 3];

/// The deadline (milliseconds on the test's clock) of each key of a model that expires.
type Deadlines = [BTreeMap<Vec<u8>, u64>; 3];

/// Where the test's clock starts, in milliseconds since the Unix epoch.
const CLOCK_START_MS: u64 = 1_700_000_000_000;

/// Drop from `models` every key whose deadline `now_ms` has reached.
fn expire(models: &mut Models, deadlines: &mut Deadlines, now_ms: u64) {
    for (m, d) in models.iter_mut().zip(deadlines.iter_mut()) {
        d.retain(|k, at| {
            let live = now_ms < *at;
            if !live {
                m.remove(k);
            }
            live
        });
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(usize, Vec<u8>, Vec<u8>),
    /// `put_with_ttl` of this many milliseconds.
    PutTtl(usize, Vec<u8>, Vec<u8>, u64),
    /// Move the clock forward this many milliseconds.
    Advance(u64),
    /// `ttl` of a key.
    Ttl(usize, Vec<u8>),
    /// `expire_after` this many milliseconds.
    Expire(usize, Vec<u8>, u64),
    Persist(usize, Vec<u8>),
    Delete(usize, Vec<u8>),
    /// `delete_range(lo..hi)`, unbounded where `None`.
    DeleteRange(usize, Option<Vec<u8>>, Option<Vec<u8>>),
    /// A batch across keyspaces: puts (`Some`) and deletes (`None`), then maybe one range
    /// delete.
    Batch(Vec<(usize, Vec<u8>, Option<Vec<u8>>)>, Option<(usize, Vec<u8>, Vec<u8>)>),
    Get(usize, Vec<u8>),
    /// `multi_get` of these keys (repeats and absent keys included).
    MultiGet(usize, Vec<Vec<u8>>),
    Range(usize, Option<Vec<u8>>, Option<Vec<u8>>, bool),
    /// On `range(lo..hi)`, `seek(at)` then up to `take` items forward, or `seek_for_prev(at)`
    /// then up to `take` items backward.
    Seek {
        ks: usize,
        lo: Option<Vec<u8>>,
        hi: Option<Vec<u8>>,
        at: Vec<u8>,
        back: bool,
        take: usize,
    },
    Prefix(usize, Vec<u8>, bool),
    /// Take a checkpoint, open it and compare every keyspace with the models of that
    /// moment.
    Checkpoint,
    TakeSnapshot,
    SnapshotGet(usize, usize, Vec<u8>),
    SnapshotMultiGet(usize, usize, Vec<Vec<u8>>),
    SnapshotRange(usize, usize, bool),
    /// Drop keyspace 1 or 2; it comes back empty at its next use.
    DropKeyspace(usize),
    Flush,
    Compact,
    Reopen,
    /// Begin a transaction (at most three are open; the oldest is dropped for a fourth).
    TxBegin,
    /// On open transaction `i % open`: a get, a get for update, a put, a delete, a range
    /// delete, a full scan (backward if `true`), a `multi_get`, a commit, a drop.
    TxGet(usize, usize, Vec<u8>),
    TxGetForUpdate(usize, usize, Vec<u8>),
    TxPut(usize, usize, Vec<u8>, Vec<u8>),
    TxDelete(usize, usize, Vec<u8>),
    TxDeleteRange(usize, usize, Option<Vec<u8>>, Option<Vec<u8>>),
    TxRange(usize, usize, Option<Vec<u8>>, Option<Vec<u8>>, bool),
    TxMultiGet(usize, usize, Vec<Vec<u8>>),
    TxCommit(usize),
    TxDrop(usize),
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

/// A keyspace index: the default one as often as the two others together.
fn ks() -> impl Strategy<Value = usize> {
    prop_oneof![2 => Just(0usize), 1 => Just(1usize), 1 => Just(2usize)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (ks(), key(), value()).prop_map(|(s, k, v)| Op::Put(s, k, v)),
        8 => (ks(), key(), value(), 1u64..3000).prop_map(|(s, k, v, t)| Op::PutTtl(s, k, v, t)),
        3 => (1u64..1500).prop_map(Op::Advance),
        3 => (ks(), key()).prop_map(|(s, k)| Op::Ttl(s, k)),
        2 => (ks(), key(), 1u64..3000).prop_map(|(s, k, t)| Op::Expire(s, k, t)),
        2 => (ks(), key()).prop_map(|(s, k)| Op::Persist(s, k)),
        8 => (ks(), key()).prop_map(|(s, k)| Op::Delete(s, k)),
        2 => (ks(), prop::option::of(key()), prop::option::of(key())).prop_map(|(s, lo, hi)| Op::DeleteRange(s, lo, hi)),
        6 => (
            prop::collection::vec((ks(), key(), prop::option::of(value())), 1..8),
            prop::option::weighted(0.2, (ks(), key(), key())),
        )
            .prop_map(|(items, range)| Op::Batch(items, range)),
        12 => (ks(), key()).prop_map(|(s, k)| Op::Get(s, k)),
        4 => (ks(), multi_get_keys()).prop_map(|(s, k)| Op::MultiGet(s, k)),
        5 => (ks(), prop::option::of(key()), prop::option::of(key()), any::<bool>())
            .prop_map(|(s, a, b, r)| Op::Range(s, a, b, r)),
        3 => (ks(), prop::option::of(key()), prop::option::of(key()), key(), any::<bool>(), 1usize..6)
            .prop_map(|(ks, lo, hi, at, back, take)| Op::Seek { ks, lo, hi, at, back, take }),
        2 => (ks(), (0u16..120), 1usize..4, any::<bool>()).prop_map(|(s, k, len, rev)| {
            let mut p = format!("k{k:03}").into_bytes();
            p.truncate(len);
            Op::Prefix(s, p, rev)
        }),
        2 => Just(Op::TakeSnapshot),
        1 => Just(Op::Checkpoint),
        4 => (any::<usize>(), ks(), key()).prop_map(|(i, s, k)| Op::SnapshotGet(i, s, k)),
        2 => (any::<usize>(), ks(), any::<bool>()).prop_map(|(i, s, r)| Op::SnapshotRange(i, s, r)),
        2 => (any::<usize>(), ks(), multi_get_keys()).prop_map(|(i, s, k)| Op::SnapshotMultiGet(i, s, k)),
        1 => (1usize..3).prop_map(Op::DropKeyspace),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        4 => Just(Op::TxBegin),
        4 => (any::<usize>(), ks(), key()).prop_map(|(i, s, k)| Op::TxGet(i, s, k)),
        4 => (any::<usize>(), ks(), key()).prop_map(|(i, s, k)| Op::TxGetForUpdate(i, s, k)),
        8 => (any::<usize>(), ks(), key(), value()).prop_map(|(i, s, k, v)| Op::TxPut(i, s, k, v)),
        2 => (any::<usize>(), ks(), key()).prop_map(|(i, s, k)| Op::TxDelete(i, s, k)),
        1 => (any::<usize>(), ks(), prop::option::of(key()), prop::option::of(key()))
            .prop_map(|(i, s, lo, hi)| Op::TxDeleteRange(i, s, lo, hi)),
        2 => (any::<usize>(), ks(), prop::option::of(key()), prop::option::of(key()), any::<bool>())
            .prop_map(|(i, s, lo, hi, r)| Op::TxRange(i, s, lo, hi, r)),
        1 => (any::<usize>(), ks(), multi_get_keys()).prop_map(|(i, s, k)| Op::TxMultiGet(i, s, k)),
        4 => any::<usize>().prop_map(Op::TxCommit),
        1 => any::<usize>().prop_map(Op::TxDrop),
    ]
}

/// One keyspace in a transaction: the default one through the transaction itself, the
/// others through its `keyspace` view.
enum TxView<'a> {
    Tx(&'a Transaction),
    Ks(TxKeyspace<'a>),
}

impl TxView<'_> {
    fn of<'a>(tx: &'a Transaction, d: &Open, s: usize) -> TxView<'a> {
        if s == 0 {
            TxView::Tx(tx)
        } else {
            TxView::Ks(tx.keyspace(&d.ks[s]))
        }
    }
    fn get(&self, k: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        match self {
            TxView::Tx(t) => t.get(k),
            TxView::Ks(t) => t.get(k),
        }
    }
    fn get_for_update(&self, k: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        match self {
            TxView::Tx(t) => t.get_for_update(k),
            TxView::Ks(t) => t.get_for_update(k),
        }
    }
    fn put(&self, k: &[u8], v: &[u8]) -> shamba::Result<()> {
        match self {
            TxView::Tx(t) => t.put(k, v),
            TxView::Ks(t) => t.put(k, v),
        }
    }
    fn delete(&self, k: &[u8]) -> shamba::Result<()> {
        match self {
            TxView::Tx(t) => t.delete(k),
            TxView::Ks(t) => t.delete(k),
        }
    }
    fn delete_range(&self, r: (Bound<Vec<u8>>, Bound<Vec<u8>>)) -> shamba::Result<()> {
        match self {
            TxView::Tx(t) => t.delete_range::<Vec<u8>, _>(r),
            TxView::Ks(t) => t.delete_range::<Vec<u8>, _>(r),
        }
    }
    fn multi_get(&self, keys: &[Vec<u8>]) -> Vec<shamba::Result<Option<Vec<u8>>>> {
        match self {
            TxView::Tx(t) => t.multi_get(keys),
            TxView::Ks(t) => t.multi_get(keys),
        }
    }
    fn range(&self, r: (Bound<Vec<u8>>, Bound<Vec<u8>>)) -> DbIterator {
        match self {
            TxView::Tx(t) => t.range::<Vec<u8>, _>(r),
            TxView::Ks(t) => t.range::<Vec<u8>, _>(r),
        }
    }
}

/// A range of keys of one keyspace, `lo..hi`, unbounded where `None`.
type KeyRange = (usize, Option<Vec<u8>>, Option<Vec<u8>>);

/// An open transaction and what the models say of it.
struct ModelTx {
    tx: Transaction,
    /// The write clock when it began: a write to a key it checks, after this, is a conflict.
    began: u64,
    /// What it reads: the models of its moment with its own writes applied.
    view: Models,
    /// The deadlines of `view`'s keys that expire.
    deadlines: Deadlines,
    /// Its last write per key (`None`: a delete), as the engine buffers them: a range
    /// delete drops the writes it covers.
    writes: BTreeMap<(usize, Vec<u8>), Option<Vec<u8>>>,
    /// Its range deletes, in order.
    ranges: Vec<KeyRange>,
    for_update: BTreeSet<(usize, Vec<u8>)>,
}

/// When each key was last written, by the write clock: point writes by key, range deletes
/// as ranges (they write every key in them, present or not).
#[derive(Default)]
struct WriteClock {
    now: u64,
    points: BTreeMap<(usize, Vec<u8>), u64>,
    ranges: Vec<(KeyRange, u64)>,
}

impl WriteClock {
    fn point(&mut self, s: usize, k: &[u8]) {
        self.now += 1;
        self.points.insert((s, k.to_vec()), self.now);
    }
    fn range(&mut self, s: usize, lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>) {
        self.now += 1;
        self.ranges.push(((s, lo.clone(), hi.clone()), self.now));
    }
    /// Whether key `k` of keyspace `s` was written after `since`.
    fn written_after(&self, s: usize, k: &[u8], since: u64) -> bool {
        self.points.get(&(s, k.to_vec())).is_some_and(|&t| t > since)
            || self.ranges.iter().any(|((rs, lo, hi), t)| {
                *rs == s
                    && *t > since
                    && lo.as_deref().is_none_or(|lo| k >= lo)
                    && hi.as_deref().is_none_or(|hi| k < hi)
            })
    }
}

fn in_range(k: &[u8], lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>) -> bool {
    lo.as_deref().is_none_or(|lo| k >= lo) && hi.as_deref().is_none_or(|hi| k < hi)
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
    PartitionedFineRibbonTogether,
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
        Just(FilterSetup::PartitionedFineRibbonTogether),
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
        FilterSetup::PartitionedFineRibbonTogether => {
            // Many one-column modules, the ones not resident read together.
            o.partition_index_and_filters = true;
            o.metadata_partition_size = 96;
            o.filter_policy.ribbon_from_level = Some(0);
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 6 });
            o.probe_policy = ProbePolicy::Shamba(ShambaPolicy {
                skipping: Skipping::HitOdds,
                warmup_lookups: 5,
                read_rest_together: true,
                ..ShambaPolicy::default()
            });
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

/// One keyspace as the test reads and writes it: the default one through `Db`'s own
/// methods, the others through their `Keyspace`.
enum View<'a> {
    Db(&'a Db),
    Ks(&'a Keyspace),
}

impl View<'_> {
    fn put(&self, k: &[u8], v: &[u8]) -> shamba::Result<()> {
        match self {
            View::Db(d) => d.put(k, v),
            View::Ks(s) => s.put(k, v),
        }
    }
    fn put_with_ttl(&self, k: &[u8], v: &[u8], ttl: Duration) -> shamba::Result<()> {
        match self {
            View::Db(d) => d.put_with_ttl(k, v, ttl),
            View::Ks(s) => s.put_with_ttl(k, v, ttl),
        }
    }
    fn expire_after(&self, k: &[u8], ttl: Duration) -> shamba::Result<bool> {
        match self {
            View::Db(d) => d.expire_after(k, ttl),
            View::Ks(s) => s.expire_after(k, ttl),
        }
    }
    fn persist(&self, k: &[u8]) -> shamba::Result<bool> {
        match self {
            View::Db(d) => d.persist(k),
            View::Ks(s) => s.persist(k),
        }
    }
    fn ttl(&self, k: &[u8]) -> shamba::Result<Ttl> {
        match self {
            View::Db(d) => d.ttl(k),
            View::Ks(s) => s.ttl(k),
        }
    }
    fn delete(&self, k: &[u8]) -> shamba::Result<()> {
        match self {
            View::Db(d) => d.delete(k),
            View::Ks(s) => s.delete(k),
        }
    }
    fn delete_range(&self, r: (Bound<Vec<u8>>, Bound<Vec<u8>>)) -> shamba::Result<()> {
        match self {
            View::Db(d) => d.delete_range::<Vec<u8>, _>(r),
            View::Ks(s) => s.delete_range::<Vec<u8>, _>(r),
        }
    }
    fn get(&self, k: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        match self {
            View::Db(d) => d.get(k),
            View::Ks(s) => s.get(k),
        }
    }
    fn multi_get(&self, keys: &[Vec<u8>]) -> Vec<shamba::Result<Option<Vec<u8>>>> {
        match self {
            View::Db(d) => d.multi_get(keys),
            View::Ks(s) => s.multi_get(keys),
        }
    }
    fn range(&self, r: (Bound<Vec<u8>>, Bound<Vec<u8>>)) -> DbIterator {
        match self {
            View::Db(d) => d.range::<Vec<u8>, _>(r),
            View::Ks(s) => s.range::<Vec<u8>, _>(r),
        }
    }
    fn prefix(&self, p: &[u8]) -> DbIterator {
        match self {
            View::Db(d) => d.prefix(p),
            View::Ks(s) => s.prefix(p),
        }
    }
}

/// The database and a handle of each named keyspace (index 0 unused: `Db` is its handle).
struct Open {
    db: Db,
    ks: Vec<Keyspace>,
}

impl Open {
    fn new(db: Db) -> Open {
        let ks = KEYSPACES.iter().map(|name| db.keyspace(name).expect("keyspace")).collect();
        Open { db, ks }
    }

    fn view(&self, i: usize) -> View<'_> {
        if i == 0 {
            View::Db(&self.db)
        } else {
            View::Ks(&self.ks[i])
        }
    }

    /// Keyspace `i`'s handle, taken again (a dropped keyspace comes back empty).
    fn refresh(&mut self, i: usize) {
        self.ks[i] = self.db.keyspace(KEYSPACES[i]).expect("keyspace again");
    }

    fn close(self) {
        drop(self.ks);
        self.db.close().expect("close");
    }
}

fn bounds(lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    (lo.clone().map_or(Bound::Unbounded, Bound::Included), hi.clone().map_or(Bound::Unbounded, Bound::Excluded))
}

fn pairs(m: &Model) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Keyspace `b`'s options: the other compaction style, and plain whole filters.
fn keyspace_b(style: CompactionStyle, ratio: u32) -> KeyspaceOptions {
    let other = if style == CompactionStyle::Leveled { CompactionStyle::Tiered } else { CompactionStyle::Leveled };
    let mut o = KeyspaceOptions::of(&options(other, ratio));
    o.block_size = 512;
    o
}

/// The most filter bytes the database may hold at once: the budget (one cap shared by
/// every keyspace), else the Elastic policy's own budget in each of the two keyspaces
/// that run it (the default one and `a`; `b` runs Plain).
fn filter_cap(o: &Options) -> Option<u64> {
    match (o.filter_memory_budget, &o.probe_policy) {
        (Some(budget), _) => Some(budget),
        (None, shamba::ProbePolicy::Elastic(p)) => Some(2 * p.budget_bytes),
        (None, _) => None,
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
    let wall = Arc::new(ManualClock::new(UNIX_EPOCH + Duration::from_millis(CLOCK_START_MS)));
    let mut now_ms = CLOCK_START_MS;
    let opts = || {
        let mut o = options(style, ratio);
        o.clock = wall.clone();
        apply(setup, &mut o);
        o.filter_memory_budget = budget;
        o.keyspace_options = vec![("b".to_string(), keyspace_b(style, ratio))];
        o
    };
    let cap = filter_cap(&opts());
    let mut db = Some(Open::new(Db::open(dir.path(), opts()).expect("open")));
    let mut models: Models = Default::default();
    let mut deadlines: Deadlines = Default::default();
    let mut snaps: Vec<(Snapshot, Models, Deadlines)> = Vec::new();
    let mut txs: Vec<ModelTx> = Vec::new();
    let mut clock = WriteClock::default();
    for (step, op) in ops.into_iter().enumerate() {
        let d = db.as_mut().expect("db open");
        match op {
            Op::Put(s, k, v) => {
                d.view(s).put(&k, &v).expect("put");
                deadlines[s].remove(&k);
                clock.point(s, &k);
                models[s].insert(k, v);
            }
            Op::PutTtl(s, k, v, ttl) => {
                d.view(s).put_with_ttl(&k, &v, Duration::from_millis(ttl)).expect("put_with_ttl");
                deadlines[s].insert(k.clone(), now_ms + ttl);
                clock.point(s, &k);
                models[s].insert(k, v);
            }
            Op::Advance(ms) => {
                wall.advance(Duration::from_millis(ms));
                now_ms += ms;
                expire(&mut models, &mut deadlines, now_ms);
                for (_, m, dl) in &mut snaps {
                    expire(m, dl, now_ms);
                }
                for t in &mut txs {
                    expire(&mut t.view, &mut t.deadlines, now_ms);
                }
            }
            Op::Ttl(s, k) => {
                let want = match (models[s].contains_key(&k), deadlines[s].get(&k)) {
                    (false, _) => Ttl::Absent,
                    (true, None) => Ttl::Persistent,
                    (true, Some(at)) => Ttl::Remaining(Duration::from_millis(at - now_ms)),
                };
                prop_assert_eq!(d.view(s).ttl(&k).expect("ttl"), want, "step {}: ttl {:?} in {}", step, k, s);
            }
            Op::Expire(s, k, ttl) => {
                let had = models[s].contains_key(&k);
                let got = d.view(s).expire_after(&k, Duration::from_millis(ttl)).expect("expire");
                prop_assert_eq!(got, had, "step {}: expire {:?} in {}", step, k, s);
                if had {
                    deadlines[s].insert(k.clone(), now_ms + ttl);
                    clock.point(s, &k);
                }
            }
            Op::Persist(s, k) => {
                let had = deadlines[s].remove(&k).is_some();
                prop_assert_eq!(
                    d.view(s).persist(&k).expect("persist"),
                    had,
                    "step {}: persist {:?} in {}",
                    step,
                    k,
                    s
                );
                if had {
                    clock.point(s, &k);
                }
            }
            Op::Delete(s, k) => {
                d.view(s).delete(&k).expect("delete");
                deadlines[s].remove(&k);
                clock.point(s, &k);
                models[s].remove(&k);
            }
            Op::DeleteRange(s, lo, hi) => {
                d.view(s).delete_range(bounds(&lo, &hi)).expect("delete_range");
                clock.range(s, &lo, &hi);
                for (k, _) in expected_range(&models[s], &lo, &hi) {
                    deadlines[s].remove(&k);
                    models[s].remove(&k);
                }
            }
            Op::Batch(items, range) => {
                let mut b = WriteBatch::new();
                for (s, k, v) in &items {
                    match (v, *s) {
                        (Some(v), 0) => b.put(k, v),
                        (Some(v), s) => b.put_in(&d.ks[s], k, v),
                        (None, 0) => b.delete(k),
                        (None, s) => b.delete_in(&d.ks[s], k),
                    };
                    deadlines[*s].remove(k);
                    match v {
                        Some(v) => models[*s].insert(k.clone(), v.clone()),
                        None => models[*s].remove(k),
                    };
                    clock.point(*s, k);
                }
                if let Some((s, lo, hi)) = range {
                    clock.range(s, &Some(lo.clone()), &Some(hi.clone()));
                    let r = bounds(&Some(lo.clone()), &Some(hi.clone()));
                    if s == 0 {
                        b.delete_range::<Vec<u8>, _>(r);
                    } else {
                        b.delete_range_in::<Vec<u8>, _>(&d.ks[s], r);
                    }
                    for (k, _) in expected_range(&models[s], &Some(lo), &Some(hi)) {
                        deadlines[s].remove(&k);
                        models[s].remove(&k);
                    }
                }
                d.db.write(b).expect("write batch");
            }
            Op::Get(s, k) => {
                let got = d.view(s).get(&k).expect("get");
                prop_assert_eq!(got, models[s].get(&k).cloned(), "step {}: get {:?} in {}", step, k, s);
            }
            Op::MultiGet(s, keys) => {
                let got: Vec<_> = d.view(s).multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
                let want: Vec<_> = keys.iter().map(|k| models[s].get(k).cloned()).collect();
                prop_assert_eq!(got, want, "step {}: multi_get {:?} in {}", step, keys, s);
            }
            Op::Range(s, lo, hi, rev) => {
                let want = expected_range(&models[s], &lo, &hi);
                let it = d.view(s).range(bounds(&lo, &hi));
                let got = if rev {
                    let mut g = collect(it.rev());
                    g.reverse();
                    g
                } else {
                    collect(it)
                };
                prop_assert_eq!(got, want, "step {}: range {:?}..{:?} rev={} in {}", step, lo, hi, rev, s);
            }
            Op::Seek { ks: s, lo, hi, at, back, take } => {
                let all = expected_range(&models[s], &lo, &hi);
                let want: Vec<_> = if back {
                    all.iter().rev().filter(|(k, _)| *k <= at).take(take).cloned().collect()
                } else {
                    all.iter().filter(|(k, _)| *k >= at).take(take).cloned().collect()
                };
                let mut it = d.view(s).range(bounds(&lo, &hi));
                // Walk a little first: a seek restarts the walk wherever it was.
                let _ = if back { it.next_back() } else { it.next() };
                let got = if back {
                    it.seek_for_prev(&at);
                    collect(it.rev().take(take))
                } else {
                    it.seek(&at);
                    collect(it.take(take))
                };
                prop_assert_eq!(got, want, "step {}: seek {:?} in {:?}..{:?} back={} in {}", step, at, lo, hi, back, s);
            }
            Op::Prefix(s, p, rev) => {
                let want: Vec<_> =
                    models[s].iter().filter(|(k, _)| k.starts_with(&p)).map(|(k, v)| (k.clone(), v.clone())).collect();
                let got = if rev {
                    let mut g = collect(d.view(s).prefix(&p).rev());
                    g.reverse();
                    g
                } else {
                    collect(d.view(s).prefix(&p))
                };
                prop_assert_eq!(got, want, "step {}: prefix {:?} in {}", step, p, s);
            }
            Op::Checkpoint => {
                let out = dir.path().join(format!("checkpoint-{step}"));
                d.db.checkpoint(&out).expect("checkpoint");
                let cp = Open::new(Db::open(&out, opts()).expect("open the checkpoint"));
                for (s, m) in models.iter().enumerate() {
                    let got = collect(cp.view(s).range((Bound::Unbounded, Bound::Unbounded)));
                    prop_assert_eq!(got, pairs(m), "step {}: checkpoint, keyspace {}", step, s);
                }
                cp.close();
            }
            Op::TakeSnapshot => snaps.push((d.db.snapshot(), models.clone(), deadlines.clone())),
            Op::SnapshotGet(i, s, k) => {
                if let Some((snap, m, _)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    let got = if s == 0 { snap.get(&k) } else { snap.keyspace(&d.ks[s]).get(&k) };
                    prop_assert_eq!(got.expect("snapshot get"), m[s].get(&k).cloned(), "step {}: snapshot get", step);
                }
            }
            Op::SnapshotMultiGet(i, s, keys) => {
                if let Some((snap, m, _)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    let got = if s == 0 { snap.multi_get(&keys) } else { snap.keyspace(&d.ks[s]).multi_get(&keys) };
                    let got: Vec<_> = got.into_iter().map(|r| r.expect("snapshot multi_get")).collect();
                    let want: Vec<_> = keys.iter().map(|k| m[s].get(k).cloned()).collect();
                    prop_assert_eq!(got, want, "step {}: snapshot multi_get", step);
                }
            }
            Op::SnapshotRange(i, s, rev) => {
                if let Some((snap, m, _)) = (!snaps.is_empty()).then(|| &snaps[i % snaps.len()]) {
                    let it = if s == 0 { snap.iter() } else { snap.keyspace(&d.ks[s]).iter() };
                    let got = if rev {
                        let mut g = collect(it.rev());
                        g.reverse();
                        g
                    } else {
                        collect(it)
                    };
                    prop_assert_eq!(got, pairs(&m[s]), "step {}: snapshot scan of {}", step, s);
                }
            }
            Op::DropKeyspace(s) => {
                // Open transactions are rolled back first: one that wrote the dropped
                // keyspace could not commit.
                txs.clear();
                d.db.drop_keyspace(KEYSPACES[s]).expect("drop_keyspace");
                prop_assert!(d.ks[s].get(b"k000").is_err(), "a dropped keyspace's handle must fail");
                models[s].clear();
                deadlines[s].clear();
                d.refresh(s);
                // The keyspace that comes back is a new one: a snapshot taken before the
                // drop sees it empty.
                for (_, m, dl) in &mut snaps {
                    m[s].clear();
                    dl[s].clear();
                }
            }
            Op::Flush => d.db.flush().expect("flush"),
            Op::Compact => d.db.compact().expect("compact"),
            Op::Reopen => {
                snaps.clear();
                txs.clear();
                db.take().expect("db").close();
                db = Some(Open::new(Db::open(dir.path(), opts()).expect("reopen")));
            }
            Op::TxBegin => {
                if txs.len() == 3 {
                    txs.remove(0);
                }
                let tx = d.db.transaction();
                txs.push(ModelTx {
                    tx,
                    began: clock.now,
                    view: models.clone(),
                    deadlines: deadlines.clone(),
                    writes: BTreeMap::new(),
                    ranges: Vec::new(),
                    for_update: BTreeSet::new(),
                });
            }
            Op::TxGet(i, s, ref k) | Op::TxGetForUpdate(i, s, ref k) if !txs.is_empty() => {
                let for_update = matches!(op, Op::TxGetForUpdate(..));
                let k = k.clone();
                let n = txs.len();
                let t = &mut txs[i % n];
                let v = TxView::of(&t.tx, d, s);
                let got = if for_update { v.get_for_update(&k) } else { v.get(&k) }.expect("transaction get");
                prop_assert_eq!(got, t.view[s].get(&k).cloned(), "step {}: transaction get {:?} in {}", step, k, s);
                if for_update {
                    t.for_update.insert((s, k));
                }
            }
            Op::TxPut(i, s, k, v) if !txs.is_empty() => {
                let n = txs.len();
                let t = &mut txs[i % n];
                TxView::of(&t.tx, d, s).put(&k, &v).expect("transaction put");
                t.view[s].insert(k.clone(), v.clone());
                t.deadlines[s].remove(&k);
                t.writes.insert((s, k), Some(v));
            }
            Op::TxDelete(i, s, k) if !txs.is_empty() => {
                let n = txs.len();
                let t = &mut txs[i % n];
                TxView::of(&t.tx, d, s).delete(&k).expect("transaction delete");
                t.view[s].remove(&k);
                t.deadlines[s].remove(&k);
                t.writes.insert((s, k), None);
            }
            Op::TxDeleteRange(i, s, lo, hi) if !txs.is_empty() => {
                let n = txs.len();
                let t = &mut txs[i % n];
                TxView::of(&t.tx, d, s).delete_range(bounds(&lo, &hi)).expect("transaction delete_range");
                for (k, _) in expected_range(&t.view[s], &lo, &hi) {
                    t.view[s].remove(&k);
                    t.deadlines[s].remove(&k);
                }
                // An empty range deletes nothing, as the engine skips it.
                if lo.is_none() || hi.is_none() || lo < hi {
                    t.writes.retain(|(ws, k), _| *ws != s || !in_range(k, &lo, &hi));
                    t.ranges.push((s, lo, hi));
                }
            }
            Op::TxRange(i, s, lo, hi, rev) if !txs.is_empty() => {
                let n = txs.len();
                let t = &txs[i % n];
                let want = expected_range(&t.view[s], &lo, &hi);
                let it = TxView::of(&t.tx, d, s).range(bounds(&lo, &hi));
                let got = if rev {
                    let mut g = collect(it.rev());
                    g.reverse();
                    g
                } else {
                    collect(it)
                };
                prop_assert_eq!(got, want, "step {}: transaction range {:?}..{:?} rev={} in {}", step, lo, hi, rev, s);
            }
            Op::TxMultiGet(i, s, keys) if !txs.is_empty() => {
                let n = txs.len();
                let t = &txs[i % n];
                let got: Vec<_> =
                    TxView::of(&t.tx, d, s).multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
                let want: Vec<_> = keys.iter().map(|k| t.view[s].get(k).cloned()).collect();
                prop_assert_eq!(got, want, "step {}: transaction multi_get in {}", step, s);
            }
            Op::TxCommit(i) if !txs.is_empty() => {
                let n = txs.len();
                let t = txs.remove(i % n);
                let checked: BTreeSet<(usize, Vec<u8>)> =
                    t.writes.keys().cloned().chain(t.for_update.iter().cloned()).collect();
                let conflict = checked.iter().find(|(s, k)| clock.written_after(*s, k, t.began));
                match (t.tx.commit(), conflict) {
                    (Err(shamba::Error::Conflict { .. }), Some(_)) => {}
                    (Ok(()), Some(k)) => prop_assert!(false, "step {}: a commit went through a write to {:?}", step, k),
                    // The writes since its snapshot were flushed: it cannot be checked.
                    (Err(shamba::Error::Conflict { reason, .. }), None) if reason.contains("flushed") => {}
                    (Ok(()), None) => {
                        for (s, lo, hi) in &t.ranges {
                            for (k, _) in expected_range(&models[*s], lo, hi) {
                                models[*s].remove(&k);
                                deadlines[*s].remove(&k);
                            }
                            clock.range(*s, lo, hi);
                        }
                        for ((s, k), v) in t.writes {
                            clock.point(s, &k);
                            deadlines[s].remove(&k);
                            match v {
                                Some(v) => models[s].insert(k, v),
                                None => models[s].remove(&k),
                            };
                        }
                    }
                    (other, _) => prop_assert!(false, "step {}: commit: {:?}", step, other),
                }
            }
            Op::TxDrop(i) if !txs.is_empty() => {
                let n = txs.len();
                txs.remove(i % n);
            }
            Op::TxGet(..)
            | Op::TxGetForUpdate(..)
            | Op::TxPut(..)
            | Op::TxDelete(..)
            | Op::TxDeleteRange(..)
            | Op::TxRange(..)
            | Op::TxMultiGet(..)
            | Op::TxCommit(_)
            | Op::TxDrop(_) => {}
        }
        // The filter bytes held never passed the cap, at any moment since open (the peak),
        // whatever the step did.
        let stats = db.as_ref().expect("db").db.stats();
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
    drop(txs);
    // Whatever happened, the full scan of every keyspace in both directions equals its
    // model.
    let d = db.as_ref().expect("db");
    for (s, m) in models.iter().enumerate() {
        let want = pairs(m);
        prop_assert_eq!(collect(d.view(s).range((Bound::Unbounded, Bound::Unbounded))), want.clone());
        let mut back = collect(d.view(s).range((Bound::Unbounded, Bound::Unbounded)).rev());
        back.reverse();
        prop_assert_eq!(back, want);
    }
    prop_assert_eq!(d.db.keyspace_names(), KEYSPACES.map(String::from).to_vec());
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
