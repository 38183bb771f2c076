//! CONFIG GET (glob patterns over every setting), CONFIG SET (the settings that can change
//! at run time; the others refused as Redis refuses an immutable one), CONFIG RESETSTAT,
//! CONFIG REWRITE (refused: there is no config file to rewrite), CONFIG HELP.

use super::{arg, is, parse_int, printable, Args, Spec};
use crate::glob;
use crate::reply::Reply;
use crate::session::Ctx;
use std::sync::atomic::Ordering::Relaxed;

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "config", arity: -2, flags: &["admin", "noscript", "loading", "stale"], keys: (0, 0, 0), group: "server", summary: "GET pattern..., SET name value..., RESETSTAT, REWRITE", run: config },
];

/// Settings the server reads from its own state: CONFIG GET reports them, CONFIG SET
/// refuses them (they are fixed at start).
fn fixed(ctx: &Ctx<'_>) -> Vec<(&'static str, String)> {
    let s = ctx.server;
    let bind = s.bind;
    vec![
        ("bind", bind.ip().to_string()),
        ("port", bind.port().to_string()),
        ("dir", s.store.db().path().display().to_string()),
        ("databases", s.store.database_count().to_string()),
        ("appendonly", "yes".into()),
        ("appendfsync", s.store.sync_mode().name().into()),
        ("proto-max-bulk-len", s.limits.max_bulk.to_string()),
        ("client-query-buffer-limit", s.limits.max_query.to_string()),
        ("tcp-keepalive", "300".into()),
        ("enable-debug-command", if s.settings.debug_command.load(Relaxed) { "yes" } else { "no" }.into()),
    ]
}

/// The connection layer's settings (`conn::settings`), but those [`fixed`] reports.
fn connections(ctx: &Ctx<'_>) -> Vec<(&'static str, String)> {
    let fixed = fixed(ctx);
    super::conn::settings(ctx)
        .into_iter()
        .filter(|(k, _)| !fixed.iter().any(|(f, _)| f == k))
        .map(|(k, v)| (k, String::from_utf8_lossy(&v).into_owned()))
        .collect()
}

/// Every setting and its value: the fixed ones, the connections', the slow log's, then the
/// ones kept as text.
fn all(ctx: &Ctx<'_>) -> Vec<(&'static str, String)> {
    let st = &ctx.server.settings;
    let mut v = fixed(ctx);
    v.extend(connections(ctx));
    v.push(("slowlog-log-slower-than", st.slowlog_slower_than.load(Relaxed).to_string()));
    v.push(("slowlog-max-len", st.slowlog_max_len.load(Relaxed).to_string()));
    v.push(("notify-keyspace-events", crate::notify::format(ctx.server.conns.pubsub.events.flags())));
    let text: Vec<(&'static str, String)> =
        st.text.lock().iter().filter(|(k, _)| !v.iter().any(|(f, _)| f == *k)).map(|(k, v)| (*k, v.clone())).collect();
    v.extend(text);
    v
}

fn config(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let n = args.len();
    if is(sub, "GET") && n >= 3 {
        get(ctx, args.get(2..).unwrap_or_default())
    } else if is(sub, "SET") && n >= 4 && n.is_multiple_of(2) {
        set(ctx, args.get(2..).unwrap_or_default())
    } else if is(sub, "SET") {
        Reply::err("wrong number of arguments for 'config|set' command")
    } else if is(sub, "RESETSTAT") && n == 2 {
        ctx.server.counters.by_command.reset();
        let mut log = ctx.server.settings.slowlog.lock();
        log.entries.clear();
        Reply::OK
    } else if is(sub, "REWRITE") && n == 2 {
        Reply::err("The server is running without a config file")
    } else if is(sub, "HELP") && n == 2 {
        let lines = [
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file (refused: there is none).",
        ];
        Reply::Array(lines.iter().map(|l| Reply::Simple(l)).collect())
    } else {
        Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try CONFIG HELP.",
            printable(sub)
        ))
    }
}

fn get(ctx: &Ctx<'_>, patterns: &Args) -> Reply {
    let patterns: Vec<Vec<u8>> = patterns.iter().map(|p| p.to_ascii_lowercase()).collect();
    let pairs = all(ctx)
        .into_iter()
        .filter(|(k, _)| patterns.iter().any(|p| glob::matches(p, k.as_bytes())))
        .map(|(k, v)| (Reply::text_bulk(k), Reply::text_bulk(v)))
        .collect();
    Reply::Map(pairs)
}

