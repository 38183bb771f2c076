//! The memtable itself: a skip list of internal keys with a byte count, and the range
//! tombstones written to it (few, kept in a list beside the skip list).

use super::cursor::MemTableCursor;
use super::entry::{InternalKey, MemEntry};
use super::Lookup;
use crate::cursor::Cursor;
use crate::key::{parse_internal_key, SeqNo, ValueKind};
use crate::range_del::{cover_in, RangeTombstone};
use crossbeam_skiplist::SkipMap;
use parking_lot::RwLock;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes charged per entry beyond its key and value: the skip-list node (tower, pointers,
/// reference count) and the entry's buffer header. An estimate; it only has to make
/// [`MemTable::approximate_size`] track memory closely enough to trigger flushes.
const ENTRY_OVERHEAD: usize = 80;

/// An in-memory table of internal keys.
pub(crate) struct MemTable {
    pub(super) map: SkipMap<MemEntry, ()>,
    wal_number: u64,
    size: AtomicUsize,
    range_dels: RwLock<Vec<RangeTombstone>>,
    /// Whether `range_dels` holds any: a lookup checks this, not the lock.
    has_range_dels: AtomicBool,
    /// Every write of its tree numbered above this went to this memtable or a later one
    /// (a transaction's commit checks the memtables for writes after its snapshot, and
    /// can only if they hold every one).
    floor: SeqNo,
}

impl MemTable {
    /// An empty memtable whose writes are logged in WAL `wal_number`.
    pub(crate) fn new(wal_number: u64) -> Self {
        MemTable::after(wal_number, 0)
    }

    /// An empty memtable that takes its tree's writes numbered above `floor` (the memtables
    /// before it hold every earlier one): see [`MemTable::floor`].
    pub(crate) fn after(wal_number: u64, floor: SeqNo) -> Self {
        MemTable {
            map: SkipMap::new(),
            wal_number,
            size: AtomicUsize::new(0),
            range_dels: RwLock::new(Vec::new()),
            has_range_dels: AtomicBool::new(false),
            floor,
        }
    }

    /// Every write of its tree numbered above this is in this memtable or a later one. A
    /// memtable made at open or with its keyspace has 0: it takes every write from then on.
    pub(crate) fn floor(&self) -> SeqNo {
        self.floor
    }

    /// The sequence number of the newest version of `user_key` here (a put or a delete),
    /// or of the newest range tombstone over it, whichever is larger; 0 when neither.
    pub(crate) fn newest_write(&self, user_key: &[u8]) -> SeqNo {
        let point = match self.get_at_seek_key(&crate::key::seek_key(user_key, crate::key::MAX_SEQ)) {
            Lookup::Value(seq, _) | Lookup::Expiring(seq, _) | Lookup::Deleted(seq) => seq,
            Lookup::NotFound => 0,
        };
        point.max(self.range_del_cover(user_key, crate::key::MAX_SEQ))
    }

    /// The WAL that holds this memtable's writes.
    pub(crate) fn wal_number(&self) -> u64 {
        self.wal_number
    }

    /// Insert one version. Safe to call from several threads. Inserting the same
    /// `(user_key, seq, kind)` twice keeps the last value (a replayed WAL may do so).
    pub(crate) fn insert(&self, user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) {
        let entry = MemEntry::new(user_key, seq, kind, value);
        let charge = entry.len() + ENTRY_OVERHEAD;
        self.map.insert(entry, ());
        self.size.fetch_add(charge, Ordering::Relaxed);
    }

    /// Record a range tombstone.
    pub(crate) fn add_range_del(&self, tombstone: RangeTombstone) {
        let charge = tombstone.start.len() + tombstone.end.as_ref().map_or(0, Vec::len) + ENTRY_OVERHEAD;
        self.range_dels.write().push(tombstone);
        self.has_range_dels.store(true, Ordering::Release);
        self.size.fetch_add(charge, Ordering::Relaxed);
    }

    /// Whether any range tombstone was written here.
    #[inline]
    pub(crate) fn has_range_dels(&self) -> bool {
        self.has_range_dels.load(Ordering::Acquire)
    }

    /// The range tombstones written here.
    pub(crate) fn range_dels(&self) -> Vec<RangeTombstone> {
        if !self.has_range_dels() {
            return Vec::new();
        }
        self.range_dels.read().clone()
    }

    /// The newest range tombstone here covering `key` visible at `seq`, or 0.
    #[inline]
    pub(crate) fn range_del_cover(&self, key: &[u8], seq: SeqNo) -> SeqNo {
        if !self.has_range_dels() {
            return 0;
        }
        cover_in(&self.range_dels.read(), key, seq)
    }

    /// The newest version of `user_key` with sequence `<= seq`.
    #[cfg(test)]
    pub(crate) fn get(&self, user_key: &[u8], seq: SeqNo) -> Lookup {
        self.get_at_seek_key(&crate::key::seek_key(user_key, seq))
    }

    /// [`MemTable::get`] with the lookup's [`seek_key`] already built (a lookup builds it
    /// once for every memtable and table it searches).
    pub(crate) fn get_at_seek_key(&self, seek: &[u8]) -> Lookup {
        let Some(found) = self.map.lower_bound(Bound::Included(InternalKey::new(seek))) else {
            return Lookup::NotFound;
        };
        let entry = found.key();
        let user_key = crate::key::user_key(seek);
        match parse_internal_key(entry.key()) {
            Some(k) if k.user_key == user_key => match k.kind {
                ValueKind::Put => Lookup::Value(k.seq, entry.value().to_vec()),
                ValueKind::PutExpiring => Lookup::Expiring(k.seq, entry.value().to_vec()),
                ValueKind::Delete => Lookup::Deleted(k.seq),
            },
            _ => Lookup::NotFound,
        }
    }

    /// Bytes of keys, values and overhead, approximately.
    pub(crate) fn approximate_size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the memtable holds nothing: no entry, no range tombstone.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0 && !self.has_range_dels()
    }

    /// Call `f` on every entry, `(internal key, value)`, in internal-key order, stopping at
    /// its first error. A flush's one forward pass: it follows the skip list's links, where
    /// a [`MemTableCursor`](super::MemTableCursor) searches anew for each step (that
    /// search was the flush thread's largest cost in a random load).
    pub(crate) fn try_for_each<E>(&self, mut f: impl FnMut(&[u8], &[u8]) -> Result<(), E>) -> Result<(), E> {
        for found in self.map.iter() {
            let entry = found.key();
            f(entry.key(), entry.value())?;
        }
        Ok(())
    }

    /// A cursor over all entries, keeping the memtable alive.
    pub(crate) fn cursor(self: &Arc<Self>) -> Box<dyn Cursor> {
        Box::new(MemTableCursor::new(Arc::clone(self)))
    }
}

