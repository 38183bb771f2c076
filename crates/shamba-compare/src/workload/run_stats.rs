//! What an engine's own counters say happened during one timed run: blocks read past the
//! block cache, and the background work (compactions, write stalls) that ran beside the
//! clients. Taken as the difference of the counters before and after the run, so a run's
//! figures do not include the load or the runs before it.

use crate::engine::{Engine, ReadCounters, WriteCounters};

/// Names under which engines report how many compactions they have finished.
const COMPACTION_COUNTS: [&str; 2] = ["compactions", "compactions_completed"];

/// An engine's counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    reads: ReadCounters,
    writes: WriteCounters,
}

impl Snapshot {
    /// The counters of `engine` now.
    pub fn of(engine: &dyn Engine) -> Snapshot {
        Snapshot { reads: engine.counters(), writes: engine.write_counters() }
    }
}

/// Engine counters over one run; `None` where the engine does not count that.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunStats {
    /// Blocks read from files (block-cache misses).
    pub blocks_read: u64,
    /// Bytes read from files for those blocks.
    pub bytes_read: u64,
    /// Compactions finished.
    pub compactions: Option<u64>,
    /// Bytes written by compactions.
    pub compaction_bytes: Option<u64>,
    /// Microseconds writers were slowed down or stopped.
    pub stall_micros: Option<u64>,
}

/// `after - before` of a cumulative counter both sides have.
fn grew(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    Some(after?.saturating_sub(before?))
}

/// The first compaction count among `detail`'s counters.
fn compaction_count(detail: &[(String, u64)]) -> Option<u64> {
    detail.iter().find(|(name, _)| COMPACTION_COUNTS.contains(&name.as_str())).map(|&(_, v)| v)
}

impl RunStats {
    /// What the counters grew by from `before` to `after`.
    pub fn between(before: &Snapshot, after: &Snapshot) -> RunStats {
        let reads = after.reads.since(&before.reads);
        RunStats {
            blocks_read: reads.blocks,
            bytes_read: reads.bytes,
            compactions: grew(compaction_count(&before.writes.detail), compaction_count(&after.writes.detail)),
            compaction_bytes: grew(before.writes.compaction_bytes, after.writes.compaction_bytes),
            stall_micros: grew(before.writes.stall_micros, after.writes.stall_micros),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(blocks: u64, compactions: u64, compaction_bytes: Option<u64>) -> Snapshot {
        Snapshot {
            reads: ReadCounters { blocks, bytes: blocks * 4096 },
            writes: WriteCounters {
                compaction_bytes,
                stall_micros: None,
                detail: vec![("immutable_memtables".into(), 7), ("compactions_completed".into(), compactions)],
                ..WriteCounters::default()
            },
        }
    }

    #[test]
    fn a_run_counts_only_what_grew_during_it_and_nothing_an_engine_does_not_count() {
        let before = snapshot(100, 3, Some(1_000));
        let after = snapshot(160, 5, Some(4_000));
        let stats = RunStats::between(&before, &after);
        assert_eq!(
            stats,
            RunStats {
                blocks_read: 60,
                bytes_read: 60 * 4096,
                compactions: Some(2),
                compaction_bytes: Some(3_000),
                stall_micros: None,
            }
        );
        let uncounted = RunStats::between(&snapshot(0, 0, None), &snapshot(0, 0, Some(5)));
        assert_eq!(uncounted.compaction_bytes, None);
    }
}
