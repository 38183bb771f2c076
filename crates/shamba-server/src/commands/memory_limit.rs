//! `maxmemory`: while the engine's memory (INFO's `used_memory`: memtables, block cache,
//! pinned table metadata) is over it, commands that may grow the data set are refused with
//! Redis's OOM error, as Redis refuses its `denyoom` commands (nothing is evicted here:
//! `maxmemory-policy` is `noeviction`). A command refused while queuing makes EXEC abort,
//! and an EXEC whose queue holds one is refused as a whole. Off (0, the default), a
//! command pays one atomic load.

use super::{lookup, Spec};
use crate::reply::Reply;
use crate::session::Ctx;
use std::sync::atomic::Ordering::Relaxed;

/// Redis's words.
pub(crate) const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Writes that only remove or change a deadline: allowed over the limit, as Redis allows
/// the commands it does not flag `denyoom`.
const SHRINKING: &[&str] = &[
    "del",
    "unlink",
    "flushdb",
    "flushall",
    "expire",
    "pexpire",
    "expireat",
    "pexpireat",
    "persist",
    "getdel",
    "lpop",
    "rpop",
    "spop",
    "srem",
    "hdel",
    "zrem",
    "zremrangebyscore",
    "zremrangebyrank",
    "zremrangebylex",
    "zpopmin",
    "zpopmax",
    "lrem",
    "ltrim",
    "lmpop",
    "zmpop",
    "blpop",
    "brpop",
    "blmpop",
    "bzpopmin",
    "bzpopmax",
    "bzmpop",
    "swapdb",
    "move",
    "rename",
    "renamenx",
];

fn may_grow(spec: &Spec) -> bool {
    spec.is_write() && !SHRINKING.contains(&spec.name)
}

/// Whether the memory is over a `maxmemory` that is set.
pub(crate) fn over_limit(ctx: &Ctx<'_>) -> bool {
    let limit = ctx.server.settings.maxmemory.load(Relaxed);
    limit != 0 && used(ctx) > limit
}

/// The engine's memory now, as INFO reports it.
fn used(ctx: &Ctx<'_>) -> u64 {
    match ctx.server.store.select(0) {
        Some(Ok(db)) => {
            let st = db.stats();
            st.memtable_bytes as u64 + st.cache_usage as u64 + st.pinned_table_bytes
        }
        _ => 0,
    }
}

/// OOM for a command that may grow the data set (or an EXEC whose queue holds one) while
/// the memory is over `maxmemory`; `None` otherwise.
pub(super) fn refuse_over_limit(ctx: &mut Ctx<'_>, spec: &Spec) -> Option<Reply> {
    let limit = ctx.server.settings.maxmemory.load(Relaxed);
    if limit == 0 || ctx.session.allow_oom {
        return None;
    }
    let grows = match (&ctx.session.multi, spec.name) {
        (Some(q), "exec") => q.commands.iter().any(|c| c.first().and_then(|n| lookup(n)).is_some_and(may_grow)),
        _ => may_grow(spec),
    };
    if !grows || used(ctx) <= limit {
        return None;
    }
    if spec.name == "exec" && ctx.session.multi.take().is_some() {
        ctx.session.watch = None;
        return Some(Reply::Error(format!("EXECABORT Transaction discarded because of: {OOM}")));
    }
    if let Some(q) = &mut ctx.session.multi {
        q.refused = true;
    }
    Some(Reply::Error(OOM.into()))
}
