//! MULTI, EXEC, DISCARD, WATCH, UNWATCH through the command layer: queuing, errors that
//! abort EXEC, reads in the queue that see its earlier writes, and WATCH against writes by
//! another connection, by this one, and by expiry; one EXEC is all or nothing to a reader.

mod common;

use common::{bulk, run, server};
use shamba_server::{Reply, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const QUEUED: Reply = Reply::Simple("QUEUED");

#[test]
fn exec_runs_the_queue_and_its_reads_see_its_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "SET a 1"), QUEUED);
    assert_eq!(run(&srv, s, "INCR a"), QUEUED);
    assert_eq!(run(&srv, s, "GET a"), QUEUED);
    assert_eq!(run(&srv, s, "APPEND a x"), QUEUED);
    assert_eq!(run(&srv, s, "SET t v EX 100"), QUEUED);
    assert_eq!(run(&srv, s, "TTL t"), QUEUED);
    assert_eq!(run(&srv, s, "DEL a"), QUEUED);
    assert_eq!(run(&srv, s, "EXISTS a"), QUEUED);
    assert_eq!(run(&srv, s, "SELECT 2"), QUEUED);
    assert_eq!(run(&srv, s, "SET b two"), QUEUED);
    assert_eq!(
        run(&srv, s, "EXEC"),
        Reply::Array(vec![
            Reply::OK,
            Reply::Int(2),
            bulk("2"),
            Reply::Int(2),
            Reply::OK,
            Reply::Int(100),
            Reply::Int(1),
            Reply::Int(0),
            Reply::OK,
            Reply::OK,
        ])
    );
    assert_eq!(run(&srv, s, "GET b"), bulk("two"), "SELECT in the queue stays selected");
    assert_eq!(run(&srv, s, "SELECT 0"), Reply::OK);
    assert_eq!(run(&srv, s, "GET t"), bulk("v"));
    assert_eq!(run(&srv, s, "EXISTS a"), Reply::Int(0));
    // A command's own error is its reply; the others still run.
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "SET n x"), QUEUED);
    assert_eq!(run(&srv, s, "INCR n"), QUEUED);
    assert_eq!(run(&srv, s, "SET m y"), QUEUED);
    assert_eq!(
        run(&srv, s, "EXEC"),
        Reply::Array(vec![Reply::OK, Reply::Error("ERR value is not an integer or out of range".into()), Reply::OK])
    );
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "EXEC"), Reply::Array(vec![]));
}

#[test]
fn errors_while_queuing_abort_exec_and_misuse_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "EXEC"), Reply::Error("ERR EXEC without MULTI".into()));
    assert_eq!(run(&srv, s, "DISCARD"), Reply::Error("ERR DISCARD without MULTI".into()));
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "MULTI"), Reply::Error("ERR MULTI calls can not be nested".into()));
    assert_eq!(run(&srv, s, "WATCH k"), Reply::Error("ERR WATCH inside MULTI is not allowed".into()));
    assert_eq!(run(&srv, s, "SET k v"), QUEUED);
    assert!(matches!(run(&srv, s, "NOSUCH k"), Reply::Error(e) if e.starts_with("ERR unknown command")));
    assert_eq!(run(&srv, s, "SET k"), Reply::Error("ERR wrong number of arguments for 'set' command".into()));
    assert_eq!(
        run(&srv, s, "EXEC"),
        Reply::Error("EXECABORT Transaction discarded because of previous errors.".into())
    );
    assert_eq!(run(&srv, s, "GET k"), Reply::Null, "nothing of the aborted queue ran");
    assert_eq!(run(&srv, s, "EXEC"), Reply::Error("ERR EXEC without MULTI".into()), "the abort ended MULTI");
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "SET k v"), QUEUED);
    assert_eq!(run(&srv, s, "DISCARD"), Reply::OK);
    assert_eq!(run(&srv, s, "GET k"), Reply::Null);
}

