//! fjall behind [`TxEngine`]: `OptimisticTxDatabase::write_tx`, reads through the
//! transaction (each one recorded for its conflict check), `insert`, `commit`, whose
//! `Err(Conflict)` is [`Outcome::Conflict`]. Its transactions are serializable (every read
//! is checked, not only those for update), a stronger check than the other two make here;
//! with every key read and then written, the conflicts found are the same ones.
//!
//! Durability: a transaction commits with `PersistMode::Buffer` (the journal written to the
//! OS, not synced), fjall's default. A plain put is the transactional keyspace's `insert`,
//! itself a one-write transaction: a write to the keyspace under it (`inner()`) would be
//! cheaper but invisible to the conflict check, so a transaction could commit over it.

use super::fjall::{keyspace_options, settle, KEYSPACE};
use super::txn::{Outcome, TxEngine, Update};
use super::{EngineResult, Setup, Variant};
use fjall::{OptimisticTxDatabase, OptimisticTxKeyspace, Readable};
use std::path::Path;

/// A fjall optimistic-transaction database with one keyspace.
pub struct FjallTx {
    db: OptimisticTxDatabase,
    ks: OptimisticTxKeyspace,
}

impl FjallTx {
    /// Open `dir` with the shared setup (the keyspace options of the plain rows).
    pub fn open(dir: &Path, setup: &Setup) -> EngineResult<Self> {
        let db = OptimisticTxDatabase::builder(dir).cache_size(setup.cache_bytes as u64).open()?;
        let options = keyspace_options(setup)?;
        let ks = db.keyspace(KEYSPACE, || options)?;
        Ok(FjallTx { db, ks })
    }
}

impl TxEngine for FjallTx {
    fn variant(&self) -> Variant {
        Variant::Fjall
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.ks.insert(key, value)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.ks.get(key)?.map(|v| v.to_vec()))
    }

    fn read_modify_write(&self, keys: &[&[u8]], update: &mut Update<'_>) -> EngineResult<Outcome> {
        let mut tx = self.db.write_tx()?;
        let mut read = Vec::with_capacity(keys.len());
        for key in keys {
            read.push(tx.get(&self.ks, key)?.map(|v| v.to_vec()));
        }
        for (key, value) in keys.iter().zip(update(&read)) {
            tx.insert(&self.ks, *key, value);
        }
        Ok(match tx.commit()? {
            Ok(()) => Outcome::Committed,
            Err(fjall::Conflict) => Outcome::Conflict,
        })
    }

    fn settle(&self) -> EngineResult<()> {
        // The plain database under the transactional one (`inner()`, hidden from fjall's
        // docs) is where its flush and compaction counts are.
        settle(self.db.inner(), self.ks.inner())
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        self.db.persist(fjall::PersistMode::Buffer)?;
        drop(self);
        Ok(())
    }
}
