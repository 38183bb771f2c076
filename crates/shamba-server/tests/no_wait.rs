//! Requests run on the connection's task until one would wait on the disk; that one and
//! the ones after it run on the blocking pool. Seen from a client: every reply right and
//! in order, whichever side ran it, and no request run twice.

use shamba_server::{Listener, ServerConfig, SyncMode};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn expect_bytes(s: &mut TcpStream, want: &[u8]) {
    let mut got = vec![0; want.len()];
    s.read_exact(&mut got).expect("reply");
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
}

/// A database whose keys `cold-0..cold-2000` are in a table on disk, none of its blocks
/// read since the server opened it.
fn database_on_disk(dir: &std::path::Path) {
    let db = shamba::Db::open(dir, shamba::Options::default()).expect("open");
    for i in 0..2000 {
        db.put(format!("cold-{i}"), format!("value-{i}")).expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
}

fn check(sync: SyncMode) {
    let dir = tempfile::tempdir().expect("tempdir");
    database_on_disk(&dir.path().join("db"));
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = sync;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));

    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    // Writes and memtable reads first, then a read of a block not cached (it and what
    // follows go to the pool), then more of both: each INCR counted once.
    c.write_all(
        b"INCR n\r\nSET a 1\r\nGET a\r\nGET cold-7\r\nINCR n\r\nGET cold-1999\r\nMGET a cold-8 cold-1500\r\nINCR n\r\n",
    )
    .expect("send");
    expect_bytes(
        &mut c,
        b":1\r\n+OK\r\n$1\r\n1\r\n$7\r\nvalue-7\r\n:2\r\n$10\r\nvalue-1999\r\n*3\r\n$1\r\n1\r\n$7\r\nvalue-8\r\n$10\r\nvalue-1500\r\n:3\r\n",
    );
    // The blocks read are cached now: the same reads answer the same.
    c.write_all(b"GET cold-7\r\nEXISTS cold-1999 nobody\r\nINCR n\r\n").expect("send");
    expect_bytes(&mut c, b"$7\r\nvalue-7\r\n:1\r\n:4\r\n");
    // A request that reads a cold block after writing: DEL counts what it deleted.
    c.write_all(b"DEL cold-1000 cold-1001 nobody\r\nGET cold-1000\r\n").expect("send");
    expect_bytes(&mut c, b":2\r\n$-1\r\n");

    // Runs of SETs, MSETs and GETs go together; a run that fails as a whole (a key over the
    // engine's limit) is answered request by request, as each would be alone.
    let long = "k".repeat(70 << 10);
    let mut pipeline = b"SET s1 a\r\nMSET s2 b s3 c\r\nSET s1 d\r\n".to_vec();
    pipeline.extend_from_slice(
        format!("*3\r\n$3\r\nSET\r\n${}\r\n{long}\r\n$1\r\nv\r\nSET s4 e\r\n", long.len()).as_bytes(),
    );
    pipeline.extend_from_slice(b"GET s1\r\nGET s2\r\nGET s3\r\nGET s4\r\nGET nobody\r\nGET cold-3\r\n");
    c.write_all(&pipeline).expect("send");
    expect_bytes(
        &mut c,
        b"+OK\r\n+OK\r\n+OK\r\n-ERR invalid argument: key of 71680 bytes exceeds max_key_size (65536)\r\n+OK\r\n",
    );
    expect_bytes(&mut c, b"$1\r\nd\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\ne\r\n$-1\r\n$7\r\nvalue-3\r\n");

    let _ = stop.send(());
    rt.block_on(serving).expect("join").expect("serve");
}

#[test]
fn replies_stay_right_and_in_order_when_some_requests_move_to_the_pool() {
    check(SyncMode::Everysec);
}

#[test]
fn with_every_write_synced_the_writes_move_to_the_pool_and_still_answer_in_order() {
    check(SyncMode::Always);
}

/// A server on the database in `dir`, serving until the sender is used.
fn serve_on(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), shamba_server::Error>>)
{
    let mut config = ServerConfig::new(dir.to_path_buf());
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    (addr, stop, serving)
}

#[test]
fn a_rank_range_over_a_sorted_set_not_in_memory_answers_its_members() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    // A sorted set of 3,000 members with scores 0..3000, written, flushed to a table and
    // the server stopped: the next server has none of its blocks in memory.
    let (addr, stop, serving) = serve_on(&rt, &db);
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    for chunk in 0..30 {
        let mut zadd = String::from("ZADD z");
        for i in chunk * 100..(chunk + 1) * 100 {
            zadd.push_str(&format!(" {i} m{i}"));
        }
        zadd.push_str("\r\n");
        c.write_all(zadd.as_bytes()).expect("send");
        expect_bytes(&mut c, b":100\r\n");
    }
    drop(c);
    let _ = stop.send(());
    rt.block_on(serving).expect("join").expect("serve");

    let (addr, stop, serving) = serve_on(&rt, &db);
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    // ZCARD alone reads the set's metadata (on the pool: it is not in memory either), so
    // the next request finds it in memory and only the set's members are cold.
    c.write_all(b"ZCARD z\r\n").expect("send");
    expect_bytes(&mut c, b":3000\r\n");
    // The walk to rank 2500 meets a block not in memory before it gets there: that
    // request moves to the pool and answers the member, never an empty range.
    c.write_all(b"ZRANGE z 2500 2500\r\n").expect("send");
    expect_bytes(&mut c, b"*1\r\n$5\r\nm2500\r\n");
    c.write_all(b"ZRANGE z 2998 -1 WITHSCORES\r\nZRANK z m2999\r\n").expect("send");
    expect_bytes(&mut c, b"*4\r\n$5\r\nm2998\r\n$4\r\n2998\r\n$5\r\nm2999\r\n$4\r\n2999\r\n:2999\r\n");
    let _ = stop.send(());
    rt.block_on(serving).expect("join").expect("serve");
}
