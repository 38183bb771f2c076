//! The engine options a stress run uses: small memtables, tables and levels, so a run of a
//! few seconds flushes, compacts and builds a tree of several levels; and the features
//! that change how data is laid out or read (compression, partitioned metadata, cached
//! metadata, a small block cache, few open files, tiered compaction, probe policies) drawn
//! from the seed kept in the expected-state file, so every process of one database uses
//! the same options.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shamba::filter::{FilterLayout, ModuleSizes};
use shamba::{CompactionPriority, CompactionStyle, Compression, Options, ProbePolicy, ShambaPolicy, Skipping};

/// Compaction style asked for on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// One sorted run per level.
    Leveled,
    /// Several runs per level.
    Tiered,
}

/// The options of a stress database drawn from `seed`, and a one-line description.
pub fn engine_options(seed: u64, style: Option<Style>) -> (Options, String) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut o = Options {
        write_buffer_size: rng.gen_range(32..=256) << 10,
        target_file_size: rng.gen_range(32..=128) << 10,
        max_bytes_for_level_base: rng.gen_range(128..=512) << 10,
        size_ratio: rng.gen_range(3..=6),
        level0_compaction_trigger: rng.gen_range(2..=4),
        block_size: [512, 1024, 4096][rng.gen_range(0..3)],
        cache_capacity: rng.gen_range(64..=1024) << 10,
        max_open_files: rng.gen_range(16..=40),
        ..Options::default()
    };
    let tiered = match style {
        Some(s) => s == Style::Tiered,
        None => rng.gen_bool(0.3),
    };
    if tiered {
        o.compaction_style = CompactionStyle::Tiered;
    } else if rng.gen_bool(0.5) {
        o.compaction_priority = CompactionPriority::MinOverlappingRatio;
    }
    o.align_compaction_outputs = rng.gen_bool(0.7);
    if rng.gen_bool(0.5) {
        o.compression = Compression::Lz4;
    }
    o.partition_index_and_filters = rng.gen_bool(0.3);
    o.cache_index_and_filter_blocks = rng.gen_bool(0.4);
    // Sometimes a limit a few tables fill, so pinned and cached tables serve side by side.
    if rng.gen_bool(0.3) {
        o.pinned_metadata_limit = rng.gen_range(0..64 << 10);
    }
    let policy = rng.gen_range(0..4);
    match policy {
        1 => o.probe_policy = ProbePolicy::NoLastLevel,
        2 => {
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
            o.probe_policy =
                ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::HitOdds, ..ShambaPolicy::default() });
        }
        3 => {
            // Small Ribbon modules, those not resident read together.
            o.filter_policy.ribbon_from_level = Some(0);
            o.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 6 });
            o.probe_policy = ProbePolicy::Shamba(ShambaPolicy {
                skipping: Skipping::HitOdds,
                read_rest_together: true,
                ..ShambaPolicy::default()
            });
        }
        _ => {}
    }
    let text = format!(
        "{} compaction, memtable {} KiB, tables {} KiB, L1 {} KiB, ratio {}, L0 trigger {}, blocks {} B, \
         {:?} compression, {} metadata{} (at most {} KiB pinned), cache {} KiB, {} open files, {} probes{}",
        if tiered { "tiered" } else { "leveled" },
        o.write_buffer_size >> 10,
        o.target_file_size >> 10,
        o.max_bytes_for_level_base >> 10,
        o.size_ratio,
        o.level0_compaction_trigger,
        o.block_size,
        o.compression,
        if o.partition_index_and_filters { "partitioned" } else { "whole" },
        if o.cache_index_and_filter_blocks { " in the block cache" } else { " pinned" },
        o.pinned_metadata_limit >> 10,
        o.cache_capacity >> 10,
        o.max_open_files,
        o.probe_policy.name(),
        if policy == 3 { " (6 Ribbon modules, read together)" } else { "" },
    );
    (o, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_drawn_configuration_is_valid() {
        for seed in 0..200 {
            let (o, text) = engine_options(seed, None);
            assert!(o.validate().is_ok(), "seed {seed}: {text}: {:?}", o.validate());
        }
    }
}
