//! The string, bit, key, configuration and introspection commands run through the command
//! layer (no socket), as a client's requests run; and the Prometheus endpoint scraped over
//! HTTP and its text parsed.

use shamba_server::{Listener, Reply, Server, ServerConfig, Session, SyncMode};
use std::io::{Read, Write};
use std::sync::Arc;

fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

struct Fixture {
    _dir: tempfile::TempDir,
    rt: tokio::runtime::Runtime,
    listener: Option<Listener>,
    server: Arc<Server>,
    session: Session,
}

impl Fixture {
    fn new(tweak: impl FnOnce(&mut ServerConfig)) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = ServerConfig::new(dir.path().join("db"));
        config.bind = "127.0.0.1:0".parse().expect("address");
        config.sync = SyncMode::Never;
        config.databases = 4;
        tweak(&mut config);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let listener = rt.block_on(Listener::bind(&config)).expect("bind");
        let server = listener.server().clone();
        Fixture { _dir: dir, rt, listener: Some(listener), server, session: Session::new(1) }
    }

    fn run(&mut self, line: &str) -> Reply {
        self.server.execute(&mut self.session, &words(line))
    }

    fn run_args(&mut self, args: &[&[u8]]) -> Reply {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
        self.server.execute(&mut self.session, &args)
    }

    fn text(&mut self, line: &str) -> String {
        match self.run(line) {
            Reply::Text(t) => t,
            Reply::Bulk(b) => String::from_utf8(b).expect("utf-8"),
            other => panic!("{line}: {other:?}"),
        }
    }
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn err(r: &Reply) -> &str {
    match r {
        Reply::Error(e) => e,
        other => panic!("not an error: {other:?}"),
    }
}

#[test]
fn string_commands_answer_as_redis_answers() {
    let mut f = Fixture::new(|_| {});
    assert_eq!(f.run("SETNX k v1"), Reply::Int(1));
    assert_eq!(f.run("SETNX k v2"), Reply::Int(0));
    assert_eq!(f.run("GET k"), bulk("v1"));
    assert_eq!(f.run("MSETNX a 1 b 2"), Reply::Int(1));
    assert_eq!(f.run("MSETNX b 3 c 4"), Reply::Int(0));
    assert_eq!(f.run("GET c"), Reply::Null, "MSETNX sets nothing when one key exists");
    assert_eq!(f.run("GETDEL a"), bulk("1"));
    assert_eq!(f.run("GETDEL a"), Reply::Null);

    assert_eq!(f.run("SET s Hello_World"), Reply::OK);
    assert_eq!(f.run("GETRANGE s 0 4"), bulk("Hello"));
    assert_eq!(f.run("GETRANGE s -5 -1"), bulk("World"));
    assert_eq!(f.run("SUBSTR s 6 1000"), bulk("World"));
    assert_eq!(f.run("GETRANGE s -1 -5"), bulk(""));
    assert_eq!(f.run("GETRANGE nokey 0 -1"), bulk(""));
    assert_eq!(f.run("SETRANGE s 6 Redis"), Reply::Int(11));
    assert_eq!(f.run("GET s"), bulk("Hello_Redis"));
    assert_eq!(f.run("SETRANGE pad 3 x"), Reply::Int(4));
    assert_eq!(f.run("GET pad"), Reply::Bulk(b"\0\0\0x".to_vec()));
    assert_eq!(f.run_args(&[b"SETRANGE", b"none", b"0", b""]), Reply::Int(0));
    assert_eq!(f.run("EXISTS none"), Reply::Int(0), "setting nothing creates nothing");
    assert_eq!(err(&f.run("SETRANGE s -1 x")), "ERR offset is out of range");
    assert!(err(&f.run("SETRANGE s 536870911 xx")).contains("maximum allowed size"));

    assert_eq!(f.run("INCRBYFLOAT f 10.5"), bulk("10.5"));
    assert_eq!(f.run("INCRBYFLOAT f 0.1"), bulk("10.6"));
    assert_eq!(f.run("INCRBYFLOAT f -10.6"), bulk("0"));
    assert_eq!(f.run("SET big 17179869184"), Reply::OK);
    assert_eq!(f.run("INCRBYFLOAT big 1.5"), bulk("17179869185.5"));
    assert_eq!(err(&f.run("INCRBYFLOAT s 1")), "ERR value is not a valid float");
    assert_eq!(err(&f.run("INCRBYFLOAT f abc")), "ERR value is not a valid float");
    assert_eq!(err(&f.run("INCRBYFLOAT f +inf")), "ERR increment would produce NaN or Infinity");

    assert_eq!(f.run("MSET x ohmytext y mynewtext"), Reply::OK);
    assert_eq!(f.run("LCS x y"), bulk("mytext"));
    assert_eq!(f.run("LCS x y LEN"), Reply::Int(6));
    let idx = f.run("LCS x y IDX MINMATCHLEN 4 WITHMATCHLEN");
    let pair = |a: i64, b: i64| Reply::Array(vec![Reply::Int(a), Reply::Int(b)]);
    assert_eq!(
        idx,
        Reply::Map(vec![
            (bulk("matches"), Reply::Array(vec![Reply::Array(vec![pair(4, 7), pair(5, 8), Reply::Int(4)])])),
            (bulk("len"), Reply::Int(6)),
        ])
    );
}

