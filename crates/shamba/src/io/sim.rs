//! A simulated disk: an in-memory file system that numbers every operation, can fail the
//! one numbered N in the ways real devices fail, and knows what a crash would keep.
//!
//! It is the instrument of the fault-point test: a workload runs once to count its
//! operations, then once per operation N with a fault injected at N, then the disk "crashes"
//! and the database is reopened on what survived. What survives a crash is what was made
//! durable: file bytes up to the last `sync` of the file, and directory entries (creations,
//! renames, deletions) up to the last `sync_dir` of their directory (LevelDB's
//! `FaultInjectionTestEnv` keeps the same two rules). A directory moved or removed is such
//! an entry of its parent; a directory's creation is durable at once (the engine never
//! relies on it: a checkpoint's staging directory is made durable by the sync of the
//! parent after its move). A crash may also keep everything written, as when only the
//! process dies.

use super::{DirLock, RandomRead, SequentialWrite, Storage};
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How operation N fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimFault {
    /// The operation fails with an I/O error and does nothing.
    Error,
    /// The operation fails as on a full disk (`ErrorKind::StorageFull`) and does nothing.
    NoSpace,
    /// An append writes the first half of its bytes, then fails as on a full disk. Other
    /// operations fail as with [`SimFault::NoSpace`].
    ShortWrite,
    /// The machine stops before the operation: it and every later one fail. Follow with
    /// [`SimStorage::crash`].
    Crash,
    /// An append writes the first half of its bytes and the machine stops: every later
    /// operation fails. Follow with [`SimStorage::crash`] keeping what was written, so the
    /// file ends in a torn write.
    TornWrite,
}

/// What a crash keeps of the bytes and directory changes not yet synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashKeeps {
    /// Only what was synced (a power loss).
    Synced,
    /// Everything written (only the process died; the kernel keeps its page cache).
    Written,
}

#[derive(Default)]
struct SimFile {
    data: Vec<u8>,
    /// Bytes made durable by the last sync.
    synced: usize,
}

type Inode = Arc<Mutex<SimFile>>;

/// A change to a directory entry that its directory's sync has not made durable yet.
enum DirChange {
    /// `path` now names a new file; before, it named `previous` (or nothing).
    Created { path: PathBuf, previous: Option<Inode> },
    /// The file at `from` moved to `to`, replacing `replaced` there (or nothing).
    Renamed { from: PathBuf, to: PathBuf, replaced: Option<Inode> },
    /// `path` named `file` and was deleted.
    Removed { path: PathBuf, file: Inode },
    /// The directory `from`, with everything in it, moved to `to` (which did not exist).
    /// Older changes inside it were rewritten to name `to`.
    DirMoved { from: PathBuf, to: PathBuf },
    /// The empty directory `path` was removed.
    DirRemoved { path: PathBuf },
}

impl DirChange {
    fn in_dir(&self, dir: &Path) -> bool {
        let parent = |p: &Path| p.parent() == Some(dir);
        match self {
            DirChange::Created { path, .. } | DirChange::Removed { path, .. } | DirChange::DirRemoved { path } => {
                parent(path)
            }
            DirChange::Renamed { from, to, .. } | DirChange::DirMoved { from, to } => parent(from) || parent(to),
        }
    }

    /// Rewrite the paths under the directory `from` to lie under `to`.
    fn rebase(&mut self, from: &Path, to: &Path) {
        let paths: Vec<&mut PathBuf> = match self {
            DirChange::Created { path, .. } | DirChange::Removed { path, .. } | DirChange::DirRemoved { path } => {
                vec![path]
            }
            DirChange::Renamed { from: a, to: b, .. } | DirChange::DirMoved { from: a, to: b } => vec![a, b],
        };
        for p in paths {
            *p = rebased(p, from, to);
        }
    }
}

/// `path` with its prefix `from` replaced by `to` (unchanged if `from` is not a prefix).
fn rebased(path: &Path, from: &Path, to: &Path) -> PathBuf {
    path.strip_prefix(from).map_or_else(|_| path.to_path_buf(), |rest| to.join(rest))
}

