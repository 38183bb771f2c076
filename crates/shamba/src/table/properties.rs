//! The properties block: what a table holds and how it was built.
//!
//! Stored as a block of `name -> value` entries in name order (restart interval 1);
//! numbers are varints, keys and strings raw bytes, the filter's part sizes a varint count
//! followed by varints. Readers ignore names they do not know, so later versions can add
//! properties; every name written by version 1 is required, and version 2 (partitioned)
//! adds two required names (`index.partitions`, `index.top_level_bytes`). `filter.role` is
//! optional in both.

#![deny(clippy::indexing_slicing)]

use super::block::{bytewise, Block};
use super::block_builder::BlockBuilder;
use super::coding::{put_varint, Decoder};
use super::format::FORMAT_VERSION_PARTITIONED;
use crate::error::DecodeError;
use crate::filter::{FilterSpec, Role};
use crate::key::SeqNo;
use std::collections::BTreeMap;

/// The filter a table carries, as recorded at build time. Informational: each filter part
/// describes itself (kind, parameters, digest version) in its own header.
///
/// In a partitioned table each partition has its own parts; `part_bytes[i]` sums part `i`
/// over the partitions and `digests` sums their digest counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FilterDescriptor {
    /// Kind of filter (`None`, `Bloom`, ...), the variant name of its [`FilterSpec`].
    pub kind: String,
    /// The full spec the builder was given, in its debug form.
    pub spec: String,
    /// Digests the filter was built over (one per distinct user key).
    pub digests: u64,
    /// Bytes of each part's contents, in probe order (empty: no filter).
    pub part_bytes: Vec<u64>,
    /// What the parts are to the filter (whole, modules, units); `None` without a filter.
    /// Stored as `filter.role`; tables written without it get it from `kind`.
    pub role: Option<Role>,
    /// Analytic FP rate of each part probed alone, in probe order (the filter manager's
    /// `f_sm`; in a partitioned table, of the first partition's parts; empty for tables
    /// written before it was recorded).
    pub part_fprs: Vec<f64>,
}

impl FilterDescriptor {
    /// Describe `spec` built over `digests` keys into parts of `part_bytes` bytes with
    /// `role` (`None`: derived from the kind).
    pub(crate) fn new(spec: &FilterSpec, digests: u64, part_bytes: Vec<u64>, role: Option<Role>) -> Self {
        let spec = format!("{spec:?}");
        let kind: String = spec.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let role = role.or_else(|| role_of_kind(&kind, part_bytes.len()));
        FilterDescriptor { kind, spec, digests, part_bytes, role, part_fprs: Vec::new() }
    }

    /// Record each serialized part's analytic FP rate.
    pub(crate) fn with_fprs_of(mut self, parts: &[Vec<u8>]) -> Self {
        self.part_fprs = parts
            .iter()
            .map(|p| crate::filter::FilterPart::parse_any_version(p).map_or(1.0, |f| f.expected_fpr()))
            .collect();
        self
    }

    /// Number of filter parts.
    pub(crate) fn parts(&self) -> usize {
        self.part_bytes.len()
    }
}

/// The role a filter of `kind` gives its parts, for tables that did not record it.
fn role_of_kind(kind: &str, parts: usize) -> Option<Role> {
    match kind {
        _ if parts == 0 => None,
        "ModularBloom" | "ModularRibbon" => Some(Role::Module),
        "Elastic" => Some(Role::Unit),
        _ => Some(Role::Whole),
    }
}

/// A role's property value and back.
fn role_from_name(name: &[u8]) -> Option<Role> {
    [Role::Whole, Role::Module, Role::Unit].into_iter().find(|r| r.name().as_bytes() == name)
}

impl super::TableSummary {
    /// The summary of a table with these properties and `file_size` bytes.
    pub(crate) fn of(p: &TableProperties, file_size: u64) -> super::TableSummary {
        super::TableSummary {
            file_size,
            entries: p.entries,
            smallest: p.smallest_key.clone(),
            largest: p.largest_key.clone(),
            smallest_seq: p.smallest_seq,
            largest_seq: p.largest_seq,
            filter_bytes: p.filter_bytes,
            index_bytes: p.index_bytes,
            data_bytes: p.data_bytes,
        }
    }
}

