//! The entry point the `resp` fuzz target (fuzz/fuzz_targets/resp.rs) and its stable
//! replay (tests/fuzz_corpus.rs) share: bytes as a client sends them, read by
//! [`parse_request`] and run by [`Server::execute`] as a connection would, with the
//! invariants checked that the types do not promise. Not part of the server's API.
//!
//! Checked for every input: the parser never panics, reports progress (at least one byte,
//! at most what it was given), never yields more argument bytes than it consumed, parses
//! the consumed bytes alone to the same request, asks for more on every shorter prefix
//! tried, and a request re-encoded as a RESP array parses back to the same arguments.
//! Commands never panic, and every reply encodes in RESP2 and RESP3 to exactly one
//! well-formed frame. After an input that ran a write, `FLUSHALL` empties the databases,
//! so each input starts from empty ones.

#![allow(clippy::panic)]

use crate::auth::Auth;
use crate::clients::Connections;
use crate::cursor::CursorTable;
use crate::session::ServerCounters;
use crate::{command, parse_request, Limits, Protocol, Reply, Server, Session, Store, SyncMode};
use shamba::{Db, Options};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// Small limits, so inputs of a few hundred bytes reach every limit's branch.
pub const LIMITS: Limits = Limits { max_bulk: 512, max_args: 64, max_inline: 256, max_query: 4096 };

/// The fuzz server's password.
pub const FUZZ_PASSWORD: &[u8] = b"fuzz";

/// Most requests one input runs.
const MAX_REQUESTS: usize = 256;

/// Databases SELECT chooses among.
const DATABASES: usize = 4;

/// A server over a new database in `dir` (created), its WAL never synced, with
/// [`LIMITS`].
///
/// # Errors
///
/// The engine's, when the database or a numbered database's keyspace does not open.
pub fn server_in(dir: &Path) -> shamba::Result<Server> {
    let opts = Options { write_buffer_size: 1 << 20, ..Options::default() };
    let db = Db::open(dir, opts)?;
    Ok(Server {
        store: Store::new(db, SyncMode::Never, DATABASES)?,
        cursors: CursorTable::new(),
        limits: LIMITS,
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        started: Instant::now(),
        counters: ServerCounters::default(),
        // A password, so that AUTH, HELLO's AUTH and RESET (which signs a session out)
        // reach every state; sessions start signed in.
        conns: Connections::new(Auth::new(Some(FUZZ_PASSWORD.to_vec()), true), 64, 0),
        settings: crate::runtime_settings::RuntimeSettings::default(),
        waiters: crate::blocking::Waiters::default(),
        // No scripts: one that loops forever would stop the campaign (a script is never
        // stopped by time alone, as in Redis).
        scripts: crate::scripting::Scripts::disabled(),
        shutdown: tokio::sync::Notify::new(),
    })
}

/// Prefix of the shared servers' directories in the system's temporary one.
const DIR_PREFIX: &str = "shamba-fuzz-resp-";

/// The process's server, in a directory of the system's temporary one named by the
/// process id (emptied first); `None` if it could not be opened. A process ends without
/// removing it, so the directories of processes gone are removed first (where `/proc`
/// says which are gone).
fn shared() -> Option<&'static Server> {
    static SERVER: OnceLock<Option<Server>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let tmp = std::env::temp_dir();
            remove_stale(&tmp);
            let dir: PathBuf = tmp.join(format!("{DIR_PREFIX}{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            server_in(&dir).ok()
        })
        .as_ref()
}

