//! Manifest files and the CURRENT file that names the live one.
//!
//! `MANIFEST-{n:06}` is a log (see [`crate::wal`]) of [`VersionEdit`]s, the first of which
//! is a snapshot of the whole tree. `CURRENT` holds the live manifest's name and a newline;
//! it is replaced atomically: write `CURRENT.tmp`, sync it, rename it over `CURRENT`, sync
//! the directory. A crash at any point leaves either the old or the new name in `CURRENT`.

#![deny(clippy::indexing_slicing)]

use super::edit::VersionEdit;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::wal::LogWriter;
use std::path::{Path, PathBuf};

/// Name of the file naming the live manifest.
pub(crate) const CURRENT: &str = "CURRENT";

/// Temporary file used to replace [`CURRENT`] atomically; a leftover one is garbage.
pub(super) const CURRENT_TMP: &str = "CURRENT.tmp";

/// File name of manifest `number`.
pub(crate) fn manifest_file_name(number: u64) -> String {
    format!("MANIFEST-{number:06}")
}

/// The number of a manifest file name, if `name` is one.
pub(crate) fn parse_manifest_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("MANIFEST-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Read `CURRENT` and return the live manifest's number.
pub(crate) fn read_current(storage: &dyn Storage, dir: &Path) -> Result<u64> {
    let path = dir.join(CURRENT);
    let bytes = storage.read_all(&path)?;
    let name = std::str::from_utf8(&bytes).ok().and_then(|s| s.strip_suffix('\n'));
    name.and_then(parse_manifest_file_name)
        .ok_or_else(|| Error::corruption(&path, None, "CURRENT does not name a manifest"))
}

/// Point `CURRENT` at manifest `number`, atomically and durably.
pub(crate) fn set_current(storage: &dyn Storage, dir: &Path, number: u64) -> Result<()> {
    let tmp = dir.join(CURRENT_TMP);
    let mut f = storage.create(&tmp)?;
    f.append(format!("{}\n", manifest_file_name(number)).as_bytes())?;
    f.sync()?;
    drop(f);
    storage.rename(&tmp, &dir.join(CURRENT))?;
    storage.sync_dir(dir)
}

/// Create manifest `number` holding `snapshot` as its first records (one edit per
/// keyspace), synced.
pub(crate) fn write_manifest(storage: &dyn Storage, path: &Path, snapshot: &[VersionEdit]) -> Result<LogWriter> {
    let mut log = LogWriter::new(storage.create(path)?);
    let mut record = Vec::new();
    for edit in snapshot {
        record.clear();
        edit.encode(&mut record);
        log.add_record(&record)?;
    }
    log.sync()?;
    Ok(log)
}

/// Path of manifest `number` in `dir`.
pub(crate) fn manifest_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(manifest_file_name(number))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::io::FsStorage;

    #[test]
    fn manifest_names_round_trip_and_others_do_not_parse() {
        assert_eq!(manifest_file_name(42), "MANIFEST-000042");
        assert_eq!(parse_manifest_file_name("MANIFEST-000042"), Some(42));
        assert_eq!(parse_manifest_file_name("MANIFEST-1234567"), Some(1_234_567));
        for bad in ["MANIFEST-", "MANIFEST-12a", "MANIFEST--1", "000042.sst", "MANIFEST-+1"] {
            assert_eq!(parse_manifest_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn current_switches_atomically_and_garbage_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        set_current(&FsStorage, dir.path(), 3).unwrap();
        assert_eq!(read_current(&FsStorage, dir.path()).unwrap(), 3);
        set_current(&FsStorage, dir.path(), 12).unwrap();
        assert_eq!(read_current(&FsStorage, dir.path()).unwrap(), 12);
        assert!(!dir.path().join(CURRENT_TMP).exists());
        std::fs::write(dir.path().join(CURRENT), b"MANIFEST-000012").unwrap();
        let err = read_current(&FsStorage, dir.path()).unwrap_err();
        assert!(matches!(&err, Error::Corruption { file, .. } if file.ends_with(CURRENT)), "{err}");
    }
}
