//! The engines opened as optimistic-transaction databases, behind one small trait: Shamba's
//! `Db::transaction`, RocksDB's `OptimisticTransactionDB` and fjall's `OptimisticTxDatabase`.
//!
//! A transaction reads each of its keys for update at the snapshot it began with, writes
//! new values for them and commits; the commit fails when another writer changed one of
//! them since that snapshot. Each engine file turns its own conflict error into
//! [`Outcome::Conflict`], so the workloads count conflicts and retry the same way for all.

use super::{EngineResult, Setup, Variant};
use std::path::Path;

/// How one transaction attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its writes were applied.
    Committed,
    /// Another writer changed a key it read or wrote since its snapshot: nothing was
    /// written, it may be run again.
    Conflict,
}

/// Turns the values a transaction read (in the order of its keys, `None` for absent keys)
/// into the values it writes to the same keys.
pub type Update<'a> = dyn FnMut(&[Option<Vec<u8>>]) -> Vec<Vec<u8>> + 'a;

/// What the transaction workloads ask of an engine.
pub trait TxEngine: Sync {
    /// Which engine this is.
    fn variant(&self) -> Variant;
    /// Write one key outside any transaction (WAL on, no sync).
    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()>;
    /// Read one key outside any transaction (the latest committed value).
    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>>;
    /// One transaction attempt: begin, read every key of `keys` for update (in order),
    /// write the values `update` makes of what was read, commit (WAL on, no sync).
    fn read_modify_write(&self, keys: &[&[u8]], update: &mut Update<'_>) -> EngineResult<Outcome>;
    /// Flush the memtable and wait until no flush or compaction is running.
    fn settle(&self) -> EngineResult<()>;
    /// Close cleanly.
    fn close(self: Box<Self>) -> EngineResult<()>;
}

/// The engines that have transaction rows: one per engine, as its filter variants do not
/// change the transaction path.
pub const TX_VARIANTS: [Variant; 3] = [Variant::Shamba, Variant::Rocksdb, Variant::Fjall];

/// Open (or create) `variant` in `dir` as its optimistic-transaction database, with the
/// shared `setup`. Fails for an engine this binary was built without or one that has no
/// transaction rows (not in [`TX_VARIANTS`]).
pub fn open_tx(variant: Variant, dir: &Path, setup: &Setup) -> EngineResult<Box<dyn TxEngine>> {
    Ok(match variant {
        Variant::Shamba => Box::new(super::shamba_txn::ShambaTx::open(dir, setup)?),
        #[cfg(feature = "rocksdb")]
        Variant::Rocksdb => Box::new(super::rocks_txn::RocksTx::open(dir, setup)?),
        #[cfg(feature = "fjall")]
        Variant::Fjall => Box::new(super::fjall_txn::FjallTx::open(dir, setup)?),
        other if !other.compiled_in() => {
            return Err(format!("{} is not compiled in: build with --features peers", other.name()).into())
        }
        other => {
            return Err(format!("{} has no transaction rows (they run on shamba, rocksdb, fjall)", other.name()).into())
        }
    })
}
