//! The small database every fuzz target starts from, built once per process in memory: its
//! tables carry every filter kind and role (blocked Bloom, standard Bloom modules, Ribbon,
//! elastic units), flat and partitioned indexes, raw and LZ4 blocks; its manifest has a
//! few edits and its WAL a few unflushed batches.

use super::mem_storage::MemStorage;
use crate::db::{Db, WriteBatch};
use crate::error::Result;
use crate::filter::{BloomLayout, BuildPolicy, FilterLayout, ModuleSizes, Probing};
use crate::options::{Compression, Options};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Where the base database lives in its memory storage.
pub(super) const DIR: &str = "/fuzz-db";

/// Every file of the base database, in path order.
pub(super) fn files() -> &'static [(PathBuf, Vec<u8>)] {
    static FILES: OnceLock<Vec<(PathBuf, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| build().unwrap_or_default())
}

/// The bytes of the base database's files whose names end with `suffix`.
pub(super) fn files_ending(suffix: &str) -> impl Iterator<Item = &'static [u8]> + '_ {
    files().iter().filter(move |(p, _)| p.to_string_lossy().ends_with(suffix)).map(|(_, b)| b.as_slice())
}

/// The base database's keys: every table and the WAL hold some of them.
pub(super) fn key(i: usize) -> Vec<u8> {
    format!("key{:05}", i * 7).into_bytes()
}

/// Options of the base database: small blocks and partitions, so each table has several.
pub(super) fn options(storage: Arc<MemStorage>) -> Options {
    Options {
        storage,
        block_size: 256,
        metadata_partition_size: 128,
        max_open_files: 64,
        // Keep the flushed tables in L0: one table per filter kind.
        level0_compaction_trigger: 8,
        ..Options::default()
    }
}

/// One session per table: open with its options, write, flush, close.
fn build() -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let storage = Arc::new(MemStorage::default());
    let bloom = BuildPolicy::uniform(10.0);
    let sessions = [
        (BuildPolicy { ..bloom.clone() }, false, Compression::Lz4),
        (
            BuildPolicy {
                layout: FilterLayout::Modules(ModuleSizes::Equal { count: 3 }),
                bloom_layout: BloomLayout::Standard(Probing::DoubleHashing),
                ..bloom.clone()
            },
            true,
            Compression::None,
        ),
        (BuildPolicy { ribbon_from_level: Some(0), ..bloom.clone() }, false, Compression::None),
        (BuildPolicy { layout: FilterLayout::Units { count: 4 }, ..bloom.clone() }, true, Compression::Lz4),
    ];
    let dir = Path::new(DIR);
    for (s, (filter_policy, partitioned, compression)) in sessions.into_iter().enumerate() {
        let opts = Options {
            filter_policy,
            partition_index_and_filters: partitioned,
            compression,
            ..options(storage.clone())
        };
        let db = Db::open(dir, opts)?;
        for i in (s..120).step_by(2) {
            let value = format!("value {i} of session {s} {}", "x".repeat(i % 37));
            db.put(key(i), value)?;
        }
        db.delete(key(s + 1))?;
        db.flush()?;
        db.close()?;
    }
    // Batches left in the WAL, one of them split over fragments, one across keyspaces
    // (the manifest records the keyspace's creation).
    let db = Db::open(dir, options(storage.clone()))?;
    let ks = db.keyspace("ks")?;
    let mut batch = WriteBatch::new();
    batch.put(key(3), b"from the log").delete(key(4));
    batch.put_in(&ks, key(6), b"in a keyspace").delete_range_in(&ks, key(0)..key(2));
    db.write(batch)?;
    drop(ks);
    db.put(key(200), vec![b'w'; 40 * 1024])?;
    db.put(key(5), b"last")?;
    db.close()?;
    Ok(storage.snapshot())
}
