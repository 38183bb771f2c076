//! Measurements of the storage, in a release build:
//!
//! ```sh
//! cargo build --release -p shamba-raft --example snapshot_install
//! B=target/release/examples/snapshot_install
//! $B prepare /tmp/raft-measure 1024               # a leader with 1 GiB applied, a snapshot built
//! /usr/bin/time -v $B install /tmp/raft-measure   # a new node installs it: time, peak memory
//! $B write-amp /tmp/raft-measure 256 64           # bytes written per user byte, log + state
//!                                                 # machine (log purged every 64 commands)
//!                                                 # against a plain database
//! $B group-sync /tmp/raft-measure 8 2000          # appends from 8 tasks: syncs per append
//! ```
//!
//! Values are pseudo-random (incompressible); keys are 16 bytes, values 4 KiB, 256 to a
//! command. Bytes written are the process's `wchar` (bytes handed to `write`) and
//! `write_bytes` (bytes sent to the block device) from `/proc/self/io`.

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftSnapshotBuilder, RaftStateMachine};
use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId};
use shamba::{Db, Options, Readable, WriteBatch, WriteOptions};
use shamba_raft::{Command, Op, Store, StoreOptions, TypeConfig};
use std::path::{Path, PathBuf};
use std::time::Instant;

type Error = Box<dyn std::error::Error + Send + Sync>;

const VALUE: usize = 4096;
const PER_COMMAND: usize = 256;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).cloned().ok_or_else(|| format!("usage: see the file's header (argument {i})"));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    match arg(1)?.as_str() {
        "prepare" => rt.block_on(prepare(Path::new(&arg(2)?), arg(3)?.parse()?)),
        "install" => rt.block_on(install(Path::new(&arg(2)?))),
        "write-amp" => {
            let purge_every = arg(4).ok().map(|a| a.parse()).transpose()?.unwrap_or(64);
            rt.block_on(write_amp(Path::new(&arg(2)?), arg(3)?.parse()?, purge_every))
        }
        "group-sync" => rt.block_on(group_sync(Path::new(&arg(2)?), arg(3)?.parse()?, arg(4)?.parse()?)),
        other => Err(format!("unknown mode {other}").into()),
    }
}

/// A deterministic, incompressible byte stream.
struct Bytes(u64);

impl Bytes {
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            chunk.copy_from_slice(&self.0.to_le_bytes()[..chunk.len()]);
        }
    }
}

/// Command number `n`: `PER_COMMAND` puts in keyspace `data`.
fn command(n: u64, bytes: &mut Bytes) -> Command {
    let ops = (0..PER_COMMAND as u64)
        .map(|j| {
            let mut value = vec![0u8; VALUE];
            bytes.fill(&mut value);
            Op::Put {
                keyspace: Some("data".into()),
                key: format!("key{:013}", n * PER_COMMAND as u64 + j).into_bytes(),
                value,
            }
        })
        .collect();
    Command { ops }
}

fn entry(index: u64, command: Command) -> Entry<TypeConfig> {
    Entry { log_id: LogId::new(CommittedLeaderId::new(1, 1), index), payload: EntryPayload::Normal(command) }
}

fn commands_for(mb: u64) -> u64 {
    (mb << 20) / (PER_COMMAND * VALUE) as u64
}

fn user_bytes(commands: u64) -> u64 {
    commands * (PER_COMMAND * (16 + VALUE)) as u64
}

fn fresh(dir: &Path) -> Result<PathBuf, Error> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(dir.to_path_buf())
}

async fn prepare(dir: &Path, mb: u64) -> Result<(), Error> {
    let leader = Store::open(&fresh(&dir.join("leader"))?, StoreOptions::default())?;
    let mut sm = leader.state_machine();
    let mut bytes = Bytes(0x9e37_79b9_7f4a_7c15);
    let commands = commands_for(mb);
    let start = Instant::now();
    for n in 0..commands {
        sm.apply([entry(n + 1, command(n, &mut bytes))]).await?;
    }
    println!("applied {commands} commands ({} user bytes) in {:.1?}", user_bytes(commands), start.elapsed());
    let start = Instant::now();
    let snap = sm.get_snapshot_builder().await.build_snapshot().await?;
    let size = snap.snapshot.metadata().await?.len();
    println!("built snapshot {} of {size} bytes in {:.1?}", snap.meta.snapshot_id, start.elapsed());
    Ok(())
}

