//! Shamba's filters: pure data structures fed by one key digest. This crate knows nothing
//! of the engine; the engine re-exports it as `shamba::filter`.
//!
//! - [`Digest::of`] hashes a user key once (xxh3-128); every structure derives its probe
//!   positions from the digest's two halves by cheap remixing and never hashes the key.
//! - Structures: [`bloom_blocked`] (engine default), [`bloom_standard`] (the seeds'),
//!   [`modular_bloom`] (SHaMBa modules), [`elastic`] (ElasticBF units), [`ribbon`] and
//!   [`modular_ribbon`]. Each states its analytic FP rate next to the code and tests
//!   measured rates against it.
//! - [`BuildPolicy`] says, per level, which [`FilterSpec`] a new table gets (Bloom or Ribbon,
//!   uniform or Monkey bits per key, whole / modules / units).
//! - [`build_filter_parts`] turns the digests of a table's keys into one or more serialized
//!   parts (a whole filter, or one per module / unit), each stored by the table as its own
//!   block; the byte layout is in [`format`](mod@format).
//! - [`FilterPart::parse`] reads a part back without copying; [`FilterPart::may_contain`]
//!   probes it. A lookup probes the parts in order and stops at the first negative; the FP
//!   rate of the parts probed is the product of their rates.
//! - [`hashes`]: alternative hash functions for the experiments only.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![warn(clippy::missing_errors_doc)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod bloom_blocked;
pub mod bloom_standard;
mod build;
pub mod digest;
pub mod elastic;
mod error;
pub mod format;
pub mod hashes;
pub mod modular_bloom;
pub mod modular_ribbon;
pub mod monkey;
mod part;
mod policy;
pub mod ribbon;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;

pub use bloom_standard::Probing;
pub use build::{bloom_bits_for_fp_rate, build_filter_parts, build_filter_parts_with_version};
pub use digest::{Digest, DIGEST_VERSION};
pub use error::DecodeError;
pub use format::{FallbackReason, PartKind, Role};
pub use hashes::HashFn;
pub use modular_bloom::{BloomLayout, ModuleSizes};
pub use monkey::settled_level_entries;
pub use part::{prefetch_bytes, prefetch_ref, FilterPart};
pub use policy::{bloom_equivalent_fp_rate, Allocation, BuildPolicy, FilterLayout, FilterSpec};
