//! Open table files by number, at most `capacity` of them: the bound on a database's file
//! descriptors (`Options::max_open_files`).
//!
//! Table readers keep their pinned metadata (footer, properties, index, filters) in memory
//! for as long as they live, but not an open file: every read of table bytes
//! ([`super::file::TableFile`]) takes the file's handle from here, opening it through
//! [`Storage::open_read`] on a miss and closing the least recently used handle beyond
//! capacity. Every read that misses the block cache comes here, so the handles are split
//! into shards by file number, each a mutex over its own least-recently-used list with its
//! own share of the capacity: readers of different files rarely take the same lock. The
//! shares add up to `capacity` exactly, so the handles kept open never exceed it; a cache
//! too small to give each shard [`MIN_PER_SHARD`] handles has fewer shards (one below
//! twice that), and its order is exact across files. A handle evicted while a read holds
//! it stays open until that read drops it, and a read that lost a race to open a file
//! closes its own copy: the descriptors open at any moment are at most `capacity` plus one
//! per read in flight. For that, an evicted handle no read holds is closed under its
//! shard's lock: closed after the lock, it would stay open while another thread evicts
//! the handle the evicting read returns, two descriptors beyond the cache for one read.
//! Only a miss in a full shard closes one, and a miss opens a file anyway.

use crate::error::Result;
use crate::io::{RandomRead, Storage};
use crate::number_map::NumberMap;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Most shards a cache is split into.
const MAX_SHARDS: usize = 16;

/// Fewest handles a shard is given: below `2 * MIN_PER_SHARD` handles the cache is one
/// shard, so small caches keep an exact order.
const MIN_PER_SHARD: usize = 16;

/// Open table files by number, least recently used closed first beyond `capacity`.
pub(crate) struct FileHandles {
    storage: Arc<dyn Storage>,
    capacity: usize,
    /// File `n`'s handle lives in shard `n % shards.len()`.
    shards: Box<[Mutex<Lru>]>,
}

/// One shard's handles and their recency: `order` maps each handle's last use (a tick) to
/// its file number, so the least recently used is its first entry.
struct Lru {
    /// This shard's share of the capacity (at least 1).
    capacity: usize,
    handles: NumberMap<u64, (Arc<dyn RandomRead>, u64)>,
    order: BTreeMap<u64, u64>,
    tick: u64,
}

impl Lru {
    fn new(capacity: usize) -> Self {
        Lru { capacity, handles: NumberMap::default(), order: BTreeMap::new(), tick: 0 }
    }

    /// Uses within which a handle keeps its place in the order: a quarter of the shard's
    /// capacity (none below four handles, where the order is exact).
    fn slack(&self) -> u64 {
        (self.capacity / 4) as u64
    }

    /// The handle of `number`, marked as the most recently used unless it was used within
    /// the last [`slack`](Self::slack) uses of the shard (this one included): moving it
    /// costs two updates of `order`, on every read that misses the block cache, and a
    /// handle that recent is not the next to close anyway. The order is least recently used
    /// to within `slack` uses.
    fn touch(&mut self, number: u64) -> Option<Arc<dyn RandomRead>> {
        let slack = self.slack();
        let (handle, used) = self.handles.get_mut(&number)?;
        self.tick += 1;
        let tick = self.tick;
        if tick - *used > slack {
            self.order.remove(used);
            *used = tick;
            self.order.insert(tick, number);
        }
        Some(handle.clone())
    }

    /// Keep `opened` as `number`'s handle, the most recently used, closing (dropping) the
    /// handles beyond the shard's capacity.
    fn insert(&mut self, number: u64, opened: Arc<dyn RandomRead>) {
        self.tick += 1;
        let tick = self.tick;
        self.handles.insert(number, (opened, tick));
        self.order.insert(tick, number);
        while self.handles.len() > self.capacity {
            let Some((_, victim)) = self.order.pop_first() else { break };
            drop(self.handles.remove(&victim));
        }
    }

    /// Forget `number`'s handle, returning it (closed when its last holder drops it).
    fn remove(&mut self, number: u64) -> Option<Arc<dyn RandomRead>> {
        let (handle, used) = self.handles.remove(&number)?;
        self.order.remove(&used);
        Some(handle)
    }
}

/// How many shards a cache of `capacity` handles has.
fn shard_count(capacity: usize) -> usize {
    (capacity / MIN_PER_SHARD).clamp(1, MAX_SHARDS)
}

impl FileHandles {
    /// A cache of at most `capacity` (at least 1) open files of `storage`.
    pub(crate) fn new(storage: Arc<dyn Storage>, capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let n = shard_count(capacity);
        // The shares add up to `capacity`: the first `capacity % n` shards take one more.
        let shards = (0..n).map(|i| Mutex::new(Lru::new(capacity / n + usize::from(i < capacity % n)))).collect();
        FileHandles { storage, capacity, shards }
    }

