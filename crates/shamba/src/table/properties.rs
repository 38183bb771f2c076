//! The properties block: what a table holds and how it was built.
//!
//! Stored as a block of `name -> value` entries in name order (restart interval 1);
//! numbers are varints, keys and strings raw bytes, the filter's part sizes a varint count
//! followed by varints. Readers ignore names they do not know, so later versions can add
//! properties; every name written by version 1 is required.

use super::block::{bytewise, Block};
use super::block_builder::BlockBuilder;
use super::coding::{put_varint, Decoder};
use crate::error::DecodeError;
use crate::filter::FilterSpec;
use crate::key::SeqNo;
use std::collections::BTreeMap;

/// The filter a table carries, as recorded at build time. Informational: each filter part
/// describes itself (kind, parameters, digest version) in its own header.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilterDescriptor {
    /// Kind of filter (`None`, `Bloom`, ...), the variant name of its [`FilterSpec`].
    pub kind: String,
    /// The full spec the builder was given, in its debug form.
    pub spec: String,
    /// Digests the filter was built over (one per distinct user key).
    pub digests: u64,
    /// Bytes of each part's contents, in probe order (empty: no filter).
    pub part_bytes: Vec<u64>,
    /// Analytic FP rate of each part probed alone, in probe order (the filter manager's
    /// `f_sm`; empty for tables written before it was recorded).
    pub part_fprs: Vec<f64>,
}

impl FilterDescriptor {
    /// Describe `spec` built over `digests` keys into parts of `part_bytes` bytes.
    pub(crate) fn new(spec: &FilterSpec, digests: u64, part_bytes: Vec<u64>) -> Self {
        let spec = format!("{spec:?}");
        let kind = spec.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        FilterDescriptor { kind, spec, digests, part_bytes, part_fprs: Vec::new() }
    }

    /// Record each serialized part's analytic FP rate.
    pub(crate) fn with_fprs_of(mut self, parts: &[Vec<u8>]) -> Self {
        self.part_fprs =
            parts.iter().map(|p| crate::filter::FilterPart::parse(p).map_or(1.0, |f| f.expected_fpr())).collect();
        self
    }

    /// Number of filter parts.
    pub fn parts(&self) -> usize {
        self.part_bytes.len()
    }
}

/// Everything the properties block records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableProperties {
    /// Format version the table was written with.
    pub format_version: u32,
    /// Entries (all versions, deletes included).
    pub entries: u64,
    /// Entries that are deletes.
    pub deletions: u64,
    /// Bytes of all internal keys as added.
    pub raw_key_bytes: u64,
    /// Bytes of all values as added.
    pub raw_value_bytes: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Bytes of data blocks on disk, trailers included.
    pub data_bytes: u64,
    /// Bytes of the index block's contents (what it occupies when pinned or cached).
    pub index_bytes: u64,
    /// Bytes of the filter parts' contents (what they occupy when pinned or cached).
    pub filter_bytes: u64,
    /// Smallest internal key (empty for an empty table).
    pub smallest_key: Vec<u8>,
    /// Largest internal key (empty for an empty table).
    pub largest_key: Vec<u8>,
    /// Smallest sequence number.
    pub smallest_seq: SeqNo,
    /// Largest sequence number.
    pub largest_seq: SeqNo,
    /// The filter.
    pub filter: FilterDescriptor,
    /// Target data block size used.
    pub block_size: u64,
    /// Restart interval of data blocks.
    pub restart_interval: u64,
    /// Compression asked for data blocks (a [`super::format::CompressionType`] byte).
    pub compression: u8,
    /// Creation time, seconds since the Unix epoch.
    pub created_unix_secs: u64,
    /// What wrote the table (`shamba <version>`).
    pub creator: String,
}

/// Bounds what a damaged part-size list can make a reader allocate.
const MAX_FILTER_PARTS: u64 = 1 << 16;

