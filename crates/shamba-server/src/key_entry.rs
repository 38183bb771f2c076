//! A key as a whole, whatever it holds: what RENAME, COPY, MOVE and RANDOMKEY move or
//! pick. A string is its value and deadline; a collection its metadata and every entry
//! under its version (fields, members, a sorted set's score index, a list's elements:
//! copied as they are, so a type's own layout needs nothing here).

use crate::store::{Batch, Selected};
use crate::types::{self, Entry, Meta};
use shamba::Ttl;
use std::time::SystemTime;

/// Everything a key holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyEntry {
    /// A string: its value and its deadline.
    String { value: Vec<u8>, expires: Option<SystemTime> },
    /// A collection: its metadata (deadline included) and its entries, each the part of
    /// the engine key after the collection's prefix, with its value.
    Collection { meta: Meta, entries: Vec<(Vec<u8>, Vec<u8>)> },
}

impl Selected<'_> {
    /// `key` whole, or `None` when absent (or expired).
    pub(crate) fn read_entry(&self, key: &[u8]) -> shamba::Result<Option<KeyEntry>> {
        match types::lookup(self, key)? {
            Entry::Absent => Ok(None),
            Entry::Collection(meta) => {
                let entries = types::fields(self, key, &meta, None).collect::<shamba::Result<Vec<_>>>()?;
                Ok(Some(KeyEntry::Collection { meta, entries }))
            }
            Entry::String => {
                let Some(value) = self.get(key)? else {
                    return Ok(None);
                };
                let expires = match self.ttl(key)? {
                    Ttl::Remaining(d) => Some(SystemTime::now() + d),
                    // Expired between the two reads: a deadline already past.
                    Ttl::Absent => Some(SystemTime::UNIX_EPOCH),
                    Ttl::Persistent => None,
                };
                Ok(Some(KeyEntry::String { value, expires }))
            }
        }
    }

    /// Add to `batch` the writes that make `key` hold `entry`, replacing whatever it held.
    /// A collection is written under a new version, so nothing of an earlier one at `key`
    /// is read as its own.
    pub(crate) fn write_entry(&self, batch: &mut Batch, key: &[u8], entry: &KeyEntry) -> shamba::Result<()> {
        self.delete_entry(batch, key)?;
        match entry {
            KeyEntry::String { value, expires: Some(at) } => batch.put_expiring(self, key, value, *at),
            KeyEntry::String { value, expires: None } => batch.put(self, key, value),
            KeyEntry::Collection { meta, entries } => {
                let c = self.collections_or_create()?;
                let copy = Meta { version: Meta::new(meta.kind).version, ..meta.clone() };
                types::put_meta(batch, c, key, &copy);
                let prefix = types::fields_prefix(key, copy.version);
                for (suffix, value) in entries {
                    let mut k = prefix.clone();
                    k.extend_from_slice(suffix);
                    batch.put_in(&c.fields, &k, value);
                }
            }
        }
        Ok(())
    }

    /// Add to `batch` the delete of `key` and all it holds, of any type.
    pub(crate) fn delete_entry(&self, batch: &mut Batch, key: &[u8]) -> shamba::Result<()> {
        batch.delete(self, key);
        types::delete_collection(self, batch, key)?;
        Ok(())
    }

    /// The first key after `from`, else the first key, of any type: a key picked by
    /// where `from` falls (RANDOMKEY), `None` when the database is empty.
    pub(crate) fn key_near(&self, from: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        for after in [Some(from), None] {
            if let Some(item) = types::walk_keys(self, b"", after).next() {
                return item.map(|(k, _)| Some(k));
            }
        }
        Ok(None)
    }
}
