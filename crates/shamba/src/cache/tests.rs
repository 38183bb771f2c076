use super::shard::ENTRY_OVERHEAD;
use super::*;
use proptest::prelude::*;

fn block(len: usize) -> Arc<[u8]> {
    vec![1u8; len].into()
}

#[test]
fn small_caches_get_fewer_shards_and_capacities_add_up() {
    assert_eq!(BlockCache::new(0, 0.5).shard_count(), 1);
    assert_eq!(BlockCache::new(1 << 20, 0.5).shard_count(), 2);
    assert_eq!(BlockCache::new(64 << 20, 0.5).shard_count(), 16);
    let c = BlockCache::with_shards(1003, 0.5, 3);
    assert_eq!(c.shard_count(), 4);
    assert_eq!(c.capacity(), 1003);
    assert!(c.high_pool_capacity() <= 502);
}

#[test]
fn zero_capacity_keeps_nothing_but_counts_misses() {
    let c = BlockCache::new(0, 0.5);
    c.insert((1, 0), block(10), BlockKind::Data, Priority::Low);
    assert!(c.get((1, 0), BlockKind::Data).is_none());
    assert_eq!(c.usage(), 0);
    assert_eq!(c.counters()[0], KindCounters { misses: 1, ..Default::default() });
}

#[test]
fn counters_are_kept_per_kind() {
    let c = BlockCache::with_shards(1 << 20, 0.5, 4);
    c.insert((1, 0), block(100), BlockKind::Data, Priority::Low);
    c.insert((1, 200), block(50), BlockKind::Index, Priority::High);
    c.insert((1, 300), block(30), BlockKind::Filter, Priority::High);
    assert!(c.get((1, 0), BlockKind::Data).is_some());
    assert!(c.get((1, 0), BlockKind::Data).is_some());
    assert!(c.get((1, 1), BlockKind::Data).is_none());
    assert!(c.get((1, 200), BlockKind::Index).is_some());
    assert!(c.get((9, 9), BlockKind::Filter).is_none());
    let [data, index, filter, other] = c.counters();
    let charged = |n: usize| (n + ENTRY_OVERHEAD) as u64;
    assert_eq!(
        data,
        KindCounters {
            hits: 2,
            misses: 1,
            bytes_inserted: charged(100),
            bytes_resident: charged(100),
            entries_resident: 1
        }
    );
    assert_eq!(
        index,
        KindCounters {
            hits: 1,
            misses: 0,
            bytes_inserted: charged(50),
            bytes_resident: charged(50),
            entries_resident: 1
        }
    );
    assert_eq!(
        filter,
        KindCounters {
            hits: 0,
            misses: 1,
            bytes_inserted: charged(30),
            bytes_resident: charged(30),
            entries_resident: 1
        }
    );
    assert_eq!(other, KindCounters::default());
    assert_eq!(c.usage() as u64, charged(100) + charged(50) + charged(30));
    assert_eq!(c.high_pool_usage() as u64, charged(50) + charged(30));
}

#[test]
fn erase_file_drops_only_that_files_blocks() {
    let c = BlockCache::with_shards(1 << 20, 0.5, 8);
    for off in 0..40u64 {
        c.insert((7, off * 4096), block(100), BlockKind::Data, Priority::Low);
        c.insert((8, off * 4096), block(100), BlockKind::Index, Priority::High);
    }
    let before = c.usage();
    c.erase_file(7);
    assert_eq!(c.usage(), before / 2);
    for off in 0..40u64 {
        assert!(c.pool_of((7, off * 4096)).is_none());
        assert!(c.pool_of((8, off * 4096)).is_some());
    }
    assert_eq!(c.counters()[0].bytes_resident, 0);
    assert_eq!(c.counters()[1].bytes_resident as usize, c.usage());
    assert_eq!((c.counters()[0].entries_resident, c.counters()[1].entries_resident), (0, 40));
}

#[test]
fn erase_files_drops_the_blocks_of_every_file_named_and_no_other() {
    let c = BlockCache::with_shards(1 << 20, 0.5, 8);
    for file in [3u64, 5, 9, 12] {
        for off in 0..20u64 {
            c.insert((file, off * 4096), block(100), BlockKind::Data, Priority::Low);
        }
    }
    // Unsorted, with a number that has no blocks.
    c.erase_files(&[12, 4, 3]);
    for off in 0..20u64 {
        assert!(c.pool_of((3, off * 4096)).is_none());
        assert!(c.pool_of((12, off * 4096)).is_none());
        assert!(c.pool_of((5, off * 4096)).is_some());
        assert!(c.pool_of((9, off * 4096)).is_some());
    }
    assert_eq!(c.counters()[0].entries_resident, 40);
    c.erase_files(&[]);
    assert_eq!(c.counters()[0].entries_resident, 40);
}

