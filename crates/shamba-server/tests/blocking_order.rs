//! Blocked clients served as Redis serves them: in the order they blocked, by the first of
//! their keys that gets data, after a whole EXEC, through chains of BLMOVE, ended by
//! CLIENT UNBLOCK or a closed connection; and under many concurrent blockers and pushers,
//! every pushed element popped exactly once.

use shamba_server::{Listener, Reply, Server, ServerConfig, Session, SyncMode};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn config(dir: &std::path::Path) -> ServerConfig {
    let mut config = ServerConfig::new(dir.join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    config
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

fn server(rt: &tokio::runtime::Runtime, dir: &std::path::Path) -> Arc<Server> {
    rt.block_on(Listener::bind(&config(dir))).expect("bind").server().clone()
}

fn run(server: &Server, s: &mut Session, line: &str) -> Reply {
    let words: Vec<Vec<u8>> = line.split(' ').map(|w| w.as_bytes().to_vec()).collect();
    server.execute(s, &words)
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn pair(key: &str, element: &str) -> Reply {
    Reply::Array(vec![bulk(key), bulk(element)])
}

/// INFO's `blocked_clients`.
fn blocked(srv: &Server) -> usize {
    let text = match run(srv, &mut Session::new(1000), "INFO clients") {
        Reply::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Reply::Text(t) => t,
        other => panic!("INFO answered {other:?}"),
    };
    text.lines().find_map(|l| l.strip_prefix("blocked_clients:")).and_then(|n| n.trim().parse().ok()).expect("field")
}

/// Wait until `n` clients are blocked.
fn until_blocked(srv: &Server, n: usize) {
    let started = Instant::now();
    while blocked(srv) != n {
        assert!(started.elapsed() < Duration::from_secs(10), "{n} clients never blocked");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Block client `id` in `line` on another thread, once the clients before it are blocked.
fn block(srv: &Arc<Server>, id: u64, line: &str) -> JoinHandle<Reply> {
    let before = blocked(srv);
    let (srv2, line) = (srv.clone(), line.to_string());
    let h = std::thread::spawn(move || run(&srv2, &mut Session::new(id), &line));
    until_blocked(srv, before + 1);
    h
}

fn answer(h: JoinHandle<Reply>) -> Reply {
    h.join().expect("client thread")
}

#[test]
fn three_clients_on_one_key_are_served_in_the_order_they_blocked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let s = &mut Session::new(1);
    let first = block(&srv, 11, "BLPOP l 0");
    let second = block(&srv, 12, "BRPOP l 0");
    let third = block(&srv, 13, "BLPOP l 0");
    assert_eq!(run(&srv, s, "RPUSH l a b"), Reply::Int(2));
    // Both served before the push's reply: nothing is left for anyone else.
    assert_eq!(run(&srv, s, "LLEN l"), Reply::Int(0));
    assert_eq!(answer(first), pair("l", "a"));
    assert_eq!(answer(second), pair("l", "b"));
    until_blocked(&srv, 1);
    assert_eq!(run(&srv, s, "RPUSH l c"), Reply::Int(1));
    assert_eq!(answer(third), pair("l", "c"));

    // Sorted sets the same way.
    let first = block(&srv, 14, "BZPOPMIN z 0");
    let second = block(&srv, 15, "BZPOPMAX z 0");
    assert_eq!(run(&srv, s, "ZADD z 1 one 2 two 3 three"), Reply::Int(3));
    assert_eq!(answer(first), Reply::Array(vec![bulk("z"), bulk("one"), Reply::Double(1.0)]));
    assert_eq!(answer(second), Reply::Array(vec![bulk("z"), bulk("three"), Reply::Double(3.0)]));
    assert_eq!(run(&srv, s, "ZCARD z"), Reply::Int(1));
}

#[test]
fn a_client_blocked_on_several_keys_is_served_by_the_first_that_gets_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let s = &mut Session::new(1);
    let both = block(&srv, 11, "BLPOP k1 k2 k2 k1 0");
    let only_k2 = block(&srv, 12, "BLPOP k2 0");
    assert_eq!(run(&srv, s, "RPUSH k2 x"), Reply::Int(1));
    assert_eq!(answer(both), pair("k2", "x"), "blocked first");
    assert_eq!(blocked(&srv), 1, "the first left every queue, the second waits");
    assert_eq!(run(&srv, s, "RPUSH k1 y"), Reply::Int(1));
    assert_eq!(run(&srv, s, "LRANGE k1 0 -1"), Reply::Array(vec![bulk("y")]), "nobody waits on k1 now");
    assert_eq!(run(&srv, s, "RPUSH k2 z"), Reply::Int(1));
    assert_eq!(answer(only_k2), pair("k2", "z"));
}

#[test]
fn a_blmove_chain_is_served_before_the_push_is_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let s = &mut Session::new(1);
    let one = block(&srv, 11, "BLMOVE l1 l2 RIGHT LEFT 0");
    let two = block(&srv, 12, "BRPOPLPUSH l2 l3 0");
    let three = block(&srv, 13, "BLPOP l3 0");
    assert_eq!(run(&srv, s, "RPUSH l1 foo"), Reply::Int(1));
    assert_eq!(run(&srv, s, "EXISTS l1 l2 l3"), Reply::Int(0), "moved along the chain and popped");
    assert_eq!(answer(one), bulk("foo"));
    assert_eq!(answer(two), bulk("foo"));
    assert_eq!(answer(three), pair("l3", "foo"));

    // A destination of another type: the first client gets WRONGTYPE, the element stays
    // and goes to the next client.
    assert_eq!(run(&srv, s, "SET t1 nolist"), Reply::OK);
    let wrong = block(&srv, 14, "BRPOPLPUSH src t1 0");
    let right = block(&srv, 15, "BRPOPLPUSH src t2 0");
    assert_eq!(run(&srv, s, "LPUSH src foo"), Reply::Int(1));
    assert!(matches!(answer(wrong), Reply::Error(e) if e.starts_with("WRONGTYPE")));
    assert_eq!(answer(right), bulk("foo"));
    assert_eq!(run(&srv, s, "LRANGE t2 0 -1"), Reply::Array(vec![bulk("foo")]));
}

#[test]
fn pushes_inside_exec_wake_the_client_after_the_exec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let s = &mut Session::new(1);
    let waiting = block(&srv, 11, "BLPOP l 0");
    for line in ["MULTI", "LPUSH l a", "LPUSH l b", "LPUSH l c"] {
        run(&srv, s, line);
    }
    assert_eq!(run(&srv, s, "EXEC"), Reply::Array(vec![Reply::Int(1), Reply::Int(2), Reply::Int(3)]));
    assert_eq!(answer(waiting), pair("l", "c"), "served once the whole EXEC ran");

    // A push deleted in the same EXEC wakes nobody.
    let waiting = block(&srv, 12, "BLPOP l2 0");
    for line in ["MULTI", "LPUSH l2 a", "DEL l2", "EXEC"] {
        run(&srv, s, line);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(blocked(&srv), 1);
    assert_eq!(run(&srv, s, "LPUSH l2 b"), Reply::Int(1));
    assert_eq!(answer(waiting), pair("l2", "b"));
}

#[test]
fn client_unblock_ends_a_wait_as_a_timeout_or_with_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let s = &mut Session::new(1);
    let waiting = block(&srv, 11, "BLPOP l 0");
    let after = block(&srv, 12, "BLPOP l 0");
    assert_eq!(run(&srv, s, "CLIENT UNBLOCK 11"), Reply::Int(1));
    assert_eq!(answer(waiting), Reply::NullArray);
    assert_eq!(run(&srv, s, "CLIENT UNBLOCK 11"), Reply::Int(0), "not blocked any more");
    assert_eq!(run(&srv, s, "CLIENT UNBLOCK 12 ERROR"), Reply::Int(1));
    assert_eq!(answer(after), Reply::Error("UNBLOCKED client unblocked via CLIENT UNBLOCK".into()));
    assert_eq!(run(&srv, s, "CLIENT UNBLOCK 12 NOW"), Reply::err("CLIENT UNBLOCK reason should be TIMEOUT or ERROR"));
    assert_eq!(blocked(&srv), 0);
    assert_eq!(run(&srv, s, "RPUSH l a"), Reply::Int(1));
    assert_eq!(run(&srv, s, "LLEN l"), Reply::Int(1), "nobody took it");
}

#[test]
fn a_client_that_disconnects_while_blocked_leaves_the_queue() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let listener = rt.block_on(Listener::bind(&config(dir.path()))).expect("bind");
    let (addr, srv) = (listener.local_addr(), listener.server().clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    let connect = || {
        let c = TcpStream::connect(addr).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        c
    };
    let mut leaving = connect();
    leaving.write_all(b"BLPOP jobs 0\r\n").expect("send");
    until_blocked(&srv, 1);
    let mut staying = connect();
    staying.write_all(b"BLPOP jobs 0\r\n").expect("send");
    until_blocked(&srv, 2);
    drop(leaving);
    until_blocked(&srv, 1);
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "RPUSH jobs one"), Reply::Int(1));
    let want = b"*2\r\n$4\r\njobs\r\n$3\r\none\r\n";
    let mut got = vec![0u8; want.len()];
    staying.read_exact(&mut got).expect("served");
    assert_eq!(&got, want);
    assert_eq!(run(&srv, s, "LLEN jobs"), Reply::Int(0));
    stop.send(()).expect("serving");
    rt.block_on(task).expect("task").expect("clean stop");
}

