//! Tables end to end: build, open, look up, walk, count, and survive damage.

use super::*;
use crate::cursor::{Cursor, VecCursor};
use crate::error::Error;
use crate::filter::{build_filter_parts, Digest};
use crate::io::{BlockKind, FsStorage, Storage};
use crate::key::{compare_internal_keys, internal_key, parse_internal_key, seek_key, MAX_SEQ};
use crate::options::ReadOptions;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// `users` user keys, each with 1..=4 versions (newest first), about a fifth deletes.
fn versioned_entries(users: usize) -> Entries {
    let mut out = Vec::new();
    let mut seq = 10 * users as u64 + 100;
    for i in 0..users {
        let uk = format!("user{:06}", i * 3);
        for v in 0..1 + (i * 7) % 4 {
            let kind = if (i + v) % 5 == 1 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            let value = match kind {
                ValueKind::Put => format!("v{i}.{v}:").repeat(1 + i % 5).into_bytes(),
                ValueKind::Delete => Vec::new(),
            };
            out.push((
                internal_key(uk.as_bytes(), seq - (v as u64) * 3, kind),
                value,
            ));
        }
        seq -= 1;
    }
    out.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    out
}

/// The filter parts a table gets in these tests: the real filter's when it builds any;
/// until the filters land (the stub builds none), two opaque parts the stub accepts, so
/// the storage, caching and checking of parts is exercised either way.
fn parts_for_tests(spec: &crate::filter::FilterSpec, digests: &[Digest]) -> Vec<Vec<u8>> {
    let real = build_filter_parts(spec, digests);
    if !real.is_empty() {
        return real;
    }
    vec![vec![0xAB; 96], vec![0xCD; 40]]
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    entries: Entries,
    summary: TableSummary,
}

fn opts(block_size: usize, compression: Compression) -> TableOptions {
    TableOptions {
        block_size,
        restart_interval: 4,
        compression,
        filter: crate::filter::FilterSpec::Bloom { bits_per_key: 10.0 },
    }
}

fn build(entries: Entries, opts: TableOptions) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(dir.path(), 7);
    let mut b = TableBuilder::new(FsStorage.create(&path).unwrap(), opts)
        .with_filter_builder(parts_for_tests);
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.entries(), entries.len() as u64);
    let summary = b.finish().unwrap();
    Fixture {
        _dir: dir,
        path,
        entries,
        summary,
    }
}

fn ctx(cache_bytes: usize, cache_meta: bool) -> TableContext {
    TableContext {
        cache: Arc::new(crate::cache::BlockCache::new(cache_bytes, 0.5)),
        io: Arc::new(IoStats::default()),
        device: DeviceModel::None,
        cache_index_and_filter_blocks: cache_meta,
    }
}

fn open(path: &Path, ctx: TableContext) -> crate::error::Result<Arc<TableReader>> {
    Ok(Arc::new(TableReader::open(
        path.to_path_buf(),
        FsStorage.open_read(path)?,
        7,
        ctx,
    )?))
}

/// The model answer: newest version of `uk` with seq <= `snapshot`.
fn model_get(entries: &Entries, uk: &[u8], snapshot: SeqNo) -> Option<(SeqNo, ValueKind, Vec<u8>)> {
    entries.iter().find_map(|(k, v)| {
        let p = parse_internal_key(k).unwrap();
        (p.user_key == uk && p.seq <= snapshot).then(|| (p.seq, p.kind, v.clone()))
    })
}

fn walk_forward(c: &mut dyn Cursor) -> crate::error::Result<Entries> {
    let mut out = Vec::new();
    c.seek_to_first()?;
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.next()?;
    }
    Ok(out)
}

fn walk_backward(c: &mut dyn Cursor) -> crate::error::Result<Entries> {
    let mut out = Vec::new();
    c.seek_to_last()?;
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.prev()?;
    }
    out.reverse();
    Ok(out)
}

fn check_gets(reader: &TableReader, entries: &Entries) {
    let ro = ReadOptions::default();
    let mut users: Vec<Vec<u8>> = entries
        .iter()
        .map(|(k, _)| crate::key::user_key(k).to_vec())
        .collect();
    users.dedup();
    for uk in &users {
        let digest = Digest::of(uk);
        let seqs: Vec<SeqNo> = entries
            .iter()
            .filter_map(|(k, _)| {
                parse_internal_key(k)
                    .filter(|p| p.user_key == uk.as_slice())
                    .map(|p| p.seq)
            })
            .collect();
        let mut snapshots = vec![MAX_SEQ, 0];
        for s in seqs {
            snapshots.extend([s, s - 1, s + 1]);
        }
        for snap in snapshots {
            let got = reader.get(&seek_key(uk, snap), &digest, &ro).unwrap();
            let want = match model_get(entries, uk, snap) {
                Some((seq, kind, value)) => TableGet::Found { seq, kind, value },
                None => TableGet::NotFound,
            };
            assert_eq!(
                got,
                want,
                "user key {:?} at snapshot {snap}",
                String::from_utf8_lossy(uk)
            );
        }
    }
}

