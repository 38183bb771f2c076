//! Verifying a database: [`Db::verify`] on an open one, [`Db::verify_dir`] on a closed
//! one without writing a byte. Both check the same things the same way (`check`): the
//! version's shape (`version/verify.rs`), every table the version names, block by block
//! (`table/verify.rs`) and against its manifest record, the directory against the version
//! (missing tables, orphans), and the write-ahead logs the database still needs.

use super::batch::decode_batch;
use super::inner::DbInner;
use super::live_wal::wal_path;
use super::Db;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::options::{CompactionStyle, Options, WalRecovery};
use crate::table::{table_path, verify_table};
use crate::verify_report::{Problem, ProblemKind, VerifyReport};
use crate::version::{check_record, check_shape, Version, VersionSet};
use crate::wal::read_log_report;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// What a check runs against, however the version was come by.
struct Target<'a> {
    storage: &'a dyn Storage,
    dir: &'a Path,
    /// Every keyspace's version, and whether its levels 1+ hold one run each (checked
    /// only when known).
    trees: Vec<(Arc<Version>, bool)>,
    /// Logs numbered from here on are still needed (older ones await deletion).
    log_number: u64,
    /// The digest version every filter part must have.
    digest_version: Option<u8>,
}

impl Db {
    /// Check the database in `dir` without opening it: nothing is written (no log is
    /// replayed, no manifest started, no file deleted), so damage is seen as it is on disk.
    /// The directory's lock is held meanwhile, so an open database elsewhere is refused.
    ///
    /// It checks what [`Db::verify`] checks, on the version the manifest records, with
    /// two differences: memtables do not exist here, so every log the manifest still needs
    /// is read instead (checksums and batches), and the one-run-per-level rule of leveled
    /// trees is not checked, as the manifest does not record a tree's compaction style.
    /// `opts` gives the storage, `num_levels` and the digest hash.
    ///
    /// # Errors
    ///
    /// Only when the check cannot run (damage it finds is in the report):
    /// - [`Error::InvalidOptions`] when `opts` fails [`Options::validate`], or the manifest
    ///   names a level past `opts.num_levels`;
    /// - [`Error::InvalidArgument`] when `dir` holds no database;
    /// - [`Error::Locked`] when the database is open;
    /// - [`Error::Corruption`], naming the file, when CURRENT or the manifest does not
    ///   decode (without them there is no version to check against);
    /// - [`Error::Io`] when listing the directory or reading CURRENT or the manifest fails.
    pub fn verify_dir(dir: impl AsRef<Path>, opts: Options) -> Result<VerifyReport> {
        opts.validate()?;
        let dir = dir.as_ref();
        let storage = opts.storage.clone();
        if !storage.exists(&dir.join("CURRENT")) {
            return Err(Error::InvalidArgument(format!("database {} does not exist", dir.display())));
        }
        let _lock = storage.lock(&dir.join("LOCK"))?;
        let (versions, log_number) = VersionSet::read_only(storage.clone(), dir, opts.num_levels)?;
        let names = storage.list(dir)?;
        let target = Target {
            storage: &*storage,
            dir,
            trees: versions.into_iter().map(|(_, v)| (v, false)).collect(),
            log_number,
            digest_version: Some(opts.digest_hash().digest_version()),
        };
        Ok(check(&target, &names, |_| false, || {}))
    }
}

/// [`Db::verify`]: the current version, held for the whole check so that no compaction
/// deletes a file it names meanwhile.
pub(super) fn verify_open(inner: &DbInner) -> Result<VerifyReport> {
    inner.check_open()?;
    let trees: Vec<(Arc<Version>, bool)> = (inner.trees.all().iter())
        .map(|t| (t.super_version().version.clone(), t.opts.compaction_style == CompactionStyle::Leveled))
        .collect();
    // As the obsolete-file pass does: the listing first, then the numbers being written,
    // then every live version's files, so a table written meanwhile is never an orphan.
    let names = inner.storage.list(&inner.dir)?;
    let pending = inner.files.pending();
    let (live, log_number) = {
        let versions = inner.versions.lock();
        (versions.live_files(), versions.log_number())
    };
    let target = Target {
        storage: &*inner.storage,
        dir: &inner.dir,
        trees,
        log_number,
        digest_version: Some(inner.opts.digest_hash().digest_version()),
    };
    // A table a compaction just made obsolete may not be deleted yet: the engine's own
    // obsolete-file pass runs before the orphans are counted, so only tables it cannot
    // account for are reported.
    let settle = || inner.delete_obsolete_files();
    Ok(check(&target, &names, |n| live.contains(&n) || pending.contains(&n), settle))
}

