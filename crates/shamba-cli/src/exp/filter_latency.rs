//! `shamba exp filter-latency` (seed 000, Figs. 2-3): ns per empty probe of one Bloom filter
//! over key sizes 8 B .. 1 KiB, for each way of getting the k = 7 probe positions
//! ([`Scheme`]), and Shamba's blocked filter (one digest, one cache line) beside them; with
//! the filter in the CPU cache (the seed's 10K keys x 10 bits) and larger than the
//! last-level cache. The hashing share is the hash-only time over the probe time.

use std::error::Error;
use std::hint::black_box;

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use shamba::lab::filter::bloom_blocked::{blocked_num_probes, BlockedBloomBuilder, BlockedBloomParams, BLOCK_BYTES};
use shamba::lab::filter::hashes::HashFn;
use shamba::lab::filter::Digest;

use super::measure::ns_per_op;
use super::probe_schemes::{Bits, Scheme, K};
use super::report::{Cell, Plot, Report, Table};
use super::ExpArgs;

const SIZES: [usize; 8] = [8, 16, 32, 64, 128, 256, 512, 1024];

/// The seed's in-cache filter: 10K keys at 10 bits/key.
const SMALL_BYTES: u64 = 10_000 * 10 / 8;

/// What a row probes.
#[derive(Debug, Clone, Copy)]
enum Row {
    Standard(Scheme),
    /// Shamba's engine filter: xxh3-128 digest, k bits in one 64-byte block.
    Blocked,
}

impl Row {
    fn name(self) -> String {
        match self {
            Row::Standard(s) => s.name(),
            Row::Blocked => "shamba blocked (xxh3-128 digest, 1 line)".to_string(),
        }
    }
}

const ROWS: [Row; 6] = [
    Row::Standard(Scheme::Rotation(HashFn::Xxh3_128)),
    Row::Standard(Scheme::Rotation(HashFn::Murmur64A)),
    Row::Standard(Scheme::Independent(HashFn::Murmur64A)),
    Row::Standard(Scheme::Distinct),
    Row::Standard(Scheme::Double(HashFn::Murmur64A, HashFn::Xxh64)),
    Row::Blocked,
];

/// One filter of each kind, the same size.
struct Filters {
    standard: Bits,
    blocked: BlockedBloomBuilder,
}

impl Filters {
    fn new(bytes: u64, seed: u64) -> Filters {
        let standard = Bits::random(bytes, seed);
        let num_blocks = (bytes / BLOCK_BYTES as u64).max(1);
        let params = BlockedBloomParams {
            num_blocks: u32::try_from(num_blocks).unwrap_or(u32::MAX),
            num_probes: blocked_num_probes(10.0),
            num_keys: 0,
        };
        let mut blocked = BlockedBloomBuilder::new(params, 0);
        // A blocked probe tests its k bits without branching on them, so its time does not
        // depend on how full the block is; one random key per block is enough to put every page
        // in memory (zeroed pages never written would all read one shared zero page).
        let mut rng = StdRng::seed_from_u64(seed ^ 0xB10C);
        for _ in 0..num_blocks {
            blocked.add(&Digest { h1: rng.next_u64(), h2: rng.next_u64() });
        }
        Filters { standard, blocked }
    }
}

/// One cell: ns per probe, ns of hashing per probe, full hashes per probe, share passing.
struct Cellm {
    probe_ns: f64,
    hash_ns: f64,
    hashes: f64,
    passed: f64,
}

/// Every probe a fresh key (a counter in its first 8 bytes, the rest random), so that the
/// probes of a large filter land on lines not yet cached; the key itself stays in L1.
fn key_at(buf: &mut [u8], i: u64) {
    if let Some(head) = buf.first_chunk_mut::<8>() {
        *head = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
    }
}

