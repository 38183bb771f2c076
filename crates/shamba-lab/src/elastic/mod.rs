//! Seed 003 (ElasticBF: filter units enabled and disabled by hotness under a fixed memory
//! budget): Elastic against Plain at the same filter memory, at the seed's own set-up, over
//! bits per key, and the best any unit allocation could do ([`unit_oracle`]).

pub mod filter_share;
pub mod held_l0;
pub mod load_alternated;
pub mod seed_setup;
pub mod sweep;
pub mod unit_oracle;
pub mod versus_plain;
