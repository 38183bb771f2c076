//! Sequence numbers: the largest one readers may see, and the ones live snapshots pin.
//!
//! The write leader publishes a group's last number once the group is in the memtables;
//! a snapshot pins the number it reads at, and compactions keep every version the oldest
//! pinned number can see.

use crate::key::SeqNo;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The database's visible sequence number and its live snapshots.
pub(crate) struct Sequence {
    /// Largest sequence number readers may see.
    visible: AtomicU64,
    /// Live snapshots: sequence number -> handles.
    pinned: Mutex<BTreeMap<SeqNo, usize>>,
}

impl Sequence {
    /// Readers see up to `last` (the last number recovery found).
    pub(crate) fn new(last: SeqNo) -> Sequence {
        Sequence { visible: AtomicU64::new(last), pinned: Mutex::new(BTreeMap::new()) }
    }

    /// Largest sequence number readers may see.
    #[inline]
    pub(crate) fn visible(&self) -> SeqNo {
        self.visible.load(Ordering::Acquire)
    }

    /// Readers see up to `last` from now on (the write leader, once its group is applied).
    pub(crate) fn publish(&self, last: SeqNo) {
        self.visible.store(last, Ordering::Release);
    }

    /// Never hand out numbers up to `last` again, nor let readers see past what is applied
    /// below them: a group whose WAL write failed may be in the log, whole or torn.
    pub(crate) fn skip_past(&self, last: SeqNo) {
        self.visible.fetch_max(last, Ordering::AcqRel);
    }

    /// Pin the visible sequence number for a snapshot and return it. Registered under the
    /// lock before the number is read, so a compaction that reads the oldest pinned number
    /// after this cannot miss it.
    pub(crate) fn pin(&self) -> SeqNo {
        let mut pinned = self.pinned.lock();
        let seq = self.visible();
        *pinned.entry(seq).or_insert(0) += 1;
        seq
    }

    /// A snapshot pinning `seq` is gone.
    pub(crate) fn unpin(&self, seq: SeqNo) {
        let mut pinned = self.pinned.lock();
        if let Some(n) = pinned.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                pinned.remove(&seq);
            }
        }
    }

    /// The oldest sequence number any reader may still ask for: the oldest pinned one, or
    /// the visible one when no snapshot lives.
    pub(crate) fn oldest_readable(&self) -> SeqNo {
        let pinned = self.pinned.lock();
        pinned.keys().next().copied().unwrap_or_else(|| self.visible())
    }

    /// The newest pinned sequence number, if a snapshot lives.
    pub(crate) fn newest_pinned(&self) -> Option<SeqNo> {
        self.pinned.lock().keys().next_back().copied()
    }

    /// How many pins are live, over every number.
    #[cfg(test)]
    pub(crate) fn pins(&self) -> usize {
        self.pinned.lock().values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_pin_holds_until_its_last_snapshot_goes() {
        let s = Sequence::new(5);
        assert_eq!(s.oldest_readable(), 5);
        let (a, b) = (s.pin(), s.pin());
        assert_eq!((a, b), (5, 5));
        s.publish(9);
        let c = s.pin();
        assert_eq!(c, 9);
        s.publish(12);
        assert_eq!(s.oldest_readable(), 5);
        s.unpin(a);
        assert_eq!(s.oldest_readable(), 5, "a second snapshot still pins 5");
        s.unpin(b);
        assert_eq!(s.oldest_readable(), 9);
        s.unpin(c);
        assert_eq!(s.oldest_readable(), 12, "no snapshot: the visible number");
    }

    #[test]
    fn skipped_numbers_are_never_taken_back() {
        let s = Sequence::new(10);
        s.skip_past(20);
        s.skip_past(15);
        assert_eq!(s.visible(), 20);
    }
}
