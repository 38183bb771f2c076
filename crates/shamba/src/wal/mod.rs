//! The log format shared by the write-ahead log and the manifest: records in 32 KiB
//! blocks, each fragment with a crc32c, length and type (LevelDB's log format).

use crate::error::Result;
use crate::io::SequentialWrite;
use crate::options::WalRecovery;
use std::path::Path;

/// Appends records to a log file.
pub struct LogWriter {
    _todo: Box<dyn SequentialWrite>,
}

impl LogWriter {
    /// Start a log in a new, empty file.
    pub fn new(file: Box<dyn SequentialWrite>) -> Self {
        let _ = file;
        todo!()
    }
    /// Append one record (it may be split into fragments across blocks).
    pub fn add_record(&mut self, record: &[u8]) -> Result<()> {
        let _ = record;
        todo!()
    }
    /// Hand buffered bytes to the OS (survives a process crash).
    pub fn flush(&mut self) -> Result<()> {
        todo!()
    }
    /// Make everything appended durable (survives a power loss).
    pub fn sync(&mut self) -> Result<()> {
        todo!()
    }
    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        todo!()
    }
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Decode every whole record of a log file's bytes. A torn tail is dropped; other damage
/// is `Error::Corruption` naming `path` and the offset (or, with
/// [`WalRecovery::PointInTime`], the end of replay).
pub fn read_log(bytes: &[u8], path: &Path, mode: WalRecovery) -> Result<Vec<Vec<u8>>> {
    let _ = (bytes, path, mode);
    todo!()
}
