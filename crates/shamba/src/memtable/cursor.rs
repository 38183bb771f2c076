//! A cursor over a memtable that keeps the table alive.

use super::entry::{InternalKey, MemEntry};
use super::table::MemTable;
use crate::cursor::Cursor;
use crate::error::Result;
use crossbeam_skiplist::map::Entry;
use std::ops::Bound;
use std::sync::Arc;

/// Walks a memtable in internal-key order, both ways.
///
/// It holds the table by `Arc` and a copy of the current entry rather than a skip-list
/// entry (which would borrow the table); each step re-searches from the copied key with
/// `lower_bound`/`upper_bound`, which also makes it see entries inserted while it walks.
pub struct MemTableCursor {
    table: Arc<MemTable>,
    /// The current entry; buffers are reused from step to step.
    key: Vec<u8>,
    value: Vec<u8>,
    valid: bool,
}

impl MemTableCursor {
    /// An unpositioned cursor over `table`.
    pub fn new(table: Arc<MemTable>) -> Self {
        MemTableCursor { table, key: Vec::new(), value: Vec::new(), valid: false }
    }

    fn set(&mut self, entry: Option<Entry<'_, MemEntry, ()>>) {
        match entry {
            Some(e) => {
                self.key.clear();
                self.key.extend_from_slice(e.key().key());
                self.value.clear();
                self.value.extend_from_slice(e.key().value());
                self.valid = true;
            }
            None => self.valid = false,
        }
    }
}

impl Cursor for MemTableCursor {
    fn valid(&self) -> bool {
        self.valid
    }

    fn seek_to_first(&mut self) -> Result<()> {
        let table = Arc::clone(&self.table);
        self.set(table.map.front());
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        let table = Arc::clone(&self.table);
        self.set(table.map.back());
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let table = Arc::clone(&self.table);
        self.set(table.map.lower_bound(Bound::Included(InternalKey::new(target))));
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let table = Arc::clone(&self.table);
        self.set(table.map.upper_bound(Bound::Included(InternalKey::new(target))));
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.valid {
            let table = Arc::clone(&self.table);
            let found = table.map.lower_bound(Bound::Excluded(InternalKey::new(&self.key)));
            self.set(found);
        }
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if self.valid {
            let table = Arc::clone(&self.table);
            let found = table.map.upper_bound(Bound::Excluded(InternalKey::new(&self.key)));
            self.set(found);
        }
        Ok(())
    }

    fn key(&self) -> &[u8] {
        if self.valid {
            &self.key
        } else {
            &[]
        }
    }

    fn value(&self) -> &[u8] {
        if self.valid {
            &self.value
        } else {
            &[]
        }
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
