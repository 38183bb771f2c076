//! Compaction filters that reclaim expired collections without a later write (kvrocks's
//! metadata and subkey filters): over `db{n}.meta`, an expired collection's metadata is
//! removed; over `db{n}.fields`, a field is removed when its collection's metadata is gone,
//! expired, or of another version (a collection deleted, or replaced under the same name).
//!
//! A filter is a setting of the process, given at every open (`Options::keyspace_options`),
//! before the keyspaces it reads exist: the fields filter finds its metadata keyspace once
//! the database is open ([`CollectionFilters::attach`]) and the keyspace made, and keeps
//! every entry until then. A field whose metadata cannot be read or decoded is kept.

use super::encoding::Meta;
use crate::commands::expiry::now_ms;
use crate::databases::{fields_keyspace_name, meta_keyspace_name};
use parking_lot::Mutex;
use shamba::{CompactionFilter, Db, FilterDecision, Keyspace, KeyspaceOptions, Options, Readable};
use std::sync::{Arc, OnceLock};

/// Removes expired metadata.
struct ExpiredMeta;

impl CompactionFilter for ExpiredMeta {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        match Meta::decode(value) {
            Ok(m) if m.is_expired(now_ms()) => FilterDecision::Remove,
            _ => FilterDecision::Keep,
        }
    }

    fn name(&self) -> &str {
        "ExpiredCollectionMetadata"
    }
}

/// Removes the fields of collections that are no longer live.
struct OrphanFields {
    db: Arc<OnceLock<Db>>,
    meta_name: String,
    meta: OnceLock<Keyspace>,
    /// The last collection decided: its key, version and whether it is live (a
    /// collection's fields are read one after another).
    last: Mutex<Option<(Vec<u8>, u64, bool)>>,
}

impl OrphanFields {
    fn meta(&self) -> Option<&Keyspace> {
        if let Some(ks) = self.meta.get() {
            return Some(ks);
        }
        let db = self.db.get()?;
        // Only found, never made here.
        if !db.keyspace_names().contains(&self.meta_name) {
            return None;
        }
        let ks = db.keyspace(&self.meta_name).ok()?;
        Some(self.meta.get_or_init(|| ks))
    }

    /// Whether the collection `key` of `version` is live; `None` when its metadata cannot
    /// be read.
    fn live(&self, key: &[u8], version: u64) -> Option<bool> {
        if let Some((k, v, live)) = self.last.lock().as_ref() {
            if k == key && *v == version {
                return Some(*live);
            }
        }
        let live = match self.meta()?.get(key).ok()? {
            None => false,
            Some(value) => {
                let m = Meta::decode(&value).ok()?;
                m.version == version && !m.is_expired(now_ms())
            }
        };
        *self.last.lock() = Some((key.to_vec(), version, live));
        Some(live)
    }
}

/// A field key's collection key and version (`u32 BE length ‖ key ‖ u64 BE version ‖ field`).
fn owner(field_key: &[u8]) -> Option<(&[u8], u64)> {
    let len = usize::try_from(u32::from_be_bytes(field_key.get(..4)?.try_into().ok()?)).ok()?;
    let key = field_key.get(4..4 + len)?;
    let version = u64::from_be_bytes(field_key.get(4 + len..12 + len)?.try_into().ok()?);
    Some((key, version))
}

impl CompactionFilter for OrphanFields {
    fn filter(&self, _level: usize, key: &[u8], _value: &[u8]) -> FilterDecision {
        match owner(key).and_then(|(k, v)| self.live(k, v)) {
            Some(false) => FilterDecision::Remove,
            _ => FilterDecision::Keep,
        }
    }

    fn name(&self) -> &str {
        "OrphanCollectionFields"
    }
}

/// The filters of every database's collection keyspaces.
#[derive(Default)]
pub(crate) struct CollectionFilters {
    db: Arc<OnceLock<Db>>,
}

impl CollectionFilters {
    /// `opts` with the filters of `databases` databases' collection keyspaces added.
    pub(crate) fn install(&self, opts: &mut Options, databases: usize) {
        let meta: Arc<dyn CompactionFilter> = Arc::new(ExpiredMeta);
        for n in 0..databases {
            let fields: Arc<dyn CompactionFilter> = Arc::new(OrphanFields {
                db: self.db.clone(),
                meta_name: meta_keyspace_name(n),
                meta: OnceLock::new(),
                last: Mutex::new(None),
            });
            let with = |filter: &Arc<dyn CompactionFilter>| KeyspaceOptions {
                compaction_filter: Some(filter.clone()),
                ..KeyspaceOptions::of(opts)
            };
            let (m, f) = (with(&meta), with(&fields));
            opts.keyspace_options.push((meta_keyspace_name(n), m));
            opts.keyspace_options.push((fields_keyspace_name(n), f));
        }
    }

    /// The database is open: the fields filters may read its metadata keyspaces.
    pub(crate) fn attach(&self, db: &Db) {
        let _ = self.db.set(db.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{field_key, Kind};

    #[test]
    fn a_field_key_names_its_collection() {
        assert_eq!(owner(&field_key(b"k", 7, b"f")), Some((&b"k"[..], 7)));
        assert_eq!(owner(&field_key(b"", 1, b"")), Some((&b""[..], 1)));
        assert_eq!(owner(b"\x00\x00\x00\x09short"), None);
    }

    #[test]
    fn expired_metadata_goes_and_live_metadata_stays() {
        let mut m = Meta::new(Kind::Hash);
        assert_eq!(ExpiredMeta.filter(1, b"k", &m.encode()), FilterDecision::Keep);
        m.deadline_ms = Some(1);
        assert_eq!(ExpiredMeta.filter(1, b"k", &m.encode()), FilterDecision::Remove);
        assert_eq!(ExpiredMeta.filter(1, b"k", b"not metadata"), FilterDecision::Keep);
    }
}
