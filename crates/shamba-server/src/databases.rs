//! The numbered databases of `SELECT`: database 0 is the engine's default keyspace,
//! database n the keyspace named `db{n}`, created the first time a connection selects it
//! (a keyspace costs a manifest record, so the ones never used are never made). A restart
//! finds the keyspaces it made before under the same names.

use parking_lot::Mutex;
use shamba::{Db, Keyspace};
use std::sync::OnceLock;

/// The name of database `n`'s keyspace.
pub(super) fn keyspace_name(n: usize) -> String {
    if n == 0 {
        "default".to_string()
    } else {
        format!("db{n}")
    }
}

/// Databases `0..count`, each its keyspace once it exists.
pub(super) struct Databases {
    db: Db,
    // Read without a lock once set: the lookup every command makes.
    slots: Box<[OnceLock<Keyspace>]>,
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
        let existing = db.keyspace_names();
        for (n, slot) in slots.iter().enumerate() {
            let name = keyspace_name(n);
            if existing.contains(&name) {
                let _ = slot.set(db.keyspace(&name)?);
            }
        }
        Ok(Databases { db, slots, creating: Mutex::new(()) })
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
        self.slots.iter().enumerate().filter_map(|(n, s)| s.get().map(|ks| (n, ks)))
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
}
