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
//! complete the copy, which is built in `OUT.tmp` and renamed to `OUT` at the end: `OUT`
//! either does not exist or is a whole checkpoint (RocksDB's checkpoints stage the same way).

use super::inner::DbInner;
use super::live_wal::wal_path;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::table::table_path;
use crate::version::{manifest_path, set_current, write_manifest};
use std::path::{Path, PathBuf};

/// Bytes copied per read when a file is copied rather than linked.
const COPY_CHUNK: usize = 1 << 20;

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
        // A staging directory left by a failed attempt is ours to empty and reuse.
        let staging = staging_dir(out)?;
        if self.storage.exists(&staging) {
            remove_dir_files(&*self.storage, &staging)?;
        }
        self.storage.create_dir_all(&staging)?;
        // A deletion pass that began before the pause finishes before the moment is taken.
        let paused = self.files.pause_deletions();
        let copied = self.take_moment().and_then(|m| self.copy_moment(&m, &staging));
        drop(paused);
        self.delete_obsolete_files();
        if let Err(e) = copied {
            // Best effort: what is left is emptied by the next attempt.
            let _ = remove_dir_files(&*self.storage, &staging);
            return Err(e);
        }
        self.storage.rename(&staging, out)?;
        match out.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => self.storage.sync_dir(parent),
            _ => Ok(()),
        }
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

/// `out` with `.tmp` appended to its name: where the checkpoint is built.
fn staging_dir(out: &Path) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("checkpoint directory {} has no name", out.display())))?;
    let mut staged = name.to_os_string();
    staged.push(".tmp");
    Ok(out.with_file_name(staged))
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

/// Remove the files of a staging directory (the directory itself stays, to be reused).
fn remove_dir_files(storage: &dyn Storage, dir: &Path) -> Result<()> {
    for name in storage.list(dir)? {
        storage.remove(&dir.join(name))?;
    }
    Ok(())
}
