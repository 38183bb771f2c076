//! Shamba behind [`TxEngine`]: `Db::transaction`, `get_for_update`, `put`, `commit`, with
//! `Error::Conflict` (from a read or the commit) as [`Outcome::Conflict`]. The retry is the
//! workload's, the same for every engine, not `Db::transact`'s (which sleeps a little
//! between attempts).

use super::shamba::options;
use super::txn::{Outcome, TxEngine, Update};
use super::{EngineResult, Setup, Variant};
use shamba::{Db, Readable};
use std::path::Path;

/// A Shamba database (every database takes transactions: there is no separate kind).
pub struct ShambaTx {
    db: Db,
}

impl ShambaTx {
    /// Open `dir` with the shared setup (the `shamba` variant's options: Bloom filters).
    pub fn open(dir: &Path, setup: &Setup) -> EngineResult<Self> {
        Ok(ShambaTx { db: Db::open(dir, options(Variant::Shamba, setup))? })
    }
}

/// `Ok(None)` for a conflict, the value otherwise.
fn or_conflict<T>(r: shamba::Result<T>) -> EngineResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_conflict() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl TxEngine for ShambaTx {
    fn variant(&self) -> Variant {
        Variant::Shamba
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put(key, value)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }

    fn read_modify_write(&self, keys: &[&[u8]], update: &mut Update<'_>) -> EngineResult<Outcome> {
        let tx = self.db.transaction();
        let mut read = Vec::with_capacity(keys.len());
        for key in keys {
            match or_conflict(tx.get_for_update(key))? {
                Some(v) => read.push(v),
                None => return Ok(Outcome::Conflict),
            }
        }
        for (key, value) in keys.iter().zip(update(&read)) {
            tx.put(key, value)?;
        }
        Ok(match or_conflict(tx.commit())? {
            Some(()) => Outcome::Committed,
            None => Outcome::Conflict,
        })
    }

    fn settle(&self) -> EngineResult<()> {
        self.db.flush()?;
        self.db.wait_for_compactions()?;
        Ok(())
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        Ok(self.db.close()?)
    }
}
