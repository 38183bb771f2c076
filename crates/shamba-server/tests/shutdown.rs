//! SHUTDOWN over a real socket: the asking client gets no reply and its connection closes,
//! the server stops serving as on SIGTERM (its `serve` returns), every acknowledged write
//! is there after a reopen, and a script running at the time keeps none of its writes.

mod common;

use common::{connect, roundtrip};
use shamba_server::{Listener, ServerConfig, SyncMode};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

/// Serve `db` on a free loopback port; the handle ends when the server stops by itself.
fn serve(
    rt: &tokio::runtime::Runtime,
    db: &Path,
    sync: SyncMode,
) -> (SocketAddr, tokio::task::JoinHandle<Result<(), shamba_server::Error>>) {
    let mut config = ServerConfig::new(db);
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = sync;
    config.databases = 2;
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    // The shutdown future never completes: only SHUTDOWN can stop this server.
    let handle = rt.spawn(listener.serve(std::future::pending()));
    (addr, handle)
}

/// What the server sends before it closes the connection.
fn rest(c: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    c.read_to_end(&mut out).expect("the connection closes");
    out
}

fn stopped(rt: &tokio::runtime::Runtime, handle: tokio::task::JoinHandle<Result<(), shamba_server::Error>>) {
    let ended = rt.block_on(async { tokio::time::timeout(Duration::from_secs(30), handle).await });
    ended.expect("the server stops within 30 s").expect("its task").expect("a clean stop");
}

#[test]
fn shutdown_closes_the_asking_client_without_a_reply_and_stops_the_server_with_its_writes_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let (addr, handle) = serve(&rt, &db, SyncMode::Never);
    let mut c = connect(addr);
    roundtrip(&mut c, "SET kept 1\r\n", "+OK\r\n");
    roundtrip(&mut c, "SHUTDOWN ABORT\r\n", "-ERR No shutdown in progress.\r\n");
    roundtrip(&mut c, "SHUTDOWN SAVE NOSAVE\r\n", "-ERR syntax error\r\n");
    roundtrip(&mut c, "SHUTDOWN LATER\r\n", "-ERR syntax error\r\n");
    roundtrip(&mut c, "MULTI\r\n", "+OK\r\n");
    roundtrip(&mut c, "SHUTDOWN\r\n", "-ERR Command not allowed inside a transaction\r\n");
    roundtrip(&mut c, "DISCARD\r\n", "+OK\r\n");
    let mut other = connect(addr);
    roundtrip(&mut other, "PING\r\n", "+PONG\r\n");
    // NOSAVE keeps what was acknowledged: it is in the WAL, and the stop flushes it.
    c.write_all(b"SHUTDOWN NOSAVE\r\n").expect("send");
    assert_eq!(rest(&mut c), b"", "no reply, then the connection closes");
    stopped(&rt, handle);
    assert_eq!(rest(&mut other), b"", "every other client is closed too");
    assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_err(), "nothing listens any more");

    let (addr, handle) = serve(&rt, &db, SyncMode::Never);
    let mut c = connect(addr);
    roundtrip(&mut c, "GET kept\r\n", "$1\r\n1\r\n");
    c.write_all(b"shutdown\r\n").expect("send");
    assert_eq!(rest(&mut c), b"");
    stopped(&rt, handle);
}

#[test]
fn shutdown_stops_a_busy_script_and_keeps_none_of_its_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let (addr, handle) = serve(&rt, &db, SyncMode::Never);
    let mut admin = connect(addr);
    roundtrip(&mut admin, "CONFIG SET lua-time-limit 100\r\n", "+OK\r\n");
    let mut runner = connect(addr);
    // A script that writes, then loops until stopped.
    runner.write_all(b"EVAL \"redis.call('set', KEYS[1], 'half') while true do end\" 1 written\r\n").expect("send");
    // Wait until the script is busy: other clients are answered BUSY.
    let busy = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";
    let mut waited = 0;
    loop {
        admin.write_all(b"PING\r\n").expect("send");
        let mut first = [0u8; 1];
        admin.read_exact(&mut first).expect("reply");
        if first[0] == b'-' {
            let mut rest_of = vec![0; busy.len() - 1];
            admin.read_exact(&mut rest_of).expect("reply");
            assert_eq!(format!("-{}", String::from_utf8_lossy(&rest_of)), busy);
            break;
        }
        let mut pong = [0u8; 6];
        admin.read_exact(&mut pong).expect("reply");
        waited += 1;
        assert!(waited < 600, "the script never turned busy");
        std::thread::sleep(Duration::from_millis(50));
    }
    admin.write_all(b"SHUTDOWN NOSAVE\r\n").expect("send");
    assert_eq!(rest(&mut admin), b"", "no reply, then the connection closes");
    let script_reply = rest(&mut runner);
    assert!(script_reply.starts_with(b"-ERR Script killed"), "{}", String::from_utf8_lossy(&script_reply));
    stopped(&rt, handle);

    let (addr, handle) = serve(&rt, &db, SyncMode::Never);
    let mut c = connect(addr);
    roundtrip(&mut c, "EXISTS written\r\n", ":0\r\n");
    c.write_all(b"SHUTDOWN\r\n").expect("send");
    assert_eq!(rest(&mut c), b"");
    stopped(&rt, handle);
}
