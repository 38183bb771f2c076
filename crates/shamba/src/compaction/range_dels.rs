//! Which range tombstones a compaction (or a flush) may collect.
//!
//! A compaction drops every version a tombstone visible to every snapshot deletes (see
//! `job.rs`). Once a compaction has read every table whose key range meets a tombstone's,
//! no version it deletes is left anywhere (the memtables hold only newer writes: the
//! tombstone reached the version when its memtable was flushed, after every older one), so
//! the tombstone goes in the same edit. A tombstone no table meets goes at the next flush
//! or compaction. `Db::compact` reads every table, so it collects every tombstone no
//! snapshot still needs.

use crate::key::SeqNo;
use crate::version::Version;

/// The sequence numbers of the tombstones a compaction of the tables `inputs` (none, for a
/// flush) makes useless: those the compaction applied (the tombstones of `applied`, the
/// version it read, visible to `smallest_snapshot`, the oldest snapshot it ran with) that
/// `current`, the version its edit applies to, still holds and whose every table meeting
/// them is an input.
pub(crate) fn collectable_range_dels(
    applied: &Version,
    current: &Version,
    inputs: &[u64],
    smallest_snapshot: SeqNo,
) -> Vec<SeqNo> {
    applied
        .range_dels
        .list
        .iter()
        .filter(|t| t.seq <= smallest_snapshot)
        .filter(|t| current.range_dels.list.iter().any(|held| held.seq == t.seq))
        .filter(|t| {
            current
                .all_files()
                .filter(|(_, f)| t.overlaps(f.smallest_user_key(), f.largest_user_key()))
                .all(|(_, f)| inputs.contains(&f.number))
        })
        .map(|t| t.seq)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range_del::{RangeDels, RangeTombstone};
    use crate::version::{FileMeta, Run};
    use std::sync::Arc;

    fn file(number: u64, lo: &[u8], hi: &[u8]) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            run: 0,
            smallest: crate::key::internal_key(lo, 1, crate::key::ValueKind::Put),
            largest: crate::key::internal_key(hi, 1, crate::key::ValueKind::Put),
            ..FileMeta::default()
        })
    }

    #[test]
    fn a_tombstone_goes_once_every_table_it_meets_was_compacted_and_no_snapshot_needs_it() {
        let mut v = Version::new(3);
        v.levels[1].runs = vec![Run::new(0, vec![file(1, b"a", b"c"), file(2, b"d", b"f")])];
        v.levels[2].runs = vec![Run::new(0, vec![file(3, b"a", b"z")])];
        let t =
            |start: &str, end: Option<&str>, seq| RangeTombstone { start: start.into(), end: end.map(Into::into), seq };
        v.range_dels = Arc::new(RangeDels::new(vec![t("b", Some("c"), 10), t("x", None, 20), t("zz", None, 30)]));
        // Nothing compacted: only the tombstone that meets no table goes.
        assert_eq!(collectable_range_dels(&v, &v, &[], 100), vec![30]);
        // Files 1 and 3 hold [b, c): compacting both collects it; file 3 alone holds x..
        assert_eq!(collectable_range_dels(&v, &v, &[1, 3], 100), vec![10, 20, 30]);
        assert_eq!(collectable_range_dels(&v, &v, &[1], 100), vec![30]);
        // A snapshot older than a tombstone keeps it.
        assert_eq!(collectable_range_dels(&v, &v, &[1, 3], 15), vec![10]);
        // A tombstone that arrived after the compaction read its version was not applied.
        let mut before = v.clone();
        before.range_dels = Arc::new(RangeDels::new(vec![t("b", Some("c"), 10)]));
        assert_eq!(collectable_range_dels(&before, &v, &[1, 3], 100), vec![10]);
    }
}