    /// The shard of table `number`.
    fn shard(&self, number: u64) -> &Mutex<Lru> {
        // `number % len < len`, and there is at least one shard.
        &self.shards[(number % self.shards.len() as u64) as usize]
    }

    /// The open file of table `number` at `path`, opening it (and closing the least
    /// recently used of its shard beyond the shard's capacity) if it is not open.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be opened.
    pub(crate) fn get(&self, number: u64, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let shard = self.shard(number);
        if let Some(handle) = shard.lock().touch(number) {
            return Ok(handle);
        }
        // Open without the lock: reads of other files must not wait for an open. Two
        // threads may race to open the same file; the first handle inserted wins.
        let opened = self.storage.open_read(path)?;
        let mut lru = shard.lock();
        match lru.touch(number) {
            // Lost the race: the copy just opened closes, under the lock too (after it,
            // the handle returned might be evicted meanwhile: two beyond the cache).
            Some(handle) => {
                drop(opened);
                Ok(handle)
            }
            None => {
                lru.insert(number, opened.clone());
                Ok(opened)
            }
        }
    }

    /// Close table `number`'s handle (its file was deleted). A read holding it keeps it
    /// open until the read ends.
    pub(crate) fn remove(&self, number: u64) {
        let handle = self.shard(number).lock().remove(number);
        drop(handle);
    }

