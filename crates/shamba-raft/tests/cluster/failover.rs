//! A leader killed (or crashed) while clients write: a new one is elected, the writes go
//! on, the old leader comes back from its directory, and every acknowledged write is on every node.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::{test_config, Cluster};
use crate::disk::DiskKind;
use crate::writer::{check_written, spawn_writer, wait_acked};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_a_leader_killed_mid_stream() {
    failover(DiskKind::Real).await;
}

/// The leader loses power: what it had not synced is gone, yet every write it acknowledged
/// was durable on a majority first.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_a_leader_crashed_mid_stream() {
    failover(DiskKind::Simulated).await;
}

async fn failover(disk: DiskKind) {
    let mut cluster = Cluster::start_on(disk, &[1, 2, 3], test_config()).await;
    let (stop, acked) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let writer = spawn_writer(cluster.client(), "key", stop.clone(), acked.clone());

    wait_acked(&acked, 30, Duration::from_secs(20)).await;
    let old = cluster.leader().unwrap();
    let old_term = cluster.raft(old).metrics().borrow().current_term;
    match disk {
        DiskKind::Real => cluster.kill(old).await,
        DiskKind::Simulated => cluster.crash(old).await,
    }
    let at_kill = acked.load(Ordering::Relaxed);

    let new = cluster.wait_for_leader(Duration::from_secs(10)).await;
    assert_ne!(new, old);
    assert!(cluster.raft(new).metrics().borrow().current_term > old_term);
    wait_acked(&acked, at_kill + 30, Duration::from_secs(20)).await;

    cluster.restart(old).await;
    wait_acked(&acked, at_kill + 50, Duration::from_secs(20)).await;
    stop.store(true, Ordering::Relaxed);
    let written = writer.await.unwrap();

    cluster.converge(&[1, 2, 3], Duration::from_secs(20)).await;
    let data = cluster.assert_identical(&[1, 2, 3]);
    check_written(&written, &data);
    cluster.stop().await;
}
