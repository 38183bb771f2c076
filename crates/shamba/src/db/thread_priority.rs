//! The compaction and purge threads' CPU priority (`Options::background_nice`).
//!
//! On Linux the nice value belongs to each thread, and a thread starts with its creator's:
//! a background thread that raises its own once, as it starts, passes the lower priority on
//! to the sync and subcompaction threads it starts later. Elsewhere `nice` lowers the whole
//! process, so nothing is done there.

/// Add `by` to the calling thread's nice value (the kernel caps it at 19). Raising a nice
/// value needs no privilege; a refusal all the same leaves the thread as it was, which
/// only costs the foreground the latency the option is for, so it is not an error.
#[cfg(target_os = "linux")]
pub(super) fn lower_this_thread(by: u8) {
    if by > 0 {
        // SAFETY: `nice` takes an integer and changes only the calling thread's nice value
        // (a per-thread attribute on Linux); it touches no memory of ours. Exercised by
        // `tests::a_lowered_thread_runs_at_its_creators_nice_plus_the_increment` and
        // `tests::a_database_opened_with_background_nice_lowers_its_background_threads`.
        unsafe {
            libc::nice(i32::from(by));
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn lower_this_thread(_by: u8) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::{Db, Options};

    /// The nice value of thread `tid` of this process, from field 19 of its `stat`; `None`
    /// once the thread has exited (other tests' databases close while this one looks).
    fn nice_of(tid: &str) -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
        // The name, in parentheses, may hold spaces: the fields that follow it start at 3.
        let after_name = &stat[stat.rfind(')')? + 1..];
        after_name.split_whitespace().nth(19 - 3)?.parse().ok()
    }

    fn own_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        nice_of(stat.split(' ').next().unwrap()).unwrap()
    }

    /// Each thread of this process named `name`, with its nice value.
    fn threads_named(name: &str) -> Vec<i32> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| {
                let tid = t.ok()?.file_name().into_string().ok()?;
                let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).ok()?;
                (comm.trim_end() == name).then(|| nice_of(&tid))?
            })
            .collect()
    }

    #[test]
    fn a_lowered_thread_runs_at_its_creators_nice_plus_the_increment() {
        let creator = own_nice();
        let (lowered, its_child) = std::thread::spawn(|| {
            lower_this_thread(3);
            (own_nice(), std::thread::spawn(own_nice).join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (creator + 3).min(19));
        assert_eq!(its_child, lowered, "a thread started by a lowered one starts lowered");
        assert_eq!(own_nice(), creator, "the creator is left as it was");
        let unchanged = std::thread::spawn(|| {
            lower_this_thread(0);
            own_nice()
        })
        .join()
        .unwrap();
        assert_eq!(unchanged, creator);
    }

    #[test]
    fn a_database_opened_with_background_nice_lowers_its_background_threads() {
        let creator = own_nice();
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options { background_nice: 7, ..Options::default() }).unwrap();
        // A thread takes its name and its nice value once it runs, which on a busy machine
        // may be a while after `open` returns.
        let lowered = (creator + 7).min(19);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        for name in ["shamba-compact", "shamba-purge"] {
            // Other tests of this process may have databases open too, at their own nice.
            while !threads_named(name).contains(&lowered) {
                assert!(std::time::Instant::now() < deadline, "{name}: {:?}", threads_named(name));
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        let flush = threads_named("shamba-flush");
        assert!(flush.iter().all(|&n| n == creator), "the flush thread keeps its priority: {flush:?}");
        db.close().unwrap();
    }
}
