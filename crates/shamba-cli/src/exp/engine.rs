//! The harness of the engine experiments (`hash-sharing`, `memory-pressure`, `modules`,
//! `elastic`, `monkey`, `headline`): load a tree once, reopen it as often as needed with
//! another probe policy, cache size or device, and measure point lookups with `bench`'s
//! read loop (so `shamba bench` and `shamba exp` count the same things the same way).
//!
//! Every reopen starts from the tree exactly as it was loaded: the files that are not SSTs
//! (manifest, CURRENT, WAL) are restored from a copy taken after the load, because the
//! filter manager persists per-table alpha/beta in the manifest on close and one
//! measurement's statistics must not steer the next. The block cache starts cold on each
//! open; the OS page cache stays warm (the files were just written or read), so a "device
//! read" is a block that missed the engine's cache, served by the page cache plus the
//! emulated device cost.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use shamba::storage::{DirLock, DirectReadFsStorage, FsStorage, RandomRead, SequentialWrite, Storage};
use shamba::{Db, Options, Stats, WriteOptions};
use tempfile::TempDir;

use crate::bench::keys::KeyDistribution;
use crate::bench::report::PhaseResult;
use crate::bench::{read_phase, BenchArgs, ReadKind};

/// How big the levels are, in bytes (everything else of [`Options`] at its default).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Memtable size.
    pub write_buffer: usize,
    /// Target SST size.
    pub target_file: u64,
    /// Size of L1.
    pub level_base: u64,
    /// Growth factor between levels.
    pub size_ratio: u32,
    /// Levels, L0 included.
    pub num_levels: usize,
}

impl Shape {
    /// The tree of the RocksDB measurements and of seed 002 (4 MiB memtable and
    /// files, size ratio 4): 2M keys of 32 B + 32 B values make 3 levels.
    pub const PRESSURE: Shape =
        Shape { write_buffer: 4 << 20, target_file: 4 << 20, level_base: 16 << 20, size_ratio: 4, num_levels: 7 };

    /// Options with this shape. An L0 file is compacted as soon as it appears, so after the
    /// load settles L0 is empty and two builds of the same data (with different filters)
    /// have the same levels: otherwise the L0 files the last flushes leave behind depend on
    /// background timing, and each one adds a table to every lookup.
    pub fn options(&self) -> Options {
        Options {
            level0_compaction_trigger: 1,
            write_buffer_size: self.write_buffer,
            target_file_size: self.target_file,
            max_bytes_for_level_base: self.level_base,
            size_ratio: self.size_ratio,
            num_levels: self.num_levels,
            ..Options::default()
        }
    }
}

/// What to load: `num` keys (the even ids `0, 2, .., 2(num-1)` in a random order) of
/// `key_size` bytes with `value_size`-byte values, into a database opened with `options`.
#[derive(Debug, Clone)]
pub struct TreeSpec {
    /// Keys.
    pub num: u64,
    /// Key bytes (at least 8).
    pub key_size: usize,
    /// Value bytes.
    pub value_size: usize,
    /// Shape, filter build policy and anything else fixed at load.
    pub options: Options,
    /// Load order seed.
    pub seed: u64,
    /// Flush after every this many keys (exact memtable sizes: with tiered T = 2 the tree
    /// after `2^k - 1` flushes has exactly k levels); `None` = when the memtable is full.
    pub flush_every: Option<u64>,
}

/// A loaded, settled and closed tree that can be reopened many times.
pub struct LoadedTree {
    dir: TempDir,
    pristine: TempDir,
    /// What was loaded.
    pub spec: TreeSpec,
    /// The tree after the load (levels, filter and index bytes).
    pub stats: Stats,
    /// Seconds to load, flush and settle.
    pub load_seconds: f64,
}

impl LoadedTree {
    /// Load, flush, wait for compactions, close, and keep a copy of the non-SST files; with
    /// `--trees DIR`, take the tree from there when a run loaded it before, and leave it
    /// there otherwise ([`super::tree_store`]).
    pub fn load(spec: TreeSpec) -> Result<LoadedTree, Box<dyn Error>> {
        let entry = super::tree_store::Entry::of(&spec);
        LoadedTree::load_or_take(spec, entry)
    }

