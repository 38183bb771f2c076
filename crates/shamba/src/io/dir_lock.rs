//! The lock that keeps a second process (or a second `Db` in this one) off an open
//! database directory.
//!
//! A POSIX record lock (`fcntl(F_SETLK)`) rather than `flock`: a `flock` belongs to the open
//! file description, which a forked child shares until it execs or exits, so a child forked
//! while the database was open (Python's `multiprocessing`, a server that forks helpers)
//! kept the directory locked after the parent closed it, and the parent's reopen failed with
//! `Locked`. A record lock belongs to the process and is not inherited by `fork`. Two of its
//! properties need care, as RocksDB's and LevelDB's POSIX environments take it:
//! - it never conflicts within one process, so the process keeps its own set of the lock
//!   files it holds, and a second lock of one of them fails before the file is opened;
//! - closing *any* descriptor of the file releases it, so the file is opened only once the
//!   set says no one in this process holds it.

use super::DirLock;
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock files this process holds, by canonical path.
static HELD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// A held lock: the open file (closing it releases the record lock) and its entry in
/// [`HELD`], removed when dropped.
struct RecordLock {
    file: Option<File>,
    key: PathBuf,
}

impl DirLock for RecordLock {}

impl Drop for RecordLock {
    fn drop(&mut self) {
        // Close (and so unlock) before another thread may find the entry gone and open the
        // file: the order the set's comment relies on.
        drop(self.file.take());
        if let Some(held) = HELD.lock().as_mut() {
            held.remove(&self.key);
        }
    }
}

/// Lock the file at `path` (created if missing) for this process, or fail with
/// [`Error::Locked`] when another process or another open database in this one holds it.
pub(super) fn lock(path: &Path) -> Result<Box<dyn DirLock>> {
    let key = canonical(path)?;
    let mut held = HELD.lock();
    let set = held.get_or_insert_with(HashSet::new);
    if set.contains(&key) {
        return Err(Error::Locked(path.to_path_buf()));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| named(e, path))?;
    set_record_lock(&file).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES | libc::EAGAIN) => Error::Locked(path.to_path_buf()),
        _ => named(e, path),
    })?;
    set.insert(key.clone());
    Ok(Box::new(RecordLock { file: Some(file), key }))
}

/// `path` with its directory resolved (the file itself may not exist yet), so two spellings
/// of one directory find the same entry.
fn canonical(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("lock file {}: no file name", path.display())))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Ok(dir.canonicalize().map_err(|e| named(e, dir))?.join(name))
}

/// An I/O error that names the file.
fn named(e: std::io::Error, path: &Path) -> Error {
    Error::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// A write lock over the whole file, without waiting.
fn set_record_lock(file: &File) -> std::io::Result<()> {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a valid value; the
    // fields that matter are set below. Exercised by
    // `the_directory_lock_keeps_out_others_but_not_the_parent_of_a_fork`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 0;
    // SAFETY: the descriptor is open for the call (borrowed from `file`), and `fl` is a valid
    // `flock` that outlives it. Exercised by
    // `the_directory_lock_keeps_out_others_but_not_the_parent_of_a_fork`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
