//! Write batches: a group of puts, deletes and range deletes applied atomically.
//!
//! The encoding is also the WAL record format, so a batch is logged exactly as built:
//!
//! ```text
//! first_seq: u64 LE | count: u32 LE | count x op
//! op := 1 (put) | varint key_len | key | varint value_len | value
//!     | 3 (put that expires) | varint key_len | key | varint value_len | deadline | value
//!         (`value_len` counts the 8 bytes of the deadline, milliseconds since the Unix
//!         epoch as a u64 LE, so the op reads as a put whose value is an expiring entry's)
//!     | 0 (delete) | varint key_len | key
//!     | 2 (range delete) | varint start_len | start | 0 (to the end of the key space)
//!                                                    | 1 | varint end_len | end
//!     | 0x80 + tag | varint keyspace | the rest of the op `tag` names
//! ```
//!
//! The sequence number of operation `i` is `first_seq + i`. An operation of the default
//! keyspace has no keyspace id: a batch that touches only it (every batch written before
//! keyspaces existed) is encoded as it always was.
//!
//! A batch is plain data: it names a keyspace by its id ([`KeyspaceId`]), never by handle,
//! and the write checks that the keyspaces it names are the database's and live. The
//! methods that take a [`Keyspace`](crate::Keyspace) (`put_in`, `delete_in`,
//! `delete_range_in`) are written beside the handle, in `keyspace.rs`, so this file needs
//! nothing above it.

#![deny(clippy::indexing_slicing)]

use crate::error::DecodeError;
use crate::expiry::DEADLINE_LEN;
use crate::key::{SeqNo, ValueKind, MAX_SEQ};
use crate::memtable::MemTable;
use crate::range_del::RangeTombstone;
use crate::version::DEFAULT_KEYSPACE;
use std::ops::{Bound, RangeBounds};
use std::time::{Duration, SystemTime};

/// When an expiring put of a batch expires.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deadline {
    /// At this many milliseconds since the Unix epoch.
    At(u64),
    /// This long after the batch is written.
    After(Duration),
}

/// The tag of a range delete (puts and deletes use their `ValueKind`).
const RANGE_DELETE: u8 = 2;
/// Added to a tag when a keyspace id follows it (an operation outside the default one).
const IN_KEYSPACE: u8 = 0x80;

const HEADER_LEN: usize = 12;
/// Most bytes a varint-encoded length takes (a `u64`).
const MAX_VARINT_LEN: usize = 10;

/// An atomic group of writes. Build it, then hand it to `Db::write`.
///
/// Building a batch cannot fail: its limits are checked when it is written, where
/// [`Db::write`](crate::Db::write) returns
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a key over
/// `Options::max_key_size` or a value over `Options::max_value_size`, and writes none of it.
///
/// ```
/// let mut batch = shamba::WriteBatch::new();
/// batch.put(b"apple", b"red");
/// batch.delete(b"pear");
/// assert_eq!(batch.len(), 2);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
    largest_key: usize,
    largest_value: usize,
    /// The keyspaces that operations name through a handle (checked at write: one of
    /// another database, or dropped, is refused).
    keyspaces: Vec<KeyspaceId>,
    /// Puts given a time to live rather than a deadline: where each one's deadline lies in
    /// `rep` and the time to live in milliseconds. The write stamps them with the
    /// database's clock ([`WriteBatch::stamp_deadlines`]) before the batch is logged.
    ttls: Vec<(usize, u64)>,
}

