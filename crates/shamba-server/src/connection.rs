//! One client connection: read what has arrived, parse every whole request in it, run
//! them, write the replies in order, repeat. The requests run here, on the connection's
//! own task, as long as none needs to wait (a block to read from disk, a write stall, a
//! sync: see `no_wait`); from the first that does, the rest of them run together on the
//! blocking pool. A request that finds what it needs in memory thus costs no hand-off to
//! another thread, and a pipeline at most one.
//!
//! The stream is any byte stream (TCP, or TLS over it). While it waits for input, a
//! connection also writes the pub/sub messages queued for it, closes when another client
//! kills it, and closes when idle past the server's `timeout`.

use super::clients::Client;
use super::pubsub::Message;
use super::resp::{parse_request, Limits, ProtocolError};
use super::session::{Server, ServerCounters, Session};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

/// Most words in a request before the client authenticates (Redis's bound).
const UNAUTHENTICATED_ARGS: usize = 10;

/// Longest bulk string before the client authenticates (Redis's bound).
const UNAUTHENTICATED_BULK: usize = 16 << 10;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 64 << 10;

/// Where a connection comes from and arrives: what protected mode and CLIENT LIST look at.
#[derive(Debug)]
pub(super) struct Peer {
    pub(super) addr: SocketAddr,
    pub(super) local: SocketAddr,
    /// The address its listener is bound to (protected mode looks for every interface).
    pub(super) listening: SocketAddr,
    /// The socket's descriptor (CLIENT LIST's `fd`).
    pub(super) fd: i64,
}

