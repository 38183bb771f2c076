//! The settings CONFIG GET reports and CONFIG SET changes at run time, and the slow log
//! they govern. The ones the server acts on are atomics read on every command
//! (`slowlog-log-slower-than`); the others are kept as text for clients and tests that
//! set and read them back.

use parking_lot::Mutex;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Run-time settings and the slow log.
#[derive(Debug)]
pub(crate) struct RuntimeSettings {
    /// Microseconds over which a command is logged (negative: none is; 0: every one).
    pub(crate) slowlog_slower_than: AtomicI64,
    pub(crate) slowlog_max_len: AtomicU64,
    /// `maxmemory` in bytes (0: no limit), read by every write (`commands::memory_limit`).
    pub(crate) maxmemory: AtomicU64,
    /// RuntimeSettings kept as text (CONFIG SET of a setting with no effect here beyond its value).
    pub(crate) text: Mutex<BTreeMap<&'static str, String>>,
    /// When the memtables were last flushed by SAVE (Unix seconds; the start before).
    pub(crate) last_save: AtomicI64,
    /// `--enable-debug-command`: DEBUG answers.
    pub(crate) debug_command: AtomicBool,
    pub(crate) slowlog: Mutex<SlowLog>,
}

/// The slowest commands, newest first (SLOWLOG GET).
#[derive(Debug, Default)]
pub(crate) struct SlowLog {
    pub(crate) next_id: u64,
    pub(crate) entries: VecDeque<SlowEntry>,
}

/// One logged command.
#[derive(Debug, Clone)]
pub(crate) struct SlowEntry {
    pub(crate) id: u64,
    pub(crate) at: i64,
    pub(crate) micros: u64,
    pub(crate) args: Vec<Vec<u8>>,
    pub(crate) peer: String,
}

/// Most arguments kept of a logged command, and bytes of each (Redis's limits).
const SLOWLOG_MAX_ARGS: usize = 32;
const SLOWLOG_MAX_ARG_LEN: usize = 128;

