//! A transaction's commit check, run by the write leader: has any key the transaction
//! read for update or wrote been written since its snapshot?
//!
//! The leader answers from the memtables, which hold every recent write with its sequence
//! number, and from the writes ahead of the transaction in its own group (not in the
//! memtables yet). The memtables answer only while they hold every write since the
//! snapshot (their oldest one's floor is at or below it); once a flush has taken writes
//! past the snapshot to a table, the commit fails with a conflict rather than commit
//! blindly (as RocksDB's optimistic transactions fail when their memtable history is too
//! short). Nothing is locked or recorded per key on any other path.

use super::batch::{BatchOp, WriteBatch};
use super::inner::DbInner;
use super::super_version::SuperVersion;
use super::write_queue::{CommitCheck, QueuedWrite};
use crate::error::{Error, Result};
use std::sync::Arc;

/// The keyspaces a group's checks have looked at so far, each read once per group: its id,
/// and its name and super version (`None`: dropped).
type Looked = Vec<(u32, Option<(String, Arc<SuperVersion>)>)>;

impl DbInner {
    /// Refuse, with [`Error::Conflict`], the transactions of `group` whose check fails; they
    /// leave the group, their results join `refused`. Called by the leader only.
    pub(super) fn check_commits(&self, group: &mut Vec<QueuedWrite>, refused: &mut Vec<(u64, Result<()>)>) {
        let mut kept: Vec<QueuedWrite> = Vec::with_capacity(group.len());
        let mut svs: Looked = Vec::new();
        for w in group.drain(..) {
            let verdict = match &w.check {
                None => Ok(()),
                Some(check) => self.check_commit(check, &kept, &mut svs),
            };
            match verdict {
                Ok(()) => kept.push(w),
                Err(e) => refused.push((w.id, Err(e))),
            }
        }
        *group = kept;
    }

    /// The check of a transaction that writes nothing, run under the lead (no write in
    /// flight).
    pub(crate) fn check_alone(&self, check: &CommitCheck) -> Result<()> {
        self.check_commit(check, &[], &mut Vec::new())
    }

    fn check_commit(&self, check: &CommitCheck, ahead: &[QueuedWrite], svs: &mut Looked) -> Result<()> {
        for (keyspace, key) in &check.keys {
            let at = match svs.iter().position(|(id, _)| id == keyspace) {
                Some(at) => at,
                None => {
                    let tree = if *keyspace == self.default.id {
                        Some(self.default.clone())
                    } else {
                        self.trees.get(*keyspace)
                    };
                    svs.push((*keyspace, tree.map(|t| (t.name.clone(), t.super_version()))));
                    svs.len() - 1
                }
            };
            // A dropped keyspace: its writes are refused anyway, and nothing reads it.
            let Some((_, Some((name, sv)))) = svs.get(at) else { continue };
            let conflict =
                |reason: &str| Error::Conflict { keyspace: name.clone(), key: key.clone(), reason: reason.to_string() };
            let oldest = sv.imm.last().unwrap_or(&sv.mem);
            if oldest.floor() > check.snapshot {
                return Err(conflict(
                    "writes since the transaction's snapshot were flushed: they can no longer be checked",
                ));
            }
            let newest = sv.imm.iter().map(|m| m.newest_write(key)).fold(sv.mem.newest_write(key), u64::max);
            if newest > check.snapshot {
                return Err(conflict("written after the transaction's snapshot"));
            }
            if ahead.iter().any(|w| writes_key(&w.batch, *keyspace, key)) {
                return Err(conflict("written after the transaction's snapshot"));
            }
        }
        Ok(())
    }
}

/// Whether `batch` writes `key` of keyspace `keyspace`: a put or a delete of it, or a range
/// delete over it. A batch that does not decode counts as writing it (the leader fails
/// such a batch on its own).
fn writes_key(batch: &WriteBatch, keyspace: u32, key: &[u8]) -> bool {
    batch.ops().any(|op| match op {
        Err(_) => true,
        Ok((ks, _)) if ks != keyspace => false,
        Ok((_, BatchOp::Point(_, k, _))) => k == key,
        Ok((_, BatchOp::DeleteRange { start, end })) => key >= start && end.is_none_or(|e| key < e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_delete_in_a_batch_writes_the_keys_in_it() {
        let mut b = WriteBatch::new();
        b.delete_range(&b"b"[..]..&b"d"[..]);
        assert!(writes_key(&b, 0, b"b") && writes_key(&b, 0, b"c"));
        assert!(!writes_key(&b, 0, b"d") && !writes_key(&b, 0, b"a") && !writes_key(&b, 1, b"c"));
        let mut b = WriteBatch::new();
        b.delete_range::<&[u8], _>(&b"m"[..]..);
        assert!(writes_key(&b, 0, b"zzz") && !writes_key(&b, 0, b"l"));
    }
}
