//! INFO [section ...]: Redis's `server`, `clients`, `persistence` and `stats` sections,
//! then the engine's own statistics from `Keyspace::stats()` of the selected database: block
//! reads by kind, the block cache, filter probes and false positives per level, the write
//! path, and that database's tree. `db_index` and `db_keyspace` say which.

use super::admin::REDIS_COMPAT_VERSION;
use super::{selected, Args};
use crate::reply::Reply;
use crate::session::{Ctx, ServerCounters};
use shamba::{BlockKind, Stats};
use std::fmt::Write;

type Section = fn(&Ctx<'_>, &Stats, &mut String);

/// Every section, in the order INFO prints them.
const SECTIONS: &[(&str, Section)] = &[
    ("server", server),
    ("clients", clients),
    ("persistence", persistence),
    ("stats", stats),
    ("shamba_io", io),
    ("shamba_cache", cache),
    ("shamba_filters", filters),
    ("shamba_writes", writes),
    ("shamba_levels", levels),
];

pub(super) fn info(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let wanted: Vec<String> = args.iter().skip(1).map(|a| String::from_utf8_lossy(a).to_lowercase()).collect();
    let all = wanted.is_empty() || wanted.iter().any(|w| matches!(w.as_str(), "all" | "everything" | "default"));
    let stats = selected!(ctx).stats();
    let mut out = String::new();
    for (name, section) in SECTIONS {
        if all || wanted.iter().any(|w| w == name) {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            let title = name.strip_prefix("shamba_").map_or_else(|| capitalize(name), |n| format!("Shamba_{n}"));
            let _ = write!(out, "# {title}\r\n");
            section(ctx, &stats, &mut out);
        }
    }
    Reply::Text(out)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

/// `name:value\r\n`.
fn line(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, "{name}:{value}\r\n");
}

fn server(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    let s = ctx.server;
    line(out, "redis_version", REDIS_COMPAT_VERSION);
    line(out, "shamba_version", env!("CARGO_PKG_VERSION"));
    line(out, "redis_mode", "standalone");
    line(out, "process_id", std::process::id());
    line(out, "tcp_port", s.bind.port());
    line(out, "uptime_in_seconds", s.started.elapsed().as_secs());
    line(out, "db_path", s.store.db().path().display());
    line(out, "db_index", ctx.session.db);
    line(out, "db_keyspace", crate::databases::keyspace_name(ctx.session.db));
    line(out, "databases", s.store.databases().count());
}

fn clients(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    line(out, "connected_clients", ServerCounters::get(&ctx.server.counters.connected));
    line(out, "blocked_clients", ctx.server.waiters.blocked());
}

fn persistence(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    line(out, "loading", 0);
    line(out, "aof_enabled", 1);
    line(out, "shamba_sync", ctx.server.store.sync_mode().name());
}

fn stats(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    let c = &ctx.server.counters;
    line(out, "total_connections_received", ServerCounters::get(&c.connections_received));
    line(out, "total_commands_processed", ServerCounters::get(&c.commands));
    line(out, "total_protocol_errors", ServerCounters::get(&c.protocol_errors));
}

fn io(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    for kind in BlockKind::ALL {
        line(out, &format!("block_reads_{}", kind.name()), st.io.reads_of(kind));
        line(out, &format!("block_read_bytes_{}", kind.name()), st.io.bytes_of(kind));
    }
}

fn cache(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    for (kind, c) in BlockKind::ALL.iter().zip(&st.cache) {
        line(out, &format!("cache_hits_{}", kind.name()), c.hits);
        line(out, &format!("cache_misses_{}", kind.name()), c.misses);
        line(out, &format!("cache_bytes_{}", kind.name()), c.bytes_resident);
    }
    line(out, "cache_usage", st.cache_usage);
    line(out, "cache_capacity", st.cache_capacity);
    line(out, "pinned_table_bytes", st.pinned_table_bytes);
    line(out, "pinned_metadata_limit", st.pinned_metadata_limit);
    line(out, "tables_metadata_in_cache", st.tables_metadata_in_cache);
    line(out, "open_table_files", st.open_table_files);
}

fn filters(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    line(out, "gets", st.gets);
    line(out, "memtable_hits", st.memtable_hits);
    line(out, "filter_negatives", st.filter_negatives);
    line(out, "filter_false_positives", st.filter_false_positives);
    line(out, "table_hits", st.table_hits);
    for (i, l) in st.lookup_levels.iter().enumerate() {
        line(
            out,
            &format!("level{i}"),
            format_args!(
                "table_lookups={},filter_parts_probed={},filter_negatives={},false_positives={},filters_skipped={},hits={}",
                l.table_lookups, l.filter_parts_probed, l.filter_negatives, l.false_positives, l.filters_skipped, l.hits
            ),
        );
    }
}

fn writes(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    line(out, "write_ops", st.write_ops);
    line(out, "write_groups", st.write_groups);
    line(out, "wal_syncs", st.wal_syncs);
    line(out, "wal_bytes", st.wal_bytes);
    line(out, "memtable_bytes", st.memtable_bytes);
    line(out, "immutable_memtables", st.immutable_memtables);
    line(out, "flushes", st.flushes);
    line(out, "compactions", st.compactions);
    line(out, "compaction_bytes_written", st.compaction_bytes_written);
    line(out, "delayed_micros", st.delayed_micros);
    line(out, "stopped_micros", st.stopped_for_flush_micros + st.stopped_for_compaction_micros);
}

fn levels(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    for (i, l) in st.levels.iter().enumerate() {
        line(
            out,
            &format!("level{i}"),
            format_args!(
                "files={},runs={},bytes={},entries={},filter_bytes={},index_bytes={}",
                l.files, l.runs, l.bytes, l.entries, l.filter_bytes, l.index_bytes
            ),
        );
    }
}
