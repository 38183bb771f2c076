//! The membership changed while clients write: a fourth node joins as a learner, is
//! promoted to voter, and the node that leads is removed; no acknowledged write is lost and
//! the new node ends with the same data as the others.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::{BasicNode, ChangeMembers};

use crate::cluster::{test_config, Cluster};
use crate::writer::{check_written, spawn_writer, wait_acked};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_learner_is_added_promoted_and_a_voter_removed_while_clients_write() {
    let mut cluster = Cluster::start(&[1, 2, 3], test_config()).await;
    let (stop, acked) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let writer = spawn_writer(cluster.client(), "key", stop.clone(), acked.clone());
    wait_acked(&acked, 20, Duration::from_secs(20)).await;

    // A learner gets the log (every write so far) before it counts in any quorum.
    cluster.add_node(4).await;
    let leader = cluster.wait_for_leader(Duration::from_secs(10)).await;
    cluster.raft(leader).add_learner(4, BasicNode::new("node-4"), true).await.unwrap();
    assert_eq!(cluster.voters(leader), BTreeSet::from([1, 2, 3]));
    let at_learner = acked.load(Ordering::Relaxed);
    wait_acked(&acked, at_learner + 20, Duration::from_secs(20)).await;

    let leader = cluster.wait_for_leader(Duration::from_secs(10)).await;
    cluster.raft(leader).change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([4])), false).await.unwrap();
    assert_eq!(cluster.voters(leader), BTreeSet::from([1, 2, 3, 4]));
    let at_promotion = acked.load(Ordering::Relaxed);
    wait_acked(&acked, at_promotion + 20, Duration::from_secs(20)).await;

    // Remove the leader itself: it leads until the membership without it is committed,
    // then steps down, and the three others elect one of them.
    let removed = cluster.wait_for_leader(Duration::from_secs(10)).await;
    cluster
        .raft(removed)
        .change_membership(ChangeMembers::RemoveVoters(BTreeSet::from([removed])), false)
        .await
        .unwrap();
    let remaining: Vec<_> = [1, 2, 3, 4].into_iter().filter(|&id| id != removed).collect();
    // It keeps its leader state for a moment after stepping down: wait for one of the
    // others to lead, then for writes under it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cluster.leader().is_some_and(|id| remaining.contains(&id)) {
        assert!(Instant::now() < deadline, "none of {remaining:?} leads after the removal of node {removed}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let at_new_leader = acked.load(Ordering::Relaxed);
    wait_acked(&acked, at_new_leader + 20, Duration::from_secs(20)).await;
    stop.store(true, Ordering::Relaxed);
    let written = writer.await.unwrap();
    cluster.kill(removed).await;

    cluster.converge(&remaining, Duration::from_secs(20)).await;
    for &id in &remaining {
        assert_eq!(cluster.voters(id), remaining.iter().copied().collect::<BTreeSet<_>>(), "node {id}'s voters");
    }
    let data = cluster.assert_identical(&remaining);
    check_written(&written, &data);
    cluster.stop().await;
}
