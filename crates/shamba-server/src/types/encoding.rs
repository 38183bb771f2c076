//! The bytes of the collection encoding: a metadata value per key, and the key of each of a
//! collection's fields. Nothing here reads or writes the engine (see `access`).
//!
//! Metadata value, format version 1 (`db{n}.meta`, keyed by the user's key):
//!
//! ```text
//! byte 0       format version (1)
//! byte 1       type: 1 hash, 2 set, 3 sorted set, 4 list
//! bytes 2..10  version, u64 big-endian: the collection's generation
//! bytes 10..18 deadline, u64 big-endian ms since the Unix epoch; 0 = never expires
//! bytes 18..26 size, u64 big-endian: how many fields or members
//! bytes 26..   the type's own metadata (a list's ends, say); empty for hashes and sets
//! ```
//!
//! Field key (`db{n}.fields`): `u32 BE length of key ‖ key ‖ u64 BE version ‖ field`. The
//! length makes the prefix of one key never a prefix of another's, so a collection's
//! fields are one prefix scan (`fields_prefix`) and every version of a key is one range
//! (`key_prefix`). A new collection takes a new version, so the fields of an older one
//! under the same name, not yet deleted, are never read as its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The format version written in byte 0 of every metadata value.
pub(crate) const FORMAT_VERSION: u8 = 1;

/// Bytes before the type's own metadata.
const HEADER: usize = 26;

/// A collection's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Hash,
    Set,
    ZSet,
    List,
}

impl Kind {
    /// What TYPE answers.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Hash => "hash",
            Kind::Set => "set",
            Kind::ZSet => "zset",
            Kind::List => "list",
        }
    }

    fn code(self) -> u8 {
        match self {
            Kind::Hash => 1,
            Kind::Set => 2,
            Kind::ZSet => 3,
            Kind::List => 4,
        }
    }

    fn of_code(code: u8) -> Option<Kind> {
        [Kind::Hash, Kind::Set, Kind::ZSet, Kind::List].into_iter().find(|k| k.code() == code)
    }
}

/// A collection's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) kind: Kind,
    /// Its generation: the fields it owns are under this version.
    pub(crate) version: u64,
    /// Its fields or members.
    pub(crate) size: u64,
    /// When it expires (ms since the Unix epoch), if it does.
    pub(crate) deadline_ms: Option<i64>,
    /// The type's own metadata (empty for hashes and sets).
    pub(crate) extra: Vec<u8>,
}

impl Meta {
    /// An empty collection of `kind` with a version no earlier collection had.
    pub(crate) fn new(kind: Kind) -> Meta {
        Meta { kind, version: next_version(), size: 0, deadline_ms: None, extra: Vec::new() }
    }

    /// Whether its deadline is at or before `now_ms`.
    pub(crate) fn is_expired(&self, now_ms: i64) -> bool {
        self.deadline_ms.is_some_and(|d| d <= now_ms)
    }

    /// Its metadata value.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.extra.len());
        out.push(FORMAT_VERSION);
        out.push(self.kind.code());
        out.extend_from_slice(&self.version.to_be_bytes());
        let deadline = self.deadline_ms.map_or(0, |d| u64::try_from(d.max(1)).unwrap_or(1));
        out.extend_from_slice(&deadline.to_be_bytes());
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.extra);
        out
    }

    /// The metadata a value encodes; `Err` says why it does not decode.
    pub(crate) fn decode(value: &[u8]) -> Result<Meta, String> {
        let (header, extra) = value.split_at_checked(HEADER).ok_or("metadata shorter than its header")?;
        let u64_at = |i: usize| header.get(i..i + 8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes);
        match header.first() {
            Some(&FORMAT_VERSION) => {}
            other => return Err(format!("metadata of unknown format version {other:?}")),
        }
        let kind = header.get(1).copied().and_then(Kind::of_code).ok_or("metadata of an unknown type")?;
        let (Some(version), Some(deadline), Some(size)) = (u64_at(2), u64_at(10), u64_at(18)) else {
            return Err("metadata shorter than its header".into());
        };
        let deadline_ms = (deadline != 0).then(|| i64::try_from(deadline).unwrap_or(i64::MAX));
        Ok(Meta { kind, version, size, deadline_ms, extra: extra.to_vec() })
    }
}

