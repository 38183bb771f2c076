//! The expected-state file: one slot per key (see `slot.rs`), kept in memory behind a lock
//! per key and written through to the file with `pwrite` on every change, so it survives a
//! SIGKILL of the process (the kernel keeps what was written; a power loss is out of scope,
//! as it is for the database's unsynced writes).
//!
//! Layout (little-endian), RocksDB db_stress's `ExpectedState` in spirit:
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | magic `SHSTRESS` |
//! | 8 | 4 | format version (2: slots with deadlines, progress counters) |
//! | 16 | 8 | keys |
//! | 24 | 8 | seed of the engine options (fixed when the file is created) |
//! | 32 | 4 | id ceiling: op ids at or above it were never handed out |
//! | 36 | 4 | opens: times the file was opened (each run, and the crash parent after every kill) |
//! | 40 | 8 * 8 | progress: operations run so far, then the other counters of `Progress` (written now and then by the running process) |
//! | 128 | 24 * keys | the slots, key index order |
//!
//! Op ids are handed out from memory and the ceiling is raised in steps before they are
//! used, so an id is never reused, even for a write a kill cut off before it reached the
//! database: every value id in the database names exactly one write.

use super::slot::{Slot, MAX_OP_ID, SLOT_BYTES};
use std::error::Error;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

const MAGIC: &[u8; 8] = b"SHSTRESS";
const VERSION: u32 = 2;
const HEADER: u64 = 128;
const CEILING_AT: usize = 32;
const RUNS_AT: usize = 36;
const PROGRESS_AT: u64 = 40;

/// Counters kept across runs: operations first, then those `Counters::progress` adds.
pub type Progress = [u64; 8];
/// Ids reserved per raise of the ceiling.
const ID_STEP: u32 = 4096;

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The expected state of every key, in memory and in its file.
pub struct ExpectedState {
    path: PathBuf,
    file: File,
    slots: Vec<Mutex<Slot>>,
    options_seed: u64,
    runs: u32,
    next_id: AtomicU32,
    ceiling: Mutex<u32>,
}

/// A key's slot, locked: the database and the expected state change together under it.
pub struct KeyLock<'a> {
    state: &'a ExpectedState,
    index: u32,
    slot: MutexGuard<'a, Slot>,
}

impl KeyLock<'_> {
    /// The key's expected state.
    pub fn slot(&self) -> Slot {
        *self.slot
    }

    /// Change the key's expected state, in memory and in the file.
    pub fn set(&mut self, slot: Slot) -> Res<()> {
        self.state.write_slot(self.index, slot)?;
        *self.slot = slot;
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking worker poisons nothing the slot's value depends on: it is a plain copy.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn io_err(path: &Path, what: &str, e: std::io::Error) -> Box<dyn Error + Send + Sync> {
    format!("expected-state file {}: {what}: {e}", path.display()).into()
}

