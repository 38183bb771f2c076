//! Writing tables: the merge of a compaction's inputs into new files, and the flush of a
//! memtable into one L0 file.

use super::grandparents::GrandparentOverlap;
use super::output_check::check_output;
use super::output_sync::OutputSync;
use super::shards::shard_starts;
use super::{Compaction, MergingCursor, RunCursor};
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::expiry::{self, now_millis};
use crate::filter::FilterSpec;
use crate::io::Storage;
use crate::key::{internal_key, parse_internal_key, seek_key, SeqNo, ValueKind, MAX_SEQ};
use crate::memtable::MemTable;
use crate::options::{CompactionFilter, Compression, FilterDecision, Options, ReadOptions};
use crate::table::{table_path, TableBuilder, TableCache, TableOptions, TableSummary};
use crate::version::{FileMeta, Version};
use std::path::Path;
use std::sync::Arc;

/// Bytes a compaction reads at once from each input file: one system call per 64 blocks
/// of 4 KiB instead of one per block. In a random load of small pairs `pread` showed in
/// the compaction thread's profile, and the windows took most of it away.
const COMPACTION_READAHEAD: usize = 256 << 10;

/// What a job needs from the database.
pub(crate) struct JobEnv<'a> {
    /// Where files are written.
    pub storage: &'a dyn Storage,
    /// The database directory.
    pub dir: &'a Path,
    /// Database options.
    pub opts: &'a Options,
    /// Readers of the input files.
    pub tables: &'a Arc<TableCache>,
    /// Allocates a file number for each output (and registers it as pending).
    pub new_file_number: &'a (dyn Fn() -> u64 + Sync),
}

/// Counters of one job.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct JobStats {
    /// Entries read.
    pub entries_in: u64,
    /// Entries written.
    pub entries_out: u64,
    /// Entries dropped (shadowed versions and obsolete tombstones).
    pub dropped: u64,
    /// Bytes written.
    pub bytes_out: u64,
    /// Key ranges merged beside the first (subcompactions).
    pub side_ranges: u64,
}

/// Writes a sequence of sorted entries into files of about `target` bytes, each
/// overlapping a bounded part of the level below its own (`grandparents`), never
/// splitting the versions of one user key across files (a lookup finds a key in one file
/// per run). Each file is opened and checked once written.
struct OutputWriter<'a> {
    env: &'a JobEnv<'a>,
    table_opts: TableOptions,
    run: Option<u64>,
    target: u64,
    grandparents: Option<GrandparentOverlap>,
    current: Option<(u64, TableBuilder)>,
    outputs: Vec<FileMeta>,
    last_user_key: Vec<u8>,
    /// Syncs each table but the last while the next is written.
    sync: OutputSync,
}

impl<'a> OutputWriter<'a> {
    fn new(
        env: &'a JobEnv<'a>,
        filter: FilterSpec,
        compression: Compression,
        run: Option<u64>,
        target: u64,
        grandparents: Option<GrandparentOverlap>,
    ) -> Self {
        let table_opts = TableOptions::from_options(env.opts, filter, compression);
        OutputWriter {
            env,
            table_opts,
            run,
            target,
            grandparents,
            current: None,
            outputs: Vec::new(),
            last_user_key: Vec::new(),
            sync: OutputSync::default(),
        }
    }

    fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let user_key = crate::key::user_key(ikey);
        let new_user_key = self.current.is_none() || user_key != self.last_user_key.as_slice();
        if new_user_key {
            // Walk the grandparents at every user key, even one that starts a file: what
            // the walk passes before it is the previous file's overlap, not this one's.
            let size = self.current.as_ref().map_or(0, |(_, b)| b.estimated_size());
            let overlap_full = self.grandparents.as_mut().is_some_and(|g| g.should_stop_before(user_key, size));
            let size_full = self.current.is_some() && size >= self.target;
            if overlap_full || size_full {
                self.finish_current(false)?;
                if let Some(g) = self.grandparents.as_mut() {
                    g.output_cut();
                }
            }
        }
        if self.current.is_none() {
            let number = (self.env.new_file_number)();
            let file = self.env.storage.create(&table_path(self.env.dir, number))?;
            self.current = Some((number, TableBuilder::new(file, self.table_opts.clone())));
        }
        if let Some((_, b)) = self.current.as_mut() {
            b.add(ikey, value)?;
        }
        self.last_user_key.clear();
        self.last_user_key.extend_from_slice(user_key);
        Ok(())
    }

    /// Finish the table being written: synced here if it is the `last`, else on the sync
    /// thread while the next is written.
    fn finish_current(&mut self, last: bool) -> Result<()> {
        if let Some((number, builder)) = self.current.take() {
            let (summary, mut file) = builder.finish_unsynced()?;
            if last {
                file.sync()?;
            } else {
                self.sync.sync_later(file)?;
            }
            check_output(self.env, number, &summary)?;
            let run = self.run.unwrap_or(number);
            self.outputs.push(file_meta(number, run, summary));
        }
        Ok(())
    }

    /// The tables written, every one synced.
    fn finish(mut self) -> Result<Vec<FileMeta>> {
        self.finish_current(true)?;
        self.sync.finish()?;
        Ok(self.outputs)
    }
}

