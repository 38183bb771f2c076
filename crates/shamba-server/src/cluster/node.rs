//! A node: its Raft handle, the RPC listener its peers reach it on, and the blocking calls
//! the commands make of it (commands run on the blocking pool, so they wait on the runtime
//! through its handle).

use super::network::{self, Network, Pool};
use super::propose::{self, Proposal};
use super::rpc::{Forwarded, Handler, NodeRpc};
use crate::session::Server;
use futures::StreamExt;
use openraft::error::{CheckIsLeaderError, ClientWriteError, InitializeError, RaftError};
use openraft::{BasicNode, ChangeMembers, ServerState};
use parking_lot::Mutex;
use shamba_raft::{Command, Node, NodeId, Raft, Response};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tarpc::server::{BaseChannel, Channel};
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};

/// How long a write or a read barrier waits for a majority before it fails with
/// `-TRYAGAIN` (the write may still be applied later: its outcome is unknown).
const QUORUM_WAIT: Duration = Duration::from_secs(5);

thread_local! {
    /// The leader term the command running on this thread read its keys in, when it runs
    /// under [`Cluster::in_term`].
    static READ_TERM: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Whether `raft` leads its group in `term`.
pub(crate) fn leads_in(raft: &Raft, term: u64) -> bool {
    let m = raft.metrics();
    let m = m.borrow();
    m.state == ServerState::Leader && m.current_term == term
}

/// How long a forwarded batch may take on the leader.
const FORWARD_WAIT: Duration = Duration::from_secs(30);

/// A node's place in its group: `shamba serve --node-id`'s flags.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClusterConfig {
    /// This node's id (unique in the group, never reused).
    pub node_id: NodeId,
    /// Where the node listens for its peers' RPCs. Its peers learn the address from the
    /// group's membership (`init`, or the `CLUSTER ADDNODE` that added it).
    pub raft_bind: SocketAddr,
    /// When not empty: the voters of a new group (this node among them) to initialize with
    /// on start, as ids and Raft addresses. Ignored by a node whose group is initialized.
    pub init: Vec<(NodeId, String)>,
    /// Raft's heartbeat interval, in milliseconds; elections start after 5 to 10 of them
    /// without a heartbeat.
    pub heartbeat_ms: u64,
    /// A snapshot is built after this many log entries since the last one.
    pub snapshot_after: u64,
    /// Log entries kept behind a snapshot (a follower further behind gets the snapshot).
    pub logs_kept: u64,
    /// Bytes of a snapshot sent in one RPC.
    pub snapshot_chunk: u64,
}

impl ClusterConfig {
    /// Node `node_id` listening for its peers on `raft_bind`, joining an existing group or
    /// waiting to be added to one; a heartbeat every 100 ms, a snapshot every 5000 entries
    /// with 1000 kept behind it, sent in chunks of 3 MiB.
    pub fn new(node_id: NodeId, raft_bind: SocketAddr) -> ClusterConfig {
        ClusterConfig {
            node_id,
            raft_bind,
            init: Vec::new(),
            heartbeat_ms: 100,
            snapshot_after: 5000,
            logs_kept: 1000,
            snapshot_chunk: 3 << 20,
        }
    }

    fn raft_config(&self) -> Result<openraft::Config, String> {
        let hb = self.heartbeat_ms.max(10);
        openraft::Config {
            cluster_name: "shamba".into(),
            heartbeat_interval: hb,
            election_timeout_min: hb * 5,
            election_timeout_max: hb * 10,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(self.snapshot_after.max(1)),
            max_in_snapshot_log_to_keep: self.logs_kept,
            snapshot_max_chunk_size: self.snapshot_chunk.max(1024),
            ..openraft::Config::default()
        }
        .validate()
        .map_err(|e| e.to_string())
    }
}

/// Why the group could not do what a command asked. Every variant but [`ClusterError::Failed`]
/// is temporary: retrying later (against the leader) may succeed.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// No leader is known: an election is under way, or too few nodes are up to hold one.
    #[error("TRYAGAIN no leader: an election is under way or a majority of the nodes is down")]
    NoLeader,
    /// This node stopped leading while the request ran; a write's outcome is unknown.
    #[error("TRYAGAIN leadership changed while the request ran (leader now: {}); a write in flight may or may not be applied", leader_name(.0))]
    LeaderChanged(Option<(NodeId, String)>),
    /// The leader could not be reached to forward a request to it.
    #[error("TRYAGAIN the leader, node {0} at {1}, did not answer: {2}")]
    Unreachable(NodeId, String, String),
    /// No majority answered: a read barrier's heartbeats, or a write in its time; a write's
    /// outcome is unknown.
    #[error("TRYAGAIN no majority of the group answered (a write waits {}s for one); a write may or may not be applied later", QUORUM_WAIT.as_secs())]
    NoQuorum,
    /// The node cannot go on (its storage failed, it is shutting down), or a membership
    /// change was refused.
    #[error("ERR cluster: {0}")]
    Failed(String),
}

