//! Crash tests on the engine's simulated disk (`cargo test -p shamba-raft --test crash`):
//! what a power loss keeps (only what was synced) or what a killed process keeps (everything
//! written), at every storage operation of an apply and of a snapshot install, and of the
//! reopen that finishes an interrupted install. After the reopen everything acknowledged is
//! there, and the state machine is the old one or the new one, never a mix.

mod common;

use common::*;
use openraft::storage::{RaftLogReader, RaftLogStorage, RaftLogStorageExt, RaftSnapshotBuilder, RaftStateMachine};
use openraft::{LogId, Vote};
use shamba::lab::{CrashKeeps, SimFault, SimStorage};
use shamba::{Options, Readable};
use shamba_raft::{NodeId, Store, StoreOptions};
use std::path::Path;
use std::sync::Arc;

/// A store on `disk` (its snapshot files in `dir`, on the real file system): flushes and
/// compactions only when the memtable fills, small batches when a snapshot is loaded.
fn open(dir: &Path, disk: &SimStorage) -> shamba::Result<Store> {
    let db = Options {
        storage: Arc::new(disk.clone()),
        write_buffer_size: 64 << 10,
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 100,
        level0_stop_trigger: 100,
        auto_resume_interval: None,
        target_file_size: 16 << 10,
        block_size: 1024,
        ..Options::default()
    };
    Store::open(dir, StoreOptions { db, load_batch_bytes: 2 << 10 })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn a_power_loss_keeps_every_acknowledged_append_vote_purge_and_apply() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SimStorage::new();
    let vote = Vote::new(4, 1);
    runtime().block_on(async {
        let store = open(dir.path(), &disk).unwrap();
        let (mut log, mut sm) = (store.log_store(), store.state_machine());
        log.save_vote(&vote).await.unwrap();
        for i in 1..=20 {
            log.blocking_append([entry(1, i, command(vec![put(Some("users"), &format!("u{i:02}"), "v")]))])
                .await
                .unwrap();
        }
        // Not synced on their own: the next append's sync makes them durable (one log).
        let applied: Vec<_> = log.try_get_log_entries(1..=10).await.unwrap();
        sm.apply(applied).await.unwrap();
        log.purge(log_id(1, 5)).await.unwrap();
        log.blocking_append([entry(2, 21, command(vec![]))]).await.unwrap();
    });
    disk.crash(CrashKeeps::Synced);
    runtime().block_on(async {
        let store = open(dir.path(), &disk).unwrap();
        let (mut log, mut sm) = (store.log_store(), store.state_machine());
        assert_eq!(log.read_vote().await.unwrap(), Some(vote));
        let state = log.get_log_state().await.unwrap();
        assert_eq!((state.last_purged_log_id, state.last_log_id), (Some(log_id(1, 5)), Some(log_id(2, 21))));
        assert_eq!(log.try_get_log_entries(0..100).await.unwrap().len(), 16);
        assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1, 10)));
        assert_eq!(store.keyspace(Some("users")).unwrap().iter().count(), 10);
    });
}

/// What a store's state machine is: its last applied log id and its data.
type State = (Option<LogId<NodeId>>, Contents);

fn state_of(rt: &tokio::runtime::Runtime, store: &Store) -> State {
    let applied = rt.block_on(store.state_machine().applied_state()).unwrap().0;
    (applied, contents(store))
}

/// Run `change` on a store holding an old state (durable), with a crash at operation
/// `fault` of the change (counted from its start) if given; crash keeping `keeps`, reopen,
/// and check the state is `old` or what the change leads to (`new`, the state of a run
/// without a fault), and the new one if the change returned. Returns the state after and
/// the operations the change did.
fn crash_run<F>(
    fault: Option<u64>,
    keeps: CrashKeeps,
    change: &F,
    expected: Option<(&State, &State)>,
) -> Result<(State, u64), String>
where
    F: Fn(&tokio::runtime::Runtime, &Store) -> Result<(), String>,
{
    let dir = tempfile::tempdir().unwrap();
    let disk = SimStorage::new();
    let rt = runtime();
    let (done, ops) = {
        let store = with_old_state(&rt, dir.path(), &disk)?;
        let start = disk.ops();
        if let Some(n) = fault {
            disk.fail_at(start + n, SimFault::Crash);
        }
        let done = change(&rt, &store);
        (done, disk.ops() - start)
    };
    disk.crash(keeps);
    let store = open(dir.path(), &disk).map_err(|e| format!("reopen: {e}"))?;
    let after = state_of(&rt, &store);
    if let Some((old, new)) = expected {
        let is_new = &after == new;
        if !(is_new || &after == old) {
            return Err(format!("a mix after the crash: applied {:?}, {} keyspaces", after.0, after.1.len()));
        }
        if done.is_ok() && !is_new {
            return Err("the change returned but the old state came back".into());
        }
        let files = std::fs::read_dir(store.snapshot_dir()).unwrap().count();
        if files > 1 {
            return Err(format!("{files} snapshot files kept"));
        }
    }
    Ok((after, ops))
}

