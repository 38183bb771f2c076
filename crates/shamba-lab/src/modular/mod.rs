//! Seed 002 (LSM-trees under memory pressure: SHaMBa's modular Bloom filters, per-table
//! utility and skipping): the filters alone, then the engine under a block cache smaller
//! than its metadata, the filter configurations compared ([`variants`]), and the bounds
//! they are measured against.

pub mod filter_bound;
pub mod first_pool;
pub mod index_vs_filter;
pub mod latency;
pub mod mbf;
pub mod memory_bound;
pub mod memory_pressure;
pub mod modules;
pub mod monkey;
pub mod partitioned;
pub mod pressure_ordering;
pub mod sst_skew;
pub mod variants;
