//! The connection layer over real sockets: the password (AUTH, HELLO's AUTH, NOAUTH), the
//! limit on clients, the idle timeout, the client registry (CLIENT LIST / KILL, a killed
//! idle client closed at once), protected mode, and pub/sub in RESP2 and RESP3 with a
//! subscriber that does not read.

mod common;

use common::{connect, expect, roundtrip, Serving};
use shamba_server::ServerConfig;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

fn start(adjust: impl FnOnce(&mut ServerConfig)) -> Serving {
    common::serving(2, |c| {
        c.databases = 2;
        adjust(c);
    })
}

/// Read one line (through CRLF).
fn line(c: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(b"\r\n") {
        c.read_exact(&mut b).expect("a line");
        out.push(b[0]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A bulk string reply's text.
fn bulk(c: &mut TcpStream) -> String {
    let head = line(c);
    let len: usize = head.trim_start_matches(['$', '=']).trim_end().parse().expect("a bulk length");
    let mut body = vec![0; len + 2];
    c.read_exact(&mut body).expect("bulk");
    body.truncate(len);
    String::from_utf8_lossy(&body).into_owned()
}

/// Read until what has arrived ends with `suffix`.
fn read_until(c: &mut TcpStream, suffix: &str) -> String {
    let mut out = Vec::new();
    let mut b = [0u8; 1];
    while !out.ends_with(suffix.as_bytes()) {
        c.read_exact(&mut b).expect("more of the reply");
        out.push(b[0]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// HELLO's reply ends with its empty list of modules.
const HELLO_END: &str = "$7\r\nmodules\r\n*0\r\n";

/// Whether the server closes `c` within `within` (nothing more to read).
fn closed_within(c: &mut TcpStream, within: Duration) -> bool {
    c.set_read_timeout(Some(within)).expect("timeout");
    let mut sink = Vec::new();
    c.read_to_end(&mut sink).is_ok()
}

#[test]
fn a_password_is_required_before_commands_and_checked() {
    let srv = start(|c| c.requirepass = Some(b"s3cret".to_vec()));
    let mut c = connect(srv.addr);
    roundtrip(&mut c, "GET k\r\n", "-NOAUTH Authentication required.\r\n");
    roundtrip(&mut c, "AUTH wrong\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    roundtrip(&mut c, "AUTH alice s3cret\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    let hello = line(&mut {
        c.write_all(b"HELLO 3\r\n").expect("send");
        c.try_clone().expect("clone")
    });
    assert!(hello.starts_with("-NOAUTH HELLO must be called with the client already authenticated"), "{hello}");
    roundtrip(&mut c, "PING\r\n", "-NOAUTH Authentication required.\r\n");
    roundtrip(&mut c, "AUTH s3cret\r\n", "+OK\r\n");
    roundtrip(&mut c, "SET k v\r\nGET k\r\n", "+OK\r\n$1\r\nv\r\n");

    // HELLO with AUTH and SETNAME authenticates, switches protocol and names at once.
    let mut d = connect(srv.addr);
    d.write_all(b"HELLO 3 AUTH default s3cret SETNAME worker\r\n").expect("send");
    assert!(read_until(&mut d, HELLO_END).starts_with("%8\r\n"));
    roundtrip(&mut d, "CLIENT GETNAME\r\n", "$6\r\nworker\r\n");
    // RESET signs the client out again.
    let mut e = connect(srv.addr);
    roundtrip(
        &mut e,
        "AUTH default s3cret\r\nRESET\r\nGET k\r\n",
        "+OK\r\n+RESET\r\n-NOAUTH Authentication required.\r\n",
    );
    // Before AUTH, requests are kept small.
    let mut big = connect(srv.addr);
    roundtrip(&mut big, "*100\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n");
    let mut big = connect(srv.addr);
    roundtrip(&mut big, "*1\r\n$100000\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n");
    // AUTH and a large request in one write: the request is read once AUTH has run.
    let mut pipelined = connect(srv.addr);
    let wide = (0..20).map(|i| format!("k{i} v")).collect::<Vec<_>>().join(" ");
    roundtrip(&mut pipelined, &format!("AUTH s3cret\r\nMSET {wide}\r\n"), "+OK\r\n+OK\r\n");
    // Wrong passwords never sign a client in, whatever their length.
    roundtrip(&mut e, "AUTH s3cret!\r\nAUTH s3cre\r\nGET k\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n-WRONGPASS invalid username-password pair or user is disabled.\r\n-NOAUTH Authentication required.\r\n");
}

#[test]
fn without_a_password_auth_says_so_and_hello_auth_is_accepted() {
    let srv = start(|_| {});
    let mut c = connect(srv.addr);
    let err = line(&mut {
        c.write_all(b"AUTH foo\r\n").expect("send");
        c.try_clone().expect("clone")
    });
    assert!(
        err.starts_with("-ERR AUTH <password> called without any password configured for the default user"),
        "{err}"
    );
    roundtrip(&mut c, "AUTH a b c\r\n", "-ERR syntax error\r\n");
    c.write_all(b"HELLO 2 AUTH default anything\r\n").expect("send");
    assert!(read_until(&mut c, HELLO_END).starts_with("*16\r\n"));
    roundtrip(&mut c, "PING\r\n", "+PONG\r\n");

    // A binary password set while serving: new clients need it, this one stays signed in.
    roundtrip(&mut c, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$11\r\nrequirepass\r\n$7\r\nabc\0def\r\n", "+OK\r\n");
    roundtrip(&mut c, "CONFIG GET requirepass\r\n", "*2\r\n$11\r\nrequirepass\r\n$7\r\nabc\0def\r\n");
    roundtrip(&mut c, "PING\r\n", "+PONG\r\n");
    let mut d = connect(srv.addr);
    roundtrip(&mut d, "AUTH abc\r\n", "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    roundtrip(&mut d, "*2\r\n$4\r\nAUTH\r\n$7\r\nabc\0def\r\nPING\r\n", "+OK\r\n+PONG\r\n");
}

#[test]
fn one_client_over_maxclients_is_told_and_closed() {
    let srv = start(|c| c.maxclients = 1);
    let mut first = connect(srv.addr);
    roundtrip(&mut first, "PING\r\n", "+PONG\r\n");
    let mut second = connect(srv.addr);
    expect(&mut second, "-ERR max number of clients reached\r\n");
    assert!(closed_within(&mut second, Duration::from_secs(10)));
    drop(first);
    // The place is free again once the first has gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut third = connect(srv.addr);
        third.write_all(b"PING\r\n").expect("send");
        if line(&mut third) == "+PONG\r\n" {
            break;
        }
        assert!(Instant::now() < deadline, "the first client's place was never freed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn idle_clients_are_closed_after_the_timeout_but_subscribers_are_not() {
    let srv = start(|c| c.timeout = 1);
    let mut idle = connect(srv.addr);
    roundtrip(&mut idle, "PING\r\n", "+PONG\r\n");
    let mut sub = connect(srv.addr);
    roundtrip(&mut sub, "SUBSCRIBE ch\r\n", "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    let t = Instant::now();
    assert!(closed_within(&mut idle, Duration::from_secs(10)), "closed");
    assert!(t.elapsed() >= Duration::from_millis(500), "not before the timeout");
    std::thread::sleep(Duration::from_millis(1500));
    roundtrip(&mut sub, "PING\r\n", "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
}

#[test]
fn clients_are_listed_and_a_killed_idle_client_is_closed_at_once() {
    let srv = start(|_| {});
    let mut a = connect(srv.addr);
    roundtrip(&mut a, "CLIENT SETNAME alpha\r\n", "+OK\r\n");
    a.write_all(b"CLIENT ID\r\n").expect("send");
    let a_id: u64 = line(&mut a).trim_start_matches(':').trim_end().parse().expect("an id");

    let mut b = connect(srv.addr);
    b.write_all(b"CLIENT LIST\r\n").expect("send");
    let list = bulk(&mut b);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    let alpha = lines.iter().find(|l| l.contains("name=alpha")).expect("alpha listed");
    assert!(alpha.starts_with(&format!("id={a_id} addr=127.0.0.1:")), "{alpha}");
    assert!(alpha.contains(" cmd=client|id "), "the last command: {alpha}");
    let own = lines.iter().find(|l| !l.contains("name=alpha")).expect("own line");
    assert!(own.contains(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 watch=0 qbuf=26 "), "{own}");
    assert!(own.contains(" cmd=client|list user=default redir=-1 resp=2"), "{own}");

    b.write_all(format!("CLIENT LIST ID {a_id}\r\n").as_bytes()).expect("send");
    assert_eq!(bulk(&mut b).lines().count(), 1);
    roundtrip(&mut b, "CLIENT KILL ID 0\r\n", "-ERR client-id should be greater than 0\r\n");
    roundtrip(&mut b, "CLIENT KILL 10.9.9.9:1\r\n", "-ERR No such client\r\n");
    let t = Instant::now();
    roundtrip(&mut b, &format!("CLIENT KILL ID {a_id}\r\n"), ":1\r\n");
    assert!(closed_within(&mut a, Duration::from_secs(10)), "the idle client is closed");
    assert!(t.elapsed() < Duration::from_secs(5), "at once, not at its next request");
    // CLIENT REPLY silences replies, all or the next one.
    roundtrip(
        &mut b,
        "CLIENT REPLY OFF\r\nSET r 1\r\nSET s 2\r\nGET r\r\nGET s\r\nCLIENT REPLY ON\r\nGET r\r\n",
        "+OK\r\n$1\r\n1\r\n",
    );
    roundtrip(&mut b, "CLIENT REPLY SKIP\r\nINCR r\r\nGET r\r\n", "$1\r\n2\r\n");
    // SKIPME no kills the caller too, after its reply.
    roundtrip(&mut b, "CLIENT KILL SKIPME no\r\n", ":1\r\n");
    assert!(closed_within(&mut b, Duration::from_secs(10)));
}

#[test]
fn publish_reaches_channel_and_pattern_subscribers_in_both_protocols() {
    let srv = start(|_| {});
    let mut sub = connect(srv.addr);
    roundtrip(
        &mut sub,
        "SUBSCRIBE news sport\r\n",
        "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$5\r\nsport\r\n:2\r\n",
    );
    roundtrip(&mut sub, "PSUBSCRIBE n*\r\n", "*3\r\n$10\r\npsubscribe\r\n$2\r\nn*\r\n:3\r\n");
    roundtrip(
        &mut sub,
        "GET k\r\n",
        "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
    );
    let mut resp3 = connect(srv.addr);
    resp3.write_all(b"HELLO 3\r\n").expect("send");
    assert!(read_until(&mut resp3, HELLO_END).starts_with("%8\r\n"));
    roundtrip(&mut resp3, "SUBSCRIBE news\r\n", ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
    roundtrip(&mut resp3, "GET k\r\n", "_\r\n");

    let mut publisher = connect(srv.addr);
    roundtrip(&mut publisher, "PUBLISH news hi\r\n", ":3\r\n");
    roundtrip(&mut publisher, "PUBLISH weather rain\r\n", ":0\r\n");
    roundtrip(
        &mut publisher,
        "PUBSUB NUMSUB news sport none\r\n",
        "*6\r\n$4\r\nnews\r\n:2\r\n$5\r\nsport\r\n:1\r\n$4\r\nnone\r\n:0\r\n",
    );
    roundtrip(&mut publisher, "PUBSUB NUMPAT\r\n", ":1\r\n");
    roundtrip(&mut publisher, "PUBSUB CHANNELS s*\r\n", "*1\r\n$5\r\nsport\r\n");
    expect(&mut sub, "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
    expect(&mut sub, "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
    expect(&mut resp3, ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");

    roundtrip(
        &mut sub,
        "UNSUBSCRIBE\r\nPUNSUBSCRIBE\r\n",
        "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnews\r\n:2\r\n*3\r\n$11\r\nunsubscribe\r\n$5\r\nsport\r\n:1\r\n\
         *3\r\n$12\r\npunsubscribe\r\n$2\r\nn*\r\n:0\r\n",
    );
    roundtrip(&mut sub, "UNSUBSCRIBE\r\nGET k\r\n", "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n$-1\r\n");
    drop(resp3);
    // A subscriber that leaves is forgotten.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        publisher.write_all(b"PUBLISH news again\r\n").expect("send");
        if line(&mut publisher) == ":0\r\n" {
            break;
        }
        assert!(Instant::now() < deadline, "a closed subscriber still receives");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_subscriber_that_does_not_read_is_dropped_and_publishers_never_wait() {
    let srv = start(|_| {});
    let mut slow = connect(srv.addr);
    roundtrip(&mut slow, "SUBSCRIBE firehose\r\n", "*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n");
    let mut publisher = connect(srv.addr);
    let payload = "x".repeat(1 << 20);
    let started = Instant::now();
    let mut received = Vec::new();
    for _ in 0..80 {
        let request = format!("*3\r\n$7\r\nPUBLISH\r\n$8\r\nfirehose\r\n${}\r\n{payload}\r\n", payload.len());
        publisher.write_all(request.as_bytes()).expect("send");
        received.push(line(&mut publisher));
    }
    assert!(started.elapsed() < Duration::from_secs(60), "publishing took {:?}", started.elapsed());
    assert_eq!(received.first().map(String::as_str), Some(":1\r\n"));
    assert_eq!(received.last().map(String::as_str), Some(":0\r\n"), "dropped once its queue was over the limit");
    assert!(closed_within(&mut slow, Duration::from_secs(30)), "its connection closed");
}

#[test]
fn protected_mode_refuses_other_hosts_when_open_on_every_interface() {
    // An address of this machine that is not loopback, if it has one.
    let Some(ip) = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("10.255.255.255:9").and_then(|()| s.local_addr()))
        .ok()
        .map(|a| a.ip())
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
    else {
        eprintln!("no address but loopback: skipped");
        return;
    };
    let srv = start(|c| c.bind = "0.0.0.0:0".parse().expect("address"));
    let port = srv.addr.port();
    let mut local = connect(SocketAddr::from(([127, 0, 0, 1], port)));
    roundtrip(&mut local, "PING\r\n", "+PONG\r\n");
    let mut remote = connect(SocketAddr::new(ip, port));
    let denied = line(&mut remote);
    assert!(denied.starts_with("-DENIED Redis is running in protected mode"), "{denied}");
    assert!(closed_within(&mut remote, Duration::from_secs(10)));

    let open = start(|c| {
        c.bind = "0.0.0.0:0".parse().expect("address");
        c.protected_mode = false;
    });
    let mut remote = connect(SocketAddr::new(ip, open.addr.port()));
    roundtrip(&mut remote, "PING\r\n", "+PONG\r\n");
    let _ = &srv.rt;
}
