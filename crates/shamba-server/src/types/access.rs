//! Reading and writing collections through a database ([`Selected`]): what is at a key
//! (the type check), a collection's metadata and fields, and the writes of a command,
//! always added to the command's one [`Batch`].
//!
//! A key holds one value: a string (raw, in the database's own keyspace) or a collection
//! (its metadata in `db{n}.meta`). Writers keep it so under the key's stripe lock: a
//! collection write checks for a string first, a string put deletes a collection of the
//! same name (`Batch::put`).
//!
//! A collection's deadline is in its metadata: an expired one reads as absent, and the next
//! write of its key (or DEL, or a string put) deletes its entries. Deleting a collection is
//! the metadata delete and one range delete over its fields.

use super::encoding::{field_key, fields_prefix, prefix_end, Kind, Meta};
use crate::commands::expiry::now_ms;
use crate::databases::Collections;
use crate::reply::Reply;
use crate::store::{Batch, Selected};
use shamba::{DbIterator, Keyspace};

/// Redis's error for a command on a key of another type.
pub(crate) fn wrong_type() -> Reply {
    Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into())
}

/// What a key holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    Absent,
    String,
    Collection(Meta),
}

impl Entry {
    /// What TYPE answers.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Entry::Absent => "none",
            Entry::String => "string",
            Entry::Collection(m) => m.kind.name(),
        }
    }
}

fn undecodable(c: &Collections, why: String) -> shamba::Error {
    shamba::Error::corruption(c.meta.name(), None, why)
}

/// `key`'s metadata as stored, expired or not (`None`: no collection).
///
/// # Errors
///
/// As [`Keyspace::get`]; a corruption error when the value does not decode.
pub(crate) fn stored_meta(db: &Selected<'_>, c: &Collections, key: &[u8]) -> shamba::Result<Option<Meta>> {
    match db.get_in(&c.meta, key)? {
        None => Ok(None),
        Some(v) => Meta::decode(&v).map(Some).map_err(|why| undecodable(c, why)),
    }
}

/// `key`'s live collection (`None`: none, or expired).
///
/// # Errors
///
/// As [`stored_meta`].
pub(crate) fn live_meta(db: &Selected<'_>, key: &[u8]) -> shamba::Result<Option<Meta>> {
    let Some(c) = db.collections() else {
        return Ok(None);
    };
    let now = now_ms();
    Ok(stored_meta(db, c, key)?.filter(|m| !m.is_expired(now)))
}

/// Live metadata from a stored value (`None` when expired), for readers that walk the
/// metadata keyspace.
pub(crate) fn decode_live(c: &Collections, value: &[u8], now_ms: i64) -> shamba::Result<Option<Meta>> {
    let m = Meta::decode(value).map_err(|why| undecodable(c, why))?;
    Ok((!m.is_expired(now_ms)).then_some(m))
}

/// What `key` holds: the string keyspace is read first (a hit answers without a probe),
/// then the metadata keyspace if the database ever held a collection.
///
/// # Errors
///
/// As [`Keyspace::get`].
pub(crate) fn lookup(db: &Selected<'_>, key: &[u8]) -> shamba::Result<Entry> {
    if db.get(key)?.is_some() {
        return Ok(Entry::String);
    }
    Ok(live_meta(db, key)?.map_or(Entry::Absent, Entry::Collection))
}

/// For a command on a collection of `kind` at `key`: its metadata (`None`: absent), or
/// the reply that ends the command (WRONGTYPE for another type, an engine error).
pub(crate) fn collection(db: &Selected<'_>, key: &[u8], kind: Kind) -> Result<Option<Meta>, Reply> {
    match live_meta(db, key) {
        Ok(Some(m)) if m.kind == kind => return Ok(Some(m)),
        Ok(Some(_)) => return Err(wrong_type()),
        Ok(None) => {}
        Err(e) => return Err(crate::commands::engine_error(e)),
    }
    // Absent as a collection: a string there is the wrong type.
    match db.get(key) {
        Ok(Some(_)) => Err(wrong_type()),
        Ok(None) => Ok(None),
        Err(e) => Err(crate::commands::engine_error(e)),
    }
}

/// A collection being written by one command: its keyspaces, its metadata (a new empty one
/// when the key was absent) and the command's batch. Take the key's lock first.
pub(crate) struct Write<'a> {
    pub(crate) c: &'a Collections,
    pub(crate) meta: Meta,
    pub(crate) batch: Batch,
    /// Whether the key held no live collection before.
    pub(crate) created: bool,
}

