//! The probe policies a database can run with.

/// How the filter manager decides which filter parts a lookup probes.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ProbePolicy {
    /// Probe every part of every filter (RocksDB-like).
    #[default]
    Plain,
    /// Never probe the deepest non-empty level's filters (RocksDB's
    /// `optimize_filters_for_hits`): most lookups that reach it find their key.
    NoLastLevel,
    /// SHaMBa: probe modules in order while their utility is above a threshold (seed 002,
    /// Eq. 8-9, Algorithm 1).
    Shamba(ShambaPolicy),
    /// ElasticBF: enable units for hot tables and disable them for cold ones, within a
    /// memory budget (seed 003).
    Elastic(ElasticPolicy),
}

impl ProbePolicy {
    /// Short name for tables and JSON.
    pub fn name(&self) -> String {
        match self {
            ProbePolicy::Plain => "plain".into(),
            ProbePolicy::NoLastLevel => "no-last-level".into(),
            ProbePolicy::Shamba(p) => match p.skipping {
                Skipping::None => "shamba".into(),
                Skipping::Partial => "shamba-P".into(),
                Skipping::Full => "shamba-F".into(),
                Skipping::HitOdds => "shamba-O".into(),
            },
            ProbePolicy::Elastic(_) => "elastic".into(),
        }
    }

    /// Check the parameters; the message names the bad value.
    ///
    /// # Errors
    ///
    /// A message when a SHaMBa threshold is negative or not a finite number, or an elastic
    /// policy's `life_time` is 0.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            ProbePolicy::Shamba(p) => {
                for (name, t) in [("partial_threshold", p.partial_threshold), ("full_threshold", p.full_threshold)] {
                    if !(t.is_finite() && t >= 0.0) {
                        return Err(format!("shamba {name} must be a finite number >= 0, got {t}"));
                    }
                }
                Ok(())
            }
            ProbePolicy::Elastic(p) if p.life_time == 0 => Err("elastic life_time must be at least 1".into()),
            _ => Ok(()),
        }
    }
}

/// Which modules SHaMBa may skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Skipping {
    /// Probe every module (modules still help: a lookup stops at the first negative one).
    #[default]
    None,
    /// Always probe the first module; skip later ones whose utility is under
    /// `partial_threshold` (SHaMBa-P).
    Partial,
    /// Also skip the whole filter when the first module's utility is under
    /// `full_threshold` (SHaMBa-F).
    Full,
    /// Beyond the seed, no threshold: fetch a module that is not resident only while the
    /// key is at least as likely absent as present, given the table's alpha and what the
    /// modules before it said (`(1 - alpha) F_(d-1) >= alpha`). A lookup for a key that is
    /// probably there skips to the data, one that is probably not there pays the module
    /// read to save a data read (and the index read before it).
    HitOdds,
}

/// Parameters of the SHaMBa policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ShambaPolicy {
    /// Which modules may be skipped.
    pub skipping: Skipping,
    /// Utility under which a later module is skipped (seed 002: 0.1).
    pub partial_threshold: f64,
    /// Utility under which the whole filter is skipped (seed 002: 0.2).
    pub full_threshold: f64,
    /// Age (in table-reaching lookups) after which a table's measured statistics fully
    /// replace its inherited ones (Eq. 12's w(t) reaches 1).
    pub warmup_lookups: u64,
    /// When a probe must read a part that is not resident, read it and the later parts it
    /// may probe with one read (a partition's parts lie together in the file) instead of
    /// one read per part as the probe reaches it: as many as bring the odds of a further
    /// read under 1/64 (an absent key's chance of passing them, plus the table's measured
    /// chance that the key is present, which passes every part), or the rest of the
    /// filter where they never get there. Costs bytes (parts read that an earlier one's
    /// negative would have made useless), saves reads: with many small parts, a table
    /// then pays about one filter read per lookup whatever part it stops at, so the filter
    /// memory budget can keep any number of leading parts resident. Default off (seed
    /// 002's one read per module).
    pub read_rest_together: bool,
}

impl Default for ShambaPolicy {
    fn default() -> Self {
        ShambaPolicy {
            skipping: Skipping::None,
            partial_threshold: 0.1,
            full_threshold: 0.2,
            warmup_lookups: 10_000,
            read_rest_together: false,
        }
    }
}

/// Parameters of the ElasticBF policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ElasticPolicy {
    /// A table not looked up for this many lookups is cold: its units may be disabled
    /// (seed 003 sets it near the number of tables).
    pub life_time: u64,
    /// Bytes of filter units that may be enabled at once.
    pub budget_bytes: u64,
}

impl Default for ElasticPolicy {
    fn default() -> Self {
        ElasticPolicy { life_time: 1_000, budget_bytes: 8 << 20 }
    }
}
