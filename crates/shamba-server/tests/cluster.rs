//! Three cluster-mode servers in one process, each with its own directory, Raft address
//! and Redis port, spoken to in raw RESP: writes through the leader and through a
//! follower (forwarded), reads from every node, the leader stopped and a new one elected
//! from the two left, writes going on through it. (`scripts/cluster-test.sh` does the same
//! with processes and SIGKILL.)

use shamba_server::{Cluster, ClusterConfig, Listener, ServerConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// One request (inline) to `addr` on a new connection, and its reply: `+OK` and `:2` as
/// they are, a bulk string's bytes, `(nil)`, or `-ERR …`.
fn call(addr: SocketAddr, line: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    s.write_all(format!("{line}\r\n").as_bytes()).expect("send");
    let mut r = BufReader::new(s);
    let mut head = String::new();
    r.read_line(&mut head).expect("reply");
    let head = head.trim_end().to_string();
    match head.strip_prefix('$') {
        Some("-1") => "(nil)".into(),
        Some(n) => {
            let mut body = vec![0; n.parse::<usize>().expect("length") + 2];
            r.read_exact(&mut body).expect("bulk");
            body.truncate(body.len() - 2);
            String::from_utf8(body).expect("text")
        }
        None => head,
    }
}

struct Node {
    redis: SocketAddr,
    cluster: Arc<Cluster>,
    server: Arc<shamba_server::Server>,
    stop: Option<oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<Result<(), shamba_server::Error>>>,
}

impl Node {
    fn stop(mut self, rt: &tokio::runtime::Runtime) {
        let _ = self.stop.take().expect("serving").send(());
        rt.block_on(self.serving.take().expect("serving")).expect("task").expect("clean stop");
    }
}

fn start(rt: &tokio::runtime::Runtime, dir: &std::path::Path, id: u64) -> Node {
    start_with(rt, dir, id, "127.0.0.1:0".parse().expect("address"), |_| {})
}

fn start_with(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    id: u64,
    raft_bind: SocketAddr,
    tune: impl FnOnce(&mut ClusterConfig),
) -> Node {
    let mut config = ServerConfig::new(dir.join(format!("n{id}")));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.databases = 2;
    let mut cc = ClusterConfig::new(id, raft_bind);
    cc.heartbeat_ms = 50;
    tune(&mut cc);
    config.cluster = Some(cc);
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let server = listener.server().clone();
    let cluster = server.store().cluster().expect("cluster mode").clone();
    let redis = listener.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    Node { redis, cluster, server, stop: Some(stop), serving: Some(serving) }
}

/// The node all of `nodes` agree leads, once it says so.
fn wait_leader(nodes: &[&Node]) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen: Vec<Option<u64>> = nodes.iter().map(|n| n.cluster.leader().map(|l| l.0)).collect();
        if let Some(Some(l)) = seen.first() {
            if seen.iter().all(|s| *s == Some(*l))
                && nodes.iter().any(|n| n.cluster.id() == *l && n.cluster.is_leader())
            {
                return *l;
            }
        }
        assert!(Instant::now() < deadline, "no leader agreed on: {seen:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn three_nodes_replicate_forward_and_fail_over() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().expect("runtime");
    let mut nodes: Vec<Node> = (1..=3).map(|id| start(&rt, dir.path(), id)).collect();
    let members: Vec<(u64, String)> =
        nodes.iter().map(|n| (n.cluster.id(), n.cluster.raft_addr().to_string())).collect();
    rt.block_on(nodes[0].cluster.initialize(&members)).expect("initialize");

    let leader = wait_leader(&nodes.iter().collect::<Vec<_>>());
    let at = |id: u64| nodes.iter().position(|n| n.cluster.id() == id).expect("node");
    let follower = nodes.iter().find(|n| n.cluster.id() != leader).expect("a follower").redis;
    let leader_addr = nodes[at(leader)].redis;

    assert_eq!(call(leader_addr, "SET a 1"), "+OK");
    assert_eq!(call(follower, "SET b 2"), "+OK", "a follower forwards a write");
    assert_eq!(call(follower, "INCR a"), ":2", "and a read-modify-write");
    assert_eq!(call(follower, "SET a 9 NX"), "(nil)");
    // Expiry and MULTI/WATCH are refused in cluster mode, naming it; TTL reads -1.
    let no_expiry = "-ERR expiry is not supported in cluster mode";
    assert!(call(follower, "SET e v EX 10").starts_with(no_expiry));
    assert!(call(leader_addr, "EXPIRE a 10").starts_with(no_expiry));
    assert!(call(follower, "SETEX e 10 v").starts_with(no_expiry));
    assert_eq!(call(follower, "GET e"), "(nil)", "nothing was written");
    assert_eq!(call(follower, "TTL a"), ":-1");
    assert_eq!(call(follower, "MULTI"), "-ERR MULTI is not supported in cluster mode");
    assert_eq!(call(leader_addr, "WATCH a"), "-ERR WATCH is not supported in cluster mode");
    assert_eq!(call(leader_addr, "DEL b nope"), ":1");
    for n in &nodes {
        assert_eq!(call(n.redis, "GET a"), "2", "every node reads the last write");
        assert_eq!(call(n.redis, "GET b"), "(nil)");
    }
    let info = call(follower, "CLUSTER INFO");
    assert!(info.contains(&format!("leader_id:{leader}")), "{info}");
    assert!(call(follower, "CLUSTER NOPE").starts_with("-ERR unknown subcommand"));
    // Membership changes run on the leader, and are checked there.
    assert!(call(follower, "CLUSTER PROMOTE 9").starts_with("-ERR cluster:"), "no learner 9 to promote");

    // The leader stops; the two left elect one of them and take writes through either.
    let mut old = nodes.remove(at(leader));
    let _ = old.stop.take().expect("serving").send(());
    rt.block_on(old.serving.take().expect("serving")).expect("task").expect("clean stop");
    let new_leader = wait_leader(&nodes.iter().collect::<Vec<_>>());
    assert_ne!(new_leader, leader);
    for n in &nodes {
        assert_eq!(call(n.redis, "INCR a"), if n.cluster.id() == nodes[0].cluster.id() { ":3" } else { ":4" });
    }
    for n in &nodes {
        assert_eq!(call(n.redis, "GET a"), "4");
    }

    // Membership, with the old leader still down: node 4 joins as a learner (it catches up
    // first), becomes a voter, and the stopped node is removed; all asked of a follower.
    nodes.push(start(&rt, dir.path(), 4));
    let via = nodes.iter().find(|n| n.cluster.id() != new_leader).expect("a follower").redis;
    let four = nodes[2].cluster.raft_addr();
    assert_eq!(call(via, &format!("CLUSTER ADDNODE 4 {four}")), "+OK");
    assert_eq!(call(nodes[2].redis, "GET a"), "4", "the learner has the data");
    assert_eq!(call(via, "CLUSTER PROMOTE 4"), "+OK");
    assert_eq!(call(via, &format!("CLUSTER REMOVE {leader}")), "+OK");
    // The removal is committed once a majority has it, which need not include node 4:
    // node 4's CLUSTER INFO (its own view) shows it once the leader's next append reaches it.
    let new_voters = |info: &str| {
        let voters = info.lines().find_map(|l| l.strip_prefix("voters:")).expect("voters");
        voters.split(',').count() == 3 && voters.contains("4@") && !voters.contains(&format!("{leader}@"))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = call(nodes[2].redis, "CLUSTER INFO");
        if new_voters(&info) {
            break;
        }
        assert!(Instant::now() < deadline, "node 4 never saw the new voters: {info}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(call(nodes[2].redis, "SET c 3"), "+OK");
    for n in &nodes {
        assert_eq!(call(n.redis, "GET c"), "3");
    }
    for mut n in nodes {
        let _ = n.stop.take().expect("serving").send(());
        rt.block_on(n.serving.take().expect("serving")).expect("task").expect("clean stop");
    }
}

#[test]
fn a_node_without_a_leader_refuses_reads_and_writes_with_tryagain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    // Never initialized, never added: no group, no leader.
    let mut lone = start(&rt, dir.path(), 7);
    assert_eq!(call(lone.redis, "PING"), "+PONG", "connection commands answer here");
    assert!(call(lone.redis, "CLUSTER INFO").contains("leader_id:none"));
    for request in ["SET k v", "GET k", "INCR n", "DBSIZE"] {
        let reply = call(lone.redis, request);
        assert!(reply.starts_with("-TRYAGAIN no leader"), "{request}: {reply}");
    }
    let _ = lone.stop.take().expect("serving").send(());
    rt.block_on(lone.serving.take().expect("serving")).expect("task").expect("clean stop");
}

#[test]
fn a_node_far_behind_catches_up_by_a_snapshot_sent_in_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().expect("runtime");
    // A snapshot every 20 entries, no log kept behind it, 1 KiB per snapshot RPC.
    let tune = |c: &mut ClusterConfig| {
        c.snapshot_after = 20;
        c.logs_kept = 0;
        c.snapshot_chunk = 1024;
    };
    let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let mut nodes: Vec<Node> = (1..=3).map(|id| start_with(&rt, dir.path(), id, any, tune)).collect();
    let members: Vec<(u64, String)> =
        nodes.iter().map(|n| (n.cluster.id(), n.cluster.raft_addr().to_string())).collect();
    rt.block_on(nodes[0].cluster.initialize(&members)).expect("initialize");
    let leader = wait_leader(&nodes.iter().collect::<Vec<_>>());
    let lagging = nodes.iter().position(|n| n.cluster.id() != leader).expect("a follower");
    let mut leader_addr = nodes.iter().find(|n| n.cluster.id() == leader).expect("leader").redis;
    assert_eq!(call(leader_addr, "SET before down"), "+OK");

    // One follower stops; 200 writes go on, one entry each (one client, one at a time).
    let down = nodes.remove(lagging);
    let (down_id, down_addr) = (down.cluster.id(), down.cluster.raft_addr());
    let down_last = down.cluster.raft().metrics().borrow().last_log_index.expect("a log");
    down.stop(&rt);
    let filler = "x".repeat(100);
    let mut leader = leader;
    for i in 0..200 {
        let line = format!("SET key{i} {filler}{i}");
        loop {
            let got = call(leader_addr, &line);
            if got == "+OK" {
                break;
            }
            // On a loaded machine a late heartbeat can start an election between the two
            // nodes left: the write is refused with TRYAGAIN and sent again to the leader
            // they agree on (a SET may be applied twice).
            assert!(got.starts_with("-TRYAGAIN"), "{line}: {got}");
            leader = wait_leader(&nodes.iter().collect::<Vec<_>>());
            leader_addr = nodes.iter().find(|n| n.cluster.id() == leader).expect("leader").redis;
        }
    }
    let lead = nodes.iter().find(|n| n.cluster.id() == leader).expect("leader");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let purged = lead.cluster.raft().metrics().borrow().purged.map(|p| p.index);
        if purged.is_some_and(|p| p > down_last) {
            break;
        }
        assert!(Instant::now() < deadline, "the leader never purged past the stopped node's log: {purged:?}");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Restarted from its directory, it gets the snapshot (its next entries are gone).
    let back = start_with(&rt, dir.path(), down_id, down_addr, tune);
    let want = lead.cluster.raft().metrics().borrow().last_applied.map(|l| l.index);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = back.cluster.raft().metrics().borrow().clone();
        if m.last_applied.map(|l| l.index) >= want && m.snapshot.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no catch-up: {m:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its own database has every key (read here, not through the leader).
    let db = back.server.store().select(0).expect("database 0").expect("keyspace");
    assert_eq!(db.get(b"before").expect("get").as_deref(), Some(&b"down"[..]));
    for i in [0, 99, 199] {
        assert_eq!(db.get(format!("key{i}").as_bytes()).expect("get"), Some(format!("{filler}{i}").into_bytes()));
    }
    back.stop(&rt);
    for n in nodes {
        n.stop(&rt);
    }
}