/// Serve one connection until the client leaves, sends QUIT or a malformed request, is
/// killed or idle too long, or the server stops (then requests already read are answered
/// first). A client refused by protected mode or `maxclients` is told why first.
pub(super) async fn serve<S>(server: Arc<Server>, mut stream: S, peer: Peer, mut stopping: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + AsRawFd + Unpin + Send,
{
    if server.conns.auth.refuses(&peer.listening, &peer.addr) {
        let _ = stream.write_all(super::auth::DENIED.as_bytes()).await;
        return;
    }
    let Ok((client, outbox)) = server.conns.registry.register(peer.addr, peer.local, peer.fd) else {
        ServerCounters::add(&server.counters.rejected_connections, 1);
        let _ = stream.write_all(b"-ERR max number of clients reached\r\n").await;
        return;
    };
    ServerCounters::add(&server.counters.connected, 1);
    let mut session = Session::new(client.id);
    session.authenticated = !server.conns.auth.required();
    session.client = Some(client.clone());
    let _ = run(&server, &mut stream, &mut session, &client, outbox, &mut stopping).await;
    let _ = stream.shutdown().await;
    ServerCounters::sub(&server.counters.connected, 1);
    client.input_done();
    server.end_session(&mut session);
    if client.ever_subscribed.load(std::sync::atomic::Ordering::Relaxed) {
        // A session lost to a failed batch leaves its subscriptions behind: drop them by id.
        server.conns.pubsub.remove_client(client.id);
    }
    server.conns.registry.remove(client.id);
}

async fn run<S>(
    server: &Arc<Server>,
    stream: &mut S,
    session: &mut Session,
    client: &Arc<Client>,
    mut outbox: mpsc::UnboundedReceiver<Message>,
    stopping: &mut watch::Receiver<bool>,
) -> std::io::Result<()>
where
    S: AsyncRead + AsyncWrite + AsRawFd + Unpin + Send,
{
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    loop {
        let one_at_a_time = !session.authenticated;
        let (requests, malformed) = parse_all(server, &mut buf, !one_at_a_time);
        if !requests.is_empty() {
            // Bytes read while the requests ran on the pool: parsed before reading again.
            let mut read_meanwhile = false;
            let mut requests = VecDeque::from(requests);
            let mut out = Vec::new();
            // Blocking commands take their place in line as they are read, before anything
            // runs (see `blocking`).
            let arrived = crate::commands::blocking_pops::arrive(server, session.id, &requests);
            server.run_without_waiting(session, &mut requests, &mut out);
            if requests.is_empty() && arrived {
                // All answered here (a QUIT before them): they leave the line.
                server.waiters.departed(session.id);
            }
            if !requests.is_empty() {
                let srv = Arc::clone(server);
                let mut moved = std::mem::replace(session, Session::new(session.id));
                let task = tokio::task::spawn_blocking(move || {
                    let line = LeavesLine(&srv, moved.id);
                    srv.run_batch(&mut moved, requests.into(), &mut out);
                    drop(line);
                    (moved, out)
                });
                tokio::pin!(task);
                // Meanwhile, watch the socket: a client that leaves while its request waits
                // (a blocking pop) is marked killed, so the wait ends without popping an
                // element nobody would receive. What it sends meanwhile is kept for later.
                let mut gone = false;
                let (s, o) = loop {
                    buf.reserve(READ_CHUNK);
                    tokio::select! {
                        done = &mut task => break done.map_err(std::io::Error::other)?,
                        read = stream.read_buf(&mut buf), if !gone => match read {
                            Ok(0) | Err(_) => {
                                gone = true;
                                client.kill();
                            }
                            Ok(n) => {
                                read_meanwhile = true;
                                ServerCounters::add(&server.counters.net_input_bytes, n as u64);
                            }
                        },
                    }
                };
                *session = s;
                out = o;
                if gone {
                    let _ = stream.write_all(&out).await;
                    return Ok(());
                }
            }
            // A subscriber's socket is probed from before its replies go out (see
            // `input_probe`); a client subscribed to nothing holds no probe.
            client.input.follow(&*stream, session.subs.count() > 0);
            ServerCounters::add(&server.counters.net_output_bytes, out.len() as u64);
            stream.write_all(&out).await?;
            if session.closing || client.is_killed() {
                return Ok(());
            }
            if one_at_a_time && malformed.is_none() && !buf.is_empty() {
                // Read before AUTH, one at a time: the next may be in `buf` already.
                continue;
            }
            if read_meanwhile && malformed.is_none() {
                // The client may be waiting for the replies to what it already sent.
                continue;
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
        // Subscribers are never closed for being idle.
        let idle_limit = server.conns.idle_timeout().filter(|_| session.subs.count() == 0);
        let idle = async move {
            match idle_limit {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        buf.reserve(READ_CHUNK);
        // Everything read so far is answered: waiting for more (marked as reading from
        // each read of the socket until its requests are answered; see `input_probe`).
        client.answered_all();
        let mut marked = crate::input_probe::MarkedRead { stream: &mut *stream, client };
        tokio::select! {
            read = marked.read_buf(&mut buf) => {
                let n = read?;
                if n == 0 {
                    return Ok(());
                }
                ServerCounters::add(&server.counters.net_input_bytes, n as u64);
            }
            Some(first) = outbox.recv() => write_messages(stream, session, client, first, &mut outbox).await?,
            () = client.killed() => return Ok(()),
            () = idle => return Ok(()),
            _ = stopping.changed() => return Ok(()),
        }
    }
}

/// The blocking commands of a client's requests that did not block or answer leave the
/// line when the requests are over, even if running them failed: nobody behind them waits
/// for ever (see `blocking`).
struct LeavesLine<'a>(&'a Server, u64);

impl Drop for LeavesLine<'_> {
    fn drop(&mut self) {
        self.0.waiters.departed(self.1);
    }
}

/// Write `first` and every other message queued by now, in the session's protocol.
async fn write_messages<S>(
    stream: &mut S,
    session: &Session,
    client: &Client,
    first: Message,
    outbox: &mut mpsc::UnboundedReceiver<Message>,
) -> std::io::Result<()>
where
    S: AsyncWrite + Unpin,
{
    let mut out = Vec::new();
    let mut next = Some(first);
    while let Some(msg) = next {
        client.delivered(&msg);
        msg.reply().encode(session.proto, &mut out);
        if out.len() >= READ_CHUNK {
            break;
        }
        next = outbox.try_recv().ok();
    }
    stream.write_all(&out).await
}

/// Every whole request at the front of `buf` (removed from it), and the error that stops
/// parsing, if one does. Before a client authenticates, as in Redis, its requests are read
/// one at a time (AUTH may change what the next may be) and kept small: at most
/// [`UNAUTHENTICATED_ARGS`] words of at most [`UNAUTHENTICATED_BULK`] bytes.
fn parse_all(
    server: &Server,
    buf: &mut Vec<u8>,
    authenticated: bool,
) -> (Vec<super::resp::Args>, Option<ProtocolError>) {
    let limits = if authenticated {
        server.limits
    } else {
        Limits {
            max_args: UNAUTHENTICATED_ARGS.min(server.limits.max_args),
            max_bulk: UNAUTHENTICATED_BULK.min(server.limits.max_bulk),
            ..server.limits
        }
    };
    let mut requests = Vec::new();
    let mut consumed = 0;
    let mut malformed = None;
    while consumed < buf.len() && (authenticated || requests.is_empty()) {
        match parse_request(buf.get(consumed..).unwrap_or_default(), &limits) {
            Ok(Some((args, n))) => {
                requests.push(args);
                consumed += n;
            }
            Err(ProtocolError(why)) if !authenticated && why.ends_with("bulk length") => {
                malformed = Some(ProtocolError(why.replace("invalid", "unauthenticated")));
                break;
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