    /// [`LoadedTree::load`] with the store's `entry` for `spec` (`None`: no store).
    fn load_or_take(spec: TreeSpec, entry: Option<super::tree_store::Entry>) -> Result<LoadedTree, Box<dyn Error>> {
        let Some(entry) = entry else { return LoadedTree::load_fresh(spec) };
        if let Some(load_seconds) = entry.load_seconds() {
            let dir = tempfile::tempdir()?;
            entry.copy_to(dir.path())?;
            let pristine = keep_pristine(dir.path())?;
            // The shape and filter bytes, as the load's close left them (the load's own
            // counters, bytes written and the like, are not kept: `load_fresh` has them).
            let db = Db::open(dir.path(), without_sync(spec.options.clone()))?;
            let stats = db.stats();
            db.close()?;
            return Ok(LoadedTree { dir, pristine, spec, stats, load_seconds });
        }
        let tree = LoadedTree::load_fresh(spec)?;
        entry.put(tree.dir.path(), tree.load_seconds)?;
        Ok(tree)
    }

    /// [`LoadedTree::load`] without the store: always loads, and [`LoadedTree::stats`] has
    /// the load's own counters (bytes flushed and compacted).
    pub fn load_fresh(spec: TreeSpec) -> Result<LoadedTree, Box<dyn Error>> {
        if spec.key_size < 8 {
            return Err("key size must be at least 8".into());
        }
        let dir = tempfile::tempdir()?;
        let start = Instant::now();
        let db = Db::open(dir.path(), without_sync(spec.options.clone()))?;
        let ids = shuffled_ids(spec.num, spec.seed);
        let chunk = spec.flush_every.unwrap_or(spec.num).max(1) as usize;
        // Sorting a flush's keys keeps the tree only if the memtable does not fill half-way
        // through them (it would cut the flush by key range, not at random), or if, tiered,
        // the runs it cuts are merged whole into one run anyway.
        let tiered = spec.options.compaction_style == shamba::CompactionStyle::Tiered;
        let sort = spec.flush_every.is_some() && (tiered || fits_memtable(&spec, chunk as u64));
        let mut sorted = Vec::new();
        for part in ids.chunks(chunk) {
            if sort {
                // One flush's keys in key order: the same keys make the same tables, and a
                // skiplist takes ascending inserts along one cached path, where random ones
                // miss the cache at every node (most of a load of millions of keys).
                sorted.clear();
                sorted.extend_from_slice(part);
                sorted.sort_unstable();
                load_ids(&db, &sorted, spec.key_size, spec.value_size)?;
            } else {
                load_ids(&db, part, spec.key_size, spec.value_size)?;
            }
            if spec.flush_every.is_some() {
                // Settle after each flush: a compaction then merges exactly the runs one flush
                // made due, so the shape does not depend on background timing.
                settle(&db)?;
            }
        }
        settle(&db)?;
        let load_seconds = start.elapsed().as_secs_f64();
        let stats = db.stats();
        db.close()?;
        let pristine = keep_pristine(dir.path())?;
        Ok(LoadedTree { dir, pristine, spec, stats, load_seconds })
    }

    /// Open the tree as loaded with `options` (which must keep the load's shape; the probe
    /// policy, cache, device and pinning may differ). The block cache starts cold.
    pub fn open(&self, options: Options) -> Result<Db, Box<dyn Error>> {
        self.reopen(without_sync(options))
    }

    /// [`LoadedTree::open`] with table reads through `O_DIRECT` (`direct`) or the OS page
    /// cache: with `O_DIRECT` a block the engine does not hold costs a read from this
    /// machine's disk, filter loads included.
    pub fn open_reads(&self, options: Options, direct: bool) -> Result<Db, Box<dyn Error>> {
        if !direct {
            return self.open(options);
        }
        let db = self.reopen(with_direct_reads(options))?;
        // A file system that refuses O_DIRECT (tmpfs) fails at the first table read, not
        // at open: say so before any figure is taken.
        if let Some(f) = db.files().first() {
            let path = self.dir.path().join(format!("{:06}.sst", f.number));
            DirectReadFsStorage
                .open_read(&path)
                .map_err(|e| format!("O_DIRECT reads in {}: {e}", self.dir.path().display()))?;
        }
        Ok(db)
    }

