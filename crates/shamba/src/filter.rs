//! The filters a database builds, as its configuration names them: the build policy
//! ([`BuildPolicy`], [`Options::filter_policy`](crate::Options::filter_policy) and
//! [`KeyspaceOptions`](crate::KeyspaceOptions)), how bits are shared over levels
//! ([`Allocation`]), how each table's filter is split ([`FilterLayout`], [`ModuleSizes`]),
//! how a Bloom filter lays out its bits ([`BloomLayout`], [`Probing`]), and the filter a
//! level gets ([`FilterSpec`]).
//!
//! The filters themselves (their builders, formats, hash functions and cost models) are the
//! `shamba-filter` crate, usable on its own.

pub use shamba_filter::{Allocation, BloomLayout, BuildPolicy, FilterLayout, FilterSpec, ModuleSizes, Probing};

// The engine's own way to the whole crate (`crate::filter::…`): its parts, digests and
// builders are the engine's inside, not its configuration.
pub(crate) use shamba_filter::*;
