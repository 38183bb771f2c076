//! SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, SHUTDOWN and DEBUG. Every acknowledged write is
//! already in the WAL, so a save here flushes the memtables to tables (so a restart
//! replays no WAL) and records the time LASTSAVE reports; SHUTDOWN, with or without SAVE,
//! stops the server as SIGTERM does (the final flush keeps every acknowledged write). DEBUG answers only when the server was started
//! with `--enable-debug-command`, as Redis's `enable-debug-command`.

use super::keys2::string_encoding;
use super::{arg, engine_error, is, not_an_integer, printable, selected, Args, Spec};
use crate::reply::Reply;
use crate::runtime_settings::unix_now;
use crate::session::Ctx;
use shamba::Readable;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

const ADMIN: &[&str] = &["admin", "noscript"];

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "save", arity: 1, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "Flush the memtables to tables", run: save },
    Spec { name: "bgsave", arity: -1, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "Flush the memtables to tables (before replying)", run: bgsave },
    Spec { name: "bgrewriteaof", arity: 1, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "Flush the memtables to tables (before replying)", run: bgrewriteaof },
    Spec { name: "shutdown", arity: -1, flags: &["admin", "noscript", "loading", "stale", "no_multi", "allow_busy"], keys: (0, 0, 0), group: "server", summary: "Stop the server as SIGTERM does: finish what clients sent, flush, close", run: shutdown },
    Spec { name: "lastsave", arity: 1, flags: &["loading", "stale", "fast"], keys: (0, 0, 0), group: "server", summary: "Unix time of the last SAVE (the start before one)", run: lastsave },
    Spec { name: "debug", arity: -2, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "SLEEP, SET-ACTIVE-EXPIRE, RELOAD, OBJECT, DIGEST, JMAP (with --enable-debug-command)", run: debug },
];

/// Flush every memtable; the time is LASTSAVE's and the count of changes restarts.
fn flush(ctx: &Ctx<'_>) -> Result<(), Reply> {
    ctx.server.store.db().flush().map_err(engine_error)?;
    ctx.server.settings.last_save.store(unix_now(), Relaxed);
    ctx.server.counters.dirty.store(0, Relaxed);
    Ok(())
}

fn save(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    flush(ctx).map_or_else(|r| r, |()| Reply::OK)
}

fn bgsave(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if args.len() > 2 || args.get(1).is_some_and(|a| !is(a, "SCHEDULE")) {
        return super::syntax_error();
    }
    flush(ctx).map_or_else(|r| r, |()| Reply::Simple("Background saving started"))
}

fn bgrewriteaof(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    flush(ctx).map_or_else(|r| r, |()| Reply::Simple("Background append only file rewriting started"))
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. The server stops as on SIGTERM: it stops
/// accepting, lets every connection answer what it has read, flushes and closes the
/// database; a running script is stopped and none of its writes kept. As in Redis, the
/// client that asked gets no reply: its connection is closed. NOSAVE keeps the
/// acknowledged writes all the same (they are in the WAL); ABORT has no shutdown to abort
/// (a stop here never waits for replicas).
fn shutdown(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (mut save, mut nosave) = (false, false);
    for a in args.iter().skip(1) {
        if is(a, "SAVE") {
            save = true;
        } else if is(a, "NOSAVE") {
            nosave = true;
        } else if is(a, "ABORT") {
            return Reply::err("No shutdown in progress.");
        } else if !is(a, "NOW") && !is(a, "FORCE") {
            return super::syntax_error();
        }
    }
    if save && nosave {
        return super::syntax_error();
    }
    ctx.server.scripts.stop_for_shutdown();
    ctx.server.shutdown.notify_one();
    ctx.session.closing = true;
    // No frame at all: the connection closes, as Redis's does.
    Reply::Frames(Vec::new())
}

fn lastsave(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    Reply::Int(ctx.server.settings.last_save.load(Relaxed))
}

fn debug(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if !ctx.server.settings.debug_command.load(Relaxed) {
        return Reply::err("DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.");
    }
    let sub = arg(args, 1);
    if is(sub, "SLEEP") && args.len() == 3 {
        let Some(secs) = std::str::from_utf8(arg(args, 2))
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
        else {
            return not_an_integer();
        };
        std::thread::sleep(Duration::from_secs_f64(secs.min(3600.0)));
        Reply::OK
    } else if is(sub, "SET-ACTIVE-EXPIRE") && args.len() == 3 {
        // Expired keys are hidden from every read by the engine and dropped by compaction:
        // there is no active expiry cycle to turn on or off.
        Reply::OK
    } else if is(sub, "RELOAD") {
        // A reload (save, then load what was saved) is a flush here: the data read after it
        // comes from the tables, as after a restart.
        flush(ctx).map_or_else(|r| r, |()| Reply::OK)
    } else if is(sub, "OBJECT") && args.len() == 3 {
        match selected!(ctx).get(arg(args, 2)) {
            Ok(Some(v)) => Reply::text_bulk(format!(
                "Value at:0x0 refcount:1 encoding:{} serializedlength:{} lru:0 lru_seconds_idle:0",
                string_encoding(&v),
                v.len()
            )),
            Ok(None) => Reply::err("no such key"),
            Err(e) => engine_error(e),
        }
    } else if is(sub, "DIGEST") && args.len() == 2 {
        digest(ctx)
    } else if is(sub, "JMAP") || is(sub, "QUICKLIST-PACKED-THRESHOLD") || is(sub, "CHANGE-REPL-ID") {
        Reply::OK
    } else {
        Reply::err(format!("unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.", printable(sub)))
    }
}

/// A digest of every database's keys and values: 40 zeros when all are empty, as Redis.
fn digest(ctx: &Ctx<'_>) -> Reply {
    let mut total = 0u64;
    let mut any = false;
    for (n, ks) in ctx.server.store.databases().existing() {
        for item in ks.iter() {
            let Ok((k, v)) = item else { break };
            let mut h = DefaultHasher::new();
            (n, &k, &v).hash(&mut h);
            // Order-independent: the keys' hashes are added.
            total = total.wrapping_add(h.finish());
            any = true;
        }
    }
    if !any {
        return Reply::text_bulk("0".repeat(40));
    }
    Reply::text_bulk(format!("{total:016x}{:024x}", 0))
}
