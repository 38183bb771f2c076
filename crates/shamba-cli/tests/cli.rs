//! The `shamba` command end to end: admin commands on a real database directory.

use std::io::Read;
use std::process::{Command, Stdio};

fn shamba() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shamba"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = shamba().args(args).output().expect("run shamba");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn put_get_delete_scan_and_inspect_work_on_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8 path");
    for (k, v) in [("apple", "red"), ("banana", "yellow"), ("cherry", "dark red")] {
        assert_eq!(run(&["put", "--db", db, k, v]).0, 0);
    }
    let (code, out, _) = run(&["get", "--db", db, "banana"]);
    assert_eq!((code, out.trim()), (0, "yellow"));
    assert_eq!(run(&["delete", "--db", db, "banana"]).0, 0);
    let (code, _, err) = run(&["get", "--db", db, "banana"]);
    assert_eq!(code, 2, "a missing key exits with 2: {err}");
    let (code, out, _) = run(&["scan", "--db", db]);
    assert_eq!(code, 0);
    assert_eq!(out, "apple\tred\ncherry\tdark red\n");
    let (_, out, _) = run(&["scan", "--db", db, "--reverse", "--limit", "1"]);
    assert_eq!(out, "cherry\tdark red\n");
    let (code, out, _) = run(&["inspect", "--db", db, "--files"]);
    assert_eq!(code, 0);
    assert!(out.contains("device reads since open"), "{out}");
}

#[test]
fn checkpoint_writes_a_copy_that_opens_and_refuses_an_existing_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8 path");
    let cp = dir.path().join("cp");
    let cp = cp.to_str().expect("utf8 path");
    assert_eq!(run(&["put", "--db", db, "apple", "red"]).0, 0);
    let (code, out, err) = run(&["checkpoint", "--db", db, cp]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(cp), "{out}");
    assert_eq!(run(&["put", "--db", db, "apple", "green"]).0, 0);
    let (code, out, _) = run(&["get", "--db", cp, "apple"]);
    assert_eq!((code, out.trim()), (0, "red"));
    let (code, _, err) = run(&["checkpoint", "--db", db, cp]);
    assert_ne!(code, 0);
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn compact_leaves_only_live_tables_in_the_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8 path");
    for i in 0..5 {
        assert_eq!(run(&["put", "--db", db, &format!("key{i}"), "value"]).0, 0);
    }
    let (code, out, err) = run(&["compact", "--db", db]);
    assert_eq!(code, 0, "{err}");
    // Each put above closed the database, flushing one table: five L0 tables become one.
    assert!(out.contains("into 1 in"), "{out}");
    assert!(out.contains("table files in the directory: 1"), "{out}");
}

