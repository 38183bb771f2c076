//! What a connection costs in descriptors: one for a plain client, a second (the probe
//! PUBLISH peeks at, see the server's `input_probe`) only while it is subscribed. Its own
//! test binary, so no other test's sockets are counted.

mod common;

use common::{connect, roundtrip, Serving};
use std::net::TcpStream;

fn start() -> Serving {
    common::serving(2, |_| {})
}

/// Descriptors open in this process (the test's clients' and the server's).
fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

#[test]
fn a_client_holds_one_descriptor_of_the_server_and_a_subscriber_two_until_it_unsubscribes() {
    const N: usize = 40;
    let server = start();
    let before = open_descriptors();
    let mut clients: Vec<TcpStream> = (0..N).map(|_| connect(server.addr)).collect();
    for c in &mut clients {
        roundtrip(c, "PING\r\n", "+PONG\r\n");
    }
    // Each client: its own socket here and the server's end of it.
    let plain = open_descriptors() - before;
    assert!((2 * N..2 * N + N / 4).contains(&plain), "{plain} descriptors for {N} clients");
    for c in &mut clients {
        roundtrip(
            c,
            "SUBSCRIBE a b\r\n",
            "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
        );
    }
    let subscribed = open_descriptors() - before;
    assert!((3 * N..3 * N + N / 4).contains(&subscribed), "{subscribed} descriptors for {N} subscribers");
    for c in &mut clients {
        roundtrip(c, "UNSUBSCRIBE a\r\n", "*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n");
    }
    assert!(open_descriptors() - before >= 3 * N, "still subscribed to b");
    for c in &mut clients {
        roundtrip(c, "UNSUBSCRIBE\r\n", "*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n");
    }
    let after = open_descriptors() - before;
    assert!((2 * N..2 * N + N / 4).contains(&after), "{after} descriptors after unsubscribing");
}
