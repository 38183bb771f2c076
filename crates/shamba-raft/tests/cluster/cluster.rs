//! A Raft group of shamba nodes in one process: start, kill and restart nodes, write through
//! whichever node leads, read linearizably, and compare what the nodes hold.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use openraft::{BasicNode, Config, SnapshotPolicy};
use shamba_raft::{Command, NodeId, Op, Raft, Response};

use crate::client::Client;
use crate::disk::DiskKind;

use crate::node::{Node, UserData};
use crate::router::Router;

/// Timeouts small enough for a test to fail over in well under a second, large enough that
/// a loaded two-core machine running debug builds does not hold elections for nothing.
pub fn test_config() -> Config {
    Config {
        cluster_name: "shamba-test".into(),
        heartbeat_interval: 50,
        election_timeout_min: 300,
        election_timeout_max: 600,
        // Snapshots only where a test asks for them.
        snapshot_policy: SnapshotPolicy::Never,
        ..Config::default()
    }
}

pub struct Cluster {
    pub router: Router,
    pub config: Arc<Config>,
    disk: DiskKind,
    nodes: BTreeMap<NodeId, Node>,
}

impl Cluster {
    /// `ids` running on real disks, the first one initializing them as the voters, a
    /// leader elected.
    pub async fn start(ids: &[NodeId], config: Config) -> Cluster {
        Cluster::start_on(DiskKind::Real, ids, config).await
    }

    /// As [`Cluster::start`], on disks of the kind given.
    pub async fn start_on(disk: DiskKind, ids: &[NodeId], config: Config) -> Cluster {
        let mut cluster = Cluster::new(disk, config);
        for &id in ids {
            cluster.add_node(id).await;
        }
        let members: BTreeMap<NodeId, BasicNode> =
            ids.iter().map(|&id| (id, BasicNode::new(format!("node-{id}")))).collect();
        cluster.raft(ids[0]).initialize(members).await.unwrap();
        cluster.wait_for_leader(Duration::from_secs(10)).await;
        cluster
    }

    /// No nodes yet.
    pub fn new(disk: DiskKind, config: Config) -> Cluster {
        Cluster {
            router: Router::default(),
            config: Arc::new(config.validate().unwrap()),
            disk,
            nodes: BTreeMap::new(),
        }
    }

    /// A fresh node with a directory of its own, running, in no membership yet.
    pub async fn add_node(&mut self, id: NodeId) {
        let mut node = Node::new(id, self.disk);
        node.start(&self.config, &self.router).await;
        self.nodes.insert(id, node);
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[&id]
    }

    pub fn ids(&self) -> Vec<NodeId> {
        self.nodes.keys().copied().collect()
    }

    pub fn running(&self) -> Vec<NodeId> {
        self.nodes.values().filter(|n| n.is_running()).map(|n| n.id).collect()
    }

    /// The Raft of a running node.
    pub fn raft(&self, id: NodeId) -> Raft {
        self.nodes[&id].raft().unwrap_or_else(|| panic!("node {id} is not running")).clone()
    }

    pub async fn kill(&mut self, id: NodeId) {
        let router = self.router.clone();
        self.nodes.get_mut(&id).unwrap().kill(&router).await;
    }

    /// Cut a node's power (a cluster on simulated disks only): what it had not synced is lost.
    pub async fn crash(&mut self, id: NodeId) {
        let router = self.router.clone();
        self.nodes.get_mut(&id).unwrap().crash(&router).await;
    }

    /// Start a killed node again from its directory.
    pub async fn restart(&mut self, id: NodeId) {
        let (config, router) = (self.config.clone(), self.router.clone());
        self.nodes.get_mut(&id).unwrap().start(&config, &router).await;
    }

    /// Stop every node (their directories stay until the cluster is dropped).
    pub async fn stop(&mut self) {
        for id in self.ids() {
            self.kill(id).await;
        }
    }

    /// A client of the cluster, which a task writing beside the test can own.
    pub fn client(&self) -> Client {
        Client { router: self.router.clone() }
    }

    pub fn leader(&self) -> Option<NodeId> {
        self.client().leader()
    }

    pub async fn wait_for_leader(&self, timeout: Duration) -> NodeId {
        self.client().wait_for_leader(timeout).await
    }

    pub async fn write_acked(&self, command: &Command, timeout: Duration) -> Response {
        self.client().write_acked(command, timeout).await
    }

    /// A linearizable read (see [`Client::read`]), tried again for up to 5 seconds while it
    /// fails: a follower may not know the leader yet, and the leader's confirmation round
    /// allows one heartbeat interval, which a loaded machine can miss.
    pub async fn read(&self, via: NodeId, keyspace: Option<&str>, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match self.client().read(via, keyspace, key).await {
                Err(_) if std::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
                answer => return answer,
            }
        }
    }

    /// Wait until every node of `ids` has applied the log up to `index`.
    pub async fn wait_applied(&self, ids: &[NodeId], index: u64, timeout: Duration) {
        for &id in ids {
            let raft = self.raft(id);
            let waited = raft
                .wait(Some(timeout))
                .applied_index_at_least(Some(index), format!("node {id} applies up to {index}"))
                .await;
            if let Err(e) = waited {
                let m = raft.metrics().borrow().clone();
                panic!(
                    "{e}: node {id} is {:?} in term {} (leader {:?}), running: {:?}; log up to {:?}, applied {:?}, \
                     snapshot {:?}, purged {:?}",
                    m.state,
                    m.current_term,
                    m.current_leader,
                    m.running_state,
                    m.last_log_index,
                    m.last_applied,
                    m.snapshot,
                    m.purged
                );
            }
        }
    }

    /// Write an empty command through the leader and wait until every node of `ids` has
    /// applied it: afterwards they all hold everything committed before it.
    pub async fn converge(&self, ids: &[NodeId], timeout: Duration) -> u64 {
        let barrier = self.write_acked(&Command::default(), timeout).await;
        self.wait_applied(ids, barrier.index, timeout).await;
        barrier.index
    }

    /// The user data of every running node of `ids`, which must all be the same.
    pub fn assert_identical(&self, ids: &[NodeId]) -> UserData {
        let first = self.nodes[&ids[0]].user_data();
        for &id in &ids[1..] {
            let other = self.nodes[&id].user_data();
            assert!(
                other == first,
                "node {id} holds {} keys, node {} holds {}; first difference: {:?}",
                other.len(),
                ids[0],
                first.len(),
                first_difference(&first, &other)
            );
        }
        first
    }

    /// The user data in the directory of a stopped node, read by opening its store
    /// without starting its Raft.
    pub async fn user_data_at_rest(&self, id: NodeId) -> UserData {
        let node = &self.nodes[&id];
        assert!(!node.is_running(), "node {id} runs");
        let store = node.open_store().await;
        crate::node::user_data(&store)
    }

    /// The voters of the membership node `id` knows.
    pub fn voters(&self, id: NodeId) -> BTreeSet<NodeId> {
        self.raft(id).metrics().borrow().membership_config.membership().voter_ids().collect()
    }
}

fn first_difference(a: &UserData, b: &UserData) -> Option<String> {
    let keys: BTreeSet<_> = a.keys().chain(b.keys()).collect();
    keys.into_iter().find(|k| a.get(k) != b.get(k)).map(|k| format!("{k:?}: {:?} vs {:?}", a.get(k), b.get(k)))
}

/// A command putting one key of the default keyspace.
pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Command {
    Command { ops: vec![Op::Put { keyspace: None, key: key.into(), value: value.into() }] }
}