fn leader_name(l: &Option<(NodeId, String)>) -> String {
    match l {
        Some((id, addr)) => format!("node {id} at {addr}"),
        None => "unknown".into(),
    }
}

impl From<RaftError<NodeId, ClientWriteError<NodeId, Node>>> for ClusterError {
    fn from(e: RaftError<NodeId, ClientWriteError<NodeId, Node>>) -> ClusterError {
        match e {
            RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => {
                ClusterError::LeaderChanged(f.leader_id.zip(f.leader_node.map(|n| n.addr)))
            }
            RaftError::APIError(ClientWriteError::ChangeMembershipError(e)) => ClusterError::Failed(e.to_string()),
            RaftError::Fatal(e) => ClusterError::Failed(e.to_string()),
        }
    }
}

impl From<RaftError<NodeId, CheckIsLeaderError<NodeId, Node>>> for ClusterError {
    fn from(e: RaftError<NodeId, CheckIsLeaderError<NodeId, Node>>) -> ClusterError {
        match e {
            RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)) => {
                ClusterError::LeaderChanged(f.leader_id.zip(f.leader_node.map(|n| n.addr)))
            }
            RaftError::APIError(CheckIsLeaderError::QuorumNotEnough(_)) => ClusterError::NoQuorum,
            RaftError::Fatal(e) => ClusterError::Failed(e.to_string()),
        }
    }
}

/// A running node of a group.
pub struct Cluster {
    id: NodeId,
    raft: Raft,
    rt: Handle,
    /// The connections to the peers (Raft's, and forwarded requests').
    pool: Pool,
    listener: Mutex<Option<JoinHandle<()>>>,
    raft_addr: SocketAddr,
    /// Where commands wait to be proposed together (see `propose`).
    proposals: mpsc::UnboundedSender<Proposal>,
    /// The longest election timeout: how long a group may be without a leader after one
    /// died.
    election_timeout: Duration,
}

impl Cluster {
    /// Start the node's Raft over `log_store` and `state_machine`, and bind its RPC address
    /// (not yet serving: [`Cluster::serve_rpc`]). Runs on a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when the configuration is invalid or the storage cannot be
    /// read; an I/O error when the address cannot be bound.
    pub(crate) async fn start<LS, SM>(
        config: &ClusterConfig,
        log_store: LS,
        state_machine: SM,
    ) -> Result<(Cluster, TcpListener), crate::Error>
    where
        LS: openraft::storage::RaftLogStorage<shamba_raft::TypeConfig>,
        SM: openraft::storage::RaftStateMachine<shamba_raft::TypeConfig>,
    {
        let raft_config = config.raft_config().map_err(ClusterError::Failed)?;
        let election_timeout = Duration::from_millis(raft_config.election_timeout_max);
        let listener = TcpListener::bind(config.raft_bind).await?;
        let raft_addr = listener.local_addr()?;
        let pool = Pool::default();
        let network = Network { pool: pool.clone() };
        let raft = Raft::new(config.node_id, Arc::new(raft_config), network, log_store, state_machine)
            .await
            .map_err(|e| ClusterError::Failed(e.to_string()))?;
        let (proposals, queue) = mpsc::unbounded_channel();
        tokio::spawn(propose::run(raft.clone(), queue));
        let cluster = Cluster {
            id: config.node_id,
            raft,
            rt: Handle::current(),
            pool,
            listener: Mutex::new(None),
            raft_addr,
            election_timeout,
            proposals,
        };
        Ok((cluster, listener))
    }

    /// Serve the peers' RPCs on `listener` for `server` (whose store holds this node).
    pub(crate) fn serve_rpc(&self, listener: TcpListener, server: Weak<Server>) {
        let handler = Handler { server };
        // The connections are the task's: stopping it closes them, so the peers notice and
        // connect anew to whatever serves the address next (a restarted node).
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            let channel = BaseChannel::with_defaults(network::transport(stream));
                            connections.spawn(channel.execute(handler.clone().serve()).for_each(|call| async {
                                tokio::spawn(call);
                            }));
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        *self.listener.lock() = Some(task);
    }

