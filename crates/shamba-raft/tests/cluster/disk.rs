//! A node's disk: the real file system, or a simulated one that can lose power.
//!
//! On the simulated disk a crash stops the machine at once (every later operation fails,
//! so nothing more becomes durable), waits until no database uses the disk, and keeps only
//! what was synced: the database restarts from what a power loss would leave. The store's
//! snapshot files stay on the real file system, as the directory of a process that died.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shamba::lab::{CrashKeeps, SimFault, SimStorage};
use shamba::storage::{FsStorage, Storage};

/// Which disk a cluster's nodes run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskKind {
    Real,
    Simulated,
}

pub struct Disk {
    storage: Arc<dyn Storage>,
    sim: Option<SimStorage>,
}

impl Disk {
    pub fn new(kind: DiskKind) -> Disk {
        match kind {
            DiskKind::Real => Disk { storage: Arc::new(FsStorage), sim: None },
            DiskKind::Simulated => {
                let sim = SimStorage::new();
                Disk { storage: Arc::new(sim.clone()), sim: Some(sim) }
            }
        }
    }

    /// The storage a node's database opens on.
    pub fn storage(&self) -> Arc<dyn Storage> {
        self.storage.clone()
    }

    /// Stop the machine: from now on every operation of the disk fails. `dir` is any
    /// directory of the disk.
    pub fn stop_machine(&self, dir: &Path) {
        let sim = self.sim.as_ref().expect("only a simulated disk stops");
        // The fault is armed for the next operation's number; another thread may take that
        // number first, so arm and step again until the machine has stopped.
        while !sim.is_dead() {
            sim.fail_at(sim.ops(), SimFault::Crash);
            let _ = sim.list(dir);
        }
    }

    /// Once the database that used the disk is gone, keep what was synced and start the
    /// machine again.
    pub async fn power_on(&self) {
        let sim = self.sim.as_ref().expect("only a simulated disk stops");
        // Every open database holds a clone of `storage`; this disk holds the last one.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Arc::strong_count(&self.storage) > 1 {
            assert!(Instant::now() < deadline, "the crashed database still holds its disk");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        sim.crash(CrashKeeps::Synced);
    }
}
