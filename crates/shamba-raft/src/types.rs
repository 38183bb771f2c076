//! What a Raft group of shamba nodes agrees on: the type configuration openraft is built
//! with, the command a log entry carries and the response its application gives.
//!
//! Everything openraft-specific that names a type lives here, so a move to another openraft
//! release changes this file and the two trait implementations, not the callers.

use serde::{Deserialize, Serialize};

/// A node's id in the group.
pub type NodeId = u64;

/// The address book entry of a node: where its Raft RPCs go.
pub type Node = openraft::BasicNode;

openraft::declare_raft_types!(
    /// openraft's type configuration for a group of shamba nodes.
    ///
    /// Snapshots travel as files: openraft reads the leader's file in chunks and the
    /// follower writes them into a file of its own, so no snapshot is ever whole in memory.
    pub TypeConfig:
        D = Command,
        R = Response,
        NodeId = NodeId,
        Node = Node,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = tokio::fs::File,
        AsyncRuntime = openraft::TokioRuntime,
);

/// The Raft handle of a shamba node.
pub type Raft = openraft::Raft<TypeConfig>;

/// One replicated write: a shamba write batch, applied on every node as one atomic batch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The writes, in order; a later one wins over an earlier one on the same key.
    pub ops: Vec<Op>,
}

/// One write of a [`Command`]. `keyspace: None` is the database's default keyspace; a named
/// keyspace is created on every node by the first command that writes to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Set `key` to `value`.
    Put {
        /// The keyspace, or `None` for the default one.
        keyspace: Option<String>,
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Remove `key`.
    Delete {
        /// The keyspace, or `None` for the default one.
        keyspace: Option<String>,
        /// The key.
        key: Vec<u8>,
    },
    /// Remove every key in `start..end`.
    DeleteRange {
        /// The keyspace, or `None` for the default one.
        keyspace: Option<String>,
        /// The first key removed.
        start: Vec<u8>,
        /// The first key kept after the range.
        end: Vec<u8>,
    },
}

/// What applying a log entry gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// The log index the entry was applied at.
    pub index: u64,
    /// For each [`Op::Delete`] of the command, in order: whether the key existed just before
    /// the delete (so a `DEL` can answer how many keys it removed).
    pub existed: Vec<bool>,
    /// Why the command was refused, if it was: it names a reserved keyspace, or a key or a
    /// value is longer than the database takes. A refused command writes nothing, on every
    /// node alike (the entry is still applied: `last_applied` moves past it), so a bad
    /// command never stops the group. Check with [`Command::validate`] before proposing.
    pub error: Option<String>,
}

/// The prefix of the keyspaces the storage keeps for itself (`raft_log`, `raft_meta`): a
/// command may not write to them.
pub const RESERVED_PREFIX: &str = "raft_";

/// Whether a keyspace name is reserved for the storage itself.
pub fn is_reserved(keyspace: &str) -> bool {
    keyspace.starts_with(RESERVED_PREFIX)
}

impl Op {
    /// The keyspace the op writes to, `None` for the default one.
    pub fn keyspace(&self) -> Option<&str> {
        match self {
            Op::Put { keyspace, .. } | Op::Delete { keyspace, .. } | Op::DeleteRange { keyspace, .. } => {
                keyspace.as_deref()
            }
        }
    }
}

impl Command {
    /// Why the state machine would refuse this command, if it would: an op names a reserved
    /// keyspace (one starting with [`RESERVED_PREFIX`]) or an empty one, or a key is longer
    /// than `max_key_size` or a value than `max_value_size` (the
    /// [`shamba::Options`] fields of the nodes' databases).
    ///
    /// # Errors
    ///
    /// The reason, as the [`Response::error`] applying it would give.
    pub fn validate(&self, max_key_size: usize, max_value_size: usize) -> Result<(), String> {
        for op in &self.ops {
            if let Some(name) = op.keyspace() {
                if is_reserved(name) {
                    return Err(format!("keyspace {name:?} is reserved for the replication log"));
                }
                if name.is_empty() || name.len() > 255 {
                    return Err(format!("keyspace name of {} bytes (1 to 255 are taken)", name.len()));
                }
            }
            let keys: &[&[u8]] = match op {
                Op::Put { key, .. } | Op::Delete { key, .. } => &[key],
                Op::DeleteRange { start, end, .. } => &[start, end],
            };
            if let Some(k) = keys.iter().find(|k| k.len() > max_key_size) {
                return Err(format!("key of {} bytes, longer than the {max_key_size} taken", k.len()));
            }
            if let Op::Put { value, .. } = op {
                if value.len() > max_value_size {
                    return Err(format!("value of {} bytes, longer than the {max_value_size} taken", value.len()));
                }
            }
        }
        Ok(())
    }
}