#[test]
fn bit_commands_read_and_write_bits_msb_first() {
    let mut f = Fixture::new(|_| {});
    assert_eq!(f.run("SETBIT b 7 1"), Reply::Int(0));
    assert_eq!(f.run("SETBIT b 7 0"), Reply::Int(1));
    assert_eq!(f.run("SETBIT b 1 1"), Reply::Int(0));
    assert_eq!(f.run("GET b"), bulk("@"));
    assert_eq!(f.run("GETBIT b 1"), Reply::Int(1));
    assert_eq!(f.run("GETBIT b 100"), Reply::Int(0));
    assert_eq!(err(&f.run("SETBIT b 1 2")), "ERR bit is not an integer or out of range");
    assert_eq!(err(&f.run("SETBIT b -1 1")), "ERR bit offset is not an integer or out of range");

    assert_eq!(f.run("SET foo foobar"), Reply::OK);
    assert_eq!(f.run("BITCOUNT foo"), Reply::Int(26));
    assert_eq!(f.run("BITCOUNT foo 1 1"), Reply::Int(6));
    assert_eq!(f.run("BITCOUNT foo 5 30 BIT"), Reply::Int(17));
    assert_eq!(f.run("BITCOUNT nokey"), Reply::Int(0));
    assert_eq!(err(&f.run("BITCOUNT foo 1")), "ERR syntax error");

    f.run_args(&[b"SET", b"p", &[0xff, 0xf0, 0x00]]);
    assert_eq!(f.run("BITPOS p 0"), Reply::Int(12));
    assert_eq!(f.run("BITPOS p 1 2"), Reply::Int(-1));
    assert_eq!(f.run("BITPOS p 1 7 15 BIT"), Reply::Int(7));
    f.run_args(&[b"SET", b"ones", &[0xff, 0xff]]);
    assert_eq!(f.run("BITPOS ones 0"), Reply::Int(16), "no end: the value reads as followed by zeros");
    assert_eq!(f.run("BITPOS ones 0 0 -1"), Reply::Int(-1));
    assert_eq!(f.run("BITPOS nokey 1"), Reply::Int(-1));
    assert_eq!(f.run("BITPOS nokey 0"), Reply::Int(0));

    f.run_args(&[b"MSET", b"k1", &[0b1100], b"k2", &[0b1010, 0xff]]);
    assert_eq!(f.run("BITOP AND dest k1 k2"), Reply::Int(2));
    assert_eq!(f.run("GET dest"), Reply::Bulk(vec![0b1000, 0]));
    assert_eq!(f.run("BITOP OR dest k1 k2"), Reply::Int(2));
    assert_eq!(f.run("GET dest"), Reply::Bulk(vec![0b1110, 0xff]));
    assert_eq!(f.run("BITOP XOR dest k1 k2"), Reply::Int(2));
    assert_eq!(f.run("GET dest"), Reply::Bulk(vec![0b0110, 0xff]));
    assert_eq!(f.run("BITOP NOT dest k1"), Reply::Int(1));
    assert_eq!(f.run("GET dest"), Reply::Bulk(vec![!0b1100]));
    assert_eq!(err(&f.run("BITOP NOT dest k1 k2")), "ERR BITOP NOT must be called with a single source key.");
    assert_eq!(f.run("BITOP AND dest nokey"), Reply::Int(0));
    assert_eq!(f.run("EXISTS dest"), Reply::Int(0), "an empty result deletes the destination");

    let ints = |v: &[Option<i64>]| Reply::Array(v.iter().map(|n| n.map_or(Reply::Null, Reply::Int)).collect());
    assert_eq!(f.run("BITFIELD bf SET i8 0 100 GET u4 0 INCRBY i8 #1 -3"), ints(&[Some(0), Some(6), Some(-3)]));
    assert_eq!(f.run("GET bf"), Reply::Bulk(vec![100, 0xfd]));
    assert_eq!(f.run("BITFIELD bf INCRBY i8 0 100"), ints(&[Some(-56)]), "WRAP by default");
    assert_eq!(
        f.run("BITFIELD bf OVERFLOW SAT INCRBY i8 0 -100 OVERFLOW FAIL INCRBY u2 100 5"),
        ints(&[Some(-128), None])
    );
    assert_eq!(f.run("BITFIELD_RO bf GET i8 8"), ints(&[Some(-3)]));
    assert_eq!(err(&f.run("BITFIELD_RO bf SET i8 0 1")), "ERR BITFIELD_RO only supports the GET subcommand");
    assert!(err(&f.run("BITFIELD bf GET u64 0")).starts_with("ERR Invalid bitfield type"));
    assert_eq!(f.run("BITFIELD nobf GET u8 0"), ints(&[Some(0)]));
    assert_eq!(f.run("EXISTS nobf"), Reply::Int(0), "reading creates nothing");
}