impl ExpectedState {
    /// Create a file for `keys` keys, every one absent.
    pub fn create(path: &Path, keys: u32, options_seed: u64) -> Res<ExpectedState> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| io_err(path, "create", e))?;
        let mut header = [0u8; HEADER as usize];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        header[16..24].copy_from_slice(&u64::from(keys).to_le_bytes());
        header[24..32].copy_from_slice(&options_seed.to_le_bytes());
        header[32..36].copy_from_slice(&1u32.to_le_bytes());
        file.write_all_at(&header, 0).map_err(|e| io_err(path, "write header", e))?;
        file.set_len(HEADER + SLOT_BYTES as u64 * u64::from(keys)).map_err(|e| io_err(path, "size", e))?;
        file.sync_all().map_err(|e| io_err(path, "sync", e))?;
        ExpectedState::open(path)
    }

    /// Open an existing file, counting one more run.
    pub fn open(path: &Path) -> Res<ExpectedState> {
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(|e| io_err(path, "open", e))?;
        let mut header = [0u8; HEADER as usize];
        file.read_exact_at(&mut header, 0).map_err(|e| io_err(path, "read header", e))?;
        let u32_at = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let u64_at = |at: usize| u64::from(u32_at(at)) | (u64::from(u32_at(at + 4)) << 32);
        if &header[..8] != MAGIC || u32_at(8) != VERSION {
            return Err(format!("{} is not a stress expected-state file (version {VERSION})", path.display()).into());
        }
        let keys = u32::try_from(u64_at(16)).map_err(|_| format!("{}: key count out of range", path.display()))?;
        let mut raw = vec![0u8; SLOT_BYTES * keys as usize];
        file.read_exact_at(&mut raw, HEADER).map_err(|e| io_err(path, "read slots", e))?;
        let mut slots = Vec::with_capacity(keys as usize);
        let mut max_id = 0;
        for (index, chunk) in raw.chunks_exact(SLOT_BYTES).enumerate() {
            let mut bytes = [0u8; SLOT_BYTES];
            bytes.copy_from_slice(chunk);
            let slot = Slot::decode(&bytes).map_err(|why| format!("{}: slot of key {index}: {why}", path.display()))?;
            max_id = max_id.max(slot.max_id());
            slots.push(Mutex::new(slot));
        }
        let ceiling = u32_at(CEILING_AT).max(max_id + 1);
        let runs = u32_at(RUNS_AT) + 1;
        file.write_all_at(&runs.to_le_bytes(), RUNS_AT as u64).map_err(|e| io_err(path, "count the run", e))?;
        Ok(ExpectedState {
            path: path.to_path_buf(),
            file,
            slots,
            options_seed: u64_at(24),
            runs,
            next_id: AtomicU32::new(ceiling),
            ceiling: Mutex::new(ceiling),
        })
    }

    /// Keys in the key space.
    pub fn keys(&self) -> u32 {
        self.slots.len() as u32
    }

    /// The seed the engine options are drawn from.
    pub fn options_seed(&self) -> u64 {
        self.options_seed
    }

    /// Times this file was opened, this time included (it varies the seed of each run).
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Lock key `index`'s slot. Lock several keys in increasing index order only.
    pub fn lock(&self, index: u32) -> KeyLock<'_> {
        KeyLock { state: self, index, slot: lock(&self.slots[index as usize]) }
    }

    /// Key `index`'s slot as of now (it may change as soon as this returns).
    pub fn peek(&self, index: u32) -> Slot {
        *lock(&self.slots[index as usize])
    }

    /// A fresh op id, never handed out before for this file.
    pub fn next_id(&self) -> Res<u32> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if id >= MAX_OP_ID {
            return Err(format!("{}: op ids are used up", self.path.display()).into());
        }
        let mut ceiling = lock(&self.ceiling);
        if id >= *ceiling {
            let raised = id.saturating_add(ID_STEP).min(MAX_OP_ID);
            self.file
                .write_all_at(&raised.to_le_bytes(), CEILING_AT as u64)
                .map_err(|e| io_err(&self.path, "raise the id ceiling", e))?;
            *ceiling = raised;
        }
        Ok(id)
    }

    /// The progress counters so far, over every run.
    pub fn progress(&self) -> Res<Progress> {
        let mut b = [0u8; 64];
        self.file.read_exact_at(&mut b, PROGRESS_AT).map_err(|e| io_err(&self.path, "read progress", e))?;
        let mut out = Progress::default();
        for (v, chunk) in out.iter_mut().zip(b.chunks_exact(8)) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            *v = u64::from_le_bytes(word);
        }
        Ok(out)
    }

    /// Record the progress counters so far.
    pub fn set_progress(&self, progress: &Progress) -> Res<()> {
        let bytes: Vec<u8> = progress.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.file.write_all_at(&bytes, PROGRESS_AT).map_err(|e| io_err(&self.path, "write progress", e))
    }

    fn write_slot(&self, index: u32, slot: Slot) -> Res<()> {
        self.file
            .write_all_at(&slot.encode(), HEADER + SLOT_BYTES as u64 * u64::from(index))
            .map_err(|e| io_err(&self.path, "write slot", e))
    }
}

#[cfg(test)]
mod tests {
    use super::super::slot::Write;
    use super::*;

    #[test]
    fn slots_and_ids_survive_a_reopen_and_ids_never_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let s = ExpectedState::create(&path, 10, 77).unwrap();
        let a = s.next_id().unwrap();
        let slot = Slot::settled_until(Some(Write::Put(a)), Some(123)).with_pending(Write::Delete(a + 1));
        s.lock(3).set(slot).unwrap();
        let b = s.next_id().unwrap();
        s.set_progress(&[9, 1, 2, 3, 4, 5, 6, 7]).unwrap();
        drop(s);
        let s = ExpectedState::open(&path).unwrap();
        assert_eq!(s.peek(3), slot);
        assert_eq!((s.progress().unwrap()[0], s.progress().unwrap()[7]), (9, 7));
        assert_eq!((s.keys(), s.options_seed(), s.runs()), (10, 77, 2));
        assert!(s.next_id().unwrap() > b, "an id handed out before the reopen is not handed out again");
    }
}
