//! Every key of a database in key order, whatever its type: the string keyspace and the
//! metadata keyspace walked side by side and merged (SCAN, KEYS, DBSIZE). Expired
//! collections are skipped.

use super::access::decode_live;
use crate::commands::expiry::now_ms;
use crate::store::Selected;
use std::iter::Peekable;

/// A key and its type's name (what TYPE answers).
pub(crate) type Typed = (Vec<u8>, &'static str);

/// The keys starting with `prefix`, after `after` when given, in order.
pub(crate) fn keys<'a>(db: &Selected<'a>, prefix: &[u8], after: Option<&[u8]>) -> Keys<'a> {
    let mut strings = db.prefix(prefix);
    if let Some(a) = after {
        strings.seek(a);
    }
    let collections = db.collections().map(|c| {
        let mut it = db.prefix_in(&c.meta, prefix);
        if let Some(a) = after {
            it.seek(a);
        }
        let now = now_ms();
        let decoded = it.filter_map(move |item| match item {
            Ok((k, v)) => match decode_live(c, &v, now) {
                Ok(Some(m)) => Some(Ok((k, m.kind.name()))),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            },
            Err(e) => Some(Err(e)),
        });
        Box::new(decoded) as Box<dyn Iterator<Item = shamba::Result<Typed>> + 'a>
    });
    let strings = Box::new(strings.map(|item| item.map(|(k, _)| (k, "string"))))
        as Box<dyn Iterator<Item = shamba::Result<Typed>> + 'a>;
    Keys {
        strings: strings.peekable(),
        collections: collections.map(Iterator::peekable),
        after: after.map(<[u8]>::to_vec),
    }
}

/// The merged walk (see [`keys`]).
pub(crate) struct Keys<'a> {
    strings: Peekable<Box<dyn Iterator<Item = shamba::Result<Typed>> + 'a>>,
    collections: Option<Peekable<Box<dyn Iterator<Item = shamba::Result<Typed>> + 'a>>>,
    after: Option<Vec<u8>>,
}

impl Keys<'_> {
    fn next_merged(&mut self) -> Option<shamba::Result<Typed>> {
        let Some(coll) = self.collections.as_mut() else {
            return self.strings.next();
        };
        let take_string = match (self.strings.peek(), coll.peek()) {
            (None, None) => return None,
            (Some(Err(_)), _) => true,
            (_, Some(Err(_))) => false,
            (Some(Ok(_)), None) => true,
            (None, Some(Ok(_))) => false,
            (Some(Ok((s, _))), Some(Ok((c, _)))) => s <= c,
        };
        if take_string {
            self.strings.next()
        } else {
            coll.next()
        }
    }
}

impl Iterator for Keys<'_> {
    type Item = shamba::Result<Typed>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let item = self.next_merged()?;
            if let (Ok((k, _)), Some(a)) = (&item, &self.after) {
                if k == a {
                    continue;
                }
            }
            return Some(item);
        }
    }
}
