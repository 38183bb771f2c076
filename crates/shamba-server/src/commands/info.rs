//! INFO [section ...]: Redis's sections (server, clients, memory, persistence, stats,
//! replication, cpu, modules, errorstats, cluster, keyspace, commandstats), then the
//! engine's own statistics from `Keyspace::stats()` of the selected database: block reads
//! by kind, the block cache, filter probes and false positives per level, the write path,
//! and that database's tree. `db_index` and `db_keyspace` say which.
//!
//! With no argument or `default`, Redis's default sections and the engine's; `all` adds
//! commandstats; `everything` adds modules too. Section names are matched in any case.

use super::admin::REDIS_COMPAT_VERSION;
use super::{selected, Args};
use crate::reply::Reply;
use crate::session::{Ctx, ServerCounters};
use shamba::{BlockKind, Readable, Stats};
use std::fmt::Write;
use std::sync::atomic::Ordering::Relaxed;

type Section = fn(&Ctx<'_>, &Stats, &mut String);

/// Which requests print a section.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// In the default set (and in `all`, `everything`).
    Default,
    /// In `all` and `everything` only.
    All,
    /// In `everything` only.
    Everything,
}

/// Every section, in the order INFO prints them.
const SECTIONS: &[(&str, Shown, Section)] = &[
    ("server", Shown::Default, server),
    ("clients", Shown::Default, clients),
    ("memory", Shown::Default, memory),
    ("persistence", Shown::Default, persistence),
    ("stats", Shown::Default, stats),
    ("replication", Shown::Default, replication),
    ("cpu", Shown::Default, cpu),
    ("modules", Shown::Everything, modules),
    ("commandstats", Shown::All, commandstats),
    ("errorstats", Shown::Default, errorstats),
    ("cluster", Shown::Default, cluster),
    ("keyspace", Shown::Default, keyspace),
    ("shamba_io", Shown::Default, io),
    ("shamba_cache", Shown::Default, cache),
    ("shamba_filters", Shown::Default, filters),
    ("shamba_writes", Shown::Default, writes),
    ("shamba_levels", Shown::Default, levels),
];

