//! `--metrics-bind ADDR`: the server's and the engine's counters in Prometheus's text
//! format on `GET /metrics`, from a minimal HTTP/1.1 responder (one request per
//! connection, then close) on the server's runtime. A scrape reads atomics and one
//! `Db::stats()`; it takes no lock a command holds.

use crate::commands::stats::{FAMILIES, LATENCY_BOUNDS_US};
use crate::session::{Server, ServerCounters};
use shamba::BlockKind;
use std::fmt::Write;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest request head read; a longer one is answered 431 and closed.
const MAX_HEAD: usize = 8 << 10;

/// Serve scrapes on `listener` until the task is aborted.
pub(crate) async fn serve(listener: TcpListener, server: Arc<Server>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(answer(stream, server.clone()));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Read one request head and answer it: the metrics for `GET /metrics`, 404 for another
/// path, 405 for another method.
async fn answer(mut stream: TcpStream, server: Arc<Server>) {
    let mut head = Vec::with_capacity(1024);
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut chunk = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(chunk.get(..n).unwrap_or_default());
        }
        Ok::<(), std::io::Error>(())
    })
    .await;
    if !matches!(read, Ok(Ok(()))) {
        return;
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let mut words = line.split(|&b| b == b' ');
    let (method, path) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
    let path = path.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, body) = if head.len() >= MAX_HEAD {
        ("431 Request Header Fields Too Large", String::new())
    } else if method != b"GET" && method != b"HEAD" {
        ("405 Method Not Allowed", String::new())
    } else if path == b"/metrics" {
        let s = server.clone();
        match tokio::task::spawn_blocking(move || render(&s)).await {
            Ok(text) => ("200 OK", text),
            Err(_) => ("500 Internal Server Error", String::new()),
        }
    } else {
        ("404 Not Found", "try /metrics\n".to_string())
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != b"HEAD" {
        out.push_str(&body);
    }
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// `# HELP` and `# TYPE` lines of a metric.
fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n");
}

