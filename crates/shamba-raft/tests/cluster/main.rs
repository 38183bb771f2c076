//! Clusters of shamba nodes in one process: an in-memory network that can isolate, delay and
//! kill nodes, each node with a directory of its own, and the tests that kill leaders,
//! partition followers and change the membership while clients write.
//!
//! `cargo test -p shamba-raft --test cluster` runs them in seconds. The randomized run lasts
//! `SHAMBA_RAFT_SECS` seconds (a few by default) with the seed `SHAMBA_RAFT_SEED` (random by
//! default, printed); the failover timing is ignored by default:
//!
//! ```text
//! SHAMBA_RAFT_SECS=60 cargo test -p shamba-raft --test cluster randomized -- --nocapture
//! cargo test -p shamba-raft --test cluster failover_time -- --ignored --nocapture
//! ```

mod client;
mod cluster;
mod disk;
mod history;
mod node;
mod router;
mod writer;

mod atomicity;
mod failover;
mod failover_time;
mod linearizable_read;
mod membership;
mod randomized;
mod snapshot_catchup;
