//! A key as a whole, whatever it holds: what RENAME, COPY, MOVE and RANDOMKEY move or
//! pick. Today every key is a string (its value and deadline); a type stored as several
//! engine entries extends [`KeyEntry`] and these three methods, and the commands stay as
//! they are.

use crate::store::{Batch, Selected};
use shamba::Ttl;
use std::time::SystemTime;

/// Everything a key holds: its value and its deadline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyEntry {
    pub(crate) value: Vec<u8>,
    pub(crate) expires: Option<SystemTime>,
}

impl Selected<'_> {
    /// `key` whole, or `None` when absent (or expired).
    pub(crate) fn read_entry(&self, key: &[u8]) -> shamba::Result<Option<KeyEntry>> {
        let Some(value) = self.get(key)? else {
            return Ok(None);
        };
        let expires = match self.ttl(key)? {
            Ttl::Remaining(d) => Some(SystemTime::now() + d),
            // Expired between the two reads: a deadline already past.
            Ttl::Absent => Some(SystemTime::UNIX_EPOCH),
            Ttl::Persistent => None,
        };
        Ok(Some(KeyEntry { value, expires }))
    }

    /// Add to `batch` the writes that make `key` hold `entry` (replacing what it held).
    pub(crate) fn write_entry(&self, batch: &mut Batch, key: &[u8], entry: &KeyEntry) {
        match entry.expires {
            Some(at) => batch.put_expiring(self, key, &entry.value, at),
            None => batch.put(self, key, &entry.value),
        }
    }

    /// Add to `batch` the delete of `key` and all it holds.
    pub(crate) fn delete_entry(&self, batch: &mut Batch, key: &[u8]) {
        batch.delete(self, key);
    }

    /// The first key at or after `from`, else the first key: a key picked by where `from`
    /// falls (RANDOMKEY), `None` when the database is empty.
    pub(crate) fn key_near(&self, from: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        for start in [from, &[]] {
            if let Some(item) = self.keys_from(start).next() {
                return item.map(|(k, _)| Some(k));
            }
        }
        Ok(None)
    }
}
