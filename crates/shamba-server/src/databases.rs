//! The numbered databases of `SELECT`: database 0 is the engine's default keyspace,
//! database n the keyspace named `db{n}`, created the first time a connection selects it
//! (a keyspace costs a manifest record, so the ones never used are never made). A restart
//! finds the keyspaces it made before under the same names.
//!
//! Strings live raw in those keyspaces. Collections (hashes, sets, ...) live in two more
//! keyspaces per database, `db{n}.meta` and `db{n}.fields` (see `types`), created on the
//! first collection write: a database that never held a collection has neither, and its
//! string commands never probe for one (the flag is whether they exist).
//!
//! SWAPDB exchanges the keyspaces two numbers are served by (`database_map`): the slots
//! below are indexed by keyspace set, and `homes` maps a number to its set. Every command
//! runs holding [`Databases::hold`] (a shared lock; blocking commands only while they
//! try), and a swap takes it exclusively, so no command sees a database change under it.

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use shamba::{Db, Keyspace, WriteOptions};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The name of database `n`'s keyspace.
pub(super) fn keyspace_name(n: usize) -> String {
    if n == 0 {
        "default".to_string()
    } else {
        format!("db{n}")
    }
}

/// The name of database `n`'s metadata keyspace (one entry per collection).
pub(super) fn meta_keyspace_name(n: usize) -> String {
    format!("db{n}.meta")
}

/// The name of database `n`'s fields keyspace (one entry per field or member).
pub(super) fn fields_keyspace_name(n: usize) -> String {
    format!("db{n}.fields")
}

/// A database's collection keyspaces (see `types` for what they hold).
pub(crate) struct Collections {
    /// Key → metadata (type, version, size, deadline).
    pub(crate) meta: Keyspace,
    /// Key, version, field → the field's value.
    pub(crate) fields: Keyspace,
}

/// Databases `0..count`, each its keyspace once it exists.
pub(super) struct Databases {
    db: Db,
    // Database number → the keyspace set serving it (the identity until a SWAPDB).
    homes: Box<[AtomicUsize]>,
    // Shared by running commands, exclusive for a swap.
    swapping: RwLock<()>,
    // Per database number: how many swaps it took part in (WATCH compares).
    swaps: Box<[AtomicU64]>,
    // The stored map's keyspace, once a swap made it.
    map: OnceLock<Keyspace>,
    // By keyspace set. Read without a lock once set: the lookup every command makes.
    slots: Box<[OnceLock<Keyspace>]>,
    // Set once the database's collection keyspaces exist (found at open or made by the
    // first collection write): unset, a string command knows there is no collection.
    collections: Box<[OnceLock<Collections>]>,
    // Held while a keyspace is created, so two connections selecting a new database
    // together create it once.
    creating: Mutex<()>,
}

impl Databases {
    /// `count` databases over `db`, with the keyspaces that already exist.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] for the default keyspace or one already on disk.
    pub(super) fn open(db: Db, count: usize) -> shamba::Result<Databases> {
        let slots: Box<[OnceLock<Keyspace>]> = (0..count.max(1)).map(|_| OnceLock::new()).collect();
        let collections: Box<[OnceLock<Collections>]> = (0..count.max(1)).map(|_| OnceLock::new()).collect();
        let existing = db.keyspace_names();
        for (n, slot) in slots.iter().enumerate() {
            let name = keyspace_name(n);
            if existing.contains(&name) {
                let _ = slot.set(db.keyspace(&name)?);
            }
        }
        for (n, slot) in collections.iter().enumerate() {
            if existing.contains(&meta_keyspace_name(n)) {
                let _ = slot.set(Collections {
                    meta: db.keyspace(&meta_keyspace_name(n))?,
                    fields: db.keyspace(&fields_keyspace_name(n))?,
                });
            }
        }
        let homes = crate::database_map::load(&db, slots.len())?.into_iter().map(AtomicUsize::new).collect();
        let map = OnceLock::new();
        if existing.iter().any(|n| n == crate::database_map::KEYSPACE) {
            let _ = map.set(db.keyspace(crate::database_map::KEYSPACE)?);
        }
        let swaps = (0..slots.len()).map(|_| AtomicU64::new(0)).collect();
        Ok(Databases { db, homes, swapping: RwLock::new(()), swaps, map, slots, collections, creating: Mutex::new(()) })
    }

    /// The keyspace set serving database `n` (`n` itself unless a SWAPDB moved it).
    pub(super) fn home(&self, n: usize) -> Option<usize> {
        self.homes.get(n).map(|h| h.load(Ordering::Acquire))
    }

    /// How many swaps database `n` took part in since the start (0 when out of range).
    pub(super) fn swaps(&self, n: usize) -> u64 {
        self.swaps.get(n).map_or(0, |s| s.load(Ordering::Acquire))
    }

