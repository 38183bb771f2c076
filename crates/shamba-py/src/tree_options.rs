//! The keyword options that shape one tree (filters, probing, compaction, blocks,
//! compression): `Db(**options)` gives them to every keyspace, `Db.keyspace(name,
//! **options)` and `Db(keyspaces={name: {...}})` to one.
//!
//! A keyspace's keywords apply over the database's options: what it does not name it
//! inherits. The filter layout (`layout`, `parts`, `first_bits_per_key`) and the probe
//! policy (`policy`, `elastic_budget_mb`, `life_time`, `read_rest_together`) are each rebuilt from their
//! keywords, the ones not given taken from the options they apply over.

use crate::options::{boolean, choice, float, int, out_of_range, usize_arg, MIB};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use shamba::filter::{Allocation, FilterLayout, ModuleSizes};
use shamba::{
    CompactionStyle, Compression, ElasticPolicy, KeyspaceOptions, Options, ProbePolicy, ShambaPolicy, Skipping,
};

/// Every keyword of one tree.
pub(crate) const TREE_KEYWORDS: &[&str] = &[
    "bits_per_key",
    "layout",
    "parts",
    "first_bits_per_key",
    "ribbon_from_level",
    "monkey",
    "policy",
    "elastic_budget_mb",
    "life_time",
    "read_rest_together",
    "compression",
    "compaction_style",
    "block_size",
];

/// The filter-layout and probe-policy keywords seen so far, applied together at the end.
#[derive(Default)]
pub(crate) struct TreeKeywords {
    layout: Option<String>,
    parts: Option<u8>,
    first_bits: Option<f64>,
    policy: Option<String>,
    budget_mb: Option<f64>,
    life_time: Option<u64>,
    rest_together: Option<bool>,
}

