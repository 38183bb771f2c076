//! Version edits: the records of the manifest.
//!
//! ```text
//! edit := field*                               (see coding.rs; any order)
//!   1 log_number: varint        2 next_file_number: varint     3 last_sequence: varint
//!   4 deleted_file := level: varint | number: varint           (repeated)
//!   5 new_file     := level: varint | file_meta                (repeated; file_meta.rs)
//!   6 compact_pointer := level: varint | internal key bytes    (repeated)
//!   7 range_del := seq: varint | start_len: varint | start | 0        (repeated; to the end
//!                                                        | 1 | end    of the key space, or to end)
//!   8 dropped_range_del := seq: varint                         (repeated)
//!   9 keyspace: varint                (the keyspace the edit changes; absent: the default, 0)
//!  10 create_keyspace := style: u8 (0 leveled, 1 tiered) | size_ratio: varint | name
//!  11 drop_keyspace := (empty)
//!  12 next_keyspace: varint           (the id the next new keyspace gets)
//! ```
//!
//! Range deletes (7, 8) are not skippable: a reader that ignored them would bring deleted
//! keys back. Nor are the keyspace fields (9-12): a reader that ignored them would merge
//! the keyspaces' trees into one. A manifest written before keyspaces existed has none of
//! them, and reads as a database whose only keyspace is the default one.

#![deny(clippy::indexing_slicing)]

use super::coding::{check_unknown, put_field, put_varint, put_varint_field, set_once, Decoder};
use super::file_meta::FileMeta;
use crate::error::DecodeError;
use crate::key::{SeqNo, MAX_SEQ};
use crate::options::CompactionStyle;
use crate::range_del::RangeTombstone;

const LOG_NUMBER: u64 = 1;
const NEXT_FILE_NUMBER: u64 = 2;
const LAST_SEQUENCE: u64 = 3;
const DELETED_FILE: u64 = 4;
const NEW_FILE: u64 = 5;
const COMPACT_POINTER: u64 = 6;
const RANGE_DEL: u64 = 7;
const DROPPED_RANGE_DEL: u64 = 8;
const KEYSPACE: u64 = 9;
const CREATE_KEYSPACE: u64 = 10;
const DROP_KEYSPACE: u64 = 11;
const NEXT_KEYSPACE: u64 = 12;

/// The id of the default keyspace: the tree of every database written before keyspaces.
pub(crate) const DEFAULT_KEYSPACE: u32 = 0;

/// What a keyspace is created with and keeps for its life: its name and the shape its
/// compactions give its levels (a leveled picker must never meet a tiered level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyspaceRecord {
    pub name: String,
    pub style: CompactionStyle,
    pub size_ratio: u32,
}

/// Levels an edit may name. Far above any real tree; it only keeps a corrupt level number
/// from turning into a huge allocation.
pub(super) const MAX_LEVELS: usize = 64;

/// A change from one version to the next, logged in the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct VersionEdit {
    /// WALs with a number below this are fully flushed. A flush sets it to the number of
    /// the oldest WAL still backing a memtable.
    pub log_number: Option<u64>,
    /// Next file number to allocate (filled in by [`VersionSet::log_and_apply`](super::VersionSet::log_and_apply)).
    pub next_file_number: Option<u64>,
    /// Last sequence number used (filled in by `log_and_apply`).
    pub last_sequence: Option<SeqNo>,
    /// Files removed: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: (level, metadata); `FileMeta::run` says which run of the level.
    pub new_files: Vec<(usize, FileMeta)>,
    /// Where the next leveled compaction of a level should start: (level, internal key).
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Range tombstones added (a flush brings its memtable's).
    pub range_dels: Vec<RangeTombstone>,
    /// Range tombstones removed, by sequence number (nothing older in their range is left).
    pub dropped_range_dels: Vec<SeqNo>,
    /// The keyspace whose tree the files, pointers, tombstones and `log_number` belong to.
    pub keyspace: u32,
    /// The edit creates `keyspace` (before applying the rest to its empty tree).
    pub create_keyspace: Option<KeyspaceRecord>,
    /// The edit drops `keyspace`: its files are obsolete once no reader holds them.
    pub drop_keyspace: bool,
    /// The id the next new keyspace gets (ids are never reused, so a WAL record of a
    /// dropped keyspace never replays into a new one).
    pub next_keyspace: Option<u32>,
}

