//! The in-memory network of a test cluster: every RPC is a direct call on the target's
//! `Raft` handle, unless the router says the link is down.
//!
//! A link is down when either end is isolated, when its ends are on two sides of a
//! partition, when either end is not running (killed, or not started yet), or when a delay was set and the link went down while the message was
//! on its way. A reply crosses the same link back, so a request can be handled by its
//! target and its answer lost, as on a real network.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use openraft::error::{InstallSnapshotError, RPCError, RaftError, RemoteError, Unreachable};
use openraft::network::{Backoff, RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse, VoteRequest,
    VoteResponse,
};
use shamba_raft::{Node, NodeId, Raft, Store, TypeConfig};

/// Who can reach whom, and the running nodes' handles. Cloned into every connection.
#[derive(Clone, Default)]
pub struct Router {
    links: Arc<Mutex<Links>>,
}

#[derive(Default)]
struct Links {
    running: BTreeMap<NodeId, Raft>,
    /// The running nodes' stores, for the clients' reads.
    stores: BTreeMap<NodeId, Store>,
    isolated: BTreeSet<NodeId>,
    /// One side of a partition: these nodes reach each other and no other.
    split_off: BTreeSet<NodeId>,
    /// Added to every message to or from the node, each way.
    delays: BTreeMap<NodeId, Duration>,
    /// Snapshot transfers to each node: chunks answered, and of them the last ones.
    snapshot_chunks: BTreeMap<NodeId, SnapshotChunks>,
}

/// The snapshot chunks a node answered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotChunks {
    pub chunks: u64,
    /// Chunks that ended a snapshot: each is one snapshot installed.
    pub last_chunks: u64,
}

impl Links {
    fn up(&self, from: NodeId, to: NodeId) -> bool {
        !self.isolated.contains(&from)
            && !self.isolated.contains(&to)
            && self.split_off.contains(&from) == self.split_off.contains(&to)
            && self.running.contains_key(&from)
            && self.running.contains_key(&to)
    }

    fn delay(&self, from: NodeId, to: NodeId) -> Duration {
        let of = |n| self.delays.get(&n).copied().unwrap_or_default();
        of(from) + of(to)
    }
}

impl Router {
    fn links(&self) -> MutexGuard<'_, Links> {
        // A test that panicked while holding the lock has failed already; the links stay
        // usable for its cleanup.
        self.links.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The node takes messages (and reads) from now on.
    pub fn attach(&self, id: NodeId, raft: Raft, store: Store) {
        let mut links = self.links();
        links.running.insert(id, raft);
        links.stores.insert(id, store);
    }

    /// The node takes no more messages (it is being killed).
    pub fn detach(&self, id: NodeId) {
        let mut links = self.links();
        links.running.remove(&id);
        links.stores.remove(&id);
    }

    /// The store of a running node.
    pub fn store(&self, id: NodeId) -> Option<Store> {
        self.links().stores.get(&id).cloned()
    }

    /// Cut every link of the node, both ways.
    pub fn isolate(&self, id: NodeId) {
        self.links().isolated.insert(id);
    }

    /// Restore the links of an isolated node.
    pub fn reconnect(&self, id: NodeId) {
        self.links().isolated.remove(&id);
    }

    /// Partition the network in two: `side` and the others.
    pub fn split(&self, side: &[NodeId]) {
        self.links().split_off = side.iter().copied().collect();
    }

    /// End the partition [`Router::split`] made.
    pub fn join(&self) {
        self.links().split_off.clear();
    }

    /// Restore every link and remove every delay.
    pub fn heal(&self) {
        let mut links = self.links();
        links.isolated.clear();
        links.split_off.clear();
        links.delays.clear();
    }

    /// Delay every message to or from the node by `delay` (zero removes the delay).
    pub fn set_delay(&self, id: NodeId, delay: Duration) {
        let mut links = self.links();
        if delay.is_zero() {
            links.delays.remove(&id);
        } else {
            links.delays.insert(id, delay);
        }
    }

    /// The handles of the running nodes.
    pub fn running(&self) -> BTreeMap<NodeId, Raft> {
        self.links().running.clone()
    }

