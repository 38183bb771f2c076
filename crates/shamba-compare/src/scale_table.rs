//! Tables of the sustained-load runs and the size sweep, and the sweep's plot.

use crate::engine::Variant;
use crate::scale::ScaleRuns;
use crate::workload::sizes::SizePoint;
use crate::workload::sustained::SustainedRun;

const MIB: f64 = (1u64 << 20) as f64;

/// `a / b` as "1.23x", "-" when either is missing or zero.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// Print both tables (nothing for a family that did not run).
pub fn print(runs: &ScaleRuns) {
    if runs.sustained.is_empty() && runs.sizes.is_empty() {
        return;
    }
    println!();
    for line in &runs.footing {
        println!("  {line}");
    }
    if !runs.sustained.is_empty() {
        print_sustained(&runs.sustained);
    }
    if !runs.sizes.is_empty() {
        print_sizes(&runs.sizes);
    }
    if let Some(p) = &runs.plot {
        println!("plot: {p}");
    }
}

/// The Shamba run with the same value size and threads as `r`.
fn shamba_of<'a>(runs: &'a [SustainedRun], r: &SustainedRun) -> Option<&'a SustainedRun> {
    runs.iter().find(|s| s.engine == Variant::Shamba && s.value_size == r.value_size && s.threads == r.threads)
}

fn print_sustained(runs: &[SustainedRun]) {
    println!();
    println!("== sustained random puts ==");
    println!(
        "{:<10} {:>6} {:>3} {:>10} {:>9} {:>7} {:>7} {:>8} {:>9} {:>5} {:>6} {:>6} {:>8} {:>4} {:<14} {:>8}",
        "engine",
        "value",
        "thr",
        "mean/s",
        "min 1s/s",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "max ms",
        "low s",
        "WA os",
        "WA eng",
        "stall s",
        "L0",
        "files/level",
        "S/p mean"
    );
    for r in runs {
        let stall = r.end.stall_micros.map(|us| us as f64 / 1e6).map_or("-".into(), |s| format!("{s:.1}"));
        let levels = r.files_per_level.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",");
        let vs = match shamba_of(runs, r) {
            Some(s) if r.engine != Variant::Shamba => ratio(Some(s.mean_per_sec), Some(r.mean_per_sec)),
            _ => String::new(),
        };
        println!(
            "{:<10} {:>6} {:>3} {:>10.0} {:>9} {:>7.1} {:>7.1} {:>8.1} {:>9.1} {:>5} {:>6} {:>6} {:>8} {:>4} {:<14} {:>8}",
            r.engine.name(),
            r.value_size,
            r.threads,
            r.mean_per_sec,
            r.min_per_sec,
            r.p50_ns as f64 / 1e3,
            r.p99_ns as f64 / 1e3,
            r.p999_ns as f64 / 1e3,
            r.max_ns as f64 / 1e6,
            r.longest_low_secs,
            opt(r.process_write_amp(), 2),
            opt(r.engine_write_amp(), 2),
            stall,
            r.end.l0_files.map_or("-".into(), |n| n.to_string()),
            levels,
            vs
        );
    }
    println!("puts/s per second (thousands):");
    for r in runs {
        let series = r.per_second.iter().map(|n| format!("{:.0}", *n as f64 / 1e3)).collect::<Vec<_>>().join(" ");
        println!("  {:<10} {:>4} B {} thr: {series}", r.engine.name(), r.value_size, r.threads);
    }
    println!("low s = longest run of seconds under a tenth of the mean; WA os = bytes the process wrote (write");
    println!("syscalls, every thread) per key+value byte put; WA eng = the engine's WAL+flush+compaction bytes per");
    println!(
        "byte put (where it counts them); stall s = the engine's own stall time; L0 and files at the end, unsettled."
    );
    println!("S/p mean = Shamba's mean rate / this engine's (above 1.00x: Shamba takes more puts).");
}

fn print_sizes(points: &[SizePoint]) {
    println!();
    println!("== size sweep ==");
    println!(
        "{:<10} {:<20} {:>10} {:<18} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
        "keys",
        "engine",
        "load/s",
        "files/level",
        "disk MiB",
        "filt MiB",
        "peak MiB",
        "empty cpu",
        "exist cpu",
        "exist bk",
        "bk@10%",
        "bk@40%",
        "S/p empty"
    );
    for p in points {
        let levels = p.files_per_level.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",");
        let at = |pct: u64| p.empty_under_pressure.iter().find(|(x, _)| *x == pct).map(|(_, c)| c.blocks);
        let shamba = points.iter().find(|s| s.keys == p.keys && s.engine == Variant::Shamba);
        let vs = match shamba {
            Some(s) if !p.engine.is_shamba() => ratio(Some(p.empty.cpu_ns), Some(s.empty.cpu_ns)),
            _ => String::new(),
        };
        println!(
            "{:<10} {:<20} {:>10.0} {:<18} {:>8.0} {:>8.1} {:>8.0} {:>9.0} {:>9.0} {:>8.3} {:>8} {:>8} {:>9}",
            p.keys,
            p.engine.name(),
            p.load_ops_per_sec,
            levels,
            p.disk_bytes as f64 / MIB,
            p.filter_bytes as f64 / MIB,
            p.peak_rss_bytes as f64 / MIB,
            p.empty.cpu_ns,
            p.existing.cpu_ns,
            p.existing.blocks,
            opt(at(10), 3),
            opt(at(40), 3),
            vs
        );
    }
    println!("empty / exist cpu = client CPU ns per lookup, filters in memory; exist bk = blocks read per existing");
    println!("lookup; bk@N% = blocks read per empty lookup with index+filter in a cache of N% of the first engine's");
    println!(
        "filter+index bytes. S/p empty = this engine's empty-lookup cpu / Shamba's (above 1.00x: Shamba costs less)."
    );
    let mut engines: Vec<Variant> = Vec::new();
    for p in points {
        if !engines.contains(&p.engine) {
            engines.push(p.engine);
        }
    }
    print!("empty-lookup cpu growth, largest / smallest size:");
    for e in engines {
        let mine: Vec<&SizePoint> = points.iter().filter(|p| p.engine == e).collect();
        let lo = mine.iter().min_by_key(|p| p.keys);
        let hi = mine.iter().max_by_key(|p| p.keys);
        if let (Some(lo), Some(hi)) = (lo, hi) {
            print!(" {} {}", e.name(), ratio(Some(hi.empty.cpu_ns), Some(lo.empty.cpu_ns)));
        }
    }
    println!();
}
