//! Sequence numbers: the largest one readers may see, and the ones live snapshots pin.
//!
//! The write leader publishes a group's last number once the group is in the memtables;
//! a snapshot pins the number it reads at, and compactions keep every version the oldest
//! pinned number can see. A transaction pins its number with a lease instead: past the
//! lease's deadline compactions no longer keep what it sees (and its reads fail), so a
//! transaction left open does not hold old versions forever.

use crate::key::SeqNo;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The database's visible sequence number and its live snapshots.
pub(crate) struct Sequence {
    /// Largest sequence number readers may see.
    visible: AtomicU64,
    /// Live snapshots: sequence number -> handles.
    pinned: Mutex<BTreeMap<SeqNo, usize>>,
    /// Live transactions' leases: (sequence number, lease id) -> deadline (`None`: none).
    leases: Mutex<Leases>,
}

/// The transactions' leases on sequence numbers, each with its own id.
#[derive(Default)]
struct Leases {
    next_id: u64,
    live: BTreeMap<(SeqNo, u64), Option<Instant>>,
}

/// A lease on a sequence number: what a transaction reads at, kept by compactions until
/// `deadline` (if any).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lease {
    pub seq: SeqNo,
    pub id: u64,
    pub deadline: Option<Instant>,
}

impl Lease {
    /// Whether its deadline has passed: compactions may have dropped what it reads.
    pub(crate) fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

impl Sequence {
    /// Readers see up to `last` (the last number recovery found).
    pub(crate) fn new(last: SeqNo) -> Sequence {
        Sequence {
            visible: AtomicU64::new(last),
            pinned: Mutex::new(BTreeMap::new()),
            leases: Mutex::new(Leases::default()),
        }
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

    /// Lease the visible sequence number until `deadline` (forever with `None`), for a
    /// transaction. Registered before the number is read, as [`Sequence::pin`].
    pub(crate) fn lease(&self, deadline: Option<Instant>) -> Lease {
        let mut leases = self.leases.lock();
        let seq = self.visible();
        let id = leases.next_id;
        leases.next_id += 1;
        leases.live.insert((seq, id), deadline);
        Lease { seq, id, deadline }
    }

    /// The transaction holding `lease` is gone.
    pub(crate) fn release(&self, lease: &Lease) {
        self.leases.lock().live.remove(&(lease.seq, lease.id));
    }

    /// The oldest sequence number any reader may still ask for: the oldest pinned one or
    /// leased one whose deadline has not passed, or the visible one when there is none.
    /// Expired leases are forgotten here (their transactions' reads fail from then on).
    pub(crate) fn oldest_readable(&self) -> SeqNo {
        let pinned = self.pinned.lock();
        let visible = self.visible();
        let oldest_pin = pinned.keys().next().copied().unwrap_or(visible);
        drop(pinned);
        let mut leases = self.leases.lock();
        if leases.live.is_empty() {
            return oldest_pin;
        }
        let now = Instant::now();
        leases.live.retain(|_, deadline| deadline.is_none_or(|d| now < d));
        let oldest_lease = leases.live.keys().next().map_or(visible, |(seq, _)| *seq);
        oldest_pin.min(oldest_lease)
    }

    /// The newest sequence number a live snapshot pins or a transaction's lease holds (one
    /// past its deadline does not count), if any: a compaction filter sees only entries
    /// above it.
    pub(crate) fn newest_pinned(&self) -> Option<SeqNo> {
        let pinned = self.pinned.lock().keys().next_back().copied();
        let leases = self.leases.lock();
        let now = Instant::now();
        let leased =
            leases.live.iter().rev().find(|(_, deadline)| deadline.is_none_or(|d| now < d)).map(|((seq, _), _)| *seq);
        pinned.max(leased)
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
    fn an_expired_lease_stops_holding_its_number() {
        let s = Sequence::new(5);
        let forever = s.lease(None);
        let brief = s.lease(Some(Instant::now() + std::time::Duration::from_millis(30)));
        s.publish(9);
        let later = s.lease(Some(Instant::now() + std::time::Duration::from_secs(600)));
        assert_eq!((forever.seq, brief.seq, later.seq), (5, 5, 9));
        s.release(&forever);
        assert_eq!(s.oldest_readable(), 5, "the brief lease still holds 5");
        std::thread::sleep(std::time::Duration::from_millis(40));
        assert!(brief.expired() && !later.expired());
        assert_eq!(s.oldest_readable(), 9, "past its deadline the lease holds nothing");
        s.release(&brief);
        s.release(&later);
        s.publish(12);
        assert_eq!(s.oldest_readable(), 12);
    }

    #[test]
    fn skipped_numbers_are_never_taken_back() {
        let s = Sequence::new(10);
        s.skip_past(20);
        s.skip_past(15);
        assert_eq!(s.visible(), 20);
    }
}
