//! What the command-layer test files share: a server bound on an ephemeral port whose
//! requests run without a socket (`Server::execute`), requests written as one line, and
//! replies shown as redis-cli would print them. Each file uses a part of it.
#![allow(dead_code)]

use shamba_server::{Listener, Reply, Server, ServerConfig, Session, SyncMode};
use std::sync::Arc;

/// A request's words: `line` split at spaces.
pub fn words(line: &str) -> Vec<Vec<u8>> {
    line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// A server on a database in `dir` (4 numbered databases, no syncs), with the runtime that
/// must outlive it.
pub fn server(dir: &std::path::Path) -> (tokio::runtime::Runtime, Arc<Server>) {
    let mut config = ServerConfig::new(dir.join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    config.databases = 4;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let server = listener.server().clone();
    (rt, server)
}

/// A server on a free loopback port, on a database in a temporary directory (no syncs) and a
/// runtime of `workers` threads of its own, serving until [`Serving::stop`] or dropped.
pub struct Serving {
    pub addr: std::net::SocketAddr,
    pub rt: tokio::runtime::Runtime,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), shamba_server::Error>>>,
    _dir: tempfile::TempDir,
}

/// Serve on a socket, with the configuration changed by `adjust` first.
pub fn serving(workers: usize, adjust: impl FnOnce(&mut ServerConfig)) -> Serving {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(dir.path().join("db"));
    config.bind = "127.0.0.1:0".parse().expect("address");
    config.sync = SyncMode::Never;
    adjust(&mut config);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().expect("runtime");
    let listener = rt.block_on(Listener::bind(&config)).expect("bind");
    let addr = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = rt.spawn(listener.serve(async {
        let _ = stopped.await;
    }));
    Serving { addr, rt, stop: Some(stop), task: Some(task), _dir: dir }
}

impl Serving {
    /// Stop serving (clients still connected are released) and wait for a clean stop.
    pub fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            self.rt.block_on(task).expect("server task").expect("clean stop");
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A client of `addr` whose reads give up after 20 s (a test fails rather than hangs).
pub fn connect(addr: std::net::SocketAddr) -> std::net::TcpStream {
    let c = std::net::TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(std::time::Duration::from_secs(20))).expect("timeout");
    c
}

/// Send `request` and read exactly `want.len()` bytes back, compared.
pub fn roundtrip(c: &mut std::net::TcpStream, request: &str, want: &str) {
    std::io::Write::write_all(c, request.as_bytes()).expect("send");
    expect(c, want);
}

/// Read exactly `want.len()` bytes, compared with `want`.
pub fn expect(c: &mut std::net::TcpStream, want: &str) {
    let mut got = vec![0; want.len()];
    std::io::Read::read_exact(c, &mut got).expect("reply");
    assert_eq!(String::from_utf8_lossy(&got), want);
}

/// Run the request `line` for session `s`.
pub fn run(server: &Server, s: &mut Session, line: &str) -> Reply {
    server.execute(s, &words(line))
}

pub fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

/// A score as redis-cli prints one: `inf`, `-inf`, `0` for either zero, else the shortest
/// decimal that reads back the same.
pub fn fmt_score(s: f64) -> String {
    if s == f64::INFINITY {
        "inf".into()
    } else if s == f64::NEG_INFINITY {
        "-inf".into()
    } else if s == 0.0 {
        "0".into()
    } else {
        format!("{s}")
    }
}

/// A reply as text, for comparing with what redis-cli would print (arrays as `[a b]`,
/// errors as `!message`, nil as `nil`).
pub fn show(r: &Reply) -> String {
    match r {
        Reply::Simple(s) => s.to_string(),
        Reply::Status(s) => s.clone(),
        Reply::Error(e) => format!("!{e}"),
        Reply::Int(i) => i.to_string(),
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Null | Reply::NullArray => "nil".into(),
        Reply::Double(d) => fmt_score(*d),
        Reply::Array(a) | Reply::Push(a) | Reply::Frames(a) => {
            format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(" "))
        }
        Reply::Map(m) => {
            format!("{{{}}}", m.iter().map(|(k, v)| format!("{}:{}", show(k), show(v))).collect::<Vec<_>>().join(" "))
        }
        Reply::Text(t) => t.clone(),
    }
}

/// Run each `(command, expected reply as shown)` in order.
pub fn script(server: &Server, s: &mut Session, steps: &[(&str, &str)]) {
    for (cmd, want) in steps {
        assert_eq!(show(&run(server, s, cmd)), *want, "{cmd}");
    }
}