    fn reopen(&self, options: Options) -> Result<Db, Box<dyn Error>> {
        for entry in std::fs::read_dir(self.dir.path())? {
            let path = entry?.path();
            if !is_table(&path) && path.is_file() {
                std::fs::remove_file(&path)?;
            }
        }
        for entry in std::fs::read_dir(self.pristine.path())? {
            let path = entry?.path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, self.dir.path().join(name))?;
            }
        }
        Ok(Db::open(self.dir.path(), options)?)
    }

    /// Filter plus index bytes: what cache sizes are a percentage of.
    pub fn metadata_bytes(&self) -> u64 {
        self.stats.metadata_bytes()
    }

    /// Filter bytes of the whole tree.
    pub fn filter_bytes(&self) -> u64 {
        self.stats.levels.iter().map(|l| l.filter_bytes).sum()
    }

    /// Non-empty levels, L0 included.
    pub fn levels(&self) -> usize {
        self.stats.non_empty_levels()
    }

    /// One line describing the tree.
    pub fn describe(&self) -> String {
        describe_tree(&self.stats, self.spec.num, self.spec.key_size, self.spec.value_size)
    }
}

/// A copy of the files of the closed tree in `dir` that are not tables (manifest, CURRENT,
/// WAL), which every reopen restores.
fn keep_pristine(dir: &Path) -> Result<TempDir, Box<dyn Error>> {
    let pristine = tempfile::tempdir()?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !is_table(&path) && path.is_file() {
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, pristine.path().join(name))?;
            }
        }
    }
    Ok(pristine)
}

/// One line describing a tree: keys, levels, files, filter and index bytes.
pub fn describe_tree(s: &Stats, num: u64, key_size: usize, value_size: usize) -> String {
    let filter: u64 = s.levels.iter().map(|l| l.filter_bytes).sum();
    let index: u64 = s.levels.iter().map(|l| l.index_bytes).sum();
    let per_level: Vec<String> = s
        .levels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.files > 0)
        .map(|(i, l)| format!("L{i}:{}f/{}k", l.files, l.entries / 1000))
        .collect();
    format!(
        "{num} keys of {key_size} B + {value_size} B values; {} levels ({}), {} files; filters {:.2} MiB, indexes {:.2} MiB",
        s.non_empty_levels(),
        per_level.join(" "),
        s.total_files(),
        filter as f64 / (1 << 20) as f64,
        index as f64 / (1 << 20) as f64
    )
}

/// `options` on storage that never fsyncs: loads of temporary trees are limited by the
/// machine's fsync latency otherwise (hundreds of small flushes), and a crash only loses a
/// database the experiment would delete anyway. Reads are the file system's, unchanged.
pub fn without_sync(mut options: Options) -> Options {
    options.storage = Arc::new(NoSyncStorage { direct: false });
    options
}

/// [`without_sync`], with table reads through `O_DIRECT`.
pub fn with_direct_reads(mut options: Options) -> Options {
    options.storage = Arc::new(NoSyncStorage { direct: true });
    options
}

/// The local file system with `sync` and `sync_dir` as no-ops; positional reads through
/// `O_DIRECT` when `direct`.
struct NoSyncStorage {
    direct: bool,
}

/// A writer whose `sync` only flushes.
struct NoSyncWrite(Box<dyn SequentialWrite>);

