//! Keyspace notifications, as Redis 7.0 has them: with `notify-keyspace-events` set, a
//! write publishes `__keyspace@<db>__:<key>` → event and `__keyevent@<db>__:<event>` →
//! key through pub/sub, so they reach subscribers as any message does (queued, never
//! waited for). Which events each command makes is in `events`; the keys given a
//! deadline are watched by `expiring`, which publishes `expired` when one passes.
//!
//! Off (the default), a write pays one atomic load.

mod events;
pub(crate) mod expiring;

pub(crate) use events::{after, before};

use crate::pubsub::Hub;
use crate::session::Ctx;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

/// The event classes, as Redis numbers them.
pub(crate) mod class {
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub(crate) const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub(crate) const KEYEVENT: u32 = 1 << 1;
    /// `g`: DEL, EXPIRE, RENAME, ...
    pub(crate) const GENERIC: u32 = 1 << 2;
    /// `$`: string commands.
    pub(crate) const STRING: u32 = 1 << 3;
    /// `l`: list commands.
    pub(crate) const LIST: u32 = 1 << 4;
    /// `s`: set commands.
    pub(crate) const SET: u32 = 1 << 5;
    /// `h`: hash commands.
    pub(crate) const HASH: u32 = 1 << 6;
    /// `z`: sorted set commands.
    pub(crate) const ZSET: u32 = 1 << 7;
    /// `x`: a key expired.
    pub(crate) const EXPIRED: u32 = 1 << 8;
    /// `e`: a key evicted (never here: nothing is evicted).
    pub(crate) const EVICTED: u32 = 1 << 9;
    /// `t`: stream commands (none here).
    pub(crate) const STREAM: u32 = 1 << 10;
    /// `m`: a read missed (not part of `A`).
    pub(crate) const KEY_MISS: u32 = 1 << 11;
    /// `d`: module events (none here).
    pub(crate) const MODULE: u32 = 1 << 13;
    /// `n`: a key was created (not part of `A`).
    pub(crate) const NEW: u32 = 1 << 14;
    /// `A`: `g$lshzxetd`.
    pub(crate) const ALL: u32 = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// The letters of `notify-keyspace-events` and their classes, in the order Redis prints
/// them.
const LETTERS: &[(u8, u32)] = &[
    (b'g', class::GENERIC),
    (b'$', class::STRING),
    (b'l', class::LIST),
    (b's', class::SET),
    (b'h', class::HASH),
    (b'z', class::ZSET),
    (b'x', class::EXPIRED),
    (b'e', class::EVICTED),
    (b't', class::STREAM),
    (b'd', class::MODULE),
    (b'n', class::NEW),
];

/// `notify-keyspace-events`' value as classes, as Redis reads it: `None` for a letter it
/// does not know.
pub(crate) fn parse(text: &[u8]) -> Option<u32> {
    let mut flags = 0;
    for &c in text {
        flags |= match c {
            b'A' => class::ALL,
            b'K' => class::KEYSPACE,
            b'E' => class::KEYEVENT,
            b'm' => class::KEY_MISS,
            c => LETTERS.iter().find(|(l, _)| *l == c)?.1,
        };
    }
    Some(flags)
}

/// The classes as CONFIG GET prints them (Redis's order; `A` for all of `A`'s).
pub(crate) fn format(flags: u32) -> String {
    let mut s = String::new();
    if flags & class::ALL == class::ALL {
        s.push('A');
        if flags & class::NEW != 0 {
            s.push('n');
        }
    } else {
        s.extend(LETTERS.iter().filter(|(_, c)| flags & c != 0).map(|(l, _)| char::from(*l)));
    }
    for (flag, letter) in [(class::KEYSPACE, 'K'), (class::KEYEVENT, 'E'), (class::KEY_MISS, 'm')] {
        if flags & flag != 0 {
            s.push(letter);
        }
    }
    s
}

/// The classes being published (`notify-keyspace-events`), and the keys with a deadline
/// being watched for `expired`.
#[derive(Debug, Default)]
pub(crate) struct Events {
    flags: AtomicU32,
    pub(crate) expiring: expiring::Expiring,
}

impl Events {
    /// The classes set.
    pub(crate) fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Set the classes (CONFIG SET, the config file).
    pub(crate) fn set_flags(&self, flags: u32) {
        self.flags.store(flags, Ordering::Relaxed);
        if flags & class::EXPIRED == 0 {
            self.expiring.clear();
        }
    }

    /// Whether events of `class` are published: the class set, and K or E.
    pub(crate) fn wants(&self, class: u32) -> bool {
        wanted(self.flags(), class)
    }
}

/// Whether `flags` publish events of `class`.
fn wanted(flags: u32, class: u32) -> bool {
    flags & class != 0 && flags & (class::KEYSPACE | class::KEYEVENT) != 0
}

impl Hub {
    /// Publish `event` on `key` of database `db`, if its class is wanted: on the key's
    /// channel (K) and on the event's (E), as Redis does.
    pub(crate) fn notify(&self, class: u32, event: &str, key: &[u8], db: usize) {
        let flags = self.events.flags();
        if !wanted(flags, class) {
            return;
        }
        if flags & class::KEYSPACE != 0 {
            let mut channel = format!("__keyspace@{db}__:").into_bytes();
            channel.extend_from_slice(key);
            self.publish(&channel, event.as_bytes());
        }
        if flags & class::KEYEVENT != 0 {
            let channel = format!("__keyevent@{db}__:{event}");
            self.publish(channel.as_bytes(), key);
        }
    }
}

impl Ctx<'_> {
    /// Publish `event` on `key` of the selected database (see [`Hub::notify`]); nothing
    /// for a request that will run again elsewhere (see `no_wait`).
    pub(crate) fn notify(&self, class: u32, event: &str, key: &[u8]) {
        if crate::no_wait::refused() {
            return;
        }
        self.server.conns.pubsub.notify(class, event, key, self.session.db);
    }
}

thread_local! {
    /// Writes made on this thread: a command wrote when this moved while it ran.
    static WRITES: Cell<u64> = const { Cell::new(0) };
}

/// A write was made (`Selected::write` succeeded).
pub(crate) fn wrote() {
    WRITES.set(WRITES.get().wrapping_add(1));
}

/// Writes made on this thread so far.
fn writes() -> u64 {
    WRITES.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_strings_read_and_print_as_redis_does() {
        let cases: &[(&str, &str)] =
            &[("gKE", "gKE"), ("$lshzxeKE", "$lshzxeKE"), ("KA", "AK"), ("EA", "AE"), ("", ""), ("En", "nE")];
        for (given, shown) in cases {
            let flags = parse(given.as_bytes());
            assert_eq!(flags.map(format).as_deref(), Some(*shown), "{given}");
        }
        assert_eq!(parse(b"KEm"), Some(class::KEYSPACE | class::KEYEVENT | class::KEY_MISS));
        assert_eq!(parse(b"KEA").map(|f| f & class::NEW), Some(0), "A leaves out n");
        assert_eq!(parse(b"Kq"), None);
        assert_eq!(parse(b"k"), None, "letters are case-sensitive");
    }

    #[test]
    fn nothing_is_wanted_without_k_or_e() {
        assert!(!wanted(class::ALL, class::GENERIC));
        assert!(wanted(class::ALL | class::KEYEVENT, class::GENERIC));
        assert!(!wanted(class::KEYSPACE | class::LIST, class::GENERIC));
    }
}
