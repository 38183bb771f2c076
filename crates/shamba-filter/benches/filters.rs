//! Filter micro-benchmarks: ns per query (hit and miss, from a ready digest and from the
//! key), ns per key to construct, and bits per key (printed), for every kind.
//!
//! `cargo bench -p shamba --bench filters` (add `-- query`, `-- build` or `-- prefetch` to
//! filter).
//!
//! `prefetch/*`: one lookup probing N = 8 filters of 16 MiB each (together far bigger than
//! the last-level cache, like the filters of 8 levels) for one absent key's digest, in ns
//! per 8-filter lookup: probing one after another, and prefetching all 8 first
//! ([`FilterPart::prefetch`]) so that their DRAM misses overlap.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use shamba_filter::{
    bloom_equivalent_fp_rate, build_filter_parts, BloomLayout, Digest, FilterPart, FilterSpec, ModuleSizes, Probing,
};

fn specs() -> Vec<(&'static str, FilterSpec)> {
    let fp = bloom_equivalent_fp_rate(10.0);
    vec![
        ("blocked-bloom", FilterSpec::Bloom { bits_per_key: 10.0 }),
        ("standard-bloom", FilterSpec::StandardBloom { bits_per_key: 10.0, probing: Probing::DoubleHashing }),
        (
            "modular-bloom-2",
            FilterSpec::ModularBloom {
                bits_per_key: 10.0,
                modules: ModuleSizes::Equal { count: 2 },
                layout: BloomLayout::Blocked,
            },
        ),
        ("elastic-4", FilterSpec::Elastic { bits_per_key: 10.0, units: 4, layout: BloomLayout::Blocked }),
        ("ribbon", FilterSpec::Ribbon { fp_rate: fp }),
        ("modular-ribbon-2", FilterSpec::ModularRibbon { fp_rate: fp, modules: ModuleSizes::Equal { count: 2 } }),
    ]
}

fn keys(n: usize, seed: u64) -> Vec<[u8; 16]> {
    (0..n as u64)
        .map(|i| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&(i ^ seed.rotate_left(32)).to_le_bytes());
            k[8..].copy_from_slice(&seed.to_le_bytes());
            k
        })
        .collect()
}

fn bench_query(c: &mut Criterion) {
    for n in [10_000usize, 1_000_000] {
        let present = keys(n, 1);
        let digests: Vec<Digest> = present.iter().map(|k| Digest::of(k)).collect();
        let absent = keys(1 << 14, 2);
        let absent_digests: Vec<Digest> = absent.iter().map(|k| Digest::of(k)).collect();
        let mut group = c.benchmark_group(format!("query/{n}"));
        group.throughput(Throughput::Elements(1));
        for (name, spec) in specs() {
            let parts = build_filter_parts(&spec, &digests);
            let parsed: Vec<FilterPart<'_>> = parts.iter().map(|p| FilterPart::parse(p).expect("parse")).collect();
            let bytes: usize = parts.iter().map(Vec::len).sum();
            eprintln!("{name} n={n}: {:.3} bits/key, {} part(s)", bytes as f64 * 8.0 / n as f64, parts.len());
            let probe = |d: &Digest| parsed.iter().all(|p| p.may_contain(d));
            let mask = (1 << 14) - 1;
            group.bench_function(BenchmarkId::new(name, "miss-digest"), |b| {
                let mut i = 0usize;
                b.iter(|| {
                    i = (i + 1) & mask;
                    probe(black_box(&absent_digests[i]))
                })
            });
            group.bench_function(BenchmarkId::new(name, "hit-digest"), |b| {
                let mut i = 0usize;
                b.iter(|| {
                    i += 7919;
                    if i >= n {
                        i -= n;
                    }
                    probe(black_box(&digests[i]))
                })
            });
            group.bench_function(BenchmarkId::new(name, "miss-key"), |b| {
                let mut i = 0usize;
                b.iter(|| {
                    i = (i + 1) & mask;
                    probe(&Digest::of(black_box(&absent[i])))
                })
            });
        }
        group.finish();
    }
}

fn bench_build(c: &mut Criterion) {
    let n = 1_000_000usize;
    let digests: Vec<Digest> = keys(n, 3).iter().map(|k| Digest::of(k)).collect();
    let mut group = c.benchmark_group("build/1000000");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    for (name, spec) in specs() {
        group.bench_function(BenchmarkId::new(name, "from-digests"), |b| {
            b.iter(|| build_filter_parts(black_box(&spec), black_box(&digests)))
        });
    }
    group.finish();
}

fn bench_prefetch(c: &mut Criterion) {
    const FILTERS: usize = 8;
    const FILTER_BYTES: usize = 16 << 20;
    let mut group = c.benchmark_group("prefetch/8x16MiB");
    group.throughput(Throughput::Elements(1));
    let kinds = [
        ("blocked-bloom", FilterSpec::Bloom { bits_per_key: 10.0 }, FILTER_BYTES * 8 / 10),
        ("ribbon", FilterSpec::Ribbon { fp_rate: 0.01 }, FILTER_BYTES * 8 / 7),
    ];
    // Absent keys; 2^16 lookups touch far more lines than the caches hold, so every probe
    // misses to DRAM.
    let queries: Vec<Digest> = keys(1 << 16, 11).iter().map(|k| Digest::of(k)).collect();
    let mask = queries.len() - 1;
    for (name, spec, num_keys) in kinds {
        let digests: Vec<Digest> = keys(num_keys, 10).iter().map(|k| Digest::of(k)).collect();
        let one = build_filter_parts(&spec, &digests).swap_remove(0);
        drop(digests);
        // Copies: the same bits at 8 different addresses, as far apart as 8 files' filters.
        let copies: Vec<Vec<u8>> = (0..FILTERS).map(|_| one.clone()).collect();
        let parts: Vec<FilterPart<'_>> = copies.iter().map(|p| FilterPart::parse(p).expect("parse")).collect();
        eprintln!("prefetch bench: {FILTERS} x {name}, {} bytes each", one.len());
        group.bench_function(BenchmarkId::new(name, "probe-8"), |b| {
            let mut i = 0usize;
            b.iter(|| {
                i = (i + 1) & mask;
                let d = black_box(&queries[i]);
                parts.iter().filter(|p| p.may_contain(d)).count()
            })
        });
        group.bench_function(BenchmarkId::new(name, "prefetch-8-then-probe-8"), |b| {
            let mut i = 0usize;
            b.iter(|| {
                i = (i + 1) & mask;
                let d = black_box(&queries[i]);
                for p in &parts {
                    p.prefetch(d);
                }
                parts.iter().filter(|p| p.may_contain(d)).count()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    targets = bench_query, bench_build, bench_prefetch
}
criterion_main!(benches);
