//! Collections on the engine, kvrocks's layout: per key, one metadata entry (type,
//! version, size, deadline) in the database's `db{n}.meta` keyspace, and one entry per
//! field or member in `db{n}.fields` under the key and the version. A collection's fields
//! are one prefix scan; deleting one is the metadata delete and one range delete.
//!
//! `encoding` is the bytes (with the format version), `access` the reads and writes
//! through a database, `string_guard` the type check string commands get, `walk` every
//! key of a database whatever its type, `expired_filter` the compaction filters that
//! reclaim expired collections.

mod access;
mod encoding;
mod expired_filter;
mod string_guard;
mod walk;

// The whole API stays exported for the other collection types (sorted sets, lists), which
// use parts the hash and set commands do not.
#[allow(unused_imports, reason = "the encoding's API for every collection type")]
pub(crate) use access::{
    collection, decode_live, delete_collection, delete_entries, fields, get_field, get_fields, live_meta, lookup,
    meta_keyspace, put_meta, stored_meta, wrong_type, Entry, Fields, Write,
};
#[allow(unused_imports, reason = "the encoding's API for every collection type")]
pub(crate) use encoding::{field_key, fields_prefix, prefix_end, Kind, Meta, FORMAT_VERSION};
pub(crate) use expired_filter::CollectionFilters;
pub(crate) use string_guard::{absent_string, check as check_string_command};
pub(crate) use walk::keys as walk_keys;

#[cfg(test)]
mod tests;