#[test]
fn opening_a_missing_database_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nothing-here");
    let (code, _, err) = run(&["get", "--db", missing.to_str().expect("utf8"), "k"]);
    assert_eq!(code, 1);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8 path");
    for i in 0..2000 {
        // One process per put is slow; a handful of keys with long values fills the pipe.
        if i % 400 == 0 {
            assert_eq!(run(&["put", "--db", db, &format!("k{i}"), &"v".repeat(60_000)]).0, 0);
        }
    }
    let mut child =
        shamba().args(["scan", "--db", db]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut first = [0u8; 16];
    child.stdout.take().expect("stdout").read_exact(&mut first).expect("read some");
    // The reader is gone now; the writer must not panic.
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bench_prints_json_with_the_promised_fields() {
    let (code, out, err) = run(&["bench", "--num", "3000", "--reads", "2000", "--write-buffer-mb", "0.1", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let phases = v["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 4, "load + three read phases");
    for p in phases {
        for field in ["ops_per_sec", "ios_per_op", "bytes_read_per_op"] {
            assert!(p[field].is_number(), "{field} missing in {p}");
        }
    }
    assert_eq!(phases[1]["found"], 2000, "every existing key is found");
    assert_eq!(phases[2]["found"], 0, "no missing key is found");
}

#[test]
fn bench_runs_every_ycsb_workload_and_finds_every_record_it_reads() {
    let (code, out, err) = run(&[
        "bench",
        "--num",
        "2000",
        "--value-size",
        "200",
        "--write-buffer-mb",
        "0.1",
        "--threads",
        "2",
        "--ycsb",
        "a,b,c,d,e,f",
        "--ycsb-ops",
        "1000",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let runs = v["ycsb"].as_array().expect("ycsb");
    let names: Vec<&str> = runs.iter().filter_map(|r| r["workload"].as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
    for r in runs {
        assert_eq!(r["ops"], 1000, "{r}");
        assert_eq!(r["not_found"], 0, "a read of a loaded or acknowledged record missed: {r}");
        let counted: u64 =
            r["latencies"].as_array().expect("latencies").iter().map(|l| l["count"].as_u64().unwrap_or(0)).sum();
        assert_eq!(counted, 1000, "{r}");
    }
    let ops_of = |w: usize| -> Vec<&str> {
        runs[w]["latencies"].as_array().unwrap().iter().filter_map(|l| l["op"].as_str()).collect()
    };
    assert_eq!(ops_of(2), ["read"], "C reads only");
    assert_eq!(ops_of(4), ["insert", "scan"], "E scans and inserts");
    assert_eq!(ops_of(5), ["read", "rmw"], "F reads and read-modify-writes");
}

#[test]
fn the_product_binary_has_no_lab_knobs_and_no_experiments() {
    // The lab's knobs and experiments are shamba-lab's: `shamba` refuses them as unknown.
    for flag in ["--device", "--profile", "--no-prefetch", "--no-share-hash"] {
        let (code, _, err) = run(&["bench", "--num", "100", "--reads", "10", flag]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains("unexpected argument"), "{flag}: {err}");
    }
    let (code, _, err) = run(&["exp", "headline", "--quick"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unrecognized subcommand"), "{err}");
}

#[test]
fn bench_holds_filters_under_its_memory_budget() {
    let budget = 2_500u64;
    let (code, out, err) = run(&[
        "bench",
        "--num",
        "3000",
        "--reads",
        "2000",
        "--write-buffer-mb",
        "0.05",
        "--target-file-mb",
        "0.05",
        "--filter-memory-budget",
        &budget.to_string(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["config"]["filter_memory_budget"], budget);
    let filters: u64 =
        v["tree"]["levels"].as_array().expect("levels").iter().map(|l| l["filter_bytes"].as_u64().unwrap_or(0)).sum();
    assert!(filters > budget, "the tree's filters ({filters} B) must not all fit the budget");
    let memory = &v["filter_memory"];
    let peak = memory["resident_peak_bytes"].as_u64().expect("peak");
    assert!(0 < peak && peak <= budget, "peak {peak} outside (0, {budget}]");
    assert!(memory["loads"].as_u64().expect("loads") > 0, "{memory}");
    assert_eq!(v["phases"][1]["found"], 2000, "every existing key is found under the budget");
}

#[test]
fn verify_exits_zero_on_a_sound_database_and_one_naming_the_damaged_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = shamba::Db::open(&path, shamba::Options::default()).expect("open");
    for i in 0..1000 {
        db.put(format!("key-{i:05}"), "value").expect("put");
    }
    db.flush().expect("flush");
    db.put("in-the-log", "v").expect("put");
    db.close().expect("close");
    let dbs = path.to_str().expect("utf8 path");

    let (code, out, err) = run(&["verify", "--db", dbs]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("checked 1 tables") && out.contains("1000 keys") && out.ends_with("ok\n"), "{out}");

    let file_named = |prefix: &str| {
        let mut v: Vec<_> = std::fs::read_dir(&path)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(prefix) || n.ends_with(prefix))
            })
            .collect();
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0)
    };
    let table = file_named(".sst");
    let mut bytes = std::fs::read(&table).expect("read");
    bytes[5] ^= 1;
    std::fs::write(&table, &bytes).expect("write");
    let (code, out, _) = run(&["verify", "--db", dbs]);
    assert_eq!(code, 1, "{out}");
    let line = out.lines().find(|l| l.starts_with("problem: ")).expect("a problem line");
    assert!(line.contains(&table.display().to_string()) && line.contains("data block 0 at offset 0"), "{out}");
    assert!(line.contains("checksum mismatch"), "{out}");

    // A manifest that does not decode: nothing else can be checked; say so and where.
    let manifest = file_named("MANIFEST-");
    let mut bytes = std::fs::read(&manifest).expect("read");
    bytes[10] ^= 0xff;
    std::fs::write(&manifest, &bytes).expect("write");
    let (code, out, err) = run(&["verify", "--db", dbs]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("damaged") && out.contains(&manifest.display().to_string()), "{out}{err}");

    let (code, _, err) = run(&["verify", "--db", dir.path().join("nothing-here").to_str().expect("utf8")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn keyspace_flag_reads_and_writes_one_keyspace_and_inspect_lists_every_keyspace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8 path");
    assert_eq!(run(&["put", "--db", db, "k", "in-default"]).0, 0);
    assert_eq!(run(&["put", "--db", db, "--keyspace", "users", "k", "in-users"]).0, 0);
    assert_eq!(run(&["put", "--db", db, "--keyspace", "users", "alice", "1"]).0, 0);
    let (code, out, _) = run(&["get", "--db", db, "k"]);
    assert_eq!((code, out.trim()), (0, "in-default"));
    let (code, out, _) = run(&["get", "--db", db, "--keyspace", "users", "k"]);
    assert_eq!((code, out.trim()), (0, "in-users"));
    let (code, out, _) = run(&["get", "--db", db, "--keyspace", "default", "k"]);
    assert_eq!((code, out.trim()), (0, "in-default"), "the default keyspace by name");
    assert_eq!(run(&["get", "--db", db, "alice"]).0, 2, "users' key is not in the default keyspace");
    let (_, out, _) = run(&["scan", "--db", db, "--keyspace", "users"]);
    assert_eq!(out, "alice\t1\nk\tin-users\n");
    assert_eq!(run(&["delete", "--db", db, "--keyspace", "users", "k"]).0, 0);
    assert_eq!(run(&["get", "--db", db, "--keyspace", "users", "k"]).0, 2);
    let (_, out, _) = run(&["get", "--db", db, "k"]);
    assert_eq!(out.trim(), "in-default", "a delete in users leaves the default keyspace");
    // Reading a keyspace that does not exist fails and creates nothing.
    let (code, _, err) = run(&["scan", "--db", db, "--keyspace", "nosuch"]);
    assert_eq!(code, 1);
    assert!(err.contains("no keyspace is named \"nosuch\" (keyspaces: default, users)"), "{err}");
    assert_eq!(run(&["get", "--db", db, "--keyspace", "nosuch", "k"]).0, 1);

    assert_eq!(run(&["compact", "--db", db]).0, 0);
    let (code, out, _) = run(&["inspect", "--db", db, "--files"]);
    assert_eq!(code, 0);
    assert!(out.contains("keyspaces: default, users"), "{out}");
    let users = out.split("keyspace users:").nth(1).expect("a section for users");
    let default = out.split("keyspace default:").nth(1).expect("a section for default");
    assert!(users.contains(" alice .. "), "users' table: {out}");
    assert!(default.split("keyspace users:").next().unwrap_or("").contains(" k .. k"), "default's table: {out}");
}
