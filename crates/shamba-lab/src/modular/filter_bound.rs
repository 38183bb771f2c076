//! The fewest block reads per empty lookup any policy could make with a given number of
//! resident metadata bytes, in hindsight: `exp memory-pressure`'s distance to the optimum.
//!
//! Given how often the measured lookups visit each table (the trace, replayed from the very
//! keys `bench` draws: [`crate::elastic::unit_oracle::empty_lookup_visits`]), choose for every table
//! how much of its filter (bits per key `b`) and of its index (a share `x`) stay resident,
//! the bytes summed over the tables at most the budget. A visit then costs, at the least,
//! the reads its false positive brings (a data block, and the index block when the index is
//! not resident), or, if the policy reads the rest of the filter first, that read plus the
//! false positives of the whole filter:
//!
//! `cost(x, b) = min(p(b) (2 - x), p(b) + p(B) (2 - x))`
//!
//! with `p` the FP rate at `b` bits per key and `B` the bits per key the tables are built
//! with. Each table's options form a curve of (bytes, expected reads); the assignment that
//! may mix options in part (the fractional relaxation, as a partitioned index or filter
//! does when some of its partitions are resident) is solved exactly by taking the lower
//! convex hull of each table's curve and then the hull segments of all tables by reads
//! saved per byte, largest first: the LP of a multiple-choice knapsack. No static
//! assignment of the same bytes, whole or partial, does better.
//!
//! `p` is a floor on every filter of the family: for Bloom filters (whole, modules, units,
//! partitions: a split filter's FP rate is the product of its parts', each at least the
//! ideal Bloom filter's) `p(b) = 2^(-b ln 2)`, the standard Bloom filter with the best real
//! number of probes; for any filter at all (Ribbon included) `p(b) = 2^-b`, the
//! information-theoretic floor. What the bound does not model: a policy's cache also keeps
//! data blocks, so under skewed lookups a hot key's false positive may be read once and
//! then hit; and the warm-up, which the bound's steady state leaves out.

/// A table as the bound sees it: how often it is visited and what its metadata weighs.
#[derive(Debug, Clone, Copy)]
pub struct TableCost {
    /// Empty-lookup visits in the trace.
    pub visits: u64,
    /// Keys in the table (a filter of `b` bits per key takes `entries * b / 8` bytes).
    pub entries: u64,
    /// Bytes of its index.
    pub index_bytes: u64,
}

/// The floor on a filter's FP rate at `b` bits per key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Floor {
    /// Any Bloom filter, split or whole: `2^(-b ln 2)`.
    Bloom,
    /// Any filter: `2^-b`.
    AnyFilter,
}

impl Floor {
    /// FP rate at `bits` per key.
    pub fn fpr(self, bits: f64) -> f64 {
        match self {
            Floor::Bloom => 0.5f64.powf(bits * std::f64::consts::LN_2),
            Floor::AnyFilter => 0.5f64.powf(bits),
        }
    }
}

/// Steps of a table's filter bits between 0 and the built bits per key. The hull between
/// two steps is a chord of the convex FP curve, above it by at most a hair at this count.
const BIT_STEPS: usize = 400;

/// The fewest expected reads (summed over the trace's visits) any assignment of
/// `budget_bytes` of filter and index bytes could give, the tables built with
/// `built_bits` bits per key.
pub fn min_reads(tables: &[TableCost], floor: Floor, built_bits: f64, budget_bytes: u64) -> f64 {
    let full_fpr = floor.fpr(built_bits);
    min_reads_over(tables, budget_bytes, |t| {
        let mut points = Vec::with_capacity(2 * (BIT_STEPS + 1));
        for step in 0..=BIT_STEPS {
            let bits = built_bits * step as f64 / BIT_STEPS as f64;
            let p = floor.fpr(bits);
            let filter_bytes = t.entries as f64 * bits / 8.0;
            for (x, index_bytes) in [(0.0, 0.0), (1.0, t.index_bytes as f64)] {
                points.push((filter_bytes + index_bytes, (p * (2.0 - x)).min(p + full_fpr * (2.0 - x))));
            }
        }
        points
    })
}

