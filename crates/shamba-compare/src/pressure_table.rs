//! Seed 002 Table 1 from the memory-pressure sweep: bytes read per empty lookup by cache
//! size, per engine, with each size normalised by the engine's own 100% row (the paper's
//! "23.2x at 10%" column), and the lookups/s of the same rows.

use crate::engine::Variant;
use crate::report::Measurement;
use crate::workload::pressure::PERCENTS;

/// Table names of the sweep start with this.
pub const TABLE_PREFIX: &str = "memory pressure";

/// The cache percentage of a sweep phase ("cache 40% (123 KiB)").
fn percent(phase: &str) -> Option<u64> {
    phase.strip_prefix("cache ")?.split('%').next()?.parse().ok()
}

/// `per[i]` / `per[100%]`, blank where either is missing or zero.
fn normalised(value: Option<f64>, at_100: Option<f64>) -> String {
    match (value, at_100) {
        (Some(v), Some(base)) if base > 0.0 => format!("{:.1}x", v / base),
        _ => "-".into(),
    }
}

/// Print the table for every engine that ran the sweep; nothing if none did.
pub fn print(rows: &[Measurement]) {
    let sweep: Vec<&Measurement> = rows.iter().filter(|r| r.table.starts_with(TABLE_PREFIX)).collect();
    let mut engines: Vec<Variant> = Vec::new();
    for r in &sweep {
        if !engines.contains(&r.engine) {
            engines.push(r.engine);
        }
    }
    if engines.is_empty() {
        return;
    }
    let at = |e: Variant, pct: u64, f: fn(&Measurement) -> f64| {
        sweep.iter().find(|r| r.engine == e && percent(&r.phase) == Some(pct)).map(|r| f(r))
    };
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
    println!();
    println!("== seed 002 Table 1: bytes read per empty lookup, cache = N% of the reference metadata ==");
    print!("{:<20}", "engine");
    for p in PERCENTS {
        print!(" {:>9}", format!("B @{p}%"));
    }
    for p in PERCENTS.iter().filter(|&&p| p != 100) {
        print!(" {:>8}", format!("{p}%/100%"));
    }
    println!();
    for &e in &engines {
        print!("{:<20}", e.name());
        for p in PERCENTS {
            print!(" {:>9}", cell(at(e, p, |r| r.bytes_per_op)));
        }
        let base = at(e, 100, |r| r.bytes_per_op);
        for p in PERCENTS.iter().filter(|&&p| p != 100) {
            print!(" {:>8}", normalised(at(e, *p, |r| r.bytes_per_op), base));
        }
        println!();
    }
    println!();
    println!("== the same lookups: lookups/s ==");
    print!("{:<20}", "engine");
    for p in PERCENTS {
        print!(" {:>9}", format!("@{p}%"));
    }
    println!();
    for &e in &engines {
        print!("{:<20}", e.name());
        for p in PERCENTS {
            print!(" {:>9}", cell(at(e, p, |r| r.ops_per_sec)));
        }
        println!();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_read_from_the_phase_name() {
        assert_eq!(percent("cache 40% (123 KiB)"), Some(40));
        assert_eq!(percent("cache 150% (4 KiB)"), Some(150));
        assert_eq!(percent("missing"), None);
    }

    #[test]
    fn normalised_divides_by_the_100_percent_row() {
        assert_eq!(normalised(Some(2320.0), Some(100.0)), "23.2x");
        assert_eq!(normalised(Some(5.0), Some(0.0)), "-");
        assert_eq!(normalised(None, Some(1.0)), "-");
    }
}