pub(super) fn info(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let wanted: Vec<String> = args.iter().skip(1).map(|a| String::from_utf8_lossy(a).to_lowercase()).collect();
    let has = |w: &str| wanted.iter().any(|x| x == w);
    let stats = selected!(ctx).stats();
    let mut out = String::new();
    for (name, shown, section) in SECTIONS {
        let print = has(name)
            || has("everything")
            || (has("all") && *shown != Shown::Everything)
            || ((wanted.is_empty() || has("default")) && *shown == Shown::Default);
        if print {
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
    match s {
        "cpu" => "CPU".into(),
        _ => {
            let mut c = s.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        }
    }
}

/// `name:value\r\n`.
fn line(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(out, "{name}:{value}\r\n");
}

fn server(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    let s = ctx.server;
    let uptime = s.started.elapsed().as_secs();
    line(out, "redis_version", REDIS_COMPAT_VERSION);
    line(out, "shamba_version", env!("CARGO_PKG_VERSION"));
    line(out, "redis_mode", if s.store.cluster().is_some() { "cluster" } else { "standalone" });
    line(out, "os", std::env::consts::OS);
    line(out, "arch_bits", usize::BITS);
    line(out, "multiplexing_api", "tokio");
    line(out, "process_id", std::process::id());
    line(out, "run_id", format!("{:040x}", s.started.elapsed().as_nanos() ^ u128::from(std::process::id())));
    line(out, "tcp_port", s.bind.port());
    line(out, "server_time_usec", super::expiry::now_ms() * 1000);
    line(out, "uptime_in_seconds", uptime);
    line(out, "uptime_in_days", uptime / 86_400);
    line(out, "hz", 10);
    line(out, "executable", std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default());
    line(out, "db_path", s.store.db().path().display());
    line(out, "db_index", ctx.session.db);
    line(out, "db_keyspace", crate::databases::keyspace_name(ctx.session.db));
    line(out, "databases", s.store.databases().count());
}

fn clients(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    line(out, "connected_clients", ServerCounters::get(&ctx.server.counters.connected));
    line(out, "blocked_clients", ctx.server.waiters.blocked());
    line(out, "tracking_clients", 0);
    line(out, "clients_in_timeout_table", 0);
}

/// The process's resident set size in bytes, from `/proc/self/statm` (0 where there is
/// none).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// `used_memory` is the engine's memory: memtables, the block cache and the table
/// metadata pinned outside it.
fn memory(ctx: &Ctx<'_>, st: &Stats, out: &mut String) {
    let used = st.memtable_bytes as u64 + st.cache_usage as u64 + st.pinned_table_bytes;
    let rss = resident_bytes();
    line(out, "used_memory", used);
    line(out, "used_memory_human", human(used));
    line(out, "used_memory_rss", rss);
    line(out, "used_memory_rss_human", human(rss));
    line(out, "used_memory_peak", used.max(rss));
    line(out, "used_memory_dataset", st.memtable_bytes);
    line(out, "shamba_memtable_bytes", st.memtable_bytes);
    line(out, "shamba_cache_bytes", st.cache_usage);
    line(out, "shamba_pinned_table_bytes", st.pinned_table_bytes);
    let limit = ctx.server.settings.maxmemory.load(Relaxed);
    line(out, "maxmemory", limit);
    line(out, "maxmemory_human", human(limit));
    line(out, "maxmemory_policy", "noeviction");
    line(out, "mem_fragmentation_ratio", format_args!("{:.2}", if used == 0 { 0.0 } else { rss as f64 / used as f64 }));
    line(out, "mem_allocator", "libc");
    line(out, "lazyfree_pending_objects", 0);
    line(out, "number_of_cached_scripts", ctx.server.scripts.cached());
}

fn human(bytes: u64) -> String {
    const UNITS: [(&str, f64); 4] = [("G", 1073741824.0), ("M", 1048576.0), ("K", 1024.0), ("B", 1.0)];
    for (u, size) in UNITS {
        if bytes as f64 >= size && u != "B" {
            return format!("{:.2}{u}", bytes as f64 / size);
        }
    }
    format!("{bytes}B")
}

fn persistence(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    let s = ctx.server;
    line(out, "loading", 0);
    line(out, "async_loading", 0);
    line(out, "rdb_changes_since_last_save", ServerCounters::get(&s.counters.dirty));
    line(out, "rdb_bgsave_in_progress", 0);
    line(out, "rdb_last_save_time", s.settings.last_save.load(Relaxed));
    line(out, "rdb_last_bgsave_status", "ok");
    line(out, "aof_enabled", 1);
    line(out, "aof_rewrite_in_progress", 0);
    line(out, "aof_rewrite_scheduled", 0);
    line(out, "aof_last_write_status", "ok");
    line(out, "aof_last_bgrewrite_status", "ok");
    line(out, "shamba_sync", s.store.sync_mode().name());
}

fn stats(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    let c = &ctx.server.counters;
    line(out, "total_connections_received", ServerCounters::get(&c.connections_received));
    line(out, "total_commands_processed", ServerCounters::get(&c.commands));
    line(out, "instantaneous_ops_per_sec", 0);
    line(out, "total_net_input_bytes", ServerCounters::get(&c.net_input_bytes));
    line(out, "total_net_output_bytes", ServerCounters::get(&c.net_output_bytes));
    line(out, "rejected_connections", 0);
    line(out, "expired_keys", 0);
    line(out, "evicted_keys", 0);
    line(out, "keyspace_hits", 0);
    line(out, "keyspace_misses", 0);
    line(out, "pubsub_channels", 0);
    line(out, "pubsub_patterns", 0);
    line(out, "total_protocol_errors", ServerCounters::get(&c.protocol_errors));
    line(out, "total_error_replies", c.by_command.error_replies());
    line(out, "unexpected_error_replies", 0);
}

fn replication(_: &Ctx<'_>, _: &Stats, out: &mut String) {
    line(out, "role", "master");
    line(out, "connected_slaves", 0);
    line(out, "master_repl_offset", 0);
    line(out, "repl_backlog_active", 0);
}

/// User and system CPU seconds of the process and of the calling thread, by getrusage.
fn cpu(_: &Ctx<'_>, _: &Stats, out: &mut String) {
    for (name, who) in [("", libc::RUSAGE_SELF), ("_main_thread", libc::RUSAGE_THREAD)] {
        let (user, sys) = rusage(who);
        line(out, &format!("used_cpu_sys{name}"), format_args!("{sys:.6}"));
        line(out, &format!("used_cpu_user{name}"), format_args!("{user:.6}"));
    }
}

/// User and system CPU seconds of `who` (0 when getrusage fails).
fn rusage(who: libc::c_int) -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` through the pointer, which points at one;
    // `who` is RUSAGE_SELF or RUSAGE_THREAD. Exercised by `tests::cpu_time_is_read`.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: zeroed is a valid `rusage` (plain integers), and getrusage filled it.
    // Exercised by `tests::cpu_time_is_read`.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

fn modules(_: &Ctx<'_>, _: &Stats, _: &mut String) {}

fn cluster(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    line(out, "cluster_enabled", 0);
    if ctx.server.store.cluster().is_some() {
        line(out, "shamba_raft_enabled", 1);
    }
}

/// Keys counted exactly up to this many per database; past it, the count is the engine's
/// estimate (the entries of its tables, which counts overwritten and deleted versions not
/// yet compacted away) and `expires` counts only the keys walked.
const KEYSPACE_EXACT_LIMIT: u64 = 10_000;

/// `dbN:keys=K,expires=E,avg_ttl=0` for every database with a key.
fn keyspace(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    for (n, ks) in ctx.server.store.databases().existing() {
        let (mut keys, mut expires) = (0u64, 0u64);
        let mut exact = true;
        for item in ks.iter() {
            let Ok((k, _)) = item else { break };
            if keys == KEYSPACE_EXACT_LIMIT {
                exact = false;
                break;
            }
            keys += 1;
            if matches!(ks.ttl(&k), Ok(shamba::Ttl::Remaining(_))) {
                expires += 1;
            }
        }
        // Collections: one metadata entry each, counted while it is live.
        if let Some(c) = ctx.server.store.databases().collections(n) {
            let now = crate::commands::expiry::now_ms();
            for item in c.meta.iter() {
                let Ok((_, v)) = item else { break };
                if keys >= KEYSPACE_EXACT_LIMIT {
                    exact = false;
                    break;
                }
                if let Ok(Some(meta)) = crate::types::decode_live(c, &v, now) {
                    keys += 1;
                    expires += u64::from(meta.deadline_ms.is_some());
                }
            }
        }
        if !exact {
            keys = keys.max(ks.stats().levels.iter().map(|l| l.entries).sum());
        }
        if keys > 0 {
            line(out, &format!("db{n}"), format_args!("keys={keys},expires={expires},avg_ttl=0"));
        }
    }
}

fn commandstats(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    for (spec, s) in ctx.server.counters.by_command.used() {
        let (calls, usec) = (s.calls.load(Relaxed), s.usec.load(Relaxed));
        let per_call = if calls == 0 { 0.0 } else { usec as f64 / calls as f64 };
        line(
            out,
            &format!("cmdstat_{}", spec.name),
            format_args!(
                "calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}",
                s.rejected.load(Relaxed),
                s.failed.load(Relaxed)
            ),
        );
    }
}

/// `errorstat_CODE:count=N` for every error code answered.
fn errorstats(ctx: &Ctx<'_>, _: &Stats, out: &mut String) {
    for (code, n) in ctx.server.counters.by_command.errors() {
        line(out, &format!("errorstat_{code}"), format_args!("count={n}"));
    }
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
    line(out, "pending_compaction_bytes", st.pending_compaction_bytes);
    line(out, "delayed_micros", st.delayed_micros);
    line(out, "stopped_micros", st.stopped_for_flush_micros + st.stopped_for_compaction_micros);
}

fn levels(_: &Ctx<'_>, st: &Stats, out: &mut String) {
    for (i, l) in st.levels.iter().enumerate() {
        line(
            out,
            &format!("level{i}"),
            format_args!(
                "files={},runs={},bytes={},entries={},filter_bytes={},index_bytes={},bytes_written={},\
                 read_from_above={},read_in_level={},moved_in={}",
                l.files,
                l.runs,
                l.bytes,
                l.entries,
                l.filter_bytes,
                l.index_bytes,
                l.bytes_written,
                l.compaction_read_from_above,
                l.compaction_read_in_level,
                l.bytes_moved_in
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read() {
        // Spend a little CPU so the process's user time is not zero.
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let (user, sys) = rusage(libc::RUSAGE_SELF);
        assert!(user > 0.0 && sys >= 0.0, "{user} {sys}");
        assert!(resident_bytes() > 0);
        assert_eq!(human(1536), "1.50K");
    }
}