fn keys(state: &State) -> usize {
    state.1.values().map(|pairs| pairs.len()).sum()
}

/// The state the crash runs start from.
fn old_state() -> State {
    let mut users: Vec<(String, String, String)> =
        (0..300).map(|i| ("users".to_string(), format!("old{i:04}"), "x".to_string())).collect();
    users.push(("default".into(), "o".into(), "1".into()));
    users.push(("gone".into(), "g".into(), "1".into()));
    let pairs: Vec<(&str, &str, &str)> = users.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    (Some(log_id(1, 3)), expect(&pairs))
}

/// A store on `disk` holding [`old_state`], durable.
fn with_old_state(rt: &tokio::runtime::Runtime, dir: &Path, disk: &SimStorage) -> Result<Store, String> {
    let store = open(dir, disk).map_err(|e| e.to_string())?;
    let mut sm = store.state_machine();
    rt.block_on(sm.apply([
        membership_entry(1, 1, &[1]),
        entry(1, 2, command((0..300).map(|i| put(Some("users"), &format!("old{i:04}"), "x")).collect())),
        entry(1, 3, command(vec![put(None, "o", "1"), put(Some("gone"), "g", "1")])),
    ]))
    .map_err(|e| e.to_string())?;
    store.db().sync_wal().map_err(|e| e.to_string())?;
    Ok(store)
}