/// A keyspace as a batch names it: its id, and the number of the open database it belongs
/// to (each open takes a new one, never reused in the process, so a batch that outlives its
/// database is refused by the next one rather than written into its keyspace of that id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyspaceId {
    pub db: u64,
    pub id: u32,
}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBatch").field("count", &self.count).field("bytes", &self.rep.len()).finish()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        WriteBatch::with_capacity(0)
    }

    /// An empty batch with room for `bytes` of operations before its buffer grows (as
    /// RocksDB's `WriteBatch(reserved_bytes)`): an operation takes its key and value and at
    /// most 31 bytes more.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER_LEN.saturating_add(bytes));
        rep.resize(HEADER_LEN, 0);
        WriteBatch { rep, count: 0, largest_key: 0, largest_value: 0, keyspaces: Vec::new(), ttls: Vec::new() }
    }

    /// Add a put of `key` to `value`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Self {
        self.put_to(DEFAULT_KEYSPACE, key.as_ref(), value.as_ref())
    }

    /// Add a put of `key` to `value` that expires at `at`: from then on no read finds it,
    /// and compactions reclaim its bytes. Rounded to the millisecond; a time already past
    /// writes a key that no read finds (a delete, in effect).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// let mut batch = shamba::WriteBatch::new();
    /// batch.put_with_expiry(b"session", b"token", SystemTime::now() + Duration::from_secs(3600));
    /// batch.put_with_ttl(b"cache", b"page", Duration::from_secs(60));
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn put_with_expiry(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, at: SystemTime) -> &mut Self {
        self.put_expiring_to(DEFAULT_KEYSPACE, key.as_ref(), value.as_ref(), Deadline::At(crate::expiry::millis(at)))
    }

    /// Add a put of `key` to `value` that expires `ttl` after the batch is written (the
    /// database's [`Options::clock`](crate::Options::clock) at the write, rounded up to the
    /// millisecond), as [`put_with_expiry`](Self::put_with_expiry) otherwise.
    pub fn put_with_ttl(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, ttl: Duration) -> &mut Self {
        self.put_expiring_to(DEFAULT_KEYSPACE, key.as_ref(), value.as_ref(), Deadline::After(ttl))
    }

    /// Add a delete of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        self.delete_to(DEFAULT_KEYSPACE, key.as_ref())
    }

    /// A put in keyspace `ks` (`put_in`).
    pub(crate) fn put_to_keyspace(&mut self, ks: KeyspaceId, key: &[u8], value: &[u8]) -> &mut Self {
        self.name_keyspace(ks);
        self.put_to(ks.id, key, value)
    }

    /// An expiring put in keyspace `ks` (`put_with_expiry_in`, `put_with_ttl_in`).
    pub(crate) fn put_expiring_to_keyspace(
        &mut self,
        ks: KeyspaceId,
        key: &[u8],
        value: &[u8],
        deadline: Deadline,
    ) -> &mut Self {
        self.name_keyspace(ks);
        self.put_expiring_to(ks.id, key, value, deadline)
    }

    /// A delete in keyspace `ks` (`delete_in`).
    pub(crate) fn delete_to_keyspace(&mut self, ks: KeyspaceId, key: &[u8]) -> &mut Self {
        self.name_keyspace(ks);
        self.delete_to(ks.id, key)
    }

    /// A range delete in keyspace `ks` (`delete_range_in`).
    pub(crate) fn delete_range_to_keyspace<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        ks: KeyspaceId,
        range: &R,
    ) -> &mut Self {
        self.name_keyspace(ks);
        self.delete_range_to(ks.id, range)
    }

    fn name_keyspace(&mut self, ks: KeyspaceId) {
        if !self.keyspaces.contains(&ks) {
            self.keyspaces.push(ks);
        }
    }

    /// The keyspaces the batch names through a handle, to be checked against the database
    /// it is written to.
    pub(crate) fn keyspaces(&self) -> &[KeyspaceId] {
        &self.keyspaces
    }

    /// The tag of an operation, and its keyspace id unless it is the default one.
    fn push_tag(&mut self, tag: u8, keyspace: u32) {
        if keyspace == DEFAULT_KEYSPACE {
            self.rep.push(tag);
        } else {
            self.rep.push(IN_KEYSPACE + tag);
            put_varint(&mut self.rep, u64::from(keyspace));
        }
    }

    fn put_to(&mut self, keyspace: u32, key: &[u8], value: &[u8]) -> &mut Self {
        // One growth for the whole operation (kind, keyspace, two varint lengths, key,
        // value), not one per piece: a single-put batch grew its buffer four times.
        self.rep.reserve(1 + 3 * MAX_VARINT_LEN + key.len() + value.len());
        self.push_tag(ValueKind::Put as u8, keyspace);
        put_slice(&mut self.rep, key);
        put_slice(&mut self.rep, value);
        self.note(key.len(), value.len());
        self
    }

    fn put_expiring_to(&mut self, keyspace: u32, key: &[u8], value: &[u8], deadline: Deadline) -> &mut Self {
        self.rep.reserve(1 + 3 * MAX_VARINT_LEN + key.len() + DEADLINE_LEN + value.len());
        self.push_tag(ValueKind::PutExpiring as u8, keyspace);
        put_slice(&mut self.rep, key);
        put_varint(&mut self.rep, (DEADLINE_LEN + value.len()) as u64);
        let at = match deadline {
            Deadline::At(ms) => ms,
            Deadline::After(ttl) => {
                self.ttls.push((self.rep.len(), crate::expiry::deadline_after(0, ttl)));
                0
            }
        };
        self.rep.extend_from_slice(&at.to_le_bytes());
        self.rep.extend_from_slice(value);
        self.note(key.len(), value.len());
        self
    }

    /// Turn every time to live of the batch into a deadline counted from `now_ms` (the
    /// write does, with the database's clock, before logging the batch).
    pub(crate) fn stamp_deadlines(&mut self, now_ms: u64) {
        for (at, ttl) in std::mem::take(&mut self.ttls) {
            let deadline = now_ms.saturating_add(ttl).to_le_bytes();
            if let Some(field) = self.rep.get_mut(at..at + DEADLINE_LEN) {
                field.copy_from_slice(&deadline);
            }
        }
    }

    /// Whether some put of the batch has a time to live still to stamp.
    #[inline]
    pub(crate) fn has_ttls(&self) -> bool {
        !self.ttls.is_empty()
    }

    fn delete_to(&mut self, keyspace: u32, key: &[u8]) -> &mut Self {
        self.rep.reserve(1 + 2 * MAX_VARINT_LEN + key.len());
        self.push_tag(ValueKind::Delete as u8, keyspace);
        put_slice(&mut self.rep, key);
        self.note(key.len(), 0);
        self
    }

    /// Add a delete of every key in `range` (one operation, whatever the range holds).
    /// An empty range deletes nothing and adds nothing.
    ///
    /// ```
    /// let mut batch = shamba::WriteBatch::new();
    /// batch.delete_range(&b"log:0001"[..]..&b"log:0100"[..]);
    /// batch.delete_range::<&[u8], _>(..);   // everything
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, range: R) -> &mut Self {
        self.delete_range_to(DEFAULT_KEYSPACE, &range)
    }

    fn delete_range_to<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, keyspace: u32, range: &R) -> &mut Self {
        let (start, end) = half_open(range);
        if end.as_deref().is_some_and(|end| end <= start.as_slice()) {
            return self;
        }
        self.rep.reserve(2 + 3 * MAX_VARINT_LEN + start.len() + end.as_ref().map_or(0, Vec::len));
        self.push_tag(RANGE_DELETE, keyspace);
        put_slice(&mut self.rep, &start);
        match &end {
            None => self.rep.push(0),
            Some(end) => {
                self.rep.push(1);
                put_slice(&mut self.rep, end);
            }
        }
        self.note(start.len().max(end.as_ref().map_or(0, Vec::len)), 0);
        self
    }

    fn note(&mut self, key_len: usize, value_len: usize) {
        self.count += 1;
        self.largest_key = self.largest_key.max(key_len);
        self.largest_value = self.largest_value.max(value_len);
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Remove every operation (the buffer is kept for the next ones).
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_LEN, 0);
        (self.count, self.largest_key, self.largest_value) = (0, 0, 0);
        self.keyspaces.clear();
        self.ttls.clear();
    }

    /// Encoded size in bytes.
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    pub(crate) fn largest_key(&self) -> usize {
        self.largest_key
    }

    pub(crate) fn largest_value(&self) -> usize {
        self.largest_value
    }

    /// Append every operation of `other` to this batch (group commit).
    pub(crate) fn append(&mut self, other: &WriteBatch) {
        let shift = self.rep.len() - HEADER_LEN;
        self.ttls.extend(other.ttls.iter().map(|&(at, ttl)| (at + shift, ttl)));
        self.rep.extend_from_slice(other.encoded_ops());
        self.count += other.count;
        self.largest_key = self.largest_key.max(other.largest_key);
        self.largest_value = self.largest_value.max(other.largest_value);
        for named in &other.keyspaces {
            if !self.keyspaces.contains(named) {
                self.keyspaces.push(*named);
            }
        }
    }

    /// Stamp the first sequence number and count into the header; returns the encoding.
    pub(crate) fn encode_with_seq(&mut self, first_seq: SeqNo) -> &[u8] {
        if let Some(header) = self.rep.first_chunk_mut::<HEADER_LEN>() {
            let fields = first_seq.to_le_bytes().into_iter().chain(self.count.to_le_bytes());
            for (byte, field) in header.iter_mut().zip(fields) {
                *byte = field;
            }
        }
        &self.rep
    }

    /// Iterate the operations of this (not yet encoded) batch.
    pub(crate) fn ops(&self) -> BatchOps<'_> {
        BatchOps { rest: self.encoded_ops(), left: self.count }
    }

    /// The operations' encoding: what follows the header (which every batch has).
    fn encoded_ops(&self) -> &[u8] {
        self.rep.get(HEADER_LEN..).unwrap_or_default()
    }
}

