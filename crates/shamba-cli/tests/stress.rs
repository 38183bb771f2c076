//! `shamba stress` end to end: a short run and a few kill -9 cycles pass on a healthy
//! engine, and the checker reports a database that disagrees with the expected state
//! (a write behind the tool's back, a damaged expected-state file, a deadline the database
//! never had) with a non-zero exit and a message naming the key, what was expected and
//! what was found.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shamba")).args(args).output().expect("run shamba");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A short stress run on a new database of `keys` keys in `dir`; returns the db path.
fn stressed(dir: &Path, keys: &str) -> String {
    let db = dir.join("db").to_str().expect("utf8").to_string();
    let (code, out, err) = run(&[
        "stress",
        "--db",
        &db,
        "--duration",
        "1",
        "--threads",
        "2",
        "--keys",
        keys,
        "--seed",
        "7",
        "--style",
        "leveled",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    db
}

/// Where slot `index` starts in the expected-state file (a 128-byte header, 24-byte slots:
/// the two writes, then their deadlines).
fn slot_at(index: u64) -> u64 {
    128 + 24 * index
}

/// Slot `index` of the expected-state file: (op id of the last write, it was a delete, its
/// deadline in ms since the Unix epoch or 0).
fn last_write(db: &str, index: u64) -> (u32, bool, u64) {
    let file = std::fs::File::open(format!("{db}.expected")).expect("expected-state file");
    let mut slot = [0u8; 24];
    file.read_exact_at(&mut slot, slot_at(index)).expect("read slot");
    let last = u32::from_le_bytes([slot[0], slot[1], slot[2], slot[3]]);
    let deadline = u64::from_le_bytes(slot[8..16].try_into().expect("8 bytes"));
    (last & 0x7fff_ffff, last & 0x8000_0000 != 0, deadline)
}

/// A key the expected state says holds a value that does not expire.
fn a_lasting_key(db: &str, keys: u64) -> u64 {
    (0..keys).find(|&i| matches!(last_write(db, i), (op, false, 0) if op != 0)).expect("a present key")
}

#[test]
fn a_short_run_checks_every_operation_and_finds_nothing_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8");
    let (code, out, err) =
        run(&["stress", "--db", db, "--duration", "2", "--threads", "2", "--keys", "2000", "--reopen-secs", "0.7"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(" 0 divergences"), "{out}");
    assert!(!out.contains("ran 2.0 s: 0 operations"), "{out}");
    // Transactions and expiry are in the mix, and keys do expire during the run.
    for counted in ["transactions committed", "keys written with a deadline", "keys seen expired"] {
        let n = out.split(&format!(" {counted}")).next().and_then(|head| head.rsplit(' ').next());
        assert!(n.and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n > 0), "no {counted}: {out}");
    }
    // At least the final verification, and the reopens' ones.
    let verifications: u64 = out
        .split("; ")
        .find(|part| part.contains(" verifications ("))
        .and_then(|part| part.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a verification count");
    assert!(verifications >= 2, "{out}");
    // A second run continues from the same expected state.
    let (code, out, err) = run(&["stress", "--db", db, "--duration", "1", "--threads", "2"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn kill_cycles_find_nothing_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8");
    let (code, out, err) = run(&[
        "stress",
        "--db",
        db,
        "--crash",
        "--cycles",
        "3",
        "--threads",
        "2",
        "--keys",
        "2000",
        "--kill-min-ms",
        "300",
        "--kill-max-ms",
        "800",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("crash: 3 kill -9 cycles"), "{out}");
    assert!(out.contains(" 0 divergences"), "{out}");
}

#[test]
fn a_write_behind_the_tools_back_is_reported_with_key_expected_and_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = stressed(dir.path(), "300");
    // Find a key the expected state says is present, and one it says was deleted or
    // never written.
    // `shamba put` and `delete` write the default keyspace: keys in its runs only (runs of
    // 16 neighbouring keys take turns among three keyspaces, the default first).
    let in_default = |i: &u64| (i / 16).is_multiple_of(3);
    let present = (0..300)
        .filter(in_default)
        .find(|&i| matches!(last_write(&db, i), (op, false, 0) if op != 0))
        .expect("a present key");
    let absent = (0..300)
        .filter(in_default)
        .find(|&i| matches!(last_write(&db, i), (0, ..) | (_, true, _)))
        .expect("an absent key");
    let (id, ..) = last_write(&db, present);
    let present_key = format!("k{present:08}");
    let absent_key = format!("k{absent:08}");
    assert_eq!(run(&["delete", "--db", &db, &present_key]).0, 0);
    assert_eq!(run(&["put", "--db", &db, &absent_key, "not-from-stress"]).0, 0);

    let (code, out, err) = run(&["stress", "--db", &db, "--duration", "1", "--threads", "2"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&format!("key {present_key} (index {present}): get found absent, expected value id {id}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("key {absent_key} (index {absent}): get found a value the tool never wrote")),
        "{err}"
    );
    assert!(err.contains("divergences between the database and the expected state"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_damaged_expected_state_is_reported_by_the_crash_loop_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = stressed(dir.path(), "300");
    // Key 5's last write becomes a put, without a deadline, of an id no write ever had.
    let file =
        std::fs::OpenOptions::new().write(true).open(format!("{db}.expected")).expect("open expected-state file");
    let mut slot = [0u8; 24];
    slot[..4].copy_from_slice(&2_000_000_000u32.to_le_bytes());
    file.write_all_at(&slot, slot_at(5)).expect("damage slot 5");
    drop(file);

    let (code, out, err) = run(&["stress", "--db", &db, "--crash", "--cycles", "1", "--threads", "1"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(err.contains("key k00000005 (index 5): get found "), "{err}");
    assert!(err.contains("expected value id 2000000000"), "{err}");
    assert!(out.contains("crash: 0 kill -9 cycles"), "the loop does not start on a diverged database: {out}");
}

#[test]
fn a_deadline_the_database_never_had_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = stressed(dir.path(), "300");
    // The expected state says a lasting key expired a minute ago: a read that finds it
    // must be reported.
    let key = a_lasting_key(&db, 300);
    let (id, ..) = last_write(&db, key);
    let past =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as u64 - 60_000;
    let file =
        std::fs::OpenOptions::new().write(true).open(format!("{db}.expected")).expect("open expected-state file");
    file.write_all_at(&past.to_le_bytes(), slot_at(key) + 8).expect("give the slot a deadline");
    drop(file);

    let (code, out, err) = run(&["stress", "--db", &db, "--duration", "1", "--threads", "1"]);
    assert_ne!(code, 0, "{out}\n{err}");
    let name = format!("k{key:08}");
    assert!(
        err.contains(&format!(
            "key {name} (index {key}): get found value id {id}, expected value id {id} until {past} ms"
        )),
        "{err}"
    );
}