    /// Handles open now.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().handles.len()).sum()
    }

    /// Most handles kept open.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// File numbers open, least recently used first (shard by shard).
    #[cfg(test)]
    fn open_numbers(&self) -> Vec<u64> {
        self.shards.iter().flat_map(|s| s.lock().order.values().copied().collect::<Vec<_>>()).collect()
    }

    /// Uses within which a handle keeps its place in its shard's order.
    #[cfg(test)]
    fn slack(&self) -> u64 {
        self.shards.first().map_or(0, |s| s.lock().slack())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{FsStorage, SequentialWrite};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    /// Storage over the file system that counts opens, and the handles open now (an open
    /// handle is closed when its last holder drops it) and at most.
    #[derive(Default)]
    struct CountingOpens(FsStorage, AtomicUsize, Arc<Live>);

    /// Handles open now, and the most open at once.
    #[derive(Default)]
    struct Live {
        now: AtomicUsize,
        most: AtomicUsize,
    }

    /// A handle that counts itself open until dropped.
    struct Counted(Arc<dyn RandomRead>, Arc<Live>);

    impl RandomRead for Counted {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.0.read_at(offset, buf)
        }
        fn len(&self) -> u64 {
            self.0.len()
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.now.fetch_sub(1, SeqCst);
        }
    }

    impl CountingOpens {
        fn opens(&self) -> usize {
            self.1.load(SeqCst)
        }
    }

    impl Storage for CountingOpens {
        fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
            self.1.fetch_add(1, SeqCst);
            let file = self.0.open_read(path)?;
            let now = self.2.now.fetch_add(1, SeqCst) + 1;
            self.2.most.fetch_max(now, SeqCst);
            Ok(Arc::new(Counted(file, self.2.clone())))
        }
        fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
            self.0.create(path)
        }
        fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
            self.0.read_all(path)
        }
        fn rename(&self, from: &Path, to: &Path) -> Result<()> {
            self.0.rename(from, to)
        }
        fn remove(&self, path: &Path) -> Result<()> {
            self.0.remove(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<String>> {
            self.0.list(dir)
        }
        fn exists(&self, path: &Path) -> bool {
            self.0.exists(path)
        }
        fn create_dir_all(&self, dir: &Path) -> Result<()> {
            self.0.create_dir_all(dir)
        }
        fn sync_dir(&self, dir: &Path) -> Result<()> {
            self.0.sync_dir(dir)
        }
        fn lock(&self, path: &Path) -> Result<Box<dyn crate::io::DirLock>> {
            self.0.lock(path)
        }
    }

    fn files(dir: &Path, n: u64) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let path = dir.join(format!("{i}.sst"));
                std::fs::write(&path, vec![i as u8; 10 + i as usize]).unwrap();
                path
            })
            .collect()
    }

    #[test]
    fn keeps_at_most_capacity_handles_closing_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let paths = files(dir.path(), 5);
        let storage = Arc::new(CountingOpens::default());
        let h = FileHandles::new(storage.clone(), 3);
        assert_eq!(h.capacity(), 3);
        for (i, p) in paths.iter().enumerate().take(3) {
            assert_eq!(h.get(i as u64, p).unwrap().len(), 10 + i as u64);
        }
        assert_eq!((h.len(), storage.opens()), (3, 3));
        // A hit opens nothing and makes 0 the most recently used.
        h.get(0, &paths[0]).unwrap();
        assert_eq!(storage.opens(), 3);
        assert_eq!(h.open_numbers(), [1, 2, 0]);
        // A fourth file closes the least recently used (1).
        h.get(3, &paths[3]).unwrap();
        assert_eq!(h.open_numbers(), [2, 0, 3]);
        assert_eq!((h.len(), storage.opens()), (3, 4));
        // 1 is opened again after its eviction, closing 2.
        let mut buf = [0u8; 11];
        h.get(1, &paths[1]).unwrap().read_at(0, &mut buf).unwrap();
        assert_eq!(buf, [1u8; 11]);
        assert_eq!(h.open_numbers(), [0, 3, 1]);
        assert_eq!(storage.opens(), 5);
    }

    #[test]
    fn a_held_handle_outlives_its_eviction_and_remove_closes_a_deleted_file() {
        let dir = tempfile::tempdir().unwrap();
        let paths = files(dir.path(), 3);
        let storage = Arc::new(CountingOpens::default());
        let h = FileHandles::new(storage.clone(), 1);
        let held = h.get(0, &paths[0]).unwrap();
        h.get(1, &paths[1]).unwrap();
        assert_eq!(h.open_numbers(), [1]);
        let mut buf = [0u8; 10];
        held.read_at(0, &mut buf).unwrap();
        assert_eq!(buf, [0u8; 10], "an evicted handle a read holds still reads");

        h.remove(1);
        assert_eq!(h.len(), 0);
        h.remove(1);
        std::fs::remove_file(&paths[1]).unwrap();
        assert!(matches!(h.get(1, &paths[1]), Err(crate::Error::Io(_))), "a removed file is not served");
        assert_eq!(h.len(), 0, "a failed open leaves nothing behind");
        h.get(2, &paths[2]).unwrap();
        assert_eq!(h.open_numbers(), [2]);
    }

    #[test]
    fn a_handle_used_within_the_slack_keeps_its_place_and_an_older_one_moves() {
        let dir = tempfile::tempdir().unwrap();
        let paths = files(dir.path(), 9);
        let storage = Arc::new(CountingOpens::default());
        let h = FileHandles::new(storage.clone(), 8);
        assert_eq!(h.slack(), 2);
        for (i, p) in paths.iter().enumerate().take(8) {
            h.get(i as u64, p).unwrap();
        }
        // 6 was used two uses ago (this one included): within the slack, it keeps its place.
        h.get(6, &paths[6]).unwrap();
        assert_eq!(h.open_numbers(), [0, 1, 2, 3, 4, 5, 6, 7]);
        // 5, four uses ago: it becomes the most recently used; so does 0.
        h.get(5, &paths[5]).unwrap();
        assert_eq!(h.open_numbers(), [0, 1, 2, 3, 4, 6, 7, 5]);
        h.get(0, &paths[0]).unwrap();
        // A ninth file closes the least recently used, 1.
        h.get(8, &paths[8]).unwrap();
        assert_eq!(h.open_numbers(), [2, 3, 4, 6, 7, 5, 0, 8]);
        assert_eq!((h.len(), storage.opens()), (8, 9));
    }

    #[test]
    fn the_shards_share_the_capacity_exactly() {
        for capacity in [1, 2, 31, 32, 33, 54, 100, 255, 256, 257, 1000, 10_000] {
            let h = FileHandles::new(Arc::new(CountingOpens::default()), capacity);
            let shares: Vec<usize> = h.shards.iter().map(|s| s.lock().capacity).collect();
            assert_eq!(shares.iter().sum::<usize>(), capacity, "{capacity}: {shares:?}");
            assert!(shares.iter().all(|&c| c >= MIN_PER_SHARD.min(capacity)), "{capacity}: {shares:?}");
            assert_eq!(shares.len(), (capacity / MIN_PER_SHARD).clamp(1, MAX_SHARDS));
        }
    }

    #[test]
    fn concurrent_reads_of_many_files_keep_the_bound() {
        const THREADS: usize = 8;
        const CAPACITY: usize = 40;
        let dir = tempfile::tempdir().unwrap();
        let paths = files(dir.path(), 200);
        let storage = Arc::new(CountingOpens::default());
        let h = FileHandles::new(storage.clone(), CAPACITY);
        assert!(h.shards.len() > 1, "the test is of a sharded cache");
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (h, paths) = (&h, &paths);
                s.spawn(move || {
                    let mut buf = [0u8; 10];
                    for j in 0..3_000usize {
                        // Each thread jumps between files its own way, with repeats.
                        let i = (j * (2 * t + 1) * 7 + t * 13) % (if j % 3 == 0 { 20 } else { paths.len() });
                        let handle = h.get(i as u64, &paths[i]).unwrap();
                        handle.read_at(0, &mut buf).unwrap();
                        assert_eq!(buf, [i as u8; 10]);
                        assert!(h.len() <= CAPACITY);
                        if j % 500 == 0 {
                            h.remove(i as u64);
                        }
                    }
                });
            }
        });
        // Beyond the handles kept, only a read in flight holds a file open: one per thread.
        let most = storage.2.most.load(SeqCst);
        assert!(most <= CAPACITY + THREADS, "{most} open at once");
        assert!(h.len() <= CAPACITY && h.len() > 0);
        assert_eq!(storage.2.now.load(SeqCst), h.len(), "no read in flight: only the kept handles are open");
    }
}