/// A decoded WAL record: its first sequence number and operations.
pub(crate) struct DecodedBatch<'a> {
    pub first_seq: SeqNo,
    pub ops: BatchOps<'a>,
}

/// Decode a WAL record produced by [`WriteBatch::encode_with_seq`]. Its sequence numbers
/// must fit an internal key's 56 bits: replay adds them up, and a larger one would wrap
/// (or overflow) and put the entry out of order.
pub(crate) fn decode_batch(rec: &[u8]) -> Result<DecodedBatch<'_>, DecodeError> {
    let short = || DecodeError::new("write batch shorter than its header");
    let (seq, rest) = rec.split_first_chunk::<8>().ok_or_else(short)?;
    let (count, rest) = rest.split_first_chunk::<4>().ok_or_else(short)?;
    let (first_seq, count) = (u64::from_le_bytes(*seq), u32::from_le_bytes(*count));
    if first_seq.checked_add(u64::from(count)).is_none_or(|end| end > MAX_SEQ + 1) {
        return Err(DecodeError::new(format!(
            "write batch of {count} operations from sequence number {first_seq} passes the largest, {MAX_SEQ}"
        )));
    }
    Ok(DecodedBatch { first_seq, ops: BatchOps { rest, left: count } })
}

/// One operation of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchOp<'a> {
    /// A put (`ValueKind::Put`), an expiring put (`ValueKind::PutExpiring`, the value
    /// the deadline and the user's value) or a delete (`ValueKind::Delete`, empty value)
    /// of a key.
    Point(ValueKind, &'a [u8], &'a [u8]),
    /// A delete of every key in `[start, end)` (to the end of the key space if `end` is
    /// `None`).
    DeleteRange { start: &'a [u8], end: Option<&'a [u8]> },
}

