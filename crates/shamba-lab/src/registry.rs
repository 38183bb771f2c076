//! Every experiment, written once: its name, its family (the folder its code lives in), the
//! seed and figure it reproduces, what it measures, and the function that runs it. The
//! `exp` command's choices, `list`, and the smoke test's check that it runs every experiment
//! all read this table.

use std::error::Error;

use clap::builder::PossibleValue;

use crate::args::ExpArgs;
use crate::support::report::Report;
use crate::{elastic, hash_sharing, modular, read_path, ribbon};

/// One experiment.
#[derive(Debug)]
pub struct Experiment {
    /// What `shamba-lab exp` calls it.
    pub name: &'static str,
    /// The folder of `src/` its code lives in.
    pub family: &'static str,
    /// The seed document and the figure or table it reproduces ("-": the engine's own).
    pub source: &'static str,
    /// What it measures, in a line.
    pub about: &'static str,
    /// Run it.
    pub run: fn(&ExpArgs) -> Result<Report, Box<dyn Error>>,
}

/// Every experiment, by family, then in the order of the seed's figures.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "hash-cost",
        family: "hash_sharing",
        source: "000, Table 1",
        about: "ns to hash 8 B .. 1 KiB keys per hash function",
        run: hash_sharing::hash_cost::run,
    },
    Experiment {
        name: "hash-fpr",
        family: "hash_sharing",
        source: "000, Table 2",
        about: "FPR with one digest + rotation vs k independent hashes",
        run: hash_sharing::hash_fpr::run,
    },
    Experiment {
        name: "units-fpr",
        family: "hash_sharing",
        source: "000, Table 3",
        about: "7 filter units: rotation vs double hashing",
        run: hash_sharing::units_fpr::run,
    },
    Experiment {
        name: "lookup-breakdown",
        family: "hash_sharing",
        source: "000, Fig. 1",
        about: "engine: lookup time by stage (hash, filter, index, data) by data size and device",
        run: hash_sharing::lookup_breakdown::run,
    },
    Experiment {
        name: "filter-latency",
        family: "hash_sharing",
        source: "000, Fig. 2-3",
        about: "ns per empty probe vs key size: rotation, k hashes, double hashing, blocked",
        run: hash_sharing::filter_latency::run,
    },
    Experiment {
        name: "hash-sharing",
        family: "hash_sharing",
        source: "000, Fig. 5-9",
        about: "engine: empty lookups with one shared digest vs one per table (--num N: at the seed's shape)",
        run: hash_sharing::on_engine::run,
    },
    Experiment {
        name: "mbf",
        family: "modular",
        source: "002, Table 3",
        about: "modular Bloom filters: FPR and module accesses",
        run: modular::mbf::run,
    },
    Experiment {
        name: "sst-skew",
        family: "modular",
        source: "002, Fig. 2, 3, 5",
        about: "engine: accesses over tables, heat map by level, utility histogram, which beta",
        run: modular::sst_skew::run,
    },
    Experiment {
        name: "memory-pressure",
        family: "modular",
        source: "002, Fig. 6-7, Table 1",
        about: "engine: I/Os per lookup vs cache size, every policy",
        run: modular::memory_pressure::run,
    },
    Experiment {
        name: "memory-bound",
        family: "modular",
        source: "-",
        about: "engine: memory-pressure's distance to the offline bound alone, on a small grid",
        run: modular::memory_bound::run,
    },
    Experiment {
        name: "modules",
        family: "modular",
        source: "002, Fig. 8-10",
        about: "engine: SHaMBa-eq with 1, 2, 3, 7 modules",
        run: modular::modules::run,
    },
    Experiment {
        name: "partitioned",
        family: "modular",
        source: "002, Fig. 11",
        about: "engine: SHaMBa on partitioned filters at 5-35%, modules of at least a page",
        run: modular::partitioned::run,
    },
    Experiment {
        name: "monkey",
        family: "modular",
        source: "002, Fig. 12",
        about: "engine: uniform vs Monkey bits/key at equal memory",
        run: modular::monkey::run,
    },
    Experiment {
        name: "latency",
        family: "modular",
        source: "002, Fig. 13-14, 16",
        about: "engine: mean lookup latency of Plain vs SHaMBa eq/prop under memory pressure (emulated SSD); speedup by device",
        run: modular::latency::run,
    },
    Experiment {
        name: "index-vs-filter",
        family: "modular",
        source: "002, Table 2, Fig. 15",
        about: "engine: index / filter bytes over entry and key sizes; SHaMBa-eq speedup as the index grows",
        run: modular::index_vs_filter::run,
    },
    Experiment {
        name: "elastic",
        family: "elastic",
        source: "003, Fig. 5",
        about: "engine: ElasticBF vs Plain at 4 bits/key",
        run: elastic::versus_plain::run,
    },
    Experiment {
        name: "elastic-seed",
        family: "elastic",
        source: "003, Fig. 5-6",
        about: "engine: elastic's table at the seed's set-up alone (O_DIRECT, filter loads counted)",
        run: elastic::seed_setup::run,
    },
    Experiment {
        name: "elastic-sweep",
        family: "elastic",
        source: "003, Fig. 6-7",
        about: "engine: Elastic vs Plain over 2-8 bits/key with a warmed block cache; load throughput, units vs whole filters",
        run: elastic::sweep::run,
    },
    Experiment {
        name: "elastic-l0",
        family: "elastic",
        source: "003, Fig. 5",
        about: "engine: elastic's seed set-up with L0 held at 8 files (LevelDB's slowdown mark), cold start, O_DIRECT",
        run: elastic::held_l0::run,
    },
    Experiment {
        name: "elastic-load",
        family: "elastic",
        source: "003, Fig. 7",
        about: "engine: load throughput, units vs whole filters, in alternated loads (median and spread)",
        run: elastic::load_alternated::run,
    },
    Experiment {
        name: "filter-share",
        family: "elastic",
        source: "003, overhead",
        about: "filter building as a share of building a table (one memtable flushed)",
        run: elastic::filter_share::run,
    },
    Experiment {
        name: "ribbon",
        family: "ribbon",
        source: "004",
        about: "bits/key vs FPR, build and query ns: Bloom vs Ribbon",
        run: ribbon::filters::run,
    },
    Experiment {
        name: "ribbon-hybrid",
        family: "ribbon",
        source: "004",
        about: "engine: Ribbon from level L (memory, build CPU, lookups), construction memory, cache entries by kind",
        run: ribbon::hybrid::run,
    },
    Experiment {
        name: "headline",
        family: "read_path",
        source: "002",
        about: "engine: Plain vs SHaMBa under memory pressure, default options",
        run: read_path::headline::run,
    },
    Experiment {
        name: "prefetch",
        family: "read_path",
        source: "-",
        about: "engine: every candidate's filter line prefetched vs level by level",
        run: read_path::prefetch::run,
    },
    Experiment {
        name: "multi-get",
        family: "read_path",
        source: "-",
        about: "engine: multi_get of 32 keys vs 32 single gets on prefetch's tree",
        run: read_path::multi_get::run,
    },
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name)
}

/// The names `exp` accepts, each with its line of help.
pub fn possible_values() -> Vec<PossibleValue> {
    EXPERIMENTS.iter().map(|e| PossibleValue::new(e.name).help(e.about)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, e) in EXPERIMENTS.iter().enumerate() {
            assert!(EXPERIMENTS[..i].iter().all(|o| o.name != e.name), "{} twice", e.name);
            assert_eq!(find(e.name).map(|f| f.source), Some(e.source));
        }
        assert!(find("no-such-experiment").is_none());
    }

    #[test]
    fn every_family_is_a_folder_of_the_crate() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for e in EXPERIMENTS {
            assert!(src.join(e.family).is_dir(), "{}: no folder {}", e.name, e.family);
        }
    }
}
