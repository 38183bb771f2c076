//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz, libFuzzer) and for the test
//! that replays their corpora on stable (`tests/fuzz_corpora.rs`).
//!
//! One function per target, each taking the fuzzer's bytes and driving one decoder all
//! the way: a block is decoded and every entry walked both ways and searched, a filter
//! part parsed and probed, a log replayed and its records decoded, a table opened, read
//! and scanned, a database opened with one damaged file, read, written and closed. None
//! returns anything: a decoder may refuse any input with an error, and must never panic,
//! abort, allocate without bound or hang, which is what the fuzzer watches for.
//!
//! Inputs that must get past a checksum to reach a decoder name it in a leading mode byte
//! (each function says how); the targets that splice a block into a table, or damage a
//! database, start from a small database built once per process in memory
//! ([`seeds`] cuts the first corpora from its files). Not a stable API.

mod base;
mod filters;
mod logs;
mod mem_storage;
mod open_db;
mod seeds;
mod sst;

use crate::filter::PartKind;

/// A fuzz target: its name (the directory of its corpus, `fuzz/corpus/<name>/`) and its
/// entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// [`data_block`].
    DataBlock,
    /// [`index_block`].
    IndexBlock,
    /// [`sst_footer`].
    SstFooter,
    /// [`sst_properties`].
    SstProperties,
    /// [`filter_blocked_bloom`].
    FilterBlockedBloom,
    /// [`filter_standard_bloom`].
    FilterStandardBloom,
    /// [`filter_ribbon`].
    FilterRibbon,
    /// [`wal`].
    Wal,
    /// [`write_batch`].
    WriteBatch,
    /// [`version_edit`].
    VersionEdit,
    /// [`manifest`].
    Manifest,
    /// [`open_db`].
    OpenDb,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 12] = [
        Target::DataBlock,
        Target::IndexBlock,
        Target::SstFooter,
        Target::SstProperties,
        Target::FilterBlockedBloom,
        Target::FilterStandardBloom,
        Target::FilterRibbon,
        Target::Wal,
        Target::WriteBatch,
        Target::VersionEdit,
        Target::Manifest,
        Target::OpenDb,
    ];

    /// The target's name: its corpus directory and its cargo-fuzz binary.
    pub fn name(self) -> &'static str {
        match self {
            Target::DataBlock => "data_block",
            Target::IndexBlock => "index_block",
            Target::SstFooter => "sst_footer",
            Target::SstProperties => "sst_properties",
            Target::FilterBlockedBloom => "filter_blocked_bloom",
            Target::FilterStandardBloom => "filter_standard_bloom",
            Target::FilterRibbon => "filter_ribbon",
            Target::Wal => "wal",
            Target::WriteBatch => "write_batch",
            Target::VersionEdit => "version_edit",
            Target::Manifest => "manifest",
            Target::OpenDb => "open_db",
        }
    }

    /// Feed `input` to the target's entry point.
    pub fn run(self, input: &[u8]) {
        match self {
            Target::DataBlock => data_block(input),
            Target::IndexBlock => index_block(input),
            Target::SstFooter => sst_footer(input),
            Target::SstProperties => sst_properties(input),
            Target::FilterBlockedBloom => filter_blocked_bloom(input),
            Target::FilterStandardBloom => filter_standard_bloom(input),
            Target::FilterRibbon => filter_ribbon(input),
            Target::Wal => wal(input),
            Target::WriteBatch => write_batch(input),
            Target::VersionEdit => version_edit(input),
            Target::Manifest => manifest(input),
            Target::OpenDb => open_db(input),
        }
    }
}

/// A data block: mode byte (bit 0: the bytes are the block's stored form, trailer and
/// maybe LZ4 included, decompressed unchecked), then the bytes; every entry is walked
/// both ways and sought.
pub fn data_block(input: &[u8]) {
    sst::data_block(input);
}

/// An index block: mode byte (bits 0-1: which base table; bit 2: index and filters
/// cached, not pinned; bits 3-4: the footer slot it replaces: 0-1 the index, or a
/// partitioned table's top-level index, 2 the metaindex, 3 the filter index), then the
/// block's contents; decoded as every block of handles, then spliced into the table,
/// which is opened, read and scanned.
pub fn index_block(input: &[u8]) {
    sst::index_block(input);
}

/// A table footer: mode byte (bit 0: make its checksum right; bits 1-3: which base table;
/// bit 4: index and filters cached), then the footer; decoded, then put at the end of the
/// table, which is opened, read and scanned.
pub fn sst_footer(input: &[u8]) {
    sst::sst_footer(input);
}

/// A properties block: mode byte as for [`index_block`] (bits 0-2), then its contents;
/// decoded, then spliced into the table, which is opened, read and scanned.
pub fn sst_properties(input: &[u8]) {
    sst::sst_properties(input);
}

/// A blocked Bloom filter part (the kind byte is forced; role, count and parameters are
/// the fuzzer's), parsed and probed.
pub fn filter_blocked_bloom(input: &[u8]) {
    filters::filter_part(PartKind::BlockedBloom, input);
}

/// A standard Bloom filter part (whole, module or unit), parsed and probed.
pub fn filter_standard_bloom(input: &[u8]) {
    filters::filter_part(PartKind::StandardBloom, input);
}

/// A Ribbon filter part (whole or some columns of a modular Ribbon), parsed and probed.
pub fn filter_ribbon(input: &[u8]) {
    filters::filter_part(PartKind::Ribbon, input);
}

/// A WAL file: mode byte (bit 0: make every fragment's checksum right; bit 1: the next
/// byte is a gap, and a filler record ends that many bytes before the first block's end,
/// so the rest straddles a block boundary), then the log; replayed in both recovery
/// modes, every record decoded as a write batch.
pub fn wal(input: &[u8]) {
    logs::wal(input);
}

/// One WAL record, decoded as a write batch and inserted into a memtable as replay does.
pub fn write_batch(input: &[u8]) {
    logs::write_batch(input);
}

/// One manifest record, decoded as a version edit.
pub fn version_edit(input: &[u8]) {
    logs::version_edit(input);
}

/// A manifest file: mode byte (bit 0: make every fragment's checksum right), then the log
/// of edits; recovered from a CURRENT naming it, every edit applied.
pub fn manifest(input: &[u8]) {
    logs::manifest(input);
}

/// The base database with one file damaged: file byte, mode byte, `u32` offset, bytes
/// (the layout is in `lab/fuzz/open_db.rs`); opened, read, scanned, written and closed.
pub fn open_db(input: &[u8]) {
    open_db::open_db(input);
}

/// Seeds for every target, cut from the files of the base database: (target, input).
pub fn seeds() -> Vec<(Target, Vec<u8>)> {
    seeds::seeds()
}
