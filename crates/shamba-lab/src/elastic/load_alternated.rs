//! `shamba-lab exp elastic-load` (seed 003, Fig. 7): the load throughput of a tree whose
//! tables carry 2 bits/key filter units against one whose tables carry whole filters of the
//! same bits per key, in many loads that alternate.
//!
//! Filter building is a small part of a load (flushes and compactions write the data many
//! times over), so the difference the seed reports (0.1%) is far below the noise of one
//! load on a shared machine. Loads of the two layouts therefore alternate tightly (units,
//! whole, whole, units, ...: each round starts with the layout the last one ended with, so
//! a drift in the machine's load falls on both), each round gives a units-over-whole ratio,
//! and the figures are the median and the spread of those ratios. Process CPU seconds
//! (all threads) are counted beside wall-clock keys per second: other work on the machine
//! inflates them less. The bytes written do not depend on the machine at all.

use std::error::Error;

use shamba_filter::{BuildPolicy, FilterLayout};

use crate::args::ExpArgs;
use crate::elastic::sweep::Fill;
use crate::elastic::versus_plain::{tree, FLUSH_KEYS, MOMENTS, UNIT_BITS};
use crate::support::figures::ratio;
use crate::support::report::{Cell, Report, Table};

/// Rounds (one load of each layout) at 4 bits/key, the seed's point, and at the others.
const ROUNDS_SEED_POINT: usize = 6;
const ROUNDS_OTHER: usize = 3;
/// Keys of the `--quick` tree (50 flushes: L0 empty, as in the full tree).
const QUICK_NUM: u64 = 50 * FLUSH_KEYS;

/// The smallest, the median and the largest of `values` (NaN for none).
pub(crate) fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = match n {
        0 => f64::NAN,
        _ if n.is_multiple_of(2) => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        _ => v[n / 2],
    };
    (v.first().copied().unwrap_or(f64::NAN), median, v.last().copied().unwrap_or(f64::NAN))
}

/// "median (min-max)" of `values`.
fn spread_cell(values: &[f64], decimals: usize) -> Cell {
    let (lo, med, hi) = spread(values);
    Cell::text(format!("{med:.decimals$} ({lo:.decimals$}-{hi:.decimals$})"))
}

/// The one-minute load average, from `/proc/loadavg` (`None` elsewhere).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// Whether round `round` loads the units first: rounds alternate which layout starts, so
/// consecutive loads of one layout are never further apart than two loads.
fn units_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

/// The bits/key to load at and the rounds at each: `variants` names the bits/key (e.g.
/// `4` or `2,6,8`, to split a long run), else 4, 2, 6 and 8; `--quick`: 4, two rounds.
fn points(variants: &[String], quick: bool) -> Result<Vec<(u32, usize)>, Box<dyn Error>> {
    if quick {
        return Ok(vec![(4, 2)]);
    }
    let rounds = |bits: u32| if bits == 4 { ROUNDS_SEED_POINT } else { ROUNDS_OTHER };
    if variants.is_empty() {
        return Ok([4, 2, 6, 8].map(|b| (b, rounds(b))).to_vec());
    }
    variants
        .iter()
        .map(|v| {
            let bits: u32 = v.parse().map_err(|_| format!("bits/key expected, not {v:?}"))?;
            if bits == 0 || !bits.is_multiple_of(2) {
                return Err(format!("bits/key must be a positive multiple of the 2 bits/key units, not {bits}").into());
            }
            Ok((bits, rounds(bits)))
        })
        .collect()
}

