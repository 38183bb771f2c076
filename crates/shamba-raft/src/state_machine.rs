//! The state machine (`RaftStateMachine` + `RaftSnapshotBuilder`): a command is a write
//! batch across the user's keyspaces; `apply` writes the commands of a call, the last
//! applied log id and the membership in one batch, so a crash never parts them.
//!
//! `apply` does not sync: the log entries it applies were synced before they were
//! committed, and the database has one write-ahead log, so a batch lost in a crash is
//! re-applied from the log, and a later durable write (a log sync, a purge that a crash
//! kept) implies this one is durable too.

use crate::codec::APPLIED;
use crate::error::{self, StorageResult};
use crate::install;
use crate::snapshot_build;
use crate::snapshot_file::Meta;
use crate::snapshot_files;
use crate::store::{encode, keyspace_name, Shared};
use crate::types::{Command, Node, NodeId, Op, Response, TypeConfig};
use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine, Snapshot};
use openraft::{Entry, EntryPayload, LogId, OptionalSend, StoredMembership};
use shamba::{Keyspace, Readable, WriteBatch};
use std::collections::HashMap;
use std::sync::Arc;

/// What the state machine records with every batch: the last applied log id and the last
/// membership applied.
pub(crate) type Applied = (Option<LogId<NodeId>>, StoredMembership<NodeId, Node>);

/// The state machine of a [`Store`](crate::Store): openraft's `RaftStateMachine`, and its
/// own snapshot builder. Clones share the store.
#[derive(Clone)]
pub struct StateMachine {
    shared: Arc<Shared>,
}

impl StateMachine {
    pub(crate) fn new(shared: Arc<Shared>) -> StateMachine {
        StateMachine { shared }
    }

    fn applied(&self) -> shamba::Result<Applied> {
        Ok(self.shared.read_meta(&self.shared.meta, APPLIED)?.unwrap_or_default())
    }
}

/// The batch one `apply` call writes, and what it has written so far, so a delete can say
/// whether its key existed even when an earlier op of the same call wrote it.
struct Pending<'a> {
    shared: &'a Shared,
    batch: WriteBatch,
    keyspaces: HashMap<String, Keyspace>,
    /// `(keyspace, key)` → (op number, whether the op left the key present).
    points: HashMap<(String, Vec<u8>), (usize, bool)>,
    /// Range deletes so far: (op number, keyspace, start, end).
    ranges: Vec<(usize, String, Vec<u8>, Vec<u8>)>,
    ops: usize,
}

