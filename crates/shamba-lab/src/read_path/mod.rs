//! The engine's own read path, not a seed's figure: the one-screen result ([`headline`]),
//! filter lines prefetched before the first probe ([`prefetch`]), and `multi_get` against
//! single gets ([`multi_get`]).

pub mod headline;
pub mod multi_get;
pub mod prefetch;