impl VersionEdit {
    /// Append the encoding of this edit.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let scalars = [
            (LOG_NUMBER, self.log_number),
            (NEXT_FILE_NUMBER, self.next_file_number),
            (LAST_SEQUENCE, self.last_sequence),
        ];
        for (tag, v) in scalars {
            if let Some(v) = v {
                put_varint_field(out, tag, v);
            }
        }
        let mut payload = Vec::new();
        for &(level, number) in &self.deleted_files {
            payload.clear();
            put_varint(&mut payload, level as u64);
            put_varint(&mut payload, number);
            put_field(out, DELETED_FILE, &payload);
        }
        for (level, meta) in &self.new_files {
            payload.clear();
            put_varint(&mut payload, *level as u64);
            meta.encode(&mut payload);
            put_field(out, NEW_FILE, &payload);
        }
        for (level, key) in &self.compact_pointers {
            payload.clear();
            put_varint(&mut payload, *level as u64);
            payload.extend_from_slice(key);
            put_field(out, COMPACT_POINTER, &payload);
        }
        for t in &self.range_dels {
            payload.clear();
            put_varint(&mut payload, t.seq);
            put_varint(&mut payload, t.start.len() as u64);
            payload.extend_from_slice(&t.start);
            match &t.end {
                None => put_varint(&mut payload, 0),
                Some(end) => {
                    put_varint(&mut payload, 1);
                    payload.extend_from_slice(end);
                }
            }
            put_field(out, RANGE_DEL, &payload);
        }
        for &seq in &self.dropped_range_dels {
            put_varint_field(out, DROPPED_RANGE_DEL, seq);
        }
        if self.keyspace != DEFAULT_KEYSPACE {
            put_varint_field(out, KEYSPACE, u64::from(self.keyspace));
        }
        if let Some(k) = &self.create_keyspace {
            payload.clear();
            payload.push(match k.style {
                CompactionStyle::Leveled => 0,
                CompactionStyle::Tiered => 1,
            });
            put_varint(&mut payload, u64::from(k.size_ratio));
            payload.extend_from_slice(k.name.as_bytes());
            put_field(out, CREATE_KEYSPACE, &payload);
        }
        if self.drop_keyspace {
            put_field(out, DROP_KEYSPACE, &[]);
        }
        if let Some(next) = self.next_keyspace {
            put_varint_field(out, NEXT_KEYSPACE, u64::from(next));
        }
    }

    /// Decode an edit; never panics on bad bytes.
    pub(crate) fn decode(bytes: &[u8]) -> Result<VersionEdit, DecodeError> {
        let mut edit = VersionEdit::default();
        let mut keyspace = None;
        let mut d = Decoder::new(bytes);
        while let Some((tag, payload)) = d.field()? {
            match tag {
                LOG_NUMBER => set_once(&mut edit.log_number, Decoder::only_varint(payload)?, "log number")?,
                NEXT_FILE_NUMBER => {
                    set_once(&mut edit.next_file_number, Decoder::only_varint(payload)?, "next file number")?
                }
                LAST_SEQUENCE => {
                    // The next write takes last + 1, which must fit an internal key.
                    let last = Decoder::only_varint(payload)?;
                    if last > MAX_SEQ {
                        return Err(DecodeError::new(format!("last sequence {last} passes the largest, {MAX_SEQ}")));
                    }
                    set_once(&mut edit.last_sequence, last, "last sequence")?
                }
                DELETED_FILE => {
                    let mut f = Decoder::new(payload);
                    let level = level(&mut f)?;
                    let number = f.varint()?;
                    f.finish()?;
                    edit.deleted_files.push((level, number));
                }
                NEW_FILE => {
                    let mut f = Decoder::new(payload);
                    let level = level(&mut f)?;
                    edit.new_files.push((level, FileMeta::decode(f.rest())?));
                }
                COMPACT_POINTER => {
                    let mut f = Decoder::new(payload);
                    let level = level(&mut f)?;
                    edit.compact_pointers.push((level, f.rest().to_vec()));
                }
                RANGE_DEL => {
                    let mut f = Decoder::new(payload);
                    let seq = f.varint()?;
                    let len = f.varint()?;
                    let start = f.take(len)?.to_vec();
                    let end = match f.varint()? {
                        0 => {
                            f.finish()?;
                            None
                        }
                        1 => Some(f.rest().to_vec()),
                        b => return Err(DecodeError::new(format!("range delete end marker {b}"))),
                    };
                    if end.as_deref().is_some_and(|end| end <= start.as_slice()) {
                        return Err(DecodeError::new("range delete with an empty or inverted range"));
                    }
                    edit.range_dels.push(RangeTombstone { start, end, seq });
                }
                DROPPED_RANGE_DEL => edit.dropped_range_dels.push(Decoder::only_varint(payload)?),
                KEYSPACE => set_once(&mut keyspace, keyspace_id(payload)?, "keyspace")?,
                CREATE_KEYSPACE => {
                    let mut f = Decoder::new(payload);
                    let style = match f.take(1)? {
                        [0] => CompactionStyle::Leveled,
                        [1] => CompactionStyle::Tiered,
                        other => return Err(DecodeError::new(format!("keyspace compaction style {other:?}"))),
                    };
                    let size_ratio =
                        u32::try_from(f.varint()?).map_err(|_| DecodeError::new("keyspace size ratio out of range"))?;
                    let name = String::from_utf8(f.rest().to_vec())
                        .map_err(|_| DecodeError::new("keyspace name is not UTF-8"))?;
                    set_once(&mut edit.create_keyspace, KeyspaceRecord { name, style, size_ratio }, "keyspace")?;
                }
                DROP_KEYSPACE => {
                    if !payload.is_empty() || edit.drop_keyspace {
                        return Err(DecodeError::new("malformed keyspace drop"));
                    }
                    edit.drop_keyspace = true;
                }
                NEXT_KEYSPACE => set_once(&mut edit.next_keyspace, keyspace_id(payload)?, "next keyspace")?,
                other => check_unknown(other, "version edit")?,
            }
        }
        edit.keyspace = keyspace.unwrap_or(DEFAULT_KEYSPACE);
        Ok(edit)
    }
}

