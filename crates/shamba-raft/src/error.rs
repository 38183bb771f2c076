//! shamba's errors as openraft's: each names what the storage was doing (openraft stops the
//! node on a storage error, and its message says which part failed).

use crate::types::NodeId;
use openraft::{AnyError, StorageError, StorageIOError};
use std::path::Path;

/// openraft's storage error for this group's node ids.
pub(crate) type StorageResult<T> = Result<T, StorageError<NodeId>>;

/// A record of the storage's own that does not decode.
pub(crate) fn corrupt(file: &Path, reason: impl Into<String>) -> shamba::Error {
    shamba::Error::corruption(file, None, reason)
}

pub(crate) fn read_logs(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::read_logs(AnyError::new(&e)).into()
}

pub(crate) fn write_logs(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::write_logs(AnyError::new(&e)).into()
}

pub(crate) fn read_vote(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::read_vote(AnyError::new(&e)).into()
}

pub(crate) fn write_vote(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::write_vote(AnyError::new(&e)).into()
}

pub(crate) fn read_state_machine(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::read_state_machine(AnyError::new(&e)).into()
}

pub(crate) fn write_state_machine(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::write_state_machine(AnyError::new(&e)).into()
}

pub(crate) fn read_snapshot(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::read_snapshot(None, AnyError::new(&e)).into()
}

pub(crate) fn write_snapshot(e: shamba::Error) -> StorageError<NodeId> {
    StorageIOError::write_snapshot(None, AnyError::new(&e)).into()
}

/// A blocking task that did not finish (it panicked or the runtime is shutting down).
pub(crate) fn task_failed(e: tokio::task::JoinError) -> shamba::Error {
    shamba::Error::Io(std::io::Error::other(format!("a storage task did not finish: {e}")))
}
