//! A randomized run: clients write while nodes are isolated, split off, delayed, killed (or crashed,
//! on simulated disks) and restarted at random; then the links heal, every node comes back, and each key's final value,
//! identical on every node, is checked against the history of the writes
//! ([`crate::history`]), and so is every read answered during the run.
//!
//! `SHAMBA_RAFT_SEED` repeats a run's choice of faults (the interleaving with the clients
//! is the scheduler's); `SHAMBA_RAFT_SECS` sets its length (5 seconds by default).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shamba_raft::{Command, NodeId, Op};

use crate::client::{Client, Outcome};
use crate::cluster::{test_config, Cluster};
use crate::disk::DiskKind;
use crate::history::{check, check_reads, Read, Write};

const NODES: [NodeId; 5] = [1, 2, 3, 4, 5];
const KEYS: u32 = 8;
const WRITERS: u64 = 3;
const READERS: u64 = 2;
/// At most this many nodes are killed or isolated at once, so a majority can always form.
const MAX_FAULTY: usize = 2;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

async fn write_at_random(
    client: Client,
    seed: u64,
    stop: Arc<AtomicBool>,
    history: Arc<Mutex<Vec<Write>>>,
    writer: u64,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("key-{}", rng.gen_range(0..KEYS)).into_bytes();
        let value = rng.gen_bool(0.8).then(|| format!("writer {writer} write {n}").into_bytes());
        let op = match &value {
            Some(v) => Op::Put { keyspace: None, key: key.clone(), value: v.clone() },
            None => Op::Delete { keyspace: None, key: key.clone() },
        };
        let start = Instant::now();
        let outcome = client.write(&Command { ops: vec![op] }, Duration::from_millis(500)).await;
        let end = Instant::now();
        if !matches!(outcome, Outcome::Acked(_)) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        history.lock().unwrap().push(Write { key, value, start, end, outcome });
        n += 1;
    }
}