impl SequentialWrite for NoSyncWrite {
    fn append(&mut self, data: &[u8]) -> shamba::Result<()> {
        self.0.append(data)
    }
    fn flush(&mut self) -> shamba::Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> shamba::Result<()> {
        self.0.flush()
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl Storage for NoSyncStorage {
    fn open_read(&self, path: &Path) -> shamba::Result<Arc<dyn RandomRead>> {
        if self.direct {
            DirectReadFsStorage.open_read(path)
        } else {
            FsStorage.open_read(path)
        }
    }
    fn create(&self, path: &Path) -> shamba::Result<Box<dyn SequentialWrite>> {
        Ok(Box::new(NoSyncWrite(FsStorage.create(path)?)))
    }
    fn read_all(&self, path: &Path) -> shamba::Result<Vec<u8>> {
        FsStorage.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        FsStorage.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shamba::Result<()> {
        FsStorage.remove(path)
    }
    fn list(&self, dir: &Path) -> shamba::Result<Vec<String>> {
        FsStorage.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shamba::Result<()> {
        FsStorage.create_dir_all(dir)
    }
    fn sync_dir(&self, _dir: &Path) -> shamba::Result<()> {
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        FsStorage.exists(path)
    }
    fn link(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        FsStorage.link(from, to)
    }
    fn lock(&self, path: &Path) -> shamba::Result<Box<dyn DirLock>> {
        FsStorage.lock(path)
    }
}

fn is_table(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sst")
}

/// Memtable bytes an entry takes beyond its key and value (the engine charges 80 and
/// encodes a sequence number and lengths; rounded up).
const MEMTABLE_ENTRY_OVERHEAD: u64 = 104;

/// Whether `keys` entries of `spec` fit one memtable, so no flush comes before the forced one.
fn fits_memtable(spec: &TreeSpec, keys: u64) -> bool {
    keys.saturating_mul(memtable_entry_bytes(spec.key_size, spec.value_size)) < spec.options.write_buffer_size as u64
}

/// Memtable bytes of one entry of `key_size` and `value_size` bytes, as the engine charges it.
fn memtable_entry_bytes(key_size: usize, value_size: usize) -> u64 {
    (key_size + value_size) as u64 + MEMTABLE_ENTRY_OVERHEAD
}

/// A write buffer that holds `keys` entries with room to spare, so a tree loaded with
/// `flush_every: Some(keys)` flushes only when told to. A memtable that fills half-way
/// through a flush's keys cuts them into several runs, and with tiered T = 2 the runs no
/// longer add up as a binary counter: 31 flushes of 2M keys made 3 levels, not 5.
pub fn write_buffer_for(keys: u64, key_size: usize, value_size: usize) -> usize {
    let bytes = keys.saturating_mul(memtable_entry_bytes(key_size, value_size)).saturating_mul(5) / 4;
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// The even ids `0, 2, .., 2(num-1)` in a random order.
pub fn shuffled_ids(num: u64, seed: u64) -> Vec<u64> {
    let mut ids: Vec<u64> = (0..num).map(|i| 2 * i).collect();
    ids.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    ids
}

/// Write keys `ids` (values derived from the ids) without the WAL: the experiments flush
/// before they measure, and a crash only loses a temporary database.
pub fn load_ids(db: &Db, ids: &[u64], key_size: usize, value_size: usize) -> Result<(), Box<dyn Error>> {
    let wo = WriteOptions { disable_wal: true, ..WriteOptions::default() };
    let shape = crate::bench::RecordShape { key_size, value_size, values: crate::bench::keys::Values::Alphabet };
    crate::bench::write_ids(db, ids, shape, 64, &wo, |_| ())?;
    Ok(())
}

/// Flush the memtable and wait until no compaction is due: every key is in an SST.
pub fn settle(db: &Db) -> Result<(), Box<dyn Error>> {
    db.flush()?;
    db.wait_for_compactions()?;
    Ok(())
}

/// Keys per flush of the trees whose variants are compared with each other (32 + 32 B
/// pairs: well under a 4 MiB memtable). Each flush is settled before the next write, so no
/// compaction races the load, and since files and levels are sized by data bytes, every
/// filter build of the same keys gets the same tree: variants differ in filters only.
pub const COMPARED_FLUSH_KEYS: u64 = 40_000;

/// One batch of point lookups.
#[derive(Debug, Clone)]
pub struct ReadSpec {
    /// Lookups run first and not counted (they warm the cache and the filter manager).
    pub warmup: u64,
    /// Lookups measured.
    pub reads: u64,
    /// Fraction of lookups for loaded keys (the rest miss, inside the key range).
    pub existing: f64,
    /// How keys are picked.
    pub distribution: KeyDistribution,
    /// Zipf exponent (`zipfian`, `zipf-contiguous`).
    pub zipf_theta: f64,
    /// Standard deviation of `normal` in keys (`None`: a tenth of the keys).
    pub normal_sd: Option<f64>,
    /// Share one digest per lookup (false: the unshared baseline).
    pub share_hash: bool,
    /// Random seed of the lookups.
    pub seed: u64,
    /// Time each lookup stage (`ReadLab::profile`: a few clock reads per lookup).
    pub profile: bool,
    /// Keep the data blocks lookups read in the block cache (false: a direct-I/O reader).
    pub fill_cache: bool,
    /// Keys per `multi_get` call (1: single gets).
    pub multi_get: usize,
    /// Read tables through `O_DIRECT` (where the harness opens the database itself).
    pub direct_io: bool,
}

impl ReadSpec {
    /// Uniform empty lookups with sharing.
    pub fn empty(warmup: u64, reads: u64, seed: u64) -> ReadSpec {
        ReadSpec {
            warmup,
            reads,
            existing: 0.0,
            distribution: KeyDistribution::Uniform,
            zipf_theta: super::workload::YCSB_ZIPF_THETA,
            normal_sd: None,
            share_hash: true,
            seed,
            profile: false,
            fill_cache: true,
            multi_get: 1,
            direct_io: false,
        }
    }
}

/// Run `spec` against `db`, whose loaded keys are the even ids below `2 num`: warm-up
/// lookups first (not counted), then the measured ones, on one thread.
pub fn measure(db: &Db, num: u64, key_size: usize, spec: &ReadSpec) -> Result<PhaseResult, Box<dyn Error>> {
    let mut args = BenchArgs::defaults();
    args.num = num;
    args.key_size = key_size;
    args.existing_fraction = spec.existing;
    args.distribution = spec.distribution;
    args.zipf_theta = spec.zipf_theta;
    args.normal_sd = spec.normal_sd;
    args.no_share_hash = !spec.share_hash;
    args.profile = spec.profile;
    args.no_fill_cache = !spec.fill_cache;
    args.multi_get = spec.multi_get;
    args.threads = 1;
    // Hides the progress bar.
    args.json = true;
    if spec.warmup > 0 {
        args.reads = spec.warmup;
        args.seed = spec.seed ^ 0x005E_ED0F_3A4B;
        read_phase(db, &args, ReadKind::Mixed)?;
    }
    args.reads = spec.reads;
    args.seed = spec.seed;
    read_phase(db, &args, ReadKind::Mixed)
}

/// Reopen `tree` with `v`'s probe policy and its index and filter blocks in a cold block
/// cache of `cache` bytes (Elastic may enable `elastic_budget` bytes of units), measure
/// `spec`, and close it.
pub fn measure_cached(
    tree: &LoadedTree,
    v: &super::variants::Variant,
    cache: usize,
    elastic_budget: u64,
    spec: &ReadSpec,
) -> Result<PhaseResult, Box<dyn Error>> {
    let db =
        tree.open_reads(super::variants::cached_options(&tree.spec.options, v, cache, elastic_budget), spec.direct_io)?;
    let r = measure(&db, tree.spec.num, tree.spec.key_size, spec)?;
    db.close()?;
    Ok(r)
}

/// Percent by which `slow` takes longer than `fast` (20 = "20% faster").
pub fn gain_pct(slow: f64, fast: f64) -> f64 {
    if fast > 0.0 {
        100.0 * (slow / fast - 1.0)
    } else {
        f64::NAN
    }
}

/// `a / b`, or NaN when `b` is zero.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// Tables visited per lookup (all levels).
pub fn tables_per_op(r: &PhaseResult) -> f64 {
    r.levels.iter().map(|l| l.table_lookups_per_op).sum()
}

/// The note every engine experiment carries about what its numbers mean.
pub const MEASUREMENT_NOTE: &str = "I/Os are block reads that missed the engine's block cache (the robust metric); the OS page cache is warm and serves them, plus any emulated device cost. Timings are single-threaded wall clock on a shared 2-core machine and are noisy; compare them within one run.";

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_tree() -> LoadedTree {
        let shape =
            Shape { write_buffer: 8 << 10, target_file: 16 << 10, level_base: 16 << 10, size_ratio: 4, num_levels: 7 };
        LoadedTree::load(TreeSpec {
            num: 5_000,
            key_size: 16,
            value_size: 24,
            options: shape.options(),
            seed: 1,
            flush_every: None,
        })
        .unwrap()
    }

    #[test]
    fn a_loaded_tree_reopens_with_every_key_and_counts_empty_lookups() {
        let tree = tiny_tree();
        assert!(tree.levels() >= 2, "{}", tree.describe());
        let db = tree.open(tree.spec.options.clone()).unwrap();
        let all = ReadSpec { existing: 1.0, ..ReadSpec::empty(100, 2_000, 7) };
        assert_eq!(measure(&db, 5_000, 16, &all).unwrap().found, 2_000);
        let empty = measure(&db, 5_000, 16, &ReadSpec::empty(0, 2_000, 8)).unwrap();
        assert_eq!(empty.found, 0);
        // Most empty lookups visit a table per level; a key in the gap between two files of
        // a run visits none there, so the average over a small tree may dip below 1.
        assert!(tables_per_op(&empty) > 0.5, "{}", tables_per_op(&empty));
    }

    /// Open descriptors of this process on `.sst` files under `dir`, and whether each was
    /// opened with `O_DIRECT` (from `/proc/self/fdinfo`).
    #[cfg(target_os = "linux")]
    fn table_fds_direct(dir: &Path) -> Vec<bool> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            let Ok(target) = std::fs::read_link(entry.path()) else { continue };
            if !target.starts_with(dir) || !is_table(&target) {
                continue;
            }
            let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", entry.file_name().to_string_lossy()));
            let Ok(info) = info else { continue };
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).map(str::trim).unwrap();
            let flags = u32::from_str_radix(flags, 8).unwrap();
            out.push(flags & libc::O_DIRECT as u32 != 0);
        }
        out
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_reopened_with_direct_reads_reads_its_tables_with_o_direct() {
        let tree = tiny_tree();
        let all = ReadSpec { existing: 1.0, ..ReadSpec::empty(0, 500, 7) };
        for direct in [false, true] {
            let db = tree.open_reads(tree.spec.options.clone(), direct).unwrap();
            assert_eq!(measure(&db, 5_000, 16, &all).unwrap().found, 500);
            let fds = table_fds_direct(tree.dir.path());
            assert!(!fds.is_empty(), "lookups opened no table");
            assert!(fds.iter().all(|&d| d == direct), "direct {direct}: {fds:?}");
            db.close().unwrap();
        }
    }

    #[test]
    fn a_stored_tree_is_taken_from_the_store_with_its_shape_and_keys() {
        let store = tempfile::tempdir().unwrap();
        let spec = tiny_tree().spec;
        let entry = || Some(crate::exp::tree_store::Entry::in_store(store.path(), &spec));
        let loaded = LoadedTree::load_or_take(spec.clone(), entry()).unwrap();
        // The stored copy: its load time is the first load's, not a second load's.
        let taken = LoadedTree::load_or_take(spec.clone(), entry()).unwrap();
        assert_eq!(taken.load_seconds, loaded.load_seconds);
        assert_eq!(taken.describe(), loaded.describe());
        assert_eq!(taken.metadata_bytes(), loaded.metadata_bytes());
        let db = taken.open(taken.spec.options.clone()).unwrap();
        let all = ReadSpec { existing: 1.0, ..ReadSpec::empty(0, 2_000, 7) };
        assert_eq!(measure(&db, 5_000, 16, &all).unwrap().found, 2_000);
        db.close().unwrap();
        // Another spec is another tree.
        let other = TreeSpec { seed: 2, ..spec.clone() };
        assert!(crate::exp::tree_store::Entry::in_store(store.path(), &other).load_seconds().is_none());
    }

    #[test]
    fn only_flushes_that_fit_one_memtable_are_loaded_in_key_order() {
        // The memory trees' 40K-key flushes of 32 + 32 B overflow a 4 MiB memtable: sorted,
        // its own flush would cut them by key range and change the tree.
        let pressure = TreeSpec {
            num: 2_000_000,
            key_size: 32,
            value_size: 32,
            options: Shape::PRESSURE.options(),
            seed: 1,
            flush_every: Some(COMPARED_FLUSH_KEYS),
        };
        assert!(!fits_memtable(&pressure, COMPARED_FLUSH_KEYS));
        assert!(fits_memtable(&pressure, 4_000));
    }

    #[test]
    fn reopening_forgets_the_statistics_of_earlier_measurements() {
        let tree = tiny_tree();
        let file_stats = |db: &Db| db.files().into_iter().map(|f| f.stats).collect::<Vec<_>>();
        let db = tree.open(tree.spec.options.clone()).unwrap();
        let as_loaded = file_stats(&db);
        measure(&db, 5_000, 16, &ReadSpec::empty(0, 3_000, 3)).unwrap();
        db.close().unwrap();
        let db = tree.open(tree.spec.options.clone()).unwrap();
        assert_eq!(file_stats(&db), as_loaded);
    }
}
