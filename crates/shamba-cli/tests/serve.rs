//! `shamba serve` end to end: the binary on a free loopback port, spoken to in raw RESP
//! over a `TcpStream`, so these run with no client library and no Redis installed.
//! (`scripts/redis-tests.sh` drives the same server with Redis's own tools.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `shamba serve`; killed if a test ends without stopping it.
struct Server {
    child: Option<Child>,
    addr: String,
}

impl Server {
    fn start(db: &Path, sync: &str) -> Server {
        Server::start_with(db, &["--sync", sync])
    }

    fn start_with(db: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shamba"))
            .args(["serve", "--db", db.to_str().expect("utf8"), "--bind", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start shamba serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read banner");
        let addr = line.split("listening on ").nth(1).and_then(|s| s.split(' ').next()).expect(&line).to_string();
        Server { child: Some(child), addr }
    }

    fn connect(&self) -> Client {
        let s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        Client { r: BufReader::new(s.try_clone().expect("clone")), w: s }
    }

    /// SIGTERM, then the exit status and what the server printed on stderr.
    fn stop(mut self) -> (bool, String) {
        let mut child = self.child.take().expect("running");
        let ok = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill").success();
        assert!(ok);
        let status = child.wait().expect("wait");
        let mut err = String::new();
        child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
        (status.success(), err)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A decoded reply.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Simple(String),
    Err(String),
    Int(i64),
    Bulk(Vec<u8>),
    Null,
    Array(Vec<V>),
    Map(Vec<(V, V)>),
    Verbatim(String),
}

fn b(s: &str) -> V {
    V::Bulk(s.as_bytes().to_vec())
}

fn ok() -> V {
    V::Simple("OK".into())
}

struct Client {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl Client {
    fn send_raw(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).expect("send");
    }

    /// Send one command (words split on spaces) and read its reply.
    fn cmd(&mut self, line: &str) -> V {
        let words: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        self.call(&words)
    }

    fn call(&mut self, args: &[&[u8]]) -> V {
        self.send_raw(&encode(args));
        self.read()
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).expect("read line");
        assert!(l.ends_with("\r\n"), "line {l:?}");
        l.truncate(l.len() - 2);
        l
    }

    fn read(&mut self) -> V {
        let l = self.line();
        let (t, rest) = l.split_at(1);
        match t {
            "+" => V::Simple(rest.into()),
            "-" => V::Err(rest.into()),
            ":" => V::Int(rest.parse().expect("int")),
            "_" => V::Null,
            "$" | "=" => {
                let n: i64 = rest.parse().expect("len");
                if n < 0 {
                    return V::Null;
                }
                let mut buf = vec![0; n as usize + 2];
                self.r.read_exact(&mut buf).expect("bulk");
                buf.truncate(n as usize);
                if t == "=" {
                    V::Verbatim(String::from_utf8(buf).expect("utf8"))
                } else {
                    V::Bulk(buf)
                }
            }
            "*" => V::Array((0..rest.parse::<usize>().expect("n")).map(|_| self.read()).collect()),
            "%" => V::Map((0..rest.parse::<usize>().expect("n")).map(|_| (self.read(), self.read())).collect()),
            _ => panic!("unexpected reply line {l:?}"),
        }
    }

    /// Whether the server closed the connection (after any replies already read).
    fn closed(&mut self) -> bool {
        let mut rest = Vec::new();
        matches!(self.r.read_to_end(&mut rest), Ok(0))
    }
}

fn err_starts(v: &V, prefix: &str) -> bool {
    matches!(v, V::Err(e) if e.starts_with(prefix))
}

fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("db"), "never");
    (dir, server)
}

