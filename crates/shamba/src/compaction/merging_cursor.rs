//! The merge of several cursors into one, in internal-key order, in both directions.
//!
//! The valid children are kept in a binary heap on their current keys (smallest on top
//! moving forward, largest moving backward), so a step costs about `2 log2(k)` key
//! comparisons for `k` children. A compaction of L0 into L1 merges twenty or more files
//! when L0 is at its slowdown trigger; the linear scan this replaced compared every child
//! for every entry and was a large part of the compaction thread's time in a random load.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::key::compare_internal_keys;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Merges children cursors; keys equal across children are all yielded, the child listed
/// first first (in either direction).
pub(crate) struct MergingCursor {
    children: Vec<Box<dyn Cursor>>,
    /// Indices of the valid children, a binary heap whose top (`heap[0]`) is the current
    /// entry's child: see [`MergingCursor::before`].
    heap: Vec<usize>,
    direction: Direction,
}

impl MergingCursor {
    /// Merge `children`.
    pub(crate) fn new(children: Vec<Box<dyn Cursor>>) -> Self {
        let heap = Vec::with_capacity(children.len());
        MergingCursor { children, heap, direction: Direction::Forward }
    }

    /// Whether child `a`'s entry comes out before child `b`'s in the current direction.
    fn before(&self, a: usize, b: usize) -> bool {
        let (Some(ca), Some(cb)) = (self.children.get(a), self.children.get(b)) else {
            return false;
        };
        let ahead = if self.direction == Direction::Forward { Ordering::Less } else { Ordering::Greater };
        match compare_internal_keys(ca.key(), cb.key()) {
            Ordering::Equal => a < b,
            order => order == ahead,
        }
    }

    /// Restore the heap order below position `at` (its children are heaps).
    fn sift_down(&mut self, mut at: usize) {
        loop {
            let (left, right) = (2 * at + 1, 2 * at + 2);
            let mut first = at;
            for c in [left, right] {
                if c < self.heap.len() && self.before(self.heap[c], self.heap[first]) {
                    first = c;
                }
            }
            if first == at {
                return;
            }
            self.heap.swap(at, first);
            at = first;
        }
    }

    /// Heap every valid child for moving in `direction`.
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        self.heap.extend((0..self.children.len()).filter(|&i| self.children[i].valid()));
        for at in (0..self.heap.len() / 2).rev() {
            self.sift_down(at);
        }
    }

    /// After the top child moved: keep it in place if still valid, else drop it.
    fn top_moved(&mut self) {
        let Some(&top) = self.heap.first() else { return };
        if !self.children[top].valid() {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
    }

    /// Put every child but `cur` on its first entry after (forward) or last entry before
    /// (backward) `cur`'s key, for a merge turning around at it.
    fn turn_around(&mut self, cur: usize, direction: Direction) -> Result<()> {
        let key = self.children[cur].key().to_vec();
        for (i, c) in self.children.iter_mut().enumerate() {
            if i == cur {
                continue;
            }
            if direction == Direction::Forward {
                c.seek(&key)?;
                if c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                    c.next()?;
                }
            } else {
                c.seek_for_prev(&key)?;
                if c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                    c.prev()?;
                }
            }
        }
        Ok(())
    }
}

impl Cursor for MergingCursor {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_first()?;
        }
        self.rebuild(Direction::Forward);
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_last()?;
        }
        self.rebuild(Direction::Backward);
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek(target)?;
        }
        self.rebuild(Direction::Forward);
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek_for_prev(target)?;
        }
        self.rebuild(Direction::Backward);
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        let Some(&cur) = self.heap.first() else { return Ok(()) };
        if self.direction == Direction::Backward {
            // Every other child sits at or before the current key; move each to the first
            // entry after it so the forward merge resumes from here.
            self.turn_around(cur, Direction::Forward)?;
            self.children[cur].next()?;
            self.rebuild(Direction::Forward);
            return Ok(());
        }
        self.children[cur].next()?;
        self.top_moved();
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        let Some(&cur) = self.heap.first() else { return Ok(()) };
        if self.direction == Direction::Forward {
            // Mirror image of `next`: put every other child on the last entry before the
            // current key.
            self.turn_around(cur, Direction::Backward)?;
            self.children[cur].prev()?;
            self.rebuild(Direction::Backward);
            return Ok(());
        }
        self.children[cur].prev()?;
        self.top_moved();
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.heap.first().map(|&i| self.children[i].key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.heap.first().map(|&i| self.children[i].value()).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::VecCursor;
    use crate::key::{internal_key, ValueKind};
    use proptest::prelude::*;

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    fn source(keys: &[(u8, u64)]) -> (Entries, Box<dyn Cursor>) {
        let mut v: Vec<_> = keys.iter().map(|&(k, s)| (internal_key(&[k], s, ValueKind::Put), vec![k])).collect();
        v.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        (v.clone(), Box::new(VecCursor::new(v)))
    }

    proptest! {
        #[test]
        fn merge_walks_the_union_in_order_both_ways_and_turning(
            parts in prop::collection::vec(prop::collection::vec((0u8..20, 0u64..1000), 0..12), 1..24),
            turns in prop::collection::vec(any::<bool>(), 0..40),
        ) {
            // Sequence numbers are made unique across sources, as they are in the engine.
            let mut all = Vec::new();
            let mut children = Vec::new();
            for (p, keys) in parts.iter().enumerate() {
                let keys: Vec<_> = keys.iter().map(|&(k, s)| (k, s * 32 + p as u64)).collect();
                let (v, c) = source(&keys);
                all.extend(v);
                children.push(c);
            }
            all.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            let mut m = MergingCursor::new(children);
            m.seek_to_first().unwrap();
            let mut forward = Vec::new();
            while m.valid() { forward.push(m.key().to_vec()); m.next().unwrap(); }
            prop_assert_eq!(forward, all.iter().map(|e| e.0.clone()).collect::<Vec<_>>());
            m.seek_to_last().unwrap();
            let mut backward = Vec::new();
            while m.valid() { backward.push(m.key().to_vec()); m.prev().unwrap(); }
            backward.reverse();
            prop_assert_eq!(backward, all.iter().map(|e| e.0.clone()).collect::<Vec<_>>());
            // Random walk with direction changes matches index arithmetic on the model.
            if !all.is_empty() {
                m.seek_to_first().unwrap();
                let mut pos: i64 = 0;
                for fwd in turns {
                    if !m.valid() { break; }
                    if fwd { m.next().unwrap(); pos += 1; } else { m.prev().unwrap(); pos -= 1; }
                    if pos < 0 || pos as usize >= all.len() { prop_assert!(!m.valid()); break; }
                    prop_assert_eq!(m.key(), all[pos as usize].0.as_slice());
                }
            }
        }
    }
}
