//! RocksDB behind [`TxEngine`]: an `OptimisticTransactionDB` with the plain rows' options.
//! A transaction takes its snapshot when it begins (`set_snapshot(true)`) and reads at it
//! with `get_for_update`, so it reads and is checked as Shamba's and fjall's are; a commit
//! refused with `Busy` (a key changed since the snapshot) or `TryAgain` (the memtables that
//! would tell were flushed) is [`Outcome::Conflict`].

use super::rocks::{lower_background_priority, options};
use super::txn::{Outcome, TxEngine, Update};
use super::{EngineResult, Setup, Variant};
use rocksdb::{
    Cache, ErrorKind, OptimisticTransactionDB, OptimisticTransactionOptions, ReadOptions, SingleThreaded, WriteOptions,
};
use std::path::Path;

/// A RocksDB optimistic-transaction database.
pub struct RocksTx {
    db: OptimisticTransactionDB<SingleThreaded>,
    write: WriteOptions,
    tx_options: OptimisticTransactionOptions,
    // Kept alive for the lifetime of the DB (the table factory holds a reference too).
    _cache: Cache,
}

impl RocksTx {
    /// Open `dir` with the shared setup (the `rocksdb` variant's options: full Bloom).
    pub fn open(dir: &Path, setup: &Setup) -> EngineResult<Self> {
        let (mut opts, cache) = options(Variant::Rocksdb, setup);
        if setup.background_low_priority {
            lower_background_priority(&mut opts)?;
        }
        let db = OptimisticTransactionDB::open(&opts, dir)?;
        let mut tx_options = OptimisticTransactionOptions::default();
        tx_options.set_snapshot(true);
        // WAL on, no sync: the defaults, said here since the comparison depends on them.
        let mut write = WriteOptions::default();
        write.set_sync(false);
        write.disable_wal(false);
        Ok(RocksTx { db, write, tx_options, _cache: cache })
    }
}

/// A refused commit or read: the key changed, or the engine can no longer rule it out.
fn is_conflict(e: &rocksdb::Error) -> bool {
    matches!(e.kind(), ErrorKind::Busy | ErrorKind::TryAgain)
}

impl TxEngine for RocksTx {
    fn variant(&self) -> Variant {
        Variant::Rocksdb
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put_opt(key, value, &self.write)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }

    fn read_modify_write(&self, keys: &[&[u8]], update: &mut Update<'_>) -> EngineResult<Outcome> {
        let tx = self.db.transaction_opt(&self.write, &self.tx_options);
        let mut read = Vec::with_capacity(keys.len());
        {
            let snapshot = tx.snapshot();
            let mut at_snapshot = ReadOptions::default();
            at_snapshot.set_snapshot(&snapshot);
            for key in keys {
                match tx.get_for_update_opt(key, true, &at_snapshot) {
                    Ok(v) => read.push(v),
                    Err(e) if is_conflict(&e) => return Ok(Outcome::Conflict),
                    Err(e) => return Err(e.into()),
                }
            }
        }
        for (key, value) in keys.iter().zip(update(&read)) {
            tx.put(key, value)?;
        }
        match tx.commit() {
            Ok(()) => Ok(Outcome::Committed),
            Err(e) if is_conflict(&e) => Ok(Outcome::Conflict),
            Err(e) => Err(e.into()),
        }
    }

    fn settle(&self) -> EngineResult<()> {
        self.db.flush()?;
        let mut wait = rocksdb::WaitForCompactOptions::default();
        wait.set_flush(true);
        self.db.wait_for_compact(&wait)?;
        Ok(())
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        self.db.flush_wal(true)?;
        drop(self);
        Ok(())
    }
}