#[test]
fn thousands_of_versioned_entries_read_back_by_get_at_every_snapshot() {
    for compression in [Compression::None, Compression::Lz4] {
        let f = build(versioned_entries(1500), opts(512, compression));
        for cache_meta in [false, true] {
            let r = open(&f.path, ctx(1 << 20, cache_meta)).unwrap();
            assert!(
                r.properties().data_blocks > 20,
                "the test needs many blocks"
            );
            check_gets(&r, &f.entries);
        }
    }
}

#[test]
fn many_versions_of_one_key_spanning_blocks_are_found_at_every_snapshot() {
    let mut entries = Vec::new();
    for uk in [&b"a"[..], b"m", b"z"] {
        for seq in (1..=40u64).rev() {
            let kind = if seq % 7 == 0 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            entries.push((internal_key(uk, seq, kind), format!("{seq}").into_bytes()));
        }
    }
    let f = build(entries, opts(32, Compression::None));
    let r = open(&f.path, ctx(1 << 20, false)).unwrap();
    assert!(r.properties().data_blocks >= 30);
    check_gets(&r, &f.entries);
}

#[test]
fn absent_keys_are_not_found_and_filtered_out_only_by_a_real_filter() {
    let f = build(versioned_entries(2000), opts(4096, Compression::None));
    let r = open(&f.path, ctx(1 << 20, false)).unwrap();
    let ro = ReadOptions::default();
    let mut filtered = 0;
    let absent = 2000;
    for i in 0..absent {
        // Present keys are multiples of 3; these never are.
        let uk = format!("user{:06}", i * 3 + 1);
        match r
            .get(
                &seek_key(uk.as_bytes(), MAX_SEQ),
                &Digest::of(uk.as_bytes()),
                &ro,
            )
            .unwrap()
        {
            TableGet::FilteredOut => filtered += 1,
            TableGet::NotFound => {}
            found => panic!("absent key {uk} found: {found:?}"),
        }
    }
    let c = r.counters();
    assert_eq!(c.lookups, absent);
    assert_eq!(c.filter_negatives, filtered);
    assert_eq!(c.filter_false_positives, absent - filtered);
    assert!(
        c.filter_probes >= absent,
        "every lookup probes at least the first part"
    );
    if !build_filter_parts(&opts(0, Compression::None).filter, &[Digest::of(b"x")]).is_empty() {
        assert!(
            filtered * 10 >= absent * 9,
            "a 10 bits/key filter let {} of {absent} through",
            absent - filtered
        );
    }
}

#[test]
fn a_negative_filter_probe_ends_the_lookup_before_the_index_and_data() {
    let f = build(versioned_entries(500), opts(1024, Compression::None));
    let c = ctx(0, true);
    let io = c.io.clone();
    let r = open(&f.path, c).unwrap();
    let ro = ReadOptions::default();
    for i in 0..200 {
        let uk = format!("absent{i}");
        let before = io.snapshot();
        let got = r
            .get(
                &seek_key(uk.as_bytes(), MAX_SEQ),
                &Digest::of(uk.as_bytes()),
                &ro,
            )
            .unwrap();
        let d = io.snapshot().since(&before);
        if got == TableGet::FilteredOut {
            assert_eq!(
                (d.reads_of(BlockKind::Index), d.reads_of(BlockKind::Data)),
                (0, 0)
            );
        } else {
            assert_eq!(
                d.reads_of(BlockKind::Index),
                1,
                "no cache: the index is read per lookup"
            );
        }
        assert!(d.reads_of(BlockKind::Filter) >= 1);
    }
}

