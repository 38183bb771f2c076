//! Build policy: which filter each level's tables get.

/// The filter of one table, as the build policy chose it.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterSpec {
    /// No filter.
    None,
    /// Cache-line-blocked Bloom filter.
    Bloom {
        /// Bits per key (fractional allowed).
        bits_per_key: f64,
    },
}

/// Per-level filter choice.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildPolicy {
    /// Bits per key for every level.
    pub bits_per_key: f64,
}

impl Default for BuildPolicy {
    fn default() -> Self {
        BuildPolicy { bits_per_key: 10.0 }
    }
}

impl BuildPolicy {
    /// Check the policy's parameters; the message names the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.bits_per_key >= 0.0 && self.bits_per_key <= 64.0) {
            return Err(format!("filter bits_per_key must be in 0..=64, got {}", self.bits_per_key));
        }
        Ok(())
    }

    /// The filter for a table written to `level`, given the entries per level of the tree
    /// (used by Monkey allocation).
    pub fn spec_for_level(&self, level: usize, entries_per_level: &[u64]) -> FilterSpec {
        let _ = (level, entries_per_level);
        if self.bits_per_key <= 0.0 {
            FilterSpec::None
        } else {
            FilterSpec::Bloom { bits_per_key: self.bits_per_key }
        }
    }
}
