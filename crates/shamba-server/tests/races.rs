//! Two clients racing: a string command and a collection write on a new key make one of
//! the two types, and the other answers WRONGTYPE; a PUBLISH sent after another client's
//! UNSUBSCRIBE reached the server does not count that client.

mod common;

use common::{run, server};
use shamba_server::{Reply, Session};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};

fn wrong_type(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e.starts_with("WRONGTYPE"))
}

#[test]
fn a_string_command_and_a_collection_write_on_a_new_key_never_both_succeed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    // The database holds a collection, so string commands check the key's type.
    assert_eq!(run(&srv, &mut Session::new(1), "SADD other m"), Reply::Int(1));
    const ROUNDS: usize = 3000;
    let start = Arc::new(Barrier::new(2));
    let racer = |line: &'static str| {
        let (srv, start) = (srv.clone(), start.clone());
        std::thread::spawn(move || {
            let s = &mut Session::new(2);
            (0..ROUNDS)
                .map(|i| {
                    start.wait();
                    run(&srv, s, &line.replace("KEY", &format!("k{i}")))
                })
                .collect::<Vec<Reply>>()
        })
    };
    let hashes = racer("HSET KEY f v");
    let counters = racer("INCR KEY");
    let (hashes, counters) = (hashes.join().expect("HSET"), counters.join().expect("INCR"));
    let s = &mut Session::new(3);
    for (i, (h, c)) in hashes.iter().zip(&counters).enumerate() {
        let key = format!("k{i}");
        let kind = run(&srv, s, &format!("TYPE {key}"));
        match (h, c) {
            (Reply::Int(1), c) if wrong_type(c) => assert_eq!(kind, Reply::Simple("hash"), "{key}"),
            (h, Reply::Int(1)) if wrong_type(h) => assert_eq!(kind, Reply::Simple("string"), "{key}"),
            _ => panic!("{key}: HSET answered {h:?} and INCR {c:?}; the key is a {kind:?}"),
        }
    }
}

/// Read from `c` until the bytes read end with `end`.
fn read_until(c: &mut TcpStream, end: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !got.ends_with(end) {
        let n = c.read(&mut buf).expect("read");
        assert!(n > 0, "closed; read so far: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    got
}

#[test]
fn a_publish_sent_after_an_unsubscribe_does_not_reach_the_unsubscribed_client() {
    let serving = common::serving(2, |_| {});
    let addr = serving.addr;
    let mut sub = TcpStream::connect(addr).expect("connect");
    let mut publisher = TcpStream::connect(addr).expect("connect");
    for round in 0..300 {
        sub.write_all(b"SUBSCRIBE ch\r\n").expect("write");
        read_until(&mut sub, b":1\r\n");
        // Sent before the PUBLISH, its reply not waited for: as Redis's test sends them.
        sub.write_all(b"UNSUBSCRIBE\r\n").expect("write");
        publisher.write_all(b"PUBLISH ch m\r\n").expect("write");
        let received = read_until(&mut publisher, b"\r\n");
        assert_eq!(String::from_utf8_lossy(&received), ":0\r\n", "round {round}: the message reached the client");
        read_until(&mut sub, b":0\r\n");
    }
    serving.stop();
}