    /// Initialize a new group with `members` as its voters; nothing when the group already
    /// is (this node has a log or a vote).
    ///
    /// # Errors
    ///
    /// [`ClusterError::Failed`] when the node cannot initialize (a membership without it).
    pub async fn initialize(&self, members: &[(NodeId, String)]) -> Result<(), ClusterError> {
        let nodes: BTreeMap<NodeId, Node> = members.iter().map(|(id, a)| (*id, BasicNode::new(a))).collect();
        match self.raft.initialize(nodes).await {
            Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(ClusterError::Failed(e.to_string())),
        }
    }

    /// Stop Raft and the RPC listener.
    pub(crate) async fn shutdown(&self) {
        if let Some(t) = self.listener.lock().take() {
            t.abort();
        }
        let _ = self.raft.shutdown().await;
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The address its peers' RPCs reach it on.
    pub fn raft_addr(&self) -> SocketAddr {
        self.raft_addr
    }

    /// The Raft handle (metrics, membership).
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// The leader this node knows of, with its Raft address.
    pub fn leader(&self) -> Option<(NodeId, String)> {
        let m = self.raft.metrics();
        let m = m.borrow();
        let id = m.current_leader?;
        let addr = m.membership_config.membership().get_node(&id).map(|n| n.addr.clone()).unwrap_or_default();
        Some((id, addr))
    }

    /// Whether this node leads its group now (as far as it knows).
    pub fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().state == ServerState::Leader
    }

    /// Wait on the runtime for `f` (from a blocking-pool thread), at most `limit`.
    fn wait<T>(&self, limit: Duration, f: impl Future<Output = T>) -> Option<T> {
        self.rt.block_on(async { tokio::time::timeout(limit, f).await.ok() })
    }

    /// Propose `command` and wait until it is committed and applied here.
    ///
    /// # Errors
    ///
    /// [`ClusterError::LeaderChanged`] when this node does not lead (any more),
    /// [`ClusterError::NoQuorum`] after 5 seconds without a majority,
    /// [`ClusterError::Failed`] when the node cannot go on.
    pub fn write(&self, command: Command) -> Result<Response, ClusterError> {
        self.write_each(vec![command]).pop().unwrap_or(Err(ClusterError::NoQuorum))
    }

    /// Propose `commands` in order, all before waiting for any, and wait for each to be
    /// committed and applied here. They join the other connections' commands proposed
    /// meanwhile in shared log entries (see `propose`).
    ///
    /// # Errors
    ///
    /// Each as [`Cluster::write`].
    pub fn write_each(&self, commands: Vec<Command>) -> Vec<Result<Response, ClusterError>> {
        let mut waiting = Vec::with_capacity(commands.len());
        for command in commands {
            let (done, rx) = oneshot::channel();
            let term = READ_TERM.get();
            let queued = self.proposals.send(Proposal { command, term, done }).is_ok();
            waiting.push(queued.then_some(rx));
        }
        let stopped = || Err(ClusterError::Failed("the node is stopping".into()));
        self.rt.block_on(async {
            let deadline = tokio::time::Instant::now() + QUORUM_WAIT;
            let mut results = Vec::with_capacity(waiting.len());
            for w in waiting {
                results.push(match w {
                    None => stopped(),
                    Some(rx) => match tokio::time::timeout_at(deadline, rx).await {
                        Ok(Ok(r)) => r,
                        Ok(Err(_)) => stopped(),
                        Err(_) => Err(ClusterError::NoQuorum),
                    },
                });
            }
            results
        })
    }

    /// The read barrier: confirm this node still leads, and wait until its state machine
    /// has applied everything committed before now. Answers the term it leads in, for
    /// [`Cluster::in_term`].
    ///
    /// # Errors
    ///
    /// As [`Cluster::write`].
    pub fn read_barrier(&self) -> Result<u64, ClusterError> {
        let term = self.raft.metrics().borrow().current_term;
        match self.wait(QUORUM_WAIT, self.raft.ensure_linearizable()) {
            Some(Ok(_)) if leads_in(&self.raft, term) => Ok(term),
            Some(Ok(_)) => Err(ClusterError::LeaderChanged(self.leader())),
            Some(Err(e)) => Err(e.into()),
            None => Err(ClusterError::NoQuorum),
        }
    }

    /// Run `f` (a command that read keys after a read barrier in leader term `term`) so
    /// that the writes it makes are proposed only while this node still leads in that term:
    /// a value it read cannot have been changed by a leader of a later term in between.
    pub fn in_term<T>(term: u64, f: impl FnOnce() -> T) -> T {
        struct Reset(Option<u64>);
        impl Drop for Reset {
            fn drop(&mut self) {
                READ_TERM.set(self.0);
            }
        }
        let _reset = Reset(READ_TERM.replace(Some(term)));
        f()
    }

