//! Lookups at every snapshot and cursors in both directions, against the input.

use super::*;
use crate::cursor::{Cursor, VecCursor};
use crate::io::BlockKind;

#[test]
fn thousands_of_versioned_entries_read_back_by_get_at_every_snapshot() {
    for compression in [Compression::None, Compression::Lz4, Compression::zstd()] {
        let f = build(versioned_entries(1500), opts(512, compression));
        for cache_meta in [false, true] {
            let r = open(&f.path, ctx(1 << 20, cache_meta)).unwrap();
            assert!(r.properties().data_blocks > 20, "the test needs many blocks");
            check_gets(&r, &f.entries);
        }
    }
}

#[test]
fn many_versions_of_one_key_spanning_blocks_are_found_at_every_snapshot() {
    let mut entries = Vec::new();
    for uk in [&b"a"[..], b"m", b"z"] {
        for seq in (1..=40u64).rev() {
            let kind = if seq % 7 == 0 { ValueKind::Delete } else { ValueKind::Put };
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
        match r.get(&seek_key(uk.as_bytes(), MAX_SEQ), &Digest::of(uk.as_bytes()), &ro).unwrap() {
            TableGet::FilteredOut => filtered += 1,
            TableGet::NotFound => {}
            found => panic!("absent key {uk} found: {found:?}"),
        }
    }
    if !build_filter_parts(&opts(0, Compression::None).filter, &[Digest::of(b"x")]).is_empty() {
        assert!(filtered * 10 >= absent * 9, "a 10 bits/key filter let {} of {absent} through", absent - filtered);
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
        let got = r.get(&seek_key(uk.as_bytes(), MAX_SEQ), &Digest::of(uk.as_bytes()), &ro).unwrap();
        let d = io.snapshot().since(&before);
        if got == TableGet::FilteredOut {
            assert_eq!((d.reads_of(BlockKind::Index), d.reads_of(BlockKind::Data)), (0, 0));
        } else {
            assert_eq!(d.reads_of(BlockKind::Index), 1, "no cache: the index is read per lookup");
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
    let mut targets = vec![seek_key(b"", MAX_SEQ), seek_key(b"zzzz", 0), seek_key(b"user", 5)];
    for (k, _) in f.entries.iter().step_by(7) {
        let p = parse_internal_key(k).unwrap();
        targets.extend([k.clone(), seek_key(p.user_key, p.seq.saturating_sub(1)), seek_key(p.user_key, MAX_SEQ)]);
        let mut after = p.user_key.to_vec();
        after.push(b'!');
        targets.push(seek_key(&after, 1));
    }
    // A few steps mixing directions after each seek, across block boundaries.
    agrees_with_model(&mut *c, &mut m, &targets, &[true, true, false, false, false, true], "flat");
}

#[test]
fn a_cursor_reading_ahead_sees_the_same_entries_and_counts_the_same_blocks() {
    let f = build(versioned_entries(800), opts(300, Compression::Lz4));
    let mut counts = Vec::new();
    for readahead_size in [0, 1, 700, 64 << 10] {
        let c = ctx(0, false);
        let io = c.io.clone();
        let r = open(&f.path, c).unwrap();
        let before = io.snapshot();
        let ro = ReadOptions { fill_cache: false, readahead_size, ..ReadOptions::default() };
        let mut cursor = r.cursor(&ro);
        assert_eq!(walk_forward(&mut *cursor).unwrap(), f.entries, "read-ahead {readahead_size}");
        let after = io.snapshot();
        counts.push((
            after.reads_of(BlockKind::Data) - before.reads_of(BlockKind::Data),
            after.bytes_of(BlockKind::Data) - before.bytes_of(BlockKind::Data),
        ));
        // Backward and mixed steps (out of the window) still read the right blocks.
        assert_eq!(walk_backward(&mut *cursor).unwrap(), f.entries, "read-ahead {readahead_size}");
    }
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
    assert!(counts[0].0 > 10, "{counts:?}");
}

#[test]
fn an_empty_table_opens_and_has_nothing() {
    let f = build(Vec::new(), opts(4096, Compression::None));
    assert_eq!(f.summary.entries, 0);
    let r = open(&f.path, ctx(1 << 20, false)).unwrap();
    let got = r.get(&seek_key(b"k", MAX_SEQ), &Digest::of(b"k"), &ReadOptions::default()).unwrap();
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
        let mut u: Vec<&[u8]> = entries.iter().map(|(k, _)| crate::key::user_key(k)).collect();
        u.dedup();
        u.len() as u64
    };
    let f = build(entries.clone(), opts(1024, Compression::None));
    let s = &f.summary;
    assert_eq!(s.entries, entries.len() as u64);
    assert_eq!(s.smallest, entries[0].0);
    assert_eq!(s.largest, entries[entries.len() - 1].0);
    let seqs: Vec<SeqNo> = entries.iter().map(|(k, _)| parse_internal_key(k).unwrap().seq).collect();
    assert_eq!(s.smallest_seq, *seqs.iter().min().unwrap());
    assert_eq!(s.largest_seq, *seqs.iter().max().unwrap());
    assert_eq!(s.file_size, std::fs::metadata(&f.path).unwrap().len());

    let r = open(&f.path, ctx(0, false)).unwrap();
    let p = r.properties();
    assert_eq!(p.filter.digests, users, "one digest per distinct user key");
    assert_eq!(p.filter.kind, "Bloom");
    assert_eq!(p.filter.parts(), r.filter_part_count());
    assert_eq!(p.filter_bytes, p.filter.part_bytes.iter().sum::<u64>());
    assert_eq!((p.filter_bytes, p.index_bytes), (s.filter_bytes, s.index_bytes));
    // Pinned: the blocks, and index fences: 8 bytes per data block and the shared key
    // prefix of the index block.
    let fences = r.pinned_bytes() as u64 - p.filter_bytes - p.index_bytes;
    assert!((8 * p.data_blocks..=8 * p.data_blocks + 64).contains(&fences), "{fences}");
    assert_eq!(
        p.deletions,
        entries.iter().filter(|(k, _)| parse_internal_key(k).unwrap().kind == ValueKind::Delete).count() as u64
    );
    assert_eq!(r.summary().entries, s.entries);
}
