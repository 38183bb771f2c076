//! SORT and SORT_RO through the command layer: the orders Redis 7.0 gives (numeric, ALPHA,
//! DESC, BY another key or a hash's field, `nosort`), LIMIT, GET, STORE (a list that
//! replaces the destination and serves a client blocked on it), and the errors.

mod common;

use common::{run, script, server, show};
use shamba_server::{Reply, Session};
use std::time::Duration;

#[test]
fn numbers_alpha_desc_and_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("RPUSH l 3 10 -1.5 2 1e1", "5"),
            // Equal numbers (10 and 1e1) are ordered by their bytes.
            ("SORT l", "[-1.5 2 3 10 1e1]"),
            ("SORT l DESC", "[1e1 10 3 2 -1.5]"),
            ("SORT l ALPHA", "[-1.5 10 1e1 2 3]"),
            ("SORT l LIMIT 1 2", "[2 3]"),
            ("SORT l LIMIT -10 2", "[-1.5 2]"),
            ("SORT l LIMIT 3 -1", "[10 1e1]"),
            ("SORT l LIMIT 5 10", "[]"),
            ("SORT l LIMIT 2 9223372036854775807", "[3 10 1e1]"),
            ("SADD s b a c", "3"),
            ("SORT s ALPHA DESC", "[c b a]"),
            ("SORT s", "!ERR One or more scores can't be converted into double"),
            ("ZADD z 1 x 3 y 2 w", "3"),
            ("SORT z ALPHA", "[w x y]"),
            ("SORT nope", "[]"),
            ("SORT_RO l LIMIT 0 1", "[-1.5]"),
        ],
    );
}

#[test]
fn by_patterns_and_get_patterns_read_other_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("RPUSH ids 1 2 3 4", "4"),
            ("MSET w_1 40 w_2 10 w_3 30", "OK"),
            ("HSET o_1 weight 4 name one", "2"),
            ("HSET o_2 weight 3 name two", "2"),
            ("HSET o_3 weight 2 name three", "2"),
            ("HSET o_4 weight 1 name four", "2"),
            // A missing BY key counts as 0.
            ("SORT ids BY w_*", "[4 2 3 1]"),
            ("SORT ids BY o_*->weight", "[4 3 2 1]"),
            ("SORT ids BY o_*->weight GET # GET o_*->name GET w_*", "[4 four nil 3 three 30 2 two 10 1 one 40]"),
            // ALPHA by a pattern: a missing value sorts first.
            ("SORT ids BY w_* ALPHA", "[4 2 3 1]"),
            // A pattern without `*`: no sort, and GET of it is nil.
            ("SORT ids BY nosort DESC", "[4 3 2 1]"),
            ("SORT ids BY nosort LIMIT 1 2", "[2 3]"),
            ("SORT ids BY nosort GET const LIMIT 0 2", "[nil nil]"),
            // `->` with no field name is part of the key name.
            ("SET x:1-> v", "OK"),
            ("SORT ids BY nosort GET x:*-> LIMIT 0 1", "[v]"),
            // A BY key of the wrong type is missing: a hash read as a string, a string as a hash.
            ("SORT ids BY o_* GET w_*->weight LIMIT 0 1", "[nil]"),
            ("SET bad_2 abc", "OK"),
            ("SORT ids BY bad_*", "!ERR One or more scores can't be converted into double"),
        ],
    );
}

#[test]
fn a_sorted_set_by_nosort_keeps_its_score_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("ZADD z 1 a 5 b 2 c 10 d 3 e", "5"),
            ("SORT z BY nosort", "[a c e b d]"),
            ("SORT z BY nosort DESC LIMIT 0 2", "[d b]"),
            ("SORT z BY nosort LIMIT -10 100", "[a c e b d]"),
            ("ZADD inf -inf m +inf n 0 o", "3"),
            ("SORT inf BY nosort", "[m o n]"),
            ("ZADD zn -inf 1 +inf 2 0 3", "3"),
            ("SORT zn BY nosort GET #", "[1 3 2]"),
        ],
    );
}

#[test]
fn store_replaces_the_destination_with_a_list_or_deletes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("SADD s 3 1 2", "3"),
            ("HSET dst f v", "1"),
            ("SORT s STORE dst", "3"),
            ("TYPE dst", "list"),
            ("LRANGE dst 0 -1", "[1 2 3]"),
            ("SET w_2 x", "OK"),
            // Missing GET values are stored as empty elements.
            ("SORT s GET # GET w_* STORE dst", "6"),
            ("LRANGE dst 0 -1", "[1  2 x 3 ]"),
            // A set stored by nosort is sorted anyway (as bytes).
            ("SADD t b c a", "3"),
            ("SORT t BY nosort STORE dst", "3"),
            ("LRANGE dst 0 -1", "[a b c]"),
            ("SORT nope STORE dst", "0"),
            ("EXISTS dst", "0"),
            ("SORT nope STORE dst", "0"),
            ("EXISTS dst", "0"),
            ("SET str x", "OK"),
            ("SORT s STORE str", "3"),
            ("TYPE str", "list"),
            ("SORT s STORE s", "3"),
            ("TYPE s", "list"),
            ("SORT_RO s STORE d", "!ERR syntax error"),
            ("COMMAND GETKEYS SORT abc STORE invalid STORE stillbad STORE def", "[abc def]"),
            ("COMMAND GETKEYS SORT_RO abc", "[abc]"),
            ("COMMAND INFO SORT", "[[sort -2 [write denyoom movablekeys] 1 1 1 [@keyspace] [] [] []]]"),
        ],
    );
}

#[test]
fn wrong_types_and_bad_options_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let wrongtype = "!WRONGTYPE Operation against a key holding the wrong kind of value";
    script(
        &srv,
        s,
        &[
            ("SET str 1", "OK"),
            ("HSET h f v", "1"),
            ("SORT str", wrongtype),
            ("SORT h", wrongtype),
            ("SORT_RO h", wrongtype),
            ("SORT h STORE d", wrongtype),
            ("EXISTS d", "0"),
            ("SORT nope LIMIT 1", "!ERR syntax error"),
            ("SORT nope LIMIT a 1", "!ERR value is not an integer or out of range"),
            ("SORT nope FOO", "!ERR syntax error"),
        ],
    );
}

#[test]
fn inside_a_transaction_store_writes_with_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("MULTI", "OK"),
            ("RPUSH l 2 1", "QUEUED"),
            ("SORT l STORE d", "QUEUED"),
            ("LPUSH d 0", "QUEUED"),
            ("EXEC", "[2 2 3]"),
            ("LRANGE d 0 -1", "[0 1 2]"),
        ],
    );
}

#[test]
fn store_serves_a_client_blocked_on_the_destination_before_it_answers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(&srv, s, &[("RPUSH src 2 1 3", "3")]);
    let waiting = {
        let srv = srv.clone();
        std::thread::spawn(move || run(&srv, &mut Session::new(2), "BLPOP dst 10"))
    };
    while !show(&run(&srv, s, "INFO clients")).contains("blocked_clients:1") {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(run(&srv, s, "SORT src STORE dst"), Reply::Int(3));
    // Served before SORT's reply: the head is already gone (a waiter finding it on its own
    // would take up to its 100 ms poll).
    assert_eq!(show(&run(&srv, s, "LRANGE dst 0 -1")), "[2 3]");
    assert_eq!(show(&waiting.join().expect("blocked client")), "[dst 1]");
}
