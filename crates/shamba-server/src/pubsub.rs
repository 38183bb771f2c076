//! Pub/sub in memory, as Redis has it: channels and patterns each map to their
//! subscribers; PUBLISH queues the message on every subscriber's own queue (see
//! `clients::Client::deliver`) and never waits for one, so a slow subscriber costs its
//! publishers nothing (one that falls too far behind is dropped). A connection writes its
//! queue between its replies: RESP3 push frames, or RESP2 arrays.

use super::clients::Client;
use super::glob;
use super::reply::Reply;
use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One message on its way to one subscriber.
#[derive(Clone, Debug)]
pub(crate) struct Message {
    /// The pattern it matched, for a `pmessage`.
    pub(crate) pattern: Option<Arc<[u8]>>,
    pub(crate) channel: Arc<[u8]>,
    pub(crate) payload: Arc<[u8]>,
}

impl Message {
    /// Bytes it holds in a queue (what the queue's limit counts).
    pub(crate) fn size(&self) -> usize {
        self.pattern.as_ref().map_or(0, |p| p.len()) + self.channel.len() + self.payload.len() + 32
    }

    /// The push a subscriber receives: `message channel payload` or
    /// `pmessage pattern channel payload`.
    pub(crate) fn reply(&self) -> Reply {
        let b = |x: &Arc<[u8]>| Reply::Bulk(x.to_vec());
        let items = match &self.pattern {
            None => vec![Reply::text_bulk("message"), b(&self.channel), b(&self.payload)],
            Some(p) => vec![Reply::text_bulk("pmessage"), b(p), b(&self.channel), b(&self.payload)],
        };
        Reply::Push(items)
    }
}

/// A session's subscriptions.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    pub(crate) channels: BTreeSet<Vec<u8>>,
    pub(crate) patterns: BTreeSet<Vec<u8>>,
}

impl Subscriptions {
    /// Channels and patterns together: the count subscribe replies carry.
    pub(crate) fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }
}

type Subscribers = HashMap<Vec<u8>, HashMap<u64, Arc<Client>>>;

/// Who is subscribed to what, server-wide.
#[derive(Debug, Default)]
pub(crate) struct Hub {
    tables: Mutex<Tables>,
    /// Keyspace notifications: the classes published (see `notify`).
    pub(crate) events: crate::notify::Events,
}

#[derive(Debug, Default)]
struct Tables {
    channels: Subscribers,
    patterns: Subscribers,
}

/// Which table an operation is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Channel,
    Pattern,
}

impl Hub {
    /// Subscribe `client` to `name` (a channel or a pattern).
    pub(crate) fn subscribe(&self, kind: Kind, name: &[u8], client: &Arc<Client>) {
        client.ever_subscribed.store(true, Ordering::Relaxed);
        let mut t = self.tables.lock();
        t.table(kind).entry(name.to_vec()).or_default().insert(client.id, client.clone());
    }

    /// Unsubscribe client `id` from `name`.
    pub(crate) fn unsubscribe(&self, kind: Kind, name: &[u8], id: u64) {
        let mut t = self.tables.lock();
        let table = t.table(kind);
        if let Some(subs) = table.get_mut(name) {
            subs.remove(&id);
            if subs.is_empty() {
                table.remove(name);
            }
        }
    }

    /// Remove client `id` from every channel and pattern (its connection ended).
    pub(crate) fn remove_client(&self, id: u64) {
        let mut guard = self.tables.lock();
        let t = &mut *guard;
        for table in [&mut t.channels, &mut t.patterns] {
            table.retain(|_, subs| {
                subs.remove(&id);
                !subs.is_empty()
            });
        }
    }

    /// PUBLISH: queue `payload` for the subscribers of `channel` and of every pattern it
    /// matches; how many received it.
    pub(crate) fn publish(&self, channel: &[u8], payload: &[u8]) -> usize {
        let t = self.tables.lock();
        let channel_arc: Arc<[u8]> = channel.into();
        let payload: Arc<[u8]> = payload.into();
        let mut received = 0;
        if let Some(subs) = t.channels.get(channel) {
            for c in subs.values() {
                let msg = Message { pattern: None, channel: channel_arc.clone(), payload: payload.clone() };
                received += usize::from(c.deliver(msg));
            }
        }
        for (pattern, subs) in &t.patterns {
            if !glob::matches(pattern, channel) {
                continue;
            }
            let pattern: Arc<[u8]> = pattern.as_slice().into();
            for c in subs.values() {
                let msg =
                    Message { pattern: Some(pattern.clone()), channel: channel_arc.clone(), payload: payload.clone() };
                received += usize::from(c.deliver(msg));
            }
        }
        received
    }

    /// The subscribers a message to `channel` would reach (other than client `publisher`)
    /// that sent something the server has not answered yet (see `input_probe`).
    pub(crate) fn receivers_with_input(&self, channel: &[u8], publisher: u64) -> Vec<Arc<Client>> {
        let t = self.tables.lock();
        let by_channel = t.channels.get(channel).into_iter().flat_map(HashMap::values);
        let by_pattern =
            t.patterns.iter().filter(|(p, _)| glob::matches(p, channel)).flat_map(|(_, subs)| subs.values());
        let mut out: Vec<Arc<Client>> = Vec::new();
        for c in by_channel.chain(by_pattern) {
            if c.id != publisher && !out.iter().any(|o| o.id == c.id) && c.has_input() {
                out.push(c.clone());
            }
        }
        out
    }

    /// PUBSUB CHANNELS: the channels with a subscriber, those matching `pattern` if given.
    pub(crate) fn channels(&self, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        let t = self.tables.lock();
        let mut names: Vec<Vec<u8>> =
            t.channels.keys().filter(|c| pattern.is_none_or(|p| glob::matches(p, c))).cloned().collect();
        names.sort();
        names
    }

    /// PUBSUB NUMSUB: subscribers of `channel`.
    pub(crate) fn numsub(&self, channel: &[u8]) -> usize {
        self.tables.lock().channels.get(channel).map_or(0, HashMap::len)
    }

    /// PUBSUB NUMPAT: patterns with a subscriber.
    pub(crate) fn numpat(&self) -> usize {
        self.tables.lock().patterns.len()
    }
}

impl Tables {
    fn table(&mut self, kind: Kind) -> &mut Subscribers {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_reaches_channel_and_pattern_subscribers_once_each() {
        let hub = Hub::default();
        let a = Client::detached(1);
        let b = Client::detached(2);
        hub.subscribe(Kind::Channel, b"news.art", &a);
        hub.subscribe(Kind::Pattern, b"news.*", &a);
        hub.subscribe(Kind::Pattern, b"news.*", &b);
        hub.subscribe(Kind::Pattern, b"sport.*", &b);
        assert_eq!(hub.publish(b"news.art", b"x"), 3);
        assert_eq!(hub.publish(b"sport.ski", b"x"), 1);
        assert_eq!(hub.publish(b"weather", b"x"), 0);
        assert_eq!(hub.numpat(), 2);
        assert_eq!(hub.numsub(b"news.art"), 1);
        hub.remove_client(1);
        assert_eq!(hub.publish(b"news.art", b"x"), 1);
        assert_eq!(hub.channels(None), Vec::<Vec<u8>>::new());
        hub.unsubscribe(Kind::Pattern, b"news.*", 2);
        assert_eq!(hub.numpat(), 1);
    }
}