#[test]
fn watch_makes_exec_nil_when_a_watched_key_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let (a, b) = (&mut Session::new(1), &mut Session::new(2));
    assert_eq!(run(&srv, a, "SET k 1"), Reply::OK);

    // Unchanged: EXEC runs; the watch ends with it.
    assert_eq!(run(&srv, a, "WATCH k"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "INCR k"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![Reply::Int(2)]));
    assert_eq!(run(&srv, b, "SET k 5"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "INCR k"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![Reply::Int(6)]), "no longer watched after EXEC");

    // Another connection writes the key (with the same value, even) between WATCH and EXEC.
    assert_eq!(run(&srv, a, "WATCH k other"), Reply::OK);
    assert_eq!(run(&srv, b, "SET k 6"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "SET k mine"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null);
    assert_eq!(run(&srv, a, "GET k"), bulk("6"), "the queue did not run");

    // This connection's own write counts too; so does a key that did not exist.
    assert_eq!(run(&srv, a, "WATCH absent"), Reply::OK);
    assert_eq!(run(&srv, a, "SET absent now"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null);

    // UNWATCH and DISCARD forget the watch.
    assert_eq!(run(&srv, a, "WATCH k"), Reply::OK);
    assert_eq!(run(&srv, a, "UNWATCH"), Reply::OK);
    assert_eq!(run(&srv, b, "SET k 7"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "GET k"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![bulk("7")]));

    // A watched key in another database than the one selected at EXEC.
    assert_eq!(run(&srv, a, "SELECT 1"), Reply::OK);
    assert_eq!(run(&srv, a, "WATCH k"), Reply::OK);
    assert_eq!(run(&srv, a, "SELECT 0"), Reply::OK);
    assert_eq!(run(&srv, b, "SET k 8"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![Reply::Simple("PONG")]), "database 1's k did not change");
    assert_eq!(run(&srv, b, "SELECT 1"), Reply::OK);
    assert_eq!(run(&srv, a, "SELECT 1"), Reply::OK);
    assert_eq!(run(&srv, a, "WATCH k"), Reply::OK);
    assert_eq!(run(&srv, b, "SET k 8"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null);
}

#[test]
fn watch_counts_expiry_expire_and_flushdb_as_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let (a, b) = (&mut Session::new(1), &mut Session::new(2));
    assert_eq!(run(&srv, a, "SET x foo PX 50"), Reply::OK);
    assert_eq!(run(&srv, a, "WATCH x"), Reply::OK);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null, "a watched key that expired changed");

    assert_eq!(run(&srv, a, "SET y foo"), Reply::OK);
    assert_eq!(run(&srv, a, "WATCH y"), Reply::OK);
    assert_eq!(run(&srv, b, "EXPIRE y 100"), Reply::Int(1));
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null, "EXPIRE touches the key");

    assert_eq!(run(&srv, a, "WATCH y"), Reply::OK);
    assert_eq!(run(&srv, b, "FLUSHDB"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null, "FLUSHDB deletes the key");
}

#[test]
fn save_and_shutdown_are_refused_inside_multi_and_abort_exec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let a = &mut Session::new(1);
    for cmd in ["SAVE", "SHUTDOWN"] {
        assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
        assert_eq!(run(&srv, a, "SET foo bar"), QUEUED);
        assert_eq!(run(&srv, a, cmd), Reply::Error("ERR Command not allowed inside a transaction".into()));
        assert!(matches!(run(&srv, a, "EXEC"), Reply::Error(e) if e.starts_with("EXECABORT")));
        assert_eq!(run(&srv, a, "GET foo"), Reply::Null);
    }
}

#[test]
fn a_flush_that_finds_no_watched_key_does_not_fail_exec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let (a, b) = (&mut Session::new(1), &mut Session::new(2));
    for flush in ["FLUSHALL", "FLUSHDB"] {
        assert_eq!(run(&srv, a, "SET other 1"), Reply::OK);
        assert_eq!(run(&srv, a, "DEL x"), Reply::Int(0));
        assert_eq!(run(&srv, a, "WATCH x"), Reply::OK);
        assert_eq!(run(&srv, b, flush), Reply::OK);
        assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
        assert_eq!(run(&srv, a, "PING"), QUEUED);
        assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![Reply::Simple("PONG")]), "{flush} of an absent key");
    }
    // A key written after WATCH still fails EXEC, flush or not.
    assert_eq!(run(&srv, a, "WATCH x"), Reply::OK);
    assert_eq!(run(&srv, b, "FLUSHALL"), Reply::OK);
    assert_eq!(run(&srv, b, "SET x 1"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "PING"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null);
}

