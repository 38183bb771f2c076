//! What a connection costs in descriptors: one for a plain client, a second (the probe
//! PUBLISH peeks at, see the server's `input_probe`) only while it is subscribed. Its own
//! test binary, so no other test's sockets are counted.

use shamba_server::{Listener, ServerConfig, SyncMode};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A server on a free loopback port, serving on its own runtime until dropped.
struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn start() -> Running {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    Running { addr, stop: Some(stop), _rt: rt, _dir: dir }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    c
}

/// Send `request` and read exactly `want.len()` bytes back, compared.
fn roundtrip(c: &mut TcpStream, request: &str, want: &str) {
    c.write_all(request.as_bytes()).expect("send");
    let mut got = vec![0; want.len()];
    c.read_exact(&mut got).expect("reply");
    assert_eq!(String::from_utf8_lossy(&got), want);
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
