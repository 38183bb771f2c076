//! The one error type of the engine.
//!
//! Every fallible operation returns [`Result`]. Bad options, bad input, corrupt files and
//! failing devices are values of [`Error`]; the engine never panics on them.

use std::path::PathBuf;
use std::sync::Arc;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Shamba. New kinds may be added: match with a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system reported an I/O failure (full disk, permission, device error).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// A file's bytes do not decode: bad checksum, bad length, bad magic, truncated.
    #[error("corruption in {}{}: {reason}", file.display(), offset.map(|o| format!(" at offset {o}")).unwrap_or_default())]
    Corruption {
        /// The file whose bytes are wrong.
        file: PathBuf,
        /// Byte offset of the bad record or block, when known.
        offset: Option<u64>,
        /// What is wrong with it.
        reason: String,
    },

    /// An `Options` value is out of range or inconsistent with another.
    #[error("invalid options: {0}")]
    InvalidOptions(String),

    /// An argument of an API call is unacceptable (key too long, empty range, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Another process (or another `Db` in this process) holds the directory's lock.
    #[error("database directory is locked by another process: {}", .0.display())]
    Locked(PathBuf),

    /// The database was closed (or is closing).
    #[error("database is closed")]
    Closed,

    /// A background error (a failed flush or compaction, or a failed WAL write) made the
    /// database read-only: writes fail with this until it is reopened; reads still work.
    /// `cause` is that error, kept whole (also given by [`std::error::Error::source`]), so a
    /// full disk ([`Error::io_kind`]) can be told from a damaged file
    /// ([`Error::is_corruption`]).
    #[error("database is read-only after a background error: {cause}")]
    ReadOnly {
        /// The background error, as it happened.
        #[source]
        cause: Arc<Error>,
    },

    /// A transaction could not commit (or read): a key it read for update or wrote was
    /// written by someone else after its snapshot, or that can no longer be ruled out (the
    /// writes since its snapshot were flushed, or its lease on old versions ran out).
    /// Nothing of it was written; run it again from the start (`Db::transact` does).
    #[error("transaction conflict on key {} of keyspace {keyspace:?}: {reason}", key.escape_ascii())]
    Conflict {
        /// The keyspace of the key.
        keyspace: String,
        /// The key that was written, or could not be checked.
        key: Vec<u8>,
        /// What happened to it.
        reason: String,
    },

    /// A read with [`ReadTier::CacheOnly`](crate::ReadTier::CacheOnly) needed a file, or a
    /// write with [`WriteOptions::no_slowdown`](crate::WriteOptions::no_slowdown) would
    /// have waited; `0` says which. Nothing was done: make the call again without the
    /// option, where waiting is allowed.
    #[error("operation would block: {0}")]
    WouldBlock(&'static str),

    /// An invariant of the engine itself does not hold: a bug in Shamba, not in the caller's
    /// input or the files. `what` says which one; report it. The operation failed; the
    /// database may go on serving other calls.
    #[error("internal error (a bug in the engine): {what}")]
    Internal {
        /// The invariant that broke.
        what: String,
    },
}

impl Error {
    /// A corruption error naming a file and, optionally, an offset in it.
    pub fn corruption(file: impl Into<PathBuf>, offset: Option<u64>, reason: impl Into<String>) -> Self {
        Error::Corruption { file: file.into(), offset, reason: reason.into() }
    }

    /// A broken invariant of the engine's own (a bug), as [`Error::Internal`].
    pub(crate) fn internal(what: impl Into<String>) -> Self {
        Error::Internal { what: what.into() }
    }

