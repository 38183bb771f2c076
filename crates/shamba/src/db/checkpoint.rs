//! Checkpoints: a consistent copy of the database, as of one sequence number, in another
//! directory, that opens as a database of its own.
//!
//! The moment is taken under the write lead (no write in flight): the sequence number, the
//! current version (its tables), the manifest's counters, and the WALs the memtables still
//! need with their lengths then. Obsolete-file deletion pauses until the copy is done, so
//! those files stay put while writers go on. Tables are hard-linked where the storage can
//! (a link shares the bytes and survives the table's deletion here) and copied otherwise;
//! WALs are copied up to their length at the moment, so a write acknowledged after it is
//! not in the checkpoint. A fresh manifest holding the version and CURRENT naming it
//! complete the copy.
//!
//! A crash at any point leaves `OUT` either absent or a whole checkpoint (RocksDB's
//! checkpoints stage the same way): the copy is built in a staging directory beside it,
//! `OUT.checkpoint-staging`, every file synced and the directory synced (CURRENT's
//! update syncs it), then moved to `OUT` in one rename, and the parent synced.
//!
//! The staging directory is ours to empty only if we can tell it is ours: before anything
//! else goes in, a marker file ([`STAGING_MARKER`]) is written and made durable, so a
//! staging directory holding other files without the marker was made by someone else and
//! is refused, never emptied. A staging directory that is empty, or holds the marker (a
//! crash or a failure of an earlier attempt), is emptied and reused; a checkpoint running
//! into the same `OUT` holds its `LOCK`, so a second one fails with `Locked` rather than
//! emptying it. A failed attempt removes its staging directory. The marker moves to `OUT`
//! with the rest and is removed there; if a crash keeps it, its name ends in `.tmp`, which
//! the checkpoint's first obsolete-file pass deletes.

use super::inner::DbInner;
use super::live_wal::wal_path;
use crate::error::{Error, Result};
use crate::io::{DirLock, Storage};
use crate::table::table_path;
use crate::version::{manifest_path, set_current, write_manifest};
use std::path::{Path, PathBuf};

/// Bytes copied per read when a file is copied rather than linked.
const COPY_CHUNK: usize = 1 << 20;

/// The file that says a staging directory is a checkpoint's: written first, removed last.
const STAGING_MARKER: &str = "CHECKPOINT-STAGING.tmp";

/// What a checkpoint's staging directory holds besides its copy.
const LOCK: &str = "LOCK";

/// What the checkpoint copies, fixed at its moment.
struct Moment {
    manifest_number: u64,
    edits: Vec<crate::version::VersionEdit>,
    versions: Vec<std::sync::Arc<crate::version::Version>>,
    /// WAL numbers with their lengths at the moment.
    logs: Vec<(u64, u64)>,
}

impl DbInner {
    /// Write a checkpoint of the database into `out`, which must not exist.
    pub(crate) fn checkpoint(&self, out: &Path) -> Result<()> {
        self.check_open()?;
        if self.storage.exists(out) {
            return Err(Error::InvalidArgument(format!("checkpoint directory {} already exists", out.display())));
        }
        let storage = &*self.storage;
        let staging = staging_dir(out)?;
        let lock = prepare_staging(storage, &staging)?;
        // A deletion pass that began before the pause finishes before the moment is taken.
        let paused = self.files.pause_deletions();
        let copied = self.take_moment().and_then(|m| self.copy_moment(&m, &staging));
        drop(paused);
        self.delete_obsolete_files();
        let moved = copied.and_then(|()| {
            storage.rename_dir(&staging, out)?;
            match out.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => storage.sync_dir(parent),
                _ => Ok(()),
            }
        });
        if let Err(e) = moved {
            // Best effort: a staging directory left holds its marker, and the next attempt
            // empties it. (If the move happened and only the parent's sync failed, the
            // staging directory is gone and `OUT` holds a whole checkpoint.)
            if storage.exists(&staging) {
                let _ = remove_staging(storage, &staging);
            }
            drop(lock);
            return Err(e);
        }
        // The copy is whole without the marker; a crash that keeps it leaves a `.tmp` file
        // that the checkpoint's first open deletes.
        let _ = storage.remove(&out.join(STAGING_MARKER)).and_then(|()| storage.sync_dir(out));
        drop(lock);
        Ok(())
    }

    /// Fix what the checkpoint holds, with no write in flight.
    fn take_moment(&self) -> Result<Moment> {
        self.queue.with_lead(|| {
            // The WALs of every keyspace's frozen memtables (their live ones use the current).
            let frozen: Vec<u64> = (self.trees.all().iter())
                .flat_map(|t| t.super_version().imm.iter().map(|m| m.wal_number()).collect::<Vec<_>>())
                .collect();
            // What writes acknowledged is in the OS, where a copy reads it (a WAL whose last
            // write failed keeps its torn tail, which the copy's recovery drops).
            let current = self.wal.flushed_end()?;
            let mut logs = vec![current];
            for n in frozen {
                if n != current.0 && !logs.iter().any(|&(l, _)| l == n) {
                    // A frozen memtable's WAL takes no more writes: all of it.
                    logs.push((n, self.storage.open_read(&wal_path(&self.dir, n))?.len()));
                }
            }
            let (manifest_number, edits, versions) = self.versions.lock().checkpoint_manifest(self.visible_seq());
            Ok(Moment { manifest_number, edits, versions, logs })
        })
    }

    fn copy_moment(&self, m: &Moment, staging: &Path) -> Result<()> {
        let storage = &*self.storage;
        for (_, f) in m.versions.iter().flat_map(|v| v.all_files()) {
            let from = table_path(&self.dir, f.number);
            let to = table_path(staging, f.number);
            if storage.link(&from, &to).is_err() {
                copy_prefix(storage, &from, &to, None)?;
            }
        }
        for &(n, len) in &m.logs {
            copy_prefix(storage, &wal_path(&self.dir, n), &wal_path(staging, n), Some(len))?;
        }
        drop(write_manifest(storage, &manifest_path(staging, m.manifest_number), &m.edits)?);
        set_current(storage, staging, m.manifest_number)
    }
}