impl std::fmt::Debug for MemTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTable")
            .field("wal_number", &self.wal_number)
            .field("entries", &self.len())
            .field("approximate_size", &self.approximate_size())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_sees_the_newest_version_at_or_below_the_snapshot() {
        let m = MemTable::new(3);
        m.insert(b"k", 1, ValueKind::Put, b"v1");
        m.insert(b"k", 5, ValueKind::Put, b"v5");
        m.insert(b"k", 9, ValueKind::Delete, b"");
        m.insert(b"k\0", 2, ValueKind::Put, b"other");
        assert_eq!(m.get(b"k", 0), Lookup::NotFound);
        assert_eq!(m.get(b"k", 1), Lookup::Value(1, b"v1".to_vec()));
        assert_eq!(m.get(b"k", 4), Lookup::Value(1, b"v1".to_vec()));
        assert_eq!(m.get(b"k", 5), Lookup::Value(5, b"v5".to_vec()));
        assert_eq!(m.get(b"k", 8), Lookup::Value(5, b"v5".to_vec()));
        assert_eq!(m.get(b"k", 9), Lookup::Deleted(9));
        assert_eq!(m.get(b"k", crate::key::MAX_SEQ), Lookup::Deleted(9));
        assert_eq!(m.get(b"j", 100), Lookup::NotFound);
        assert_eq!(m.get(b"k\0", 1), Lookup::NotFound);
        assert_eq!(m.get(b"", 100), Lookup::NotFound);
        assert_eq!((m.len(), m.wal_number()), (4, 3));
    }

    #[test]
    fn try_for_each_visits_every_entry_in_order_and_stops_at_an_error() {
        let m = Arc::new(MemTable::new(0));
        for (i, k) in [&b"b"[..], b"a", b"c", b"a"].iter().enumerate() {
            m.insert(k, i as u64 + 1, ValueKind::Put, &[i as u8]);
        }
        let mut seen = Vec::new();
        m.try_for_each(|k, v| {
            seen.push((k.to_vec(), v.to_vec()));
            Ok::<(), ()>(())
        })
        .unwrap();
        let mut cursor = m.cursor();
        cursor.seek_to_first().unwrap();
        let mut walked = Vec::new();
        while cursor.valid() {
            walked.push((cursor.key().to_vec(), cursor.value().to_vec()));
            cursor.next().unwrap();
        }
        assert_eq!(seen, walked);
        assert_eq!(seen.len(), 4);
        let mut calls = 0;
        assert_eq!(
            m.try_for_each(|_, _| {
                calls += 1;
                if calls == 2 {
                    Err(calls)
                } else {
                    Ok(())
                }
            }),
            Err(2)
        );
    }

    #[test]
    fn the_same_version_inserted_twice_keeps_the_last_value() {
        // A replayed WAL may insert a version again; the entry (key and value in one
        // buffer) must be replaced whole, not kept with its old value.
        let m = MemTable::new(0);
        m.insert(b"k", 4, ValueKind::Put, b"first");
        m.insert(b"k", 4, ValueKind::Put, b"second, longer");
        assert_eq!(m.get(b"k", 4), Lookup::Value(4, b"second, longer".to_vec()));
        assert_eq!(m.len(), 1);
        let mut values = Vec::new();
        m.try_for_each(|_, v| {
            values.push(v.to_vec());
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(values, vec![b"second, longer".to_vec()]);
    }

    #[test]
    fn empty_keys_and_values_are_entries_like_any_other() {
        let m = MemTable::new(0);
        assert!(m.is_empty());
        m.insert(b"", 1, ValueKind::Put, b"");
        assert_eq!(m.get(b"", 1), Lookup::Value(1, Vec::new()));
        assert_eq!(m.get(b"a", 1), Lookup::NotFound);
    }

    #[test]
    fn size_grows_with_keys_and_values() {
        let m = MemTable::new(0);
        m.insert(b"key", 1, ValueKind::Put, &[0; 1000]);
        let one = m.approximate_size();
        assert!(one >= 1000 + 3 + 8);
        m.insert(b"key", 2, ValueKind::Delete, b"");
        assert!(m.approximate_size() > one);
    }

    #[test]
    fn concurrent_inserts_from_several_threads_are_all_visible() {
        let m = Arc::new(MemTable::new(0));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    for i in 0..2000u64 {
                        let seq = t * 10_000 + i + 1;
                        m.insert(format!("k{:05}", i).as_bytes(), seq, ValueKind::Put, &seq.to_le_bytes());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(m.len(), 8000);
        for i in 0..2000u64 {
            let key = format!("k{:05}", i);
            // The newest version is thread 3's.
            let want = (3 * 10_000 + i + 1).to_le_bytes().to_vec();
            assert_eq!(m.get(key.as_bytes(), crate::key::MAX_SEQ), Lookup::Value(3 * 10_000 + i + 1, want));
            let want1 = (10_000 + i + 1).to_le_bytes().to_vec();
            assert_eq!(m.get(key.as_bytes(), 10_000 + i + 1), Lookup::Value(10_000 + i + 1, want1));
        }
        // The cursor sees every entry, in order.
        let mut c = m.cursor();
        c.seek_to_first().unwrap();
        let mut n = 0;
        let mut prev: Option<Vec<u8>> = None;
        while c.valid() {
            if let Some(p) = &prev {
                assert!(crate::key::compare_internal_keys(p, c.key()).is_lt());
            }
            prev = Some(c.key().to_vec());
            n += 1;
            c.next().unwrap();
        }
        assert_eq!(n, 8000);
    }
}
