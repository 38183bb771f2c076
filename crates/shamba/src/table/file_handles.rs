//! Open table files by number, at most `capacity` of them: the bound on a database's file
//! descriptors (`Options::max_open_files`).
//!
//! Table readers keep their pinned metadata (footer, properties, index, filters) in memory
//! for as long as they live, but not an open file: every read of table bytes
//! ([`super::file::TableFile`]) takes the file's handle from here, opening it through
//! [`Storage::open_read`] on a miss and closing the least recently used handle beyond
//! capacity. Only reads that miss the block cache come here, and they do I/O anyway, so
//! the lock is not on a lookup's hot path. A handle evicted while a read holds it stays
//! open until that read drops it: the bound is `capacity` plus the reads in flight.

use crate::error::Result;
use crate::io::{RandomRead, Storage};
use crate::number_map::NumberMap;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Open table files by number, least recently used closed first beyond `capacity`.
pub(crate) struct FileHandles {
    storage: Arc<dyn Storage>,
    capacity: usize,
    lru: Mutex<Lru>,
}

/// The handles and their recency: `order` maps each handle's last use (a tick) to its file
/// number, so the least recently used is its first entry.
#[derive(Default)]
struct Lru {
    handles: NumberMap<u64, (Arc<dyn RandomRead>, u64)>,
    order: BTreeMap<u64, u64>,
    tick: u64,
}

impl Lru {
    /// The handle of `number`, marked as the most recently used unless it was used within
    /// the last `slack` uses (this one included): moving it costs two updates of `order`, on every read that
    /// misses the block cache, and a handle that recent is not the next to close anyway.
    /// The order is least recently used to within `slack` uses.
    fn touch(&mut self, number: u64, slack: u64) -> Option<Arc<dyn RandomRead>> {
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

    /// Forget `number`'s handle, returning it (closed when its last holder drops it).
    fn remove(&mut self, number: u64) -> Option<Arc<dyn RandomRead>> {
        let (handle, used) = self.handles.remove(&number)?;
        self.order.remove(&used);
        Some(handle)
    }
}

impl FileHandles {
    /// A cache of at most `capacity` (at least 1) open files of `storage`.
    pub(crate) fn new(storage: Arc<dyn Storage>, capacity: usize) -> Self {
        FileHandles { storage, capacity: capacity.max(1), lru: Mutex::new(Lru::default()) }
    }

    /// The open file of table `number` at `path`, opening it (and closing the least
    /// recently used beyond capacity) if it is not open.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be opened.
    pub(crate) fn get(&self, number: u64, path: &Path) -> Result<Arc<dyn RandomRead>> {
        if let Some(handle) = self.lru.lock().touch(number, self.slack()) {
            return Ok(handle);
        }
        // Open without the lock: reads of other files must not wait for an open. Two
        // threads may race to open the same file; the first handle inserted wins.
        let opened = self.storage.open_read(path)?;
        let mut evicted = Vec::new();
        let handle = {
            let mut lru = self.lru.lock();
            if let Some(handle) = lru.touch(number, self.slack()) {
                handle
            } else {
                lru.tick += 1;
                let tick = lru.tick;
                lru.handles.insert(number, (opened.clone(), tick));
                lru.order.insert(tick, number);
                while lru.handles.len() > self.capacity {
                    let Some((_, victim)) = lru.order.pop_first() else { break };
                    if let Some((h, _)) = lru.handles.remove(&victim) {
                        evicted.push(h);
                    }
                }
                opened
            }
        };
        // The evicted handles close here, outside the lock (if no read holds them).
        drop(evicted);
        Ok(handle)
    }

    /// Uses within which a handle keeps its place in the order: a quarter of the capacity
    /// (none below four handles, where the order is exact).
    fn slack(&self) -> u64 {
        (self.capacity / 4) as u64
    }

    /// Close table `number`'s handle (its file was deleted). A read holding it keeps it
    /// open until the read ends.
    pub(crate) fn remove(&self, number: u64) {
        let handle = self.lru.lock().remove(number);
        drop(handle);
    }

    /// Handles open now.
    pub(crate) fn len(&self) -> usize {
        self.lru.lock().handles.len()
    }

    /// Most handles kept open.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// File numbers open, least recently used first.
    #[cfg(test)]
    fn open_numbers(&self) -> Vec<u64> {
        self.lru.lock().order.values().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{FsStorage, SequentialWrite};
    use std::path::PathBuf;

    /// Storage over the file system that counts opens.
    struct CountingOpens(FsStorage, std::sync::atomic::AtomicUsize);

    impl CountingOpens {
        fn opens(&self) -> usize {
            self.1.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    impl Storage for CountingOpens {
        fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0.open_read(path)
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
        let storage = Arc::new(CountingOpens(FsStorage, Default::default()));
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
        let storage = Arc::new(CountingOpens(FsStorage, Default::default()));
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
        let storage = Arc::new(CountingOpens(FsStorage, Default::default()));
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
}
