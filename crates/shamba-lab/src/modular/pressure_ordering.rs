//! `memory-pressure`'s reading of seed 002's two claims about its Figs. 6-7, per panel
//! (distribution x alpha): which SHaMBa family wins at each cache size (the seed: prop under
//! 50% of the metadata, eq from 50%), and how much memory SHaMBa needs for Plain's I/Os (the
//! seed: about a third).

use shamba_cli::bench::keys::KeyDistribution;

use crate::modular::memory_pressure::{dist_name, find, CellResult};
use crate::support::report::{Cell, Table};

/// The eq family of the seed's figures.
const EQ: [&str; 3] = ["eq", "eq-P", "eq-F"];
/// The prop family.
const PROP: [&str; 3] = ["prop", "prop-P", "prop-F"];
/// Every SHaMBa variant of the seed's figures.
const SHAMBA: [&str; 6] = ["eq", "eq-P", "eq-F", "prop", "prop-P", "prop-F"];

/// Two families whose I/Os differ by less than this share are a tie: with 30K lookups per
/// cell the sampling noise of an I/O rate near 1 is about 1%.
const TIE: f64 = 0.03;

/// The panel a table row belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Panel {
    /// Lookup distribution.
    pub dist: KeyDistribution,
    /// Fraction of lookups for existing keys.
    pub alpha: f64,
}

/// The family member with the fewest I/Os in a cell.
fn best_of<'a>(cells: &[CellResult], names: &[&'a str], pct: f64, p: Panel) -> Option<(&'a str, f64)> {
    names
        .iter()
        .filter_map(|&n| find(cells, n, pct, p.dist, p.alpha).map(|r| (n, r.ios_per_op)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// Which family wins: "eq", "prop" or "tie" (within [`TIE`]).
pub fn winner(eq: f64, prop: f64) -> &'static str {
    let hi = eq.max(prop);
    if hi <= 0.0 || (eq - prop).abs() <= TIE * hi {
        "tie"
    } else if prop < eq {
        "prop"
    } else {
        "eq"
    }
}

/// The seed's expected winner at `pct`% of the metadata.
pub fn seed_winner(pct: f64) -> &'static str {
    if pct < 50.0 {
        "prop"
    } else {
        "eq"
    }
}

/// Per panel and cache size: the best of each family and whether the seed's ordering holds.
pub fn ordering_table(pcts: &[f64], panels: &[Panel], cells: &[CellResult]) -> Table {
    let mut t = Table::new(
        "ordering",
        "Seed 002's ordering per panel: best eq-family vs best prop-family I/Os (the seed: prop best under 50%, eq from 50%; a tie is within 3%)",
        &["dist", "alpha", "cache %", "best eq", "eq I/Os", "best prop", "prop I/Os", "plain I/Os", "winner", "seed", "agrees"],
    );
    for &p in panels {
        for &pct in pcts {
            let (Some(eq), Some(prop)) = (best_of(cells, &EQ, pct, p), best_of(cells, &PROP, pct, p)) else {
                continue;
            };
            let plain = find(cells, "plain", pct, p.dist, p.alpha).map(|r| r.ios_per_op);
            let won = winner(eq.1, prop.1);
            let agrees = if won == "tie" {
                "tie"
            } else if won == seed_winner(pct) {
                "yes"
            } else {
                "no"
            };
            t.row(vec![
                Cell::text(dist_name(p.dist)),
                Cell::num(p.alpha, 1),
                Cell::num(pct, 0),
                Cell::text(eq.0),
                Cell::num(eq.1, 3),
                Cell::text(prop.0),
                Cell::num(prop.1, 3),
                Cell::opt(plain, 3),
                Cell::text(won),
                Cell::text(seed_winner(pct)),
                Cell::text(agrees),
            ]);
        }
    }
    t
}

/// The smallest cache % at which the curve `points` (cache %, I/Os; sorted by cache %) comes
/// down to `target` I/Os, linear between points; `None` if it never does. A curve already
/// under the target at its first point answers that point (the grid says no less).
pub fn memory_for(points: &[(f64, f64)], target: f64) -> Option<f64> {
    let first = points.first()?;
    if first.1 <= target {
        return Some(first.0);
    }
    points.windows(2).find_map(|w| {
        let [(x0, y0), (x1, y1)] = [w.first()?, w.get(1)?].map(|&p| p);
        if y1 <= target && y0 > target {
            Some(x0 + (x1 - x0) * (y0 - target) / (y0 - y1))
        } else {
            None
        }
    })
}

/// Per panel and Plain cache size: the cache SHaMBa (the best of the six variants in each
/// cell, chosen after the fact) needs for Plain's I/Os there.
pub fn same_ios_table(pcts: &[f64], panels: &[Panel], cells: &[CellResult]) -> Table {
    let mut t = Table::new(
        "same-ios",
        "Memory for the same I/Os: the cache % at which the best SHaMBa variant reads as few I/Os as Plain at its cache % (the seed: about a third of the memory); '<=' = already at the grid's smallest size",
        &["dist", "alpha", "plain cache %", "plain I/Os", "SHaMBa cache %", "SHaMBa / plain memory"],
    );
    for &p in panels {
        let curve: Vec<(f64, f64)> =
            pcts.iter().filter_map(|&pct| best_of(cells, &SHAMBA, pct, p).map(|b| (pct, b.1))).collect();
        for &pct in pcts {
            let Some(plain) = find(cells, "plain", pct, p.dist, p.alpha) else { continue };
            let need = memory_for(&curve, plain.ios_per_op);
            let at_floor = need.is_some_and(|m| curve.first().is_some_and(|f| f.0 == m));
            t.row(vec![
                Cell::text(dist_name(p.dist)),
                Cell::num(p.alpha, 1),
                Cell::num(pct, 0),
                Cell::num(plain.ios_per_op, 3),
                match need {
                    Some(m) if at_floor => Cell::text(format!("<={m:.0}")),
                    Some(m) => Cell::num(m, 1),
                    None => Cell::text("-"),
                },
                Cell::opt(need.map(|m| m / pct), 2),
            ]);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_for_interpolates_between_grid_points() {
        let curve = [(10.0, 2.0), (25.0, 1.0), (40.0, 0.5)];
        // Halfway between 2.0 and 1.0 is halfway between 10% and 25%.
        assert_eq!(memory_for(&curve, 1.5), Some(17.5));
        assert_eq!(memory_for(&curve, 3.0), Some(10.0));
        assert_eq!(memory_for(&curve, 0.4), None);
        assert_eq!(memory_for(&[], 1.0), None);
    }

    #[test]
    fn winner_calls_close_families_a_tie() {
        assert_eq!(winner(1.0, 0.5), "prop");
        assert_eq!(winner(0.5, 1.0), "eq");
        assert_eq!(winner(1.0, 0.99), "tie");
        assert_eq!(winner(0.0, 0.0), "tie");
        assert_eq!(seed_winner(40.0), "prop");
        assert_eq!(seed_winner(50.0), "eq");
    }
}