impl TableProperties {
    /// The properties block's contents.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let num = |v: u64| {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            b
        };
        let mut parts = num(self.filter.part_bytes.len() as u64);
        for &p in &self.filter.part_bytes {
            put_varint(&mut parts, p);
        }
        let mut fprs = num(self.filter.part_fprs.len() as u64);
        for &f in &self.filter.part_fprs {
            fprs.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        let map: BTreeMap<&str, Vec<u8>> = BTreeMap::from([
            ("block_size", num(self.block_size)),
            ("compression", num(u64::from(self.compression))),
            ("created_unix_secs", num(self.created_unix_secs)),
            ("creator", self.creator.as_bytes().to_vec()),
            ("data_blocks", num(self.data_blocks)),
            ("data_bytes", num(self.data_bytes)),
            ("deletions", num(self.deletions)),
            ("entries", num(self.entries)),
            ("filter.digests", num(self.filter.digests)),
            ("filter.kind", self.filter.kind.as_bytes().to_vec()),
            ("filter.part_bytes", parts),
            ("filter.part_fprs", fprs),
            ("filter.spec", self.filter.spec.as_bytes().to_vec()),
            ("filter_bytes", num(self.filter_bytes)),
            ("format_version", num(u64::from(self.format_version))),
            ("index_bytes", num(self.index_bytes)),
            ("largest_key", self.largest_key.clone()),
            ("largest_seq", num(self.largest_seq)),
            ("raw_key_bytes", num(self.raw_key_bytes)),
            ("raw_value_bytes", num(self.raw_value_bytes)),
            ("restart_interval", num(self.restart_interval)),
            ("smallest_key", self.smallest_key.clone()),
            ("smallest_seq", num(self.smallest_seq)),
        ]);
        let mut b = BlockBuilder::new(1);
        for (name, value) in &map {
            b.add(name.as_bytes(), value);
        }
        b.finish()
    }

    /// Decode a properties block.
    pub(crate) fn decode(block: Block) -> Result<TableProperties, DecodeError> {
        let mut map: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut c = block.cursor(bytewise);
        c.seek_to_first()?;
        while c.valid() {
            map.insert(c.key().to_vec(), c.value().to_vec());
            c.next()?;
        }
        let raw =
            |name: &str| map.get(name.as_bytes()).ok_or_else(|| DecodeError::new(format!("property {name} missing")));
        let num = |name: &str| -> Result<u64, DecodeError> {
            let mut d = Decoder::new(raw(name)?);
            let v = d.varint()?;
            if !d.is_empty() {
                return Err(DecodeError::new(format!("property {name}: trailing bytes")));
            }
            Ok(v)
        };
        let text = |name: &str| -> Result<String, DecodeError> {
            String::from_utf8(raw(name)?.clone()).map_err(|_| DecodeError::new(format!("property {name}: not UTF-8")))
        };
        let small = |name: &str| -> Result<u32, DecodeError> {
            u32::try_from(num(name)?).map_err(|_| DecodeError::new(format!("property {name} out of range")))
        };

        let mut d = Decoder::new(raw("filter.part_bytes")?);
        let n = d.varint()?;
        if n > MAX_FILTER_PARTS {
            return Err(DecodeError::new(format!("{n} filter parts")));
        }
        let part_bytes = (0..n).map(|_| d.varint()).collect::<Result<Vec<_>, _>>()?;
        let mut part_fprs = Vec::new();
        if let Ok(bytes) = raw("filter.part_fprs") {
            let mut d = Decoder::new(bytes);
            let n = d.varint()?;
            if n != part_bytes.len() as u64 {
                return Err(DecodeError::new(format!("{n} filter part FP rates for {} parts", part_bytes.len())));
            }
            for _ in 0..n {
                let f = f64::from_bits(d.u64_le()?);
                if !(0.0..=1.0).contains(&f) {
                    return Err(DecodeError::new(format!("filter part FP rate {f} out of range")));
                }
                part_fprs.push(f);
            }
        }

        Ok(TableProperties {
            format_version: small("format_version")?,
            entries: num("entries")?,
            deletions: num("deletions")?,
            raw_key_bytes: num("raw_key_bytes")?,
            raw_value_bytes: num("raw_value_bytes")?,
            data_blocks: num("data_blocks")?,
            data_bytes: num("data_bytes")?,
            index_bytes: num("index_bytes")?,
            filter_bytes: num("filter_bytes")?,
            smallest_key: raw("smallest_key")?.clone(),
            largest_key: raw("largest_key")?.clone(),
            smallest_seq: num("smallest_seq")?,
            largest_seq: num("largest_seq")?,
            filter: FilterDescriptor {
                kind: text("filter.kind")?,
                spec: text("filter.spec")?,
                digests: num("filter.digests")?,
                part_bytes,
                part_fprs,
            },
            block_size: num("block_size")?,
            restart_interval: num("restart_interval")?,
            compression: u8::try_from(small("compression")?)
                .map_err(|_| DecodeError::new("property compression out of range"))?,
            created_unix_secs: num("created_unix_secs")?,
            creator: text("creator")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_round_trip_and_missing_ones_are_reported() {
        let p = TableProperties {
            format_version: 1,
            entries: 12345,
            deletions: 17,
            raw_key_bytes: 1 << 40,
            smallest_key: b"a\x00\x01".to_vec(),
            largest_key: b"zz".to_vec(),
            largest_seq: u64::MAX >> 8,
            filter: FilterDescriptor::new(&FilterSpec::Bloom { bits_per_key: 10.0 }, 999, vec![100, 200]),
            creator: "shamba test".into(),
            ..Default::default()
        };
        assert_eq!(p.filter.kind, "Bloom");
        assert_eq!(p.filter.parts(), 2);
        let block = Block::new(p.encode().into()).unwrap();
        assert_eq!(TableProperties::decode(block).unwrap(), p);

        let mut b = BlockBuilder::new(1);
        b.add(b"entries", &[5]);
        let err = TableProperties::decode(Block::new(b.finish().into()).unwrap()).unwrap_err();
        assert!(err.0.contains("missing"), "{err}");
    }
}
