//! The whole-database target: the base database with one of its files damaged, opened,
//! read, scanned, written once and closed. Every step must end in `Ok` or an `Error`.
//!
//! Input: `file` (which file, modulo their number), `mode`, a little-endian `u32` offset,
//! then the bytes the mode uses. Mode bits 0-1: 0 replaces the file with the bytes, 1
//! XORs them into it at the offset, 2 cuts it to the offset's length, 3 inserts them at
//! the offset. Bit 2 then makes a log's checksums right again ([`super::logs::seal_log`]),
//! so damage can reach the records; bit 3 replays logs in point-in-time mode.

use super::base;
use super::logs::seal_log;
use super::mem_storage::MemStorage;
use crate::db::{Db, Readable};
use crate::options::WalRecovery;
use std::path::Path;
use std::sync::Arc;

/// Most entries one scan reads.
const MAX_SCAN: usize = 5_000;

/// Damage one file of the base database as `input` says, then open and use the database.
pub(super) fn open_db(input: &[u8]) {
    let [file, mode, o0, o1, o2, o3, ref bytes @ ..] = *input else { return };
    let offset = u32::from_le_bytes([o0, o1, o2, o3]) as usize;
    let mut files = base::files().to_vec();
    let count = files.len().max(1);
    let Some((path, target)) = files.get_mut(usize::from(file) % count) else { return };
    damage(target, mode & 3, offset, bytes);
    if mode & 4 != 0 && is_log(path) {
        seal_log(target);
    }
    let storage = Arc::new(MemStorage::with_files(files));
    let recovery = if mode & 8 != 0 { WalRecovery::PointInTime } else { WalRecovery::TolerateTornTail };
    let opts = crate::options::Options { wal_recovery: recovery, ..base::options(storage) };
    let Ok(db) = Db::open(base::DIR, opts) else { return };
    for i in (0..210).step_by(11) {
        let _ = db.get(base::key(i));
    }
    let _ = db.iter().take(MAX_SCAN).take_while(Result::is_ok).count();
    let _ = db.iter().rev().take(MAX_SCAN).take_while(Result::is_ok).count();
    let _ = db.range(base::key(10)..base::key(60)).take_while(Result::is_ok).count();
    let _ = db.put(b"fuzz", b"after open");
    let _ = db.close();
}

fn is_log(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.ends_with(".log") || name.starts_with("MANIFEST-")
}

/// Apply damage `kind` to `file`.
fn damage(file: &mut Vec<u8>, kind: u8, offset: usize, bytes: &[u8]) {
    let at = offset.min(file.len());
    match kind {
        0 => *file = bytes.to_vec(),
        1 => {
            for (b, x) in file.iter_mut().skip(at).zip(bytes) {
                *b ^= x;
            }
        }
        2 => file.truncate(at),
        _ => {
            file.splice(at..at, bytes.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input that appends `record` as one more whole record to the base manifest
    /// (its checksum made right by the seal).
    fn manifest_record_appended(record: &[u8]) -> Vec<u8> {
        let files = base::files();
        let at = files.iter().position(|(p, _)| is_log(p) && !p.to_string_lossy().ends_with(".log")).unwrap();
        let len = files[at].1.len() as u32;
        let mut input = vec![at as u8, 3 | 4];
        input.extend_from_slice(&len.to_le_bytes());
        input.extend_from_slice(&[0, 0, 0, 0]);
        input.extend_from_slice(&(record.len() as u16).to_le_bytes());
        input.push(1);
        input.extend_from_slice(record);
        input
    }

    /// Found by the fuzzer's reasoning, not by chance: a manifest whose last sequence is
    /// the largest `u64` opened, and its first write overflowed `last + 1`. The edit
    /// decoder now refuses it; the database does not open.
    #[test]
    fn a_manifest_with_an_absurd_last_sequence_does_not_open_and_does_not_panic() {
        let mut edit = vec![3, 10];
        edit.extend_from_slice(&[0xff; 9]);
        edit.push(0x01);
        let input = manifest_record_appended(&edit);
        if std::env::var_os("SHAMBA_PRINT_INPUT").is_some() {
            eprintln!("{}", input.iter().map(|b| format!("{b:02x}")).collect::<String>());
        }
        open_db(&input);
    }
}