/// Sweep a crash over every operation of `change`, which leads from [`old_state`] to `new`,
/// keeping what was synced or everything.
fn at_every_operation<F>(what: &str, new: State, change: F)
where
    F: Fn(&tokio::runtime::Runtime, &Store) -> Result<(), String>,
{
    let (old, _) = crash_run(None, CrashKeeps::Synced, &|_: &tokio::runtime::Runtime, _: &Store| Ok(()), None)
        .expect("the old state");
    assert!(old == old_state(), "the old state is not what the runs start from");
    let (after, total) = crash_run(None, CrashKeeps::Synced, &change, None).expect("without a crash");
    assert!(after == new, "the {what} without a crash left applied {:?} and {} keys", after.0, keys(&after));
    assert!(total >= 4, "the {what} did only {total} storage operations");
    let mut failures = Vec::new();
    let mut runs = 0;
    for n in 0..total {
        // A power loss at every operation; a killed process (everything written kept) at
        // every other one, to keep the test short.
        let kinds: &[CrashKeeps] =
            if n % 2 == 0 { &[CrashKeeps::Synced, CrashKeeps::Written] } else { &[CrashKeeps::Synced] };
        for &keeps in kinds {
            runs += 1;
            if let Err(e) = crash_run(Some(n), keeps, &change, Some((&old, &new))) {
                failures.push(format!("a crash at operation {n} of the {what}, keeping {keeps:?}: {e}"));
            }
        }
    }
    eprintln!("{what}: {total} operations, {runs} crash runs, {} failures", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_apply_is_all_or_nothing_at_every_crash_point() {
    let (_, mut new) = old_state();
    let users = new.get_mut("users").unwrap();
    users.retain(|k, _| !(k.as_slice() >= b"old0100".as_slice() && k.as_slice() < b"old0200".as_slice()));
    users.insert(b"new".to_vec(), b"1".to_vec());
    new.remove("default");
    new.insert("fresh".into(), [(b"f".to_vec(), b"1".to_vec())].into());
    at_every_operation("apply", (Some(log_id(2, 4)), new), |rt, store| {
        let mut sm = store.state_machine();
        rt.block_on(sm.apply([entry(
            2,
            4,
            command(vec![
                delete_range(Some("users"), "old0100", "old0200"),
                put(Some("users"), "new", "1"),
                delete(None, "o"),
                put(Some("fresh"), "f", "1"),
            ]),
        )]))
        .map_err(|e| e.to_string())?;
        store.db().sync_wal().map_err(|e| e.to_string())
    });
}

/// A snapshot built by another node, on the real file system: its file, its meta and the
/// state machine it holds.
struct Source {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    meta: openraft::SnapshotMeta<NodeId, shamba_raft::Node>,
    state: State,
}

fn source() -> Source {
    let leader_dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let (path, meta, leader_contents) = {
        let leader = Store::open(leader_dir.path(), StoreOptions::default()).unwrap();
        let mut sm = leader.state_machine();
        rt.block_on(sm.apply([
            membership_entry(1, 1, &[1, 2]),
            entry(
                2,
                7,
                command((0..800).map(|i| put(Some("users"), &format!("new{i:04}"), "payload-payload")).collect()),
            ),
            entry(2, 8, command((0..400).map(|i| put(None, &format!("d{i:04}"), "default")).collect())),
        ]))
        .unwrap();
        let snap = rt.block_on(async { sm.get_snapshot_builder().await.build_snapshot().await }).unwrap();
        let path = std::fs::read_dir(leader.snapshot_dir()).unwrap().next().unwrap().unwrap().path();
        (path, snap.meta, contents(&leader))
    };
    Source { _dir: leader_dir, path, state: (meta.last_log_id, leader_contents), meta }
}

fn install(rt: &tokio::runtime::Runtime, store: &Store, source: &Source) -> Result<(), String> {
    let mut sm = store.state_machine();
    rt.block_on(async {
        let file = tokio::fs::File::open(&source.path).await.map_err(|e| e.to_string())?;
        sm.install_snapshot(&source.meta, Box::new(file)).await.map_err(|e| e.to_string())
    })
}

#[test]
fn a_snapshot_install_is_all_or_nothing_at_every_crash_point() {
    let source = source();
    at_every_operation("snapshot install", source.state.clone(), |rt, store| install(rt, store, &source));
}

/// An install killed at its operation `first` (everything written kept), then the reopen
/// that finishes it crashed at its operation `second` (keeping `keeps`), then a reopen.
/// Returns the state after and the operations of the interrupted reopen.
fn twice_interrupted(
    source: &Source,
    first: u64,
    second: Option<u64>,
    keeps: CrashKeeps,
) -> Result<(State, u64), String> {
    let dir = tempfile::tempdir().unwrap();
    let disk = SimStorage::new();
    let rt = runtime();
    {
        let store = with_old_state(&rt, dir.path(), &disk)?;
        disk.fail_at(disk.ops() + first, SimFault::Crash);
        if install(&rt, &store, source).is_ok() {
            return Err(format!("the install ended before its operation {first}"));
        }
    }
    disk.crash(CrashKeeps::Written);
    let start = disk.ops();
    if let Some(n) = second {
        disk.fail_at(start + n, SimFault::Crash);
    }
    drop(open(dir.path(), &disk));
    let ops = disk.ops() - start;
    disk.crash(keeps);
    let store = open(dir.path(), &disk).map_err(|e| format!("reopen: {e}"))?;
    Ok((state_of(&rt, &store), ops))
}

#[test]
fn a_crash_while_the_reopen_finishes_an_install_still_ends_with_the_snapshot() {
    let source = source();
    // Crash the install at its 8th operation on the disk: after its marker (its first write,
    // synced), a few batches into the load.
    let first = 8;
    let (after, reopen_ops) = twice_interrupted(&source, first, None, CrashKeeps::Synced).expect("once");
    assert!(after == source.state, "the reopen finished the install");
    assert!(reopen_ops >= 4, "the reopen did only {reopen_ops} operations");
    let mut failures = Vec::new();
    // Every sixth operation, to keep the test short.
    for n in (0..reopen_ops).step_by(6) {
        for keeps in [CrashKeeps::Synced, CrashKeeps::Written] {
            match twice_interrupted(&source, first, Some(n), keeps) {
                Ok((after, _)) if after == source.state => {}
                Ok((after, _)) => {
                    failures.push(format!("operation {n}, {keeps:?}: applied {:?}, {} keys", after.0, keys(&after)))
                }
                Err(e) => failures.push(format!("operation {n}, {keeps:?}: {e}")),
            }
        }
    }
    eprintln!("reopen after an interrupted install: {reopen_ops} operations, {} failures", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
