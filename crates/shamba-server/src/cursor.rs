//! SCAN cursors. A cursor stands for the last key a SCAN call returned; the next call
//! resumes after it, so keys written or deleted meanwhile never make a scan repeat or skip
//! a key that stayed (Redis's guarantee, here exact since keys are sorted).
//!
//! The key itself would be the natural cursor, but clients parse cursors as unsigned
//! integers (`redis-cli --scan` with `strtoull`, redis-py with `int()`), so the server hands
//! out numbers and remembers which key each stands for: a bounded table, the oldest entry
//! overwritten first, as kvrocks does. A cursor older than the table's span is refused
//! with an error, never silently restarted.

#![deny(clippy::indexing_slicing)]

use parking_lot::Mutex;

/// Cursors remembered at once: many more than the scans that run together.
const SLOTS: usize = 16 * 1024;

/// The table of live cursors.
pub(super) struct CursorTable {
    inner: Mutex<Table>,
}

struct Table {
    /// The next cursor number; numbers are never reused while the server runs.
    next: u64,
    /// Slot `n % SLOTS`: cursor `n` and its key.
    slots: Vec<Option<(u64, Vec<u8>)>>,
}

impl CursorTable {
    pub(super) fn new() -> CursorTable {
        CursorTable { inner: Mutex::new(Table { next: 1, slots: vec![None; SLOTS] }) }
    }

    /// A new cursor standing for `key`.
    pub(super) fn issue(&self, key: Vec<u8>) -> u64 {
        let mut t = self.inner.lock();
        let n = t.next;
        t.next += 1;
        if let Some(slot) = t.slots.get_mut(n as usize % SLOTS) {
            *slot = Some((n, key));
        }
        n
    }

    /// The key cursor `n` stands for, if it is still remembered.
    pub(super) fn resolve(&self, n: u64) -> Option<Vec<u8>> {
        let t = self.inner.lock();
        match t.slots.get(n as usize % SLOTS) {
            Some(Some((m, key))) if *m == n => Some(key.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_resolve_until_overwritten() {
        let t = CursorTable::new();
        let first = t.issue(b"a".to_vec());
        assert_ne!(first, 0, "0 means a new scan");
        assert_eq!(t.resolve(first).as_deref(), Some(&b"a"[..]));
        for i in 0..SLOTS {
            t.issue(i.to_be_bytes().to_vec());
        }
        assert_eq!(t.resolve(first), None);
        assert_eq!(t.resolve(12345678), None);
    }
}
