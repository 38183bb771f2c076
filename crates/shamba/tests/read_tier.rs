//! Calls that must not wait: reads with `ReadTier::CacheOnly` answer `WouldBlock` where
//! they would read a table file, and succeed from memory; writes with `no_slowdown` answer
//! it where they would switch the memtable (or wait out a stall), having written nothing.

use shamba::{Db, Options, ReadOptions, ReadTier, Readable, WriteBatch, WriteOptions};
use std::time::{Duration, Instant};

fn cache_only() -> ReadOptions {
    ReadOptions { read_tier: ReadTier::CacheOnly, ..ReadOptions::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

/// A database whose keys `0..1000` are in a table and were never read since it was opened:
/// no block of it is cached.
fn reopened_with_a_table(dir: &std::path::Path) -> Db {
    let db = Db::open(dir, Options::default()).unwrap();
    for i in 0..1000 {
        db.put(key(i), b"value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    Db::open(dir, Options::default()).unwrap()
}

#[test]
fn a_cache_only_get_that_needs_a_block_would_block_then_a_normal_get_fills_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = reopened_with_a_table(dir.path());
    let refused = db.get_opt(key(7), &cache_only()).unwrap_err();
    assert!(refused.is_would_block(), "{refused}");
    assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&b"value"[..]));
    // The block holding key 7 is cached now, and so are its neighbours in it.
    assert_eq!(db.get_opt(key(7), &cache_only()).unwrap().as_deref(), Some(&b"value"[..]));
    assert_eq!(db.get_opt(key(8), &cache_only()).unwrap().as_deref(), Some(&b"value"[..]));
    // A key only in the memtable needs no file at all.
    db.put(b"fresh", b"1").unwrap();
    assert_eq!(db.get_opt(b"fresh", &cache_only()).unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_cache_only_multi_get_and_iterator_would_block_on_uncached_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let db = reopened_with_a_table(dir.path());
    let answers = db.multi_get_opt(&[key(1), key(999)], &cache_only());
    assert!(answers.iter().all(|a| a.as_ref().is_err_and(|e| e.is_would_block())), "{answers:?}");
    let first = db.iter_opt(&cache_only()).next().unwrap();
    assert!(first.is_err_and(|e| e.is_would_block()));
    // Read normally once: then the same calls are answered from the cache.
    assert_eq!(db.iter().count(), 1000);
    let answers = db.multi_get_opt(&[key(1), key(999)], &cache_only());
    assert!(answers.iter().all(|a| matches!(a, Ok(Some(v)) if v == b"value")), "{answers:?}");
    assert_eq!(db.iter_opt(&cache_only()).filter(Result::is_ok).count(), 1000);
}

#[test]
fn a_write_with_no_slowdown_that_would_switch_the_memtable_returns_at_once_having_written_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { write_buffer_size: 4096, ..Options::default() }).unwrap();
    // One write over the memtable's size: the next write must switch it first.
    db.put(b"big", vec![7u8; 8192]).unwrap();
    let no_slowdown = WriteOptions { no_slowdown: true, ..WriteOptions::default() };
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    let started = Instant::now();
    let refused = db.write_opt(batch, &no_slowdown).unwrap_err();
    assert!(refused.is_would_block(), "{refused}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(db.get(b"k").unwrap(), None, "the refused write did nothing");
    // Without the option the write switches the memtable and goes in.
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v");
    db.write_opt(batch, &WriteOptions::default()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    // The new memtable has room: a write that must not wait goes in at once.
    let mut batch = WriteBatch::new();
    batch.put(b"k2", b"v");
    db.write_opt(batch, &no_slowdown).unwrap();
}