async fn install(dir: &Path) -> Result<(), Error> {
    let leader = Store::open(&dir.join("leader"), StoreOptions::default())?;
    let snap = leader.state_machine().get_current_snapshot().await?.ok_or("no snapshot: run prepare first")?;
    let follower = Store::open(&fresh(&dir.join("follower"))?, StoreOptions::default())?;
    let mut sm = follower.state_machine();

    let start = Instant::now();
    let mut received = sm.begin_receiving_snapshot().await?;
    let mut source = snap.snapshot;
    let size = tokio::io::copy(&mut source, &mut *received).await?;
    let copied = start.elapsed();
    let start = Instant::now();
    sm.install_snapshot(&snap.meta, received).await?;
    let installed = start.elapsed();
    println!("received {size} bytes in {copied:.1?}; installed in {installed:.1?}");
    println!("peak resident memory so far: {} KiB", peak_rss_kib());

    let start = Instant::now();
    let keys = follower.keyspace(Some("data"))?.iter().count();
    let applied = sm.applied_state().await?.0;
    println!(
        "check: {keys} keys, last applied {applied:?} (leader's {:?}), scanned in {:.1?}",
        snap.meta.last_log_id,
        start.elapsed()
    );
    Ok(())
}

/// `(wchar, write_bytes)` of this process so far.
fn io_written() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field =
        |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    (field("wchar:"), field("write_bytes:"))
}

fn peak_rss_kib() -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Finish the background work and close, so every byte the data costs is counted.
fn settle(db: Db) -> Result<(), Error> {
    db.flush()?;
    db.wait_for_compactions()?;
    db.close()?;
    Ok(())
}

async fn write_amp(dir: &Path, mb: u64, purge_every: u64) -> Result<(), Error> {
    let commands = commands_for(mb);
    let user = user_bytes(commands) as f64;

    // Replicated: each command appended to the log (synced), applied, and the log purged
    // up to what is applied every `purge_every` commands (of 1 MiB), as a snapshot policy
    // would.
    let store = Store::open(&fresh(&dir.join("wa-raft"))?, StoreOptions::default())?;
    let (mut log, mut sm) = (store.log_store(), store.state_machine());
    let mut bytes = Bytes(1);
    let before = io_written();
    let start = Instant::now();
    for n in 0..commands {
        let e = entry(n + 1, command(n, &mut bytes));
        log.blocking_append([e.clone()]).await?;
        sm.apply([e]).await?;
        if (n + 1) % purge_every == 0 {
            log.purge(LogId::new(CommittedLeaderId::new(1, 1), n + 1)).await?;
        }
    }
    let raft_time = start.elapsed();
    let db = store.db().clone();
    drop((log, sm, store));
    settle(db)?;
    let after = io_written();
    let raft = (after.0 - before.0, after.1 - before.1);

    // One node: the same batches written with a sync each.
    let db = Db::open(fresh(&dir.join("wa-plain"))?, Options::default())?;
    let data = db.keyspace("data")?;
    let mut bytes = Bytes(1);
    let before = io_written();
    let start = Instant::now();
    for n in 0..commands {
        let mut batch = WriteBatch::new();
        for op in command(n, &mut bytes).ops {
            if let Op::Put { key, value, .. } = op {
                batch.put_in(&data, key, value);
            }
        }
        db.write_opt(batch, &WriteOptions { sync: true, disable_wal: false, no_slowdown: false })?;
    }
    let plain_time = start.elapsed();
    settle(db)?;
    let after = io_written();
    let plain = (after.0 - before.0, after.1 - before.1);

    println!("user bytes: {user}");
    println!(
        "replicated (log + state machine): wchar {} ({:.2}x), write_bytes {} ({:.2}x), {raft_time:.1?}",
        raft.0,
        raft.0 as f64 / user,
        raft.1,
        raft.1 as f64 / user
    );
    println!(
        "one database:                     wchar {} ({:.2}x), write_bytes {} ({:.2}x), {plain_time:.1?}",
        plain.0,
        plain.0 as f64 / user,
        plain.1,
        plain.1 as f64 / user
    );
    Ok(())
}

async fn group_sync(dir: &Path, tasks: u64, per_task: u64) -> Result<(), Error> {
    let store = Store::open(&fresh(&dir.join("group-sync"))?, StoreOptions::default())?;
    let start = Instant::now();
    let mut handles = Vec::new();
    for t in 0..tasks {
        let mut log = store.log_store();
        handles.push(tokio::spawn(async move {
            for i in 0..per_task {
                let op = Op::Put { keyspace: None, key: format!("t{t}-{i}").into_bytes(), value: vec![7u8; 100] };
                log.blocking_append([entry(t * per_task + i + 1, Command { ops: vec![op] })]).await?;
            }
            Ok::<(), openraft::StorageError<u64>>(())
        }));
    }
    for h in handles {
        h.await??;
    }
    let appends = tasks * per_task;
    let elapsed = start.elapsed();
    println!(
        "{appends} appends from {tasks} tasks in {elapsed:.1?} ({:.0}/s), {} syncs ({:.2} appends per sync)",
        appends as f64 / elapsed.as_secs_f64(),
        store.log_syncs(),
        appends as f64 / store.log_syncs().max(1) as f64
    );
    Ok(())
}
