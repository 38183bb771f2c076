//! A database of many more tables than the process may open files reads every key, scans
//! and reopens: its table files are kept open through a bounded cache
//! (`Options::max_open_files`, by default half the soft `RLIMIT_NOFILE`).
//!
//! Its own test binary, one test: it lowers the process's limit on open files.

use shamba::{Db, Options, Readable};

/// The soft limit on open files this test runs under.
const SOFT_LIMIT: u64 = 128;

fn lower_open_files_limit(soft: u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit read and write one live `rlimit`.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = soft.min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    let mut v = format!("value{i:08}-").into_bytes();
    v.resize(128, b'x');
    v
}

#[test]
fn hundreds_of_tables_are_read_scanned_and_reopened_under_a_low_open_files_limit() {
    lower_open_files_limit(SOFT_LIMIT);
    let opts = || Options {
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        // Small, so reads go to the files rather than the block cache.
        cache_capacity: 64 << 10,
        cache_index_and_filter_blocks: false,
        ..Options::default()
    };
    assert_eq!(opts().max_open_files, SOFT_LIMIT as usize / 2, "the default follows the limit");

    let dir = tempfile::tempdir().unwrap();
    let n = 40_000u32;
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..n {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let tables = db.files().len();
    assert!(tables >= 300, "{tables} tables");

    let check = |db: &Db| {
        // Every key, in an order that jumps between tables.
        for j in 0..n {
            let i = (j as u64 * 7_919 % n as u64) as u32;
            assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
        }
        let mut seen = 0u32;
        for item in db.iter() {
            let (k, v) = item.unwrap();
            assert_eq!((k, v), (key(seen), value(seen)));
            seen += 1;
        }
        assert_eq!(seen, n, "a full scan sees every key");
        let stats = db.stats();
        assert_eq!(stats.max_open_table_files, SOFT_LIMIT as usize / 2 - 10);
        assert!(stats.open_table_files <= stats.max_open_table_files, "{stats:?}");
        assert!(stats.open_table_files > 0);
        assert!(stats.pinned_table_bytes > 0, "index and filters of every table are pinned");
    };
    check(&db);
    db.close().unwrap();

    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.files().len(), tables);
    check(&db);
    db.close().unwrap();
}
