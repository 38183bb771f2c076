//! Which keyspaces serve each database number: database n is served by keyspace set h
//! (`db{h}`, `db{h}.meta`, `db{h}.fields`; `default` for h = 0), h = n until a SWAPDB
//! exchanges two numbers' sets. The numbers whose set is not their own are stored in a
//! keyspace of their own (`server.databases`, made by the first SWAPDB): key the number,
//! value the set, both u64 big-endian. A swap's two entries are written in one synced batch.

use shamba::{Db, Keyspace, Readable, WriteBatch, WriteOptions};

/// The keyspace that stores the numbers served by another number's keyspaces.
pub(super) const KEYSPACE: &str = "server.databases";

/// Each number's keyspace set, as stored: the identity where nothing is.
///
/// # Errors
///
/// As [`Db::keyspace`] and the keyspace's reads; [`shamba::Error::InvalidArgument`] when the
/// stored map names a database past `count` or is not one set per number (the server was
/// started with fewer databases than a SWAPDB used).
pub(super) fn load(db: &Db, count: usize) -> shamba::Result<Vec<usize>> {
    let mut homes: Vec<usize> = (0..count).collect();
    if !db.keyspace_names().iter().any(|n| n == KEYSPACE) {
        return Ok(homes);
    }
    let ks = db.keyspace(KEYSPACE)?;
    let bad = |why: String| shamba::Error::InvalidArgument(format!("{KEYSPACE}: {why}"));
    for item in ks.iter() {
        let (k, v) = item?;
        let (Some(n), Some(h)) = (number(&k), number(&v)) else {
            return Err(bad("an entry is not two 8-byte numbers".into()));
        };
        match homes.get_mut(n) {
            Some(slot) if h < count => *slot = h,
            _ => {
                return Err(bad(format!(
                    "SWAPDB exchanged database {n} with {h}: start with more than {count} databases"
                )))
            }
        }
    }
    let mut seen = vec![false; count];
    for &h in &homes {
        match seen.get_mut(h) {
            Some(s) if !*s => *s = true,
            _ => return Err(bad(format!("two databases are served by keyspace set {h}"))),
        }
    }
    Ok(homes)
}

/// Store that database `a` is served by set `home_a` and `b` by `home_b`, durably, in one
/// batch (an entry equal to its number is deleted).
///
/// # Errors
///
/// As [`Db::write_opt`].
pub(super) fn store(db: &Db, ks: &Keyspace, pairs: [(usize, usize); 2], wo: &WriteOptions) -> shamba::Result<()> {
    let mut batch = WriteBatch::new();
    for (n, h) in pairs {
        let key = (n as u64).to_be_bytes();
        if n == h {
            batch.delete_in(ks, key);
        } else {
            batch.put_in(ks, key, (h as u64).to_be_bytes());
        }
    }
    db.write_opt(batch, &WriteOptions { sync: true, ..wo.clone() })
}

fn number(b: &[u8]) -> Option<usize> {
    usize::try_from(u64::from_be_bytes(b.try_into().ok()?)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_swap_is_loaded_and_a_swap_back_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), shamba::Options::default()).unwrap();
        assert_eq!(load(&db, 4).unwrap(), [0, 1, 2, 3]);
        assert!(!db.keyspace_names().contains(&KEYSPACE.to_string()), "made by the first swap only");
        let ks = db.keyspace(KEYSPACE).unwrap();
        let wo = WriteOptions::default();
        store(&db, &ks, [(0, 3), (3, 0)], &wo).unwrap();
        assert_eq!(load(&db, 4).unwrap(), [3, 1, 2, 0]);
        assert!(load(&db, 3).unwrap_err().to_string().contains("more than 3 databases"));
        store(&db, &ks, [(0, 0), (3, 3)], &wo).unwrap();
        assert_eq!(ks.iter().count(), 0);
        ks.put(1u64.to_be_bytes(), 2u64.to_be_bytes()).unwrap();
        assert!(load(&db, 4).unwrap_err().to_string().contains("two databases"));
    }
}
