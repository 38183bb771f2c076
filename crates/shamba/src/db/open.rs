//! Opening a database: lock, recover the manifest, replay the WALs, start the background
//! threads.

use super::batch::decode_batch;
use super::file_book::FileBook;
use super::inner::{next_number, DbInner};
use super::live_wal::{wal_path, LiveWal};
use super::sequence::Sequence;
use super::super_version::SuperVersion;
use super::tree::Tree;
use super::trees::Trees;
use super::workers::Workers;
use super::write_queue::WriteQueue;
use crate::cache::BlockCache;
use crate::compaction::job::{flush_to_table, JobEnv};
use crate::error::{Error, Result};
use crate::io::{IoStats, Storage, SyncWatch};
use crate::manager::FilterLedger;
use crate::memtable::MemTable;
use crate::options::{KeyspaceOptions, Options};
use crate::stats::DbCounters;
use crate::table::{table_path, TableCache, TableContext};
use crate::version::{KeyspaceRecord, Version, VersionEdit, VersionSet, DEFAULT_KEYSPACE};
use crate::wal::{read_log_report, LogWriter};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Open (or create) the database in `dir`.
pub(crate) fn open(dir: &Path, opts: Options) -> Result<Arc<DbInner>> {
    opts.validate()?;
    let sync_watch = Arc::new(SyncWatch::new(opts.storage.clone()));
    let storage: Arc<dyn Storage> = sync_watch.clone();
    let dir = dir.to_path_buf();
    if !storage.exists(&dir) {
        if !opts.create_if_missing {
            return Err(Error::InvalidArgument(format!("database {} does not exist", dir.display())));
        }
        storage.create_dir_all(&dir)?;
    }
    let lock = storage.lock(&dir.join("LOCK"))?;
    let exists = storage.exists(&dir.join("CURRENT"));
    if exists && opts.error_if_exists {
        return Err(Error::InvalidArgument(format!("database {} already exists", dir.display())));
    }
    if !exists && !opts.create_if_missing {
        return Err(Error::InvalidArgument(format!("database {} does not exist", dir.display())));
    }
    let (mut versions, log_number) = if exists {
        let (vs, rec) = VersionSet::recover(storage.clone(), &dir, opts.num_levels)?;
        for (_, version) in vs.all_current() {
            check_tables_present(&*storage, &dir, &version)?;
        }
        (vs, rec.log_number)
    } else {
        (VersionSet::create(storage.clone(), &dir, opts.num_levels)?, 0)
    };

    let io = Arc::new(IoStats::default());
    let block_cache = Arc::new(BlockCache::with_first_pool(
        opts.cache_capacity,
        opts.high_priority_ratio,
        opts.first_module_cache_ratio,
    ));
    let ctx = TableContext {
        cache: block_cache.clone(),
        io: io.clone(),
        device: opts.device(),
        cache_index_and_filter_blocks: opts.cache_index_and_filter_blocks,
        digest_version: Some(opts.digest_hash().digest_version()),
        pool_filters: opts.pools_filters(),
        metadata: crate::table::MetadataBudget::new(opts.pinned_metadata_limit),
    };
    let tables = Arc::new(TableCache::new(storage.clone(), &dir, ctx, opts.table_file_handles()));

    let keyspaces: Vec<(u32, Options)> =
        (versions.keyspaces().into_iter()).map(|(id, record)| (id, keyspace_options(&opts, record.as_ref()))).collect();
    let last_seq = replay_wals(&storage, &dir, &opts, &keyspaces, &tables, &mut versions, log_number)?;

    let wal_number = versions.new_file_number();
    let wal_file = storage.create(&wal_path(&dir, wal_number))?;
    versions.set_last_sequence(last_seq);
    for &(id, _) in &keyspaces {
        versions.log_and_apply(VersionEdit { keyspace: id, log_number: Some(wal_number), ..VersionEdit::default() })?;
    }
    storage.sync_dir(&dir)?;

    let names: std::collections::HashMap<u32, String> = (versions.keyspaces().into_iter())
        .map(|(id, record)| (id, record.map_or_else(|| DEFAULT_NAME.to_string(), |r| r.name)))
        .collect();
    let filter_ledger = opts.filter_memory_budget.map(|cap| Arc::new(FilterLedger::new(cap)));
    let mut trees = Vec::with_capacity(keyspaces.len());
    for (id, tree_opts) in keyspaces {
        let version = versions.current(id).ok_or_else(|| Error::internal(format!("keyspace {id} has no version")))?;
        let sv = SuperVersion::new(Arc::new(MemTable::new(wal_number)), Vec::new(), version, None, &tree_opts);
        let name = names.get(&id).cloned().unwrap_or_default();
        trees.push(Arc::new(Tree::new(id, name, tree_opts, sv, filter_ledger.clone())));
    }
    let default = (trees.iter().find(|t| t.id == DEFAULT_KEYSPACE).cloned())
        .ok_or_else(|| Error::internal("no default keyspace"))?;
    let inner = Arc::new(DbInner {
        number: next_number(),
        dir,
        storage: sync_watch,
        lock: Mutex::new(Some(lock)),
        default,
        trees: Trees::new(trees, filter_ledger),
        file_numbers: versions.file_numbers(),
        versions: Mutex::new(versions),
        tables,
        block_cache,
        io,
        seq: Sequence::new(last_seq),
        queue: WriteQueue::default(),
        wal: LiveWal::new(LogWriter::new(wal_file), wal_number),
        bg: Workers::default(),
        files: FileBook::default(),
        counters: DbCounters::default(),
        closed: AtomicBool::new(false),
        opts,
    });
    inner.delete_obsolete_files();
    start_threads(&inner)?;
    Ok(inner)
}