    /// Whether this is a [`Error::Corruption`] (a [`Error::ReadOnly`] caused by one is not:
    /// look at its `cause`).
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// Whether this is a [`Error::Conflict`]: the transaction may succeed if run again.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflict { .. })
    }

    /// Whether this is a [`Error::WouldBlock`]: the call did nothing and may be made again
    /// where it is allowed to wait.
    pub fn is_would_block(&self) -> bool {
        matches!(self, Error::WouldBlock(_))
    }

    /// Whether this is a [`Error::ReadOnly`]: a background error stopped writes.
    pub fn is_read_only(&self) -> bool {
        matches!(self, Error::ReadOnly { .. })
    }

    /// The [`std::io::ErrorKind`] of an [`Error::Io`] (e.g. `StorageFull` for a full disk);
    /// `None` for every other variant (a [`Error::ReadOnly`] caused by one included: look at
    /// its `cause`).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Error::Io(e) => Some(e.kind()),
            _ => None,
        }
    }

    /// A copy of this error of the same kind, for everyone who shares one outcome (the
    /// writes of a commit group share their leader's). `std::io::Error` is not `Clone`: an
    /// [`Error::Io`] copy keeps the OS error code, or else the `ErrorKind` and the message,
    /// but not the inner error; every other variant is copied whole (a
    /// [`Error::ReadOnly`] shares its cause).
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io(e) => Error::Io(match e.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code),
                None => std::io::Error::new(e.kind(), e.to_string()),
            }),
            Error::Corruption { file, offset, reason } => {
                Error::Corruption { file: file.clone(), offset: *offset, reason: reason.clone() }
            }
            Error::InvalidOptions(m) => Error::InvalidOptions(m.clone()),
            Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
            Error::Locked(p) => Error::Locked(p.clone()),
            Error::Closed => Error::Closed,
            Error::ReadOnly { cause } => Error::ReadOnly { cause: cause.clone() },
            Error::Conflict { keyspace, key, reason } => {
                Error::Conflict { keyspace: keyspace.clone(), key: key.clone(), reason: reason.clone() }
            }
            Error::WouldBlock(what) => Error::WouldBlock(what),
            Error::Internal { what } => Error::Internal { what: what.clone() },
        }
    }
}

/// Decoding errors inside a block or record, before the caller knows the file name.
///
/// Decoders below the file level return this; the file-level reader turns it into
/// [`Error::Corruption`] with the file and offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct DecodeError(pub String);

impl DecodeError {
    /// Build from anything printable.
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        DecodeError(reason.into())
    }

    /// Attach a file and offset, making it an engine [`Error`].
    pub(crate) fn in_file(self, file: impl Into<PathBuf>, offset: Option<u64>) -> Error {
        Error::corruption(file, offset, self.0)
    }
}

impl From<shamba_filter::DecodeError> for DecodeError {
    fn from(e: shamba_filter::DecodeError) -> Self {
        DecodeError(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::io::ErrorKind;

    #[test]
    fn a_duplicate_keeps_the_kind_and_message() {
        let full = Error::Io(std::io::Error::new(ErrorKind::StorageFull, "no room"));
        let copy = full.duplicate();
        assert_eq!(copy.io_kind(), Some(ErrorKind::StorageFull));
        assert_eq!(copy.to_string(), full.to_string());
        let os = Error::Io(std::io::Error::from_raw_os_error(28));
        match os.duplicate() {
            Error::Io(e) => assert_eq!(e.raw_os_error(), Some(28)),
            other => panic!("{other:?}"),
        }
        let bad = Error::corruption("000007.sst", Some(12), "bad checksum");
        let copy = bad.duplicate();
        assert!(copy.is_corruption());
        assert_eq!(copy.to_string(), bad.to_string());
        assert!(matches!(Error::Closed.duplicate(), Error::Closed));
        let bug = Error::internal("a table without its slot");
        assert!(matches!(bug.duplicate(), Error::Internal { what } if what == "a table without its slot"));
        assert!(bug.to_string().contains("a table without its slot") && !bug.is_corruption(), "{bug}");
    }

    #[test]
    fn read_only_names_its_cause_and_gives_it_as_source() {
        let cause = Arc::new(Error::Io(std::io::Error::new(ErrorKind::StorageFull, "no room")));
        let e = Error::ReadOnly { cause: cause.clone() };
        assert!(e.is_read_only() && !e.is_corruption() && e.io_kind().is_none());
        assert!(e.to_string().contains("no room"), "{e}");
        assert_eq!(e.source().map(|s| s.to_string()), Some(cause.to_string()));
        match e.duplicate() {
            Error::ReadOnly { cause: c } => assert!(Arc::ptr_eq(&c, &cause)),
            other => panic!("{other:?}"),
        }
    }
}
