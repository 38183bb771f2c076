//! The one error type of the engine.
//!
//! Every fallible operation returns [`Result`]. Bad options, bad input, corrupt files and
//! failing devices are values of [`Error`]; the engine never panics on them.

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Shamba.
#[derive(Debug, thiserror::Error)]
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

    /// The database was closed, or a background error made it read-only.
    #[error("database is closed or failed: {0}")]
    Closed(String),
}

impl Error {
    /// A corruption error naming a file and, optionally, an offset in it.
    pub fn corruption(file: impl Into<PathBuf>, offset: Option<u64>, reason: impl Into<String>) -> Self {
        Error::Corruption { file: file.into(), offset, reason: reason.into() }
    }

    /// Whether this is a [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

/// Decoding errors inside a block or record, before the caller knows the file name.
///
/// Decoders below the file level return this; the file-level reader turns it into
/// [`Error::Corruption`] with the file and offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    /// Build from anything printable.
    pub fn new(reason: impl Into<String>) -> Self {
        DecodeError(reason.into())
    }

    /// Attach a file and offset, making it an engine [`Error`].
    pub fn in_file(self, file: impl Into<PathBuf>, offset: Option<u64>) -> Error {
        Error::corruption(file, offset, self.0)
    }
}

impl From<shamba_filter::DecodeError> for DecodeError {
    fn from(e: shamba_filter::DecodeError) -> Self {
        DecodeError(e.0)
    }
}
