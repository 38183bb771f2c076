//! Reads are linearizable: a read that starts after a write was acknowledged sees it,
//! whichever node it is sent to, and a leader cut off from the others does not answer one
//! from its stale state.

use std::time::Duration;

use crate::cluster::{put, test_config, Cluster};
use crate::disk::DiskKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_read_after_an_acknowledged_write_sees_it_on_any_node() {
    let mut cluster = Cluster::start(&[1, 2, 3], test_config()).await;
    for i in 0..30u64 {
        let value = format!("v{i}").into_bytes();
        cluster.write_acked(&put("k", value.clone()), Duration::from_secs(10)).await;
        let via = 1 + i % 3;
        assert_eq!(cluster.read(via, None, b"k").await.unwrap(), Some(value), "read via node {via}");
    }

    // A new leader after a kill serves the latest write too.
    let old = cluster.leader().unwrap();
    cluster.kill(old).await;
    cluster.wait_for_leader(Duration::from_secs(10)).await;
    cluster.write_acked(&put("k", "after the kill"), Duration::from_secs(10)).await;
    for via in cluster.running() {
        assert_eq!(cluster.read(via, None, b"k").await.unwrap().as_deref(), Some(&b"after the kill"[..]));
    }
    cluster.restart(old).await;

    // A leader cut off keeps believing it leads for a while; a read sent to it must fail
    // or wait, never return the value it holds once another leader has acknowledged a newer
    // one.
    let cut_off = cluster.wait_for_leader(Duration::from_secs(10)).await;
    cluster.router.isolate(cut_off);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let new = loop {
        if let Some(id) = cluster.leader().filter(|&id| id != cut_off) {
            break id;
        }
        assert!(std::time::Instant::now() < deadline, "no new leader");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    cluster.write_acked(&put("k", "while cut off"), Duration::from_secs(10)).await;
    let stale = tokio::time::timeout(Duration::from_secs(2), cluster.read(cut_off, None, b"k")).await;
    if let Ok(Ok(value)) = stale {
        assert_eq!(value.as_deref(), Some(&b"while cut off"[..]), "node {cut_off} answered a stale read");
    }
    assert_eq!(cluster.read(new, None, b"k").await.unwrap().as_deref(), Some(&b"while cut off"[..]));
    cluster.router.reconnect(cut_off);
    cluster.stop().await;
}

/// A leader that loses power right after acknowledging a write and comes straight back is
/// leader again at once (openraft restores a node whose stored vote is its own committed
/// one); its first reads must still see the write, which needs the commit index it
/// acknowledged to have been durable.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_back_from_a_power_loss_reads_what_it_acknowledged() {
    let mut cluster = Cluster::start_on(DiskKind::Simulated, &[1, 2, 3], test_config()).await;
    let mut restored_as_leader = 0;
    // Whether the restarted node finds itself leader again depends on whether the others
    // elected one before it came back: on a loaded machine that takes more rounds.
    for round in 0..30u32 {
        if round >= 5 && restored_as_leader > 0 {
            break;
        }
        let leader = cluster.wait_for_leader(Duration::from_secs(10)).await;
        let value = format!("round {round}").into_bytes();
        cluster.write_acked(&put("k", value.clone()), Duration::from_secs(10)).await;
        cluster.crash(leader).await;
        cluster.restart(leader).await;
        if cluster.leader() == Some(leader) {
            restored_as_leader += 1;
        }
        let read = cluster.read(leader, None, b"k").await;
        assert_eq!(read, Ok(Some(value)), "round {round}: read via node {leader}");
    }
    // Most runs restore a leader as leader (and failed here without a synced commit
    // index); beside other tests on a loaded machine some never do, which proves nothing
    // either way: said, not failed.
    if restored_as_leader == 0 {
        eprintln!("no leader was restored as leader in 30 rounds: the case was not exercised");
    }
    cluster.stop().await;
}
