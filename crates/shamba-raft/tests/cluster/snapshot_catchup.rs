//! A follower cut off while the others write and purge their logs comes back to a leader
//! that no longer has the entries it lacks: it is brought up to date by a snapshot.

use std::time::Duration;

use openraft::SnapshotPolicy;

use crate::cluster::{put, test_config, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_isolated_follower_catches_up_by_snapshot() {
    let config = openraft::Config {
        // A snapshot every 20 entries, and the log purged right up to it.
        snapshot_policy: SnapshotPolicy::LogsSinceLast(20),
        max_in_snapshot_log_to_keep: 0,
        purge_batch_size: 1,
        // Several chunks per snapshot, so the chunked transfer is what is tested.
        snapshot_max_chunk_size: 1024,
        ..test_config()
    };
    let mut cluster = Cluster::start(&[1, 2, 3], config).await;
    for i in 0..5 {
        cluster.write_acked(&put(format!("before-{i}"), "x"), Duration::from_secs(10)).await;
    }
    cluster.converge(&[1, 2, 3], Duration::from_secs(10)).await;

    let leader = cluster.leader().unwrap();
    let behind = [1, 2, 3].into_iter().find(|&id| id != leader).unwrap();
    cluster.router.isolate(behind);
    let behind_last = cluster.raft(behind).metrics().borrow().last_log_index.unwrap();
    let behind_snapshot = cluster.raft(behind).metrics().borrow().snapshot;

    for i in 0..150 {
        let value = format!("{i:0>100}");
        cluster.write_acked(&put(format!("during-{i:03}"), value), Duration::from_secs(10)).await;
    }
    // Every node that is not cut off has purged the entries the isolated one lacks.
    for id in [1, 2, 3].into_iter().filter(|&id| id != behind) {
        cluster
            .raft(id)
            .wait(Some(Duration::from_secs(20)))
            .metrics(
                move |m| m.purged.is_some_and(|p| p.index > behind_last + 1),
                format!("node {id} purges past {behind_last}"),
            )
            .await
            .unwrap();
    }

    // Cut off, it received nothing: no entry past the ones it had, no snapshot.
    let cut_off = cluster.raft(behind).metrics().borrow().clone();
    assert_eq!((cut_off.last_log_index, cut_off.snapshot), (Some(behind_last), behind_snapshot));

    cluster.router.reconnect(behind);
    cluster.converge(&[1, 2, 3], Duration::from_secs(30)).await;
    let after = cluster.raft(behind).metrics().borrow().clone();
    let installed = after.snapshot.expect("the node holds a snapshot");
    assert!(
        Some(installed) != behind_snapshot && installed.index > behind_last + 1,
        "node {behind} was at {behind_last} with snapshot {behind_snapshot:?}; now its snapshot is {installed:?}"
    );
    // It came by the network, in several chunks.
    let received = cluster.router.snapshot_chunks(behind);
    assert!(received.last_chunks >= 1 && received.chunks > received.last_chunks, "node {behind} received {received:?}");
    let data = cluster.assert_identical(&[1, 2, 3]);
    assert_eq!(data.len(), 155);
    cluster.stop().await;
}
