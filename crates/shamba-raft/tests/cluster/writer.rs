//! A client task writing distinct keys while a test kills, crashes and reconfigures nodes,
//! and the check of a node's data against what it saw.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::{Client, Outcome};
use crate::cluster::put;

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