/// The prefix of every field key of `key`, whatever its version.
pub(crate) fn key_prefix(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + key.len() + 8);
    // A key's length fits a u32: the engine's key limit is far below.
    out.extend_from_slice(&u32::try_from(key.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// The prefix of the field keys of `key`'s collection of `version`.
pub(crate) fn fields_prefix(key: &[u8], version: u64) -> Vec<u8> {
    let mut out = key_prefix(key);
    out.extend_from_slice(&version.to_be_bytes());
    out
}

/// The key of `field` in `key`'s collection of `version`.
pub(crate) fn field_key(key: &[u8], version: u64, field: &[u8]) -> Vec<u8> {
    let mut out = fields_prefix(key, version);
    out.extend_from_slice(field);
    out
}

/// The first key after every key starting with `prefix` (the end of its range), or
/// `None` when no key is (a prefix of 0xff bytes only; never one of ours, which start
/// with a length).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The last version handed out, so versions grow even when the clock does not.
static LAST_VERSION: AtomicU64 = AtomicU64::new(0);

/// A new version: the time in microseconds, or one more than the last one when the clock
/// has not moved past it (kvrocks's scheme). A restart starts from the clock, which is past
/// every version of the previous run unless the clock went back.
fn next_version() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(0));
    let mut last = LAST_VERSION.load(Ordering::Relaxed);
    loop {
        let next = now.max(last.saturating_add(1));
        match LAST_VERSION.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_with_its_format_version_first() {
        let meta =
            Meta { kind: Kind::ZSet, version: 7, size: 3, deadline_ms: Some(1_700_000_000_000), extra: vec![1, 2] };
        let bytes = meta.encode();
        assert_eq!(bytes.first(), Some(&FORMAT_VERSION));
        assert_eq!(bytes.len(), HEADER + 2);
        assert_eq!(Meta::decode(&bytes), Ok(meta));
        let plain = Meta { kind: Kind::Hash, version: 1, size: 0, deadline_ms: None, extra: Vec::new() };
        assert_eq!(Meta::decode(&plain.encode()), Ok(plain));
    }

    #[test]
    fn metadata_that_does_not_decode_is_an_error() {
        let good = Meta::new(Kind::Set).encode();
        assert!(Meta::decode(&good[..HEADER - 1]).is_err(), "short");
        let mut future = good.clone();
        future[0] = 2;
        assert!(Meta::decode(&future).unwrap_err().contains("format version"));
        let mut odd = good;
        odd[1] = 99;
        assert!(Meta::decode(&odd).unwrap_err().contains("type"));
    }

    #[test]
    fn versions_only_grow() {
        let a = Meta::new(Kind::Hash).version;
        let b = Meta::new(Kind::Hash).version;
        assert!(b > a);
    }

    #[test]
    fn one_keys_fields_never_share_a_prefix_with_anothers() {
        // "a" + field "b..." and "ab" + field "...": same bytes unprefixed, apart here.
        let one = field_key(b"a", 1, b"bc");
        let two = field_key(b"ab", 1, b"c");
        assert_ne!(one, two);
        assert!(!two.starts_with(&key_prefix(b"a")));
        assert!(one.starts_with(&fields_prefix(b"a", 1)));
        assert!(!one.starts_with(&fields_prefix(b"a", 2)), "another version");
        assert!(one.starts_with(&key_prefix(b"a")));
        // Every version of a key lies in [key_prefix, its end).
        let end = prefix_end(&key_prefix(b"a")).unwrap();
        assert!(field_key(b"a", u64::MAX, b"\xff\xff").as_slice() < end.as_slice());
        assert!(two.as_slice() >= end.as_slice());
    }

    #[test]
    fn prefix_end_is_the_first_key_after_the_prefix() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
    }
}