/// The manifest record of a finished table.
pub(crate) fn file_meta(number: u64, run: u64, s: TableSummary) -> FileMeta {
    FileMeta {
        number,
        run,
        size: s.file_size,
        smallest: s.smallest,
        largest: s.largest,
        entries: s.entries,
        smallest_seq: s.smallest_seq,
        largest_seq: s.largest_seq,
        filter_bytes: s.filter_bytes,
        index_bytes: s.index_bytes,
        data_bytes: s.data_bytes,
        stats: None,
    }
}

/// Flush a memtable into one new L0 file; `None` if it holds nothing.
pub(crate) fn flush_to_table(env: &JobEnv<'_>, mem: &MemTable, filter: FilterSpec) -> Result<Option<FileMeta>> {
    // A flush never writes the bottom (RocksDB's flushes ignore bottommost_compression too).
    let compression = env.opts.compression_for_level(0, false);
    let mut out = OutputWriter::new(env, filter, compression, None, u64::MAX, None);
    mem.try_for_each(|key, value| out.add(key, value))?;
    Ok(out.finish()?.pop())
}

/// The compression of the tables a compaction of `version` writes to `level`: the
/// bottom's when no level below holds data (RocksDB's test), else the level's own.
pub(crate) fn output_compression(opts: &Options, version: &Version, level: usize) -> Compression {
    opts.compression_for_level(level, level > 0 && version.is_bottom(level))
}

/// The live snapshots a compaction keeps what they read for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snapshots {
    /// The oldest sequence number any reader may ask for (the visible one if no snapshot
    /// lives).
    pub oldest: SeqNo,
    /// The newest live snapshot's sequence number, if one lives: a compaction filter sees
    /// only entries above it.
    pub newest: Option<SeqNo>,
}

/// Merge a compaction's inputs into new files for `c.output_level`, of run `output_run`.
///
/// A version is dropped when a newer version of the same key is visible to every snapshot
/// (its sequence number is `<= snapshots.oldest`), or a range tombstone of the version
/// visible to every snapshot deletes it; a tombstone is dropped when, in addition, no file
/// outside the compaction at the output level or below may hold the key. A version that
/// stays is first rewritten as [`rewrite`] decides: an expired one, or one the keyspace's
/// compaction filter removes, becomes a tombstone at its own sequence number, dropped by
/// the same rule when it may be.
///
/// A large merge runs as subcompactions (`shards.rs`): its user-key ranges merged on
/// threads side by side, their outputs returned in key order as one merge's.
pub(crate) fn run_compaction(
    env: &JobEnv<'_>,
    c: &Compaction,
    version: &Version,
    snapshots: Snapshots,
    filter: FilterSpec,
    output_run: u64,
) -> Result<(Vec<FileMeta>, JobStats)> {
    let input_numbers: Vec<u64> = c.input_files().map(|(_, f)| f.number).collect();
    let merge = Merge {
        env,
        c,
        version,
        smallest_snapshot: snapshots.oldest,
        // One time for the whole merge: an entry expiring while it runs is collected next time.
        rules: Rewrite {
            now_ms: now_millis(&*env.opts.clock),
            filter: env.opts.compaction_filter.as_deref(),
            newest_snapshot: snapshots.newest,
            level: c.output_level,
        },
        elsewhere: OlderFiles::new(version, c.output_level, &input_numbers),
        filter,
        compression: output_compression(env.opts, version, c.output_level),
        output_run,
    };
    let starts = shard_starts(c, env.opts);
    if starts.is_empty() {
        return merge.range(None, None);
    }
    let mut bounds: Vec<Option<&[u8]>> = vec![None];
    bounds.extend(starts.iter().map(|k| Some(k.as_slice())));
    bounds.push(None);
    let ranges: Vec<KeyRange<'_>> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let results = std::thread::scope(|scope| {
        let merge = &merge;
        let spawned: Vec<_> = ranges
            .iter()
            .skip(1)
            .map(|&(lo, hi)| {
                std::thread::Builder::new()
                    .name("shamba-subcompact".into())
                    .spawn_scoped(scope, move || merge.range(lo, hi))
            })
            .collect();
        let mut results = vec![merge.range(None, ranges.first().and_then(|r| r.1))];
        for (thread, &(lo, hi)) in spawned.into_iter().zip(ranges.iter().skip(1)) {
            results.push(match thread {
                Ok(t) => t.join().unwrap_or_else(|_| Err(Error::internal("a subcompaction thread panicked"))),
                // No thread to be had (a process at its thread limit): this one merges the range.
                Err(_) => merge.range(lo, hi),
            });
        }
        results
    });
    let mut outputs = Vec::new();
    let mut stats = JobStats { side_ranges: starts.len() as u64, ..JobStats::default() };
    for result in results {
        let (files, s) = result?;
        outputs.extend(files);
        stats.entries_in += s.entries_in;
        stats.entries_out += s.entries_out;
        stats.dropped += s.dropped;
        stats.bytes_out += s.bytes_out;
    }
    Ok((outputs, stats))
}

