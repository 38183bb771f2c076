//! The merge of several cursors into one, in internal-key order, in both directions.
//!
//! Children are few (memtables, L0 files, one cursor per deeper run), so the current child
//! is found by a linear scan rather than a heap: simpler, and as fast for a dozen inputs.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::key::compare_internal_keys;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Merges children cursors; keys equal across children are all yielded.
pub struct MergingCursor {
    children: Vec<Box<dyn Cursor>>,
    current: Option<usize>,
    direction: Direction,
}

impl MergingCursor {
    /// Merge `children`.
    pub fn new(children: Vec<Box<dyn Cursor>>) -> Self {
        MergingCursor { children, current: None, direction: Direction::Forward }
    }

    fn pick(&mut self, want: Ordering) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                Some(b) if compare_internal_keys(c.key(), self.children[b].key()) != want => Some(b),
                _ => Some(i),
            };
        }
        self.current = best;
    }

    fn pick_smallest(&mut self) {
        self.direction = Direction::Forward;
        self.pick(Ordering::Less);
    }

    fn pick_largest(&mut self) {
        self.direction = Direction::Backward;
        self.pick(Ordering::Greater);
    }
}

impl Cursor for MergingCursor {
    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_first()?;
        }
        self.pick_smallest();
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        for c in &mut self.children {
            c.seek_to_last()?;
        }
        self.pick_largest();
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek(target)?;
        }
        self.pick_smallest();
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek_for_prev(target)?;
        }
        self.pick_largest();
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        let Some(cur) = self.current else { return Ok(()) };
        if self.direction == Direction::Backward {
            // Every other child sits at or before the current key; move each to the first
            // entry after it so the forward merge resumes from here.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek(&key)?;
                if c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                    c.next()?;
                }
            }
        }
        self.children[cur].next()?;
        self.pick_smallest();
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        let Some(cur) = self.current else { return Ok(()) };
        if self.direction == Direction::Forward {
            // Mirror image of `next`: put every other child on the last entry before the
            // current key.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i == cur {
                    continue;
                }
                c.seek_for_prev(&key)?;
                if c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                    c.prev()?;
                }
            }
        }
        self.children[cur].prev()?;
        self.pick_largest();
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.current.map(|i| self.children[i].key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.current.map(|i| self.children[i].value()).unwrap_or(&[])
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
            parts in prop::collection::vec(prop::collection::vec((0u8..20, 0u64..1000), 0..12), 1..5),
            turns in prop::collection::vec(any::<bool>(), 0..40),
        ) {
            // Sequence numbers are made unique across sources, as they are in the engine.
            let mut all = Vec::new();
            let mut children = Vec::new();
            for (p, keys) in parts.iter().enumerate() {
                let keys: Vec<_> = keys.iter().map(|&(k, s)| (k, s * 8 + p as u64)).collect();
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
