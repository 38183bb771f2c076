//! Point lookups: memtables, then the candidate files of each level, with one digest.

use super::inner::DbInner;
use crate::error::{Error, Result};
use crate::filter::Digest;
use crate::key::{seek_key, SeqNo, ValueKind};
use crate::manager::Candidate;
use crate::memtable::Lookup;
use crate::options::ReadOptions;
use crate::stats::DbCounters;
use crate::table::{Spot, TableGet, TableReader};
use crate::version::FileMeta;
use std::sync::Arc;
use std::time::Instant;

/// Candidate tables whose filters a lookup prefetches before probing the first: enough for
/// a leveled tree of any practical depth plus a few L0 files.
const PREFETCH_DEPTH: usize = 16;

/// A candidate table with its reader open and the key located in it: (level, metadata,
/// reader, spot), all borrowed from the lookup's version.
type OpenCandidate<'a> = (usize, &'a Arc<FileMeta>, &'a TableReader, Spot<'a>);

impl DbInner {
    /// Check a key's length against the configured limit.
    pub fn check_key(&self, key: &[u8]) -> Result<()> {
        if key.len() > self.opts.max_key_size {
            return Err(Error::InvalidArgument(format!(
                "key of {} bytes exceeds max_key_size ({})",
                key.len(),
                self.opts.max_key_size
            )));
        }
        Ok(())
    }

    /// The newest version of `key` visible at `seq`.
    ///
    /// The key's digest is computed once here and handed to every table: no table hashes
    /// the key again (unless `ro.lab.share_hash` is false, to measure the unshared baseline).
    /// For each candidate table the filter manager chooses which filter parts to probe.
    pub fn get_at(&self, key: &[u8], seq: SeqNo, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        self.check_key(key)?;
        let c = &self.counters;
        DbCounters::add(&c.gets, 1);
        let sv = self.super_version();
        let clock = ro.lab.profile.then(Instant::now);
        if ro.lab.profile {
            DbCounters::add(&c.profiled_lookups, 1);
        }
        // Built once, for every memtable and table below.
        let seek = seek_key(key, seq);
        for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
            // An empty memtable (just after a switch or a reopen) costs nothing to skip.
            if mem.is_empty() {
                continue;
            }
            match mem.get_at_seek_key(&seek) {
                Lookup::Value(v) => {
                    DbCounters::add(&c.memtable_hits, 1);
                    return Ok(Some(v));
                }
                Lookup::Deleted => {
                    DbCounters::add(&c.memtable_hits, 1);
                    return Ok(None);
                }
                Lookup::NotFound => {}
            }
        }
        let hashing = clock.map(|t| {
            DbCounters::add(&c.memtable_nanos, t.elapsed().as_nanos() as u64);
            Instant::now()
        });
        // The unshared baseline hashes per table below; it must not pay for this one too.
        let hash = self.opts.lab.digest_hash;
        let digest = if ro.lab.share_hash { hash.digest(key) } else { Digest::default() };
        if let Some(t) = hashing {
            DbCounters::add(&c.hash_nanos, t.elapsed().as_nanos() as u64);
        }
        let version = &sv.version;
        let last_level = version.deepest_nonempty_level();
        self.manager.begin_lookup();

        // The digest is known before the first probe, so the filter positions of every
        // candidate table are too: prefetch them all (up to PREFETCH_DEPTH tables), so the
        // cache misses of a deep tree overlap instead of queueing one per level.
        let mut candidates = version.candidates(key);
        let mut ahead: [Option<OpenCandidate<'_>>; PREFETCH_DEPTH] = Default::default();
        let mut n_ahead = 0;
        if sv.prefetch && ro.lab.share_hash {
            let skip_last = self.manager.skips_last_level();
            // Two passes: the parts' headers first (where the probe line is depends on
            // them), then the probe lines; each pass's misses overlap with each other.
            for slot in ahead.iter_mut() {
                let Some((level, file)) = candidates.next() else { break };
                let table = self.tables.reader_of(file)?;
                let mut spot = table.locate(&seek);
                if !(skip_last && Some(level) == last_level) {
                    table.prefetch_filter_header(&mut spot);
                }
                *slot = Some((level, file, &**table, spot));
                n_ahead += 1;
            }
            for (_, _, table, spot) in ahead[..n_ahead].iter_mut().flatten() {
                table.prefetch_filter_at(spot, &digest);
            }
        }
        let mut prefetched = ahead[..n_ahead].iter_mut().filter_map(Option::take);
        loop {
            let (level, file, table, spot) = match prefetched.next() {
                Some(c) => c,
                None => match candidates.next() {
                    Some((level, file)) => {
                        let table = self.tables.reader_of(file)?;
                        (level, file, &**table, table.locate(&seek))
                    }
                    None => break,
                },
            };
            let own_digest;
            let d = if ro.lab.share_hash {
                &digest
            } else {
                let t = clock.map(|_| Instant::now());
                own_digest = hash.digest(key);
                if let Some(t) = t {
                    DbCounters::add(&c.hash_nanos, t.elapsed().as_nanos() as u64);
                }
                &own_digest
            };
            let candidate = Candidate {
                level,
                last_level: Some(level) == last_level,
                version,
                meta: file,
                reader: table,
                spot: &spot,
            };
            let (plan, state) = self.manager.plan(&candidate);
            let (got, outcome) = table.get_at_spot(&spot, &seek, d, ro, plan)?;
            if ro.lab.profile {
                DbCounters::add(&c.filter_nanos, outcome.filter_nanos);
                DbCounters::add(&c.index_nanos, outcome.index_nanos);
                DbCounters::add(&c.data_nanos, outcome.data_nanos);
            }
            // Two counter updates per table (see LevelCounters).
            let lc = &self.level_counters[level];
            DbCounters::add(&lc.filter_parts_probed, u64::from(outcome.parts_probed));
            if outcome.parts_probed == 0 && table.filter_part_count() > 0 {
                DbCounters::add(&lc.filters_skipped, 1);
            }
            match got {
                TableGet::FilteredOut => DbCounters::add(&lc.filter_negatives, 1),
                TableGet::NotFound => DbCounters::add(&lc.false_positives, 1),
                TableGet::Found { kind, value, .. } => {
                    DbCounters::add(&lc.hits, 1);
                    self.manager.found(state);
                    return Ok(match kind {
                        ValueKind::Put => Some(value),
                        ValueKind::Delete => None,
                    });
                }
            }
        }
        Ok(None)
    }
}
