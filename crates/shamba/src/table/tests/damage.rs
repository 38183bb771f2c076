//! Damaged files: every check ends in `Error::Corruption` naming the file, never a panic.

use super::*;
use crate::error::Error;

/// Whether [`use_table`] checks the blocks' checksums.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checksums {
    Verify,
    Skip,
}

/// Open, look up every key, and walk both ways; the first error, if any.
fn use_table(path: &Path, entries: &Entries, cache_meta: bool, checksums: Checksums) -> crate::error::Result<()> {
    let r = open(path, ctx(1 << 20, cache_meta))?;
    let ro = ReadOptions { verify_checksums: checksums == Checksums::Verify, ..ReadOptions::default() };
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

/// A partitioned table small enough to flip every byte of, with several partitions.
fn small_partitioned_table() -> Fixture {
    let f = build(
        versioned_entries(24),
        TableOptions { partition_index_and_filters: true, metadata_partition_size: 96, ..opts(160, Compression::None) },
    );
    let r = open(&f.path, ctx(0, false)).unwrap();
    assert!(r.partition_count() >= 3, "{} partitions", r.partition_count());
    f
}

fn assert_corruption_in(err: Error, path: &Path, what: &str) {
    match &err {
        Error::Corruption { file, .. } => assert_eq!(file, path, "{what}"),
        other => panic!("{what}: expected corruption, got {other}"),
    }
}

/// A byte in the middle of each region of the file, by name.
fn regions(path: &Path, len: u64) -> Vec<(&'static str, u64)> {
    let r = open(path, ctx(0, false)).unwrap();
    let ft = *r.footer();
    let mut regions = vec![
        ("data", 3u64),
        ("index (top level when partitioned)", ft.index.offset + 2),
        ("properties", ft.properties.offset + ft.properties.size / 2),
        ("metaindex", ft.metaindex.offset),
        ("filter index", ft.filter_index.offset),
        ("footer", len - 30),
        ("magic", len - 1),
    ];
    for (what, p) in [("first partition", 0), ("last partition", r.partitions_len() - 1)] {
        if let Some(h) = r.filter_handles_of(p).first() {
            regions.push((what, h.offset + h.size / 2));
        }
        if r.is_partitioned() {
            let h = r.index_handle_of(p).unwrap();
            regions.push((what, h.offset + h.size / 2));
        }
    }
    regions
}

#[test]
fn a_flipped_byte_in_each_region_is_corruption_naming_the_file() {
    for f in [small_table(), small_partitioned_table()] {
        let original = std::fs::read(&f.path).unwrap();
        for (what, at) in regions(&f.path, original.len() as u64) {
            let mut bad = original.clone();
            bad[at as usize] ^= 0x10;
            std::fs::write(&f.path, &bad).unwrap();
            for cache_meta in [false, true] {
                let err = use_table(&f.path, &f.entries, cache_meta, Checksums::Verify).expect_err(what);
                assert_corruption_in(err, &f.path, what);
            }
        }
    }
}

#[test]
fn a_truncated_table_is_corruption() {
    let f = small_table();
    let original = std::fs::read(&f.path).unwrap();
    for len in [0, 1, FOOTER_LEN - 1, FOOTER_LEN, original.len() / 2, original.len() - 1] {
        std::fs::write(&f.path, &original[..len]).unwrap();
        let err = use_table(&f.path, &f.entries, false, Checksums::Verify).expect_err("truncated");
        assert_corruption_in(err, &f.path, &format!("truncated to {len}"));
    }
}

#[test]
fn every_single_byte_flip_is_detected_and_nothing_panics() {
    every_flip_is_detected(small_table());
}

#[test]
fn every_single_byte_flip_of_a_partitioned_table_is_detected_and_nothing_panics() {
    every_flip_is_detected(small_partitioned_table());
}

fn every_flip_is_detected(f: Fixture) {
    let original = std::fs::read(&f.path).unwrap();
    assert!(original.len() < 8192, "keep this test quick");
    for at in 0..original.len() {
        let mut bad = original.clone();
        bad[at] ^= 0x01;
        std::fs::write(&f.path, &bad).unwrap();
        // Checksums everywhere: every flip is found by opening and using the table.
        let err =
            use_table(&f.path, &f.entries, false, Checksums::Verify).expect_err(&format!("flip at {at} not detected"));
        assert_corruption_in(err, &f.path, &format!("flip at {at}"));
        // Without data block checksums the decoders see raw damage: no panic, no hang.
        let _ = use_table(&f.path, &f.entries, true, Checksums::Skip);
        let mut worse = original.clone();
        worse[at] ^= 0xFF;
        std::fs::write(&f.path, &worse).unwrap();
        let _ = use_table(&f.path, &f.entries, true, Checksums::Skip);
    }
}
