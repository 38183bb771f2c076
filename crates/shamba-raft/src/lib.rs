//! openraft's storage on one shamba database: the Raft log, the vote and the state machine of
//! a node in keyspaces of the same database, so one write-ahead log orders them all.
//!
//! ```no_run
//! use shamba_raft::{Store, StoreOptions};
//! # fn main() -> shamba::Result<()> {
//! let store = Store::open(std::path::Path::new("/tmp/node-1"), StoreOptions::default())?;
//! let (log_store, state_machine) = (store.log_store(), store.state_machine());
//! // shamba_raft::Raft::new(node_id, config, network, log_store, state_machine).await
//! # drop((log_store, state_machine));
//! // ... and, after raft.ensure_linearizable(), a read of the replicated data:
//! let users = store.keyspace(Some("users"))?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod codec;
mod error;
mod flusher;
mod install;
mod log_store;
mod snapshot_build;
mod snapshot_file;
mod snapshot_files;
mod state_machine;
mod store;
mod types;

pub use log_store::LogStore;
pub use state_machine::StateMachine;
pub use store::{Store, StoreOptions};
pub use types::{is_reserved, Command, Node, NodeId, Op, Raft, Response, TypeConfig, RESERVED_PREFIX};