impl BatchOp<'_> {
    /// Apply the operation, with its sequence number, to a memtable.
    pub(crate) fn insert_into(self, mem: &MemTable, seq: SeqNo) {
        match self {
            BatchOp::Point(kind, key, value) => mem.insert(key, seq, kind, value),
            BatchOp::DeleteRange { start, end } => {
                mem.add_range_del(RangeTombstone { start: start.to_vec(), end: end.map(<[u8]>::to_vec), seq })
            }
        }
    }
}

/// `range` as `[start, end)`: an excluded start becomes its successor (the key with a zero
/// byte appended), an included end likewise; no end is the end of the key space.
pub(super) fn half_open<K: AsRef<[u8]>, R: RangeBounds<K>>(range: &R) -> (Vec<u8>, Option<Vec<u8>>) {
    let successor = |k: &K| {
        let mut k = k.as_ref().to_vec();
        k.push(0);
        k
    };
    let start = match range.start_bound() {
        Bound::Included(k) => k.as_ref().to_vec(),
        Bound::Excluded(k) => successor(k),
        Bound::Unbounded => Vec::new(),
    };
    let end = match range.end_bound() {
        Bound::Included(k) => Some(successor(k)),
        Bound::Excluded(k) => Some(k.as_ref().to_vec()),
        Bound::Unbounded => None,
    };
    (start, end)
}

/// The operations of a batch, in order.
pub(crate) struct BatchOps<'a> {
    rest: &'a [u8],
    left: u32,
}

impl<'a> Iterator for BatchOps<'a> {
    /// The operation and its keyspace's id.
    type Item = Result<(u32, BatchOp<'a>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return if self.rest.is_empty() {
                None
            } else {
                self.rest = &[];
                Some(Err(DecodeError::new("write batch has bytes after its last operation")))
            };
        }
        self.left -= 1;
        let item = self.decode_one();
        if item.is_err() {
            self.left = 0;
            self.rest = &[];
        }
        Some(item)
    }
}

