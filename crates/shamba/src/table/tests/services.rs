//! What a table reads and where it keeps it: I/O counts, cache use, table cache, dump.

use super::*;
use crate::error::Error;
use crate::io::BlockKind;

#[test]
fn pinned_index_and_filters_are_read_once_at_open() {
    let f = build(versioned_entries(600), opts(1024, Compression::None));
    let c = ctx(1 << 20, false);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let r = open(&f.path, c).unwrap();
    let parts = r.filter_part_count() as u64;
    let at_open = io.snapshot();
    // Footer, properties, metaindex, filter index.
    assert_eq!(at_open.reads_of(BlockKind::Other), 4);
    assert_eq!(at_open.reads_of(BlockKind::Index), 1);
    assert_eq!(at_open.reads_of(BlockKind::Filter), parts);
    assert!(at_open.bytes_of(BlockKind::Index) >= r.properties().index_bytes);

    let (k, _) = &f.entries[100];
    let p = parse_internal_key(k).unwrap();
    let ro = ReadOptions::default();
    for _ in 0..3 {
        r.get(&seek_key(p.user_key, MAX_SEQ), &Digest::of(p.user_key), &ro).unwrap();
    }
    let d = io.snapshot().since(&at_open);
    assert_eq!((d.reads_of(BlockKind::Data), d.reads_of(BlockKind::Index), d.reads_of(BlockKind::Filter)), (1, 0, 0));
    let counters = cache.counters();
    assert_eq!((counters[0].misses, counters[0].hits), (1, 2));
    assert_eq!(counters[1], Default::default(), "pinned index never touches the cache");
}

#[test]
fn cached_index_and_filters_are_fetched_through_the_cache_at_high_priority() {
    let f = build(versioned_entries(600), opts(1024, Compression::None));
    let c = ctx(1 << 20, true);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let r = open(&f.path, c).unwrap();
    let parts = r.filter_part_count() as u64;
    let at_open = io.snapshot();
    assert_eq!(at_open.reads_of(BlockKind::Other), 4);
    assert_eq!(at_open.reads_of(BlockKind::Index) + at_open.reads_of(BlockKind::Filter), 0);
    assert_eq!(r.pinned_bytes(), 0);

    let (k, _) = &f.entries[100];
    let p = parse_internal_key(k).unwrap();
    let ro = ReadOptions::default();
    for _ in 0..3 {
        assert!(matches!(
            r.get(&seek_key(p.user_key, MAX_SEQ), &Digest::of(p.user_key), &ro).unwrap(),
            TableGet::Found { .. }
        ));
    }
    let d = io.snapshot().since(&at_open);
    assert_eq!(
        (d.reads_of(BlockKind::Data), d.reads_of(BlockKind::Index), d.reads_of(BlockKind::Filter)),
        (1, 1, parts)
    );
    let counters = cache.counters();
    assert_eq!((counters[1].misses, counters[1].hits), (1, 2));
    assert_eq!((counters[2].misses, counters[2].hits), (parts, 2 * parts));
    assert_eq!(cache.pool_of((7, r.footer().index.offset)), Some(crate::cache::Priority::High));
    let (block, offset) = r.index_block_of(0).unwrap();
    let mut index = block.cursor(compare_internal_keys);
    index.seek_to_first().unwrap();
    let data_handle = r.decode_index_value(index.value(), offset).unwrap();
    assert_eq!(cache.pool_of((7, data_handle.offset)), None, "entry 100 is not in the first block");
    let first = f.entries[0].0.clone();
    let fp = parse_internal_key(&first).unwrap();
    r.get(&seek_key(fp.user_key, MAX_SEQ), &Digest::of(fp.user_key), &ro).unwrap();
    assert_eq!(cache.pool_of((7, data_handle.offset)), Some(crate::cache::Priority::Low));
}