    /// Run `batch` on the leader, answering its encoded replies. With no leader known (an
    /// election under way), or one that cannot be connected to (it just died), waits for
    /// one, up to two election timeouts; a request that may have been sent is never sent
    /// again.
    ///
    /// # Errors
    ///
    /// [`ClusterError::NoLeader`] when none is known in time, [`ClusterError::Unreachable`]
    /// when it does not answer.
    pub(crate) fn forward(&self, batch: Forwarded) -> Result<Vec<u8>, ClusterError> {
        let deadline = Instant::now() + self.election_timeout * 2;
        let (leader, addr, client) = loop {
            let Some((leader, addr)) = self.leader().or_else(|| self.wait_for_leader(deadline)) else {
                return Err(ClusterError::NoLeader);
            };
            match self.rt.block_on(self.pool.get(leader, &addr)) {
                Ok(client) => break (leader, addr, client),
                Err(e) if Instant::now() >= deadline => {
                    return Err(ClusterError::Unreachable(leader, addr, e.to_string()))
                }
                // Refused: nothing was sent. The leader is likely gone; its successor will
                // be known soon.
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        match self.rt.block_on(client.forward(network::context(FORWARD_WAIT), batch)) {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(why)) => Err(ClusterError::Unreachable(leader, addr, why)),
            Err(e) => {
                self.pool.forget(leader);
                Err(ClusterError::Unreachable(leader, addr, e.to_string()))
            }
        }
    }

    /// The leader, once one is known (before `deadline`).
    fn wait_for_leader(&self, deadline: Instant) -> Option<(NodeId, String)> {
        let limit = deadline.saturating_duration_since(Instant::now());
        let known = self.rt.block_on(self.raft.wait(Some(limit)).metrics(|m| m.current_leader.is_some(), "a leader"));
        known.ok().and_then(|_| self.leader())
    }

    /// Add node `id` at Raft address `addr` as a learner, and wait until it has caught up.
    ///
    /// # Errors
    ///
    /// As [`Cluster::write`] (without its time limit: catching up may take long).
    pub fn add_learner(&self, id: NodeId, addr: &str) -> Result<(), ClusterError> {
        self.rt.block_on(self.raft.add_learner(id, BasicNode::new(addr), true)).map(|_| ()).map_err(Into::into)
    }

    /// Make learners `ids` voters.
    ///
    /// # Errors
    ///
    /// As [`Cluster::add_learner`].
    pub fn promote(&self, ids: BTreeSet<NodeId>) -> Result<(), ClusterError> {
        self.change(ChangeMembers::AddVoterIds(ids))
    }

    /// Remove nodes `ids` from the group (voters or learners).
    ///
    /// # Errors
    ///
    /// As [`Cluster::add_learner`].
    pub fn remove(&self, ids: BTreeSet<NodeId>) -> Result<(), ClusterError> {
        let voters: BTreeSet<NodeId> = {
            let m = self.raft.metrics();
            let m = m.borrow();
            m.membership_config.membership().voter_ids().filter(|v| ids.contains(v)).collect()
        };
        if !voters.is_empty() {
            self.change(ChangeMembers::RemoveVoters(voters))?;
        }
        self.change(ChangeMembers::RemoveNodes(ids))
    }

    fn change(&self, change: ChangeMembers<NodeId, Node>) -> Result<(), ClusterError> {
        self.rt.block_on(self.raft.change_membership(change, false)).map(|_| ()).map_err(Into::into)
    }

    /// What `CLUSTER INFO` reports: pairs of a name and a value.
    pub fn info(&self) -> Vec<(&'static str, String)> {
        let m = self.raft.metrics();
        let m = m.borrow();
        let membership = m.membership_config.membership();
        let nodes = |ids: Vec<NodeId>| {
            ids.iter()
                .map(|id| format!("{id}@{}", membership.get_node(id).map(|n| n.addr.as_str()).unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(",")
        };
        let voters: Vec<NodeId> = membership.voter_ids().collect();
        let learners: Vec<NodeId> = membership.learner_ids().collect();
        vec![
            ("node_id", self.id.to_string()),
            ("raft_addr", self.raft_addr.to_string()),
            ("role", format!("{:?}", m.state).to_lowercase()),
            ("leader_id", m.current_leader.map_or_else(|| "none".into(), |l| l.to_string())),
            ("term", m.current_term.to_string()),
            ("last_log_index", m.last_log_index.map_or_else(|| "none".into(), |i| i.to_string())),
            ("last_applied", m.last_applied.map_or_else(|| "none".into(), |l| l.index.to_string())),
            ("snapshot", m.snapshot.map_or_else(|| "none".into(), |l| l.index.to_string())),
            ("voters", nodes(voters)),
            ("learners", nodes(learners)),
        ]
    }
}