/// How the parts of a filter that are not resident are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fetch {
    /// One read per part, each only if the parts before it passed the key.
    EachPart,
    /// All the parts after the resident ones in one read (they lie together in the file).
    RestInOneRead,
}

/// A filter part as the parts bound sees it: its bits per key and its FP rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    /// Bits per key it takes.
    pub bits: f64,
    /// FP rate of an absent key that reached it.
    pub fpr: f64,
}

impl Part {
    /// Parts of `bits` each at `floor`'s FP rate for those bits: the best any filter of
    /// the family could do with parts of these sizes.
    pub fn at_floor(floor: Floor, bits: &[f64]) -> Vec<Part> {
        bits.iter().map(|&b| Part { bits: b, fpr: floor.fpr(b) }).collect()
    }
}

/// The fewest expected reads any assignment of `budget_bytes` could give when every
/// table's filter is built of `parts` (in probe order) and only whole parts are resident,
/// as in the engine: a table with its first `k` parts resident probes them, then reads the
/// next parts (one read each, or all in one read, as `fetch` says) while they pass the key,
/// or stops reading parts and pays the index and data reads of a positive instead:
///
/// `cost(k, x) = min over m >= k of sum_{k <= j < m} F_j + F_m (2 - x)` (a read each),
/// `cost(k, x) = min(F_k (2 - x), F_k + F_n (2 - x))` (the rest in one read),
///
/// with `F_j` the FP rate of the first `j` parts together (the product of theirs). A table
/// may still hold its parts in part (some partitions resident), so the relaxation is the
/// same LP as [`min_reads`]'s; the difference between the two is what the parts cost,
/// which no policy over them recovers.
pub fn min_reads_parts(tables: &[TableCost], parts: &[Part], fetch: Fetch, budget_bytes: u64) -> f64 {
    // (bits, FP rate) of the first j parts, j = 0..=n.
    let prefix: Vec<(f64, f64)> = std::iter::once((0.0, 1.0))
        .chain(parts.iter().scan((0.0, 1.0), |s, p| {
            *s = (s.0 + p.bits, s.1 * p.fpr);
            Some(*s)
        }))
        .collect();
    let all = prefix.last().map_or(1.0, |p| p.1);
    min_reads_over(tables, budget_bytes, |t| {
        let mut points = Vec::with_capacity(2 * prefix.len());
        for (k, &(bits, fpr)) in prefix.iter().enumerate() {
            for (x, index_bytes) in [(0.0, 0.0), (1.0, t.index_bytes as f64)] {
                let mut cost = fpr * (2.0 - x);
                match fetch {
                    Fetch::EachPart => {
                        let mut fetched = 0.0;
                        for &(_, later) in prefix.iter().skip(k) {
                            cost = cost.min(fetched + later * (2.0 - x));
                            fetched += later;
                        }
                    }
                    Fetch::RestInOneRead => cost = cost.min(fpr + all * (2.0 - x)),
                }
                points.push((t.entries as f64 * bits / 8.0 + index_bytes, cost));
            }
        }
        points
    })
}

/// The LP optimum of giving `budget_bytes` to tables whose choices are `options(table)`:
/// (bytes, expected reads per visit) pairs.
fn min_reads_over(tables: &[TableCost], budget_bytes: u64, options: impl Fn(&TableCost) -> Vec<(f64, f64)>) -> f64 {
    // Every hull segment of every table: (reads saved per byte, bytes).
    let mut segments: Vec<(f64, f64)> = Vec::new();
    let mut reads = 0.0;
    for t in tables.iter().filter(|t| t.visits > 0) {
        let visits = t.visits as f64;
        let points = options(t).into_iter().map(|(bytes, cost)| (bytes, visits * cost)).collect();
        let hull = lower_hull(points);
        let Some(&(_, start)) = hull.first() else { continue };
        reads += start;
        for w in hull.windows(2) {
            if let [(b0, c0), (b1, c1)] = *w {
                segments.push(((c0 - c1) / (b1 - b0), b1 - b0));
            }
        }
    }
    // A table's segments come in falling slope, so taking all segments by slope takes
    // each table's in order: the LP optimum.
    segments.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut left = budget_bytes as f64;
    for (slope, bytes) in segments {
        if left <= 0.0 {
            break;
        }
        let take = bytes.min(left);
        reads -= slope * take;
        left -= take;
    }
    reads.max(0.0)
}