impl<'a> Pending<'a> {
    fn new(shared: &'a Shared) -> Pending<'a> {
        Pending {
            shared,
            batch: WriteBatch::new(),
            keyspaces: HashMap::new(),
            points: HashMap::new(),
            ranges: Vec::new(),
            ops: 0,
        }
    }

    fn keyspace(&mut self, name: &str) -> shamba::Result<Keyspace> {
        if let Some(ks) = self.keyspaces.get(name) {
            return Ok(ks.clone());
        }
        let ks = self.shared.user_keyspace(Some(name))?;
        self.keyspaces.insert(name.to_string(), ks.clone());
        Ok(ks)
    }

    /// Whether `key` of `ks` is present with this call's writes so far.
    fn present(&self, ks_name: &str, ks: &Keyspace, key: &[u8]) -> shamba::Result<bool> {
        let point = self.points.get(&(ks_name.to_string(), key.to_vec())).copied();
        let since = point.map_or(0, |(n, _)| n + 1);
        let deleted_later = self.ranges.iter().any(|(n, name, start, end)| {
            *n >= since && name == ks_name && key >= start.as_slice() && key < end.as_slice()
        });
        if deleted_later {
            return Ok(false);
        }
        match point {
            Some((_, present)) => Ok(present),
            None => Ok(ks.get(key)?.is_some()),
        }
    }

    /// Add a command's ops; for each delete, whether its key existed.
    fn add(&mut self, command: Command) -> shamba::Result<Vec<bool>> {
        let mut existed = Vec::new();
        for op in command.ops {
            let name = keyspace_name(op.keyspace()).to_string();
            let ks = self.keyspace(&name)?;
            let n = self.ops;
            self.ops += 1;
            match op {
                Op::Put { key, value, .. } => {
                    self.batch.put_in(&ks, &key, value);
                    self.points.insert((name, key), (n, true));
                }
                Op::Delete { key, .. } => {
                    existed.push(self.present(&name, &ks, &key)?);
                    self.batch.delete_in(&ks, &key);
                    self.points.insert((name, key), (n, false));
                }
                Op::DeleteRange { start, end, .. } => {
                    self.batch.delete_range_in(&ks, start.as_slice()..end.as_slice());
                    self.ranges.push((n, name, start, end));
                }
            }
        }
        Ok(existed)
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(&mut self) -> StorageResult<Applied> {
        self.applied().map_err(error::read_state_machine)
    }

    async fn apply<I>(&mut self, entries: I) -> StorageResult<Vec<Response>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let (mut last_applied, mut membership) = self.applied().map_err(error::read_state_machine)?;
        let mut pending = Pending::new(&self.shared);
        let mut responses = Vec::new();
        for entry in entries {
            let index = entry.log_id.index;
            last_applied = Some(entry.log_id);
            let mut response = Response { index, ..Response::default() };
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(command) => {
                    match command.validate(self.shared.max_key_size, self.shared.max_value_size) {
                        Ok(()) => response.existed = pending.add(command).map_err(error::write_state_machine)?,
                        Err(why) => response.error = Some(why),
                    }
                }
                EntryPayload::Membership(m) => membership = StoredMembership::new(Some(entry.log_id), m),
            }
            responses.push(response);
        }
        if responses.is_empty() {
            return Ok(responses);
        }
        let applied = encode("applied", &(&last_applied, &membership)).map_err(error::write_state_machine)?;
        let mut batch = pending.batch;
        batch.put_in(&self.shared.meta, APPLIED, applied);
        self.shared.db.write(batch).map_err(error::write_state_machine)?;
        Ok(responses)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> StorageResult<Box<tokio::fs::File>> {
        let path = self.shared.snapshot_dir.join(self.shared.unique_name("recv", "part"));
        let file = tokio::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .await
            .map_err(|e| error::write_snapshot(e.into()))?;
        Ok(Box::new(file))
    }

    async fn install_snapshot(&mut self, meta: &Meta, snapshot: Box<tokio::fs::File>) -> StorageResult<()> {
        let file = snapshot.into_std().await;
        let shared = self.shared.clone();
        let meta = meta.clone();
        tokio::task::spawn_blocking(move || install::install(&shared, &meta, file))
            .await
            .map_err(|e| error::write_snapshot(error::task_failed(e)))?
            .map_err(error::write_snapshot)
    }

    async fn get_current_snapshot(&mut self) -> StorageResult<Option<Snapshot<TypeConfig>>> {
        let Some((name, meta)) = snapshot_files::current(&self.shared).map_err(error::read_snapshot)? else {
            return Ok(None);
        };
        let file = tokio::fs::File::open(self.shared.snapshot_dir.join(name))
            .await
            .map_err(|e| error::read_snapshot(e.into()))?;
        Ok(Some(Snapshot { meta, snapshot: Box::new(file) }))
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> StorageResult<Snapshot<TypeConfig>> {
        let shared = self.shared.clone();
        let (path, meta) = tokio::task::spawn_blocking(move || snapshot_build::build(&shared))
            .await
            .map_err(|e| error::write_snapshot(error::task_failed(e)))?
            .map_err(error::write_snapshot)?;
        let file = tokio::fs::File::open(&path).await.map_err(|e| error::read_snapshot(e.into()))?;
        Ok(Snapshot { meta, snapshot: Box::new(file) })
    }
}