impl SimState {
    /// Move every file and directory under `from` (itself included) to `to`.
    fn move_tree(&mut self, from: &Path, to: &Path) {
        let files: Vec<PathBuf> = self.files.keys().filter(|p| p.starts_with(from)).cloned().collect();
        for p in files {
            if let Some(file) = self.files.remove(&p) {
                self.files.insert(rebased(&p, from, to), file);
            }
        }
        let dirs: Vec<PathBuf> = self.dirs.iter().filter(|d| d.starts_with(from)).cloned().collect();
        for d in dirs {
            self.dirs.remove(&d);
            self.dirs.insert(rebased(&d, from, to));
        }
    }
}

#[derive(Default)]
struct SimState {
    files: BTreeMap<PathBuf, Inode>,
    dirs: HashSet<PathBuf>,
    /// Oldest first.
    unsynced: Vec<DirChange>,
    locks: HashSet<PathBuf>,
    /// Operations done so far (the next one gets this number).
    ops: u64,
    /// The operation to fail, and how.
    fault: Option<(u64, SimFault)>,
    /// A crash fault struck: every operation fails until [`SimStorage::crash`].
    dead: bool,
}

/// What the operation about to run should do.
enum Step {
    Run,
    /// Append only this many bytes, then fail with the error (or with nothing: the machine
    /// stopped, every later operation fails).
    Partial(usize, Error),
}

/// The simulated disk. Clones share it.
#[derive(Clone, Default)]
pub struct SimStorage {
    state: Arc<Mutex<SimState>>,
}

fn io_error(kind: ErrorKind, what: &str) -> Error {
    Error::Io(std::io::Error::new(kind, format!("simulated fault: {what}")))
}

fn not_found(path: &Path) -> Error {
    io_error(ErrorKind::NotFound, &format!("{} does not exist", path.display()))
}

impl SimStorage {
    /// An empty disk.
    pub fn new() -> SimStorage {
        SimStorage::default()
    }

    /// Operations done so far (every call of the [`Storage`] trait and of its files, except
    /// `exists` and `len`).
    pub fn ops(&self) -> u64 {
        self.state.lock().ops
    }

    /// Fail operation number `at` (counting from the disk's creation) as `fault` says.
    pub fn fail_at(&self, at: u64, fault: SimFault) {
        self.state.lock().fault = Some((at, fault));
    }

    /// Whether a crash fault has struck (every operation fails until [`SimStorage::crash`]).
    pub fn is_dead(&self) -> bool {
        self.state.lock().dead
    }

    /// The machine restarts: unsynced directory changes are undone (newest first) and,
    /// with [`CrashKeeps::Synced`], every file loses the bytes written after its last sync.
    /// Locks are released, the fault is cleared, and the disk works again. Call it once no
    /// database uses the disk any more.
    pub fn crash(&self, keeps: CrashKeeps) {
        let mut s = self.state.lock();
        if keeps == CrashKeeps::Synced {
            while let Some(change) = s.unsynced.pop() {
                match change {
                    DirChange::Created { path, previous } => match previous {
                        Some(file) => {
                            s.files.insert(path, file);
                        }
                        None => {
                            s.files.remove(&path);
                        }
                    },
                    DirChange::Renamed { from, to, replaced } => {
                        if let Some(file) = s.files.remove(&to) {
                            s.files.insert(from, file);
                        }
                        if let Some(file) = replaced {
                            s.files.insert(to, file);
                        }
                    }
                    DirChange::Removed { path, file } => {
                        s.files.insert(path, file);
                    }
                    DirChange::DirMoved { from, to } => {
                        s.move_tree(&to, &from);
                        for older in &mut s.unsynced {
                            older.rebase(&to, &from);
                        }
                    }
                    DirChange::DirRemoved { path } => {
                        s.dirs.insert(path);
                    }
                }
            }
            for file in s.files.values() {
                let mut f = file.lock();
                let synced = f.synced;
                f.data.truncate(synced);
            }
        }
        s.unsynced.clear();
        for file in s.files.values() {
            let mut f = file.lock();
            f.synced = f.data.len();
        }
        s.locks.clear();
        s.fault = None;
        s.dead = false;
    }

