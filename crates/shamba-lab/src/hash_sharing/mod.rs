//! Seed 000 (hash sharing: one key digest per lookup shared by every filter of every
//! level) and seed 001 (the same in a Rust engine's API): the cost of hashing, the false
//! positives of one digest against k hashes, the probe schemes inside a filter, where a
//! lookup's time goes, and shared against per-table digests on the engine.

pub mod at_seed_shape;
pub mod filter_latency;
pub mod hash_cost;
pub mod hash_fpr;
pub mod lookup_breakdown;
pub mod on_engine;
pub mod probe_schemes;
pub mod seed_shape;
pub mod units_fpr;