/// Remove the shared servers' directories under `tmp` whose process has ended.
fn remove_stale(tmp: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(DIR_PREFIX) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The fuzz target: `data` run against the process's server (see [`fuzz_request_on`]).
pub fn fuzz_request(data: &[u8]) {
    let Some(server) = shared() else { panic!("the fuzz database did not open") };
    fuzz_request_on(server, data);
}

/// Read `data` as a connection reads its input, request after request until it runs out,
/// is malformed or asks to close, checking the parser's invariants; run each request on
/// `server` for one new session and check its reply's encodings. Panics when an invariant
/// does not hold.
pub fn fuzz_request_on(server: &Server, data: &[u8]) {
    let mut session = Session::new(1);
    let mut rest = data;
    let mut wrote = false;
    for _ in 0..MAX_REQUESTS {
        let Some((args, used)) = parse_checked(rest) else { break };
        rest = rest.get(used..).unwrap_or_default();
        if args.is_empty() {
            continue;
        }
        wrote |= args.first().and_then(|name| command(name)).is_some_and(|c| c.is_write());
        let reply = server.execute(&mut session, &args);
        check_encodings(&reply);
        if session.is_closing() {
            break;
        }
    }
    server.end_session(&mut session);
    if wrote {
        let mut admin = Session::new(0);
        let reply = server.execute(&mut admin, &[b"FLUSHALL".to_vec()]);
        assert!(reply == Reply::OK || matches!(reply, Reply::Error(_)), "FLUSHALL answered {reply:?}");
    }
}

/// Parse one request from the front of `buf` and check the parser's invariants; `None`
/// when `buf` holds no whole request or a malformed one.
fn parse_checked(buf: &[u8]) -> Option<(Vec<Vec<u8>>, usize)> {
    let (args, used) = parse_request(buf, &LIMITS).ok()??;
    assert!(used >= 1 && used <= buf.len(), "consumed {used} of {} bytes", buf.len());
    let arg_bytes: usize = args.iter().map(Vec::len).sum();
    assert!(arg_bytes <= used, "{arg_bytes} argument bytes from {used} consumed");
    assert!(args.len() <= LIMITS.max_args.max(LIMITS.max_inline), "{} arguments", args.len());
    let whole = buf.get(..used).unwrap_or_default();
    assert_eq!(parse_request(whole, &LIMITS), Ok(Some((args.clone(), used))), "the consumed bytes alone");
    for cut in [used - 1, used / 2, 1].into_iter().filter(|&c| c < used) {
        let prefix = buf.get(..cut).unwrap_or_default();
        assert_eq!(parse_request(prefix, &LIMITS), Ok(None), "a prefix of {cut} of {used} bytes");
    }
    if !args.is_empty() && args.len() <= LIMITS.max_args && args.iter().all(|a| a.len() <= LIMITS.max_bulk) {
        let encoded = encode_request(&args);
        assert_eq!(parse_request(&encoded, &LIMITS), Ok(Some((args.clone(), encoded.len()))), "re-encoded");
    }
    Some((args, used))
}

/// `args` as a client sends them: a RESP array of bulk strings.
pub fn encode_request(args: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Both encodings of `reply` are whole frames (one each, or one per part of
/// [`Reply::Frames`], none when there are none), of the same shape.
fn check_encodings(reply: &Reply) {
    if let Reply::Frames(parts) = reply {
        // None at all when CLIENT REPLY silenced it.
        parts.iter().for_each(check_encodings);
        return;
    }
    for proto in [Protocol::Resp2, Protocol::Resp3] {
        let mut out = Vec::new();
        reply.encode(proto, &mut out);
        match frame_len(&out, 0, proto) {
            Some(end) if end == out.len() => {}
            end => panic!(
                "{reply:?} in {proto:?} encoded as {:?}, a frame ending at {end:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
}

/// Where the reply frame starting at `at` ends, if it is well formed.
fn frame_len(buf: &[u8], at: usize, proto: Protocol) -> Option<usize> {
    let kind = *buf.get(at)?;
    let rest = buf.get(at + 1..)?;
    let nl = rest.windows(2).position(|w| w == b"\r\n")?;
    let line = rest.get(..nl)?;
    if line.contains(&b'\r') || line.contains(&b'\n') {
        return None;
    }
    let next = at + 1 + nl + 2;
    let number = || std::str::from_utf8(line).ok()?.parse::<i64>().ok();
    match (kind, proto) {
        (b'+' | b'-', _) => Some(next),
        (b':', _) => number().map(|_| next),
        (b'_', Protocol::Resp3) if line.is_empty() => Some(next),
        (b'$', Protocol::Resp2) if number() == Some(-1) => Some(next),
        (b'$' | b'=', _) => {
            let len = usize::try_from(number()?).ok()?;
            let end = next.checked_add(len)?;
            (buf.get(end..end + 2)? == b"\r\n").then_some(end + 2)
        }
        (b'*' | b'%' | b'>', _) => {
            if kind == b'>' && proto == Protocol::Resp2 {
                return None;
            }
            let n = usize::try_from(number()?).ok()?;
            let items = if kind == b'%' { n.checked_mul(2)? } else { n };
            if kind == b'%' && proto == Protocol::Resp2 {
                return None;
            }
            (0..items).try_fold(next, |pos, _| frame_len(buf, pos, proto))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_checker_takes_whole_frames_only() {
        let ok: &[&[u8]] = &[b"+OK\r\n", b"$3\r\nabc\r\n", b"*2\r\n:1\r\n$-1\r\n", b"-ERR x\r\n"];
        for f in ok {
            assert_eq!(frame_len(f, 0, Protocol::Resp2), Some(f.len()));
        }
        assert_eq!(frame_len(b"%1\r\n_\r\n=7\r\ntxt:abc\r\n", 0, Protocol::Resp3), Some(20));
        for bad in [&b"$3\r\nab\r\n"[..], b"*2\r\n:1\r\n", b"-E\rR\r\n", b"_\r\n", b"%0\r\n"] {
            assert_eq!(frame_len(bad, 0, Protocol::Resp2), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn inputs_reach_the_signed_out_and_subscribed_states() {
        let dir = tempfile::tempdir().unwrap();
        let server = server_in(dir.path()).unwrap();
        let mut s = Session::new(1);
        let mut run =
            |line: &str| server.execute(&mut s, &line.split(' ').map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>());
        assert_eq!(run("RESET"), Reply::Simple("RESET"));
        assert_eq!(run("GET k"), Reply::Error(crate::auth::NOAUTH.into()));
        assert_eq!(run("AUTH fuzz"), Reply::OK);
        assert!(matches!(run("SUBSCRIBE a b"), Reply::Frames(f) if f.len() == 2));
        assert!(matches!(run("GET k"), Reply::Error(e) if e.starts_with("ERR Can't execute 'get'")));
        let publish = server.execute(&mut Session::new(2), &[b"PUBLISH".to_vec(), b"a".to_vec(), b"x".to_vec()]);
        assert_eq!(publish, Reply::Int(1));
        fuzz_request_on(
            &server,
            b"RESET\r\nAUTH fuzz\r\nPSUBSCRIBE *\r\nPUBLISH c x\r\nMULTI\r\nSUBSCRIBE c\r\nEXEC\r\n",
        );
    }

    #[test]
    fn a_pipeline_runs_and_leaves_the_databases_empty() {
        let dir = tempfile::tempdir().unwrap();
        let server = server_in(dir.path()).unwrap();
        fuzz_request_on(
            &server,
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\nHELLO 3\r\nSELECT 2\r\nINCR n\r\nKEYS *\r\n",
        );
        let db0 = server.store().select(0).unwrap().unwrap();
        assert_eq!(db0.get(b"k").unwrap(), None, "emptied after the input");
    }
}