/// `out` with `.checkpoint-staging` appended to its name: where the checkpoint is built.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("checkpoint directory {} has no name", out.display())))?;
    let mut staged = name.to_os_string();
    staged.push(".checkpoint-staging");
    Ok(out.with_file_name(staged))
}

/// Make `staging` an empty staging directory holding only its durable marker and its lock,
/// which the caller holds until the copy is moved. One left by an earlier attempt is
/// emptied if it is ours (it holds the marker, or nothing but the lock file); a directory
/// of that name holding anything else is refused.
fn prepare_staging(storage: &dyn Storage, staging: &Path) -> Result<Box<dyn DirLock>> {
    if storage.exists(staging) {
        let names = storage.list(staging)?;
        let ours = names.iter().any(|n| n == STAGING_MARKER) || names.iter().all(|n| n == LOCK);
        if !ours {
            return Err(Error::InvalidArgument(format!(
                "{} exists and is not a checkpoint's staging directory (it has no {STAGING_MARKER}); remove it to checkpoint here",
                staging.display()
            )));
        }
    } else {
        storage.create_dir_all(staging)?;
    }
    // Another checkpoint into the same directory holds it: `Locked`, and nothing emptied.
    let lock = storage.lock(&staging.join(LOCK))?;
    let prepared = (|| {
        for name in storage.list(staging)? {
            if name != LOCK && name != STAGING_MARKER {
                storage.remove(&staging.join(name))?;
            }
        }
        // The marker is durable before any other file is in the directory.
        let mut marker = storage.create(&staging.join(STAGING_MARKER))?;
        marker.sync()?;
        drop(marker);
        storage.sync_dir(staging)
    })();
    if let Err(e) = prepared {
        // Ours (checked above): best effort, as after a failed copy.
        let _ = remove_staging(storage, staging);
        return Err(e);
    }
    Ok(lock)
}

/// Copy the first `len` bytes of `from` (all of it if `None`) into a new, synced `to`.
fn copy_prefix(storage: &dyn Storage, from: &Path, to: &Path, len: Option<u64>) -> Result<()> {
    let src = storage.open_read(from)?;
    let len = len.unwrap_or_else(|| src.len()).min(src.len());
    let mut dst = storage.create(to)?;
    let mut buf = vec![0u8; COPY_CHUNK];
    let mut at = 0u64;
    while at < len {
        let n = usize::try_from(len - at).map_or(COPY_CHUNK, |left| left.min(COPY_CHUNK));
        let chunk = buf.get_mut(..n).unwrap_or_default();
        src.read_at(at, chunk)?;
        dst.append(chunk)?;
        at += n as u64;
    }
    dst.sync()
}

/// Remove a staging directory: its copy, then (once that removal is durable, so the copy
/// is never left without the marker) the marker and lock file, then the directory.
fn remove_staging(storage: &dyn Storage, staging: &Path) -> Result<()> {
    let names = storage.list(staging)?;
    for name in names.iter().filter(|n| *n != LOCK && *n != STAGING_MARKER) {
        storage.remove(&staging.join(name))?;
    }
    storage.sync_dir(staging)?;
    for name in names.iter().filter(|n| *n == LOCK || *n == STAGING_MARKER) {
        storage.remove(&staging.join(name))?;
    }
    storage.remove_dir(staging)
}