/// One load and the load average when it started.
struct Timed {
    fill: Fill,
    load_average: Option<f64>,
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let num = args.num.unwrap_or(if args.quick { QUICK_NUM } else { MOMENTS[0].num });
    let points = points(&args.variants, args.quick)?;
    let mut report = Report::new("elastic-load");
    let mut loads_table = Table::new(
        "loads",
        "Every load, in the order run",
        &["bits/key", "round", "filters", "keys/s", "CPU s", "written MiB", "filter MiB", "load average"],
    );
    let mut fig7 = Table::new(
        "fig7",
        "Fig. 7: load throughput, 2 bits/key units vs whole filters at the same bits/key, median (min-max) over alternated loads",
        &[
            "bits/key",
            "rounds",
            "whole keys/s",
            "units keys/s",
            "units / whole keys/s",
            "whole CPU s",
            "units CPU s",
            "units / whole CPU s",
            "whole written MiB",
            "units written MiB",
            "load average",
            "seed",
        ],
    );
    for (bits, rounds) in points {
        let count = (f64::from(bits) / UNIT_BITS) as u8;
        let whole_policy = BuildPolicy::uniform(f64::from(bits));
        let mut units_policy = whole_policy.clone();
        units_policy.layout = FilterLayout::Units { count };
        let (mut whole, mut units): (Vec<Timed>, Vec<Timed>) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let order = if units_first(round) { [false, true] } else { [true, false] };
            for is_whole in order {
                let policy = if is_whole { &whole_policy } else { &units_policy };
                let load_average = load_average();
                // Each tree is dropped (its directory removed) once counted.
                let (_, fill) = Fill::load(tree(num, policy.clone(), args.seed))?;
                loads_table.row(vec![
                    Cell::num(f64::from(bits), 0),
                    Cell::num(round as f64, 0),
                    Cell::text(if is_whole { "whole".to_string() } else { format!("{count} x {UNIT_BITS} units") }),
                    Cell::num(fill.keys_per_sec, 0),
                    Cell::opt(fill.cpu_seconds, 2),
                    Cell::num(fill.written as f64 / (1 << 20) as f64, 2),
                    Cell::num(fill.filter_bytes as f64 / (1 << 20) as f64, 3),
                    Cell::opt(load_average, 2),
                ]);
                let timed = Timed { fill, load_average };
                if is_whole {
                    whole.push(timed)
                } else {
                    units.push(timed)
                }
            }
        }
        let pick = |v: &[Timed], f: fn(&Fill) -> Option<f64>| v.iter().filter_map(|t| f(&t.fill)).collect::<Vec<_>>();
        let kps = |f: &Fill| Some(f.keys_per_sec);
        let cpu = |f: &Fill| f.cpu_seconds;
        let written = |f: &Fill| Some(f.written as f64 / (1 << 20) as f64);
        // One ratio per round: the two loads ran back to back.
        let pairs = whole.iter().zip(&units);
        let kps_ratios: Vec<f64> =
            pairs.clone().map(|(w, u)| ratio(u.fill.keys_per_sec, w.fill.keys_per_sec)).collect();
        let cpu_ratios: Vec<f64> =
            pairs.filter_map(|(w, u)| Some(ratio(u.fill.cpu_seconds?, w.fill.cpu_seconds?))).collect();
        let averages: Vec<f64> = whole.iter().chain(&units).filter_map(|t| t.load_average).collect();
        fig7.row(vec![
            Cell::num(f64::from(bits), 0),
            Cell::num(rounds as f64, 0),
            spread_cell(&pick(&whole, kps), 0),
            spread_cell(&pick(&units, kps), 0),
            spread_cell(&kps_ratios, 3),
            spread_cell(&pick(&whole, cpu), 2),
            spread_cell(&pick(&units, cpu), 2),
            spread_cell(&cpu_ratios, 3),
            spread_cell(&pick(&whole, written), 2),
            spread_cell(&pick(&units, written), 2),
            spread_cell(&averages, 1),
            Cell::text(if bits == 4 { "0.999 (4.818 vs 4.823 MB/s)" } else { "about 1" }),
        ]);
    }
    report.tables.push(fig7);
    report.tables.push(loads_table);
    report.note(format!(
        "{num} keys of 32 B + 32 B per load (LevelDB's shape: 2K-key tables, 4K-key flushes each settled before the next, L0 compacted at 4 files), flushes and compactions in the time; CPU s: the process's user + system seconds over the load, all threads; written: flush + compaction bytes; load average: the machine's one-minute figure when each load started; a round loads both layouts back to back, rounds alternate which goes first; ratios are per round"
    ));
    report.note("seed 003 Fig. 7: loading 100 GB, ElasticBF 4.818 MB/s against LevelDB's 4.823 MB/s at 4 bits/key, its filters built on several threads; ours are built on the flush/compaction thread");
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(spread(&[4.0, 1.0, 3.0, 2.0]), (1.0, 2.5, 4.0));
        assert_eq!(spread(&[5.0, 1.0, 3.0]), (1.0, 3.0, 5.0));
        assert!(spread(&[]).1.is_nan());
    }

    #[test]
    fn variants_name_the_bits_per_key() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(points(&v(&["2", "6"]), false).unwrap(), [(2, ROUNDS_OTHER), (6, ROUNDS_OTHER)]);
        assert_eq!(points(&[], false).unwrap()[0], (4, ROUNDS_SEED_POINT));
        assert!(points(&v(&["3"]), false).is_err());
        assert!(points(&v(&["x"]), false).is_err());
    }

    #[test]
    fn rounds_alternate_which_layout_loads_first() {
        let firsts: Vec<bool> = (0..4).map(units_first).collect();
        assert_eq!(firsts, [true, false, true, false]);
    }
}
