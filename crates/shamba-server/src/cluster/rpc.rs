//! The RPCs between the nodes of a group, as one tarpc service over TCP (bincode frames):
//! openraft's three (append entries, install a snapshot chunk, vote) and the forward of a
//! client's requests from a follower to the leader.
//!
//! A snapshot travels as openraft's chunks (`snapshot_max_chunk_size` each, one RPC per
//! chunk), read from the leader's snapshot file and written into the follower's: never a
//! whole snapshot in one message.

use crate::reply::Protocol;
use crate::session::Server;
use openraft::error::{Fatal, InstallSnapshotError, RaftError};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse, VoteRequest,
    VoteResponse,
};
use serde::{Deserialize, Serialize};
use shamba_raft::{NodeId, TypeConfig};
use std::sync::{Arc, Weak};
use tarpc::context::Context;

/// The largest frame either side accepts: above openraft's snapshot chunk (3 MiB) and an
/// append of a few hundred entries with large values.
pub(crate) const MAX_FRAME: usize = 256 << 20;

/// Requests a follower forwards: the client's database and protocol, and its requests in
/// order. The reply is their encoded replies, written to the client as they are.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Forwarded {
    pub(crate) database: u32,
    pub(crate) resp3: bool,
    pub(crate) requests: Vec<Vec<Vec<u8>>>,
}

/// The service every node serves on its Raft address.
#[tarpc::service]
pub(crate) trait NodeRpc {
    /// openraft's append entries (heartbeats too).
    async fn append_entries(
        req: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>;
    /// One chunk of a snapshot.
    async fn install_snapshot(
        req: InstallSnapshotRequest<TypeConfig>,
    ) -> Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>;
    /// openraft's vote request.
    async fn vote(req: VoteRequest<NodeId>) -> Result<VoteResponse<NodeId>, RaftError<NodeId>>;
    /// Run a client's requests here (the leader) and answer their encoded replies; an error
    /// when this node cannot run them (it is shutting down).
    async fn forward(batch: Forwarded) -> Result<Vec<u8>, String>;
}

/// The service's handler: the node's server (weak: the listener must not keep it alive
/// after the server stopped).
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) server: Weak<Server>,
}

impl Handler {
    fn server(&self) -> Option<Arc<Server>> {
        self.server.upgrade()
    }

    /// The node's Raft; `None` once the server is gone (its calls then fail as a stopped
    /// Raft's do).
    fn raft(&self) -> Option<shamba_raft::Raft> {
        self.server().and_then(|s| s.store.cluster().map(|c| c.raft().clone()))
    }
}

impl NodeRpc for Handler {
    async fn append_entries(
        self,
        _: Context,
        req: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>> {
        self.raft().ok_or(RaftError::Fatal(Fatal::Stopped))?.append_entries(req).await
    }

    async fn install_snapshot(
        self,
        _: Context,
        req: InstallSnapshotRequest<TypeConfig>,
    ) -> Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>> {
        self.raft().ok_or(RaftError::Fatal(Fatal::Stopped))?.install_snapshot(req).await
    }

    async fn vote(self, _: Context, req: VoteRequest<NodeId>) -> Result<VoteResponse<NodeId>, RaftError<NodeId>> {
        self.raft().ok_or(RaftError::Fatal(Fatal::Stopped))?.vote(req).await
    }

    async fn forward(self, _: Context, batch: Forwarded) -> Result<Vec<u8>, String> {
        let server = self.server().ok_or("the node is shutting down")?;
        let proto = if batch.resp3 { Protocol::Resp3 } else { Protocol::Resp2 };
        tokio::task::spawn_blocking(move || server.run_forwarded(batch.database as usize, proto, batch.requests))
            .await
            .map_err(|e| e.to_string())
    }
}
