//! openraft's own storage test suite, unchanged, on a fresh store for each of its tests.

use openraft::testing::{StoreBuilder, Suite};
use openraft::StorageError;
use shamba_raft::{LogStore, NodeId, StateMachine, Store, StoreOptions, TypeConfig};
use tempfile::TempDir;

struct FreshStore;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, TempDir> for FreshStore {
    async fn build(&self) -> Result<(TempDir, LogStore, StateMachine), StorageError<NodeId>> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::open(dir.path(), StoreOptions::default()).expect("open a store");
        Ok((dir, store.log_store(), store.state_machine()))
    }
}

#[test]
fn openraft_storage_suite() {
    if let Err(e) = Suite::test_all(FreshStore) {
        panic!("openraft's suite failed: {e}");
    }
}