/// Everything the properties block records.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TableProperties {
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
    /// Compression asked for data blocks (a `CompressionType` byte).
    pub compression: u8,
    /// Creation time, seconds since the Unix epoch.
    pub created_unix_secs: u64,
    /// What wrote the table (`shamba <version>`).
    pub creator: String,
    /// Key-range partitions of index and filter (0: not partitioned, format version 1).
    pub index_partitions: u64,
    /// Bytes of the top-level index's contents (0 when not partitioned); included in
    /// `index_bytes`.
    pub top_level_index_bytes: u64,
}

/// Every property name a reader knows; a block's other names are skipped.
const KNOWN: [&str; 26] = [
    "block_size",
    "compression",
    "created_unix_secs",
    "creator",
    "data_blocks",
    "data_bytes",
    "deletions",
    "entries",
    "filter.digests",
    "filter.kind",
    "filter.part_bytes",
    "filter.part_fprs",
    "filter.role",
    "filter.spec",
    "filter_bytes",
    "format_version",
    "index.partitions",
    "index.top_level_bytes",
    "index_bytes",
    "largest_key",
    "largest_seq",
    "raw_key_bytes",
    "raw_value_bytes",
    "restart_interval",
    "smallest_key",
    "smallest_seq",
];

/// The value of each known name in one properties block (the last, if a damaged block
/// repeats a name), read in one pass. A map keyed by owned copies of the names was about
/// half of what opening a table cost under the fuzzers' instrumentation, which traces
/// every allocation and comparison; here a name costs a comparison of lengths per known
/// name and one of bytes per known name of the same length.
struct Found {
    values: [Option<Vec<u8>>; KNOWN.len()],
}

impl Found {
    fn read(block: Block) -> Result<Found, DecodeError> {
        let mut values: [Option<Vec<u8>>; KNOWN.len()] = std::array::from_fn(|_| None);
        let mut c = block.cursor(bytewise);
        c.seek_to_first()?;
        while c.valid() {
            if let Some(value) = known_slot(c.key()).and_then(|i| values.get_mut(i)) {
                *value = Some(c.value().to_vec());
            }
            c.next()?;
        }
        Ok(Found { values })
    }

    /// The value of `name`, if the block has it.
    fn get(&self, name: &str) -> Option<&Vec<u8>> {
        known_slot(name.as_bytes()).and_then(|i| self.values.get(i)?.as_ref())
    }
}