#[test]
fn cursor_walks_both_ways_and_seeks_like_a_sorted_vector() {
    let f = build(versioned_entries(800), opts(300, Compression::Lz4));
    let r = open(&f.path, ctx(1 << 20, true)).unwrap();
    let ro = ReadOptions::default();
    let mut c = r.cursor(&ro);
    assert!(!c.valid());
    assert_eq!(walk_forward(&mut *c).unwrap(), f.entries);
    assert_eq!(walk_backward(&mut *c).unwrap(), f.entries);

    let mut m = VecCursor::new(f.entries.clone());
    let mut targets = vec![
        seek_key(b"", MAX_SEQ),
        seek_key(b"zzzz", 0),
        seek_key(b"user", 5),
    ];
    for (k, _) in f.entries.iter().step_by(7) {
        let p = parse_internal_key(k).unwrap();
        targets.extend([
            k.clone(),
            seek_key(p.user_key, p.seq.saturating_sub(1)),
            seek_key(p.user_key, MAX_SEQ),
        ]);
        let mut after = p.user_key.to_vec();
        after.push(b'!');
        targets.push(seek_key(&after, 1));
    }
    for t in &targets {
        c.seek(t).unwrap();
        m.seek(t).unwrap();
        assert_eq!(
            (c.valid(), c.key(), c.value()),
            (m.valid(), m.key(), m.value()),
            "seek {t:?}"
        );
        // Then a few steps mixing directions, across block boundaries.
        for step in [true, true, false, false, false, true] {
            if !m.valid() {
                break;
            }
            if step {
                c.next().unwrap();
                m.next().unwrap();
            } else {
                c.prev().unwrap();
                m.prev().unwrap();
            }
            assert_eq!(
                (c.valid(), c.key()),
                (m.valid(), m.key()),
                "after seek {t:?}"
            );
        }
        c.seek_for_prev(t).unwrap();
        m.seek_for_prev(t).unwrap();
        assert_eq!(
            (c.valid(), c.key(), c.value()),
            (m.valid(), m.key(), m.value()),
            "seek_for_prev {t:?}"
        );
    }
}

#[test]
fn an_empty_table_opens_and_has_nothing() {
    let f = build(Vec::new(), opts(4096, Compression::None));
    assert_eq!(f.summary.entries, 0);
    let r = open(&f.path, ctx(1 << 20, false)).unwrap();
    let got = r
        .get(
            &seek_key(b"k", MAX_SEQ),
            &Digest::of(b"k"),
            &ReadOptions::default(),
        )
        .unwrap();
    assert!(!matches!(got, TableGet::Found { .. }));
    let mut c = r.cursor(&ReadOptions::default());
    assert!(walk_forward(&mut *c).unwrap().is_empty());
    assert!(walk_backward(&mut *c).unwrap().is_empty());
    c.seek_for_prev(&seek_key(b"k", 0)).unwrap();
    assert!(!c.valid());
}