impl<'a> Write<'a> {
    /// Open `key` for writing a collection of `kind`: WRONGTYPE for another type (a string
    /// too). The database's collection keyspaces are made on its first collection write.
    /// An expired collection there is deleted in the same batch, and a new one begun.
    pub(crate) fn open(db: &Selected<'a>, key: &[u8], kind: Kind) -> Result<Write<'a>, Reply> {
        Write::open_with(db, key, kind, db.batch())
    }

    /// As [`Write::open`], adding to `batch` (the writes of another key of the same
    /// command, say: SMOVE's source).
    pub(crate) fn open_with(db: &Selected<'a>, key: &[u8], kind: Kind, mut batch: Batch) -> Result<Write<'a>, Reply> {
        let engine = crate::commands::engine_error;
        let c = db.collections_or_create().map_err(engine)?;
        let now = now_ms();
        match stored_meta(db, c, key).map_err(engine)? {
            Some(m) if !m.is_expired(now) => {
                if m.kind != kind {
                    return Err(wrong_type());
                }
                return Ok(Write { c, meta: m, batch, created: false });
            }
            Some(old) => delete_entries(&mut batch, c, key, &old),
            None => {}
        }
        if db.get(key).map_err(engine)?.is_some() {
            return Err(wrong_type());
        }
        Ok(Write { c, meta: Meta::new(kind), batch, created: true })
    }

    /// A new empty collection of `kind`, whatever the key held: `batch` must already delete
    /// what was there (the STORE commands, which replace any type).
    pub(crate) fn open_fresh(db: &Selected<'a>, kind: Kind, batch: Batch) -> Result<Write<'a>, Reply> {
        let c = db.collections_or_create().map_err(crate::commands::engine_error)?;
        Ok(Write { c, meta: Meta::new(kind), batch, created: true })
    }

    /// Put `field` = `value` (the caller counts it in `meta.size` if new).
    pub(crate) fn put_field(&mut self, key: &[u8], field: &[u8], value: &[u8]) {
        self.batch.put_in(&self.c.fields, &field_key(key, self.meta.version, field), value);
    }

    /// Delete `field` (the caller takes it off `meta.size` if it was there).
    pub(crate) fn delete_field(&mut self, key: &[u8], field: &[u8]) {
        self.batch.delete_in(&self.c.fields, &field_key(key, self.meta.version, field));
    }

    /// The batch with the metadata written: the collection's new metadata, or, once it has
    /// no field left, its deletion (an empty collection does not exist, as in Redis).
    pub(crate) fn finish(mut self, key: &[u8]) -> Batch {
        if self.meta.size == 0 {
            if !self.created {
                delete_entries(&mut self.batch, self.c, key, &self.meta);
            }
        } else {
            self.batch.put_in(&self.c.meta, key, &self.meta.encode());
        }
        self.batch
    }
}

/// Add the delete of the collection `meta` describes at `key` to `batch`: its metadata
/// and, by one range delete, its fields.
pub(crate) fn delete_entries(batch: &mut Batch, c: &Collections, key: &[u8], meta: &Meta) {
    batch.delete_in(&c.meta, key);
    let start = fields_prefix(key, meta.version);
    if let Some(end) = prefix_end(&start) {
        batch.delete_range_in(&c.fields, &start, &end);
    }
}

/// Add the delete of the collection at `key` (live or expired), if any, to `batch`.
/// Answers whether a live one was there (what DEL counts).
///
/// # Errors
///
/// As [`stored_meta`].
pub(crate) fn delete_collection(db: &Selected<'_>, batch: &mut Batch, key: &[u8]) -> shamba::Result<bool> {
    let Some(c) = db.collections() else {
        return Ok(false);
    };
    match stored_meta(db, c, key)? {
        Some(m) => {
            delete_entries(batch, c, key, &m);
            Ok(!m.is_expired(now_ms()))
        }
        None => Ok(false),
    }
}

/// Rewrite the metadata of the collection at `key` (a new deadline, say) into `batch`.
pub(crate) fn put_meta(batch: &mut Batch, c: &Collections, key: &[u8], meta: &Meta) {
    batch.put_in(&c.meta, key, &meta.encode());
}

/// The value of `field` in `key`'s collection `meta`.
///
/// # Errors
///
/// As [`Keyspace::get`].
pub(crate) fn get_field(db: &Selected<'_>, key: &[u8], meta: &Meta, field: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
    match db.collections() {
        Some(c) => db.get_in(&c.fields, &field_key(key, meta.version, field)),
        None => Ok(None),
    }
}

/// The values of `fields` in `key`'s collection `meta`, in order, by one `multi_get`.
///
/// # Errors
///
/// As [`Keyspace::multi_get`].
pub(crate) fn get_fields<'f>(
    db: &Selected<'_>,
    key: &[u8],
    meta: &Meta,
    fields: impl IntoIterator<Item = &'f [u8]>,
) -> shamba::Result<Vec<Option<Vec<u8>>>> {
    let keys: Vec<Vec<u8>> = fields.into_iter().map(|f| field_key(key, meta.version, f)).collect();
    match db.collections() {
        Some(c) => db.get_many_in(&c.fields, keys.iter().map(Vec::as_slice)),
        None => Ok(vec![None; keys.len()]),
    }
}

/// The fields of `key`'s collection `meta` in field order, each with its value: one
/// prefix scan. `after`: start after that field (a scan's cursor).
pub(crate) fn fields<'a>(db: &Selected<'a>, key: &[u8], meta: &Meta, after: Option<&[u8]>) -> Fields {
    let prefix = fields_prefix(key, meta.version);
    let it = db.collections().map(|c| {
        let mut it = db.prefix_in(&c.fields, &prefix);
        if let Some(after) = after {
            it.seek(field_key(key, meta.version, after));
        }
        it
    });
    Fields { it, skip: after.map(|a| field_key(key, meta.version, a)), strip: prefix.len() }
}

/// A collection's fields with their values (see [`fields`]).
pub(crate) struct Fields {
    it: Option<DbIterator>,
    skip: Option<Vec<u8>>,
    strip: usize,
}

impl Iterator for Fields {
    type Item = shamba::Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let item = self.it.as_mut()?.next()?;
            return Some(match item {
                Ok((k, v)) => {
                    if self.skip.as_ref() == Some(&k) {
                        self.skip = None;
                        continue;
                    }
                    Ok((k.get(self.strip..).unwrap_or_default().to_vec(), v))
                }
                Err(e) => Err(e),
            });
        }
    }
}

/// The metadata keyspace's handle, for walkers of every key.
#[allow(dead_code, reason = "the encoding's API for every collection type")]
pub(crate) fn meta_keyspace<'a>(db: &Selected<'a>) -> Option<&'a Keyspace> {
    db.collections().map(|c| &c.meta)
}
