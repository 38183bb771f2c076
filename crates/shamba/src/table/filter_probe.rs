//! Every way a lookup reaches a table's filter parts, in one place.
//!
//! A part is reached, in this order of preference:
//! - resident: loaded by the filter manager under its memory budget (pooled filters), and
//!   handed to the probe in its plan (`ProbePlan::resident`);
//! - pinned: read at open and kept by the reader (`cache_index_and_filter_blocks` false);
//! - taken: the first part, taken from the block cache by the prefetch passes and kept in
//!   the lookup's [`Spot`];
//! - cached: through the block cache (a hit, or a miss read from the device and inserted);
//!   pooled parts not loaded bypass the cache, read for the one probe;
//! - read together: under a plan with `read_together`, a part the cache misses is read from
//!   the device with the parts after it in one read, and the walk goes on from those bytes.
//!
//! [`probe_filters`](TableReader::probe_filters) walks the parts a plan allows in probe
//! order until one says no; the walk is written once, over how it gets a part that is not
//! in memory ([`Alone`] or [`Together`]). The prefetch passes and the filter manager's
//! question "is this part resident?" are here too: they reach the same parts the same ways.

#![deny(clippy::indexing_slicing)]

use super::meta_blocks::{MetaBlock, Partition};
use super::pinned_part::PinnedPart;
use super::reader::{Spot, TableReader};
use super::{ProbeOutcome, ProbePlan, BLOCK_TRAILER_LEN};
use crate::error::{DecodeError, Result};
use crate::filter::{Digest, FilterPart};
use crate::io::BlockKind;
use std::sync::Arc;

/// How the walk gets a part that is neither resident, pinned nor taken by the prefetch.
trait FetchPart {
    /// The bytes of part `i` (`meta`) of `partition`, any read counted in `outcome`.
    fn fetch(
        &mut self,
        reader: &TableReader,
        partition: &Partition,
        i: usize,
        meta: &MetaBlock<PinnedPart>,
        outcome: &mut ProbeOutcome,
    ) -> Result<Arc<[u8]>>;
}

/// Each part through the block cache, or read on its own.
struct Alone;

impl FetchPart for Alone {
    #[inline(always)]
    fn fetch(
        &mut self,
        reader: &TableReader,
        _: &Partition,
        i: usize,
        meta: &MetaBlock<PinnedPart>,
        outcome: &mut ProbeOutcome,
    ) -> Result<Arc<[u8]>> {
        reader.fetch_part(meta, i, outcome)
    }
}

/// A part the block cache misses read with the parts after it, `count` in all and none
/// past the plan's `max_parts`, in one read (counted once).
struct Together {
    count: usize,
    max_parts: usize,
    /// Parts read together so far: (the first one's index, their bytes).
    read: Option<(usize, Vec<Arc<[u8]>>)>,
}

impl FetchPart for Together {
    fn fetch(
        &mut self,
        reader: &TableReader,
        partition: &Partition,
        i: usize,
        meta: &MetaBlock<PinnedPart>,
        outcome: &mut ProbeOutcome,
    ) -> Result<Arc<[u8]>> {
        let read_before = self.read.as_ref().and_then(|(at, blocks)| blocks.get(i.checked_sub(*at)?)).cloned();
        if let Some(bytes) = read_before.or_else(|| reader.cached_filter_part(meta)) {
            return Ok(bytes);
        }
        // This part and the ones after it the plan reads with it.
        let end = self.max_parts.min(partition.filter.len());
        let Some(span) = partition.filter.get(i..end.min(i.saturating_add(self.count))) else {
            return reader.fetch_part(meta, i, outcome);
        };
        match reader.filter_parts_together(span, i)? {
            Some(blocks) => {
                outcome.filter_blocks_read_from_device += 1;
                outcome.filter_bytes_read_from_device +=
                    span.iter().map(|m| m.handle().size + BLOCK_TRAILER_LEN as u64).sum::<u64>();
                let bytes = blocks
                    .first()
                    .cloned()
                    .ok_or_else(|| reader.file.corruption(meta.handle().offset, "no filter part read"))?;
                self.read = Some((i, blocks));
                Ok(bytes)
            }
            // A pinned part among them, or parts apart: this one alone.
            None => reader.fetch_part(meta, i, outcome),
        }
    }
}

impl TableReader {
    /// Probe the filter parts `plan` allows at `spot` (of `partition`, the spot's), in
    /// order, until one says no (`false`: the key is not in the table); parts not in memory
    /// are read (and counted in `outcome`). Shared by single and batched lookups, and
    /// inlined into both.
    #[inline(always)]
    pub(super) fn probe_filters(
        &self,
        partition: &Partition,
        spot: &Spot<'_>,
        digest: &Digest,
        plan: ProbePlan<'_>,
        outcome: &mut ProbeOutcome,
    ) -> Result<bool> {
        // Reading parts together is a walk of its own, so this one stays lean.
        if plan.read_together > 0 {
            return self.probe_filters_together(partition, spot, digest, plan, outcome);
        }
        self.walk_parts(partition, spot, digest, plan, outcome, Alone)
    }

