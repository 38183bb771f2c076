//! The unshared-digest baseline (`ReadLab::share_hash` false), with the `lab` feature only:
//! the point lookup of `read.rs`, except that each table visited hashes the key for itself,
//! as an engine without a shared digest does (seed 000's baseline). No filter can be
//! prefetched: the probe positions need the digest.

use super::inner::DbInner;
use super::read::{search_memtables, Found, LookupCtx};
use super::tree::Tree;
use crate::error::Result;
use crate::key::{seek_key, SeqNo};
use crate::options::ReadOptions;
use crate::stats::LookupTrace;

impl DbInner {
    /// [`get_at`](Self::get_at) with a digest per table.
    pub(super) fn lookup_unshared(
        &self,
        tree: &Tree,
        key: &[u8],
        seq: Option<SeqNo>,
        ro: &ReadOptions,
    ) -> Result<Found> {
        let sv = tree.sv.lease();
        let mut trace = sv.trace(ro.stage_timer());
        let seq = seq.unwrap_or_else(|| self.visible_seq());
        let seek = seek_key(key, seq);
        let floor = sv.range_del_floor(key, seq);
        let answer = match search_memtables(&sv, &seek, floor, &mut trace) {
            Some(answer) => Ok(answer),
            None => self.search_tables_unshared(&LookupCtx { tree, sv: &sv, key, seek: &seek, floor, ro }, &mut trace),
        };
        trace.finish();
        answer
    }

    /// The candidate tables as `read.rs` searches them, hashing the key per table, without
    /// prefetch.
    fn search_tables_unshared(&self, l: &LookupCtx<'_>, trace: &mut LookupTrace<'_>) -> Result<Found> {
        l.tree.manager.begin_lookup();
        let last_level = l.sv.version.deepest_nonempty_level();
        for candidate in l.sv.version.candidates(l.key) {
            let c = self.open_candidate(&l.sv.tables, candidate, l.seek)?;
            let start = trace.timer().start();
            let digest = self.opts.digest(l.key);
            trace.hashing_took(trace.timer().nanos_since(start));
            if let Some(answer) = self.probe(l, last_level, &c, &digest, trace)? {
                return Ok(answer);
            }
        }
        Ok(None)
    }
}