/// The lower convex hull of `points` (bytes, reads) from the cheapest in bytes, keeping
/// only the part where reads fall as bytes grow.
fn lower_hull(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut hull: Vec<(f64, f64)> = Vec::new();
    for p in points {
        // Same bytes as the last: the first (fewest reads) stays.
        if hull.last().is_some_and(|l| l.0 == p.0) {
            continue;
        }
        // Only points that read less than everything cheaper.
        if hull.last().is_some_and(|l| p.1 >= l.1) {
            continue;
        }
        while hull.len() >= 2 {
            let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // b lies on or above the chord from a to p: not on the lower hull.
            if (b.1 - a.1) * (p.0 - a.0) >= (p.1 - a.1) * (b.0 - a.0) {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
    hull
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(visits: u64) -> TableCost {
        TableCost { visits, entries: 8_000, index_bytes: 1_000 }
    }

    #[test]
    fn with_no_memory_a_visit_costs_an_index_and_a_data_read_or_a_filter_read() {
        let reads = min_reads(&[table(100)], Floor::Bloom, 10.0, 0);
        // Reading the whole filter (1 read) beats index + data (2 reads).
        let p10 = Floor::Bloom.fpr(10.0);
        assert!((reads - 100.0 * (1.0 + 2.0 * p10)).abs() < 1e-6, "{reads}");
    }

    #[test]
    fn with_every_byte_resident_only_the_false_positives_are_left() {
        // 10 bits x 8000 keys = 10 KB of filter + 1 KB of index.
        let reads = min_reads(&[table(100)], Floor::Bloom, 10.0, 11_000);
        assert!((reads - 100.0 * Floor::Bloom.fpr(10.0)).abs() < 1e-6, "{reads}");
        let any = min_reads(&[table(100)], Floor::AnyFilter, 10.0, 11_000);
        assert!((any - 100.0 / 1024.0).abs() < 1e-6, "{any}");
    }

    #[test]
    fn bytes_go_to_the_visited_table_and_the_bound_falls_with_the_budget() {
        let tables = [table(1_000), table(1)];
        let mut last = f64::INFINITY;
        for budget in [0, 500, 1_000, 2_000, 5_000, 11_000, 22_000] {
            let r = min_reads(&tables, Floor::Bloom, 10.0, budget);
            assert!(r <= last + 1e-9, "{budget}: {r} > {last}");
            last = r;
        }
        // 11 KB: everything of the hot table, nothing of the cold one.
        let r = min_reads(&tables, Floor::Bloom, 10.0, 11_000);
        let hot = 1_000.0 * Floor::Bloom.fpr(10.0);
        let cold = 1.0 + 2.0 * Floor::Bloom.fpr(10.0);
        assert!((r - (hot + cold)).abs() < 1e-6, "{r}");
    }

    #[test]
    fn no_whole_assignment_beats_the_bound() {
        // Every whole choice of (index in or out, filter bits on a coarse grid) for two
        // tables within the budget reads at least the bound.
        let tables = [table(300), table(120)];
        let budget = 7_000;
        let bound = min_reads(&tables, Floor::Bloom, 10.0, budget);
        let options: Vec<(f64, f64)> = (0..=20)
            .flat_map(|s| [0.0, 1.0].map(|x| (x, s as f64 * 0.5)))
            .map(|(x, bits)| {
                let p = Floor::Bloom.fpr(bits);
                let cost = (p * (2.0 - x)).min(p + Floor::Bloom.fpr(10.0) * (2.0 - x));
                (8_000.0 * bits / 8.0 + x * 1_000.0, cost)
            })
            .collect();
        let mut best = f64::INFINITY;
        for a in &options {
            for b in &options {
                if a.0 + b.0 <= budget as f64 {
                    best = best.min(300.0 * a.1 + 120.0 * b.1);
                }
            }
        }
        assert!(bound <= best + 1e-9, "bound {bound} above a whole assignment {best}");
        assert!(bound > 0.9 * best, "bound {bound} far below the best whole assignment {best}");
    }

    #[test]
    fn whole_parts_bound_the_fractional_bits_from_above() {
        let tables = [table(300), table(120), table(40)];
        for budget in [0, 2_000, 7_000, 15_000, 40_000] {
            let bits = min_reads(&tables, Floor::Bloom, 10.0, budget);
            let halves = min_reads_parts(&tables, &Part::at_floor(Floor::Bloom, &[5.0, 5.0]), Fetch::EachPart, budget);
            let tenths = min_reads_parts(&tables, &Part::at_floor(Floor::Bloom, &[1.0; 10]), Fetch::EachPart, budget);
            assert!(bits <= halves + 1e-9 && bits <= tenths + 1e-9, "{budget}: {bits} {halves} {tenths}");
        }
        // One part of all the bits, nothing resident: read it (1), then its positives.
        let whole = min_reads_parts(&[table(100)], &Part::at_floor(Floor::Bloom, &[10.0]), Fetch::EachPart, 0);
        assert!((whole - 100.0 * (1.0 + 2.0 * Floor::Bloom.fpr(10.0))).abs() < 1e-6, "{whole}");
        // Two halves, nothing resident: the second half is read only past the first.
        let two = min_reads_parts(&[table(100)], &Part::at_floor(Floor::Bloom, &[5.0, 5.0]), Fetch::EachPart, 0);
        let p5 = Floor::Bloom.fpr(5.0);
        assert!((two - 100.0 * (1.0 + p5 + 2.0 * Floor::Bloom.fpr(10.0))).abs() < 1e-6, "{two}");
        // The first half's bytes (5,000): at most what holding it costs (its positives read
        // the second half), the LP free to spend them otherwise.
        let half = min_reads_parts(&[table(100)], &Part::at_floor(Floor::Bloom, &[5.0, 5.0]), Fetch::EachPart, 5_000);
        assert!(half <= 100.0 * (p5 + 2.0 * Floor::Bloom.fpr(10.0)) + 1e-6, "{half}");
        assert!(half < two / 2.0, "{half} {two}");
    }

    #[test]
    fn fine_parts_read_together_come_near_the_fractional_bound() {
        let tables = [table(300), table(120), table(40), table(5)];
        for budget in [2_000, 7_000, 15_000, 25_000] {
            let bits = min_reads(&tables, Floor::AnyFilter, 20.0, budget);
            let each = min_reads_parts(&tables, &Part::at_floor(Floor::AnyFilter, &[1.0; 20]), Fetch::EachPart, budget);
            let together =
                min_reads_parts(&tables, &Part::at_floor(Floor::AnyFilter, &[1.0; 20]), Fetch::RestInOneRead, budget);
            assert!(bits <= together + 1e-9 && together <= each + 1e-9, "{budget}: {bits} {together} {each}");
            // A chain of one-bit parts read one by one pays about twice the last resident
            // part's FP rate; read together, once: within a few per cent of the bound.
            assert!(together < 1.05 * bits, "{budget}: together {together}, bound {bits}");
            assert!(each > 1.5 * bits, "{budget}: a read each {each}, bound {bits}");
        }
    }

    #[test]
    fn the_hull_drops_points_above_a_chord() {
        let h = lower_hull(vec![(0.0, 10.0), (1.0, 9.5), (2.0, 4.0), (3.0, 4.0), (4.0, 1.0)]);
        assert_eq!(h, vec![(0.0, 10.0), (2.0, 4.0), (4.0, 1.0)]);
    }
}