#[test]
fn over_maxmemory_growing_writes_are_refused_and_abort_exec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let (a, b) = (&mut Session::new(1), &mut Session::new(2));
    assert_eq!(run(&srv, a, "SET x value"), Reply::OK);
    const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
    // Refused while queuing: EXEC aborts, and DISCARD still works.
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "SET foo1 bar1"), QUEUED);
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 1"), Reply::OK);
    assert_eq!(run(&srv, a, "LPUSH l v"), Reply::Error(OOM.into()));
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 0"), Reply::OK);
    assert_eq!(run(&srv, a, "SET foo2 bar2"), QUEUED);
    assert!(matches!(run(&srv, a, "EXEC"), Reply::Error(e) if e.starts_with("EXECABORT")));
    assert_eq!(run(&srv, a, "EXISTS foo1 foo2"), Reply::Int(0));
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 1"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "SET y 1"), Reply::Error(OOM.into()));
    assert_eq!(run(&srv, a, "DISCARD"), Reply::OK);
    // Reads and deletes pass; an EXEC of reads passes, one with a growing write does not.
    assert_eq!(run(&srv, a, "GET x"), bulk("value"));
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 0"), Reply::OK);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "GET x"), QUEUED);
    assert_eq!(run(&srv, a, "SET z 1"), QUEUED);
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 1"), Reply::OK);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Error(format!("EXECABORT Transaction discarded because of: {OOM}")));
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, a, "GET x"), QUEUED);
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![bulk("value")]));
    assert_eq!(run(&srv, a, "DEL x"), Reply::Int(1));
    assert_eq!(run(&srv, b, "CONFIG SET maxmemory 0"), Reply::OK);
    assert_eq!(run(&srv, a, "SET y 1"), Reply::OK);
}

#[test]
fn racing_incrs_through_watch_and_exec_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    assert_eq!(run(&srv, &mut Session::new(0), "SET n 0"), Reply::OK);
    let per_thread = 100;
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let srv = srv.clone();
            std::thread::spawn(move || {
                let s = &mut Session::new(10 + t);
                let mut nils = 0;
                for _ in 0..per_thread {
                    // The classic optimistic increment: read under WATCH, write in EXEC.
                    loop {
                        assert_eq!(run(&srv, s, "WATCH n"), Reply::OK);
                        let Reply::Bulk(v) = run(&srv, s, "GET n") else { panic!("no n") };
                        let next: i64 = String::from_utf8(v).expect("utf-8").parse::<i64>().expect("integer") + 1;
                        assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
                        assert_eq!(run(&srv, s, &format!("SET n {next}")), QUEUED);
                        match run(&srv, s, "EXEC") {
                            Reply::Null => nils += 1,
                            Reply::Array(r) => {
                                assert_eq!(r, vec![Reply::OK]);
                                break;
                            }
                            other => panic!("{other:?}"),
                        }
                    }
                }
                nils
            })
        })
        .collect();
    let nils: usize = threads.into_iter().map(|t| t.join().expect("thread")).sum();
    assert_eq!(run(&srv, &mut Session::new(0), "GET n"), bulk(&(4 * per_thread).to_string()));
    eprintln!("{nils} EXECs answered nil and were retried");
}

#[test]
fn a_reader_never_sees_half_of_an_exec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    assert_eq!(run(&srv, &mut Session::new(0), "MSET a 0 b 0"), Reply::OK);
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (srv, done) = (srv.clone(), done.clone());
        std::thread::spawn(move || {
            let s = &mut Session::new(1);
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) {
                let Reply::Array(v) = run(&srv, s, "MGET a b") else { panic!("MGET") };
                assert_eq!(v[0], v[1], "a and b move together");
                reads += 1;
            }
            reads
        })
    };
    let s = &mut Session::new(2);
    for _ in 0..200 {
        assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
        assert_eq!(run(&srv, s, "INCR a"), QUEUED);
        assert_eq!(run(&srv, s, "INCR b"), QUEUED);
        assert!(matches!(run(&srv, s, "EXEC"), Reply::Array(_)));
    }
    done.store(true, Ordering::Relaxed);
    assert!(reader.join().expect("reader") > 0);
    assert_eq!(run(&srv, s, "MGET a b"), Reply::Array(vec![bulk("200"), bulk("200")]));
}