fn sample(out: &mut String, name: &str, labels: &str, value: impl std::fmt::Display) {
    if labels.is_empty() {
        let _ = writeln!(out, "{name} {value}");
    } else {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

/// The metrics as Prometheus's text exposition format (version 0.0.4).
pub(crate) fn render(server: &Server) -> String {
    let mut out = String::with_capacity(16 << 10);
    let c = &server.counters;
    let stats = &c.by_command;

    header(&mut out, "shamba_requests_total", "counter", "Commands run, by command.");
    for (spec, s) in stats.used() {
        sample(&mut out, "shamba_requests_total", &format!("command=\"{}\"", spec.name()), s.calls.load(Relaxed));
    }
    header(
        &mut out,
        "shamba_request_errors_total",
        "counter",
        "Commands that answered an error (failed) or were refused before running (rejected), by command.",
    );
    for (spec, s) in stats.used() {
        let name = spec.name();
        sample(
            &mut out,
            "shamba_request_errors_total",
            &format!("command=\"{name}\",kind=\"failed\""),
            s.failed.load(Relaxed),
        );
        sample(
            &mut out,
            "shamba_request_errors_total",
            &format!("command=\"{name}\",kind=\"rejected\""),
            s.rejected.load(Relaxed),
        );
    }
    header(&mut out, "shamba_request_duration_seconds", "histogram", "Time commands took to run, by command family.");
    for (family, h) in FAMILIES.iter().zip(stats.latency.iter()) {
        let mut cumulative = 0u64;
        for (i, b) in h.buckets.iter().enumerate() {
            cumulative += b.load(Relaxed);
            let le = LATENCY_BOUNDS_US.get(i).map_or_else(|| "+Inf".to_string(), |us| format!("{}", *us as f64 / 1e6));
            sample(
                &mut out,
                "shamba_request_duration_seconds_bucket",
                &format!("family=\"{family}\",le=\"{le}\""),
                cumulative,
            );
        }
        sample(
            &mut out,
            "shamba_request_duration_seconds_sum",
            &format!("family=\"{family}\""),
            h.sum_us.load(Relaxed) as f64 / 1e6,
        );
        sample(&mut out, "shamba_request_duration_seconds_count", &format!("family=\"{family}\""), cumulative);
    }
    let simple: [(&str, &str, &str, u64); 6] = [
        (
            "shamba_net_input_bytes_total",
            "counter",
            "Bytes read from clients.",
            ServerCounters::get(&c.net_input_bytes),
        ),
        (
            "shamba_net_output_bytes_total",
            "counter",
            "Bytes written to clients.",
            ServerCounters::get(&c.net_output_bytes),
        ),
        (
            "shamba_connections_received_total",
            "counter",
            "Connections accepted.",
            ServerCounters::get(&c.connections_received),
        ),
        ("shamba_connected_clients", "gauge", "Connections open now.", ServerCounters::get(&c.connected)),
        (
            "shamba_protocol_errors_total",
            "counter",
            "Connections closed for a malformed request.",
            ServerCounters::get(&c.protocol_errors),
        ),
        ("shamba_error_replies_total", "counter", "Error replies sent.", stats.error_replies()),
    ];
    for (name, kind, help, v) in simple {
        header(&mut out, name, kind, help);
        sample(&mut out, name, "", v);
    }

    let st = server.store.db().stats();
    header(
        &mut out,
        "shamba_engine_block_reads_total",
        "counter",
        "Blocks read from storage (cache misses), by block kind.",
    );
    for kind in BlockKind::ALL {
        sample(&mut out, "shamba_engine_block_reads_total", &format!("kind=\"{}\"", kind.name()), st.io.reads_of(kind));
    }
    header(
        &mut out,
        "shamba_engine_block_read_bytes_total",
        "counter",
        "Bytes of blocks read from storage, by block kind.",
    );
    for kind in BlockKind::ALL {
        sample(
            &mut out,
            "shamba_engine_block_read_bytes_total",
            &format!("kind=\"{}\"", kind.name()),
            st.io.bytes_of(kind),
        );
    }
    header(&mut out, "shamba_engine_cache_hits_total", "counter", "Block cache hits, by block kind.");
    for (kind, k) in BlockKind::ALL.iter().zip(&st.cache) {
        sample(&mut out, "shamba_engine_cache_hits_total", &format!("kind=\"{}\"", kind.name()), k.hits);
    }
    let engine: [(&str, &str, &str, u64); 15] = [
        ("shamba_engine_gets_total", "counter", "Point lookups.", st.gets),
        (
            "shamba_engine_filter_negatives_total",
            "counter",
            "Table lookups a filter answered 'absent'.",
            st.filter_negatives,
        ),
        (
            "shamba_engine_filter_false_positives_total",
            "counter",
            "Table lookups a filter let through that found nothing.",
            st.filter_false_positives,
        ),
        ("shamba_engine_memtable_hits_total", "counter", "Lookups answered by a memtable.", st.memtable_hits),
        ("shamba_engine_write_ops_total", "counter", "Write operations.", st.write_ops),
        ("shamba_engine_wal_syncs_total", "counter", "WAL syncs.", st.wal_syncs),
        ("shamba_engine_wal_bytes_total", "counter", "Bytes written to the WAL.", st.wal_bytes),
        ("shamba_engine_flushes_total", "counter", "Memtable flushes.", st.flushes),
        ("shamba_engine_compactions_total", "counter", "Compactions run.", st.compactions),
        (
            "shamba_engine_compaction_bytes_written_total",
            "counter",
            "Bytes written by compactions.",
            st.compaction_bytes_written,
        ),
        (
            "shamba_engine_stall_delayed_microseconds_total",
            "counter",
            "Time writes were slowed down.",
            st.delayed_micros,
        ),
        (
            "shamba_engine_stall_stopped_microseconds_total",
            "counter",
            "Time writes were stopped (waiting for a flush or a compaction).",
            st.stopped_for_flush_micros + st.stopped_for_compaction_micros,
        ),
        (
            "shamba_engine_pending_compaction_bytes",
            "gauge",
            "Bytes the levels hold beyond their targets (writes slow down and stop on it).",
            st.pending_compaction_bytes,
        ),
        ("shamba_engine_memtable_bytes", "gauge", "Bytes in the active memtable.", st.memtable_bytes as u64),
        ("shamba_engine_cache_bytes", "gauge", "Bytes in the block cache.", st.cache_usage as u64),
    ];
    for (name, kind, help, v) in engine {
        header(&mut out, name, kind, help);
        sample(&mut out, name, "", v);
    }
    out
}