/// The name of the default keyspace (RocksDB's).
pub(crate) const DEFAULT_NAME: &str = "default";

/// What a keyspace runs with: `Options::keyspace_options` for its name if any, else the
/// database's own, always with the shape it was created with.
pub(crate) fn keyspace_options(opts: &Options, record: Option<&KeyspaceRecord>) -> Options {
    let Some(record) = record else { return opts.clone() };
    let named = opts.keyspace_options.iter().find(|(name, _)| *name == record.name);
    let mut ks = named.map_or_else(|| KeyspaceOptions::inherited(opts), |(_, ks)| ks.clone());
    ks.compaction_style = record.style;
    ks.size_ratio = record.size_ratio;
    ks.over(opts)
}

/// Every table the recovered version names is in the directory: a database missing one
/// does not open (as LevelDB's recovery checks), rather than fail the first read that needs
/// it. One listing of the directory, no file opened.
fn check_tables_present(storage: &dyn Storage, dir: &Path, version: &Version) -> Result<()> {
    let present: HashSet<String> = storage.list(dir)?.into_iter().collect();
    let missing: Vec<u64> = version
        .file_numbers()
        .filter(|&n| table_path(dir, n).file_name().is_none_or(|name| !present.contains(&*name.to_string_lossy())))
        .collect();
    match missing.first() {
        None => Ok(()),
        Some(&first) => Err(Error::corruption(
            table_path(dir, first),
            None,
            format!("a table the manifest names is missing ({} missing in all)", missing.len()),
        )),
    }
}

fn start_threads(inner: &Arc<DbInner>) -> Result<()> {
    // The flush thread keeps the opener's priority: writers stop when it falls behind (as
    // RocksDB's flushes have a pool of their own, left alone by lowering the compactions').
    let nice = inner.opts.background_nice;
    let flusher = inner.clone();
    inner.bg.spawn("shamba-flush", 0, move || flusher.flush_loop())?;
    let compactor = inner.clone();
    inner.bg.spawn("shamba-compact", nice, move || compactor.compaction_loop())?;
    let purger = inner.clone();
    inner.bg.spawn("shamba-purge", nice, move || purger.purge_loop())
}