    /// Number the operation about to run and say whether it runs. `append` is the length
    /// of an append's bytes (a torn or short write cuts it).
    fn step(&self, what: &str, append: Option<usize>) -> Result<Step> {
        let mut s = self.state.lock();
        if s.dead {
            return Err(io_error(ErrorKind::Other, &format!("{what}: the machine has stopped")));
        }
        let n = s.ops;
        s.ops += 1;
        let Some((at, fault)) = s.fault else { return Ok(Step::Run) };
        if at != n {
            return Ok(Step::Run);
        }
        match (fault, append) {
            (SimFault::Error, _) => Err(io_error(ErrorKind::Other, &format!("{what} failed"))),
            (SimFault::NoSpace, _) | (SimFault::ShortWrite, None) => {
                Err(io_error(ErrorKind::StorageFull, &format!("{what}: disk full")))
            }
            (SimFault::ShortWrite, Some(len)) => {
                Ok(Step::Partial(len / 2, io_error(ErrorKind::StorageFull, &format!("{what}: disk full"))))
            }
            (SimFault::Crash, _) | (SimFault::TornWrite, None) => {
                s.dead = true;
                Err(io_error(ErrorKind::Other, &format!("{what}: the machine has stopped")))
            }
            (SimFault::TornWrite, Some(len)) => {
                s.dead = true;
                Ok(Step::Partial(len / 2, io_error(ErrorKind::Other, &format!("{what}: the machine has stopped"))))
            }
        }
    }

    fn inode(&self, path: &Path) -> Result<Inode> {
        self.state.lock().files.get(path).cloned().ok_or_else(|| not_found(path))
    }
}

struct SimWriter {
    disk: SimStorage,
    file: Inode,
    len: u64,
}

impl SequentialWrite for SimWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let (keep, failure) = match self.disk.step("append", Some(data.len()))? {
            Step::Run => (data, None),
            Step::Partial(n, e) => (data.get(..n).unwrap_or(data), Some(e)),
        };
        self.file.lock().data.extend_from_slice(keep);
        self.len += keep.len() as u64;
        failure.map_or(Ok(()), Err)
    }
    fn flush(&mut self) -> Result<()> {
        self.disk.step("flush", None).map(|_| ())
    }
    fn sync(&mut self) -> Result<()> {
        self.disk.step("sync", None)?;
        let mut f = self.file.lock();
        f.synced = f.data.len();
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

struct SimReader {
    disk: SimStorage,
    file: Inode,
}

impl RandomRead for SimReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.disk.step("read", None)?;
        let f = self.file.lock();
        let bytes = usize::try_from(offset)
            .ok()
            .and_then(|start| f.data.get(start..start.checked_add(buf.len())?))
            .ok_or_else(|| io_error(ErrorKind::UnexpectedEof, "read past the end of the file"))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
    fn len(&self) -> u64 {
        self.file.lock().data.len() as u64
    }
}

struct SimLock {
    disk: SimStorage,
    path: PathBuf,
}

impl DirLock for SimLock {}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.disk.state.lock().locks.remove(&self.path);
    }
}

