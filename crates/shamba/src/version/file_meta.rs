//! Metadata of one SST file and its encoding inside a version edit.
//!
//! ```text
//! file_meta := field*            (see coding.rs; any order)
//!   1 number  2 run  3 size  4 smallest (bytes)  5 largest (bytes)  6 entries
//!   7 smallest_seq  8 largest_seq  9 filter_bytes  10 index_bytes      (varints unless noted)
//!   65 stats := accesses: varint | positives: varint                  (optional, skippable)
//!   66 data_bytes: varint                                             (optional, skippable)
//! ```

#![deny(clippy::indexing_slicing)]

use super::coding::{check_unknown, put_field, put_varint, put_varint_field, set_once, Decoder, SAFE_TO_SKIP};
use crate::error::DecodeError;
use crate::key::{user_key, SeqNo, TRAILER_LEN};

const NUMBER: u64 = 1;
const RUN: u64 = 2;
const SIZE: u64 = 3;
const SMALLEST: u64 = 4;
const LARGEST: u64 = 5;
const ENTRIES: u64 = 6;
const SMALLEST_SEQ: u64 = 7;
const LARGEST_SEQ: u64 = 8;
const FILTER_BYTES: u64 = 9;
const INDEX_BYTES: u64 = 10;
const STATS: u64 = SAFE_TO_SKIP | 1;
const DATA_BYTES: u64 = SAFE_TO_SKIP | 2;

/// Per-file access statistics persisted so that a restart keeps what lookups learned
/// (the filter manager's alpha and beta), as [`FileInfo::stats`](crate::FileInfo::stats)
/// reports them: counts per [`SCALE`](Self::SCALE) table-reaching lookups of the database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStatsRecord {
    /// Lookups that reached this file, per `SCALE` table-reaching lookups (beta's
    /// numerator).
    pub accesses: u64,
    /// Of those, the lookups that found their key in this file (alpha's numerator).
    pub positives: u64,
}

impl FileStatsRecord {
    /// The table-reaching lookups of the database that [`accesses`](Self::accesses) and
    /// [`positives`](Self::positives) count per.
    pub const SCALE: u64 = 1_000_000;

    /// Lookups reaching the file per table-reaching lookup of the database (beta, as a
    /// rate): 1.0 when every lookup that reached the tables reached this file.
    pub fn beta_rate(&self) -> f64 {
        self.accesses as f64 / Self::SCALE as f64
    }

    /// The fraction of the file's lookups that found their key in it (alpha), in 0..=1;
    /// 0 when no lookup reached it.
    pub fn alpha(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            (self.positives as f64 / self.accesses as f64).min(1.0)
        }
    }
}

/// Metadata of one SST file, as recorded in the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FileMeta {
    /// File number; the file is `{number:06}.sst`.
    pub number: u64,
    /// Sorted run this file belongs to (L0: its own number; leveled L1+: one run per level).
    pub run: u64,
    /// File size in bytes.
    pub size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Number of entries.
    pub entries: u64,
    /// Smallest sequence number in the file.
    pub smallest_seq: SeqNo,
    /// Largest sequence number in the file.
    pub largest_seq: SeqNo,
    /// Bytes of filter blocks.
    pub filter_bytes: u64,
    /// Bytes of index blocks.
    pub index_bytes: u64,
    /// Bytes of data blocks: what compaction sizes files and levels by, so that neither
    /// filters nor the metadata describing them change the shape of the tree.
    pub data_bytes: u64,
    /// Access statistics, when known (inherited or measured).
    pub stats: Option<FileStatsRecord>,
}

impl FileMeta {
    /// User key of [`smallest`](Self::smallest).
    #[inline]
    pub(crate) fn smallest_user_key(&self) -> &[u8] {
        user_key(&self.smallest)
    }

    /// User key of [`largest`](Self::largest).
    #[inline]
    pub(crate) fn largest_user_key(&self) -> &[u8] {
        user_key(&self.largest)
    }

    /// Whether `user_key` lies in the file's user-key range.
    #[inline]
    #[cfg(test)]
    pub(crate) fn covers(&self, user_key: &[u8]) -> bool {
        self.smallest_user_key() <= user_key && user_key <= self.largest_user_key()
    }