/// Where `name` is in [`KNOWN`].
fn known_slot(name: &[u8]) -> Option<usize> {
    KNOWN.iter().position(|known| known.as_bytes() == name)
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
        let mut map: BTreeMap<&str, Vec<u8>> = BTreeMap::from([
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
        if let Some(role) = self.filter.role {
            map.insert("filter.role", role.name().as_bytes().to_vec());
        }
        if !self.filter.part_fprs.is_empty() {
            let mut fprs = num(self.filter.part_fprs.len() as u64);
            for &f in &self.filter.part_fprs {
                fprs.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            map.insert("filter.part_fprs", fprs);
        }
        if self.format_version >= FORMAT_VERSION_PARTITIONED {
            map.insert("index.partitions", num(self.index_partitions));
            map.insert("index.top_level_bytes", num(self.top_level_index_bytes));
        }
        let mut b = BlockBuilder::new(1);
        for (name, value) in &map {
            b.add(name.as_bytes(), value);
        }
        b.finish()
    }

    /// Decode a properties block.
    pub(crate) fn decode(block: Block) -> Result<TableProperties, DecodeError> {
        let found = Found::read(block)?;
        let raw = |name: &str| found.get(name).ok_or_else(|| DecodeError::new(format!("property {name} missing")));
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
        if !d.is_empty() {
            return Err(DecodeError::new("property filter.part_bytes: trailing bytes"));
        }
        let mut part_fprs = Vec::new();
        if let Some(bytes) = found.get("filter.part_fprs") {
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
        let role = match found.get("filter.role") {
            None => None,
            Some(name) => {
                Some(role_from_name(name).ok_or_else(|| DecodeError::new("property filter.role: unknown role"))?)
            }
        };
        let format_version = small("format_version")?;
        let partitioned = format_version >= FORMAT_VERSION_PARTITIONED;
        let (index_partitions, top_level_index_bytes) = match partitioned {
            true => (num("index.partitions")?, num("index.top_level_bytes")?),
            false => (0, 0),
        };
        let kind = text("filter.kind")?;
        let role = role.or_else(|| role_of_kind(&kind, part_bytes.len()));

        Ok(TableProperties {
            format_version,
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
                kind,
                spec: text("filter.spec")?,
                digests: num("filter.digests")?,
                part_bytes,
                role,
                part_fprs,
            },
            block_size: num("block_size")?,
            restart_interval: num("restart_interval")?,
            compression: u8::try_from(small("compression")?)
                .map_err(|_| DecodeError::new("property compression out of range"))?,
            created_unix_secs: num("created_unix_secs")?,
            creator: text("creator")?,
            index_partitions,
            top_level_index_bytes,
        })
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A name the encoder writes but the decoder does not know would be skipped, and a
    /// required one reported missing from a sound table.
    #[test]
    fn every_name_written_is_a_known_one_and_unknown_ones_are_skipped() {
        let filter = FilterDescriptor {
            part_fprs: vec![0.01, 0.02],
            ..FilterDescriptor::new(&FilterSpec::Bloom { bits_per_key: 10.0 }, 9, vec![10, 20], None)
        };
        let p = TableProperties {
            format_version: FORMAT_VERSION_PARTITIONED,
            index_partitions: 3,
            filter,
            ..Default::default()
        };
        let mut c = Block::new(p.encode().into()).unwrap().cursor(bytewise);
        c.seek_to_first().unwrap();
        let mut written = 0;
        let mut with_unknown = BlockBuilder::new(1);
        while c.valid() {
            let name = std::str::from_utf8(c.key()).unwrap().to_string();
            assert!(KNOWN.contains(&name.as_str()), "{name} is written but not known");
            written += 1;
            if name == "entries" {
                with_unknown.add(b"entries.extra", b"a later version's");
            }
            with_unknown.add(c.key(), c.value());
            c.next().unwrap();
        }
        assert_eq!(written, KNOWN.len(), "every known name is written when the table has all parts");
        assert_eq!(TableProperties::decode(Block::new(with_unknown.finish().into()).unwrap()).unwrap(), p);
    }

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
            filter: FilterDescriptor::new(&FilterSpec::Bloom { bits_per_key: 10.0 }, 999, vec![100, 200], None),
            creator: "shamba test".into(),
            ..Default::default()
        };
        assert_eq!(p.filter.kind, "Bloom");
        assert_eq!(p.filter.parts(), 2);
        assert_eq!(p.filter.role, Some(Role::Whole), "derived from the kind");
        let block = Block::new(p.encode().into()).unwrap();
        assert_eq!(TableProperties::decode(block).unwrap(), p);

        let v2 = TableProperties {
            format_version: FORMAT_VERSION_PARTITIONED,
            index_partitions: 31,
            top_level_index_bytes: 900,
            filter: FilterDescriptor::new(&FilterSpec::None, 0, vec![7, 8, 9], Some(Role::Unit)),
            ..p.clone()
        };
        assert_eq!(TableProperties::decode(Block::new(v2.encode().into()).unwrap()).unwrap(), v2);
        let v2_as_v1 = TableProperties { format_version: 1, ..v2.clone() };
        let mut encoded = v2_as_v1.encode();
        encoded = {
            // A version-2 block without the partition properties is rejected.
            let decoded = TableProperties::decode(Block::new(encoded.clone().into()).unwrap()).unwrap();
            assert_eq!((decoded.index_partitions, decoded.filter.role), (0, Some(Role::Unit)));
            let mut b = BlockBuilder::new(1);
            let mut c = Block::new(encoded.into()).unwrap().cursor(bytewise);
            c.seek_to_first().unwrap();
            while c.valid() {
                let value = if c.key() == b"format_version" { vec![2] } else { c.value().to_vec() };
                b.add(c.key(), &value);
                c.next().unwrap();
            }
            b.finish()
        };
        let err = TableProperties::decode(Block::new(encoded.into()).unwrap()).unwrap_err();
        assert!(err.0.contains("index.partitions"), "{err}");

        let mut b = BlockBuilder::new(1);
        b.add(b"entries", &[5]);
        let err = TableProperties::decode(Block::new(b.finish().into()).unwrap()).unwrap_err();
        assert!(err.0.contains("missing"), "{err}");
    }
}
