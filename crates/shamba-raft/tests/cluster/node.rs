//! One node of a test cluster: its directory, and while it runs its store and its Raft.
//!
//! Everything the tests know of the store goes through here, so a change of the store's API
//! touches this file alone.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::Config;
use shamba::Readable;
use shamba_raft::{NodeId, Raft, Store, StoreOptions};
use tempfile::TempDir;

use crate::disk::{Disk, DiskKind};
use crate::router::Router;

/// Every user key of a node with its value, keyed by (keyspace, key); the default keyspace is
/// `None`, as in a command.
pub type UserData = BTreeMap<(Option<String>, Vec<u8>), Vec<u8>>;

/// A node's directory, and its store and Raft while it runs.
pub struct Node {
    pub id: NodeId,
    dir: TempDir,
    disk: Disk,
    running: Option<Running>,
}

struct Running {
    raft: Raft,
    store: Store,
}

impl Node {
    pub fn new(id: NodeId, disk: DiskKind) -> Node {
        let dir = tempfile::Builder::new().prefix(&format!("node-{id}-")).tempdir().unwrap();
        Node { id, dir, disk: Disk::new(disk), running: None }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn raft(&self) -> Option<&Raft> {
        self.running.as_ref().map(|r| &r.raft)
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Open the store in the node's directory and start its Raft on the router.
    pub async fn start(&mut self, config: &Arc<Config>, router: &Router) {
        assert!(self.running.is_none(), "node {} runs already", self.id);
        let store = self.open_store().await;
        let raft =
            Raft::new(self.id, config.clone(), router.network_of(self.id), store.log_store(), store.state_machine())
                .await
                .unwrap();
        router.attach(self.id, raft.clone(), store.clone());
        self.running = Some(Running { raft, store });
    }

    /// Take the node off the network, stop its Raft and drop its store without closing it.
    pub async fn kill(&mut self, router: &Router) {
        router.detach(self.id);
        if let Some(Running { raft, store }) = self.running.take() {
            raft.shutdown().await.unwrap();
            drop(raft);
            drop(store);
        }
    }

    /// Take the node off the network and cut its power: its disk keeps only what was synced.
    pub async fn crash(&mut self, router: &Router) {
        router.detach(self.id);
        self.disk.stop_machine(self.dir());
        if let Some(Running { raft, store }) = self.running.take() {
            // Its storage fails from now on, so its Raft stops on a storage error if it has
            // not stopped already.
            raft.shutdown().await.unwrap();
            drop(raft);
            drop(store);
        }
        self.disk.power_on().await;
    }

    /// The store in the node's directory, opened on its disk (a stopped node only).
    pub async fn open_store(&self) -> Store {
        let mut opts = StoreOptions::default();
        opts.db.storage = self.disk.storage();
        open_store(self.dir(), opts).await
    }

    /// The user's data of a running node, read from one snapshot of its database.
    pub fn user_data(&self) -> UserData {
        let running = self.running.as_ref().expect("node runs");
        user_data(&running.store)
    }
}

/// Open the store of a directory, waiting while the previous incarnation's database still
/// holds the lock (openraft's state-machine task ends shortly after `shutdown` returns).
async fn open_store(dir: &Path, opts: StoreOptions) -> Store {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Store::open(dir, opts.clone()) {
            Ok(store) => return store,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("opening the store in {}: {e}", dir.display()),
        }
    }
}

/// A state-machine keyspace's name as a command names it: `None` for the default one.
fn command_name(name: String) -> Option<String> {
    (name != "default").then_some(name)
}

pub fn user_data(store: &Store) -> UserData {
    let snap = store.db().snapshot();
    let mut data = UserData::new();
    for name in store.keyspace_names().into_iter().map(command_name) {
        let keyspace = store.keyspace(name.as_deref()).unwrap();
        for item in snap.keyspace(&keyspace).iter() {
            let (key, value) = item.unwrap();
            data.insert((name.clone(), key), value);
        }
    }
    data
}

/// One key of a store's state machine, read now (no Raft round).
pub fn get(store: &Store, keyspace: Option<&str>, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
    // A keyspace is created by the first command that writes to it: before that, none of
    // its keys exists (and a read must not create it).
    if keyspace.is_some_and(|n| !store.keyspace_names().iter().any(|k| k == n)) {
        return Ok(None);
    }
    store.keyspace(keyspace)?.get(key)
}
