//! A client of a test cluster: writes go to the node that leads, follow a redirect, and
//! report whether they were acknowledged; reads are linearizable. It holds only the router,
//! so a task can write and read while the test kills and restarts nodes.

use std::time::{Duration, Instant};

use openraft::error::{CheckIsLeaderError, ClientWriteError, RaftError};
use openraft::ServerState;
use shamba_raft::{Command, NodeId, Response};

use crate::router::Router;

/// What became of one write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Committed and applied: the leader answered.
    Acked(Response),
    /// Never sent to a node that leads (none was known), so in no log.
    NotApplied,
    /// No answer: it may be in some log and be applied later, or never.
    Unknown,
}

#[derive(Clone)]
pub struct Client {
    pub(crate) router: Router,
}

impl Client {
    /// The running node that believes it leads with the highest term, if any.
    pub fn leader(&self) -> Option<NodeId> {
        self.router
            .running()
            .into_iter()
            .filter_map(|(id, raft)| {
                let m = raft.metrics().borrow().clone();
                (m.state == ServerState::Leader).then_some((m.current_term, id))
            })
            .max()
            .map(|(_, id)| id)
    }

    /// Wait for a leader that is not isolated.
    pub async fn wait_for_leader(&self, timeout: Duration) -> NodeId {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(id) = self.leader() {
                if !self.router.isolated().contains(&id) {
                    return id;
                }
            }
            assert!(Instant::now() < deadline, "no leader after {timeout:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// One attempt at a write: sent to the leader (or, with none known, to a running node),
    /// following a redirect to the leader it names.
    ///
    /// A node that does not lead (by its metrics) is not sent the write, so it is
    /// `NotApplied`. Once a node that leads was sent it, a redirect does not mean it was never
    /// appended: openraft also answers `ForwardToLeader` to a write it had appended when a
    /// new leader's log truncates it, and a third node that holds the entry may still lead and
    /// commit it. From then on the outcome is `Unknown` unless a leader acknowledges.
    pub async fn write(&self, command: &Command, timeout: Duration) -> Outcome {
        let running = self.router.running();
        let Some(mut target) = self.leader().or_else(|| running.keys().next().copied()) else {
            return Outcome::NotApplied;
        };
        let mut sent = false;
        let not_acked = |sent| if sent { Outcome::Unknown } else { Outcome::NotApplied };
        for _hop in 0..3 {
            let Some(raft) = running.get(&target) else { break };
            let metrics = raft.metrics().borrow().clone();
            if metrics.state != ServerState::Leader {
                match metrics.current_leader {
                    Some(leader) if leader != target => {
                        target = leader;
                        continue;
                    }
                    _ => break,
                }
            }
            sent = true;
            match tokio::time::timeout(timeout, raft.client_write(command.clone())).await {
                Ok(Ok(answer)) => return Outcome::Acked(answer.data),
                Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(to)))) => match to.leader_id {
                    Some(leader) if leader != target => target = leader,
                    _ => break,
                },
                Ok(Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(e)))) => {
                    panic!("a write is no membership change: {e}")
                }
                // Stopped while the write was in flight, or no answer in time.
                Ok(Err(RaftError::Fatal(_))) | Err(_) => return Outcome::Unknown,
            }
        }
        not_acked(sent)
    }

    /// Write until a leader acknowledges. Every command the tests retry this way is
    /// idempotent, so an earlier attempt that was applied after all changes nothing.
    pub async fn write_acked(&self, command: &Command, timeout: Duration) -> Response {
        let deadline = Instant::now() + timeout;
        loop {
            if let Outcome::Acked(answer) = self.write(command, Duration::from_secs(1)).await {
                return answer;
            }
            assert!(Instant::now() < deadline, "no write acknowledged in {timeout:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A linearizable read of one key served by node `via`, or, if it does not lead, by
    /// the leader it names: the leader confirms with a quorum that it still leads, waits
    /// until it has applied everything committed before the read, then reads its store.
    pub async fn read(&self, via: NodeId, keyspace: Option<&str>, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        self.read_served(via, keyspace, key).await.map(|(value, _)| value)
    }

    /// As [`Client::read`], with the node that served the read.
    pub async fn read_served(
        &self,
        via: NodeId,
        keyspace: Option<&str>,
        key: &[u8],
    ) -> Result<(Option<Vec<u8>>, NodeId), String> {
        let mut target = via;
        for _hop in 0..2 {
            let (Some(raft), Some(store)) = (self.router.running().remove(&target), self.router.store(target)) else {
                return Err(format!("node {target} is not running"));
            };
            match raft.ensure_linearizable().await {
                Ok(_) => {
                    return crate::node::get(&store, keyspace, key).map(|v| (v, target)).map_err(|e| e.to_string())
                }
                Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(to))) => match to.leader_id {
                    Some(leader) if leader != target => target = leader,
                    _ => return Err(format!("node {target} knows no leader")),
                },
                Err(e) => return Err(e.to_string()),
            }
        }
        Err("redirected twice".into())
    }
}
