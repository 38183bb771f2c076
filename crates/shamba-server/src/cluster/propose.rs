//! Group commit of proposals: the commands that connections propose meanwhile go to the
//! group as one log entry (their ops concatenated, so applied as one atomic batch), and
//! each proposer gets its own share of the response.
//!
//! openraft 0.9 appends a leader's entries one call at a time and waits for each call's log
//! sync before the next, so one entry per client write would cost one sync each, in
//! series. Here at most [`IN_FLIGHT`] merged entries are proposed at a time; the commands
//! that arrive while they are being committed wait in the queue and form the next entry.
//! Commands from one connection keep their order: they are queued in order, and entries are
//! proposed in queue order.

use super::node::{leads_in, ClusterError};
use openraft::error::RaftError;
use shamba_raft::{Command, Op, Raft, Response};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Semaphore};

/// Merged entries proposed and not yet applied, at most.
const IN_FLIGHT: usize = 2;

/// Bytes of keys and values merged into one entry, at most (a single larger command is an
/// entry of its own): openraft sends up to 300 entries in one append, which must stay far
/// below the RPC frame limit.
const ENTRY_BYTES: usize = 256 << 10;

/// One command waiting to be proposed.
pub(crate) struct Proposal {
    pub(crate) command: Command,
    /// The leader term it must be proposed in, if it read keys (see `Cluster::in_term`).
    pub(crate) term: Option<u64>,
    pub(crate) done: oneshot::Sender<Result<Response, ClusterError>>,
}

fn op_bytes(op: &Op) -> usize {
    match op {
        Op::Put { key, value, .. } => key.len() + value.len(),
        Op::Delete { key, .. } => key.len(),
        Op::DeleteRange { start, end, .. } => start.len() + end.len(),
    }
}

fn deletes(c: &Command) -> usize {
    c.ops.iter().filter(|o| matches!(o, Op::Delete { .. })).count()
}

/// Propose what `queue` receives through `raft`, merged, until the queue closes.
pub(crate) async fn run(raft: Raft, mut queue: mpsc::UnboundedReceiver<Proposal>) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut next: Option<Proposal> = None;
    loop {
        let first = match next.take() {
            Some(p) => p,
            None => match queue.recv().await {
                Some(p) => p,
                None => return,
            },
        };
        // Wait for a slot before gathering: what arrives meanwhile joins this entry.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut bytes: usize = first.command.ops.iter().map(op_bytes).sum();
        let mut group = vec![first];
        while let Ok(p) = queue.try_recv() {
            let b: usize = p.command.ops.iter().map(op_bytes).sum();
            if bytes + b > ENTRY_BYTES {
                next = Some(p);
                break;
            }
            bytes += b;
            group.push(p);
        }
        let mut merged = Command { ops: Vec::new() };
        let mut shares = Vec::with_capacity(group.len());
        for p in group {
            // Read in a term this node no longer leads in: another leader may have changed
            // what it read.
            if p.term.is_some_and(|t| !leads_in(&raft, t)) {
                let _ = p.done.send(Err(ClusterError::LeaderChanged(None)));
                continue;
            }
            shares.push((deletes(&p.command), p.done));
            merged.ops.extend(p.command.ops);
        }
        if shares.is_empty() {
            continue;
        }
        let submitted = raft.client_write_ff(merged).await;
        tokio::spawn(async move {
            let result: Result<Response, ClusterError> = match submitted {
                Ok(rx) => match rx.await {
                    Ok(Ok(r)) => Ok(r.data),
                    Ok(Err(e)) => Err(ClusterError::from(RaftError::APIError(e))),
                    // openraft drops a write's responder unanswered when the node stops
                    // leading (or stops) before the entry commits: the entry may still
                    // commit under the next leader, so its outcome is unknown.
                    Err(_) => Err(ClusterError::LeaderChanged(None)),
                },
                Err(fatal) => Err(ClusterError::Failed(fatal.to_string())),
            };
            drop(slot);
            let mut existed = result.as_ref().map(|r| r.existed.clone().into_iter()).ok();
            for (n, done) in shares {
                let share = match &result {
                    Ok(r) => Ok(Response {
                        index: r.index,
                        existed: existed.as_mut().map(|e| e.by_ref().take(n).collect()).unwrap_or_default(),
                        error: r.error.clone(),
                    }),
                    Err(e) => Err(e.clone()),
                };
                let _ = done.send(share);
            }
        });
    }
}