#[test]
fn string_commands() {
    let (_dir, s) = start();
    let mut c = s.connect();
    assert_eq!(c.cmd("PING"), V::Simple("PONG".into()));
    assert_eq!(c.cmd("ping hi"), b("hi"));
    assert_eq!(c.cmd("ECHO hello"), b("hello"));
    assert_eq!(c.cmd("GET k"), V::Null);
    assert_eq!(c.cmd("SET k v1"), ok());
    assert_eq!(c.cmd("GET k"), b("v1"));
    assert_eq!(c.cmd("SET k v2 NX"), V::Null);
    assert_eq!(c.cmd("SET k v2 XX GET"), b("v1"));
    assert_eq!(c.cmd("SET fresh v XX"), V::Null);
    assert_eq!(c.cmd("SET fresh v NX GET"), V::Null);
    assert_eq!(c.cmd("GET fresh"), b("v"));
    assert_eq!(c.cmd("SET k v3 KEEPTTL"), ok());
    assert_eq!(c.cmd("SET k v NX XX"), V::Err("ERR syntax error".into()));
    assert_eq!(c.cmd("SET k soon EX 100"), ok());
    let ttl = c.cmd("TTL k");
    assert!(matches!(ttl, V::Int(t) if (1..=100).contains(&t)), "{ttl:?}");
    assert_eq!(c.cmd("SET k v3"), ok());
    assert_eq!(c.cmd("TTL k"), V::Int(-1), "a plain SET clears the deadline");
    assert_eq!(c.cmd("SET k never EX 0"), V::Err("ERR invalid expire time in 'set' command".into()));
    assert_eq!(c.cmd("GET k"), b("v3"), "a refused SET writes nothing");
    assert_eq!(c.cmd("GETSET k v4"), b("v3"));
    assert_eq!(c.cmd("GETSET nothing x"), V::Null);
    assert_eq!(c.cmd("MSET a 1 b 2 c 3"), ok());
    assert!(err_starts(&c.cmd("MSET a 1 b"), "ERR wrong number of arguments"));
    assert_eq!(c.cmd("MGET a nope c"), V::Array(vec![b("1"), V::Null, b("3")]));
    assert_eq!(c.cmd("INCR a"), V::Int(2));
    assert_eq!(c.cmd("INCRBY a 40"), V::Int(42));
    assert_eq!(c.cmd("DECR a"), V::Int(41));
    assert_eq!(c.cmd("DECRBY a 50"), V::Int(-9));
    assert_eq!(c.cmd("INCR counter"), V::Int(1));
    assert_eq!(c.cmd("GET a"), b("-9"));
    assert!(err_starts(&c.cmd("INCR k"), "ERR value is not an integer"));
    assert!(err_starts(&c.cmd("INCRBY a x"), "ERR value is not an integer"));
    assert_eq!(c.cmd("SET big 9223372036854775807"), ok());
    assert!(err_starts(&c.cmd("INCR big"), "ERR increment or decrement would overflow"));
    assert_eq!(c.cmd("APPEND log abc"), V::Int(3));
    assert_eq!(c.cmd("APPEND log de"), V::Int(5));
    assert_eq!(c.cmd("GET log"), b("abcde"));
    assert_eq!(c.cmd("STRLEN log"), V::Int(5));
    assert_eq!(c.cmd("STRLEN nope"), V::Int(0));
    assert_eq!(c.cmd("TYPE log"), V::Simple("string".into()));
    assert_eq!(c.cmd("TYPE nope"), V::Simple("none".into()));
    // Binary-safe keys and values.
    assert_eq!(c.call(&[b"SET", b"\0\r\n", b"\xff\x00"]), ok());
    assert_eq!(c.call(&[b"GET", b"\0\r\n"]), V::Bulk(vec![0xff, 0]));
}