fn measure(f: &Filters, row: Row, key_len: usize, probes: u64, repeats: usize, seed: u64) -> Cellm {
    let mut buf = vec![0u8; key_len];
    StdRng::seed_from_u64(seed ^ key_len as u64).fill_bytes(&mut buf);
    // Full hashes each probe computed (the lazy schemes' vary), for the hash-only pass.
    let mut counts = vec![0u8; probes as usize];
    let mut passed = 0u64;
    let mut base = seed << 32;
    let probe_ns = ns_per_op(probes as usize, repeats, || {
        // Fresh keys per repeat: a repeat must not find the previous one's lines cached.
        base += probes;
        let mut p = 0u64;
        for (i, c) in (base..base + probes).zip(counts.iter_mut()) {
            key_at(&mut buf, i);
            let (hit, n) = match row {
                Row::Standard(s) => f.standard.probe(s, black_box(&buf)),
                Row::Blocked => (f.blocked.may_contain(&Digest::of(black_box(&buf))), 1),
            };
            *c = n as u8;
            p += u64::from(hit);
        }
        passed = p;
    });
    let hashes: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    // Hash-only: the last repeat's keys, each hashed as many times as its probe hashed it.
    let hash_ns = ns_per_op(probes as usize, repeats, || {
        for (i, &c) in (base..base + probes).zip(counts.iter()) {
            key_at(&mut buf, i);
            match row {
                Row::Standard(s) => black_box(s.hash_only(black_box(&buf), u32::from(c))),
                Row::Blocked => black_box(Digest::of(black_box(&buf)).h1),
            };
        }
    });
    Cellm { probe_ns, hash_ns, hashes: hashes as f64 / probes as f64, passed: passed as f64 / probes as f64 }
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let (large_bytes, probes_small, probes_large, repeats) =
        if args.quick { (8u64 << 20, 5_000, 5_000, 1) } else { (512u64 << 20, 200_000, 300_000, 3) };
    let mut report = Report::new("filter-latency");
    let mut ratios: Vec<(String, Vec<f64>)> = Vec::new();
    for (label, bytes, probes) in [("in-cache", SMALL_BYTES, probes_small), ("large", large_bytes, probes_large)] {
        let filters = Filters::new(bytes, args.seed);
        let mut headers = vec!["scheme".to_string()];
        headers.extend(SIZES.iter().map(|s| format!("ours {s}B ns")));
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let title = format!("ns per empty probe, {label} filter ({} KiB), k = {K}", bytes.div_ceil(1024));
        let mut ns_table = Table::new(&format!("{label}-ns"), &title, &h);
        let mut share_headers = vec!["scheme".to_string()];
        share_headers.extend(SIZES.iter().map(|s| format!("ours {s}B %")));
        let sh: Vec<&str> = share_headers.iter().map(String::as_str).collect();
        let mut share_table =
            Table::new(&format!("{label}-hash-share"), &format!("hashing share of the probe %, {label} filter"), &sh);
        let mut plot = Plot::new(
            label,
            &format!("Empty probe ns vs key size, {label} filter (seed 000, Figs. 2-3)"),
            "key bytes",
            "ns per probe",
        )
        .log(true, true);
        let mut extra: Vec<String> = Vec::new();
        let mut by_row: Vec<Vec<f64>> = Vec::new();
        for row in ROWS {
            let mut ns_row = vec![Cell::text(row.name())];
            let mut share_row = vec![Cell::text(row.name())];
            let mut points = Vec::new();
            let mut nss = Vec::new();
            for &size in &SIZES {
                let m = measure(&filters, row, size, probes, repeats, args.seed);
                ns_row.push(Cell::num(m.probe_ns, 1));
                share_row.push(Cell::num((100.0 * m.hash_ns / m.probe_ns).min(100.0), 0));
                points.push((size as f64, m.probe_ns));
                nss.push(m.probe_ns);
                if size == 512 {
                    extra.push(format!(
                        "{}: {:.2} full hashes per probe, {:.2}% of probes passed (512 B keys)",
                        row.name(),
                        m.hashes,
                        100.0 * m.passed
                    ));
                }
            }
            ns_table.row(ns_row);
            share_table.row(share_row);
            plot.series(&row.name(), points);
            by_row.push(nss);
        }
        // The seed's comparisons, as ratios to MM64 + rotation (its blue bars).
        if let Some(base) = by_row.get(1) {
            for (i, what) in [(2, "k independent"), (3, "k distinct"), (4, "double hashing"), (0, "xxh3-128 rotation")]
            {
                if let Some(r) = by_row.get(i) {
                    ratios.push((
                        format!("{label}: {what} / mm64 rotation"),
                        r.iter().zip(base).map(|(a, b)| a / b).collect(),
                    ));
                }
            }
        }
        report.tables.push(ns_table);
        report.tables.push(share_table);
        report.plots.push(plot);
        for e in extra {
            report.note(format!("{label}: {e}"));
        }
    }
    let mut headers = vec!["ratio".to_string()];
    headers.extend(SIZES.iter().map(|s| format!("ours {s}B")));
    headers.push("seed".to_string());
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut ratio_table = Table::new("ratios", "Probe time over MM64 + rotation's (seed's blue bars)", &h);
    for (name, values) in ratios {
        let seed = if name.contains("double") {
            "Fig. 3: rotation faster, up to 3x at large keys"
        } else if name.contains("k ") {
            "Fig. 2: all-7 dominated by hashing, grows with key size"
        } else {
            "-"
        };
        let mut row = vec![Cell::text(name)];
        row.extend(values.into_iter().map(|v| Cell::num(v, 2)));
        row.push(Cell::text(seed));
        ratio_table.row(row);
    }
    report.tables.push(ratio_table);
    report.note("seed 000 Fig. 2 (text; the figure's bars carry no numbers in the seed document): a BF probed with all seven hash functions costs the most and is dominated by hashing, growing with key size; MD5 + rotation is much cheaper; MM64 + rotation cheapest. Fig. 3: one hash + rotation beats double hashing (MM64 + XX/CRC/CITY), up to 3x as keys grow");
    report.note("the standard filter's bits are random (each set with probability 1/2, a filter at its optimal load); no key is inserted, so every probe is empty and about 1/2^7 pass; the FP rates of the schemes agree (unit test probe_schemes::every_scheme_has_the_analytic_fp_rate, and `exp units-fpr`)");
    report.note("k independent / k distinct hash lazily: a probe computes hash i only if bits 0..i-1 were set (about 2 hashes per empty probe), as a careful implementation would; the seed's all-7 bars probably computed all seven, and its seven functions include MD5 and SHA-256 (ours: xxh3-128, xxh3-64, xxh64, murmur64a, crc32c, sha-256, xxh3-128)");
    report.note("double hashing computes both hashes before the first probe (2 per probe), so its hashing is at most 2x rotation's; the seed's 3x is not possible with two hashes of similar cost unless its secondary functions were slower than MM64 (XX 874 ns vs MM64 235 ns per 1 KB in its Table 1: 1 + 874/235 = 4.7x hashing)");
    report.note("hashing share: the same keys hashed alone, each as many times as its probe hashed it (no filter access), over the probe time, capped at 100%");
    report.note("the blocked filter holds one random key per block (every page written, so none reads the shared zero page): its probe tests its bits without branching, so its time does not depend on how full it is, but its pass rate above is not an FP rate");
    report.note(if args.quick {
        "QUICK form: the large filter is 8 MiB (inside this machine's 260 MiB L3), few probes, one run; the full form's is 512 MiB"
            .to_string()
    } else {
        format!(
            "large filter: 512 MiB, twice this machine's L3 (lscpu: 260 MiB); {probes_large} probes per cell, {probes_small} in cache; best of {repeats} runs, fresh keys each"
        )
    });
    report.note("machine: 2-core VM shared with other builds and runs: timings are noisy");
    Ok(report)
}
