//! SWAPDB: two databases exchange everything they hold (strings and collections), the
//! exchange survives a restart, a client blocked on a key of either database is served
//! when the swap brings it something, and a transaction running beside swaps never sees
//! half of one.

mod common;

use common::{bulk, run, script, server, show};
use shamba_server::{Reply, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn two_databases_exchange_their_keys_of_every_type() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("SET k zero", "OK"),
            ("SELECT 2", "OK"),
            ("SET k two", "OK"),
            ("HSET h f v", "1"),
            ("RPUSH l a b", "2"),
            ("SWAPDB 0 2", "OK"),
            ("GET k", "zero"),
            ("DBSIZE", "1"),
            ("SELECT 0", "OK"),
            ("GET k", "two"),
            ("HGET h f", "v"),
            ("TYPE l", "list"),
            ("DBSIZE", "3"),
            ("SWAPDB 0 3", "OK"),
            ("DBSIZE", "0"),
            ("SELECT 3", "OK"),
            ("LRANGE l 0 -1", "[a b]"),
            ("SWAPDB 1 1", "OK"),
            ("SWAPDB 0 x", "!ERR invalid second DB index"),
            ("SWAPDB x 0", "!ERR invalid first DB index"),
            ("SWAPDB 0 4", "!ERR DB index is out of range"),
            ("SWAPDB -1 0", "!ERR DB index is out of range"),
            ("MULTI", "OK"),
            ("SWAPDB 0 1", "QUEUED"),
            ("EXEC", "[!ERR SWAPDB is not allowed inside MULTI]"),
        ],
    );
}

#[test]
fn a_swap_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (rt, srv) = server(dir.path());
        let s = &mut Session::new(1);
        script(&srv, s, &[("SET k zero", "OK"), ("SELECT 1", "OK"), ("SADD s m", "1"), ("SWAPDB 1 0", "OK")]);
        srv.store().db().clone().close().expect("close");
        drop(srv);
        drop(rt);
    }
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("SMEMBERS s", "[m]"),
            ("GET k", "nil"),
            ("SELECT 1", "OK"),
            ("GET k", "zero"),
            // Swapped back, nothing is left stored: a later start sees every database as its own.
            ("SWAPDB 0 1", "OK"),
            ("GET k", "nil"),
            ("SELECT 0", "OK"),
            ("GET k", "zero"),
        ],
    );
}

#[test]
fn a_client_blocked_on_either_database_is_served_by_the_swap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(&srv, s, &[("SELECT 1", "OK"), ("RPUSH q x", "1"), ("SELECT 0", "OK")]);
    let waiting = {
        let srv = srv.clone();
        std::thread::spawn(move || run(&srv, &mut Session::new(2), "BLPOP q 10"))
    };
    while !show(&run(&srv, s, "INFO clients")).contains("blocked_clients:1") {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(run(&srv, s, "SWAPDB 0 1"), Reply::OK);
    // Served before the swap's reply (a waiter finding it on its own takes up to 100 ms).
    assert_eq!(run(&srv, s, "EXISTS q"), Reply::Int(0));
    assert_eq!(show(&waiting.join().expect("blocked client")), "[q x]");
}

#[test]
fn commands_beside_swaps_see_one_database_or_the_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    // Database 0 holds a = b = "zero", database 1 a = b = "one": a transaction reading
    // both keys must find them equal whatever swaps run beside it.
    let s = &mut Session::new(1);
    script(&srv, s, &[("MSET a zero b zero", "OK"), ("SELECT 1", "OK"), ("MSET a one b one", "OK")]);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (srv, stop) = (srv.clone(), stop.clone());
        std::thread::spawn(move || {
            let s = &mut Session::new(2);
            let mut swaps = 0;
            while !stop.load(Ordering::Relaxed) {
                assert_eq!(run(&srv, s, "SWAPDB 0 1"), Reply::OK);
                swaps += 1;
            }
            swaps
        })
    };
    let s = &mut Session::new(3);
    for _ in 0..500 {
        // EXEC's commands each find the selected database: all in the same one.
        run(&srv, s, "MULTI");
        run(&srv, s, "GET a");
        run(&srv, s, "GET b");
        match run(&srv, s, "EXEC") {
            Reply::Array(v) => assert_eq!(v[0], v[1], "one database's keys"),
            other => panic!("{other:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swapper.join().expect("swapper") > 0);
    let zero = run(&srv, s, "GET a");
    assert!(zero == bulk("zero") || zero == bulk("one"));
}

#[test]
fn a_swap_touches_watched_keys_that_exist_on_either_side() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let exec_after_swap = |s: &mut Session| {
        script(&srv, s, &[("SWAPDB 0 1", "OK"), ("MULTI", "OK"), ("PING", "QUEUED")]);
        show(&run(&srv, s, "EXEC"))
    };
    // A watched key that existed is gone after the swap; one that did not now exists.
    script(&srv, s, &[("SET x 30", "OK"), ("WATCH x", "OK")]);
    assert_eq!(exec_after_swap(s), "nil");
    script(
        &srv,
        s,
        &[("FLUSHALL", "OK"), ("SELECT 1", "OK"), ("SET x 30", "OK"), ("SELECT 0", "OK"), ("WATCH x", "OK")],
    );
    assert_eq!(exec_after_swap(s), "nil");
    // Absent on both sides, or in a database not swapped: untouched.
    script(&srv, s, &[("FLUSHALL", "OK"), ("WATCH x", "OK")]);
    assert_eq!(exec_after_swap(s), "[PONG]");
    script(&srv, s, &[("SELECT 2", "OK"), ("SET x 1", "OK"), ("WATCH x", "OK")]);
    assert_eq!(exec_after_swap(s), "[PONG]");
}
