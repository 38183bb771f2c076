//! The lookups' workload, one option shared by every experiment that draws lookups
//! (`--distribution`, `--zipf-theta`, `--normal-sd`), so a reader of any report knows which
//! distribution ran and with which parameter.
//!
//! An experiment that measures one distribution takes the first one named; one that sweeps
//! distributions takes them all. Unset, each experiment keeps its own (mostly uniform), and
//! the parameters default to the seeds': Zipf exponent 2 with the hot keys neighbours
//! (seed 002, Fig. 2a), 0.99 for the scattered Zipfian (YCSB's), and a normal with a
//! standard deviation of 5 keys (seed 002, Sec. 5).

use shamba_cli::bench::keys::KeyDistribution;

use crate::support::lookups::ReadSpec;

/// Seed 002's Zipf exponent (its Fig. 2a, Sec. 5).
pub const SEED_ZIPF_THETA: f64 = 2.0;
/// YCSB's Zipf exponent, for the scattered Zipfian.
pub const YCSB_ZIPF_THETA: f64 = 0.99;
/// Seed 002's standard deviation of the normal workload, in keys.
pub const SEED_NORMAL_SD: f64 = 5.0;

/// The workload options of `shamba-lab exp`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WorkloadArgs {
    /// Lookup distributions (comma-separated), replacing the experiment's own: uniform,
    /// zipfian (hot keys scattered), zipf-contiguous (hot keys neighbours, seed 002's Fig.
    /// 2a), normal.
    #[arg(long = "distribution", value_enum, value_delimiter = ',')]
    pub distributions: Vec<KeyDistribution>,
    /// Zipf exponent (default: 2, the seed's, for zipf-contiguous; 0.99 for zipfian).
    #[arg(long)]
    pub zipf_theta: Option<f64>,
    /// Standard deviation of `normal`, in keys (default: 5, the seed's).
    #[arg(long)]
    pub normal_sd: Option<f64>,
}

impl WorkloadArgs {
    /// The distributions to sweep: those named, else `own`.
    pub fn list(&self, own: &[KeyDistribution]) -> Vec<KeyDistribution> {
        if self.distributions.is_empty() {
            own.to_vec()
        } else {
            self.distributions.clone()
        }
    }

    /// The one distribution of an experiment that measures one: the first named, else `own`.
    pub fn single(&self, own: KeyDistribution) -> KeyDistribution {
        self.distributions.first().copied().unwrap_or(own)
    }

    /// The Zipf exponent `dist` runs with.
    pub fn theta(&self, dist: KeyDistribution) -> f64 {
        self.zipf_theta.unwrap_or(match dist {
            KeyDistribution::ZipfContiguous => SEED_ZIPF_THETA,
            _ => YCSB_ZIPF_THETA,
        })
    }

    /// The normal's standard deviation in keys.
    pub fn sd(&self) -> f64 {
        self.normal_sd.unwrap_or(SEED_NORMAL_SD)
    }

    /// `base` drawing its lookups from `dist` with this workload's parameters.
    pub fn spec(&self, dist: KeyDistribution, base: ReadSpec) -> ReadSpec {
        ReadSpec { distribution: dist, zipf_theta: self.theta(dist), normal_sd: Some(self.sd()), ..base }
    }

    /// The line every report carries: which lookups ran.
    pub fn describe(&self, dists: &[KeyDistribution], n: u64) -> String {
        let names: Vec<String> = dists.iter().map(|&d| d.describe(self.theta(d), Some(self.sd()), n)).collect();
        format!("lookups: {} (--distribution, --zipf-theta, --normal-sd)", names.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_seeds_and_named_options_win() {
        let w = WorkloadArgs::default();
        assert_eq!(w.single(KeyDistribution::Uniform), KeyDistribution::Uniform);
        assert_eq!(w.theta(KeyDistribution::ZipfContiguous), 2.0);
        assert_eq!(w.theta(KeyDistribution::Zipfian), 0.99);
        let s = w.spec(KeyDistribution::Normal, ReadSpec::empty(0, 1, 1));
        assert_eq!((s.distribution, s.normal_sd), (KeyDistribution::Normal, Some(5.0)));
        let w = WorkloadArgs {
            distributions: vec![KeyDistribution::ZipfContiguous, KeyDistribution::Normal],
            zipf_theta: Some(1.5),
            normal_sd: Some(100.0),
        };
        assert_eq!(w.single(KeyDistribution::Uniform), KeyDistribution::ZipfContiguous);
        assert_eq!(w.list(&[KeyDistribution::Uniform]).len(), 2);
        let line = w.describe(&w.list(&[]), 1000);
        assert!(line.contains("theta 1.5") && line.contains("sd 100 keys"), "{line}");
    }
}
