//! `shamba._shamba`: the Python extension module of the `shamba` package.
//!
//! It wraps the engine's front door only (`shamba::Db`, `Keyspace`, `Options`, `WriteBatch`,
//! `Snapshot`, `Transaction`, `DbIterator`, `Stats`, `VerifyReport`, `Error`); the Python package
//! (`python/shamba/`)
//! re-exports these classes and defines the exception classes engine errors map to. Every
//! engine call runs with the interpreter released (`Python::detach`), so threads sharing one
//! `Db` run in parallel.

#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![deny(clippy::unwrap_used)]
#![warn(clippy::expect_used)]

mod batch;
mod bytes_arg;
mod db;
mod errors;
mod iter;
mod keyspace;
mod options;
mod readable;
mod report;
mod snapshot;
mod transaction;
mod tree_options;
mod ttl_arg;

use pyo3::prelude::*;

/// The extension module: the classes `Readable` (the reads `Db`, `Keyspace` and
/// `Snapshot` share), `Db`, `Keyspace`, `WriteBatch`, `Snapshot`, `Transaction` and `Iterator`.
#[pymodule]
fn _shamba(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<readable::Readable>()?;
    m.add_class::<db::Db>()?;
    m.add_class::<keyspace::Keyspace>()?;
    m.add_class::<batch::WriteBatch>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<transaction::Transaction>()?;
    m.add_class::<iter::Iterator>()?;
    Ok(())
}