impl<'a> BatchOps<'a> {
    fn decode_one(&mut self) -> Result<(u32, BatchOp<'a>), DecodeError> {
        let (&tag, rest) =
            self.rest.split_first().ok_or_else(|| DecodeError::new("write batch count exceeds its operations"))?;
        let (tag, keyspace, rest) = if tag >= IN_KEYSPACE {
            let (id, rest) = get_varint(rest)?;
            let id = u32::try_from(id).map_err(|_| DecodeError::new(format!("keyspace id {id} out of range")))?;
            (tag - IN_KEYSPACE, id, rest)
        } else {
            (tag, DEFAULT_KEYSPACE, rest)
        };
        self.rest = rest;
        self.decode_op(tag).map(|op| (keyspace, op))
    }

    fn decode_op(&mut self, tag: u8) -> Result<BatchOp<'a>, DecodeError> {
        let rest = self.rest;
        if tag == RANGE_DELETE {
            let (start, rest) = get_slice(rest)?;
            let (&bounded, rest) =
                rest.split_first().ok_or_else(|| DecodeError::new("range delete without its end"))?;
            let (end, rest) = match bounded {
                0 => (None, rest),
                1 => get_slice(rest).map(|(end, rest)| (Some(end), rest))?,
                b => return Err(DecodeError::new(format!("range delete end marker {b}"))),
            };
            if end.is_some_and(|end| end <= start) {
                return Err(DecodeError::new("range delete with an empty or inverted range"));
            }
            self.rest = rest;
            return Ok(BatchOp::DeleteRange { start, end });
        }
        let kind = ValueKind::from_u8(tag).ok_or_else(|| DecodeError::new(format!("unknown operation kind {tag}")))?;
        let (key, rest) = get_slice(rest)?;
        let (value, rest) = match kind {
            ValueKind::Put => get_slice(rest)?,
            ValueKind::PutExpiring => {
                let (value, rest) = get_slice(rest)?;
                if value.len() < DEADLINE_LEN {
                    return Err(DecodeError::new("an expiring put shorter than its deadline"));
                }
                (value, rest)
            }
            ValueKind::Delete => (&[][..], rest),
        };
        self.rest = rest;
        Ok(BatchOp::Point(kind, key, value))
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_slice(out: &mut Vec<u8>, s: &[u8]) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn get_varint(buf: &[u8]) -> Result<(u64, &[u8]), DecodeError> {
    let mut v: u64 = 0;
    let mut rest = buf;
    for shift in (0..MAX_VARINT_LEN).map(|i| 7 * i) {
        let Some((&b, tail)) = rest.split_first() else {
            break;
        };
        rest = tail;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok((v, rest));
        }
    }
    Err(DecodeError::new("bad varint in write batch"))
}