/// A memory amount as Redis reads one: bytes, or a number with k, kb, m, mb, g, gb.
fn parse_memory(v: &str) -> Option<u64> {
    let v = v.to_ascii_lowercase();
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = v.get(digits.len()..).unwrap_or_default();
    let mult: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// CONFIG SET name value [name value ...]: all or nothing, as Redis 7.
fn set(ctx: &Ctx<'_>, words: &Args) -> Reply {
    let st = &ctx.server.settings;
    let mut changes: Vec<(String, String, &[u8])> = Vec::new();
    for pair in words.chunks_exact(2) {
        let [name, raw] = pair else { continue };
        let name = String::from_utf8_lossy(name).to_lowercase();
        let value = String::from_utf8_lossy(raw).into_owned();
        let bad = |why: &str| Reply::err(format!("CONFIG SET failed (possibly related to argument '{name}') - {why}"));
        match name.as_str() {
            "slowlog-log-slower-than" => {
                if parse_int(value.as_bytes()).is_none() {
                    return bad("argument couldn't be parsed into an integer");
                }
            }
            "slowlog-max-len" => {
                if parse_int(value.as_bytes()).is_none_or(|n| n < 0) {
                    return bad("argument must be a non-negative integer");
                }
            }
            "maxmemory" => {
                if parse_memory(&value).is_none() {
                    return bad("argument must be a memory value");
                }
            }
            "notify-keyspace-events" => {
                if crate::notify::parse(raw).is_none() {
                    return bad("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
                }
            }
            "appendonly" if value.eq_ignore_ascii_case("yes") => {}
            "save" | "requirepass" => {}
            "maxclients" => {
                if parse_int(value.as_bytes()).is_none_or(|n| n < 1) {
                    return bad("argument must be between 1 and 4294967295 inclusive");
                }
            }
            "timeout" => {
                if parse_int(value.as_bytes()).is_none_or(|n| n < 0) {
                    return bad("argument must be between 0 and 2147483647 inclusive");
                }
            }
            "protected-mode" => {
                if !value.eq_ignore_ascii_case("yes") && !value.eq_ignore_ascii_case("no") {
                    return bad("argument must be 'yes' or 'no'");
                }
            }
            n if fixed(ctx).iter().any(|(f, _)| *f == n) => return bad("can't set immutable config"),
            n if st.text.lock().contains_key(n) => {}
            _ => return Reply::err(format!("Unknown option or number of arguments for CONFIG SET - '{name}'")),
        }
        changes.push((name, value, raw.as_slice()));
    }
    for (name, value, raw) in changes {
        match name.as_str() {
            "slowlog-log-slower-than" => {
                st.slowlog_slower_than.store(parse_int(value.as_bytes()).unwrap_or(0), Relaxed);
            }
            "slowlog-max-len" => {
                let n = parse_int(value.as_bytes()).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
                st.slowlog_max_len.store(n, Relaxed);
                st.slowlog.lock().entries.truncate(n as usize);
            }
            "appendonly" => {}
            "notify-keyspace-events" => {
                ctx.server.conns.pubsub.events.set_flags(crate::notify::parse(raw).unwrap_or(0));
            }
            "requirepass" | "protected-mode" | "maxclients" | "timeout" => {
                // Checked above, so it applies (the password as given, bytes and all).
                if let Some(Err(e)) = super::conn::set_setting(ctx, name.as_bytes(), raw) {
                    return e;
                }
            }
            // One setting under two names (Redis 7.0's new one and its old one).
            "busy-reply-threshold" | "lua-time-limit" => {
                let mut text = st.text.lock();
                for alias in ["busy-reply-threshold", "lua-time-limit"] {
                    text.insert(alias, value.clone());
                }
            }
            "maxmemory" => {
                let bytes = parse_memory(&value).unwrap_or(0);
                st.maxmemory.store(bytes, Relaxed);
                st.text.lock().insert("maxmemory", bytes.to_string());
            }
            _ => {
                let mut text = st.text.lock();
                if let Some(slot) = text.get_mut(name.as_str()) {
                    *slot = if name == "maxmemory" { parse_memory(&value).unwrap_or(0).to_string() } else { value };
                }
            }
        }
    }
    Reply::OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_amounts_read_with_their_units() {
        assert_eq!(parse_memory("100"), Some(100));
        assert_eq!(parse_memory("1kb"), Some(1024));
        assert_eq!(parse_memory("2MB"), Some(2 << 20));
        assert_eq!(parse_memory("1g"), Some(1_000_000_000));
        assert_eq!(parse_memory("1x"), None);
        assert_eq!(parse_memory("-1"), None);
    }
}