    /// Whether the file's user-key range meets `[smallest, largest]`.
    #[inline]
    #[cfg(test)]
    pub(crate) fn overlaps(&self, smallest: &[u8], largest: &[u8]) -> bool {
        self.smallest_user_key() <= largest && smallest <= self.largest_user_key()
    }

    /// Append the fields of this file.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        put_varint_field(out, NUMBER, self.number);
        put_varint_field(out, RUN, self.run);
        put_varint_field(out, SIZE, self.size);
        put_field(out, SMALLEST, &self.smallest);
        put_field(out, LARGEST, &self.largest);
        put_varint_field(out, ENTRIES, self.entries);
        put_varint_field(out, SMALLEST_SEQ, self.smallest_seq);
        put_varint_field(out, LARGEST_SEQ, self.largest_seq);
        put_varint_field(out, FILTER_BYTES, self.filter_bytes);
        put_varint_field(out, INDEX_BYTES, self.index_bytes);
        // Absent (0) in records of versions before it: decoding derives it then.
        if self.data_bytes > 0 {
            put_varint_field(out, DATA_BYTES, self.data_bytes);
        }
        if let Some(s) = self.stats {
            let mut payload = Vec::with_capacity(20);
            put_varint(&mut payload, s.accesses);
            put_varint(&mut payload, s.positives);
            put_field(out, STATS, &payload);
        }
    }

    /// Decode the fields written by [`encode`](Self::encode).
    pub(crate) fn decode(bytes: &[u8]) -> Result<FileMeta, DecodeError> {
        let mut d = Decoder::new(bytes);
        let (mut number, mut run, mut size, mut smallest, mut largest) = (None, None, None, None, None);
        let (mut entries, mut smallest_seq, mut largest_seq) = (None, None, None);
        let (mut filter_bytes, mut index_bytes, mut data_bytes, mut stats) = (None, None, None, None);
        while let Some((tag, payload)) = d.field()? {
            let int = || Decoder::only_varint(payload);
            match tag {
                NUMBER => set_once(&mut number, int()?, "file number")?,
                RUN => set_once(&mut run, int()?, "run")?,
                SIZE => set_once(&mut size, int()?, "size")?,
                SMALLEST => set_once(&mut smallest, internal_key(payload, "smallest")?, "smallest key")?,
                LARGEST => set_once(&mut largest, internal_key(payload, "largest")?, "largest key")?,
                ENTRIES => set_once(&mut entries, int()?, "entries")?,
                SMALLEST_SEQ => set_once(&mut smallest_seq, int()?, "smallest sequence")?,
                LARGEST_SEQ => set_once(&mut largest_seq, int()?, "largest sequence")?,
                FILTER_BYTES => set_once(&mut filter_bytes, int()?, "filter bytes")?,
                INDEX_BYTES => set_once(&mut index_bytes, int()?, "index bytes")?,
                DATA_BYTES => set_once(&mut data_bytes, int()?, "data bytes")?,
                STATS => {
                    let mut s = Decoder::new(payload);
                    let record = FileStatsRecord { accesses: s.varint()?, positives: s.varint()? };
                    s.finish()?;
                    set_once(&mut stats, record, "file statistics")?;
                }
                other => check_unknown(other, "file metadata")?,
            }
        }
        let need =
            |v: Option<u64>, what: &str| v.ok_or_else(|| DecodeError::new(format!("file metadata lacks {what}")));
        Ok(FileMeta {
            number: need(number, "a number")?,
            run: need(run, "a run")?,
            size: need(size, "a size")?,
            smallest: smallest.ok_or_else(|| DecodeError::new("file metadata lacks a smallest key"))?,
            largest: largest.ok_or_else(|| DecodeError::new("file metadata lacks a largest key"))?,
            entries: entries.unwrap_or(0),
            smallest_seq: smallest_seq.unwrap_or(0),
            largest_seq: largest_seq.unwrap_or(0),
            filter_bytes: filter_bytes.unwrap_or(0),
            index_bytes: index_bytes.unwrap_or(0),
            // Manifests written before it was recorded: the file less its metadata.
            data_bytes: data_bytes.unwrap_or_else(|| {
                size.unwrap_or(0).saturating_sub(filter_bytes.unwrap_or(0).saturating_add(index_bytes.unwrap_or(0)))
            }),
            stats,
        })
    }
}

