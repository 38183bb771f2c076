//! Pub/sub's commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and
//! PUBSUB CHANNELS / NUMSUB / NUMPAT (see `crate::pubsub` for the delivery).

use super::{arg, is, printable, Args, Spec};
use crate::pubsub::Kind;
use crate::reply::Reply;
use crate::session::Ctx;
use std::time::{Duration, Instant};

const SUB: &[&str] = &["pubsub", "noscript", "loading", "stale"];

/// The pub/sub commands, one line each.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "subscribe", arity: -2, flags: SUB, keys: (0, 0, 0), group: "pubsub", summary: "Receive the messages published to channels", run: subscribe },
    Spec { name: "unsubscribe", arity: -1, flags: SUB, keys: (0, 0, 0), group: "pubsub", summary: "Stop receiving channels' messages (all channels without arguments)", run: unsubscribe },
    Spec { name: "psubscribe", arity: -2, flags: SUB, keys: (0, 0, 0), group: "pubsub", summary: "Receive the messages published to channels matching patterns", run: psubscribe },
    Spec { name: "punsubscribe", arity: -1, flags: SUB, keys: (0, 0, 0), group: "pubsub", summary: "Stop receiving patterns' messages (all patterns without arguments)", run: punsubscribe },
    Spec { name: "publish", arity: 3, flags: &["pubsub", "loading", "stale", "fast"], keys: (0, 0, 0), group: "pubsub", summary: "Send a message to a channel's subscribers; how many received it", run: publish },
    Spec { name: "pubsub", arity: -2, flags: &["loading", "stale"], keys: (0, 0, 0), group: "pubsub", summary: "CHANNELS [pattern], NUMSUB [channel ...], NUMPAT", run: pubsub },
];

/// The confirmation a (un)subscription sends: `kind name count`.
fn confirmation(kind: &str, name: Option<&[u8]>, count: usize) -> Reply {
    Reply::Push(vec![
        Reply::text_bulk(kind),
        name.map_or(Reply::Null, |n| Reply::Bulk(n.to_vec())),
        Reply::Int(count as i64),
    ])
}

fn subscribe(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    add(ctx, args, Kind::Channel)
}

fn psubscribe(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    add(ctx, args, Kind::Pattern)
}

fn unsubscribe(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    remove(ctx, args, Kind::Channel)
}

fn punsubscribe(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    remove(ctx, args, Kind::Pattern)
}

/// (P)SUBSCRIBE name...: one confirmation per name, subscribed or not before.
fn add(ctx: &mut Ctx<'_>, args: &Args, kind: Kind) -> Reply {
    let client = super::conn::client_of(ctx);
    let word = if kind == Kind::Channel { "subscribe" } else { "psubscribe" };
    let mut frames = Vec::new();
    for name in args.iter().skip(1) {
        let set = match kind {
            Kind::Channel => &mut ctx.session.subs.channels,
            Kind::Pattern => &mut ctx.session.subs.patterns,
        };
        if set.insert(name.clone()) {
            ctx.server.conns.pubsub.subscribe(kind, name, &client);
        }
        frames.push(confirmation(word, Some(name), ctx.session.subs.count()));
    }
    Reply::Frames(frames)
}

/// (P)UNSUBSCRIBE [name...]: the names given, or every one subscribed; one confirmation
/// each, or one with no name when there was none.
fn remove(ctx: &mut Ctx<'_>, args: &Args, kind: Kind) -> Reply {
    let id = ctx.session.id;
    let word = if kind == Kind::Channel { "unsubscribe" } else { "punsubscribe" };
    let names: Vec<Vec<u8>> = match (args.len(), kind) {
        (1, Kind::Channel) => ctx.session.subs.channels.iter().cloned().collect(),
        (1, Kind::Pattern) => ctx.session.subs.patterns.iter().cloned().collect(),
        _ => args.iter().skip(1).cloned().collect(),
    };
    if names.is_empty() {
        return Reply::Frames(vec![confirmation(word, None, ctx.session.subs.count())]);
    }
    let mut frames = Vec::new();
    for name in names {
        let set = match kind {
            Kind::Channel => &mut ctx.session.subs.channels,
            Kind::Pattern => &mut ctx.session.subs.patterns,
        };
        if set.remove(&name) {
            ctx.server.conns.pubsub.unsubscribe(kind, &name, id);
        }
        frames.push(confirmation(word, Some(&name), ctx.session.subs.count()));
    }
    Reply::Frames(frames)
}

/// Drop every subscription of the session, quietly (RESET, and a connection's end).
pub(crate) fn unsubscribe_all(ctx: &mut Ctx<'_>) {
    let id = ctx.session.id;
    let subs = std::mem::take(&mut ctx.session.subs);
    for c in subs.channels {
        ctx.server.conns.pubsub.unsubscribe(Kind::Channel, &c, id);
    }
    for p in subs.patterns {
        ctx.server.conns.pubsub.unsubscribe(Kind::Pattern, &p, id);
    }
}

/// The longest PUBLISH waits for a subscriber to be done with what it sent: only one
/// whose connection makes no progress (stuck writing to a client that does not read)
/// waits this long.
const INPUT_WAIT: Duration = Duration::from_secs(1);

/// PUBLISH: first, subscribers that sent something not yet answered (an UNSUBSCRIBE,
/// maybe) are waited for until they have answered it, so that a message published after a
/// client's UNSUBSCRIBE reached the server does not reach that client (Redis's one thread
/// serves the two in arrival order; connections here run in parallel). What a subscriber
/// had sent is answered once its connection has answered everything it read twice: the
/// first ends the batch it may be running, the second the bytes still in its socket.
/// A chatty subscriber thus holds a PUBLISH for two of its batches, never for what it
/// sends after; a stuck one for [`INPUT_WAIT`].
fn publish(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let hub = &ctx.server.conns.pubsub;
    let channel = arg(args, 1);
    let busy = hub.receivers_with_input(channel, ctx.session.id);
    if !busy.is_empty() {
        if !crate::no_wait::may_wait() {
            // On the connection's task: the request runs again on the blocking pool.
            return super::engine_error(crate::no_wait::refuse("a publish waiting for a subscriber's input"));
        }
        let busy: Vec<_> = busy.into_iter().map(|c| (c.times_answered_all() + 2, c)).collect();
        let until = Instant::now() + INPUT_WAIT;
        while busy.iter().any(|(done_at, c)| c.has_input() && c.times_answered_all() < *done_at && !c.is_killed())
            && Instant::now() < until
        {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    Reply::Int(hub.publish(channel, arg(args, 2)) as i64)
}

/// PUBSUB CHANNELS [pattern] / NUMSUB [channel ...] / NUMPAT.
fn pubsub(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let hub = &ctx.server.conns.pubsub;
    if is(sub, "CHANNELS") && args.len() <= 3 {
        let names = hub.channels(args.get(2).map(Vec::as_slice));
        Reply::Array(names.into_iter().map(Reply::Bulk).collect())
    } else if is(sub, "NUMSUB") {
        let pairs = args.iter().skip(2).flat_map(|c| [Reply::Bulk(c.clone()), Reply::Int(hub.numsub(c) as i64)]);
        Reply::Array(pairs.collect())
    } else if is(sub, "NUMPAT") && args.len() == 2 {
        Reply::Int(hub.numpat() as i64)
    } else {
        Reply::err(format!("unknown subcommand or wrong number of arguments for '{}'", printable(sub)))
    }
}
