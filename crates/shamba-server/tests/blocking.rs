//! The blocking pops: answered at once when there is something to pop, served by a later
//! push from another client, timed out with nil, never blocking inside a transaction, and
//! a blocked client over TCP leaves the others served.

use shamba_server::{Listener, Reply, Server, ServerConfig, Session, SyncMode};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(dir: &std::path::Path) -> ServerConfig {
    let mut config = ServerConfig::new(dir.join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    config.databases = 2;
    config
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn run(server: &Server, s: &mut Session, line: &str) -> Reply {
    let words: Vec<Vec<u8>> = line.split(' ').map(|w| w.as_bytes().to_vec()).collect();
    server.execute(s, &words)
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

/// A server listening on an ephemeral port until [`Serving::stop`].
struct Serving {
    addr: std::net::SocketAddr,
    server: Arc<Server>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), shamba_server::Error>>,
}

impl Serving {
    fn start(rt: &tokio::runtime::Runtime, dir: &std::path::Path) -> Serving {
        let listener = rt.block_on(Listener::bind(&config(dir))).expect("bind");
        let (addr, server) = (listener.local_addr(), listener.server().clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = rt.spawn(listener.serve(async {
            let _ = stopped.await;
        }));
        Serving { addr, server, stop, task }
    }

    /// Stop it and check it stopped cleanly.
    fn stop(self, rt: &tokio::runtime::Runtime) {
        self.stop.send(()).expect("serving");
        rt.block_on(self.task).expect("task").expect("clean stop");
    }
}

/// Run `line` for a new session on another thread; its reply and how long it took.
fn in_background(srv: &Arc<Server>, line: &'static str) -> std::thread::JoinHandle<(Reply, Duration)> {
    let srv = srv.clone();
    std::thread::spawn(move || {
        let started = Instant::now();
        let r = run(&srv, &mut Session::new(9), line);
        (r, started.elapsed())
    })
}

#[test]
fn a_blocked_pop_is_served_by_a_later_push_or_times_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = rt.block_on(Listener::bind(&config(dir.path()))).expect("bind").server().clone();
    let s = &mut Session::new(1);

    assert_eq!(run(&srv, s, "RPUSH l a"), Reply::Int(1));
    assert_eq!(run(&srv, s, "BLPOP nope l 0"), Reply::Array(vec![bulk("l"), bulk("a")]), "at once when there is one");

    let waiting = in_background(&srv, "BRPOP l 10");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(run(&srv, s, "LPUSH l b c"), Reply::Int(2));
    let (r, took) = waiting.join().expect("thread");
    assert_eq!(r, Reply::Array(vec![bulk("l"), bulk("b")]));
    assert!(took < Duration::from_secs(5), "served by the push, not the timeout: {took:?}");
    assert_eq!(run(&srv, s, "LRANGE l 0 -1"), Reply::Array(vec![bulk("c")]));

    let started = Instant::now();
    assert_eq!(run(&srv, s, "BLPOP empty 0.2"), Reply::NullArray, "a null array, as Redis answers a timeout");
    assert!(started.elapsed() >= Duration::from_millis(200));

    let waiting = in_background(&srv, "BZPOPMIN z 10");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(run(&srv, s, "ZADD z 2 two 1 one"), Reply::Int(2));
    assert_eq!(waiting.join().expect("thread").0, Reply::Array(vec![bulk("z"), bulk("one"), Reply::Double(1.0)]));

    let waiting = in_background(&srv, "BLMOVE src dst RIGHT LEFT 10");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(run(&srv, s, "RPUSH src x y"), Reply::Int(2));
    assert_eq!(waiting.join().expect("thread").0, bulk("y"));
    assert_eq!(run(&srv, s, "LRANGE dst 0 -1"), Reply::Array(vec![bulk("y")]));

    assert_eq!(run(&srv, s, "SET str v"), Reply::OK);
    assert!(matches!(run(&srv, s, "BLPOP str 0"), Reply::Error(e) if e.starts_with("WRONGTYPE")));
    assert_eq!(run(&srv, s, "BLPOP l -1"), Reply::err("timeout is negative"));
}

#[test]
fn inside_a_transaction_a_blocking_pop_never_waits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = rt.block_on(Listener::bind(&config(dir.path()))).expect("bind").server().clone();
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "MULTI"), Reply::OK);
    assert_eq!(run(&srv, s, "BLPOP l 0"), Reply::Simple("QUEUED"));
    let started = Instant::now();
    assert_eq!(run(&srv, s, "EXEC"), Reply::Array(vec![Reply::NullArray]));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_client_blocked_over_tcp_leaves_the_others_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let serving = Serving::start(&rt, dir.path());
    let addr = serving.addr;
    let connect = || {
        let c = TcpStream::connect(addr).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        c
    };
    // More blocked clients than the runtime has workers.
    let mut blocked: Vec<TcpStream> = (0..4).map(|_| connect()).collect();
    for c in &mut blocked {
        c.write_all(b"BLPOP q 30\r\n").expect("send");
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut other = connect();
    other.write_all(b"PING\r\nRPUSH q 1 2 3 4\r\n").expect("send");
    let mut got = [0u8; 11];
    other.read_exact(&mut got).expect("reply");
    assert_eq!(&got, b"+PONG\r\n:4\r\n");
    let mut popped = Vec::new();
    for c in &mut blocked {
        let mut reply = [0u8; 18];
        c.read_exact(&mut reply).expect("reply");
        assert!(reply.starts_with(b"*2\r\n$1\r\nq\r\n$1\r\n"), "{}", String::from_utf8_lossy(&reply));
        popped.push(reply[15]);
    }
    popped.sort_unstable();
    assert_eq!(popped, b"1234");

    // A client blocked forever does not hold up the server's stop.
    let mut forever = connect();
    forever.write_all(b"BLPOP never 0\r\n").expect("send");
    std::thread::sleep(Duration::from_millis(100));
    serving.stop(&rt);
}

#[test]
fn a_client_that_leaves_while_blocked_pops_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let serving = Serving::start(&rt, dir.path());
    let (addr, srv) = (serving.addr, serving.server.clone());
    let mut leaving = TcpStream::connect(addr).expect("connect");
    leaving.write_all(b"BLPOP jobs 0\r\n").expect("send");
    std::thread::sleep(Duration::from_millis(300));
    drop(leaving);
    // The connection notices the close and its wait ends (it retries every 100 ms).
    std::thread::sleep(Duration::from_millis(1000));
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "RPUSH jobs one"), Reply::Int(1));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        run(&srv, s, "LRANGE jobs 0 -1"),
        Reply::Array(vec![bulk("one")]),
        "the job waits for a client that is there"
    );
    serving.stop(&rt);
}

#[test]
fn a_request_sent_while_another_waits_is_answered_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let serving = Serving::start(&rt, dir.path());
    let addr = serving.addr;
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    // The pop waits on the pool; the PING arrives meanwhile and nothing follows it.
    c.write_all(b"BLPOP none 0.5\r\n").expect("send");
    std::thread::sleep(Duration::from_millis(100));
    c.write_all(b"PING\r\n").expect("send");
    let want = b"*-1\r\n+PONG\r\n";
    let mut got = vec![0u8; want.len()];
    c.read_exact(&mut got).expect("both replies, without another request to wake the connection");
    assert_eq!(&got, want);
    serving.stop(&rt);
}
