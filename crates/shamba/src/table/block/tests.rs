use super::*;
use crate::cursor::{Cursor, VecCursor};
use crate::key::{compare_internal_keys, internal_key, seek_key, ValueKind};
use crate::table::block_builder::BlockBuilder;

/// `n` user keys with 1..=3 versions each (newest first), some of them deletes.
pub(crate) fn sample_entries(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..n {
        let uk = format!("key{:05}", i * 7);
        let versions = 1 + i % 3;
        for v in 0..versions {
            let seq = (1000 - i * 3 - v) as u64;
            let kind = if (i + v) % 5 == 0 { ValueKind::Delete } else { ValueKind::Put };
            let value = if kind == ValueKind::Put { format!("value-{i}-{v}").repeat(1 + i % 4) } else { String::new() };
            out.push((internal_key(uk.as_bytes(), seq, kind), value.into_bytes()));
        }
    }
    out
}

fn build(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Block {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    Block::new(b.finish().into()).unwrap()
}

/// Targets around every entry: itself, just after it, and just before the first.
fn targets(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    let mut t = vec![seek_key(b"", crate::key::MAX_SEQ), seek_key(b"zzz", 0), b"key".to_vec()];
    for (k, _) in entries {
        let p = crate::key::parse_internal_key(k).unwrap();
        t.push(k.clone());
        t.push(seek_key(p.user_key, p.seq));
        t.push(seek_key(p.user_key, p.seq.saturating_sub(1)));
        let mut longer = p.user_key.to_vec();
        longer.push(0);
        t.push(seek_key(&longer, 5));
    }
    t
}

fn same_position(block: &BlockCursor, model: &VecCursor, what: &str) {
    assert_eq!(block.valid(), model.valid(), "{what}: validity");
    if model.valid() {
        assert_eq!(block.key(), model.key(), "{what}: key");
        assert_eq!(block.value(), model.value(), "{what}: value");
    }
}

#[test]
fn every_seek_and_step_matches_a_sorted_vector_at_every_restart_interval() {
    for n in [0usize, 1, 2, 5, 16, 17, 40] {
        let entries = sample_entries(n);
        for interval in [1usize, 2, 3, 16, 1000] {
            let block = build(&entries, interval);
            let mut c = block.cursor(compare_internal_keys);
            let mut m = VecCursor::new(entries.clone());
            let ctx = format!("n={n} interval={interval}");

            c.seek_to_first().unwrap();
            m.seek_to_first().unwrap();
            same_position(&c, &m, &format!("{ctx} first"));
            c.seek_to_last().unwrap();
            m.seek_to_last().unwrap();
            same_position(&c, &m, &format!("{ctx} last"));

            for t in targets(&entries) {
                c.seek(&t).unwrap();
                m.seek(&t).unwrap();
                same_position(&c, &m, &format!("{ctx} seek {t:?}"));
                c.seek_for_prev(&t).unwrap();
                m.seek_for_prev(&t).unwrap();
                same_position(&c, &m, &format!("{ctx} seek_for_prev {t:?}"));
            }

            // From every position, one step each way.
            for (k, _) in &entries {
                c.seek(k).unwrap();
                m.seek(k).unwrap();
                c.prev().unwrap();
                m.prev().unwrap();
                same_position(&c, &m, &format!("{ctx} prev from {k:?}"));
                c.seek(k).unwrap();
                m.seek(k).unwrap();
                c.next().unwrap();
                m.next().unwrap();
                same_position(&c, &m, &format!("{ctx} next from {k:?}"));
            }
        }
    }
}

#[test]
fn full_walks_both_ways_return_the_input() {
    let entries = sample_entries(50);
    let block = build(&entries, 4);
    let mut c = block.cursor(compare_internal_keys);
    let mut seen = Vec::new();
    c.seek_to_first().unwrap();
    while c.valid() {
        seen.push((c.key().to_vec(), c.value().to_vec()));
        c.next().unwrap();
    }
    assert_eq!(seen, entries);

    let mut back = Vec::new();
    c.seek_to_last().unwrap();
    while c.valid() {
        back.push((c.key().to_vec(), c.value().to_vec()));
        c.prev().unwrap();
    }
    back.reverse();
    assert_eq!(back, entries);
}

#[test]
fn restart_entries_store_whole_keys_and_later_entries_share_prefixes() {
    let entries = sample_entries(10);
    let mut b = BlockBuilder::new(4);
    for (k, v) in &entries {
        b.add(k, v);
    }
    let data = b.finish();
    let block = Block::new(data.into()).unwrap();
    assert_eq!(block.num_restarts, entries.len().div_ceil(4));
    for i in 0..block.num_restarts {
        assert_eq!(block.restart_key(i).unwrap(), entries[i * 4].0.as_slice());
    }
    let shared = block.entry_at(block.entry_at(0).unwrap().end).unwrap().shared;
    assert!(shared > 0, "the second entry must share a prefix with the first");
}

#[test]
fn bytewise_blocks_seek_by_plain_byte_order() {
    let mut b = BlockBuilder::new(2);
    for k in ["a", "ab", "b", "ba", "c"] {
        b.add(k.as_bytes(), k.to_uppercase().as_bytes());
    }
    let mut c = Block::new(b.finish().into()).unwrap().cursor(bytewise);
    c.seek(b"aa").unwrap();
    assert_eq!(c.key(), b"ab");
    assert_eq!(c.value(), b"AB");
    c.seek_for_prev(b"bz").unwrap();
    assert_eq!(c.key(), b"ba");
    c.seek(b"d").unwrap();
    assert!(!c.valid());
}

#[test]
fn malformed_restart_counts_are_rejected() {
    assert!(Block::new(Arc::from(&[1u8, 2][..])).is_err());
    assert!(Block::new(Arc::from(&0u32.to_le_bytes()[..])).is_err(), "zero restarts");
    assert!(Block::new(Arc::from(&5u32.to_le_bytes()[..])).is_err(), "restarts past the start");
    let mut huge = vec![0u8; 8];
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(Block::new(huge.into()).is_err());
}

/// Run every operation on a possibly damaged block; it must neither panic nor loop.
fn exercise(data: Vec<u8>, probes: &[Vec<u8>]) {
    let Ok(block) = Block::new(data.into()) else {
        return;
    };
    // A batch's hints read the restart array and points: damaged ones are skipped.
    block.prefetch_restart_array();
    block.prefetch_restart_heads();
    let mut c = block.cursor(compare_internal_keys);
    let mut steps = 0;
    if c.seek_to_first().is_ok() {
        while c.valid() && c.next().is_ok() {
            steps += 1;
            assert!(steps < 10_000, "forward walk does not end");
        }
    }
    if c.seek_to_last().is_ok() {
        while c.valid() && c.prev().is_ok() {
            steps += 1;
            assert!(steps < 20_000, "backward walk does not end");
        }
    }
    for t in probes {
        let _ = c.seek(t);
        let _ = c.seek_for_prev(t);
    }
}

#[test]
fn damaged_blocks_never_panic_or_loop() {
    let entries = sample_entries(12);
    let mut b = BlockBuilder::new(3);
    for (k, v) in &entries {
        b.add(k, v);
    }
    let data = b.finish();
    let probes = targets(&entries[..4]);
    for i in 0..data.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut bad = data.clone();
            bad[i] ^= flip;
            exercise(bad, &probes);
        }
    }
    for len in 0..data.len() {
        exercise(data[..len].to_vec(), &probes);
    }
}