/// Many blockers and pushers at once: every element pushed is popped exactly once, and
/// each client sees each pusher's elements in the order they were pushed (RPUSH, BLPOP).
#[test]
fn every_pushed_element_is_popped_exactly_once() {
    const PUSHERS: usize = 4;
    const PER_PUSHER: usize = 200;
    const BLOCKERS: usize = 6;
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let srv = server(&rt, dir.path());
    let total = PUSHERS * PER_PUSHER;
    let popped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let blockers: Vec<JoinHandle<Vec<(usize, usize)>>> = (0..BLOCKERS)
        .map(|b| {
            let (srv, popped) = (srv.clone(), popped.clone());
            std::thread::spawn(move || {
                let s = &mut Session::new(100 + b as u64);
                let mut got = Vec::new();
                while popped.load(std::sync::atomic::Ordering::SeqCst) < total {
                    let line = if b % 2 == 0 { "BLPOP q1 q2 0.2" } else { "BLPOP q2 q1 0.2" };
                    match run(&srv, s, line) {
                        Reply::NullArray => {}
                        Reply::Array(a) => {
                            let Some(Reply::Bulk(e)) = a.get(1) else { panic!("{a:?}") };
                            let e = String::from_utf8_lossy(e).into_owned();
                            let (p, i) = e.split_once(':').expect("pusher:index");
                            got.push((p.parse().expect("pusher"), i.parse().expect("index")));
                            popped.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        other => panic!("{other:?}"),
                    }
                }
                got
            })
        })
        .collect();
    let pushers: Vec<JoinHandle<()>> = (0..PUSHERS)
        .map(|p| {
            let srv = srv.clone();
            std::thread::spawn(move || {
                let s = &mut Session::new(200 + p as u64);
                let key = if p % 2 == 0 { "q1" } else { "q2" };
                for i in 0..PER_PUSHER {
                    assert!(matches!(run(&srv, s, &format!("RPUSH {key} {p}:{i}")), Reply::Int(_)));
                }
            })
        })
        .collect();
    for p in pushers {
        p.join().expect("pusher");
    }
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for b in blockers {
        let got = b.join().expect("blocker");
        let mut last: HashMap<usize, usize> = HashMap::new();
        for &(p, i) in &got {
            if let Some(&before) = last.get(&p) {
                assert!(i > before, "pusher {p}'s {i} after {before}");
            }
            last.insert(p, i);
            *seen.entry((p, i)).or_default() += 1;
        }
    }
    assert_eq!(seen.len(), total, "every element popped");
    assert!(seen.values().all(|&n| n == 1), "none twice");
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "EXISTS q1 q2"), Reply::Int(0));
}

