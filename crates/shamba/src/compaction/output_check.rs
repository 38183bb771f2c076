//! Every table a flush or compaction writes is opened and checked before it is installed.
//!
//! A device may acknowledge appends and syncs it never made durable (a full disk that
//! lies, a firmware bug). Installed unchecked, such a table replaces its inputs, which are
//! then deleted, and its keys are gone. So, as LevelDB opens every output through its table
//! cache before installing it, each new table is opened through the table cache (footer,
//! properties, index and pinned filters read and checksummed; the reader stays cached for
//! the lookups that follow) and compared with what its builder wrote: file size, entry
//! count, first and last keys, the latter read from the data blocks themselves. With
//! `Options::paranoid_file_checks` every data block is read as well, and the entries
//! counted and their order checked.

use super::job::JobEnv;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::key::compare_internal_keys;
use crate::options::ReadOptions;
use crate::table::{table_path, TableSummary};
use std::cmp::Ordering;

/// Open table `number` and check it holds what its builder reported in `written`.
///
/// # Errors
///
/// [`Error::Corruption`] naming the file when it does not open or holds something else
/// than `written` says; [`Error::Io`] when reading it fails.
pub(crate) fn check_output(env: &JobEnv<'_>, number: u64, written: &TableSummary) -> Result<()> {
    let path = table_path(env.dir, number);
    let mismatch = |what: &str, found: String, wrote: String| {
        Error::corruption(&path, None, format!("new table reads back {what} {found}, its builder wrote {wrote}"))
    };
    let reader = env.tables.reader(number)?;
    if reader.file_size() != written.file_size {
        return Err(mismatch("a size of", reader.file_size().to_string(), written.file_size.to_string()));
    }
    let props = reader.properties();
    if props.entries != written.entries {
        return Err(mismatch("an entry count of", props.entries.to_string(), written.entries.to_string()));
    }
    if props.smallest_key != written.smallest || props.largest_key != written.largest {
        let range = |lo: &[u8], hi: &[u8]| format!("{lo:?}..={hi:?}");
        return Err(mismatch(
            "a key range of",
            range(&props.smallest_key, &props.largest_key),
            range(&written.smallest, &written.largest),
        ));
    }
    let read = ReadOptions { fill_cache: false, verify_checksums: true, ..ReadOptions::default() };
    let mut cursor = reader.cursor(&read);
    cursor.seek_to_first()?;
    if !cursor.valid() || cursor.key() != written.smallest.as_slice() {
        return Err(mismatch("another first key", describe(&*cursor), format!("{:?}", written.smallest)));
    }
    if env.opts.paranoid_file_checks {
        walk_every_entry(&mut *cursor, written, &path)?;
    }
    cursor.seek_to_last()?;
    if !cursor.valid() || cursor.key() != written.largest.as_slice() {
        return Err(mismatch("another last key", describe(&*cursor), format!("{:?}", written.largest)));
    }
    Ok(())
}

/// The cursor's key for an error message.
fn describe(cursor: &dyn Cursor) -> String {
    if cursor.valid() {
        format!("{:?}", cursor.key())
    } else {
        "none".into()
    }
}

/// From the first entry, read every entry: as many as `written` says, in strictly
/// increasing internal-key order.
fn walk_every_entry(cursor: &mut dyn Cursor, written: &TableSummary, path: &std::path::Path) -> Result<()> {
    let mut entries = 0u64;
    let mut previous: Vec<u8> = Vec::new();
    while cursor.valid() {
        if entries > 0 && compare_internal_keys(&previous, cursor.key()) != Ordering::Less {
            return Err(Error::corruption(path, None, format!("new table: entry {entries} is out of order")));
        }
        previous.clear();
        previous.extend_from_slice(cursor.key());
        entries += 1;
        cursor.next()?;
    }
    if entries != written.entries {
        return Err(Error::corruption(
            path,
            None,
            format!("new table reads back {entries} entries, its builder wrote {}", written.entries),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{DeviceModel, FsStorage, IoStats, Storage};
    use crate::key::{internal_key, ValueKind};
    use crate::options::Options;
    use crate::table::{TableBuilder, TableCache, TableContext, TableOptions};
    use std::sync::Arc;

    /// A table of 400 entries in blocks of 256 bytes, as table 5 of a fresh directory.
    fn written(dir: &std::path::Path) -> TableSummary {
        let opts = TableOptions { block_size: 256, ..TableOptions::default() };
        let mut b = TableBuilder::new(FsStorage.create(&table_path(dir, 5)).unwrap(), opts);
        for i in 0..400u32 {
            b.add(&internal_key(format!("key-{i:06}").as_bytes(), 1, ValueKind::Put), b"value").unwrap();
        }
        b.finish().unwrap()
    }

    fn check(dir: &std::path::Path, summary: &TableSummary, paranoid: bool) -> Result<()> {
        let ctx = TableContext {
            cache: Arc::new(crate::cache::BlockCache::new(1 << 20, 0.5)),
            io: Arc::new(IoStats::default()),
            device: DeviceModel::None,
            cache_index_and_filter_blocks: false,
            digest_version: None,
            pool_filters: false,
            metadata: crate::table::MetadataBudget::new(u64::MAX),
        };
        let tables = Arc::new(TableCache::new(Arc::new(FsStorage), dir, ctx, 4));
        let opts = Options { paranoid_file_checks: paranoid, ..Options::default() };
        let env = JobEnv { storage: &FsStorage, dir, opts: &opts, tables: &tables, new_file_number: &|| 6 };
        check_output(&env, 5, summary)
    }

    #[test]
    fn a_table_that_reads_back_other_than_written_is_corruption_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let summary = written(dir.path());
        check(dir.path(), &summary, true).unwrap();
        let other = TableSummary { entries: summary.entries + 1, ..summary.clone() };
        match check(dir.path(), &other, false) {
            Err(Error::Corruption { file, reason, .. }) => {
                assert_eq!(file, table_path(dir.path(), 5));
                assert!(reason.contains("entry count"), "{reason}");
            }
            r => panic!("expected a corruption, got {r:?}"),
        }
        let other = TableSummary { file_size: summary.file_size + 10, ..summary };
        assert!(check(dir.path(), &other, false).is_err_and(|e| e.is_corruption()));
    }

    #[test]
    fn a_damaged_middle_block_passes_the_cheap_check_and_fails_the_paranoid_one() {
        let dir = tempfile::tempdir().unwrap();
        let summary = written(dir.path());
        let path = table_path(dir.path(), 5);
        let mut bytes = std::fs::read(&path).unwrap();
        // The data blocks fill the first part of the file; its middle is a middle block.
        let middle = summary.data_bytes as usize / 2;
        bytes[middle] ^= 0x5a;
        std::fs::write(&path, bytes).unwrap();
        check(dir.path(), &summary, false).unwrap();
        assert!(check(dir.path(), &summary, true).is_err_and(|e| e.is_corruption()));
    }
}
