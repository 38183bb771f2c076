//! The first filter modules' pool: bounded by its share, out of reach of the other pools'
//! traffic, and absent (first modules in the high pool, as before) at a share of 0.

use super::shard::ENTRY_OVERHEAD;
use super::*;
use proptest::prelude::*;

/// A block whose charge is exactly `charge` bytes.
fn block(charge: usize) -> Arc<[u8]> {
    vec![3u8; charge - ENTRY_OVERHEAD].into()
}

const C: usize = 1000;

/// Ten first modules, then a scan's worth of data blocks and a burst of index blocks,
/// each many times the cache; which first modules are still resident.
fn first_modules_left_after_a_flood(first_ratio: f64) -> usize {
    // One shard of 40 blocks: 10 may be first modules, 0.5 of the rest high priority.
    let c = BlockCache::with_pools(40 * C, 0.5, first_ratio, 1);
    for t in 0..10 {
        c.insert((t, 0), block(C), BlockKind::Filter, Priority::First);
    }
    for off in 0..400 {
        c.insert((100, off), block(C), BlockKind::Data, Priority::Low);
        c.insert((101, off), block(C), BlockKind::Filter, Priority::Low);
        if off % 2 == 0 {
            c.insert((102, off), block(C), BlockKind::Index, Priority::High);
        }
        assert!(c.usage() <= c.capacity());
    }
    (0..10).filter(|&t| c.peek((t, 0)).is_some()).count()
}

#[test]
fn first_modules_survive_a_flood_of_data_index_and_later_module_blocks() {
    assert_eq!(first_modules_left_after_a_flood(0.25), 10);
    // The same flood without a pool of their own: the index burst pushes them out of the
    // high pool and the scan out of the low one.
    assert_eq!(first_modules_left_after_a_flood(0.0), 0);
}

#[test]
fn the_first_pool_holds_at_most_its_share_and_its_overflow_gets_a_second_round() {
    let c = BlockCache::with_pools(10 * C, 0.5, 0.3, 1);
    assert_eq!(c.first_pool_capacity(), 3 * C);
    // The high pool's share is of the capacity outside the first pool's.
    assert_eq!(c.high_pool_capacity(), (7 * C) / 2);
    for t in 0..5 {
        c.insert((t, 0), block(C), BlockKind::Filter, Priority::First);
        assert!(c.first_pool_usage() <= 3 * C);
    }
    assert_eq!(c.first_pool_usage(), 3 * C);
    // The two coldest went to the high pool's head, not out of the cache.
    assert_eq!(c.pool_of((0, 0)), Some(Priority::High));
    assert_eq!(c.pool_of((1, 0)), Some(Priority::High));
    assert_eq!(c.pool_of((4, 0)), Some(Priority::First));
    // Used again, a demoted first module returns to its pool, pushing out the coldest.
    assert!(c.get((0, 0), BlockKind::Filter).is_some());
    assert_eq!(c.pool_of((0, 0)), Some(Priority::First));
    assert_eq!(c.pool_of((2, 0)), Some(Priority::High));
    assert_eq!(c.first_pool_usage(), 3 * C);
}

#[test]
fn space_the_first_pool_does_not_hold_serves_the_other_pools() {
    let c = BlockCache::with_pools(10 * C, 0.5, 0.5, 1);
    for off in 0..10 {
        c.insert((1, off), block(C), BlockKind::Data, Priority::Low);
    }
    assert_eq!(c.usage(), 10 * C, "an empty first pool reserves nothing");
    c.insert((2, 0), block(C), BlockKind::Filter, Priority::First);
    assert_eq!(c.usage(), 10 * C);
    assert_eq!(c.pool_of((1, 0)), None, "the coldest data block made room");
    assert_eq!(c.first_pool_usage(), C);
}

#[derive(Debug, Clone)]
enum Op {
    Insert { file: u64, block: u64, len: usize, kind: usize, pool: u8 },
    Get { file: u64, block: u64 },
    EraseFile(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..4u64, 0..64u64, 0..6000usize, 0..4usize, 0..3u8)
            .prop_map(|(file, block, len, kind, pool)| Op::Insert { file, block, len, kind, pool }),
        3 => (0..4u64, 0..64u64).prop_map(|(file, block)| Op::Get { file, block }),
        1 => (0..4u64).prop_map(Op::EraseFile),
    ]
}

fn priority(pool: u8) -> Priority {
    match pool {
        0 => Priority::First,
        1 => Priority::High,
        _ => Priority::Low,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_pool_ever_holds_more_than_its_share(
        capacity in 0usize..60_000,
        ratio in 0.0f64..=1.0,
        first_ratio in 0.0f64..=1.0,
        shards in 1usize..5,
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let c = BlockCache::with_pools(capacity, ratio, first_ratio, shards);
        prop_assert!(c.first_pool_capacity() <= (capacity as f64 * first_ratio) as usize);
        for op in ops {
            match op {
                Op::Insert { file, block: b, len, kind, pool } => {
                    c.insert((file, b), vec![1u8; len].into(), BlockKind::ALL[kind], priority(pool));
                }
                Op::Get { file, block: b } => {
                    c.get((file, b), BlockKind::Filter);
                }
                Op::EraseFile(f) => c.erase_file(f),
            }
            prop_assert!(c.usage() <= c.capacity());
            prop_assert!(c.first_pool_usage() <= c.first_pool_capacity());
            prop_assert!(c.high_pool_usage() <= c.high_pool_capacity());
            for shard in c.shards.iter() {
                shard.lock().check_invariants();
            }
        }
    }

    /// The model check of a zero share: first modules inserted into a cache without a first
    /// pool land, stay and leave exactly as high-priority blocks do in the cache as it was
    /// before the third pool (the same cache given `High` for them).
    #[test]
    fn a_zero_share_behaves_as_the_two_pool_cache(
        capacity in 0usize..60_000,
        ratio in 0.0f64..=1.0,
        shards in 1usize..5,
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let with = BlockCache::with_pools(capacity, ratio, 0.0, shards);
        let before = BlockCache::with_shards(capacity, ratio, shards);
        prop_assert_eq!(with.first_pool_capacity(), 0);
        prop_assert_eq!(with.high_pool_capacity(), before.high_pool_capacity());
        let mut keys = std::collections::BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert { file, block: b, len, kind, pool } => {
                    let data: Arc<[u8]> = vec![1u8; len].into();
                    let as_before = if pool == 0 { Priority::High } else { priority(pool) };
                    with.insert((file, b), data.clone(), BlockKind::ALL[kind], priority(pool));
                    before.insert((file, b), data, BlockKind::ALL[kind], as_before);
                    keys.insert((file, b));
                }
                Op::Get { file, block: b } => {
                    let got = with.get((file, b), BlockKind::Filter).map(|b| b.len());
                    prop_assert_eq!(got, before.get((file, b), BlockKind::Filter).map(|b| b.len()));
                }
                Op::EraseFile(f) => {
                    with.erase_file(f);
                    before.erase_file(f);
                }
            }
            prop_assert_eq!(with.first_pool_usage(), 0);
            prop_assert_eq!(with.usage(), before.usage());
            prop_assert_eq!(with.counters(), before.counters());
            for &k in &keys {
                prop_assert_eq!(with.pool_of(k), before.pool_of(k));
            }
            for (a, b) in with.shards.iter().zip(before.shards.iter()) {
                for pool in [Priority::High, Priority::Low] {
                    prop_assert_eq!(a.lock().pool_order(pool), b.lock().pool_order(pool));
                }
            }
        }
    }
}
