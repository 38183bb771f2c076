//! One client connection: read what has arrived, parse every whole request in it, run
//! them together on the blocking pool (engine calls may read the disk, sync the WAL or
//! wait out a write stall, so they never run on the async workers), write the replies in
//! order, repeat. Pipelined requests therefore cost one hand-off per read, not per request.

use super::resp::{parse_request, ProtocolError};
use super::session::{Server, ServerCounters, Session};
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
            let srv = Arc::clone(server);
            let (s, out) = tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                srv.run_batch(&mut session, requests, &mut out);
                (session, out)
            })
            .await
            .map_err(std::io::Error::other)?;
            session = s;
            ServerCounters::add(&server.counters.net_output_bytes, out.len() as u64);
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
                let n = read?;
                if n == 0 {
                    return Ok(());
                }
                ServerCounters::add(&server.counters.net_input_bytes, n as u64);
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