impl Storage for SimStorage {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        self.step("open", None)?;
        Ok(Arc::new(SimReader { disk: self.clone(), file: self.inode(path)? }))
    }
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        self.step("create", None)?;
        let file = Inode::default();
        let mut s = self.state.lock();
        let previous = s.files.insert(path.to_path_buf(), file.clone());
        s.unsynced.push(DirChange::Created { path: path.to_path_buf(), previous });
        drop(s);
        Ok(Box::new(SimWriter { disk: self.clone(), file, len: 0 }))
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.step("read", None)?;
        Ok(self.inode(path)?.lock().data.clone())
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if self.state.lock().dirs.contains(from) {
            return self.rename_dir(from, to);
        }
        self.step("rename", None)?;
        let mut s = self.state.lock();
        let file = s.files.remove(from).ok_or_else(|| not_found(from))?;
        let replaced = s.files.insert(to.to_path_buf(), file);
        s.unsynced.push(DirChange::Renamed { from: from.to_path_buf(), to: to.to_path_buf(), replaced });
        Ok(())
    }
    fn rename_dir(&self, from: &Path, to: &Path) -> Result<()> {
        self.step("rename dir", None)?;
        let mut s = self.state.lock();
        if !s.dirs.contains(from) {
            return Err(not_found(from));
        }
        if s.dirs.contains(to) || s.files.contains_key(to) || to.starts_with(from) {
            return Err(io_error(ErrorKind::AlreadyExists, &format!("cannot move a directory to {}", to.display())));
        }
        s.move_tree(from, to);
        for older in &mut s.unsynced {
            older.rebase(from, to);
        }
        s.unsynced.push(DirChange::DirMoved { from: from.to_path_buf(), to: to.to_path_buf() });
        Ok(())
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.step("remove dir", None)?;
        let mut s = self.state.lock();
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let within = |p: &PathBuf| p.starts_with(dir) && p != dir;
        if s.files.keys().any(within) || s.dirs.iter().any(within) {
            return Err(io_error(ErrorKind::DirectoryNotEmpty, &format!("{} is not empty", dir.display())));
        }
        s.dirs.remove(dir);
        s.unsynced.push(DirChange::DirRemoved { path: dir.to_path_buf() });
        Ok(())
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.step("remove", None)?;
        let mut s = self.state.lock();
        let file = s.files.remove(path).ok_or_else(|| not_found(path))?;
        s.unsynced.push(DirChange::Removed { path: path.to_path_buf(), file });
        Ok(())
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        self.step("list", None)?;
        let s = self.state.lock();
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(s.files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.step("create dir", None)?;
        let mut s = self.state.lock();
        for d in dir.ancestors() {
            s.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.step("sync dir", None)?;
        self.state.lock().unsynced.retain(|c| !c.in_dir(dir));
        Ok(())
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        self.step("link", None)?;
        let mut s = self.state.lock();
        let file = s.files.get(from).cloned().ok_or_else(|| not_found(from))?;
        let previous = s.files.insert(to.to_path_buf(), file);
        s.unsynced.push(DirChange::Created { path: to.to_path_buf(), previous });
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        let s = self.state.lock();
        s.files.contains_key(path) || s.dirs.contains(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        self.step("lock", None)?;
        let mut s = self.state.lock();
        if !s.locks.insert(path.to_path_buf()) {
            return Err(Error::Locked(path.to_path_buf()));
        }
        s.files.entry(path.to_path_buf()).or_default();
        Ok(Box::new(SimLock { disk: self.clone(), path: path.to_path_buf() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(disk: &SimStorage, path: &Path, bytes: &[u8], sync: bool) {
        let mut f = disk.create(path).unwrap();
        f.append(bytes).unwrap();
        if sync {
            f.sync().unwrap();
        }
    }

    fn read(disk: &SimStorage, path: &Path) -> Option<Vec<u8>> {
        disk.exists(path).then(|| disk.read_all(path).unwrap())
    }

    #[test]
    fn a_power_loss_keeps_synced_bytes_and_synced_directory_entries_only() {
        let disk = SimStorage::new();
        let dir = Path::new("/db");
        disk.create_dir_all(dir).unwrap();
        write(&disk, &dir.join("durable"), b"abc", true);
        disk.sync_dir(dir).unwrap();
        let mut f = disk.create(&dir.join("durable2")).unwrap();
        f.append(b"xy").unwrap();
        f.sync().unwrap();
        disk.sync_dir(dir).unwrap();
        f.append(b"z").unwrap(); // never synced
        write(&disk, &dir.join("new"), b"synced data, no dir sync", true);
        disk.remove(&dir.join("durable")).unwrap();
        write(&disk, &dir.join("tmp"), b"2", true);
        disk.rename(&dir.join("tmp"), &dir.join("durable2")).unwrap();

        disk.crash(CrashKeeps::Synced);
        assert_eq!(read(&disk, &dir.join("durable")).as_deref(), Some(&b"abc"[..]), "the removal is undone");
        assert_eq!(read(&disk, &dir.join("durable2")).as_deref(), Some(&b"xy"[..]), "rename undone, tail lost");
        assert_eq!(read(&disk, &dir.join("new")), None, "its entry was never synced");
        assert_eq!(read(&disk, &dir.join("tmp")), None);
    }

    #[test]
    fn a_directory_move_is_durable_once_its_parent_is_synced() {
        let disk = SimStorage::new();
        let (staging, out) = (Path::new("/p/out.staging"), Path::new("/p/out"));
        disk.create_dir_all(staging).unwrap();
        write(&disk, &staging.join("a"), b"synced", true);
        disk.sync_dir(staging).unwrap();
        disk.create(&staging.join("b")).unwrap(); // its entry never synced
        disk.rename_dir(staging, out).unwrap();
        assert!(disk.rename_dir(staging, out).is_err(), "it moved");
        assert!(disk.exists(out) && !disk.exists(staging));
        assert_eq!(disk.list(out).unwrap(), ["a", "b"]);
        disk.crash(CrashKeeps::Synced);
        assert!(!disk.exists(out), "the move was not synced");
        assert_eq!(disk.list(staging).unwrap(), ["a"], "nor was b's creation");

        disk.create(&staging.join("b")).unwrap();
        disk.sync_dir(staging).unwrap();
        disk.rename_dir(staging, out).unwrap();
        disk.sync_dir(Path::new("/p")).unwrap();
        disk.crash(CrashKeeps::Synced);
        assert_eq!(disk.list(out).unwrap(), ["a", "b"]);
        assert!(!disk.exists(staging));
        assert_eq!(read(&disk, &out.join("a")).as_deref(), Some(&b"synced"[..]));

        assert!(disk.remove_dir(out).is_err(), "not empty");
        disk.remove(&out.join("a")).unwrap();
        disk.remove(&out.join("b")).unwrap();
        disk.sync_dir(out).unwrap();
        disk.remove_dir(out).unwrap();
        assert!(!disk.exists(out));
        disk.crash(CrashKeeps::Synced);
        assert!(disk.exists(out), "the removal was not synced");
        assert!(disk.list(out).unwrap().is_empty());
    }

    #[test]
    fn a_process_crash_keeps_everything_written() {
        let disk = SimStorage::new();
        let dir = Path::new("/db");
        disk.create_dir_all(dir).unwrap();
        write(&disk, &dir.join("a"), b"unsynced", false);
        disk.crash(CrashKeeps::Written);
        assert_eq!(read(&disk, &dir.join("a")).as_deref(), Some(&b"unsynced"[..]));
    }

    #[test]
    fn faults_strike_the_numbered_operation_as_asked() {
        let disk = SimStorage::new();
        let dir = Path::new("/db");
        let a = dir.join("a");
        disk.create_dir_all(dir).unwrap(); // op 0
        let mut f = disk.create(&a).unwrap(); // op 1
        assert_eq!(disk.ops(), 2);

        disk.fail_at(2, SimFault::ShortWrite);
        let e = f.append(b"abcd").unwrap_err(); // op 2
        assert_eq!(e.io_kind(), Some(ErrorKind::StorageFull));
        assert_eq!(disk.read_all(&a).unwrap(), b"ab"); // op 3

        disk.fail_at(5, SimFault::Error);
        f.append(b"!").unwrap(); // op 4
        let e = f.sync().unwrap_err(); // op 5
        assert_eq!(e.io_kind(), Some(ErrorKind::Other));
        assert!(!disk.is_dead(), "an error is not a crash");

        disk.fail_at(7, SimFault::TornWrite);
        f.append(b"12").unwrap(); // op 6
        assert!(f.append(b"3456").is_err()); // op 7
        assert!(disk.is_dead());
        assert!(disk.list(dir).is_err(), "a stopped machine does nothing");
        assert_eq!(disk.ops(), 8, "nothing is numbered after the machine stopped");
        disk.crash(CrashKeeps::Written);
        assert!(!disk.is_dead());
        assert_eq!(disk.read_all(&a).unwrap(), b"ab!1234", "the torn write kept its first half");

        disk.fail_at(disk.ops(), SimFault::Crash);
        assert!(disk.sync_dir(dir).is_err());
        assert!(disk.is_dead());
        disk.crash(CrashKeeps::Synced);
        assert_eq!(disk.read_all(&a).unwrap(), b"ab!1234", "what the last crash kept stays");
    }
}