    /// The snapshot chunks node `id` has answered so far.
    pub fn snapshot_chunks(&self, id: NodeId) -> SnapshotChunks {
        self.links().snapshot_chunks.get(&id).copied().unwrap_or_default()
    }

    /// The nodes isolated now.
    pub fn isolated(&self) -> BTreeSet<NodeId> {
        self.links().isolated.clone()
    }

    /// The network factory of node `from`, given to its `Raft::new`.
    pub fn network_of(&self, from: NodeId) -> NetworkOf {
        NetworkOf { router: self.clone(), from }
    }

    /// Wait out the link's delay, then hand over the target's handle if the link is up.
    async fn send(&self, from: NodeId, to: NodeId) -> Result<Raft, Unreachable> {
        let delay = self.links().delay(from, to);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let links = self.links();
        match links.running.get(&to) {
            Some(raft) if links.up(from, to) => Ok(raft.clone()),
            _ => Err(Unreachable::new(&LinkDown { from, to })),
        }
    }

    /// The reply of `to` to `from` crosses the link back after the same delay.
    async fn reply<T>(&self, from: NodeId, to: NodeId, reply: T) -> Result<T, Unreachable> {
        let delay = self.links().delay(from, to);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if self.links().up(from, to) {
            Ok(reply)
        } else {
            Err(Unreachable::new(&LinkDown { from: to, to: from }))
        }
    }
}

/// Why a message was not delivered.
#[derive(Debug)]
struct LinkDown {
    from: NodeId,
    to: NodeId,
}

impl fmt::Display for LinkDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no link from node {} to node {}", self.from, self.to)
    }
}

impl std::error::Error for LinkDown {}

/// One node's factory of connections.
pub struct NetworkOf {
    router: Router,
    from: NodeId,
}

impl RaftNetworkFactory<TypeConfig> for NetworkOf {
    type Network = Connection;

    async fn new_client(&mut self, target: NodeId, _node: &Node) -> Connection {
        Connection { router: self.router.clone(), from: self.from, to: target }
    }
}

/// The link from one node to another.
pub struct Connection {
    router: Router,
    from: NodeId,
    to: NodeId,
}

type RpcResult<T, E = openraft::error::Infallible> = Result<T, RPCError<NodeId, Node, RaftError<NodeId, E>>>;

impl Connection {
    /// An error of the target's `Raft`: a stopped node is as unreachable as a killed one;
    /// anything else is the remote's answer.
    fn remote<E: std::error::Error>(&self, e: RaftError<NodeId, E>) -> RPCError<NodeId, Node, RaftError<NodeId, E>> {
        match e {
            RaftError::Fatal(fatal) => RPCError::Unreachable(Unreachable::new(&fatal)),
            api => RPCError::RemoteError(RemoteError::new(self.to, api)),
        }
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> RpcResult<AppendEntriesResponse<NodeId>> {
        let target = self.router.send(self.from, self.to).await?;
        let answer = target.append_entries(rpc).await.map_err(|e| self.remote(e))?;
        Ok(self.router.reply(self.from, self.to, answer).await?)
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        _option: RPCOption,
    ) -> RpcResult<InstallSnapshotResponse<NodeId>, InstallSnapshotError> {
        let target = self.router.send(self.from, self.to).await?;
        let done = rpc.done;
        let answer = target.install_snapshot(rpc).await.map_err(|e| self.remote(e))?;
        {
            let mut links = self.router.links();
            let count = links.snapshot_chunks.entry(self.to).or_default();
            count.chunks += 1;
            count.last_chunks += u64::from(done);
        }
        Ok(self.router.reply(self.from, self.to, answer).await?)
    }

    async fn vote(&mut self, rpc: VoteRequest<NodeId>, _option: RPCOption) -> RpcResult<VoteResponse<NodeId>> {
        let target = self.router.send(self.from, self.to).await?;
        let answer = target.vote(rpc).await.map_err(|e| self.remote(e))?;
        Ok(self.router.reply(self.from, self.to, answer).await?)
    }

    /// Retry an unreachable node soon: in one process a restarted node is back at once,
    /// and openraft's default of 500 ms would dominate the catch-up times measured here.
    fn backoff(&self) -> Backoff {
        Backoff::new(std::iter::repeat(Duration::from_millis(50)))
    }
}