#[test]
fn fill_cache_false_reads_data_blocks_without_keeping_them() {
    let f = build(versioned_entries(300), opts(1024, Compression::None));
    let c = ctx(1 << 20, false);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let r = open(&f.path, c).unwrap();
    let before = io.snapshot();
    let ro = ReadOptions { fill_cache: false, ..ReadOptions::default() };
    let mut cur = r.cursor(&ro);
    assert_eq!(walk_forward(&mut *cur).unwrap(), f.entries);
    let blocks = r.properties().data_blocks;
    assert_eq!(io.snapshot().since(&before).reads_of(BlockKind::Data), blocks);
    assert_eq!(cache.usage(), 0);
    // With the cache filled, a second walk reads nothing.
    let mut cur = r.cursor(&ReadOptions::default());
    walk_forward(&mut *cur).unwrap();
    let mid = io.snapshot();
    walk_forward(&mut *cur).unwrap();
    assert_eq!(io.snapshot().since(&mid).total_reads(), 0);
}

#[test]
fn the_builder_rejects_unordered_duplicate_and_malformed_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = TableBuilder::new(FsStorage.create(&dir.path().join("x.sst")).unwrap(), TableOptions::default());
    b.add(&internal_key(b"b", 5, ValueKind::Put), b"").unwrap();
    for bad in [
        internal_key(b"a", 9, ValueKind::Put),
        internal_key(b"b", 5, ValueKind::Put),
        internal_key(b"b", 6, ValueKind::Put),
    ] {
        assert!(matches!(b.add(&bad, b""), Err(Error::InvalidArgument(_))), "{bad:?}");
    }
    assert!(matches!(b.add(b"short", b""), Err(Error::InvalidArgument(_))));
    b.add(&internal_key(b"b", 4, ValueKind::Delete), b"").unwrap();
    assert_eq!(b.entries(), 2);
    assert!(b.estimated_size() > 0);
}

#[test]
fn table_cache_opens_each_file_once_and_evict_forgets_it() {
    let f = build(versioned_entries(50), opts(512, Compression::None));
    let dir = f.path.parent().unwrap();
    let c = ctx(1 << 20, false);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let tc = TableCache::new(Arc::new(FsStorage), dir, c, 4);
    let a = tc.reader(7).unwrap();
    let opens = io.snapshot().reads_of(BlockKind::Other);
    let b = tc.reader(7).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(io.snapshot().reads_of(BlockKind::Other), opens);
    assert_eq!(tc.len(), 1);
    assert_eq!(tc.open_files(), (1, 4));
    assert!(tc.pinned_bytes() > 0 && tc.pinned_bytes() == a.pinned_bytes() as u64);
    let mut cur = a.cursor(&ReadOptions::default());
    walk_forward(&mut *cur).unwrap();
    assert!(cache.usage() > 0);
    tc.evict_all(&[7]);
    assert!(tc.is_empty());
    assert_eq!(tc.open_files(), (0, 4), "evict closes the file");
    assert_eq!(tc.pinned_bytes(), 0);
    assert_eq!(cache.usage(), 0, "evict drops the file's cached blocks");
    assert_eq!(walk_forward(&mut *cur).unwrap().len(), f.entries.len(), "a held reader keeps working");
    assert!(matches!(tc.reader(8), Err(Error::Io(_))));
}

#[test]
fn readers_are_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<TableReader>();
    send_sync::<TableCache>();
    let f = build(versioned_entries(400), opts(512, Compression::None));
    let r = open(&f.path, ctx(64 << 10, true)).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (r, entries) = (&r, &f.entries);
            s.spawn(move || {
                for (k, v) in entries.iter().skip(t).step_by(4) {
                    let p = parse_internal_key(k).unwrap();
                    let got =
                        r.get(&seek_key(p.user_key, p.seq), &Digest::of(p.user_key), &ReadOptions::default()).unwrap();
                    assert_eq!(got, TableGet::Found { seq: p.seq, kind: p.kind, value: v.clone() });
                }
            });
        }
    });
}

#[test]
fn dump_shows_every_part() {
    let f = build(versioned_entries(40), opts(256, Compression::Lz4));
    let out = dump_table(&FsStorage, &f.path, 5).unwrap();
    for needle in [
        "footer: format version 1",
        "properties:",
        "metaindex: 0 entries",
        "index:",
        "filter parts:",
        "data (first 5 entries):",
        "'user000000' @",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert_eq!(out.lines().filter(|l| l.contains(" => ")).count(), 5);
    assert!(out.contains("entries in all"));
}