#[test]
fn key_commands_scan_and_flushdb() {
    let (_dir, s) = start();
    let mut c = s.connect();
    for i in 0..50 {
        assert_eq!(c.cmd(&format!("SET user:{i:02} x")), ok());
    }
    for k in ["video:1", "video:2", "other"] {
        assert_eq!(c.cmd(&format!("SET {k} y")), ok());
    }
    assert_eq!(c.cmd("DBSIZE"), V::Int(53));
    assert_eq!(c.cmd("EXISTS user:01 user:01 nope"), V::Int(2));
    assert_eq!(c.cmd("KEYS video:*"), V::Array(vec![b("video:1"), b("video:2")]));
    assert_eq!(
        c.cmd("KEYS user:?5"),
        V::Array(vec![b("user:05"), b("user:15"), b("user:25"), b("user:35"), b("user:45")])
    );
    assert_eq!(c.cmd("KEYS *th[a-f]r"), V::Array(vec![b("other")]));

    // A full SCAN returns every key exactly once, whatever COUNT, and ends on cursor 0.
    for (count, pattern) in [(1, None), (7, None), (1000, None), (3, Some("user:*")), (4, Some("*:1*"))] {
        let mut cursor = "0".to_string();
        let mut seen = Vec::new();
        loop {
            let mut cmd = format!("SCAN {cursor} COUNT {count}");
            if let Some(p) = pattern {
                cmd.push_str(&format!(" MATCH {p}"));
            }
            let V::Array(parts) = c.cmd(&cmd) else { panic!("scan reply") };
            let [V::Bulk(next), V::Array(keys)] = parts.as_slice() else { panic!("scan parts {parts:?}") };
            assert!(keys.len() <= count);
            seen.extend(keys.iter().map(|k| match k {
                V::Bulk(k) => String::from_utf8(k.clone()).expect("utf8"),
                _ => panic!("key"),
            }));
            cursor = String::from_utf8(next.clone()).expect("utf8");
            assert!(cursor.parse::<u64>().is_ok(), "cursors are numbers, as clients expect: {cursor}");
            if cursor == "0" {
                break;
            }
        }
        let V::Array(expected) = c.cmd(&format!("KEYS {}", pattern.unwrap_or("*"))) else { panic!() };
        let expected: Vec<String> = expected
            .iter()
            .map(|k| if let V::Bulk(k) = k { String::from_utf8(k.clone()).unwrap() } else { panic!() })
            .collect();
        assert_eq!(seen, expected, "count {count} pattern {pattern:?}");
    }
    assert!(err_starts(&c.cmd("SCAN 987654321"), "ERR invalid cursor"));
    assert!(err_starts(&c.cmd("SCAN abc"), "ERR invalid cursor"));
    assert!(err_starts(&c.cmd("SCAN 0 COUNT 0"), "ERR syntax error"));
    // No hash among the keys: pages may come back empty before the cursor is 0, as Redis's.
    let mut cursor = "0".to_string();
    for _ in 0..1000 {
        let V::Array(page) = c.cmd(&format!("SCAN {cursor} TYPE hash")) else { panic!("a page") };
        assert_eq!(page[1], V::Array(vec![]), "no key is a hash");
        let V::Bulk(next) = &page[0] else { panic!("a cursor") };
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(cursor, "0", "the scan ends");

    assert_eq!(c.cmd("DEL user:00 user:00 user:01 nope"), V::Int(2));
    assert_eq!(c.cmd("UNLINK user:02"), V::Int(1));
    assert_eq!(c.cmd("EXISTS user:00 user:01 user:02"), V::Int(0));
    assert_eq!(c.cmd("DBSIZE"), V::Int(50));
    assert_eq!(c.cmd("FLUSHDB"), ok());
    assert_eq!(c.cmd("DBSIZE"), V::Int(0));
    assert_eq!(c.cmd("KEYS *"), V::Array(vec![]));
}

#[test]
fn server_commands() {
    let (_dir, s) = start();
    let mut c = s.connect();
    assert_eq!(c.cmd("SET k v"), ok());
    assert_eq!(c.cmd("GET k"), b("v"));
    let V::Bulk(info) = c.cmd("INFO") else { panic!("info") };
    let info = String::from_utf8(info).expect("utf8");
    for field in [
        "# Server",
        "redis_version:",
        "# Shamba_io",
        "block_reads_data:",
        "# Shamba_cache",
        "cache_hits_filter:",
        "cache_capacity:",
        "# Shamba_filters",
        "filter_false_positives:",
        "memtable_hits:1",
        "# Shamba_levels",
        "write_ops:1",
        "total_commands_processed:",
    ] {
        assert!(info.contains(field), "{field} missing from INFO:\n{info}");
    }
    let V::Bulk(one) = c.cmd("INFO shamba_cache") else { panic!() };
    let one = String::from_utf8(one).unwrap();
    assert!(one.starts_with("# Shamba_cache\r\n") && !one.contains("# Server"), "{one}");

    assert_eq!(c.cmd("SELECT 0"), ok());
    assert_eq!(c.cmd("SELECT 16"), V::Err("ERR DB index is out of range".into()));
    assert_eq!(c.cmd("SELECT -1"), V::Err("ERR DB index is out of range".into()));
    assert!(err_starts(&c.cmd("SELECT x"), "ERR value is not an integer"));
    assert_eq!(c.cmd("CONFIG GET databases"), V::Array(vec![b("databases"), b("16")]));
    let V::Int(n) = c.cmd("COMMAND COUNT") else { panic!() };
    let V::Array(all) = c.cmd("COMMAND") else { panic!() };
    assert_eq!(all.len() as i64, n);
    let get = c.cmd("COMMAND INFO get nosuch");
    let V::Array(get) = get else { panic!() };
    assert_eq!(get[1], V::Null);
    let V::Array(entry) = &get[0] else { panic!() };
    assert_eq!((&entry[0], &entry[1], entry.len()), (&b("get"), &V::Int(2), 10));
    let V::Array(docs) = c.cmd("COMMAND DOCS set") else { panic!("docs") };
    assert_eq!(docs[0], b("set"));
    assert!(matches!(&docs[1], V::Array(d) if d.contains(&b("summary"))));
    assert_eq!(c.cmd("CLIENT SETNAME me"), ok());
    assert_eq!(c.cmd("CLIENT GETNAME"), b("me"));
    assert_eq!(c.cmd("CLIENT SETINFO LIB-NAME redis-py"), ok());
    assert_eq!(c.cmd("CONFIG GET appendonly"), V::Array(vec![b("appendonly"), b("yes")]));
    assert_eq!(c.cmd("CONFIG GET nosuch"), V::Array(vec![]));
    assert!(err_starts(&c.cmd("GET"), "ERR wrong number of arguments for 'get' command"));
    assert!(err_starts(&c.cmd("XADD s * f v"), "ERR unknown command 'XADD'"));
    assert_eq!(c.cmd("PING"), V::Simple("PONG".into()), "errors leave the connection usable");
    assert_eq!(c.cmd("QUIT"), ok());
    assert!(c.closed());
}

/// Every key of the database a connection selected.
fn all_keys(c: &mut Client) -> Vec<V> {
    let V::Array(keys) = c.cmd("KEYS *") else { panic!("keys reply") };
    keys
}

#[test]
fn select_keeps_databases_apart_and_flushdb_clears_only_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let s = Server::start_with(&db, &["--sync", "never", "--databases", "4"]);
    let (mut zero, mut one) = (s.connect(), s.connect());
    assert_eq!(zero.cmd("CONFIG GET databases"), V::Array(vec![b("databases"), b("4")]));
    assert_eq!(one.cmd("SELECT 4"), V::Err("ERR DB index is out of range".into()));
    assert_eq!(one.cmd("SELECT 1"), ok());
    assert_eq!(zero.cmd("MSET k zero a 1"), ok());
    assert_eq!(one.cmd("MSET k one b 2 c 3"), ok());
    assert_eq!(zero.cmd("GET k"), b("zero"));
    assert_eq!(one.cmd("GET k"), b("one"));
    assert_eq!(one.cmd("GET a"), V::Null, "a key of db 0 is not in db 1");
    assert_eq!(one.cmd("EXISTS a b c"), V::Int(2));
    assert_eq!(one.cmd("MGET a b"), V::Array(vec![V::Null, b("2")]));
    assert_eq!(one.cmd("INCR b"), V::Int(3));
    assert_eq!(one.cmd("APPEND k !"), V::Int(4));
    assert_eq!(zero.cmd("DBSIZE"), V::Int(2));
    assert_eq!(one.cmd("DBSIZE"), V::Int(3));
    assert_eq!(all_keys(&mut one), vec![b("b"), b("c"), b("k")]);
    assert_eq!(one.cmd("SCAN 0 COUNT 100"), V::Array(vec![b("0"), V::Array(vec![b("b"), b("c"), b("k")])]));
    assert_eq!(one.cmd("DEL a k"), V::Int(1));
    assert_eq!(zero.cmd("GET k"), b("zero"), "DEL in db 1 leaves db 0's key");
    let V::Bulk(info) = one.cmd("INFO server") else { panic!("info") };
    assert!(String::from_utf8_lossy(&info).contains("db_keyspace:db1\r\n"));

    // One connection switching back and forth.
    assert_eq!(zero.cmd("SELECT 2"), ok());
    assert_eq!(zero.cmd("SET k two"), ok());
    assert_eq!(zero.cmd("SELECT 0"), ok());
    assert_eq!(zero.cmd("GET k"), b("zero"));

    // FLUSHDB: the selected database only.
    assert_eq!(one.cmd("FLUSHDB"), ok());
    assert_eq!(one.cmd("DBSIZE"), V::Int(0));
    assert_eq!(one.cmd("GET b"), V::Null);
    assert_eq!(zero.cmd("DBSIZE"), V::Int(2));
    assert_eq!(one.cmd("SET late yes"), ok(), "writes after a FLUSHDB are seen");
    assert_eq!(all_keys(&mut one), vec![b("late")]);
    drop((zero, one));
    let (clean, err) = s.stop();
    assert!(clean, "{err}");

    // A restart finds every database where it was; the CLI reads them by keyspace.
    let out = Command::new(env!("CARGO_BIN_EXE_shamba"))
        .args(["get", "--db", db.to_str().unwrap(), "--keyspace", "db2", "k"])
        .output()
        .expect("shamba get");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "two");
    let s = Server::start_with(&db, &["--sync", "never", "--databases", "4"]);
    let mut c = s.connect();
    assert_eq!(c.cmd("GET k"), b("zero"));
    assert_eq!(c.cmd("SELECT 1"), ok());
    assert_eq!(c.cmd("GET late"), b("yes"));
    assert_eq!(c.cmd("SELECT 2"), ok());
    assert_eq!(c.cmd("GET k"), b("two"));

    // FLUSHALL: every database.
    assert_eq!(c.cmd("FLUSHALL"), ok());
    for n in 0..4 {
        assert_eq!(c.cmd(&format!("SELECT {n}")), ok());
        assert_eq!(c.cmd("DBSIZE"), V::Int(0), "db {n}");
    }
}

