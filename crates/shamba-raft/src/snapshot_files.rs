//! The snapshot folder: which file is current (named in `raft_meta`, with its meta), and
//! removing the others.

use crate::codec::CURRENT_SNAPSHOT;
use crate::snapshot_file::Meta;
use crate::store::Shared;
use std::path::Path;

/// The current snapshot: its file name in the snapshot folder and its meta.
pub(crate) type Current = (String, Meta);

/// The current snapshot, as `raft_meta` names it.
pub(crate) fn current(shared: &Shared) -> shamba::Result<Option<Current>> {
    shared.read_meta(&shared.meta, CURRENT_SNAPSHOT)
}

/// Make directory entries made in `dir` (creations, renames) durable.
pub(crate) fn sync_dir(dir: &Path) -> shamba::Result<()> {
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// At open, before any snapshot is received or built: remove every file of the folder but
/// the current snapshot (files half received, half built or half copied, and snapshots a
/// newer one replaced before a crash let them be removed).
pub(crate) fn remove_stale(shared: &Shared) -> shamba::Result<()> {
    let keep = current(shared)?.map(|(name, _)| name);
    remove_except(shared, keep.as_deref(), |_| true)
}

/// After a snapshot build made its file current: remove the older snapshot files (files
/// being received stay: a build runs beside the state machine's other work).
pub(crate) fn remove_older(shared: &Shared, current: &str) -> shamba::Result<()> {
    remove_except(shared, Some(current), |name| name.ends_with(".snap"))
}

/// After an install made its file current: remove the older snapshot files and the files
/// of receptions a leader abandoned (openraft receives and installs in one sequence, so
/// none is in progress).
pub(crate) fn remove_older_and_abandoned(shared: &Shared, current: &str) -> shamba::Result<()> {
    remove_except(shared, Some(current), |name| name.ends_with(".snap") || name.ends_with(".part"))
}

fn remove_except(shared: &Shared, keep: Option<&str>, remove: impl Fn(&str) -> bool) -> shamba::Result<()> {
    for entry in std::fs::read_dir(&shared.snapshot_dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if Some(name) != keep && remove(name) && entry.file_type()?.is_file() {
            // A reader that still has the file open (a snapshot being sent) reads on.
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
