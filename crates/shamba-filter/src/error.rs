//! The filters' one error: bytes that do not decode as a filter part.

/// A serialized filter part does not decode (bad length, bad header, unknown kind).
///
/// The engine attaches the file and offset the bytes came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

impl DecodeError {
    /// Build from anything printable.
    pub fn new(reason: impl Into<String>) -> Self {
        DecodeError(reason.into())
    }
}
