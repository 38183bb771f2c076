//! The trees of the engine experiments: load one once ([`load`](super::load)), reopen it
//! as often as needed with another probe policy, cache size or device, and measure its
//! point lookups ([`lookups`](super::lookups)).
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
use std::time::Instant;

use shamba::storage::{DirectReadFsStorage, Storage};
use shamba::{Db, Options, Stats};
use tempfile::TempDir;

use super::load::{fits_memtable, load_ids, settle, shuffled_ids};
use super::storage::{with_direct_reads, without_sync};
use super::tree_store;

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
    /// The tree of the RocksDB comparison measurements and of seed 002 (4 MiB memtable and
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
    /// there otherwise ([`tree_store`]).
    pub fn load(spec: TreeSpec) -> Result<LoadedTree, Box<dyn Error>> {
        LoadedTree::load_filled(spec, fill_by_flushes)
    }

    /// [`LoadedTree::load`] with the keys written by `fill` instead of the ordinary load
    /// (another loader must ask for options of its own, which name its trees in the store).
    pub fn load_filled(spec: TreeSpec, fill: Fill) -> Result<LoadedTree, Box<dyn Error>> {
        let entry = tree_store::Entry::of(&spec);
        LoadedTree::load_or_take(spec, entry, fill)
    }

    /// [`LoadedTree::load_filled`] with the store's `entry` for `spec` (`None`: no store).
    fn load_or_take(
        spec: TreeSpec,
        entry: Option<tree_store::Entry>,
        fill: Fill,
    ) -> Result<LoadedTree, Box<dyn Error>> {
        let Some(entry) = entry else { return LoadedTree::load_fresh_filled(spec, fill) };
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
        let tree = LoadedTree::load_fresh_filled(spec, fill)?;
        entry.put(tree.dir.path(), tree.load_seconds)?;
        Ok(tree)
    }

    /// [`LoadedTree::load`] without the store: always loads, and [`LoadedTree::stats`] has
    /// the load's own counters (bytes flushed and compacted).
    pub fn load_fresh(spec: TreeSpec) -> Result<LoadedTree, Box<dyn Error>> {
        LoadedTree::load_fresh_filled(spec, fill_by_flushes)
    }

    /// [`LoadedTree::load_fresh`] with the keys written by `fill`.
    fn load_fresh_filled(spec: TreeSpec, fill: Fill) -> Result<LoadedTree, Box<dyn Error>> {
        if spec.key_size < 8 {
            return Err("key size must be at least 8".into());
        }
        let dir = tempfile::tempdir()?;
        let start = Instant::now();
        let db = Db::open(dir.path(), without_sync(spec.options.clone()))?;
        fill(&db, &spec)?;
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

/// Writes a spec's keys into an opened, empty database ([`LoadedTree::load_filled`]); the
/// load flushes and waits for compactions after it.
pub type Fill = fn(&Db, &TreeSpec) -> Result<(), Box<dyn Error>>;

/// The ordinary load: the keys in a random order, flushed when the memtable fills (or
/// every `flush_every` keys), compacted as the engine's own compactions choose.
fn fill_by_flushes(db: &Db, spec: &TreeSpec) -> Result<(), Box<dyn Error>> {
    let ids = shuffled_ids(spec.num, spec.seed);
    let chunk = spec.flush_every.unwrap_or(spec.num).max(1) as usize;
    // Sorting a flush's keys keeps the tree only if the memtable does not fill half-way
    // through them (it would cut the flush by key range, not at random), or if, tiered,
    // the runs it cuts are merged whole into one run anyway.
    let tiered = spec.options.compaction_style == shamba::CompactionStyle::Tiered;
    let sort = spec.flush_every.is_some() && (tiered || fits_memtable(spec, chunk as u64));
    let mut sorted = Vec::new();
    for part in ids.chunks(chunk) {
        if sort {
            // One flush's keys in key order: the same keys make the same tables, and a
            // skiplist takes ascending inserts along one cached path, where random ones
            // miss the cache at every node (most of a load of millions of keys).
            sorted.clear();
            sorted.extend_from_slice(part);
            sorted.sort_unstable();
            load_ids(db, &sorted, spec.key_size, spec.value_size)?;
        } else {
            load_ids(db, part, spec.key_size, spec.value_size)?;
        }
        if spec.flush_every.is_some() {
            // Settle after each flush: a compaction then merges exactly the runs one flush
            // made due, so the shape does not depend on background timing.
            settle(db)?;
        }
    }
    Ok(())
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

/// Whether `path` names a table file.
pub(crate) fn is_table(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sst")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::support::figures::tables_per_op;
    use crate::support::lookups::{measure, ReadSpec};
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
        let entry = || Some(crate::support::tree_store::Entry::in_store(store.path(), &spec));
        let loaded = LoadedTree::load_or_take(spec.clone(), entry(), fill_by_flushes).unwrap();
        // The stored copy: its load time is the first load's, not a second load's.
        let taken = LoadedTree::load_or_take(spec.clone(), entry(), fill_by_flushes).unwrap();
        assert_eq!(taken.load_seconds, loaded.load_seconds);
        assert_eq!(taken.describe(), loaded.describe());
        assert_eq!(taken.metadata_bytes(), loaded.metadata_bytes());
        let db = taken.open(taken.spec.options.clone()).unwrap();
        let all = ReadSpec { existing: 1.0, ..ReadSpec::empty(0, 2_000, 7) };
        assert_eq!(measure(&db, 5_000, 16, &all).unwrap().found, 2_000);
        db.close().unwrap();
        // Another spec is another tree.
        let other = TreeSpec { seed: 2, ..spec.clone() };
        assert!(crate::support::tree_store::Entry::in_store(store.path(), &other).load_seconds().is_none());
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