#[test]
fn blocks_of_one_file_spread_over_all_shards() {
    let c = BlockCache::with_shards(16 << 20, 0.5, 16);
    let mut used = std::collections::HashSet::new();
    for off in 0..256u64 {
        used.insert(std::ptr::from_ref(c.shard((3, off * 4096))) as usize);
    }
    assert_eq!(used.len(), 16);
}

#[derive(Debug, Clone)]
enum Op {
    Insert { file: u64, block: u64, len: usize, kind: usize, high: bool },
    Get { file: u64, block: u64 },
    EraseFile(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..4u64, 0..64u64, 0..6000usize, 0..4usize, any::<bool>())
            .prop_map(|(file, block, len, kind, high)| Op::Insert { file, block, len, kind, high }),
        3 => (0..4u64, 0..64u64).prop_map(|(file, block)| Op::Get { file, block }),
        1 => (0..4u64).prop_map(Op::EraseFile),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn capacity_and_high_pool_limit_are_never_exceeded(
        capacity in 0usize..60_000,
        ratio in 0.0f64..=1.0,
        shards in 1usize..5,
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let c = BlockCache::with_shards(capacity, ratio, shards);
        let (mut hits, mut misses) = (0u64, 0u64);
        // The length last inserted under each key: a hit must return exactly that block.
        let mut inserted = std::collections::HashMap::new();
        for op in ops {
            match op {
                Op::Insert { file, block: b, len, kind, high } => {
                    let priority = if high { Priority::High } else { Priority::Low };
                    c.insert((file, b), block(len), BlockKind::ALL[kind], priority);
                    inserted.insert((file, b), len);
                }
                Op::Get { file, block: b } => match c.get((file, b), BlockKind::Data) {
                    Some(blk) => {
                        hits += 1;
                        prop_assert_eq!(Some(&blk.len()), inserted.get(&(file, b)));
                    }
                    None => misses += 1,
                },
                Op::EraseFile(f) => {
                    c.erase_file(f);
                    inserted.retain(|k, _| k.0 != f);
                }
            }
            prop_assert!(c.usage() <= c.capacity());
            prop_assert!(c.high_pool_usage() <= c.high_pool_capacity());
            for shard in c.shards.iter() {
                shard.lock().check_invariants();
            }
            let counters = c.counters();
            let resident: u64 = counters.iter().map(|k| k.bytes_resident).sum();
            prop_assert_eq!(resident, c.usage() as u64);
            prop_assert_eq!(counters[0].hits, hits);
            prop_assert_eq!(counters[0].misses, misses);
        }
    }
}

#[test]
fn peek_sees_resident_blocks_without_counting_or_refreshing_them() {
    let c = BlockCache::with_shards(3 * (100 + ENTRY_OVERHEAD), 0.0, 1);
    for off in 0..3u64 {
        c.insert((1, off), block(100), BlockKind::Filter, Priority::Low);
    }
    // (1, 0) is the least recently used; peeking at it must not save it from eviction.
    assert!(c.peek((1, 0)).is_some());
    assert!(c.peek((1, 9)).is_none());
    assert_eq!(c.counters()[2], KindCounters { hits: 0, misses: 0, ..c.counters()[2] }, "peek counts nothing");
    c.insert((1, 3), block(100), BlockKind::Filter, Priority::Low);
    assert!(c.peek((1, 0)).is_none(), "peek did not refresh recency");
    assert!(c.peek((1, 1)).is_some());
}

#[test]
fn prefetch_counts_nothing_and_refreshes_nothing() {
    let c = BlockCache::with_shards(3 * (100 + ENTRY_OVERHEAD), 0.0, 1);
    for off in 0..3u64 {
        c.insert((1, off), block(100), BlockKind::Data, Priority::Low);
    }
    let before = c.counters();
    // Resident and absent keys alike: a hint, nothing else.
    c.prefetch((1, 0));
    c.prefetch((1, 9));
    assert_eq!(c.counters(), before, "prefetch counts nothing");
    c.insert((1, 3), block(100), BlockKind::Data, Priority::Low);
    assert!(c.peek((1, 0)).is_none(), "prefetch did not refresh recency");
    assert!(c.peek((1, 1)).is_some());
}

#[test]
fn get_resident_counts_hits_refreshes_recency_and_counts_no_miss() {
    let c = BlockCache::with_shards(3 * (100 + ENTRY_OVERHEAD), 0.0, 1);
    for off in 0..3u64 {
        c.insert((1, off), block(100), BlockKind::Filter, Priority::Low);
    }
    assert!(c.get_resident((1, 0), BlockKind::Filter).is_some());
    assert!(c.get_resident((1, 9), BlockKind::Filter).is_none());
    assert_eq!((c.counters()[2].hits, c.counters()[2].misses), (1, 0));
    c.insert((1, 3), block(100), BlockKind::Filter, Priority::Low);
    assert!(c.peek((1, 0)).is_some(), "taken, so most recently used");
    assert!(c.peek((1, 1)).is_none(), "the least recently used went");
}