#[test]
fn resp3_after_hello_3() {
    let (_dir, s) = start();
    let mut c = s.connect();
    let V::Array(hello2) = c.cmd("HELLO") else { panic!("RESP2 HELLO is a flat array") };
    assert!(hello2.windows(2).any(|w| w == [b("proto"), V::Int(2)]));
    let V::Map(hello3) = c.cmd("HELLO 3 SETNAME app") else { panic!("RESP3 HELLO is a map") };
    assert!(hello3.contains(&(b("proto"), V::Int(3))));
    assert!(hello3.contains(&(b("server"), b("shamba"))));
    // RESP3's null, map and verbatim string.
    c.send_raw(&encode(&[b"GET", b"missing"]));
    assert_eq!(c.line(), "_");
    assert_eq!(c.cmd("CLIENT GETNAME"), b("app"));
    assert!(matches!(c.cmd("CONFIG GET save"), V::Map(m) if m == vec![(b("save"), b(""))]));
    assert!(matches!(c.cmd("INFO server"), V::Verbatim(t) if t.starts_with("txt:# Server")));
    assert!(matches!(c.cmd("HELLO 4"), V::Err(e) if e.starts_with("NOPROTO")));
    assert!(matches!(c.cmd("HELLO 2"), V::Array(_)));
    c.send_raw(&encode(&[b"GET", b"missing"]));
    assert_eq!(c.line(), "$-1");
}

