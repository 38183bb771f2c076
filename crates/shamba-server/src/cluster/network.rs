//! openraft's network over the nodes' tarpc service: one connection per peer, shared by
//! everything that calls it (replication, the heartbeats of each read barrier, elections,
//! forwarded requests: tarpc runs concurrent calls over one connection), made on first use
//! and again after a failure (openraft backs off between tries of an unreachable peer).

use super::rpc::{NodeRpcClient, MAX_FRAME};
use openraft::error::{InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse, VoteRequest,
    VoteResponse,
};
use parking_lot::Mutex;
use shamba_raft::{Node, NodeId, TypeConfig};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tarpc::client::RpcError;
use tarpc::tokio_serde::formats::Bincode;

/// A connected client of the node at `addr`.
///
/// # Errors
///
/// The connection's error (refused, unreachable).
pub(crate) async fn connect(addr: &str) -> std::io::Result<NodeRpcClient> {
    let stream = tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, format!("connecting to {addr}")))??;
    Ok(NodeRpcClient::new(tarpc::client::Config::default(), transport(stream)).spawn())
}

/// The framing both sides use over `stream`: length-delimited bincode frames of at most
/// [`MAX_FRAME`] bytes, sent at once (no Nagle delay on a heartbeat).
pub(crate) fn transport<Item, SinkItem>(
    stream: tokio::net::TcpStream,
) -> tarpc::serde_transport::Transport<tokio::net::TcpStream, Item, SinkItem, Bincode<Item, SinkItem>>
where
    Item: for<'de> serde::Deserialize<'de>,
    SinkItem: serde::Serialize,
{
    let _ = stream.set_nodelay(true);
    let framed =
        tarpc::tokio_util::codec::LengthDelimitedCodec::builder().max_frame_length(MAX_FRAME).new_framed(stream);
    tarpc::serde_transport::new(framed, Bincode::default())
}

/// A tarpc context whose deadline is `ttl` from now.
pub(crate) fn context(ttl: Duration) -> tarpc::context::Context {
    let mut ctx = tarpc::context::current();
    ctx.deadline = Instant::now() + ttl;
    ctx
}

/// The connections to the peers, by node id, with the address each was made to.
#[derive(Clone, Default)]
pub(crate) struct Pool {
    clients: Arc<Mutex<HashMap<NodeId, (String, NodeRpcClient)>>>,
}

impl Pool {
    /// The connection to node `target` at `addr`, made if there is none (or one to another
    /// address).
    ///
    /// # Errors
    ///
    /// As [`connect`].
    pub(crate) async fn get(&self, target: NodeId, addr: &str) -> std::io::Result<NodeRpcClient> {
        if let Some((a, c)) = self.clients.lock().get(&target) {
            if a == addr {
                return Ok(c.clone());
            }
        }
        let c = connect(addr).await?;
        self.clients.lock().insert(target, (addr.to_string(), c.clone()));
        Ok(c)
    }

    /// Drop the connection to `target` after a failed call: the next call connects anew.
    pub(crate) fn forget(&self, target: NodeId) {
        self.clients.lock().remove(&target);
    }
}

/// Makes the clients openraft sends its RPCs through.
#[derive(Clone, Default)]
pub(crate) struct Network {
    pub(crate) pool: Pool,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &Node) -> Peer {
        Peer { target, addr: node.addr.clone(), pool: self.pool.clone() }
    }
}

/// The calls to one peer.
pub(crate) struct Peer {
    target: NodeId,
    addr: String,
    pool: Pool,
}

/// Why an RPC got no answer from the peer's Raft.
enum CallError {
    /// Not connected: openraft backs off before the next try.
    Unreachable(std::io::Error),
    /// Sent, but no answer (deadline, connection lost).
    Rpc(RpcError),
}

impl CallError {
    fn into_rpc<E: std::error::Error>(self) -> RPCError<NodeId, Node, E> {
        match self {
            CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Rpc(RpcError::Shutdown) => RPCError::Unreachable(Unreachable::new(&RpcError::Shutdown)),
            CallError::Rpc(e) => RPCError::Network(NetworkError::new(&e)),
        }
    }
}

impl Peer {
    async fn client(&mut self) -> Result<NodeRpcClient, CallError> {
        self.pool.get(self.target, &self.addr).await.map_err(CallError::Unreachable)
    }

    /// Forget the connection after a failed call (not after a deadline: the connection
    /// may be fine and the peer slow): the next call connects anew.
    fn failed<T>(&mut self, r: Result<T, RpcError>) -> Result<T, CallError> {
        r.map_err(|e| {
            if !matches!(e, RpcError::DeadlineExceeded) {
                self.pool.forget(self.target);
            }
            CallError::Rpc(e)
        })
    }

    fn remote<E: std::error::Error>(&self, e: RaftError<NodeId, E>) -> RPCError<NodeId, Node, RaftError<NodeId, E>> {
        RPCError::RemoteError(RemoteError::new(self.target, e))
    }
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        let client = self.client().await.map_err(CallError::into_rpc)?;
        let r = client.append_entries(context(option.hard_ttl()), rpc).await;
        self.failed(r).map_err(CallError::into_rpc)?.map_err(|e| self.remote(e))
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<InstallSnapshotResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId, InstallSnapshotError>>> {
        let client = self.client().await.map_err(CallError::into_rpc)?;
        let r = client.install_snapshot(context(option.hard_ttl()), rpc).await;
        self.failed(r).map_err(CallError::into_rpc)?.map_err(|e| self.remote(e))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, Node, RaftError<NodeId>>> {
        let client = self.client().await.map_err(CallError::into_rpc)?;
        let r = client.vote(context(option.hard_ttl()), rpc).await;
        self.failed(r).map_err(CallError::into_rpc)?.map_err(|e| self.remote(e))
    }
}