async fn read_at_random(client: Client, seed: u64, stop: Arc<AtomicBool>, reads: Arc<Mutex<Vec<Read>>>) {
    let mut rng = StdRng::seed_from_u64(seed);
    while !stop.load(Ordering::Relaxed) {
        let key = format!("key-{}", rng.gen_range(0..KEYS)).into_bytes();
        let via = NODES[rng.gen_range(0..NODES.len())];
        let start = Instant::now();
        match tokio::time::timeout(Duration::from_millis(500), client.read_served(via, None, &key)).await {
            Ok(Ok((value, served_by))) => {
                reads.lock().unwrap().push(Read { key, value, via, served_by, start, end: Instant::now() })
            }
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn randomized_faults_lose_no_acknowledged_write() {
    let seed = env_u64("SHAMBA_RAFT_SEED").unwrap_or_else(rand::random);
    let secs = env_u64("SHAMBA_RAFT_SECS").unwrap_or(5);
    println!("randomized run: SHAMBA_RAFT_SEED={seed} SHAMBA_RAFT_SECS={secs}");
    let mut rng = StdRng::seed_from_u64(seed);

    let config = openraft::Config {
        // Snapshots and purges as the run goes, so a node down for a few hundred
        // milliseconds comes back by a snapshot, and a crash may hit an install.
        snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(100),
        max_in_snapshot_log_to_keep: 20,
        snapshot_max_chunk_size: 4096,
        ..test_config()
    };
    let mut cluster = Cluster::start_on(DiskKind::Simulated, &NODES, config).await;
    let stop = Arc::new(AtomicBool::new(false));
    let history = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(write_at_random(cluster.client(), seed ^ (w + 1), stop.clone(), history.clone(), w)))
        .collect();
    let reads = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = (0..READERS)
        .map(|r| tokio::spawn(read_at_random(cluster.client(), seed ^ (r + 101), stop.clone(), reads.clone())))
        .collect();

    let (mut killed, mut isolated, mut split_off) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let (mut kills, mut crashes, mut isolations, mut splits, mut delays) = (0, 0, 0, 0, 0);
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(secs);
    // What a failed run's timeline needs: each fault, when, and who led.
    let log = |what: String, leader: Option<NodeId>| {
        println!("{:8.3} s  {what} (leader before: {leader:?})", t0.elapsed().as_secs_f64())
    };
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(rng.gen_range(100..400))).await;
        let faulty: BTreeSet<NodeId> = killed.iter().chain(&isolated).chain(&split_off).copied().collect();
        let healthy: Vec<NodeId> = NODES.into_iter().filter(|id| !faulty.contains(id)).collect();
        // Half the kills and isolations hit the leader, when there is one.
        let victim = match cluster.leader().filter(|id| healthy.contains(id)) {
            Some(leader) if rng.gen_bool(0.5) => leader,
            _ => healthy[rng.gen_range(0..healthy.len())],
        };
        match rng.gen_range(0..11) {
            0..=1 if faulty.len() < MAX_FAULTY => {
                // Half the kills cut the power: what the node had not synced is lost.
                let leader = cluster.leader();
                if rng.gen_bool(0.5) {
                    cluster.crash(victim).await;
                    crashes += 1;
                    log(format!("crash {victim}"), leader);
                } else {
                    cluster.kill(victim).await;
                    kills += 1;
                    log(format!("kill {victim}"), leader);
                }
                killed.insert(victim);
            }
            2..=3 if faulty.len() < MAX_FAULTY => {
                log(format!("isolate {victim}"), cluster.leader());
                cluster.router.isolate(victim);
                isolated.insert(victim);
                isolations += 1;
            }
            // A minority split off, with the leader in it half the time: it may go on
            // taking writes that it can never commit.
            4 if faulty.is_empty() => {
                let mut side = BTreeSet::from([victim]);
                let size = rng.gen_range(1..=MAX_FAULTY);
                while side.len() < size {
                    side.insert(healthy[rng.gen_range(0..healthy.len())]);
                }
                log(format!("split off {side:?}"), cluster.leader());
                cluster.router.split(&side.iter().copied().collect::<Vec<_>>());
                split_off = side;
                splits += 1;
            }
            5 => {
                cluster
                    .router
                    .set_delay(healthy[rng.gen_range(0..healthy.len())], Duration::from_millis(rng.gen_range(1..30)));
                delays += 1;
            }
            6 => NODES.into_iter().for_each(|id| cluster.router.set_delay(id, Duration::ZERO)),
            _ => {
                if let Some(&id) = killed.iter().nth(rng.gen_range(0..killed.len().max(1))) {
                    cluster.restart(id).await;
                    killed.remove(&id);
                    log(format!("restart {id}"), cluster.leader());
                }
                if let Some(&id) = isolated.iter().nth(rng.gen_range(0..isolated.len().max(1))) {
                    cluster.router.reconnect(id);
                    isolated.remove(&id);
                    log(format!("reconnect {id}"), cluster.leader());
                }
                if !split_off.is_empty() {
                    cluster.router.join();
                    split_off.clear();
                    log("end the split".into(), cluster.leader());
                }
            }
        }
    }

    stop.store(true, Ordering::Relaxed);
    for task in writers.into_iter().chain(readers) {
        task.await.unwrap();
    }
    cluster.router.heal();
    for id in killed {
        cluster.restart(id).await;
    }
    cluster.converge(&NODES, Duration::from_secs(60)).await;
    let data = cluster.assert_identical(&NODES);
    let history = history.lock().unwrap().clone();
    let count = |f: fn(&Outcome) -> bool| history.iter().filter(|w| f(&w.outcome)).count();
    println!(
        "{} writes: {} acknowledged, {} unanswered, {} refused; {kills} kills, {crashes} crashes, {isolations} isolations, {splits} partitions, {delays} delays",
        history.len(),
        count(|o| matches!(o, Outcome::Acked(_))),
        count(|o| matches!(o, Outcome::Unknown)),
        count(|o| matches!(o, Outcome::NotApplied)),
    );
    let reads = reads.lock().unwrap().clone();
    let installed: u64 = NODES.into_iter().map(|id| cluster.router.snapshot_chunks(id).last_chunks).sum();
    println!("{} linearizable reads answered; {installed} snapshots installed", reads.len());
    let mut violations = check(&history, &data);
    violations.extend(check_reads(&history, &reads, t0));
    assert!(violations.is_empty(), "seed {seed}:\n{}", violations.join("\n"));
    assert!(count(|o| matches!(o, Outcome::Acked(_))) > 0, "seed {seed}: no write acknowledged");
    cluster.stop().await;
}