#[test]
fn keys_move_whole_with_their_deadlines() {
    let mut f = Fixture::new(|_| {});
    assert_eq!(f.run("SET a 1 EX 100"), Reply::OK);
    assert_eq!(f.run("RENAME a b"), Reply::OK);
    assert_eq!(f.run("EXISTS a"), Reply::Int(0));
    assert!(matches!(f.run("TTL b"), Reply::Int(t) if (90..=100).contains(&t)), "the deadline moves with the key");
    assert_eq!(err(&f.run("RENAME nokey x")), "ERR no such key");
    assert_eq!(f.run("RENAME b b"), Reply::OK);
    assert_eq!(f.run("SET c 3"), Reply::OK);
    assert_eq!(f.run("RENAMENX b c"), Reply::Int(0));
    assert_eq!(f.run("RENAMENX b d"), Reply::Int(1));

    assert_eq!(f.run("COPY d e"), Reply::Int(1));
    assert_eq!(f.run("COPY d e"), Reply::Int(0));
    assert_eq!(f.run("COPY c e REPLACE"), Reply::Int(1));
    assert_eq!(f.run("GET e"), bulk("3"));
    assert_eq!(f.run("COPY nokey e"), Reply::Int(0));
    assert_eq!(err(&f.run("COPY c c")), "ERR source and destination objects are the same");
    assert_eq!(f.run("COPY c c DB 2"), Reply::Int(1));
    assert_eq!(err(&f.run("COPY c c DB 9")), "ERR DB index is out of range");

    assert_eq!(f.run("MOVE c 3"), Reply::Int(1));
    assert_eq!(f.run("EXISTS c"), Reply::Int(0));
    assert_eq!(f.run("MOVE nokey 3"), Reply::Int(0));
    assert_eq!(f.run("SELECT 3"), Reply::OK);
    assert_eq!(f.run("GET c"), bulk("3"));
    assert_eq!(f.run("SELECT 2"), Reply::OK);
    assert_eq!(f.run("GET c"), bulk("3"));
    assert_eq!(f.run("SELECT 1"), Reply::OK);
    assert_eq!(f.run("RANDOMKEY"), Reply::Null);
    assert_eq!(f.run("SET only one"), Reply::OK);
    assert_eq!(f.run("RANDOMKEY"), bulk("only"));
    assert_eq!(f.run("TOUCH only nokey only"), Reply::Int(2));
    assert_eq!(f.run("OBJECT ENCODING only"), bulk("embstr"));
    assert_eq!(f.run("SET n 12345"), Reply::OK);
    assert_eq!(f.run("OBJECT ENCODING n"), bulk("int"));
    assert_eq!(f.run("OBJECT ENCODING nokey"), Reply::Null);
    assert_eq!(f.run("OBJECT REFCOUNT n"), Reply::Int(1));
}

