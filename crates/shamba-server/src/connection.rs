//! One client connection: read what has arrived, parse every whole request in it, run
//! them, write the replies in order, repeat. The requests run here, on the connection's
//! own task, as long as none needs to wait (a block to read from disk, a write stall, a
//! sync: see `no_wait`); from the first that does, the rest of them run together on the
//! blocking pool. A request that finds what it needs in memory thus costs no hand-off to
//! another thread, and a pipeline at most one.

use super::resp::{parse_request, ProtocolError};
use super::session::{Server, ServerCounters, Session};
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 64 << 10;

/// Serve one connection until the client leaves, sends QUIT or a malformed request, or the
/// server stops (then requests already read are answered first).
pub(super) async fn serve(server: Arc<Server>, mut stream: TcpStream, id: u64, mut stopping: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    ServerCounters::add(&server.counters.connected, 1);
    let _ = run(&server, &mut stream, id, &mut stopping).await;
    ServerCounters::sub(&server.counters.connected, 1);
}

async fn run(
    server: &Arc<Server>,
    stream: &mut TcpStream,
    id: u64,
    stopping: &mut watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut session = Session::new(id);
    loop {
        let (requests, malformed) = parse_all(server, &mut buf);
        if !requests.is_empty() {
            let mut requests = VecDeque::from(requests);
            let mut out = Vec::new();
            server.run_without_waiting(&mut session, &mut requests, &mut out);
            if !requests.is_empty() {
                let srv = Arc::clone(server);
                (session, out) = tokio::task::spawn_blocking(move || {
                    srv.run_batch(&mut session, requests.into(), &mut out);
                    (session, out)
                })
                .await
                .map_err(std::io::Error::other)?;
            }
            stream.write_all(&out).await?;
            if session.closing {
                return Ok(());
            }
        }
        if let Some(ProtocolError(why)) = malformed {
            ServerCounters::add(&server.counters.protocol_errors, 1);
            let mut out = Vec::new();
            super::reply::Reply::err(format!("Protocol error: {why}")).encode(session.proto, &mut out);
            stream.write_all(&out).await?;
            return Ok(());
        }
        if *stopping.borrow() {
            return Ok(());
        }
        buf.reserve(READ_CHUNK);
        tokio::select! {
            read = stream.read_buf(&mut buf) => {
                if read? == 0 {
                    return Ok(());
                }
            }
            _ = stopping.changed() => return Ok(()),
        }
    }
}

/// Every whole request at the front of `buf` (removed from it), and the error that stops
/// parsing, if one does.
fn parse_all(server: &Server, buf: &mut Vec<u8>) -> (Vec<super::resp::Args>, Option<ProtocolError>) {
    let mut requests = Vec::new();
    let mut consumed = 0;
    let mut malformed = None;
    while consumed < buf.len() {
        match parse_request(buf.get(consumed..).unwrap_or_default(), &server.limits) {
            Ok(Some((args, n))) => {
                requests.push(args);
                consumed += n;
            }
            Ok(None) => break,
            Err(e) => {
                malformed = Some(e);
                break;
            }
        }
    }
    buf.drain(..consumed);
    if malformed.is_none() && buf.len() > server.limits.max_query {
        malformed = Some(ProtocolError("request over the query buffer limit".into()));
    }
    (requests, malformed)
}
