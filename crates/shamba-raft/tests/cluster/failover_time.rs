//! The time from killing the leader to the first write a new leader acknowledges, over 20
//! kills, printed (not a pass/fail test):
//!
//! ```text
//! cargo test -p shamba-raft --test cluster failover_time -- --ignored --nocapture
//! ```
//!
//! With the tests' timeouts by default; `SHAMBA_RAFT_ELECTION_MS=N` runs it with an election
//! timeout of N..2N ms and a heartbeat of N/6 ms instead.

use std::time::{Duration, Instant};

use crate::client::Outcome;
use crate::cluster::{put, test_config, Cluster};

const KILLS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn failover_time() {
    let config = match std::env::var("SHAMBA_RAFT_ELECTION_MS") {
        Ok(ms) => {
            let ms: u64 = ms.parse().expect("SHAMBA_RAFT_ELECTION_MS is a number of milliseconds");
            openraft::Config {
                election_timeout_min: ms,
                election_timeout_max: 2 * ms,
                heartbeat_interval: (ms / 6).max(1),
                ..test_config()
            }
        }
        Err(_) => test_config(),
    };
    println!(
        "heartbeat {} ms, election timeout {}..{} ms, 3 nodes in one process",
        config.heartbeat_interval, config.election_timeout_min, config.election_timeout_max
    );
    let mut cluster = Cluster::start(&[1, 2, 3], config).await;
    let client = cluster.client();
    let mut times = Vec::new();
    for kill in 0..KILLS {
        cluster.converge(&[1, 2, 3], Duration::from_secs(20)).await;
        let leader = cluster.wait_for_leader(Duration::from_secs(10)).await;
        let killed_at = Instant::now();
        cluster.kill(leader).await;
        let key = format!("after kill {kill}");
        let mut elected = None;
        loop {
            if elected.is_none() && client.leader().is_some() {
                elected = Some(killed_at.elapsed());
            }
            if let Outcome::Acked(_) = client.write(&put(key.clone(), "x"), Duration::from_millis(200)).await {
                break;
            }
            assert!(killed_at.elapsed() < Duration::from_secs(20), "no leader 20 s after kill {kill}");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let took = killed_at.elapsed();
        let elected = elected.unwrap_or(took);
        println!(
            "kill {kill}: node {leader}; a new leader after {} ms, its first acknowledged write after {} ms",
            elected.as_millis(),
            took.as_millis()
        );
        times.push(took);
        cluster.restart(leader).await;
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{KILLS} kills: median {:.0} ms, worst {:.0} ms, best {:.0} ms",
        ms((times[KILLS / 2 - 1] + times[KILLS / 2]) / 2),
        ms(times[KILLS - 1]),
        ms(times[0])
    );
    cluster.stop().await;
}
