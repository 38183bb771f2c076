//! SWAPDB: two databases exchange their contents at once, as Redis's does: each number is
//! served by the other's keyspaces from then on (`databases`, `database_map`), a change
//! stored durably before it is answered. Clients blocked on keys of either database are
//! checked again, since a key they wait on may now hold something.

use super::{arg, engine_error, parse_int, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "swapdb", arity: 3, flags: &["write", "fast"], keys: (0, 0, 0), group: "server", summary: "Exchange two databases (stored, kept across restarts)", run: swapdb },
];

fn index(word: &[u8], which: &str) -> Result<usize, Reply> {
    let n = parse_int(word).ok_or_else(|| Reply::err(format!("invalid {which} DB index")))?;
    usize::try_from(n).map_err(|_| Reply::err("DB index is out of range"))
}

fn swapdb(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let store = &ctx.server.store;
    if store.cluster().is_some() {
        return Reply::err("SWAPDB is not allowed in cluster mode");
    }
    let (a, b) = match (index(arg(args, 1), "first"), index(arg(args, 2), "second")) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    if a >= store.database_count() || b >= store.database_count() {
        return Reply::err("DB index is out of range");
    }
    if ctx.tx.is_some() {
        // EXEC holds the databases while its commands run: a swap inside would wait on it.
        return Reply::err("SWAPDB is not allowed inside MULTI");
    }
    if a == b {
        return Reply::OK;
    }
    let wo = match crate::no_wait::write_options(true) {
        Ok(wo) => wo,
        Err(e) => return engine_error(e),
    };
    match store.databases().swap(a, b, &wo) {
        Some(Ok(())) => {}
        Some(Err(e)) => return engine_error(e),
        None => return Reply::err("DB index is out of range"),
    }
    ctx.server.conns.pubsub.events.expiring.swap_dbs(a, b);
    // Dispatch serves them once this command is over.
    ctx.server.waiters.wake_db(a);
    ctx.server.waiters.wake_db(b);
    Reply::OK
}