#[test]
fn summary_and_properties_describe_the_table() {
    let entries = versioned_entries(300);
    let users = {
        let mut u: Vec<&[u8]> = entries
            .iter()
            .map(|(k, _)| crate::key::user_key(k))
            .collect();
        u.dedup();
        u.len() as u64
    };
    let f = build(entries.clone(), opts(1024, Compression::None));
    let s = &f.summary;
    assert_eq!(s.entries, entries.len() as u64);
    assert_eq!(s.smallest, entries[0].0);
    assert_eq!(s.largest, entries[entries.len() - 1].0);
    let seqs: Vec<SeqNo> = entries
        .iter()
        .map(|(k, _)| parse_internal_key(k).unwrap().seq)
        .collect();
    assert_eq!(s.smallest_seq, *seqs.iter().min().unwrap());
    assert_eq!(s.largest_seq, *seqs.iter().max().unwrap());
    assert_eq!(s.file_size, std::fs::metadata(&f.path).unwrap().len());

    let r = open(&f.path, ctx(0, false)).unwrap();
    let p = r.properties();
    assert_eq!(p.filter.digests, users, "one digest per distinct user key");
    assert_eq!(p.filter.kind, "Bloom");
    assert_eq!(p.filter.parts(), r.filter_part_count());
    assert_eq!(p.filter_bytes, p.filter.part_bytes.iter().sum::<u64>());
    assert_eq!(
        (p.filter_bytes, p.index_bytes),
        (s.filter_bytes, s.index_bytes)
    );
    assert_eq!(r.pinned_bytes() as u64, p.filter_bytes + p.index_bytes);
    assert_eq!(
        p.deletions,
        entries
            .iter()
            .filter(|(k, _)| parse_internal_key(k).unwrap().kind == ValueKind::Delete)
            .count() as u64
    );
    assert_eq!(r.summary().entries, s.entries);
}

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
        r.get(&seek_key(p.user_key, MAX_SEQ), &Digest::of(p.user_key), &ro)
            .unwrap();
    }
    let d = io.snapshot().since(&at_open);
    assert_eq!(
        (
            d.reads_of(BlockKind::Data),
            d.reads_of(BlockKind::Index),
            d.reads_of(BlockKind::Filter)
        ),
        (1, 0, 0)
    );
    let counters = cache.counters();
    assert_eq!((counters[0].misses, counters[0].hits), (1, 2));
    assert_eq!(
        counters[1],
        Default::default(),
        "pinned index never touches the cache"
    );
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
    assert_eq!(
        at_open.reads_of(BlockKind::Index) + at_open.reads_of(BlockKind::Filter),
        0
    );
    assert_eq!(r.pinned_bytes(), 0);

    let (k, _) = &f.entries[100];
    let p = parse_internal_key(k).unwrap();
    let ro = ReadOptions::default();
    for _ in 0..3 {
        assert!(matches!(
            r.get(&seek_key(p.user_key, MAX_SEQ), &Digest::of(p.user_key), &ro)
                .unwrap(),
            TableGet::Found { .. }
        ));
    }
    let d = io.snapshot().since(&at_open);
    assert_eq!(
        (
            d.reads_of(BlockKind::Data),
            d.reads_of(BlockKind::Index),
            d.reads_of(BlockKind::Filter)
        ),
        (1, 1, parts)
    );
    let counters = cache.counters();
    assert_eq!((counters[1].misses, counters[1].hits), (1, 2));
    assert_eq!((counters[2].misses, counters[2].hits), (parts, 2 * parts));
    assert_eq!(
        cache.pool_of((7, r.footer().index.offset)),
        Some(crate::cache::Priority::High)
    );
    let mut index = r.index_block().unwrap().cursor(compare_internal_keys);
    index.seek_to_first().unwrap();
    let data_handle = r.decode_index_value(&index).unwrap();
    assert_eq!(
        cache.pool_of((7, data_handle.offset)),
        None,
        "entry 100 is not in the first block"
    );
    let first = f.entries[0].0.clone();
    let fp = parse_internal_key(&first).unwrap();
    r.get(
        &seek_key(fp.user_key, MAX_SEQ),
        &Digest::of(fp.user_key),
        &ro,
    )
    .unwrap();
    assert_eq!(
        cache.pool_of((7, data_handle.offset)),
        Some(crate::cache::Priority::Low)
    );
}

#[test]
fn fill_cache_false_reads_data_blocks_without_keeping_them() {
    let f = build(versioned_entries(300), opts(1024, Compression::None));
    let c = ctx(1 << 20, false);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let r = open(&f.path, c).unwrap();
    let before = io.snapshot();
    let ro = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    let mut cur = r.cursor(&ro);
    assert_eq!(walk_forward(&mut *cur).unwrap(), f.entries);
    let blocks = r.properties().data_blocks;
    assert_eq!(
        io.snapshot().since(&before).reads_of(BlockKind::Data),
        blocks
    );
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
    let mut b = TableBuilder::new(
        FsStorage.create(&dir.path().join("x.sst")).unwrap(),
        TableOptions::default(),
    );
    b.add(&internal_key(b"b", 5, ValueKind::Put), b"").unwrap();
    for bad in [
        internal_key(b"a", 9, ValueKind::Put),
        internal_key(b"b", 5, ValueKind::Put),
        internal_key(b"b", 6, ValueKind::Put),
    ] {
        assert!(
            matches!(b.add(&bad, b""), Err(Error::InvalidArgument(_))),
            "{bad:?}"
        );
    }
    assert!(matches!(
        b.add(b"short", b""),
        Err(Error::InvalidArgument(_))
    ));
    b.add(&internal_key(b"b", 4, ValueKind::Delete), b"")
        .unwrap();
    assert_eq!(b.entries(), 2);
    assert!(b.estimated_size() > 0);
}