    /// Held while a command runs: no SWAPDB happens meanwhile. Taken again by the same
    /// thread (EXEC's commands, a served blocked client) without waiting for a swap.
    pub(super) fn hold(&self) -> RwLockReadGuard<'_, ()> {
        self.swapping.read_recursive()
    }

    /// SWAPDB: databases `a` and `b` exchange their keyspaces, the stored map first (one
    /// synced batch with `wo`), then the one in memory, while no command runs. The caller
    /// must not [`hold`](Databases::hold).
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] and [`Db::write_opt`]; `None` when either is out of range.
    pub(super) fn swap(&self, a: usize, b: usize, wo: &WriteOptions) -> Option<shamba::Result<()>> {
        let (ha, hb) = (self.home(a)?, self.home(b)?);
        let _alone = self.swapping.write();
        let map = match self.map.get() {
            Some(ks) => ks,
            None => match self.db.keyspace(crate::database_map::KEYSPACE) {
                Ok(ks) => self.map.get_or_init(|| ks),
                Err(e) => return Some(Err(e)),
            },
        };
        if let Err(e) = crate::database_map::store(&self.db, map, [(a, hb), (b, ha)], wo) {
            return Some(Err(e));
        }
        self.homes.get(a)?.store(hb, Ordering::Release);
        self.homes.get(b)?.store(ha, Ordering::Release);
        for n in [a, b] {
            self.swaps.get(n)?.fetch_add(1, Ordering::AcqRel);
        }
        Some(Ok(()))
    }

    /// Create every database's collection keyspaces now (cluster mode: a node that
    /// becomes leader must know of the ones its followers' state machine made).
    pub(super) fn create_all_collections(&self) -> shamba::Result<()> {
        for n in 0..self.count() {
            if let Some(r) = self.collections_or_create(n) {
                r?;
            }
        }
        Ok(())
    }

    /// Database `n`'s collection keyspaces, if it ever held a collection.
    pub(crate) fn collections(&self, n: usize) -> Option<&Collections> {
        self.collections.get(self.home(n)?)?.get()
    }

    /// Database `n`'s collection keyspaces, created if they do not exist yet; `None` when
    /// `n` is out of range.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] when they must be created.
    pub(super) fn collections_or_create(&self, n: usize) -> Option<shamba::Result<&Collections>> {
        let n = self.home(n)?;
        let slot = self.collections.get(n)?;
        if let Some(c) = slot.get() {
            return Some(Ok(c));
        }
        let _creating = self.creating.lock();
        if let Some(c) = slot.get() {
            return Some(Ok(c));
        }
        // The fields first: once the metadata keyspace exists, a restart expects both.
        let made = self.db.keyspace(&fields_keyspace_name(n)).and_then(|fields| {
            let meta = self.db.keyspace(&meta_keyspace_name(n))?;
            Ok(Collections { meta, fields })
        });
        Some(made.map(|c| slot.get_or_init(|| c)))
    }

    /// How many databases there are (`CONFIG GET databases`).
    pub(super) fn count(&self) -> usize {
        self.slots.len()
    }

    /// Database `n`'s keyspace, created if it does not exist yet; `None` when `n` is out of
    /// range.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] when it must be created (a database made read-only by a
    /// background error, say).
    pub(super) fn get(&self, n: usize) -> Option<shamba::Result<&Keyspace>> {
        let n = self.home(n)?;
        let slot = self.slots.get(n)?;
        if let Some(ks) = slot.get() {
            return Some(Ok(ks));
        }
        let _creating = self.creating.lock();
        if let Some(ks) = slot.get() {
            return Some(Ok(ks));
        }
        Some(self.db.keyspace(&keyspace_name(n)).map(|ks| slot.get_or_init(|| ks)))
    }

    /// Every database whose keyspace exists, with its number.
    pub(super) fn existing(&self) -> impl Iterator<Item = (usize, &Keyspace)> {
        (0..self.count()).filter_map(|n| Some((n, self.slots.get(self.home(n)?)?.get()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shamba::Readable;

    #[test]
    fn a_database_is_created_on_first_use_and_found_again_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), shamba::Options::default()).unwrap();
        let dbs = Databases::open(db.clone(), 4).unwrap();
        assert_eq!(dbs.count(), 4);
        assert_eq!(dbs.existing().map(|(n, _)| n).collect::<Vec<_>>(), [0], "only the default keyspace at first");
        assert_eq!(db.keyspace_names(), ["default"]);
        let ks = dbs.get(2).unwrap().unwrap();
        assert_eq!(ks.name(), "db2");
        ks.put(b"k", b"two").unwrap();
        assert!(dbs.get(4).is_none(), "out of range");
        assert_eq!(db.keyspace_names(), ["default", "db2"]);
        drop(dbs);
        db.close().unwrap();

        let db = Db::open(dir.path(), shamba::Options::default()).unwrap();
        let dbs = Databases::open(db.clone(), 4).unwrap();
        assert_eq!(dbs.existing().map(|(n, _)| n).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(dbs.get(2).unwrap().unwrap().get(b"k").unwrap().as_deref(), Some(&b"two"[..]));
        assert_eq!(dbs.get(0).unwrap().unwrap().get(b"k").unwrap(), None);
    }

    #[test]
    fn collection_keyspaces_exist_only_once_written_and_are_found_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), shamba::Options::default()).unwrap();
        let dbs = Databases::open(db.clone(), 4).unwrap();
        assert!(dbs.collections(1).is_none());
        let c = dbs.collections_or_create(1).unwrap().unwrap();
        assert_eq!((c.meta.name(), c.fields.name()), ("db1.meta", "db1.fields"));
        c.meta.put(b"h", b"m").unwrap();
        assert!(dbs.collections(0).is_none(), "another database is untouched");
        assert!(dbs.collections_or_create(4).is_none(), "out of range");
        drop(dbs);
        db.close().unwrap();

        let db = Db::open(dir.path(), shamba::Options::default()).unwrap();
        let dbs = Databases::open(db.clone(), 4).unwrap();
        assert!(dbs.collections(0).is_none());
        let c = dbs.collections(1).expect("found on open");
        assert_eq!(c.meta.get(b"h").unwrap().as_deref(), Some(&b"m"[..]));
    }
}
