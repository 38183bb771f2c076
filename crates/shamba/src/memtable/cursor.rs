//! A cursor over a memtable that keeps the table alive.

use super::entry::{InternalKey, MemEntry};
use super::table::MemTable;
use crate::cursor::Cursor;
use crate::error::Result;
use crossbeam_skiplist::map::Entry;
use crossbeam_skiplist::SkipMap;
use std::ops::Bound;
use std::sync::Arc;

/// Walks a memtable in internal-key order, both ways.
///
/// It holds the table by `Arc` and the skip list's entry for its position, so a step
/// forward follows the entry's link instead of searching the list again from a copied
/// key. Entries inserted ahead of the cursor while it walks are seen, since it follows the
/// live links.
pub(super) struct MemTableCursor {
    /// The current entry. Declared before `table`, so it is dropped first: it borrows the
    /// skip list `table` keeps alive (see `position`).
    entry: Option<Entry<'static, MemEntry, ()>>,
    table: Arc<MemTable>,
}

impl MemTableCursor {
    /// An unpositioned cursor over `table`.
    pub(super) fn new(table: Arc<MemTable>) -> Self {
        MemTableCursor { entry: None, table }
    }

    /// Position on the entry `find` picks from this cursor's table (or nowhere).
    fn position(&mut self, find: impl FnOnce(&SkipMap<MemEntry, ()>) -> Option<Entry<'_, MemEntry, ()>>) {
        let found = find(&self.table.map);
        // SAFETY: the entry borrows the skip list inside this cursor's `Arc<MemTable>`
        // (every caller's `find` searches the list it is given), which stays at its heap
        // address until the cursor is dropped. The entry is kept only in `self.entry`,
        // which is dropped before `self.table` (field order), and its key and value are
        // lent out only for borrows of `self`. Exercised by every cursor test, including
        // `cursor_keeps_the_table_alive`, which drops every other handle to the table
        // before walking it.
        self.entry = found.map(|e| unsafe { std::mem::transmute::<Entry<'_, _, _>, Entry<'static, _, _>>(e) });
    }
}

impl Cursor for MemTableCursor {
    fn valid(&self) -> bool {
        self.entry.is_some()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.position(|list| list.front());
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.position(|list| list.back());
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.position(|list| list.lower_bound(Bound::Included(InternalKey::new(target))));
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.position(|list| list.upper_bound(Bound::Included(InternalKey::new(target))));
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if let Some(entry) = &mut self.entry {
            if !entry.move_next() {
                self.entry = None;
            }
        }
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if let Some(entry) = &mut self.entry {
            if !entry.move_prev() {
                self.entry = None;
            }
        }
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.entry.as_ref().map_or(&[], |e| e.key().key())
    }

    fn value(&self) -> &[u8] {
        self.entry.as_ref().map_or(&[], |e| e.key().value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::VecCursor;
    use crate::key::{compare_internal_keys, internal_key, seek_key, ValueKind};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Move {
        First,
        Last,
        Seek(u8, u64),
        SeekForPrev(u8, u64),
        Next,
        Prev,
    }

    fn moves() -> impl Strategy<Value = Move> {
        prop_oneof![
            Just(Move::First),
            Just(Move::Last),
            (0u8..12, 0u64..20).prop_map(|(k, s)| Move::Seek(k, s)),
            (0u8..12, 0u64..20).prop_map(|(k, s)| Move::SeekForPrev(k, s)),
            Just(Move::Next),
            Just(Move::Next),
            Just(Move::Prev),
            Just(Move::Prev),
        ]
    }

    fn apply(c: &mut dyn Cursor, m: &Move) {
        match *m {
            Move::First => c.seek_to_first().unwrap(),
            Move::Last => c.seek_to_last().unwrap(),
            Move::Seek(k, s) => c.seek(&seek_key(&[k], s)).unwrap(),
            Move::SeekForPrev(k, s) => c.seek_for_prev(&internal_key(&[k], s, ValueKind::Put)).unwrap(),
            Move::Next if c.valid() => c.next().unwrap(),
            Move::Prev if c.valid() => c.prev().unwrap(),
            Move::Next | Move::Prev => {}
        }
    }

    proptest! {
        #[test]
        fn cursor_walks_like_a_sorted_vec_in_both_directions(
            writes in proptest::collection::vec((0u8..10, 1u64..20, any::<bool>(), any::<u8>()), 0..60),
            script in proptest::collection::vec(moves(), 1..40),
        ) {
            let table = Arc::new(MemTable::new(1));
            let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            for &(k, seq, put, v) in &writes {
                let kind = if put { ValueKind::Put } else { ValueKind::Delete };
                table.insert(&[k], seq, kind, &[v]);
                let ikey = internal_key(&[k], seq, kind);
                model.retain(|(mk, _)| mk != &ikey);
                model.push((ikey, vec![v]));
            }
            model.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            let mut want = VecCursor::new(model);
            let mut got = table.cursor();
            for m in &script {
                apply(&mut want, m);
                apply(&mut *got, m);
                prop_assert_eq!(got.valid(), want.valid(), "after {:?}", m);
                if want.valid() {
                    prop_assert_eq!(got.key(), want.key());
                    prop_assert_eq!(got.value(), want.value());
                }
            }
        }
    }

    #[test]
    fn a_walk_sees_entries_inserted_ahead_of_it() {
        let table = Arc::new(MemTable::new(1));
        for k in [b"a", b"c", b"e"] {
            table.insert(k, 1, ValueKind::Put, b"v");
        }
        let mut c = table.cursor();
        c.seek_to_first().unwrap();
        table.insert(b"b", 2, ValueKind::Put, b"new");
        table.insert(b"d", 3, ValueKind::Put, b"new");
        let mut seen = Vec::new();
        while c.valid() {
            seen.push(crate::key::user_key(c.key()).to_vec());
            c.next().unwrap();
        }
        assert_eq!(seen, [b"a", b"b", b"c", b"d", b"e"].map(|k| k.to_vec()));
    }

    #[test]
    fn cursor_keeps_the_table_alive() {
        let table = Arc::new(MemTable::new(1));
        table.insert(b"a", 1, ValueKind::Put, b"x");
        let mut c = table.cursor();
        drop(table);
        c.seek_to_last().unwrap();
        assert_eq!(c.value(), b"x");
        c.prev().unwrap();
        assert!(!c.valid());
        assert_eq!(c.key(), b"");
    }
}