/// Unix seconds now.
pub(crate) fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Default for RuntimeSettings {
    fn default() -> RuntimeSettings {
        let text = [
            ("maxmemory", "0"),
            ("maxmemory-policy", "noeviction"),
            ("maxmemory-samples", "5"),
            ("lfu-log-factor", "10"),
            ("lfu-decay-time", "1"),
            ("lazyfree-lazy-user-del", "no"),
            ("lazyfree-lazy-user-flush", "no"),
            ("latency-tracking", "yes"),
            ("latency-tracking-info-percentiles", "50 99 99.9"),
            ("latency-monitor-threshold", "0"),
            ("loglevel", "notice"),
            ("hz", "10"),
            ("dynamic-hz", "yes"),
            ("active-expire-effort", "1"),
            ("activedefrag", "no"),
            ("busy-reply-threshold", "5000"),
            ("lua-time-limit", "5000"),
            ("notify-keyspace-events", ""),
            ("list-max-listpack-size", "-2"),
            ("list-max-ziplist-size", "-2"),
            ("list-compress-depth", "0"),
            ("hash-max-listpack-entries", "128"),
            ("hash-max-listpack-value", "64"),
            ("hash-max-ziplist-entries", "128"),
            ("hash-max-ziplist-value", "64"),
            ("set-max-intset-entries", "512"),
            ("set-max-listpack-entries", "128"),
            ("set-max-listpack-value", "64"),
            ("zset-max-listpack-entries", "128"),
            ("zset-max-listpack-value", "64"),
            ("zset-max-ziplist-entries", "128"),
            ("zset-max-ziplist-value", "64"),
            ("stream-node-max-bytes", "4096"),
            ("stream-node-max-entries", "100"),
            ("close-on-oom", "no"),
            ("client-query-buffer-limit", "1073741824"),
            ("client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
            ("tracking-table-max-keys", "1000000"),
            ("oom-score-adj", "no"),
            ("replica-read-only", "yes"),
            ("replica-serve-stale-data", "yes"),
            ("min-replicas-to-write", "0"),
            ("min-replicas-max-lag", "10"),
            ("repl-backlog-size", "1048576"),
            ("repl-ping-replica-period", "10"),
            ("repl-timeout", "60"),
            ("repl-diskless-sync", "yes"),
            ("repl-diskless-sync-delay", "5"),
            ("appendfsync-on-rewrite", "no"),
            ("auto-aof-rewrite-percentage", "100"),
            ("auto-aof-rewrite-min-size", "67108864"),
            ("aof-use-rdb-preamble", "yes"),
            ("maxmemory-clients", "0"),
            ("propagation-error-behavior", "ignore"),
            ("key-load-delay", "0"),
            ("rdb-key-save-delay", "0"),
            ("lazyfree-lazy-expire", "no"),
            ("lazyfree-lazy-eviction", "no"),
            ("lazyfree-lazy-server-del", "no"),
            ("rdbcompression", "yes"),
            ("rdbchecksum", "yes"),
            ("stop-writes-on-bgsave-error", "yes"),
            ("dbfilename", "dump.rdb"),
            ("appendfilename", "appendonly.aof"),
            ("save", ""),
            ("io-threads", "1"),
            ("enable-protected-configs", "no"),
            ("enable-module-command", "no"),
            ("cluster-enabled", "no"),
            ("daemonize", "no"),
            ("supervised", "no"),
        ];
        RuntimeSettings {
            slowlog_slower_than: AtomicI64::new(10_000),
            slowlog_max_len: AtomicU64::new(128),
            maxmemory: AtomicU64::new(0),
            text: Mutex::new(text.into_iter().map(|(k, v)| (k, v.to_string())).collect()),
            last_save: AtomicI64::new(unix_now()),
            debug_command: AtomicBool::new(false),
            slowlog: Mutex::new(SlowLog::default()),
        }
    }
}

impl RuntimeSettings {
    /// Log `args` when it took longer than `slowlog-log-slower-than`. Costs one atomic
    /// load for a command that is not slow.
    pub(crate) fn maybe_log(&self, args: &[Vec<u8>], took: Duration) {
        let threshold = self.slowlog_slower_than.load(Ordering::Relaxed);
        let micros = took.as_micros() as u64;
        if threshold < 0 || micros < threshold as u64 {
            return;
        }
        let max = self.slowlog_max_len.load(Ordering::Relaxed) as usize;
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(args.len().min(SLOWLOG_MAX_ARGS));
        for (i, a) in args.iter().enumerate() {
            if i == SLOWLOG_MAX_ARGS - 1 && args.len() > SLOWLOG_MAX_ARGS {
                kept.push(format!("... ({} more arguments)", args.len() - i).into_bytes());
                break;
            }
            if a.len() > SLOWLOG_MAX_ARG_LEN {
                let mut short = a.get(..SLOWLOG_MAX_ARG_LEN).unwrap_or_default().to_vec();
                short.extend_from_slice(format!("... ({} more bytes)", a.len() - SLOWLOG_MAX_ARG_LEN).as_bytes());
                kept.push(short);
            } else {
                kept.push(a.clone());
            }
        }
        let mut log = self.slowlog.lock();
        let id = log.next_id;
        log.next_id += 1;
        log.entries.push_front(SlowEntry { id, at: unix_now(), micros, args: kept, peer: String::new() });
        log.entries.truncate(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_log_keeps_the_newest_slow_commands_and_trims_long_ones() {
        let s = RuntimeSettings::default();
        s.slowlog_slower_than.store(100, Ordering::Relaxed);
        s.slowlog_max_len.store(2, Ordering::Relaxed);
        let args = |w: &str| vec![w.as_bytes().to_vec(), vec![b'x'; 200]];
        s.maybe_log(&args("fast"), Duration::from_micros(99));
        for w in ["a", "b", "c"] {
            s.maybe_log(&args(w), Duration::from_micros(150));
        }
        let log = s.slowlog.lock();
        let names: Vec<&[u8]> = log.entries.iter().map(|e| e.args[0].as_slice()).collect();
        assert_eq!(names, [b"c", b"b"]);
        assert_eq!(log.entries[0].id, 2);
        assert!(log.entries[0].args[1].ends_with(b"... (72 more bytes)"));
    }
}