fn get_slice(buf: &[u8]) -> Result<(&[u8], &[u8]), DecodeError> {
    let (len, rest) = get_varint(buf)?;
    let len = usize::try_from(len).map_err(|_| DecodeError::new("length overflows"))?;
    rest.split_at_checked(len).ok_or_else(|| DecodeError::new("write batch entry runs past the record"))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn encoded_batch_decodes_to_the_same_operations() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").delete(b"b").put(b"", vec![7u8; 300]);
        let mut other = WriteBatch::new();
        other.put(b"z", b"26");
        b.append(&other);
        let rec = b.encode_with_seq(41).to_vec();
        let d = decode_batch(&rec).unwrap();
        assert_eq!(d.first_seq, 41);
        let ops: Vec<_> = d.ops.map(|r| r.unwrap().1).collect();
        assert_eq!(ops.len(), 4);
        assert_eq!(ops[0], BatchOp::Point(ValueKind::Put, &b"a"[..], &b"1"[..]));
        assert_eq!(ops[1], BatchOp::Point(ValueKind::Delete, &b"b"[..], &b""[..]));
        assert!(matches!(ops[2], BatchOp::Point(_, _, v) if v.len() == 300));
        assert_eq!(ops[3], BatchOp::Point(ValueKind::Put, &b"z"[..], &b"26"[..]));
    }

    #[test]
    fn a_cleared_batch_is_a_new_batch_that_can_be_filled_again() {
        let mut b = WriteBatch::new();
        b.put(b"key", vec![1u8; 1000]).delete(b"gone");
        b.encode_with_seq(77);
        b.clear();
        assert_eq!(b, WriteBatch::new());
        assert!(b.is_empty() && b.largest_key() == 0 && b.largest_value() == 0);
        b.put(b"k", b"v");
        let ops: Vec<_> = b.ops().collect::<Result<_, _>>().unwrap();
        assert_eq!(ops, vec![(DEFAULT_KEYSPACE, BatchOp::Point(ValueKind::Put, &b"k"[..], &b"v"[..]))]);
    }

    #[test]
    fn range_deletes_encode_their_half_open_range() {
        let mut b = WriteBatch::new();
        b.delete_range(&b"a"[..]..&b"c"[..]).delete_range(&b"k"[..]..).delete_range(&b"x"[..]..=&b"y"[..]);
        b.delete_range::<&[u8], _>((Bound::Excluded(&b"m"[..]), Bound::Unbounded));
        b.delete_range(&b"q"[..]..&b"q"[..]).delete_range(&b"z"[..]..&b"a"[..]);
        assert_eq!(b.len(), 4, "empty ranges add nothing");
        let ops: Vec<_> = b.ops().map(|r| r.unwrap().1).collect();
        assert_eq!(ops[0], BatchOp::DeleteRange { start: b"a", end: Some(b"c") });
        assert_eq!(ops[1], BatchOp::DeleteRange { start: b"k", end: None });
        assert_eq!(ops[2], BatchOp::DeleteRange { start: b"x", end: Some(b"y\0") });
        assert_eq!(ops[3], BatchOp::DeleteRange { start: b"m\0", end: None });
    }

    #[test]
    fn operations_outside_the_default_keyspace_carry_its_id_and_default_ones_do_not() {
        let mut old = WriteBatch::new();
        old.put(b"a", b"1").delete(b"b");
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").delete(b"b");
        assert_eq!(b.encoded_ops(), old.encoded_ops(), "the default keyspace encodes as before keyspaces");
        b.put_to(7, b"k", b"v").delete_to(300, b"gone").delete_range_to(u32::MAX, &(&b"x"[..]..&b"y"[..]));
        let rec = b.encode_with_seq(1).to_vec();
        let ops: Vec<_> = decode_batch(&rec).unwrap().ops.map(Result::unwrap).collect();
        assert_eq!(
            ops,
            [
                (0, BatchOp::Point(ValueKind::Put, &b"a"[..], &b"1"[..])),
                (0, BatchOp::Point(ValueKind::Delete, &b"b"[..], &b""[..])),
                (7, BatchOp::Point(ValueKind::Put, &b"k"[..], &b"v"[..])),
                (300, BatchOp::Point(ValueKind::Delete, &b"gone"[..], &b""[..])),
                (u32::MAX, BatchOp::DeleteRange { start: b"x", end: Some(b"y") }),
            ]
        );
        // A keyspace id past u32 is damage, not a wrapped id.
        let mut bad = rec[..HEADER_LEN].to_vec();
        bad[8..12].copy_from_slice(&1u32.to_le_bytes());
        bad.push(IN_KEYSPACE + ValueKind::Delete as u8);
        put_varint(&mut bad, u64::from(u32::MAX) + 1);
        put_slice(&mut bad, b"k");
        assert!(decode_batch(&bad).unwrap().ops.next().unwrap().is_err());
    }

    #[test]
    fn sequence_numbers_past_the_largest_are_corruption() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v").delete(b"k");
        assert!(decode_batch(b.encode_with_seq(MAX_SEQ - 1)).is_ok(), "the last two numbers");
        for first in [MAX_SEQ, MAX_SEQ + 1, u64::MAX] {
            let err = decode_batch(b.encode_with_seq(first)).err().expect("out of range");
            assert!(err.0.contains("passes the largest"), "{err}");
        }
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value").delete(b"gone").delete_range(&b"a"[..]..&b"b"[..]);
        let rec = b.encode_with_seq(1).to_vec();
        for cut in 0..rec.len() {
            if let Ok(d) = decode_batch(&rec[..cut]) {
                assert!(d.ops.collect::<Result<Vec<_>, _>>().is_err(), "cut at {cut} decoded");
            }
        }
        for i in 0..rec.len() {
            let mut bad = rec.clone();
            bad[i] ^= 0xff;
            if let Ok(d) = decode_batch(&bad) {
                let _ = d.ops.collect::<Vec<_>>();
            }
        }
    }
}
