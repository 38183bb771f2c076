//! Compaction filters that reclaim expired collections without a later write (kvrocks's
//! metadata and subkey filters): over `db{n}.meta`, an expired collection's metadata is
//! removed; over `db{n}.fields`, a field is removed when its collection's metadata is gone,
//! expired, or of another version (a collection deleted, or replaced under the same name).
//!
//! A filter is a setting of the process, given at every open (`Options::keyspace_options`),
//! before the keyspaces it reads exist: the fields filter finds its metadata keyspace once
//! the database is open ([`CollectionFilters::attach`]) and the keyspace made, and keeps
//! every entry until then. A field whose metadata cannot be read or decoded is kept. The
//! filters live in the database's options, so their handle of the database is released
//! when the server's store drops ([`CollectionFilters::detach`]): a handle kept there
//! would keep the database open.

use super::encoding::Meta;
use crate::commands::expiry::now_ms;
use crate::databases::{fields_keyspace_name, meta_keyspace_name};
use parking_lot::{Mutex, RwLock};
use shamba::{CompactionFilter, Db, FilterDecision, Keyspace, KeyspaceOptions, Options, Readable};
use std::sync::Arc;

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
    db: Arc<RwLock<Option<Db>>>,
    meta_name: String,
    meta: Mutex<Option<Keyspace>>,
    /// The last collection decided: its key, version and whether it is live (a
    /// collection's fields are read one after another).
    last: Mutex<Option<(Vec<u8>, u64, bool)>>,
}

impl OrphanFields {
    fn meta(&self) -> Option<Keyspace> {
        let mut meta = self.meta.lock();
        if let Some(ks) = meta.as_ref() {
            return Some(ks.clone());
        }
        let db = self.db.read();
        let db = db.as_ref()?;
        // Only found, never made here.
        if !db.keyspace_names().contains(&self.meta_name) {
            return None;
        }
        let ks = db.keyspace(&self.meta_name).ok()?;
        *meta = Some(ks.clone());
        Some(ks)
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
    db: Arc<RwLock<Option<Db>>>,
    fields: Mutex<Vec<Arc<OrphanFields>>>,
}

impl CollectionFilters {
    /// `opts` with the filters of `databases` databases' collection keyspaces added.
    pub(crate) fn install(&self, opts: &mut Options, databases: usize) {
        let meta: Arc<dyn CompactionFilter> = Arc::new(ExpiredMeta);
        for n in 0..databases {
            let orphans = Arc::new(OrphanFields {
                db: self.db.clone(),
                meta_name: meta_keyspace_name(n),
                meta: Mutex::new(None),
                last: Mutex::new(None),
            });
            self.fields.lock().push(orphans.clone());
            let fields: Arc<dyn CompactionFilter> = orphans;
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
        *self.db.write() = Some(db.clone());
    }

    /// The server is done with the database: the filters let go of it (and keep every
    /// entry from then on).
    pub(crate) fn detach(&self) {
        *self.db.write() = None;
        for f in self.fields.lock().iter() {
            f.meta.lock().take();
        }
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
