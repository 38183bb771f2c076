//! A leader killed (or crashed) while clients write: a new one is elected, the writes go on, the old
//! leader comes back from its directory, and every acknowledged write is on every node.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::{Client, Outcome};
use crate::cluster::{put, test_config, Cluster};
use crate::disk::DiskKind;

/// What a writer of distinct keys saw: the value of each key it wrote, with its outcome.
pub type Written = BTreeMap<Vec<u8>, (Vec<u8>, Outcome)>;

/// A task writing `prefix-00000`, `prefix-00001`, ... once each until `stop`, counting the
/// acknowledged writes in `acked`.
pub fn spawn_writer(
    client: Client,
    prefix: &'static str,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<Written> {
    tokio::spawn(async move {
        let mut written = Written::new();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let key = format!("{prefix}-{i:05}").into_bytes();
            let value = format!("value of {prefix} {i}").into_bytes();
            let outcome = client.write(&put(key.clone(), value.clone()), Duration::from_secs(1)).await;
            match outcome {
                Outcome::Acked(_) => {
                    acked.fetch_add(1, Ordering::Relaxed);
                }
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            }
            written.insert(key, (value, outcome));
            i += 1;
        }
        written
    })
}

/// Wait until `acked` reaches `n`.
pub async fn wait_acked(acked: &AtomicUsize, n: usize, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while acked.load(Ordering::Relaxed) < n {
        assert!(
            Instant::now() < deadline,
            "{} writes acknowledged after {timeout:?}, waiting for {n}",
            acked.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every acknowledged write is in `data` with its value, and no write refused before it
/// entered a log is (an unanswered one may be either way).
pub fn check_written(written: &Written, data: &crate::node::UserData) {
    for (key, (value, outcome)) in written {
        let held = data.get(&(None, key.clone()));
        match outcome {
            Outcome::Acked(_) => {
                assert_eq!(held, Some(value), "acknowledged write of {} lost", String::from_utf8_lossy(key))
            }
            Outcome::NotApplied => {
                assert_eq!(held, None, "refused write of {} applied", String::from_utf8_lossy(key))
            }
            Outcome::Unknown => assert!(held.is_none() || held == Some(value)),
        }
    }
}

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
