//! A command across two keyspaces with a range delete is all or nothing on every replica,
//! whichever node is killed or crashed, and whenever.
//!
//! Generation `g` of the command range-deletes every row of keyspace `rows`, puts the
//! generation's four rows there and records `g` in keyspace `meta`: a replica that applied
//! part of one holds rows of two generations, or rows that `meta` does not name.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shamba_raft::{Command, Op};

use crate::client::Outcome;
use crate::cluster::{test_config, Cluster};
use crate::disk::DiskKind;
use crate::node::UserData;
use crate::writer::wait_acked;

const ROWS_PER_GENERATION: u64 = 4;

fn generation(g: u64) -> Command {
    let rows = || Some("rows".to_string());
    let mut ops = vec![Op::DeleteRange { keyspace: rows(), start: b"row/".to_vec(), end: b"row0".to_vec() }];
    for j in 0..ROWS_PER_GENERATION {
        ops.push(Op::Put {
            keyspace: rows(),
            key: format!("row/{g:06}/{j}").into_bytes(),
            value: g.to_string().into_bytes(),
        });
    }
    ops.push(Op::Put { keyspace: Some("meta".into()), key: b"generation".to_vec(), value: g.to_string().into_bytes() });
    Command { ops }
}

/// The generation a replica holds whole (0 before the first), or a panic naming `who`.
fn whole_generation(data: &UserData, who: &str) -> u64 {
    let meta = data.get(&(Some("meta".into()), b"generation".to_vec()));
    let rows: Vec<_> = data.iter().filter(|((ks, _), _)| ks.as_deref() == Some("rows")).collect();
    let Some(meta) = meta else {
        assert!(rows.is_empty(), "{who}: rows without a generation: {rows:?}");
        return 0;
    };
    let g: u64 = String::from_utf8_lossy(meta).parse().unwrap();
    let expected: Vec<Vec<u8>> = (0..ROWS_PER_GENERATION).map(|j| format!("row/{g:06}/{j}").into_bytes()).collect();
    let held: Vec<Vec<u8>> = rows.iter().map(|((_, key), _)| key.clone()).collect();
    assert_eq!(held, expected, "{who}: generation {g} recorded, rows {rows:?}");
    assert!(rows.iter().all(|(_, v)| v == &meta), "{who}: rows of another generation than {g}");
    g
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cross_keyspace_command_is_whole_on_every_replica_after_any_kill() {
    let mut cluster = Cluster::start_on(DiskKind::Simulated, &[1, 2, 3], test_config()).await;
    let (stop, acked) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let writer = {
        let (client, stop, acked) = (cluster.client(), stop.clone(), acked.clone());
        tokio::spawn(async move {
            let mut last_acked = 0;
            let mut g = 1;
            while !stop.load(Ordering::Relaxed) {
                match client.write(&generation(g), Duration::from_secs(1)).await {
                    Outcome::Acked(_) => {
                        last_acked = g;
                        acked.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => tokio::time::sleep(Duration::from_millis(10)).await,
                }
                g += 1;
            }
            last_acked
        })
    };

    // Crash the leader (power lost: what it had not synced is gone), kill a follower (its
    // store dropped), crash a follower, kill the leader, each mid-stream; each time the node's
    // directory, opened on its own, holds whole generations, and so do the running nodes.
    for round in 0..4 {
        wait_acked(&acked, (round + 1) * 15, Duration::from_secs(20)).await;
        let leader = cluster.wait_for_leader(Duration::from_secs(10)).await;
        let follower = cluster.running().into_iter().find(|&id| id != leader).unwrap();
        let victim = if round % 3 == 0 { leader } else { follower };
        if round % 2 == 0 {
            cluster.crash(victim).await;
        } else {
            cluster.kill(victim).await;
        }
        whole_generation(&cluster.user_data_at_rest(victim).await, &format!("node {victim} at rest"));
        for id in cluster.running() {
            whole_generation(&cluster.node(id).user_data(), &format!("node {id} running"));
        }
        cluster.restart(victim).await;
    }
    wait_acked(&acked, 75, Duration::from_secs(20)).await;
    stop.store(true, Ordering::Relaxed);
    let last_acked = writer.await.unwrap();

    cluster.converge(&[1, 2, 3], Duration::from_secs(20)).await;
    let data = cluster.assert_identical(&[1, 2, 3]);
    let g = whole_generation(&data, "every node");
    assert!(g >= last_acked, "generation {g} held, {last_acked} acknowledged");
    cluster.stop().await;
}