    /// [`probe_filters`](Self::probe_filters) under a plan that reads parts together.
    #[inline(never)]
    fn probe_filters_together(
        &self,
        partition: &Partition,
        spot: &Spot<'_>,
        digest: &Digest,
        plan: ProbePlan<'_>,
        outcome: &mut ProbeOutcome,
    ) -> Result<bool> {
        let together = Together { count: plan.read_together as usize, max_parts: plan.max_parts as usize, read: None };
        self.walk_parts(partition, spot, digest, plan, outcome, together)
    }

    /// The walk: each part the plan allows, reached the first way that has it (resident,
    /// pinned, taken, else `fetch`), and probed.
    #[inline(always)]
    fn walk_parts(
        &self,
        partition: &Partition,
        spot: &Spot<'_>,
        digest: &Digest,
        plan: ProbePlan<'_>,
        outcome: &mut ProbeOutcome,
        mut fetch: impl FetchPart,
    ) -> Result<bool> {
        for (i, meta) in partition.filter.iter().enumerate().take(plan.max_parts as usize) {
            if let Some(loaded) = plan.resident.and_then(|r| r.get(spot.partition_index, i)) {
                outcome.parts_probed += 1;
                match &*loaded {
                    Some(part) if !part.part().may_contain(digest) => return Ok(false),
                    _ => continue,
                }
            }
            let fetched;
            let part = match (meta.pinned(), i, &spot.first_part) {
                (Some(pinned), _, _) => pinned.part(),
                (None, 0, Some(taken)) => self.parse_part(taken, meta)?,
                _ => {
                    fetched = fetch.fetch(self, partition, i, meta, outcome)?;
                    self.parse_part(&fetched, meta)?
                }
            };
            outcome.parts_probed += 1;
            if !part.may_contain(digest) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Filter part `i` (`meta`), through the block cache or read for this probe, a read
    /// counted in `outcome`.
    #[inline]
    fn fetch_part(&self, meta: &MetaBlock<PinnedPart>, i: usize, outcome: &mut ProbeOutcome) -> Result<Arc<[u8]>> {
        let (bytes, from_device) = self.filter_block(meta, i)?;
        if from_device {
            outcome.filter_blocks_read_from_device += 1;
            outcome.filter_bytes_read_from_device += meta.handle().size + BLOCK_TRAILER_LEN as u64;
        }
        Ok(bytes)
    }

    /// Parse a filter part's bytes, checking its digest version.
    #[inline]
    fn parse_part<'b>(&self, bytes: &'b [u8], meta: &MetaBlock<PinnedPart>) -> Result<FilterPart<'b>> {
        FilterPart::parse_expecting(bytes, self.ctx.digest_version)
            .map_err(|e| DecodeError::from(e).in_file(self.path(), Some(meta.handle().offset)))
    }

    /// The first pass of preparing a probe: if the first filter part the spot's lookup will
    /// probe is resident, keep it in the spot and ask the CPU to load its header. Parsing
    /// the header tells where the digest's probe lines are, so when a lookup prepares
    /// several tables this pass runs for all of them first and their header misses
    /// overlap. Never reads the device. A part taken from the block cache counts as a hit
    /// here and the probe at this spot uses it without a second cache access (a lookup that
    /// finds its key in an earlier table never probes it: its hit is counted all the same,
    /// as the block served the lookup's prefetch).
    pub(crate) fn prefetch_filter_header<'r>(&'r self, spot: &mut Spot<'r>) {
        let Some(meta) = spot.partition.and_then(|p| p.filter.first()) else {
            return;
        };
        // A pinned part is parsed already: nothing to load before its probe line.
        let MetaBlock::Cached(handle) = meta else {
            return;
        };
        // Counted as the hit of the probe that uses it (see `get_at_spot`); if absent, the
        // probe counts the miss.
        if let Some(bytes) = self.ctx.cache.get_resident((self.number, handle.offset), BlockKind::Filter) {
            crate::filter::prefetch_bytes(&bytes);
            spot.first_part = Some(bytes);
        }
    }

    /// The second pass: ask the first filter part of the spot (pinned, or taken by
    /// [`prefetch_filter_header`](Self::prefetch_filter_header) and parsed here) to
    /// prefetch `digest`'s probe lines. Returns whether there was a resident
    /// part. A taken part that does not parse is let go: the probe fetches it again and
    /// reports the error.
    pub(crate) fn prefetch_filter_at(&self, spot: &mut Spot<'_>, digest: &Digest) -> bool {
        if let Some(pinned) = spot.partition.and_then(|p| p.filter.first()).and_then(MetaBlock::pinned) {
            pinned.part().prefetch(digest);
            return true;
        }
        let Some(taken) = &spot.first_part else { return false };
        match FilterPart::parse_expecting(taken, self.ctx.digest_version) {
            Ok(part) => part.prefetch(digest),
            Err(_) => spot.first_part = None,
        }
        true
    }

    /// Whether filter part `i` of the spot's partition is resident (pinned, taken by the
    /// prefetch pass, or in the block cache), so probing it costs no device read. Never
    /// reads the device, counts no cache hit or miss and refreshes no recency.
    pub(crate) fn filter_part_resident(&self, spot: &Spot<'_>, i: usize) -> bool {
        let Some(meta) = spot.partition.and_then(|p| p.filter.get(i)) else {
            return false;
        };
        match meta {
            MetaBlock::Pinned { .. } => true,
            MetaBlock::Cached(handle) => {
                (i == 0 && spot.first_part.is_some()) || self.ctx.cache.peek((self.number, handle.offset)).is_some()
            }
        }
    }
}
