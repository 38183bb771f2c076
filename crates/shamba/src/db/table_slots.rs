//! The open state of each table of a version: its reader and the filter manager's state,
//! kept beside the version (not in the manifest's record of the file) and reached by the
//! file's ordinal, so a lookup gets both with one load, no lock and no reference count.
//!
//! A version's slots are made when the version is installed; a file that was in the
//! previous version keeps its state (the same reader, the same statistics), a new file's
//! slots fill on its first lookup. RocksDB keeps a table-reader handle in its file
//! metadata for the same reason; here the manifest's record stays plain data.

use crate::error::Result;
use crate::manager::FileState;
use crate::number_map::NumberMap;
use crate::table::{PinnedPart, TableCache, TableReader};
use crate::version::{FileRef, Version};
use std::sync::{Arc, OnceLock};

/// The open state of one table.
pub(crate) struct TableSlot {
    number: u64,
    reader: OnceLock<Arc<TableReader>>,
    /// The reader's first filter part, when it is pinned and the same for every key
    /// ([`TableReader::first_filter_part`]); set with the reader. A lookup probes it here,
    /// in the version's slot array, before it touches the reader: for a key the table does
    /// not hold (most tables of a lookup) the filter's probe line is then the only memory
    /// the table costs, where the way through the reader is a chain of dependent loads
    /// (the reader, its partitions, its filter parts), each a cache miss once the
    /// metadata of a large tree has outgrown the CPU's caches.
    first_filter: OnceLock<PinnedPart>,
    /// The filter manager's state of the table, once a lookup has made it.
    pub filter_state: OnceLock<Arc<FileState>>,
}

impl TableSlot {
    fn empty(number: u64) -> TableSlot {
        TableSlot { number, reader: OnceLock::new(), first_filter: OnceLock::new(), filter_state: OnceLock::new() }
    }

    /// The table's reader, opened through `tables` on first use.
    #[inline]
    pub(crate) fn reader(&self, tables: &TableCache) -> Result<&Arc<TableReader>> {
        match self.reader.get() {
            Some(r) => Ok(r),
            None => self.open(tables),
        }
    }

    /// The table's first filter part, if a lookup may probe it without the reader (see
    /// the field); `None` also until the reader is opened.
    #[inline]
    pub(crate) fn first_filter(&self) -> Option<&PinnedPart> {
        self.first_filter.get()
    }

    #[cold]
    fn open(&self, tables: &TableCache) -> Result<&Arc<TableReader>> {
        let reader = tables.reader(self.number)?;
        let kept = self.reader.get_or_init(|| reader);
        if let Some(part) = kept.first_filter_part() {
            let _ = self.first_filter.set(part);
        }
        Ok(kept)
    }
}

/// The open state of every table of one version, in [`FileRef::ordinal`] order.
pub(crate) struct TableSlots {
    slots: Box<[TableSlot]>,
}

impl TableSlots {
    /// Slots for `version`'s tables; those also in `previous` keep their state.
    pub(crate) fn new(version: &Version, previous: Option<&TableSlots>) -> TableSlots {
        let kept: NumberMap<u64, &TableSlot> =
            previous.map(|p| p.slots.iter().map(|s| (s.number, s)).collect()).unwrap_or_default();
        let slots = version
            .all_files()
            .map(|(_, f)| {
                let slot = TableSlot::empty(f.number);
                if let Some(old) = kept.get(&f.number) {
                    if let Some(r) = old.reader.get() {
                        let _ = slot.reader.set(r.clone());
                    }
                    if let Some(part) = old.first_filter.get() {
                        let _ = slot.first_filter.set(part.clone());
                    }
                    if let Some(s) = old.filter_state.get() {
                        let _ = slot.filter_state.set(s.clone());
                    }
                }
                slot
            })
            .collect();
        TableSlots { slots }
    }

    /// The slot of `file`, a file of the version these slots were made for (`None` only
    /// if it is not: a file of another version).
    #[inline]
    pub(crate) fn get(&self, file: FileRef<'_>) -> Option<&TableSlot> {
        self.slots.get(file.ordinal).filter(|s| s.number == file.number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::version::{FileMeta, Run};

    fn version(files: &[(u64, &[u8], &[u8])]) -> Version {
        let mut v = Version::new(2);
        let metas = files
            .iter()
            .map(|&(number, lo, hi)| {
                Arc::new(FileMeta {
                    number,
                    run: 1,
                    smallest: internal_key(lo, 1, ValueKind::Put),
                    largest: internal_key(hi, 1, ValueKind::Put),
                    ..FileMeta::default()
                })
            })
            .collect();
        v.levels[1].runs = vec![Run::new(1, metas)];
        v
    }

    #[test]
    fn a_lookup_finds_the_slot_of_its_candidate_and_no_other_versions() {
        let v = version(&[(3, b"a", b"c"), (4, b"d", b"f")]);
        let slots = TableSlots::new(&v, None);
        let e = v.candidates(b"e").next().unwrap();
        assert_eq!(slots.get(e).map(|s| s.number), Some(4));
        // The same position in another version names another file: no slot.
        let other = version(&[(3, b"a", b"c"), (9, b"d", b"f")]);
        let e9 = other.candidates(b"e").next().unwrap();
        assert!(slots.get(e9).is_none());
    }

    #[test]
    fn a_file_kept_by_the_next_version_keeps_its_state() {
        let v = version(&[(3, b"a", b"c"), (4, b"d", b"f")]);
        let slots = TableSlots::new(&v, None);
        let f4 = slots.get(v.candidates(b"e").next().unwrap()).unwrap();
        let _ = f4.filter_state.set(Arc::new(FileState::for_tests()));
        // File 3 is replaced by 7; file 4 moves to ordinal 0.
        let next = version(&[(4, b"d", b"f"), (7, b"g", b"h")]);
        let next_slots = TableSlots::new(&next, Some(&slots));
        let kept = next_slots.get(next.candidates(b"e").next().unwrap()).unwrap();
        assert!(Arc::ptr_eq(kept.filter_state.get().unwrap(), f4.filter_state.get().unwrap()));
        let new = next_slots.get(next.candidates(b"g").next().unwrap()).unwrap();
        assert!(new.filter_state.get().is_none());
    }
}