#[test]
fn info_config_slowlog_and_command_describe_the_server() {
    let mut f = Fixture::new(|_| {});
    f.run("SET k v");
    f.run("GET k");
    f.run("GET");
    f.run("INCR k");
    f.run("NOSUCH");
    let all = f.text("INFO all");
    assert!(all.contains("cmdstat_get:calls=1,"), "{all}");
    assert!(all.contains("rejected_calls=1,failed_calls=0"), "GET's arity error is a rejected call");
    assert!(all.contains("cmdstat_incr:calls=1,") && all.contains("failed_calls=1"));
    assert!(all.contains("errorstat_ERR:count=3"), "{all}");
    assert!(all.contains("db0:keys=1,expires=0,avg_ttl=0"));
    let default = f.text("INFO");
    for section in
        ["# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU", "# Keyspace"]
    {
        assert!(default.contains(section), "{section}");
    }
    assert!(!default.contains("# Commandstats"), "commandstats is not a default section");
    assert!(f.text("INFO MEMORY").starts_with("# Memory\r\nused_memory:"));
    assert!(f.text("INFO cpu").contains("used_cpu_user:"));
    assert_eq!(f.run("CONFIG RESETSTAT"), Reply::OK);
    assert!(!f.text("INFO commandstats").contains("cmdstat_get"));

    let Reply::Map(pairs) = f.run("CONFIG GET *") else { panic!("CONFIG GET answers pairs") };
    assert!(pairs.len() > 60, "{} settings", pairs.len());
    assert_eq!(f.run("CONFIG GET maxmemory"), Reply::Map(vec![(bulk("maxmemory"), bulk("0"))]));
    assert_eq!(f.run("CONFIG SET maxmemory 1mb slowlog-max-len 2"), Reply::OK);
    assert_eq!(f.run("CONFIG GET maxmemory"), Reply::Map(vec![(bulk("maxmemory"), bulk("1048576"))]));
    let memory = f.text("INFO memory");
    assert!(memory.contains("\r\nmaxmemory:1048576\r\nmaxmemory_human:1.00M\r\n"), "{memory}");
    assert!(err(&f.run("CONFIG SET databases 3")).contains("can't set immutable config"));
    assert!(err(&f.run("CONFIG SET nosuch 1")).starts_with("ERR Unknown option"));
    assert!(err(&f.run("CONFIG SET maxmemory")).contains("wrong number of arguments"));
    assert_eq!(err(&f.run("CONFIG REWRITE")), "ERR The server is running without a config file");

    assert_eq!(f.run("CONFIG SET slowlog-log-slower-than 0"), Reply::OK);
    for _ in 0..3 {
        f.run("PING");
    }
    assert_eq!(f.run("SLOWLOG LEN"), Reply::Int(2), "slowlog-max-len bounds the log");
    let Reply::Array(entries) = f.run("SLOWLOG GET 1") else { panic!("entries") };
    let Reply::Array(first) = &entries[0] else { panic!("an entry") };
    assert_eq!(first[3], Reply::Array(vec![bulk("SLOWLOG"), bulk("LEN")]), "the newest first");
    assert_eq!(f.run("CONFIG SET slowlog-log-slower-than -1"), Reply::OK);
    assert_eq!(f.run("SLOWLOG RESET"), Reply::OK);
    f.run("PING");
    assert_eq!(f.run("SLOWLOG LEN"), Reply::Int(0));

    let Reply::Int(count) = f.run("COMMAND COUNT") else { panic!("a count") };
    assert!(count > 80, "{count}");
    assert_eq!(f.run("COMMAND GETKEYS MSET a 1 b 2"), Reply::Array(vec![bulk("a"), bulk("b")]));
    assert_eq!(err(&f.run("COMMAND GETKEYS PING")), "ERR The command has no key arguments");
    assert_eq!(f.run("COMMAND LIST FILTERBY PATTERN bit*").to_owned(), {
        let names = ["bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"];
        Reply::Array(names.iter().map(|n| bulk(n)).collect())
    });
    assert!(matches!(f.run("COMMAND DOCS lcs"), Reply::Map(m) if m.len() == 1));
    assert_eq!(f.run("FUNCTION LIST"), Reply::Array(Vec::new()));
    assert_eq!(f.run("FUNCTION FLUSH"), Reply::OK);
    assert_eq!(f.run("SCRIPT EXISTS a b"), Reply::Array(vec![Reply::Int(0), Reply::Int(0)]));
    assert!(matches!(f.run("LASTSAVE"), Reply::Int(t) if t > 1_600_000_000));
    assert_eq!(f.run("SAVE"), Reply::OK);
    assert!(matches!(f.run("MEMORY USAGE k"), Reply::Int(n) if n >= 2));
    assert!(err(&f.run("DEBUG SLEEP 0")).starts_with("ERR DEBUG command not allowed"));
}

