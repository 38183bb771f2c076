//! The server started from the library on a free loopback port, spoken to in raw RESP, and
//! stopped by its shutdown future instead of a signal; and the command layer used with no
//! socket at all, as a replication layer would use it.

use shamba::Readable;
use shamba_server::{command, parse_request, Limits, Listener, Protocol, Reply, ServerConfig, Session, SyncMode};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// Read from `s` until `want.len()` bytes have arrived, and compare.
fn expect_bytes(s: &mut TcpStream, want: &[u8]) {
    let mut got = vec![0; want.len()];
    s.read_exact(&mut got).expect("reply");
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

#[test]
fn serves_on_an_ephemeral_port_and_stops_when_told() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    config.databases = 4;
    let rt = runtime();
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    assert_ne!(addr.port(), 0, "port 0 resolves to the port bound");

    // The command layer works before any client connects, and clients see what it wrote.
    let server = listener.server().clone();
    let mut own = Session::new(0);
    assert_eq!(server.execute(&mut own, &words("SET before clients")), Reply::OK);
    assert_eq!(server.store().database_count(), 4);

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));

    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    // Pipelined, RESP arrays and inline commands mixed: the replies come in order.
    c.write_all(b"*2\r\n$3\r\nGET\r\n$6\r\nbefore\r\nSET a 1\r\nINCR a\r\nGET nope\r\nSELECT 3\r\nSET a three\r\n")
        .expect("send");
    expect_bytes(&mut c, b"$7\r\nclients\r\n+OK\r\n:2\r\n$-1\r\n+OK\r\n+OK\r\n");
    // HELLO 3: a RESP3 map of eight pairs.
    c.write_all(b"HELLO 3\r\n").expect("send");
    expect_bytes(&mut c, b"%8\r\n");
    let mut idle = TcpStream::connect(addr).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    idle.write_all(b"PING\r\n").expect("send");
    expect_bytes(&mut idle, b"+PONG\r\n");

    stop.send(()).expect("server still serving");
    rt.block_on(serving).expect("serve task").expect("clean stop");
    let mut rest = Vec::new();
    assert_eq!(idle.read_to_end(&mut rest).expect("closed"), 0, "idle connections are closed on stop");
    c.read_to_end(&mut rest).expect("closed");
    assert!(rest.starts_with(b"$6\r\nserver\r\n$6\r\nshamba\r\n"), "the rest of HELLO's reply, then the end");
    drop(rt);

    // Stopped means flushed and closed: the engine opens the directory and finds the data.
    let db = shamba::Db::open(dir.path().join("db"), shamba::Options::default()).expect("reopen");
    assert_eq!(db.get(b"before").expect("get").as_deref(), Some(&b"clients"[..]));
    assert_eq!(db.get(b"a").expect("get").as_deref(), Some(&b"2"[..]));
    assert_eq!(db.keyspace("db3").expect("db3").get(b"a").expect("get").as_deref(), Some(&b"three"[..]));
    db.close().expect("close");
}

#[test]
fn the_command_layer_without_a_socket() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    let rt = runtime();
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let server = listener.server().clone();

    // A request read by the parser, run, and its reply encoded in the session's protocol.
    let limits = Limits::for_engine(1 << 10, 1 << 20);
    let buf = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\nrest";
    let (request, used) = parse_request(buf, &limits).expect("well formed").expect("whole");
    assert_eq!(used, buf.len() - "rest".len());
    let mut session = Session::new(7);
    let mut out = Vec::new();
    server.execute(&mut session, &request).encode(session.protocol(), &mut out);
    assert_eq!(out, b"+OK\r\n");
    assert!(parse_request(b"*1\r\n$-5\r\n", &limits).is_err());

    // SELECT and HELLO change the session; the store sees the selected database.
    assert_eq!(server.execute(&mut session, &words("SELECT 2")), Reply::OK);
    assert_eq!(session.database(), 2);
    assert_eq!(server.execute(&mut session, &words("SET k two")), Reply::OK);
    let db2 = server.store().select(2).expect("in range").expect("keyspace");
    assert_eq!((db2.index(), db2.get(b"k").expect("get").as_deref()), (2, Some(&b"two"[..])));
    let db0 = server.store().select(0).expect("in range").expect("keyspace");
    assert_eq!(db0.get(b"k").expect("get").as_deref(), Some(&b"v"[..]));
    assert!(server.store().select(16).is_none());
    assert!(matches!(server.execute(&mut session, &words("HELLO 3")), Reply::Map(_)));
    assert_eq!(session.protocol(), Protocol::Resp3);
    assert_eq!(
        server.execute(&mut session, &words("INCR k")),
        Reply::Error("ERR value is not an integer or out of range".into())
    );
    assert!(
        matches!(server.execute(&mut session, &words("NOSUCH x")), Reply::Error(e) if e.starts_with("ERR unknown command"))
    );
    assert_eq!(server.execute(&mut session, &words("QUIT")), Reply::OK);
    assert!(session.is_closing());

    // The table says which commands write.
    assert!(command(b"SET").is_some_and(|c| c.is_write() && c.name() == "set"));
    assert!(command(b"flushall").is_some_and(|c| c.is_write()));
    assert!(command(b"get").is_some_and(|c| !c.is_write() && c.flags().contains(&"readonly")));
    assert!(command(b"lpush").is_some_and(|c| c.is_write()));
    assert!(command(b"xadd").is_none());
    drop(listener);
}
