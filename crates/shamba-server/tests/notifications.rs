//! Keyspace notifications over real sockets: `notify-keyspace-events` read and printed as
//! Redis does, each command's keyspace and keyevent messages in Redis's order, classes
//! masked, `new` only for a created key, and `expired` when a deadline passes with no
//! request touching the key.

mod common;

use common::{connect, Serving};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

fn start() -> Serving {
    common::serving(2, |c| c.databases = 2)
}

/// Read one line (through CRLF).
fn line(c: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        c.read_exact(&mut b).expect("a line");
        out.push(b[0]);
    }
    String::from_utf8_lossy(&out).trim_end().to_string()
}

/// One RESP2 reply, flattened to its words (an array's items joined by spaces).
fn reply(c: &mut TcpStream) -> String {
    let head = line(c);
    match head.split_at(1) {
        ("*", n) => (0..n.parse::<usize>().expect("a length")).map(|_| reply(c)).collect::<Vec<_>>().join(" "),
        ("$", n) => {
            let len: usize = n.parse().expect("a bulk length");
            let mut body = vec![0; len + 2];
            c.read_exact(&mut body).expect("bulk");
            body.truncate(len);
            String::from_utf8_lossy(&body).into_owned()
        }
        (_, rest) => rest.to_string(),
    }
}

/// Send `request` (words split at spaces) and read its reply.
fn call(c: &mut TcpStream, request: &str) -> String {
    let words: Vec<&str> = request.split(' ').collect();
    let mut out = format!("*{}\r\n", words.len());
    for w in words {
        out.push_str(&format!("${}\r\n{w}\r\n", w.len()));
    }
    c.write_all(out.as_bytes()).expect("send");
    reply(c)
}

/// A client subscribed to every channel by the pattern `*`.
fn listener(addr: SocketAddr) -> TcpStream {
    let mut sub = connect(addr);
    assert_eq!(call(&mut sub, "PSUBSCRIBE *"), "psubscribe * 1");
    sub
}

/// The next `n` messages `sub` receives, each `channel payload`.
fn messages(sub: &mut TcpStream, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let m = reply(sub);
            m.strip_prefix("pmessage * ").unwrap_or_else(|| panic!("not a pmessage: {m}")).to_string()
        })
        .collect()
}

#[test]
fn event_classes_read_and_print_as_redis_does() {
    let srv = start();
    let mut c = connect(srv.addr);
    for (given, shown) in [("gKE", "gKE"), ("$lshzxeKE", "$lshzxeKE"), ("KA", "AK"), ("EA", "AE"), ("", "")] {
        assert_eq!(call(&mut c, &format!("CONFIG SET notify-keyspace-events {given}")), "OK");
        assert_eq!(call(&mut c, "CONFIG GET notify-keyspace-events"), format!("notify-keyspace-events {shown}"));
    }
    let bad = call(&mut c, "CONFIG SET notify-keyspace-events KEq");
    assert!(bad.starts_with("ERR CONFIG SET failed"), "{bad}");
}

#[test]
fn writes_publish_keyspace_and_keyevent_messages_in_order() {
    let srv = start();
    let mut c = connect(srv.addr);
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events KEA"), "OK");
    let mut sub = listener(srv.addr);
    for req in [
        "SET foo bar",
        "SREM nothing x",
        "LPUSH l a",
        "RPOP l",
        "HSET h f 1",
        "EXPIRE h 100",
        "RENAME h h2",
        "DEL foo missing h2",
        "ZADD z 1 a",
        "ZREM z absent",
        "ZADD z INCR 2 m",
    ] {
        call(&mut c, req);
    }
    let pairs = |events: &[(&str, &str)]| -> Vec<String> {
        events
            .iter()
            .flat_map(|(key, event)| [format!("__keyspace@0__:{key} {event}"), format!("__keyevent@0__:{event} {key}")])
            .collect()
    };
    // SREM and ZREM of an absent member write nothing and publish nothing; the pop that emptied
    // the list is followed by its `del`.
    let want = pairs(&[
        ("foo", "set"),
        ("l", "lpush"),
        ("l", "rpop"),
        ("l", "del"),
        ("h", "hset"),
        ("h", "expire"),
        ("h", "rename_from"),
        ("h2", "rename_to"),
        ("foo", "del"),
        ("h2", "del"),
        ("z", "zadd"),
        ("z", "zincr"),
    ]);
    assert_eq!(messages(&mut sub, want.len()), want);
}

