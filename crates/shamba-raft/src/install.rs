//! Installing a received snapshot, atomically with respect to a crash at any point.
//!
//! 1. The received file becomes a durable file of the snapshot folder (renamed if it is the
//!    one `begin_receiving_snapshot` made, else copied) and is checked whole (checksum, and
//!    the meta openraft gave).
//! 2. An `installing` marker naming it is written to `raft_meta`, synced.
//! 3. Every user keyspace is range-deleted, then the file is loaded in bounded batches
//!    (not synced).
//! 4. One synced batch writes the last applied log id and membership, names the file as the
//!    current snapshot and removes the marker.
//!
//! A crash before 2 leaves the old state machine (the reopen removes the stray file); after
//! 2, the reopen finds the marker and does 3 and 4 again from the kept file. Readers of the
//! database may see the state machine mid-load while an install runs; openraft serves no
//! reads through this node meanwhile, and the state lock keeps snapshot builds out.

use crate::codec::{APPLIED, CURRENT_SNAPSHOT, INSTALLING};
use crate::error::corrupt;
use crate::snapshot_file::{Meta, Record, SnapshotReader};
use crate::snapshot_files::{self, sync_dir, Current};
use crate::store::{encode, Shared};
use crate::types::is_reserved;
use shamba::{Keyspace, WriteBatch, WriteOptions};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

const SYNC: WriteOptions = WriteOptions { sync: true, disable_wal: false, no_slowdown: false };

/// Install `received` (a snapshot file with `meta`) as the state machine.
pub(crate) fn install(shared: &Shared, meta: &Meta, received: File) -> shamba::Result<()> {
    let path = keep(shared, received)?;
    let checked = SnapshotReader::new(File::open(&path)?, &path)?.check();
    let header = match checked {
        Ok(header) => header,
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
    };
    if header.last_log_id != meta.last_log_id || header.last_membership != meta.last_membership {
        let _ = std::fs::remove_file(&path);
        return Err(corrupt(&path, format!("the snapshot file holds {header}, not the {meta} it was sent as")));
    }
    let name = file_name(&path)?;
    let _state = shared.lock_state();
    let mut batch = WriteBatch::new();
    batch.put_in(&shared.meta, INSTALLING, encode("install marker", &(&name, meta))?);
    shared.db.write_opt(batch, &SYNC)?;
    load(shared, &name, meta)?;
    snapshot_files::remove_older_and_abandoned(shared, &name)
}

/// At open: finish the install a crash interrupted, if the marker says one was running.
pub(crate) fn finish_interrupted(shared: &Shared) -> shamba::Result<()> {
    let marker: Option<Current> = shared.read_meta(&shared.meta, INSTALLING)?;
    match marker {
        None => Ok(()),
        Some((name, meta)) => load(shared, &name, &meta),
    }
}

/// Steps 3 and 4: replace every user keyspace with the file's contents.
fn load(shared: &Shared, name: &str, meta: &Meta) -> shamba::Result<()> {
    let path = shared.snapshot_dir.join(name);
    let mut reader = SnapshotReader::new(File::open(&path)?, &path)?;
    let mut clear = WriteBatch::new();
    for ks_name in shared.user_keyspace_names() {
        let ks = shared.db.keyspace(&ks_name)?;
        clear.delete_range_in::<&[u8], _>(&ks, ..);
    }
    shared.db.write(clear)?;
    let mut batch = WriteBatch::new();
    let mut keyspace: Option<Keyspace> = None;
    while let Some(record) = reader.next_record()? {
        match record {
            Record::Keyspace(ks_name) => {
                if is_reserved(&ks_name) {
                    return Err(corrupt(&path, format!("the snapshot writes to the reserved keyspace {ks_name:?}")));
                }
                keyspace = Some(shared.db.keyspace(&ks_name)?);
            }
            Record::Pair(key, value) => {
                let ks = keyspace.as_ref().ok_or_else(|| corrupt(&path, "a pair before any keyspace"))?;
                batch.put_in(ks, key, value);
                if batch.approximate_size() >= shared.load_batch_bytes {
                    shared.db.write(std::mem::take(&mut batch))?;
                }
            }
        }
    }
    batch.put_in(&shared.meta, APPLIED, encode("applied", &(&meta.last_log_id, &meta.last_membership))?);
    batch.put_in(&shared.meta, CURRENT_SNAPSHOT, encode("current snapshot", &(name, meta))?);
    batch.delete_in(&shared.meta, INSTALLING);
    shared.db.write_opt(batch, &SYNC)
}

fn file_name(path: &Path) -> shamba::Result<String> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| shamba::Error::Internal { what: format!("snapshot path {} has no name", path.display()) })
}

/// Step 1: the received file as a durable `.snap` file of the folder.
fn keep(shared: &Shared, mut received: File) -> shamba::Result<PathBuf> {
    let dest = shared.snapshot_dir.join(shared.unique_name("snap", "snap"));
    if let Some(part) = received_here(shared, &received)? {
        received.sync_all()?;
        std::fs::rename(&part, &dest)?;
    } else {
        let tmp = shared.snapshot_dir.join(shared.unique_name("copy", "part"));
        let mut out = File::create(&tmp)?;
        received.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut received, &mut out)?;
        out.sync_all()?;
        std::fs::rename(&tmp, &dest)?;
    }
    sync_dir(&shared.snapshot_dir)?;
    Ok(dest)
}

/// The `.part` file of the folder that `file` is (the one `begin_receiving_snapshot` gave),
/// if it is one.
#[cfg(unix)]
fn received_here(shared: &Shared, file: &File) -> shamba::Result<Option<PathBuf>> {
    use std::os::unix::fs::MetadataExt;
    let md = file.metadata()?;
    for entry in std::fs::read_dir(&shared.snapshot_dir)? {
        let entry = entry?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "part") {
            if let Ok(other) = std::fs::metadata(&path) {
                if other.ino() == md.ino() && other.dev() == md.dev() {
                    return Ok(Some(path));
                }
            }
        }
    }
    Ok(None)
}

#[cfg(not(unix))]
fn received_here(_shared: &Shared, _file: &File) -> shamba::Result<Option<PathBuf>> {
    Ok(None)
}