/// Check `target` with the directory listing `names`; `owned` says whether a table the
/// version does not name still belongs to the database (another live version's, or being
/// written): only the others are orphans, and only if they are still there after `settle`
/// (the open database's obsolete-file pass).
fn check(target: &Target<'_>, names: &[String], owned: impl Fn(u64) -> bool, settle: impl Fn()) -> VerifyReport {
    let mut report = VerifyReport::default();
    let path_of = |n: u64| table_path(target.dir, n);
    for (version, leveled) in &target.trees {
        for problem in check_shape(version, *leveled, &path_of) {
            report.push(problem);
        }
    }
    let present: HashSet<&str> = names.iter().map(String::as_str).collect();
    for (level, meta) in target.trees.iter().flat_map(|(v, _)| v.all_files()) {
        report.tables += 1;
        let path = path_of(meta.number);
        let listed = path.file_name().is_some_and(|name| present.contains(&*name.to_string_lossy()));
        if !listed {
            let expected = format!("the table the manifest names at level {level}");
            report.push(Problem::new(ProblemKind::Missing, &path, None, "file", expected, "no such file"));
            continue;
        }
        let table = verify_table(target.storage, &path, target.digest_version);
        for problem in check_record(meta, &path, table.size.unwrap_or(meta.size), table.contents.as_ref()) {
            report.push(problem);
        }
        report.absorb(table.report);
    }
    let in_version: HashSet<u64> = target.trees.iter().flat_map(|(v, _)| v.file_numbers()).collect();
    let mut orphans: Vec<u64> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".sst").and_then(|n| n.parse::<u64>().ok()))
        .filter(|n| !in_version.contains(n) && !owned(*n))
        .collect();
    orphans.sort_unstable();
    if !orphans.is_empty() {
        settle();
    }
    for n in orphans {
        // A table deleted since the listing was obsolete, not an orphan.
        if target.storage.exists(&path_of(n)) {
            report.push_orphan(path_of(n));
        }
    }
    let mut logs: Vec<u64> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".log").and_then(|n| n.parse::<u64>().ok()))
        .filter(|&n| n >= target.log_number)
        .collect();
    logs.sort_unstable();
    for number in logs {
        check_log(target.storage, &wal_path(target.dir, number), &mut report);
    }
    report
}

/// Read one write-ahead log: every record's checksum, and every record a batch. A torn
/// tail (a crash in mid-write, or the live log's record being written now) is not damage.
fn check_log(storage: &dyn Storage, path: &Path, report: &mut VerifyReport) {
    let bytes = match storage.read_all(path) {
        Ok(bytes) => bytes,
        // Deleted since the listing: a flush made it obsolete meanwhile.
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => return,
        Err(e) => {
            report.push(Problem::new(ProblemKind::Unreadable, path, None, "log", "a readable log", e.to_string()));
            return;
        }
    };
    report.logs += 1;
    report.bytes += bytes.len() as u64;
    let replay = match read_log_report(&bytes, path, WalRecovery::TolerateTornTail) {
        Ok(replay) => replay,
        Err(Error::Corruption { offset, reason, .. }) => {
            let kind = if reason.contains("checksum") { ProblemKind::Checksum } else { ProblemKind::Malformed };
            report.push(Problem::new(kind, path, offset, "log record", "whole records to the end of the log", reason));
            return;
        }
        Err(e) => {
            report.push(Problem::new(ProblemKind::Unreadable, path, None, "log", "a readable log", e.to_string()));
            return;
        }
    };
    for record in replay.records {
        report.log_records += 1;
        let ops = decode_batch(&record.data).and_then(|batch| batch.ops.into_iter().try_for_each(|op| op.map(drop)));
        if let Err(e) = ops {
            let location = "log record";
            report.push(Problem::new(
                ProblemKind::Malformed,
                path,
                Some(record.offset),
                location,
                "a write batch",
                e.0,
            ));
        }
    }
}
