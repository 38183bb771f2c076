//! Restart tests: a store dropped without close after each kind of write, reopened from its
//! directory; everything acknowledged is there.

mod common;

use common::*;
use openraft::storage::{RaftLogReader, RaftLogStorage, RaftLogStorageExt, RaftSnapshotBuilder, RaftStateMachine};
use openraft::{StoredMembership, Vote};
use shamba_raft::{Store, StoreOptions};
use std::path::Path;
use tokio::io::AsyncWriteExt;

fn open(dir: &Path) -> Store {
    Store::open(dir, StoreOptions::default()).expect("open the store")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_vote_and_committed_survive_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let vote = Vote::new_committed(3, 2);
    {
        let store = open(dir.path());
        let mut log = store.log_store();
        log.save_vote(&vote).await.unwrap();
        for i in 1..=50 {
            log.blocking_append([entry(1 + i / 20, i, command(vec![put(None, &format!("k{i}"), "v")]))]).await.unwrap();
        }
        log.save_committed(Some(log_id(2, 45))).await.unwrap();
        log.purge(log_id(1, 10)).await.unwrap();
        log.truncate(log_id(3, 41)).await.unwrap();
        // Appending after a truncate replaces the tail.
        log.blocking_append([entry(3, 41, command(vec![put(None, "new", "tail")]))]).await.unwrap();
    }
    let store = open(dir.path());
    let mut log = store.log_store();
    assert_eq!(log.read_vote().await.unwrap(), Some(vote));
    assert_eq!(log.read_committed().await.unwrap(), Some(log_id(2, 45)));
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 10)));
    assert_eq!(state.last_log_id, Some(log_id(3, 41)));
    let entries = log.try_get_log_entries(0..100).await.unwrap();
    let indexes: Vec<u64> = entries.iter().map(|e| e.log_id.index).collect();
    assert_eq!(indexes, (11..=41).collect::<Vec<_>>());
    assert_eq!(entries[0], entry(1, 11, command(vec![put(None, "k11", "v")])));
    assert_eq!(entries[30], entry(3, 41, command(vec![put(None, "new", "tail")])));
    assert_eq!(log.try_get_log_entries(20..=21).await.unwrap().len(), 2);
    assert!(log.try_get_log_entries(30..30).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_purged_to_its_end_keeps_its_last_id() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path());
        let mut log = store.log_store();
        log.blocking_append((1..=5).map(|i| entry(1, i, command(vec![])))).await.unwrap();
        log.purge(log_id(1, 5)).await.unwrap();
    }
    let mut log = open(dir.path()).log_store();
    let state = log.get_log_state().await.unwrap();
    assert_eq!((state.last_purged_log_id, state.last_log_id), (Some(log_id(1, 5)), Some(log_id(1, 5))));
    assert!(log.try_get_log_entries(0..10).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applied_commands_survive_a_drop_with_last_applied() {
    let dir = tempfile::tempdir().unwrap();
    let responses = {
        let store = open(dir.path());
        let mut sm = store.state_machine();
        let first = sm
            .apply([
                membership_entry(1, 1, &[1, 2, 3]),
                entry(
                    1,
                    2,
                    command(vec![
                        put(None, "a", "1"),
                        put(Some("users"), "u1", "ada"),
                        put(Some("users"), "u2", "bob"),
                    ]),
                ),
            ])
            .await
            .unwrap();
        let second = sm
            .apply([entry(
                1,
                3,
                command(vec![
                    delete_range(Some("users"), "u", "u2"),
                    put(Some("users"), "u3", "cy"),
                    delete(None, "a"),
                    delete(None, "missing"),
                ]),
            )])
            .await
            .unwrap();
        (first, second)
    };
    assert_eq!(responses.0.len(), 2);
    assert_eq!(responses.0[1].index, 2);
    assert_eq!(responses.1[0].existed, vec![true, false]);

    let store = open(dir.path());
    let mut sm = store.state_machine();
    let (applied, membership) = sm.applied_state().await.unwrap();
    assert_eq!(applied, Some(log_id(1, 3)));
    assert_eq!(membership.log_id(), &Some(log_id(1, 1)));
    assert_eq!(
        contents(&store),
        expect(&[("users", "u2", "bob"), ("users", "u3", "cy")]),
        "the range delete removed u1 only, the delete removed a"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_sees_the_writes_before_it_in_the_same_call() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut sm = store.state_machine();
    sm.apply([entry(1, 1, command(vec![put(None, "k", "old"), put(None, "r5", "x")]))]).await.unwrap();
    let responses = sm
        .apply([
            entry(1, 2, command(vec![delete(None, "k"), put(None, "k", "again")])),
            entry(1, 3, command(vec![delete(None, "k"), delete(None, "k")])),
            entry(1, 4, command(vec![put(None, "r1", "x"), delete_range(None, "r", "s"), delete(None, "r1")])),
            entry(1, 5, command(vec![delete_range(None, "r", "s"), put(None, "r5", "y"), delete(None, "r5")])),
        ])
        .await
        .unwrap();
    let existed: Vec<Vec<bool>> = responses.iter().map(|r| r.existed.clone()).collect();
    assert_eq!(existed, vec![vec![true], vec![true, false], vec![false], vec![true]]);
    assert_eq!(contents(&store), expect(&[]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_naming_a_reserved_keyspace_is_refused_on_apply() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut sm = store.state_machine();
    let responses = sm
        .apply([
            entry(1, 1, command(vec![put(None, "fine", "1"), put(Some("raft_log"), "x", "y")])),
            entry(1, 2, command(vec![put(None, &"k".repeat(70 << 10), "too long a key")])),
            entry(1, 3, command(vec![put(Some("users"), "u", "1")])),
        ])
        .await
        .unwrap();
    assert!(responses[0].error.as_deref().is_some_and(|e| e.contains("reserved")), "{:?}", responses[0]);
    assert!(responses[1].error.as_deref().is_some_and(|e| e.contains("key of")), "{:?}", responses[1]);
    assert_eq!(responses[2].error, None);
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1, 3)));
    assert_eq!(contents(&store), expect(&[("users", "u", "1")]), "a refused command writes nothing");
    assert!(store.keyspace(Some("raft_meta")).is_err());
    assert!(store.keyspace_names().iter().all(|n| !n.starts_with("raft_")));
}

/// A store with some data, and a snapshot of it built.
async fn built_snapshot(dir: &Path) -> (Store, openraft::Snapshot<shamba_raft::TypeConfig>) {
    let store = open(dir);
    let mut sm = store.state_machine();
    sm.apply([
        membership_entry(1, 1, &[1, 2]),
        entry(1, 2, command(vec![put(None, "a", "1"), put(Some("users"), "u1", "ada")])),
        entry(2, 3, command(vec![put(Some("orders"), "o1", "pen")])),
    ])
    .await
    .unwrap();
    let snap = sm.get_snapshot_builder().await.build_snapshot().await.unwrap();
    (store, snap)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_snapshot_replaces_the_state_and_survives_a_drop() {
    let leader_dir = tempfile::tempdir().unwrap();
    let (leader, snap) = built_snapshot(leader_dir.path()).await;
    assert_eq!(snap.meta.last_log_id, Some(log_id(2, 3)));
    let want = contents(&leader);
    assert_eq!(want, expect(&[("default", "a", "1"), ("users", "u1", "ada"), ("orders", "o1", "pen")]));

    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path());
        let mut sm = store.state_machine();
        sm.apply([entry(1, 1, command(vec![put(None, "stale", "x"), put(Some("users"), "u9", "zed")]))]).await.unwrap();
        // A reception a leader abandoned, then one received the way openraft does: written
        // into the file begin_receiving_snapshot gave.
        let mut abandoned = sm.begin_receiving_snapshot().await.unwrap();
        abandoned.write_all(b"the first chunk").await.unwrap();
        let mut received = sm.begin_receiving_snapshot().await.unwrap();
        let bytes = std::fs::read(leader_dir.path().join("snapshots").join(current_file(&leader))).unwrap();
        received.write_all(&bytes).await.unwrap();
        received.flush().await.unwrap();
        sm.install_snapshot(&snap.meta, received).await.unwrap();
        assert_eq!(contents(&store), want);
        assert_eq!(snapshot_files(&store).len(), 1, "the abandoned reception is removed");
        // One more abandoned before the drop: the reopen removes it.
        sm.begin_receiving_snapshot().await.unwrap().write_all(b"half").await.unwrap();
        assert_eq!(snapshot_files(&store).len(), 2);
    }
    let store = open(dir.path());
    let mut sm = store.state_machine();
    assert_eq!(contents(&store), want, "the old keys are gone, the snapshot's are there");
    let (applied, membership) = sm.applied_state().await.unwrap();
    assert_eq!(applied, snap.meta.last_log_id);
    assert_eq!(membership, snap.meta.last_membership);
    let current = sm.get_current_snapshot().await.unwrap().expect("a current snapshot");
    assert_eq!(current.meta, snap.meta);
    let files: Vec<String> = snapshot_files(&store);
    assert_eq!(files.len(), 1, "only the current snapshot is kept: {files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_snapshot_is_refused_and_the_state_kept() {
    let leader_dir = tempfile::tempdir().unwrap();
    let (leader, snap) = built_snapshot(leader_dir.path()).await;
    let mut bytes = std::fs::read(leader_dir.path().join("snapshots").join(current_file(&leader))).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;

    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut sm = store.state_machine();
    sm.apply([entry(1, 1, command(vec![put(None, "mine", "x")]))]).await.unwrap();
    let mut received = sm.begin_receiving_snapshot().await.unwrap();
    received.write_all(&bytes).await.unwrap();
    assert!(sm.install_snapshot(&snap.meta, received).await.is_err());
    assert_eq!(contents(&store), expect(&[("default", "mine", "x")]));
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1, 1)));
    assert!(sm.get_current_snapshot().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_built_snapshot_stays_current_across_a_drop_and_older_ones_go() {
    let dir = tempfile::tempdir().unwrap();
    let meta = {
        let (store, first) = built_snapshot(dir.path()).await;
        let mut sm = store.state_machine();
        sm.apply([entry(2, 4, command(vec![put(None, "b", "2")]))]).await.unwrap();
        let second = sm.get_snapshot_builder().await.build_snapshot().await.unwrap();
        assert!(second.meta.last_log_id > first.meta.last_log_id);
        assert_eq!(snapshot_files(&store).len(), 1);
        second.meta
    };
    let store = open(dir.path());
    let current = store.state_machine().get_current_snapshot().await.unwrap().expect("current");
    assert_eq!(current.meta, meta);
    assert_eq!(current.meta.last_log_id, Some(log_id(2, 4)));
    assert_eq!(
        current.meta.last_membership,
        StoredMembership::new(Some(log_id(1, 1)), openraft::Membership::new(vec![[1, 2].into()], None))
    );
}

fn current_file(store: &Store) -> String {
    let files = snapshot_files(store);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn snapshot_files(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store.snapshot_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
