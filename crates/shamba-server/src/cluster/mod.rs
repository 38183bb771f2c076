//! Cluster mode: this server as a node of an openraft group whose log and state machine are
//! shamba-raft's, in the node's one database.
//!
//! - Writes: every write a command makes becomes one [`shamba_raft::Command`] proposed
//!   through `client_write` on the leader; the reply is sent once the command is committed
//!   (its log entry durable on a majority) and applied here.
//! - Reads: linearizable. The leader confirms it still leads (a heartbeat round to a
//!   majority, openraft's `ensure_linearizable`) once per batch of requests read together,
//!   and waits until its state machine has applied everything committed before; then it
//!   reads its own database.
//! - On a follower, every request that reads or writes keys is forwarded to the leader (one
//!   RPC per batch of requests) and the leader's encoded replies are sent back as they are;
//!   connection commands (PING, SELECT, HELLO, CLIENT, INFO, CLUSTER INFO...) answer
//!   locally. With no leader (an election under way, or a majority down) the answer is a
//!   `-TRYAGAIN` error.
//! - Read-modify-write commands (INCR, SET NX, APPEND, GETSET, DEL's count) run on the leader
//!   under its key locks after the read barrier, and propose their result as a plain put;
//!   the proposal is dropped (`-TRYAGAIN`) unless the node still leads in the term the
//!   barrier confirmed, so no leader of a later term can have changed what was read. Every
//!   write to a key on the leader holds that key's lock until it is applied, so two of them
//!   never interleave.
//!
//! Inside: `rpc` (the tarpc service and its handler), `network` (openraft's network over it),
//! `node` (starting a node, its Raft handle and what commands ask of it), `propose` (group
//! commit: the commands proposed meanwhile as one log entry).

mod network;
mod node;
mod propose;
mod rpc;

pub use node::{Cluster, ClusterConfig, ClusterError};
pub(crate) use rpc::Forwarded;