fn internal_key(payload: &[u8], what: &str) -> Result<Vec<u8>, DecodeError> {
    if payload.len() < TRAILER_LEN {
        return Err(DecodeError::new(format!("{what} key is shorter than a key trailer")));
    }
    Ok(payload.to_vec())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
pub(crate) mod tests {
    use super::*;
    use crate::key::{internal_key as ikey, ValueKind};
    use proptest::prelude::*;

    #[test]
    fn a_stats_record_reads_as_its_rates() {
        let r = FileStatsRecord { accesses: 250_000, positives: 50_000 };
        assert_eq!((r.beta_rate(), r.alpha()), (0.25, 0.2));
        assert_eq!(FileStatsRecord::default().alpha(), 0.0);
        // A record decoded from a damaged or older manifest never says more than all.
        assert_eq!(FileStatsRecord { accesses: 10, positives: 20 }.alpha(), 1.0);
    }

    /// A file of `run` spanning user keys `lo..=hi`.
    pub(crate) fn file(number: u64, run: u64, lo: &[u8], hi: &[u8]) -> FileMeta {
        FileMeta {
            number,
            run,
            size: 1000 + number,
            data_bytes: 900 + number,
            smallest: ikey(lo, 10, ValueKind::Put),
            largest: ikey(hi, 1, ValueKind::Put),
            entries: 10,
            smallest_seq: 1,
            largest_seq: 10,
            ..FileMeta::default()
        }
    }

    pub(crate) fn any_file_meta() -> impl Strategy<Value = FileMeta> {
        (
            any::<[u64; 8]>(),
            proptest::collection::vec(any::<u8>(), 8..20),
            proptest::collection::vec(any::<u8>(), 8..20),
            proptest::option::of(any::<(u64, u64)>()),
        )
            .prop_map(|(n, smallest, largest, stats)| FileMeta {
                number: n[0],
                run: n[1],
                size: n[2],
                smallest,
                largest,
                entries: n[3],
                smallest_seq: n[4],
                largest_seq: n[5],
                filter_bytes: n[6],
                index_bytes: n[7],
                data_bytes: n[2] / 2 + 1,
                stats: stats.map(|(accesses, positives)| FileStatsRecord { accesses, positives }),
            })
    }

    #[test]
    fn records_without_data_bytes_take_the_file_less_its_metadata() {
        let meta = FileMeta {
            size: 10_000,
            filter_bytes: 1_200,
            index_bytes: 300,
            data_bytes: 8_000,
            ..file(1, 1, b"a", b"b")
        };
        let mut bytes = Vec::new();
        meta.encode(&mut bytes);
        assert_eq!(FileMeta::decode(&bytes).unwrap().data_bytes, 8_000);
        // The same record as an older version wrote it: no data-bytes field.
        let mut old = Vec::new();
        FileMeta { data_bytes: 0, ..meta }.encode(&mut old);
        assert_eq!(FileMeta::decode(&old).unwrap().data_bytes, 8_500);
    }

    proptest! {
        #[test]
        fn file_meta_round_trips(meta in any_file_meta()) {
            let mut b = Vec::new();
            meta.encode(&mut b);
            prop_assert_eq!(FileMeta::decode(&b), Ok(meta));
        }
    }

    #[test]
    fn unknown_skippable_fields_are_skipped_and_others_refused() {
        let meta = file(7, 7, b"a", b"c");
        let mut b = Vec::new();
        meta.encode(&mut b);
        let mut newer = b.clone();
        put_field(&mut newer, SAFE_TO_SKIP | 9, b"something new");
        assert_eq!(FileMeta::decode(&newer), Ok(meta));
        let mut wrong = b.clone();
        put_field(&mut wrong, 30, b"?");
        assert!(FileMeta::decode(&wrong).is_err());
    }

    #[test]
    fn covers_and_overlaps_use_user_keys() {
        let f = file(1, 1, b"b", b"d");
        assert!(f.covers(b"b") && f.covers(b"c") && f.covers(b"d"));
        assert!(!f.covers(b"a") && !f.covers(b"d\0"));
        assert!(f.overlaps(b"a", b"b") && f.overlaps(b"d", b"z") && !f.overlaps(b"e", b"z"));
    }
}
