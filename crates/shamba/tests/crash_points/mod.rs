//! What the crash tests on the simulated disk share: options under which nothing happens in
//! the background on its own, and the sweep of a fault of each kind at every storage
//! operation of the operation under test.

use shamba::lab::{CrashKeeps, SimFault, SimStorage};
use shamba::Options;
use std::sync::Arc;

/// Options on `disk` under which flushes and compactions run only when the workload asks, so
/// every run numbers its operations alike; small tables and blocks, so a compaction writes
/// several files of several blocks.
pub fn quiet_options(disk: &SimStorage) -> Options {
    Options {
        storage: Arc::new(disk.clone()),
        write_buffer_size: 1 << 20,
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 100,
        level0_stop_trigger: 100,
        auto_resume_interval: None,
        target_file_size: 4096,
        block_size: 256,
        ..Options::default()
    }
}

/// Run `run` twice without a fault to count the storage operations of `what` (at least
/// `min_ops`), then once per operation and fault kind
/// of `kinds`, and fail listing every run whose check failed.
#[allow(dead_code, reason = "each test binary uses the helpers it needs")]
pub fn at_every_operation(
    what: &str,
    min_ops: u64,
    kinds: &[(SimFault, CrashKeeps)],
    run: impl Fn(Option<(u64, SimFault)>, CrashKeeps) -> Result<u64, String>,
) {
    // Two counts, the larger kept: a background thread that holds a version for a moment
    // (scoring the levels, say) moves a table's deletion out of the window, into a later
    // pass, so the count may differ run to run. Swept to the larger count, every operation of
    // the longer run gets its fault; in a shorter run a fault past its end injects nothing,
    // and that fault-free run must pass too.
    let first = run(None, CrashKeeps::Synced).expect("without a fault");
    let total = first.max(run(None, CrashKeeps::Written).expect("again"));
    assert!(total >= min_ops, "the {what} did only {total} storage operations");
    let mut failures = Vec::new();
    for n in 0..total {
        for &(fault, keeps) in kinds {
            if let Err(e) = run(Some((n, fault)), keeps) {
                failures.push(format!("{fault:?} at operation {n} of the {what}, keeping {keeps:?}: {e}"));
            }
        }
    }
    eprintln!(
        "{what} crash points: {total} operations, {} runs, {} failures",
        total * kinds.len() as u64,
        failures.len()
    );
    assert!(failures.is_empty(), "{} runs failed:\n{}", failures.len(), failures.join("\n"));
}