/// Replay every WAL at or after `log_number` (the oldest any keyspace needs) into L0
/// tables, each record's operations into their keyspace's memtable when the WAL is at or
/// after that keyspace's own log number (its older records are in its tables already);
/// each keyspace's tables logged in one edit, so a crash during recovery replays again.
/// Records of a dropped keyspace are skipped. Returns the last sequence number seen.
fn replay_wals(
    storage: &Arc<dyn crate::io::Storage>,
    dir: &Path,
    opts: &Options,
    keyspaces: &[(u32, Options)],
    tables: &Arc<TableCache>,
    versions: &mut VersionSet,
    log_number: u64,
) -> Result<u64> {
    let mut logs: Vec<u64> = storage
        .list(dir)?
        .iter()
        .filter_map(|n| n.strip_suffix(".log").and_then(|n| n.parse::<u64>().ok()))
        .filter(|&n| n >= log_number)
        .collect();
    logs.sort_unstable();
    // A WAL number on disk is taken even if the manifest never heard of it.
    for &n in &logs {
        versions.mark_file_number_used(n);
    }
    let mut last_seq = versions.last_sequence();
    let mut replays: Vec<Replay<'_>> = keyspaces
        .iter()
        .map(|(id, ks_opts)| Replay {
            id: *id,
            opts: ks_opts,
            log_number: versions.keyspace_log_number(*id).unwrap_or(u64::MAX),
            mem: Arc::new(MemTable::new(0)),
            edit: VersionEdit { keyspace: *id, ..VersionEdit::default() },
        })
        .collect();
    let next_keyspace = versions.next_keyspace();
    for number in logs {
        let path = wal_path(dir, number);
        let bytes = storage.read_all(&path)?;
        for record in read_log_report(&bytes, &path, opts.wal_recovery)?.records {
            // A record that does not decode is named by the file and its offset.
            let at = Some(record.offset);
            let batch = decode_batch(&record.data).map_err(|e| e.in_file(&path, at))?;
            let first = batch.first_seq;
            let mut count = 0u64;
            for op in batch.ops {
                let (keyspace, op) = op.map_err(|e| e.in_file(&path, at))?;
                let seq = first + count;
                count += 1;
                match replays.iter().find(|r| r.id == keyspace) {
                    Some(r) if number >= r.log_number => op.insert_into(&r.mem, seq),
                    Some(_) => {}
                    // Ids are never reused: a smaller one is a dropped keyspace.
                    None if keyspace < next_keyspace => {}
                    None => {
                        return Err(Error::corruption(
                            &path,
                            at,
                            format!("a record writes to keyspace {keyspace}, which the manifest never created"),
                        ));
                    }
                }
            }
            if count > 0 {
                last_seq = last_seq.max(first + count - 1);
            }
            for r in &mut replays {
                if r.mem.approximate_size() >= opts.write_buffer_size {
                    flush_recovered(storage, dir, r.opts, tables, versions, &r.mem, &mut r.edit)?;
                    r.mem = Arc::new(MemTable::new(0));
                }
            }
        }
    }
    for r in &mut replays {
        flush_recovered(storage, dir, r.opts, tables, versions, &r.mem, &mut r.edit)?;
    }
    versions.set_last_sequence(last_seq);
    let mut synced = false;
    for r in replays {
        if !r.edit.new_files.is_empty() || !r.edit.range_dels.is_empty() {
            // The tables' directory entries are durable before the manifest names them.
            if !synced {
                storage.sync_dir(dir)?;
                synced = true;
            }
            versions.log_and_apply(r.edit)?;
        }
    }
    Ok(last_seq)
}

/// One keyspace's replay: what it skips, what it gathers, the edit naming its tables.
struct Replay<'a> {
    id: u32,
    opts: &'a Options,
    log_number: u64,
    mem: Arc<MemTable>,
    edit: VersionEdit,
}

fn flush_recovered(
    storage: &Arc<dyn crate::io::Storage>,
    dir: &Path,
    opts: &Options,
    tables: &Arc<TableCache>,
    versions: &mut VersionSet,
    mem: &Arc<MemTable>,
    edit: &mut VersionEdit,
) -> Result<()> {
    if mem.is_empty() {
        return Ok(());
    }
    let filter = opts.filter_policy.spec_for_level(0, &[]);
    let next = versions.new_file_number();
    // One table per call: the allocator hands out the number taken above.
    let alloc = || next;
    let env = JobEnv { storage: &**storage, dir, opts, tables, new_file_number: &alloc };
    if let Some(meta) = flush_to_table(&env, mem, filter)? {
        edit.new_files.push((0, meta));
    }
    // A crash after an earlier open logged this keyspace's recovery edit, and before it
    // logged the new log number, replays the same WALs again: their points come back in new
    // tables (the same entries, shadowing nothing), and their range deletes, which the
    // version holds already (a tombstone is its sequence number), are not added twice.
    let held: Vec<u64> =
        versions.current(edit.keyspace).map_or_else(Vec::new, |v| v.range_dels.list.iter().map(|t| t.seq).collect());
    edit.range_dels.extend(mem.range_dels().into_iter().filter(|t| !held.contains(&t.seq)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::db::batch::WriteBatch;
    use crate::db::live_wal::wal_path;
    use crate::io::{FsStorage, Storage};
    use crate::wal::LogWriter;
    use crate::{Db, Error, Options};

    /// A WAL record whose checksum holds but whose batch does not decode is corruption
    /// naming the log and the record's offset.
    #[test]
    fn a_log_record_that_does_not_decode_names_the_log_and_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        Db::open(dir.path(), Options::default()).unwrap().close().unwrap();
        let path = wal_path(dir.path(), 999_999);
        let mut log = LogWriter::new(FsStorage.create(&path).unwrap());
        let mut whole = WriteBatch::new();
        whole.put(b"k", b"v");
        log.add_record(whole.encode_with_seq(1_000)).unwrap();
        let at = log.len();
        log.add_record(b"short").unwrap();
        log.sync().unwrap();
        drop(log);
        match Db::open(dir.path(), Options::default()) {
            Err(Error::Corruption { file, offset, reason }) => {
                assert_eq!(file, path);
                assert_eq!(offset, Some(at), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}