/// Two clients block on one key; the first one's blocking command was read first but
/// takes long to get to its first try (a slow command before it, on the connection or
/// inside an EXEC): it is still served first, as on Redis's one thread.
#[test]
fn the_blocking_command_read_first_is_served_first_however_late_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime();
    let mut cfg = config(dir.path());
    cfg.enable_debug_command = true;
    let listener = rt.block_on(Listener::bind(&cfg)).expect("bind");
    let (addr, srv) = (listener.local_addr(), listener.server().clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    let connect = || {
        let c = TcpStream::connect(addr).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        c
    };
    let s = &mut Session::new(1);
    let slow_first = [
        ("DEBUG SLEEP 1\r\nBRPOPLPUSH src first 0\r\n", "+OK\r\n$1\r\nx\r\n"),
        ("MULTI\r\nDEBUG SLEEP 1\r\nEXEC\r\nBRPOPLPUSH src first 0\r\n", "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n$1\r\nx\r\n"),
    ];
    for (request, reply) in slow_first {
        let mut first = connect();
        let mut second = connect();
        first.write_all(request.as_bytes()).expect("send");
        // Read by the server well before the second client's command, which then waits.
        std::thread::sleep(Duration::from_millis(300));
        second.write_all(b"BRPOPLPUSH src second 0\r\n").expect("send");
        until_blocked(&srv, 2);
        assert_eq!(run(&srv, s, "RPUSH src x"), Reply::Int(1));
        let mut got = vec![0u8; reply.len()];
        first.read_exact(&mut got).expect("the first client is served");
        assert_eq!(String::from_utf8_lossy(&got), reply, "{request:?}");
        assert_eq!(run(&srv, s, "LLEN first"), Reply::Int(1));
        assert_eq!(run(&srv, s, "LLEN second"), Reply::Int(0));
        assert_eq!(run(&srv, s, "RPUSH src y"), Reply::Int(1));
        let mut got = vec![0u8; 7];
        second.read_exact(&mut got).expect("then the second");
        assert_eq!(&got, b"$1\r\ny\r\n");
        assert_eq!(run(&srv, s, "DEL first second"), Reply::Int(2));
    }
    stop.send(()).expect("serving");
    rt.block_on(task).expect("task").expect("clean stop");
}