fn keyspace_id(payload: &[u8]) -> Result<u32, DecodeError> {
    let id = Decoder::only_varint(payload)?;
    u32::try_from(id).map_err(|_| DecodeError::new(format!("keyspace id {id} out of range")))
}

fn level(d: &mut Decoder<'_>) -> Result<usize, DecodeError> {
    let level = d.varint()?;
    match usize::try_from(level) {
        Ok(l) if l < MAX_LEVELS => Ok(l),
        _ => Err(DecodeError::new(format!("level {level} out of range"))),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::super::file_meta::tests::any_file_meta;
    use super::*;
    use proptest::prelude::*;

    fn any_edit() -> impl Strategy<Value = VersionEdit> {
        let level = 0..MAX_LEVELS;
        (
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
            proptest::option::of(0..=MAX_SEQ),
            proptest::collection::vec((level.clone(), any::<u64>()), 0..4),
            proptest::collection::vec((level.clone(), any_file_meta()), 0..4),
            proptest::collection::vec((level, proptest::collection::vec(any::<u8>(), 0..12)), 0..3),
            proptest::collection::vec(
                (
                    proptest::collection::vec(any::<u8>(), 0..6),
                    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..6)),
                    any::<u64>(),
                )
                    // An end after the start: the start, then a byte above zero, then more.
                    .prop_map(|(start, end, seq)| {
                        let end = end.map(|tail| [start.as_slice(), &[1], &tail].concat());
                        RangeTombstone { start, end, seq }
                    }),
                0..3,
            ),
            proptest::collection::vec(any::<u64>(), 0..3),
        )
            .prop_map(
                |(
                    log_number,
                    next_file_number,
                    last_sequence,
                    deleted_files,
                    new_files,
                    compact_pointers,
                    range_dels,
                    dropped_range_dels,
                )| {
                    VersionEdit {
                        log_number,
                        next_file_number,
                        last_sequence,
                        deleted_files,
                        new_files,
                        compact_pointers,
                        range_dels,
                        dropped_range_dels,
                        ..VersionEdit::default()
                    }
                },
            )
            .prop_flat_map(|edit| {
                let record = ("[a-z:]{0,8}", any::<bool>(), 2u32..20).prop_map(|(name, tiered, size_ratio)| {
                    let style = if tiered { CompactionStyle::Tiered } else { CompactionStyle::Leveled };
                    KeyspaceRecord { name, style, size_ratio }
                });
                (any::<u32>(), proptest::option::of(record), any::<bool>(), proptest::option::of(any::<u32>()))
                    .prop_map(move |(keyspace, create_keyspace, drop_keyspace, next_keyspace)| VersionEdit {
                        keyspace,
                        create_keyspace,
                        drop_keyspace,
                        next_keyspace,
                        ..edit.clone()
                    })
            })
    }

    proptest! {
        #[test]
        fn edits_round_trip(edit in any_edit()) {
            let mut b = Vec::new();
            edit.encode(&mut b);
            prop_assert_eq!(VersionEdit::decode(&b), Ok(edit));
        }

        #[test]
        fn decode_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = VersionEdit::decode(&bytes);
        }

        #[test]
        fn decode_never_panics_on_damaged_edits(edit in any_edit(), at in any::<prop::sample::Index>(), xor in 1u8..) {
            let mut b = Vec::new();
            edit.encode(&mut b);
            if !b.is_empty() {
                let i = at.index(b.len());
                b[i] ^= xor;
                let _ = VersionEdit::decode(&b);
                let _ = VersionEdit::decode(&b[..i]);
            }
        }
    }

    #[test]
    fn empty_edit_encodes_to_nothing() {
        let mut b = Vec::new();
        VersionEdit::default().encode(&mut b);
        assert!(b.is_empty());
        assert_eq!(VersionEdit::decode(&b), Ok(VersionEdit::default()));
    }

    #[test]
    fn a_last_sequence_past_the_largest_is_refused() {
        for (last, ok) in [(MAX_SEQ, true), (MAX_SEQ + 1, false), (u64::MAX, false)] {
            let mut b = Vec::new();
            put_varint_field(&mut b, LAST_SEQUENCE, last);
            assert_eq!(VersionEdit::decode(&b).is_ok(), ok, "{last}");
        }
    }

    #[test]
    fn repeated_scalars_and_absurd_levels_are_refused() {
        let mut b = Vec::new();
        put_varint_field(&mut b, LOG_NUMBER, 1);
        put_varint_field(&mut b, LOG_NUMBER, 2);
        assert!(VersionEdit::decode(&b).is_err());
        let mut b = Vec::new();
        let mut payload = Vec::new();
        put_varint(&mut payload, 1_000_000);
        put_varint(&mut payload, 5);
        put_field(&mut b, DELETED_FILE, &payload);
        assert!(VersionEdit::decode(&b).is_err());
    }
}
