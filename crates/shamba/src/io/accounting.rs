//! I/O accounting: every block read is counted by kind and bytes where it happens.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a block read was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A data block (key-value entries).
    Data,
    /// An index block (fence pointers), including top-level partition indexes.
    Index,
    /// A filter block, module or unit.
    Filter,
    /// Anything else: footer, properties, WAL and manifest replay.
    Other,
}

impl BlockKind {
    /// All kinds, in counter order.
    pub const ALL: [BlockKind; 4] = [BlockKind::Data, BlockKind::Index, BlockKind::Filter, BlockKind::Other];

    /// A short lowercase name for tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Data => "data",
            BlockKind::Index => "index",
            BlockKind::Filter => "filter",
            BlockKind::Other => "other",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// Live, shared counters of device reads (cache misses that went to storage).
#[derive(Debug, Default)]
pub(crate) struct IoStats {
    reads: [AtomicU64; 4],
    bytes: [AtomicU64; 4],
}

/// The database's read counters at one moment; subtract two to get the reads of an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Reads per kind, indexed like [`BlockKind::ALL`].
    pub reads: [u64; 4],
    /// Bytes per kind, indexed like [`BlockKind::ALL`].
    pub bytes: [u64; 4],
}

impl IoStats {
    /// Count one read of `bytes` bytes of `kind`.
    #[inline]
    pub(crate) fn record(&self, kind: BlockKind, bytes: u64) {
        self.reads[kind.slot()].fetch_add(1, Relaxed);
        self.bytes[kind.slot()].fetch_add(bytes, Relaxed);
    }

    /// The counters now.
    pub(crate) fn snapshot(&self) -> IoCounters {
        IoCounters {
            reads: std::array::from_fn(|i| self.reads[i].load(Relaxed)),
            bytes: std::array::from_fn(|i| self.bytes[i].load(Relaxed)),
        }
    }
}

impl IoCounters {
    /// Reads of one kind.
    pub fn reads_of(&self, kind: BlockKind) -> u64 {
        self.reads[kind.slot()]
    }
    /// Bytes of one kind.
    pub fn bytes_of(&self, kind: BlockKind) -> u64 {
        self.bytes[kind.slot()]
    }
    /// Reads of all kinds.
    pub fn total_reads(&self) -> u64 {
        self.reads.iter().sum()
    }
    /// Bytes of all kinds.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
    /// `self - earlier`, counter by counter.
    pub fn since(&self, earlier: &IoCounters) -> IoCounters {
        IoCounters {
            reads: std::array::from_fn(|i| self.reads[i].saturating_sub(earlier.reads[i])),
            bytes: std::array::from_fn(|i| self.bytes[i].saturating_sub(earlier.bytes[i])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_separate_kinds_and_subtract() {
        let s = IoStats::default();
        s.record(BlockKind::Data, 4096);
        let before = s.snapshot();
        s.record(BlockKind::Filter, 100);
        s.record(BlockKind::Filter, 28);
        let d = s.snapshot().since(&before);
        assert_eq!(d.reads_of(BlockKind::Filter), 2);
        assert_eq!(d.bytes_of(BlockKind::Filter), 128);
        assert_eq!(d.reads_of(BlockKind::Data), 0);
        assert_eq!(s.snapshot().total_reads(), 3);
    }
}