#[test]
fn pipelined_requests_get_replies_in_order() {
    let (_dir, s) = start();
    let mut c = s.connect();
    let mut batch = Vec::new();
    for i in 0..2000 {
        batch.extend(encode(&[b"SET", format!("k{i}").as_bytes(), format!("v{i}").as_bytes()]));
        batch.extend(encode(&[b"GET", format!("k{i}").as_bytes()]));
    }
    // Inline commands mix with RESP arrays.
    batch.extend_from_slice(b"INCR n\r\n\r\nINCR n\r\n");
    c.send_raw(&batch);
    for i in 0..2000 {
        assert_eq!(c.read(), ok());
        assert_eq!(c.read(), b(&format!("v{i}")));
    }
    assert_eq!((c.read(), c.read()), (V::Int(1), V::Int(2)));
    // A request split across writes is put back together.
    let whole = encode(&[b"SET", b"split", b"value"]);
    for piece in whole.chunks(3) {
        c.send_raw(piece);
        c.w.flush().unwrap();
    }
    assert_eq!(c.read(), ok());
    assert_eq!(c.cmd("GET split"), b("value"));
}

#[test]
fn a_bad_frame_closes_only_its_own_connection() {
    let (_dir, s) = start();
    let mut good = s.connect();
    assert_eq!(good.cmd("SET k v"), ok());
    let bad_frames: [&[u8]; 6] = [
        b"*1\r\n$999999999999\r\n",
        b"*2000000\r\n",
        b"*1\r\n:5\r\n",
        b"*1\r\n$3\r\nGETxx\r\n",
        b"*abc\r\n",
        &[b'x'; 70 * 1024],
    ];
    for frame in bad_frames {
        let mut bad = s.connect();
        // Whole requests before the bad one are still answered.
        bad.send_raw(b"PING\r\n");
        bad.send_raw(frame);
        assert_eq!(bad.read(), V::Simple("PONG".into()));
        let r = bad.read();
        assert!(err_starts(&r, "ERR Protocol error"), "{r:?} for {:?}", String::from_utf8_lossy(&frame[..12]));
        assert!(bad.closed());
        assert_eq!(good.cmd("GET k"), b("v"), "other connections carry on");
    }
}