/// The user keys a subcompaction merges: from the first (the first input key if `None`) up
/// to, not including, the second (to the last if `None`).
type KeyRange<'k> = (Option<&'k [u8]>, Option<&'k [u8]>);

/// One compaction's merge, shared by its subcompactions: what every range of it reads and
/// decides by.
struct Merge<'a> {
    env: &'a JobEnv<'a>,
    c: &'a Compaction,
    version: &'a Version,
    smallest_snapshot: SeqNo,
    rules: Rewrite<'a>,
    elsewhere: OlderFiles<'a>,
    filter: FilterSpec,
    compression: Compression,
    output_run: u64,
}

impl Merge<'_> {
    /// Merge the user keys from `start` (the first input key if `None`) up to, not
    /// including, `end` (to the last if `None`) into new files.
    fn range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<(Vec<FileMeta>, JobStats)> {
        let (env, version) = (self.env, self.version);
        let read = ReadOptions { fill_cache: false, readahead_size: COMPACTION_READAHEAD, ..ReadOptions::default() };
        let children: Vec<Box<dyn Cursor>> = self
            .c
            .inputs
            .iter()
            .map(|i| Box::new(RunCursor::new(i.files.clone(), env.tables.clone(), read.clone())) as Box<dyn Cursor>)
            .collect();
        let mut merged = MergingCursor::new(children);
        let grandparents = GrandparentOverlap::for_output_level(version, env.opts, self.c.output_level);
        let mut out = OutputWriter::new(
            env,
            self.filter.clone(),
            self.compression,
            Some(self.output_run),
            env.opts.target_file_size,
            grandparents,
        );
        let mut stats = JobStats::default();
        let mut current_key: Option<Vec<u8>> = None;
        let mut newer_seq = SeqNo::MAX; // sequence of the previous (newer) version of this key
        match start {
            Some(key) => merged.seek(&seek_key(key, MAX_SEQ))?,
            None => merged.seek_to_first()?,
        }
        while merged.valid() {
            let ikey = merged.key();
            let parsed = parse_internal_key(ikey).ok_or_else(|| {
                Error::internal(format!("a compaction input entry is not an internal key: {ikey:02x?}"))
            })?;
            if end.is_some_and(|end| parsed.user_key >= end) {
                break;
            }
            stats.entries_in += 1;
            if current_key.as_deref() != Some(parsed.user_key) {
                current_key = Some(parsed.user_key.to_vec());
                newer_seq = SeqNo::MAX;
            }
            let shadowed = newer_seq <= self.smallest_snapshot
                || (!version.range_dels.is_empty()
                    && version.range_dels.set.cover(parsed.user_key, self.smallest_snapshot) > parsed.seq);
            newer_seq = parsed.seq;
            if shadowed {
                stats.dropped += 1;
                merged.next()?;
                continue;
            }
            let rewritten = self.rules.rewrite(parsed.kind, parsed.seq, parsed.user_key, merged.value());
            let kind = match &rewritten {
                Rewritten::Same => parsed.kind,
                Rewritten::Removed => ValueKind::Delete,
                Rewritten::Value(_) => parsed.kind,
            };
            let dead_tombstone = kind == ValueKind::Delete
                && parsed.seq <= self.smallest_snapshot
                && !self.elsewhere.may_hold(parsed.user_key);
            if dead_tombstone {
                stats.dropped += 1;
            } else {
                match rewritten {
                    Rewritten::Same => out.add(ikey, merged.value())?,
                    Rewritten::Removed => {
                        out.add(&internal_key(parsed.user_key, parsed.seq, ValueKind::Delete), &[])?
                    }
                    Rewritten::Value(v) => out.add(ikey, &v)?,
                }
                stats.entries_out += 1;
            }
            merged.next()?;
        }
        let outputs = out.finish()?;
        stats.bytes_out = outputs.iter().map(|f| f.size).sum();
        Ok((outputs, stats))
    }
}