#[test]
fn classes_mask_events_and_new_is_sent_once_per_created_key() {
    let srv = start();
    let mut c = connect(srv.addr);
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events El"), "OK");
    let mut sub = listener(srv.addr);
    call(&mut c, "SET foo bar");
    call(&mut c, "RPUSH l a");
    assert_eq!(messages(&mut sub, 1), ["__keyevent@0__:rpush l"], "no message for SET: only list events wanted");
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events En"), "OK");
    call(&mut c, "SET foo baz");
    call(&mut c, "SET bar 1");
    call(&mut c, "SELECT 1");
    call(&mut c, "HSET h f v");
    assert_eq!(messages(&mut sub, 2), ["__keyevent@0__:new bar", "__keyevent@1__:new h"]);
}

#[test]
fn a_passed_deadline_publishes_expired_without_a_request_but_a_deleted_key_does_not() {
    let srv = start();
    let mut c = connect(srv.addr);
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events Ex"), "OK");
    let mut sub = listener(srv.addr);
    call(&mut c, "SET gone 1 PX 100");
    call(&mut c, "DEL gone");
    call(&mut c, "SET renewed 1 PX 100");
    call(&mut c, "PEXPIRE renewed 400");
    call(&mut c, "PSETEX foo 150 1");
    call(&mut c, "HSET h f v");
    call(&mut c, "PEXPIRE h 250");
    assert_eq!(
        messages(&mut sub, 3),
        ["__keyevent@0__:expired foo", "__keyevent@0__:expired h", "__keyevent@0__:expired renewed"]
    );
}

#[test]
fn a_key_swapped_into_another_database_expires_under_that_database_number() {
    let srv = start();
    let mut c = connect(srv.addr);
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events Ex"), "OK");
    let mut sub = listener(srv.addr);
    call(&mut c, "SET moved 1 PX 200");
    assert_eq!(call(&mut c, "SWAPDB 0 1"), "OK");
    assert_eq!(call(&mut c, "EXISTS moved"), "0", "it is in database 1 now");
    assert_eq!(messages(&mut sub, 1), ["__keyevent@1__:expired moved"]);
    assert_eq!(call(&mut c, "SELECT 1"), "OK");
    assert_eq!(call(&mut c, "EXISTS moved"), "0", "and gone from there");
}

#[test]
fn a_served_blocked_pop_publishes_its_pop_after_the_push_that_woke_it() {
    let srv = start();
    let mut c = connect(srv.addr);
    assert_eq!(call(&mut c, "CONFIG SET notify-keyspace-events KEA"), "OK");
    let mut sub = listener(srv.addr);
    let mut blocked = connect(srv.addr);
    blocked.write_all(b"*3\r\n$5\r\nBLPOP\r\n$2\r\nbl\r\n$1\r\n0\r\n").expect("send");
    // The BLPOP must be waiting before the push, or it pops at once without blocking.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !call(&mut c, "INFO clients").contains("blocked_clients:1") {
        assert!(std::time::Instant::now() < deadline, "BLPOP never blocked");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    call(&mut c, "LPUSH bl x");
    assert_eq!(reply(&mut blocked), "bl x");
    let want: Vec<String> = [("bl", "lpush"), ("bl", "lpop"), ("bl", "del")]
        .iter()
        .flat_map(|(key, event)| [format!("__keyspace@0__:{key} {event}"), format!("__keyevent@0__:{event} {key}")])
        .collect();
    assert_eq!(messages(&mut sub, want.len()), want);
}
