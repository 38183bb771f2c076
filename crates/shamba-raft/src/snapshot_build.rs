//! Building a snapshot: every user keyspace, the last applied log id and the membership,
//! all read from one shamba snapshot (one moment of the database), streamed to a file.

use crate::codec::{APPLIED, CURRENT_SNAPSHOT};
use crate::snapshot_file::{Meta, SnapshotWriter};
use crate::snapshot_files::{self, sync_dir};
use crate::state_machine::Applied;
use crate::store::{encode, Shared};
use shamba::{Readable, WriteBatch, WriteOptions};
use std::path::PathBuf;

/// Build a snapshot of the state machine as it is now: write it to a new file, make that
/// file current (unless a newer snapshot was installed meanwhile) and remove the older ones.
/// Returns the file and its meta.
pub(crate) fn build(shared: &Shared) -> shamba::Result<(PathBuf, Meta)> {
    // The view is taken under the state lock, so it never sees an install half done.
    let (view, names) = {
        let _state = shared.lock_state();
        (shared.db.snapshot(), shared.user_keyspace_names())
    };
    let (last_log_id, last_membership): Applied =
        shared.read_meta(&view.keyspace(&shared.meta), APPLIED)?.unwrap_or_default();
    let snapshot_id = match &last_log_id {
        Some(id) => format!("{}-{}-{}", id.leader_id, id.index, shared.unique()),
        None => format!("empty-{}", shared.unique()),
    };
    let meta = Meta { last_log_id, last_membership, snapshot_id };

    let tmp = shared.snapshot_dir.join(shared.unique_name("build", "tmp"));
    let result = write(shared, &view, &names, &meta, &tmp);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let name = shared.unique_name("snap", "snap");
    let path = shared.snapshot_dir.join(&name);
    std::fs::rename(&tmp, &path)?;
    sync_dir(&shared.snapshot_dir)?;

    let _state = shared.lock_state();
    let newer = snapshot_files::current(shared)?.is_some_and(|(_, cur)| cur.last_log_id > meta.last_log_id);
    if !newer {
        // The pointer is synced, and with it (one log) the state machine the snapshot holds:
        // the state machine on disk is never older than the current snapshot.
        let mut batch = WriteBatch::new();
        batch.put_in(&shared.meta, CURRENT_SNAPSHOT, encode("current snapshot", &(&name, &meta))?);
        shared.db.write_opt(batch, &WriteOptions { sync: true, disable_wal: false, no_slowdown: false })?;
        snapshot_files::remove_older(shared, &name)?;
    }
    Ok((path, meta))
}

fn write(shared: &Shared, view: &shamba::Snapshot, names: &[String], meta: &Meta, tmp: &PathBuf) -> shamba::Result<()> {
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(tmp)?;
    let mut out = SnapshotWriter::new(file, meta)?;
    for name in names {
        let ks = shared.db.keyspace(name)?;
        out.keyspace(name)?;
        for item in view.keyspace(&ks).iter() {
            let (key, value) = item?;
            out.pair(&key, &value)?;
        }
    }
    out.finish()
}