/// What becomes of one entry a compaction keeps.
enum Rewritten {
    /// Written on as it was read.
    Same,
    /// Written as a tombstone at its own sequence number (or dropped, if one may be).
    Removed,
    /// Written with this stored value instead.
    Value(Vec<u8>),
}

/// The rules a compaction rewrites the entries it keeps by: expiry, then the keyspace's
/// compaction filter.
struct Rewrite<'a> {
    now_ms: u64,
    filter: Option<&'a dyn CompactionFilter>,
    newest_snapshot: Option<SeqNo>,
    level: usize,
}

impl Rewrite<'_> {
    /// An expired entry is removed whatever the snapshots: every read, a snapshot's too,
    /// finds it gone from its deadline on, so a tombstone in its place reads the same. The
    /// filter sees the values (an expiring one without its deadline) that no live snapshot
    /// can read: those above the newest snapshot, or every one when none lives.
    fn rewrite(&self, kind: ValueKind, seq: SeqNo, user_key: &[u8], stored: &[u8]) -> Rewritten {
        let value = match kind {
            ValueKind::Delete => return Rewritten::Same,
            ValueKind::Put => stored,
            ValueKind::PutExpiring => match expiry::split(stored) {
                Some((deadline, _)) if expiry::has_passed(deadline, self.now_ms) => return Rewritten::Removed,
                Some((_, value)) => value,
                // Too short to hold a deadline: every read finds it gone already.
                None => return Rewritten::Removed,
            },
        };
        let Some(filter) = self.filter else { return Rewritten::Same };
        if self.newest_snapshot.is_some_and(|newest| seq <= newest) {
            return Rewritten::Same;
        }
        match filter.filter(self.level, user_key, value) {
            FilterDecision::Keep => Rewritten::Same,
            FilterDecision::Remove => Rewritten::Removed,
            FilterDecision::ChangeValue(v) => Rewritten::Value(match kind {
                ValueKind::PutExpiring => match expiry::split(stored) {
                    Some((deadline, _)) => expiry::join(deadline, &v),
                    None => v,
                },
                _ => v,
            }),
        }
    }
}

/// Files a compaction does not read that may hold older versions of its keys: every file
/// at the output level or deeper that is not an input, kept as sorted runs so a key is
/// checked with one binary search per run.
struct OlderFiles<'a> {
    runs: Vec<Vec<&'a Arc<FileMeta>>>,
}

impl<'a> OlderFiles<'a> {
    fn new(version: &'a Version, output_level: usize, inputs: &[u64]) -> Self {
        let runs = version
            .levels
            .iter()
            .skip(output_level)
            .flat_map(|l| l.runs.iter())
            .map(|r| r.files.iter().filter(|f| !inputs.contains(&f.number)).collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        OlderFiles { runs }
    }

    fn may_hold(&self, user_key: &[u8]) -> bool {
        use crate::key::user_key as uk;
        self.runs.iter().any(|run| {
            let i = run.partition_point(|f| uk(&f.largest) < user_key);
            run.get(i).is_some_and(|f| uk(&f.smallest) <= user_key)
        })
    }
}