#[test]
fn debug_answers_when_enabled() {
    let mut f = Fixture::new(|c| c.enable_debug_command = true);
    assert_eq!(f.run("DEBUG SLEEP 0"), Reply::OK);
    assert_eq!(f.run("DEBUG SET-ACTIVE-EXPIRE 0"), Reply::OK);
    assert_eq!(f.run("DEBUG DIGEST"), bulk(&"0".repeat(40)));
    f.run("SET k hello");
    assert_eq!(f.run("DEBUG RELOAD"), Reply::OK);
    assert_eq!(f.run("GET k"), bulk("hello"));
    assert!(
        matches!(f.run("DEBUG OBJECT k"), Reply::Bulk(b) if b.starts_with(b"Value at:") && b.ends_with(b"lru_seconds_idle:0"))
    );
    assert_ne!(f.run("DEBUG DIGEST"), bulk(&"0".repeat(40)));
}

#[test]
fn inline_commands_keep_quoted_words_whole() {
    let f = Fixture::new(|_| {});
    let addr = f.listener.as_ref().expect("listener").local_addr();
    let listener = f.listener.expect("listener");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = f.rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    let mut c = std::net::TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(30))).expect("timeout");
    c.write_all(b"SET \"a key\" '\\x41 b'\r\nGET \"a key\"\r\nECHO \"\\x41\\x42\"\r\nSET \"open k\r\n").expect("send");
    let mut got = Vec::new();
    c.read_to_end(&mut got).expect("closed after the protocol error");
    assert_eq!(
        String::from_utf8_lossy(&got),
        "+OK\r\n$6\r\n\\x41 b\r\n$2\r\nAB\r\n-ERR Protocol error: unbalanced quotes in request\r\n"
    );
    stop.send(()).expect("serving");
    f.rt.block_on(serving).expect("task").expect("clean stop");
}

#[test]
fn metrics_are_served_in_prometheus_text_format() {
    let mut f = Fixture::new(|c| c.metrics_bind = Some("127.0.0.1:0".parse().expect("address")));
    f.run("SET k v");
    f.run("GET k");
    f.run("GET k");
    let listener = f.listener.take().expect("listener");
    let addr = listener.metrics_addr().expect("metrics bound");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = f.rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    let get = |path: &str| {
        let mut c = std::net::TcpStream::connect(addr).expect("connect");
        c.set_read_timeout(Some(std::time::Duration::from_secs(30))).expect("timeout");
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
        let mut got = String::new();
        c.read_to_string(&mut got).expect("response");
        got
    };
    let response = get("/metrics");
    let (head, body) = response.split_once("\r\n\r\n").expect("head and body");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(head.contains("Content-Type: text/plain; version=0.0.4"));
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).expect("length").parse().expect("n");
    assert_eq!(length, body.len());

    // Every line is a comment or `name{labels} value` with a number for a value, and every
    // sample's metric was declared by a TYPE line before it.
    let mut typed = std::collections::HashSet::new();
    let mut samples = std::collections::HashMap::new();
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("name and type");
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            typed.insert(name.to_string());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("series and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
        let name = series.split('{').next().expect("name");
        let family = name.trim_end_matches("_bucket").trim_end_matches("_sum").trim_end_matches("_count");
        assert!(typed.contains(name) || typed.contains(family), "undeclared: {line}");
        if let Some(labels) = series.strip_prefix(name) {
            assert!(labels.is_empty() || (labels.starts_with('{') && labels.ends_with('}')), "{line}");
        }
        samples.insert(series.to_string(), value);
    }
    assert_eq!(samples.get("shamba_requests_total{command=\"get\"}"), Some(&2.0));
    assert_eq!(samples.get("shamba_requests_total{command=\"set\"}"), Some(&1.0));
    assert_eq!(samples.get("shamba_request_duration_seconds_count{family=\"string\"}"), Some(&3.0));
    assert_eq!(samples.get("shamba_request_duration_seconds_bucket{family=\"string\",le=\"+Inf\"}"), Some(&3.0));
    assert!(samples.contains_key("shamba_engine_block_reads_total{kind=\"data\"}"), "{body}");
    for name in [
        "shamba_engine_filter_negatives_total",
        "shamba_engine_compactions_total",
        "shamba_engine_stall_stopped_microseconds_total",
        "shamba_engine_pending_compaction_bytes",
        "shamba_net_input_bytes_total",
    ] {
        assert!(samples.contains_key(name), "{name}");
    }
    assert!(get("/other").starts_with("HTTP/1.1 404"));
    stop.send(()).expect("serving");
    f.rt.block_on(serving).expect("task").expect("clean stop");
}