#[test]
fn concurrent_increments_lose_no_update() {
    let (_dir, s) = start();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let mut c = s.connect();
            std::thread::spawn(move || {
                for _ in 0..250 {
                    let V::Int(_) = c.cmd("INCR shared") else { panic!("incr") };
                    let V::Int(_) = c.cmd("APPEND log x") else { panic!("append") };
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let mut c = s.connect();
    assert_eq!(c.cmd("GET shared"), b("2000"));
    assert_eq!(c.cmd("STRLEN log"), V::Int(2000));
}

#[test]
fn sigterm_stops_cleanly_and_the_data_persists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    for sync in ["never", "everysec", "always"] {
        let s = Server::start(&db, sync);
        let mut c = s.connect();
        assert_eq!(c.cmd(&format!("SET mode {sync}")), ok());
        assert_eq!(
            c.cmd("INCR starts"),
            V::Int(["never", "everysec", "always"].iter().position(|m| *m == sync).unwrap() as i64 + 1)
        );
        // An idle connection does not hold up the stop.
        let _idle = s.connect();
        let (clean, err) = s.stop();
        assert!(clean, "exit status: {err}");
        assert!(err.contains("flushed and closed"), "{err}");
        assert!(c.closed(), "connections are closed on stop");
    }
    // The data is in tables: the admin command reads it without the server.
    let out = Command::new(env!("CARGO_BIN_EXE_shamba"))
        .args(["get", "--db", db.to_str().unwrap(), "starts"])
        .output()
        .expect("shamba get");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3");
}

#[test]
fn cluster_mode_a_group_of_one_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    let raft = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let raft_addr = raft.local_addr().expect("address").to_string();
    drop(raft);
    let init = format!("1={raft_addr}");
    let s = Server::start_with(
        &dir.path().join("node"),
        &["--node-id", "1", "--raft-bind", &raft_addr, "--init", &init, "--heartbeat-ms", "20"],
    );
    let mut c = s.connect();
    // The group elects its one voter at once; then it takes writes and reads them back.
    let mut role = String::new();
    for _ in 0..200 {
        if let V::Bulk(text) = c.call(&[b"CLUSTER", b"INFO"]) {
            role = String::from_utf8_lossy(&text).into_owned();
        }
        if role.contains("role:leader") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(role.contains("role:leader") && role.contains("leader_id:1"), "{role}");
    assert_eq!(c.call(&[b"SET", b"k", b"v"]), ok());
    assert_eq!(c.call(&[b"INCR", b"n"]), V::Int(1));
    assert_eq!(c.call(&[b"GET", b"k"]), b("v"));
    let (clean, err) = s.stop();
    assert!(clean, "{err}");
    // The data is in the node's database, beside the Raft log.
    let db = shamba::Db::open(dir.path().join("node").join("db"), shamba::Options::default()).expect("open");
    assert_eq!(shamba::Readable::get(&db, b"k").expect("get").as_deref(), Some(&b"v"[..]));
    assert!(db.keyspace_names().iter().any(|n| n == "raft_log"));
    db.close().expect("close");
}

#[test]
fn cluster_mode_flags_are_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("db");
    let db = db.to_str().expect("utf8");
    for (flags, says) in [
        (&["--node-id", "1"][..], "--raft-bind"),
        (&["--node-id", "1", "--raft-bind", "127.0.0.1:0", "--init", "1"][..], "is not ID=ADDR"),
        (&["--node-id", "1", "--raft-bind", "127.0.0.1:0", "--init", "x=127.0.0.1:1"][..], "is not a node id"),
        (&["--init", "1=127.0.0.1:1"][..], "--node-id"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_shamba"))
            .args(["serve", "--db", db, "--bind", "127.0.0.1:0"])
            .args(flags)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{flags:?}: {err}");
    }
}

/// The nice value of each thread of process `pid` named `name` (field 19 of its `stat`).
#[cfg(target_os = "linux")]
fn nices_of(pid: u32, name: &str) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|t| {
            let path = t.ok()?.path();
            (std::fs::read_to_string(path.join("comm")).ok()?.trim_end() == name).then_some(())?;
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            stat[stat.rfind(')')? + 1..].split_whitespace().nth(19 - 3)?.parse().ok()
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn background_nice_lowers_the_servers_compactions_and_is_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_with(&dir.path().join("db"), &["--background-nice", "10"]);
    let pid = server.child.as_ref().expect("running").id();
    // The process's main thread: the one whose id is the process's.
    let main = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let base: i32 = main[main.rfind(')').expect("name") + 1..]
        .split_whitespace()
        .nth(19 - 3)
        .and_then(|n| n.parse().ok())
        .expect("nice");
    // The threads are up once the banner is printed; each sets its nice value as it starts.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while nices_of(pid, "shamba-compact") != [(base + 10).min(19)] || nices_of(pid, "shamba-flush").is_empty() {
        assert!(std::time::Instant::now() < deadline, "{:?}", nices_of(pid, "shamba-compact"));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(nices_of(pid, "shamba-flush"), [base], "the flush thread keeps its priority");
    let (clean, err) = server.stop();
    assert!(clean, "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_shamba"))
        .args(["serve", "--db", dir.path().join("db").to_str().expect("utf8"), "--bind", "127.0.0.1:0"])
        .args(["--background-nice", "20"])
        .output()
        .expect("run");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("background-nice"));
}