impl TreeKeywords {
    /// Apply the keyword `n` = `v` to `o` (or remember it for [`TreeKeywords::finish`]);
    /// `false` when `n` is not a tree keyword.
    ///
    /// # Errors
    ///
    /// `TypeError` for a value of the wrong type, `ValueError` for one out of range.
    pub(crate) fn take(&mut self, o: &mut Options, n: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
        match n {
            "bits_per_key" => o.filter_policy.bits_per_key = float(v, n, 0.0)?,
            "layout" => self.layout = Some(choice(v, n, &["whole", "modules-eq", "modules-prop", "units"])?),
            "parts" => self.parts = Some(u8::try_from(int(v, n, 1)?).map_err(|_| out_of_range(n, "at most 255"))?),
            "first_bits_per_key" => self.first_bits = Some(float(v, n, 0.0)?),
            "ribbon_from_level" => {
                o.filter_policy.ribbon_from_level = if v.is_none() { None } else { Some(usize_arg(v, n, 0)?) }
            }
            "monkey" => {
                o.filter_policy.allocation = if boolean(v, n)? { Allocation::Monkey } else { Allocation::Uniform }
            }
            "policy" => {
                self.policy = Some(choice(
                    v,
                    n,
                    &["plain", "no-last-level", "shamba", "shamba-p", "shamba-f", "shamba-odds", "elastic"],
                )?)
            }
            "elastic_budget_mb" => self.budget_mb = Some(float(v, n, 0.0)?),
            "life_time" => self.life_time = Some(int(v, n, 1)?),
            "read_rest_together" => self.rest_together = Some(boolean(v, n)?),
            "compression" => {
                o.compression = match choice(v, n, &["none", "lz4"])?.as_str() {
                    "lz4" => Compression::Lz4,
                    _ => Compression::None,
                }
            }
            "compaction_style" => {
                o.compaction_style = match choice(v, n, &["leveled", "tiered"])?.as_str() {
                    "tiered" => CompactionStyle::Tiered,
                    _ => CompactionStyle::Leveled,
                }
            }
            "block_size" => o.block_size = usize_arg(v, n, 64)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Rebuild the filter layout and the probe policy of `o` from the keywords given, the
    /// others taken from `o` as it was.
    pub(crate) fn finish(self, o: &mut Options) {
        if self.layout.is_some() || self.parts.is_some() || self.first_bits.is_some() {
            let (name, parts, first_bits) = describe_layout(&o.filter_policy.layout);
            let parts = self.parts.unwrap_or(parts);
            let first_bits_per_key = self.first_bits.unwrap_or(first_bits);
            o.filter_policy.layout = match self.layout.as_deref().unwrap_or(name) {
                "modules-eq" => FilterLayout::Modules(ModuleSizes::Equal { count: parts }),
                "modules-prop" => FilterLayout::Modules(ModuleSizes::Proportional { count: parts, first_bits_per_key }),
                "units" => FilterLayout::Units { count: parts },
                _ => FilterLayout::Whole,
            };
        }
        if self.policy.is_some() || self.budget_mb.is_some() || self.life_time.is_some() || self.rest_together.is_some()
        {
            let (budget_mb, life_time) = match &o.probe_policy {
                ProbePolicy::Elastic(e) => (e.budget_bytes as f64 / MIB, e.life_time),
                _ => (8.0, 1000),
            };
            let (budget_mb, life_time) = (self.budget_mb.unwrap_or(budget_mb), self.life_time.unwrap_or(life_time));
            let together = match &o.probe_policy {
                ProbePolicy::Shamba(p) => self.rest_together.unwrap_or(p.read_rest_together),
                _ => self.rest_together.unwrap_or(false),
            };
            let name = self.policy.unwrap_or_else(|| policy_name(&o.probe_policy).to_string());
            let shamba = |skipping| {
                ProbePolicy::Shamba(ShambaPolicy { skipping, read_rest_together: together, ..ShambaPolicy::default() })
            };
            o.probe_policy = match name.as_str() {
                "no-last-level" => ProbePolicy::NoLastLevel,
                "shamba" => shamba(Skipping::None),
                "shamba-p" => shamba(Skipping::Partial),
                "shamba-f" => shamba(Skipping::Full),
                "shamba-odds" => shamba(Skipping::HitOdds),
                "elastic" => ProbePolicy::Elastic(ElasticPolicy { life_time, budget_bytes: (budget_mb * MIB) as u64 }),
                _ => ProbePolicy::Plain,
            };
        }
    }
}

/// A layout's keyword values: its name, parts and first module's bits per key (the
/// defaults where the layout has none).
fn describe_layout(layout: &FilterLayout) -> (&'static str, u8, f64) {
    match layout {
        FilterLayout::Modules(ModuleSizes::Equal { count }) => ("modules-eq", *count, 2.0),
        FilterLayout::Modules(ModuleSizes::Proportional { count, first_bits_per_key }) => {
            ("modules-prop", *count, *first_bits_per_key)
        }
        FilterLayout::Units { count } => ("units", *count, 2.0),
        _ => ("whole", 2, 2.0),
    }
}

/// A probe policy's keyword name.
fn policy_name(p: &ProbePolicy) -> &'static str {
    match p {
        ProbePolicy::Plain => "plain",
        ProbePolicy::NoLastLevel => "no-last-level",
        ProbePolicy::Shamba(s) => match s.skipping {
            Skipping::None => "shamba",
            Skipping::Partial => "shamba-p",
            Skipping::Full => "shamba-f",
            Skipping::HitOdds => "shamba-odds",
        },
        ProbePolicy::Elastic(_) => "elastic",
    }
}

/// The options of one keyspace: `kwargs` over `base`.
///
/// # Errors
///
/// `TypeError` naming an unknown keyword (`what` says whose) or a value of the wrong type,
/// `ValueError` for one out of range.
pub(crate) fn keyspace_options(
    base: &KeyspaceOptions,
    kwargs: Option<&Bound<'_, PyDict>>,
    what: &str,
) -> PyResult<KeyspaceOptions> {
    let mut o = Options {
        filter_policy: base.filter_policy.clone(),
        probe_policy: base.probe_policy.clone(),
        compaction_style: base.compaction_style,
        size_ratio: base.size_ratio,
        block_size: base.block_size,
        compression: base.compression,
        compression_per_level: base.compression_per_level.clone(),
        bottommost_compression: base.bottommost_compression,
        ..Options::default()
    };
    let mut tree = TreeKeywords::default();
    for (key, value) in kwargs.into_iter().flat_map(|d| d.iter()) {
        let name: String = key.extract()?;
        if !tree.take(&mut o, &name, &value)? {
            return Err(PyTypeError::new_err(format!(
                "{what} got an unexpected keyword argument '{name}' (known: {})",
                TREE_KEYWORDS.join(", ")
            )));
        }
    }
    tree.finish(&mut o);
    Ok(KeyspaceOptions::of(&o))
}
