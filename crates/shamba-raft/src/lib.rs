//! openraft's storage on one shamba database: the Raft log, the vote and the state machine of
//! a node in keyspaces of the same database, so one write-ahead log orders them all.

#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod types;

pub use types::{Command, Node, NodeId, Op, Raft, Response, TypeConfig};