#[test]
fn table_cache_opens_each_file_once_and_evict_forgets_it() {
    let f = build(versioned_entries(50), opts(512, Compression::None));
    let dir = f.path.parent().unwrap();
    let c = ctx(1 << 20, false);
    let (io, cache) = (c.io.clone(), c.cache.clone());
    let tc = TableCache::new(Arc::new(FsStorage), dir, c);
    let a = tc.reader(7).unwrap();
    let opens = io.snapshot().reads_of(BlockKind::Other);
    let b = tc.reader(7).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(io.snapshot().reads_of(BlockKind::Other), opens);
    assert_eq!(tc.len(), 1);
    let mut cur = a.cursor(&ReadOptions::default());
    walk_forward(&mut *cur).unwrap();
    assert!(cache.usage() > 0);
    tc.evict(7);
    assert!(tc.is_empty());
    assert_eq!(cache.usage(), 0, "evict drops the file's cached blocks");
    assert_eq!(
        walk_forward(&mut *cur).unwrap().len(),
        f.entries.len(),
        "a held reader keeps working"
    );
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
                    let got = r
                        .get(
                            &seek_key(p.user_key, p.seq),
                            &Digest::of(p.user_key),
                            &ReadOptions::default(),
                        )
                        .unwrap();
                    assert_eq!(
                        got,
                        TableGet::Found {
                            seq: p.seq,
                            kind: p.kind,
                            value: v.clone()
                        }
                    );
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

// ---- damage ----------------------------------------------------------------------------

/// Open, look up every key, and walk both ways; the first error, if any.
fn use_table(
    path: &Path,
    entries: &Entries,
    cache_meta: bool,
    verify: bool,
) -> crate::error::Result<()> {
    let r = open(path, ctx(1 << 20, cache_meta))?;
    let ro = ReadOptions {
        verify_checksums: verify,
        ..ReadOptions::default()
    };
    for (k, _) in entries {
        let p = parse_internal_key(k).unwrap();
        r.get(&seek_key(p.user_key, MAX_SEQ), &Digest::of(p.user_key), &ro)?;
    }
    let mut c = r.cursor(&ro);
    let fwd = walk_forward(&mut *c)?;
    let bwd = walk_backward(&mut *c)?;
    // Without checksums, damage may go unnoticed, but the walks must still end.
    assert!(fwd.len() <= 10 * entries.len() && bwd.len() <= 10 * entries.len());
    Ok(())
}

fn small_table() -> Fixture {
    build(versioned_entries(24), opts(160, Compression::None))
}

fn assert_corruption_in(err: Error, path: &Path, what: &str) {
    match &err {
        Error::Corruption { file, .. } => assert_eq!(file, path, "{what}"),
        other => panic!("{what}: expected corruption, got {other}"),
    }
}

#[test]
fn a_flipped_byte_in_each_region_is_corruption_naming_the_file() {
    let f = small_table();
    let original = std::fs::read(&f.path).unwrap();
    let r = open(&f.path, ctx(0, false)).unwrap();
    let ft = *r.footer();
    let first_part = r.filter_part_handle(0);
    drop(r);
    let mut regions = vec![
        ("data", 3u64),
        ("index", ft.index.offset + 2),
        ("properties", ft.properties.offset + ft.properties.size / 2),
        ("metaindex", ft.metaindex.offset),
        ("filter index", ft.filter_index.offset),
        ("footer", original.len() as u64 - 30),
        ("magic", original.len() as u64 - 1),
    ];
    if let Some(h) = first_part {
        regions.push(("filter part", h.offset + h.size / 2));
    }
    for (what, at) in regions {
        let mut bad = original.clone();
        bad[at as usize] ^= 0x10;
        std::fs::write(&f.path, &bad).unwrap();
        for cache_meta in [false, true] {
            let err = use_table(&f.path, &f.entries, cache_meta, true).expect_err(what);
            assert_corruption_in(err, &f.path, what);
        }
    }
}

#[test]
fn a_truncated_table_is_corruption() {
    let f = small_table();
    let original = std::fs::read(&f.path).unwrap();
    for len in [
        0,
        1,
        FOOTER_LEN - 1,
        FOOTER_LEN,
        original.len() / 2,
        original.len() - 1,
    ] {
        std::fs::write(&f.path, &original[..len]).unwrap();
        let err = use_table(&f.path, &f.entries, false, true).expect_err("truncated");
        assert_corruption_in(err, &f.path, &format!("truncated to {len}"));
    }
}

#[test]
fn every_single_byte_flip_is_detected_and_nothing_panics() {
    let f = small_table();
    let original = std::fs::read(&f.path).unwrap();
    assert!(original.len() < 8192, "keep this test quick");
    for at in 0..original.len() {
        let mut bad = original.clone();
        bad[at] ^= 0x01;
        std::fs::write(&f.path, &bad).unwrap();
        // Checksums everywhere: every flip is found by opening and using the table.
        let err = use_table(&f.path, &f.entries, false, true)
            .expect_err(&format!("flip at {at} not detected"));
        assert_corruption_in(err, &f.path, &format!("flip at {at}"));
        // Without data block checksums the decoders see raw damage: no panic, no hang.
        let _ = use_table(&f.path, &f.entries, true, false);
        let mut worse = original.clone();
        worse[at] ^= 0xFF;
        std::fs::write(&f.path, &worse).unwrap();
        let _ = use_table(&f.path, &f.entries, true, false);
    }
}
