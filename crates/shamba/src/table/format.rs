//! The physical envelope of an SST: block handles, the block trailer (compression type and
//! checksum) and the fixed-size footer. Byte layouts are in `docs/format.md`.

#![deny(clippy::indexing_slicing)]

use super::coding::{put_varint, Decoder};
use crate::error::DecodeError;
use crate::options::Compression;

/// Magic number at the very end of every SST ("SHAMBSST" read as a little-endian u64).
pub(super) const MAGIC: u64 = u64::from_le_bytes(*b"SHAMBSST");

/// Version 1: one index block and one set of filter parts for the whole table. Tables
/// without partitions are still written in this version, byte for byte as before.
pub(crate) const FORMAT_VERSION_FLAT: u32 = 1;

/// Version 2: index and filter split into key-range partitions behind a top-level index
/// (`partition.rs`); written when `partition_index_and_filters` is set.
pub(crate) const FORMAT_VERSION_PARTITIONED: u32 = 2;

/// The newest format version this code writes; it reads every version up to it.
pub(super) const FORMAT_VERSION: u32 = FORMAT_VERSION_PARTITIONED;

/// Bytes after every block's contents: 1 compression-type byte and a 4-byte crc32c.
pub(crate) const BLOCK_TRAILER_LEN: usize = 5;

/// Bytes of the footer: four fixed-width handles, version, checksum, magic.
pub(crate) const FOOTER_LEN: usize = 4 * 16 + 4 + 4 + 8;

/// Largest uncompressed size a compressed block may declare. Blocks hold whole values
/// (64 MiB by default), so this only guards against absurd allocations from bad bytes.
const MAX_UNCOMPRESSED_BLOCK: usize = 1 << 30;

/// Where a block is: its offset in the file and the size of its contents (the trailer
/// follows and is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Bytes of contents, excluding the trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Append as two varints (offset, size): the form used inside index and meta blocks.
    pub(crate) fn encode_to(&self, buf: &mut Vec<u8>) {
        put_varint(buf, self.offset);
        put_varint(buf, self.size);
    }

    /// Decode the varint form.
    pub(crate) fn decode_from(d: &mut Decoder<'_>) -> Result<BlockHandle, DecodeError> {
        Ok(BlockHandle { offset: d.varint()?, size: d.varint()? })
    }

    /// Decode a value that is exactly one handle in varint form.
    pub(crate) fn decode_exact(bytes: &[u8]) -> Result<BlockHandle, DecodeError> {
        let mut d = Decoder::new(bytes);
        let h = BlockHandle::decode_from(&mut d)?;
        if !d.is_empty() {
            return Err(DecodeError::new("trailing bytes after a block handle"));
        }
        Ok(h)
    }

    /// The offset just past the block's trailer, if it does not overflow.
    pub(crate) fn end_with_trailer(&self) -> Option<u64> {
        self.offset.checked_add(self.size)?.checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The fixed-size record at the end of every SST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    /// The metaindex block: names of optional meta blocks (empty in version 1).
    pub metaindex: BlockHandle,
    /// The index block (fence pointers to data blocks); in version 2 the top-level index
    /// (one entry per partition).
    pub index: BlockHandle,
    /// The properties block.
    pub properties: BlockHandle,
    /// The filter index block: handles of the filter parts (empty in version 2, where the
    /// top-level index lists each partition's parts).
    pub filter_index: BlockHandle,
    /// Format version of the file.
    pub format_version: u32,
}

impl Footer {
    /// The footer's bytes.
    pub(crate) fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut buf = Vec::with_capacity(FOOTER_LEN);
        for h in [self.metaindex, self.index, self.properties, self.filter_index] {
            buf.extend_from_slice(&h.offset.to_le_bytes());
            buf.extend_from_slice(&h.size.to_le_bytes());
        }
        buf.extend_from_slice(&self.format_version.to_le_bytes());
        let crc = mask_crc(crc32c::crc32c(&buf));
        buf.extend_from_slice(&crc.to_le_bytes());
        buf.extend_from_slice(&MAGIC.to_le_bytes());
        let mut out = [0u8; FOOTER_LEN];
        out.copy_from_slice(&buf);
        out
    }

    /// Decode and check a footer: length, magic, checksum and version, in that order, so
    /// that "not an SST" and "a damaged SST" get different messages.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Footer, DecodeError> {
        if bytes.len() != FOOTER_LEN {
            return Err(DecodeError::new(format!("footer is {} bytes, expected {FOOTER_LEN}", bytes.len())));
        }
        let mut d = Decoder::new(bytes);
        let mut handles = [BlockHandle::default(); 4];
        for h in &mut handles {
            *h = BlockHandle { offset: d.u64_le()?, size: d.u64_le()? };
        }
        let format_version = d.u32_le()?;
        let covered = d.consumed();
        let stored_crc = d.u32_le()?;
        let magic = d.u64_le()?;
        if magic != MAGIC {
            return Err(DecodeError::new(format!("bad magic {magic:#018x}: not a Shamba SST")));
        }
        let actual = mask_crc(crc32c::crc32c(covered));
        if stored_crc != actual {
            return Err(DecodeError::new(format!(
                "footer checksum mismatch: stored {stored_crc:#010x}, computed {actual:#010x}"
            )));
        }
        if !(FORMAT_VERSION_FLAT..=FORMAT_VERSION).contains(&format_version) {
            return Err(DecodeError::new(format!("unsupported format version {format_version}")));
        }
        let [metaindex, index, properties, filter_index] = handles;
        Ok(Footer { metaindex, index, properties, filter_index, format_version })
    }
}

/// How a block's contents are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum CompressionType {
    /// Raw contents.
    None = 0,
    /// Varint uncompressed length, then an LZ4 block (lz4_flex's block format).
    Lz4 = 1,
    /// Varint uncompressed length, then one zstd frame (which declares the same length).
    Zstd = 2,
}

impl CompressionType {
    /// The name of a stored type byte (as the properties record it), for dumps.
    pub(crate) fn name_of(byte: u8) -> &'static str {
        match byte {
            b if b == CompressionType::None as u8 => "none",
            b if b == CompressionType::Lz4 as u8 => "lz4",
            b if b == CompressionType::Zstd as u8 => "zstd",
            _ => "unknown",
        }
    }

    /// The type blocks written with `compression` get when compressing pays.
    pub(crate) fn of(compression: Compression) -> CompressionType {
        match compression {
            Compression::None => CompressionType::None,
            Compression::Lz4 => CompressionType::Lz4,
            Compression::Zstd { .. } => CompressionType::Zstd,
        }
    }
}

/// Most raw bytes one stored zstd byte can stand for. A zstd block of at most 128 KiB can
/// be a single repeated byte stored in 4 bytes, so no frame expands by more; a declared
/// length past that is a lie, caught before anything is allocated for it.
const ZSTD_MAX_EXPANSION: usize = 1 << 15;

/// Mask a crc32c before storing it: a crc over bytes that themselves embed crcs is weak, so
/// stored checksums are rotated and offset (LevelDB's mask).
pub(crate) fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Undo [`mask_crc`].
#[cfg(test)]
fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

/// Append a block's physical form (contents, type byte, masked crc32c of both) to `out`,
/// compressing when asked and when it saves at least 1/8. Returns the handle size (bytes
/// of stored contents) and the type used.
pub(crate) fn write_block(raw: &[u8], compression: Compression, out: &mut Vec<u8>) -> (u64, CompressionType) {
    let mut compressed = Vec::new();
    let (contents, ty) = match compression {
        Compression::Lz4 => {
            compressed.reserve(raw.len() / 2 + 8);
            put_varint(&mut compressed, raw.len() as u64);
            compressed.extend_from_slice(&lz4_flex::block::compress(raw));
            if compressed.len() <= raw.len() - raw.len() / 8 {
                (&compressed[..], CompressionType::Lz4)
            } else {
                (raw, CompressionType::None)
            }
        }
        Compression::Zstd { level } => {
            put_varint(&mut compressed, raw.len() as u64);
            match with_zstd_compressor(level, |c| c.compress(raw)) {
                Ok(frame) if compressed.len() + frame.len() <= raw.len() - raw.len() / 8 => {
                    compressed.extend_from_slice(&frame);
                    (&compressed[..], CompressionType::Zstd)
                }
                // A block zstd cannot compress (or a context it cannot make) is stored raw:
                // compression is an optimisation, never a reason to fail a write.
                _ => (raw, CompressionType::None),
            }
        }
        Compression::None => (raw, CompressionType::None),
    };
    out.extend_from_slice(contents);
    out.push(ty as u8);
    let crc = mask_crc(crc32c::crc32c_append(crc32c::crc32c(contents), &[ty as u8]));
    out.extend_from_slice(&crc.to_le_bytes());
    (contents.len() as u64, ty)
}

/// Check and strip the trailer of a physical block (contents + trailer) and decompress it.
/// With `verify` false the checksum is not computed (the type byte is still checked).
pub(crate) fn read_block(mut physical: Vec<u8>, verify: bool) -> Result<Vec<u8>, DecodeError> {
    let Some((contents, trailer)) = physical.split_last_chunk::<BLOCK_TRAILER_LEN>() else {
        return Err(DecodeError::new("block shorter than its trailer"));
    };
    let stored = check_trailer(contents, trailer, verify)?;
    physical.truncate(contents.len());
    Ok(decompress(stored, &physical)?.unwrap_or(physical))
}

/// Check a block's trailer (its checksum when `verify`) against the block's stored bytes,
/// read apart from it; the trailer's compression type.
pub(crate) fn check_trailer(
    contents: &[u8],
    &[ty, ref crc @ ..]: &[u8; BLOCK_TRAILER_LEN],
    verify: bool,
) -> Result<u8, DecodeError> {
    if verify {
        let stored = u32::from_le_bytes(*crc);
        let actual = mask_crc(crc32c::crc32c_append(crc32c::crc32c(contents), &[ty]));
        if stored != actual {
            return Err(DecodeError::new(format!(
                "block checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
            )));
        }
    }
    Ok(ty)
}

/// A block's raw bytes from its stored ones, by the trailer's compression type: `None`
/// when it was stored raw (the stored bytes are the block).
pub(crate) fn decompress(ty: u8, stored: &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
    match ty {
        t if t == CompressionType::None as u8 => Ok(None),
        t if t == CompressionType::Lz4 as u8 => decompress_lz4(stored).map(Some),
        t if t == CompressionType::Zstd as u8 => decompress_zstd(stored).map(Some),
        t => Err(DecodeError::new(format!("unknown compression type {t}"))),
    }
}

fn decompress_lz4(stored: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut d = Decoder::new(stored);
    let raw_len = d.varint()?;
    let input = d.rest();
    // LZ4 cannot expand more than 255x; checking that before allocating keeps a bad length
    // from asking for gigabytes.
    let bound = input.len().saturating_mul(255).saturating_add(16).min(MAX_UNCOMPRESSED_BLOCK);
    let raw_len = usize::try_from(raw_len).ok().filter(|&n| n <= bound).ok_or_else(|| {
        DecodeError::new(format!("compressed block of {} bytes declares {raw_len} raw bytes", input.len()))
    })?;
    let mut out = vec![0u8; raw_len];
    let n = lz4_flex::block::decompress_into(input, &mut out).map_err(|e| DecodeError::new(format!("lz4: {e}")))?;
    if n != raw_len {
        return Err(DecodeError::new(format!("lz4 block decoded to {n} bytes, declared {raw_len}")));
    }
    Ok(out)
}

fn decompress_zstd(stored: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut d = Decoder::new(stored);
    let raw_len = d.varint()?;
    let input = d.rest();
    let bound = input.len().saturating_mul(ZSTD_MAX_EXPANSION).min(MAX_UNCOMPRESSED_BLOCK);
    let raw_len = usize::try_from(raw_len)
        .ok()
        .filter(|&n| n <= bound)
        .ok_or_else(|| DecodeError::new(format!("zstd block of {} bytes declares {raw_len} raw bytes", input.len())))?;
    // The frame's own header names its length too (the writer knows it); a frame that
    // disagrees is damaged, whatever the stream would decode to.
    match zstd::zstd_safe::get_frame_content_size(input) {
        Ok(Some(n)) if n == raw_len as u64 => {}
        found => return Err(DecodeError::new(format!("zstd frame declares {found:?} raw bytes, the block {raw_len}"))),
    }
    let out =
        with_zstd_decompressor(|d| d.decompress(input, raw_len)).map_err(|e| DecodeError::new(format!("zstd: {e}")))?;
    if out.len() != raw_len {
        return Err(DecodeError::new(format!("zstd block decoded to {} bytes, declared {raw_len}", out.len())));
    }
    Ok(out)
}

thread_local! {
    /// Each thread's zstd contexts, made on first use: a context costs allocations that a
    /// 4 KiB block should not pay each time.
    static ZSTD_COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    static ZSTD_DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

fn with_zstd_compressor<T>(
    level: i32,
    f: impl FnOnce(&mut zstd::bulk::Compressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    ZSTD_COMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(std::io::Error::other)?;
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        match slot.as_mut() {
            Some((_, c)) => f(c),
            None => Err(std::io::Error::other("no zstd compressor")),
        }
    })
}

fn with_zstd_decompressor<T>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    ZSTD_DECOMPRESSOR.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(std::io::Error::other)?;
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        match slot.as_mut() {
            Some(d) => f(d),
            None => Err(std::io::Error::other("no zstd decompressor")),
        }
    })
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trips_and_every_flipped_byte_is_caught() {
        let f = Footer {
            metaindex: BlockHandle { offset: 1, size: 2 },
            index: BlockHandle { offset: 3, size: 4 },
            properties: BlockHandle { offset: 5, size: 6 },
            filter_index: BlockHandle { offset: 7, size: u64::MAX },
            format_version: FORMAT_VERSION,
        };
        let bytes = f.encode();
        assert_eq!(Footer::decode(&bytes).unwrap(), f);
        for i in 0..FOOTER_LEN {
            let mut bad = bytes;
            bad[i] ^= 0x20;
            assert!(Footer::decode(&bad).is_err(), "flip at {i} not detected");
        }
        assert!(Footer::decode(&bytes[1..]).is_err());
    }

    #[test]
    fn crc_mask_round_trips_and_changes_the_value() {
        for crc in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(crc)), crc);
            assert_ne!(mask_crc(crc), crc);
        }
    }

    #[test]
    fn compressible_blocks_are_compressed_and_others_kept_raw() {
        let compressible = vec![b'a'; 4000];
        let mut out = Vec::new();
        let (size, ty) = write_block(&compressible, Compression::Lz4, &mut out);
        assert_eq!(ty, CompressionType::Lz4);
        assert!(size < 200);
        assert_eq!(out.len() as u64, size + BLOCK_TRAILER_LEN as u64);
        assert_eq!(read_block(out, true).unwrap(), compressible);

        // Pseudo-random bytes do not compress by 1/8.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let mut out = Vec::new();
        let (size, ty) = write_block(&noise, Compression::Lz4, &mut out);
        assert_eq!((size, ty), (4000, CompressionType::None));
        assert_eq!(read_block(out, true).unwrap(), noise);
    }

    #[test]
    fn zstd_blocks_round_trip_smaller_than_lz4() {
        let text: Vec<u8> =
            (0..4000u32).flat_map(|i| format!("key{:06} value of {} ", i, i % 7).into_bytes()).collect();
        let (mut lz4, mut zstd) = (Vec::new(), Vec::new());
        let (lz4_size, _) = write_block(&text, Compression::Lz4, &mut lz4);
        let (zstd_size, ty) = write_block(&text, Compression::zstd(), &mut zstd);
        assert_eq!(ty, CompressionType::Zstd);
        assert!(zstd_size < lz4_size, "zstd {zstd_size} bytes, lz4 {lz4_size}");
        assert_eq!(read_block(zstd, true).unwrap(), text);
        // Levels change the bytes, never what they decode to; the empty block too.
        for level in [1, 19, -5] {
            let mut out = Vec::new();
            write_block(&text, Compression::Zstd { level }, &mut out);
            assert_eq!(read_block(out, true).unwrap(), text, "level {level}");
        }
        let mut empty = Vec::new();
        assert_eq!(write_block(&[], Compression::zstd(), &mut empty).1, CompressionType::None);
        assert_eq!(read_block(empty, true).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn damaged_zstd_blocks_are_errors_not_panics_nor_huge_allocations() {
        let raw: Vec<u8> = (0..3000u32).map(|i| (i % 13) as u8).collect();
        let mut out = Vec::new();
        assert_eq!(write_block(&raw, Compression::zstd(), &mut out).1, CompressionType::Zstd);
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 1;
            assert!(read_block(bad, true).is_err(), "flip at {i} passed the checksum");
        }
        // Unverified, damage inside the frame must decode to an error or to the declared
        // length (never a panic), whichever byte it hits.
        for i in 0..out.len() - BLOCK_TRAILER_LEN {
            let mut bad = out.clone();
            bad[i] = bad[i].wrapping_add(0x55);
            if let Ok(got) = read_block(bad, false) {
                assert_eq!(got.len(), raw.len(), "flip at {i}");
            }
        }
        // A block declaring a terabyte, or more than its frame says, is refused before any
        // allocation of that size.
        let frame = zstd::bulk::compress(&raw, 3).unwrap();
        for declared in [1u64 << 40, raw.len() as u64 + 1, (frame.len() * ZSTD_MAX_EXPANSION) as u64 + 1] {
            let mut lie = Vec::new();
            put_varint(&mut lie, declared);
            lie.extend_from_slice(&frame);
            lie.push(CompressionType::Zstd as u8);
            lie.extend_from_slice(&[0; 4]);
            let err = read_block(lie, false).unwrap_err();
            assert!(err.to_string().contains("raw bytes"), "{declared}: {err}");
        }
        // A frame that is not zstd at all.
        let mut junk = Vec::new();
        put_varint(&mut junk, 100);
        junk.extend_from_slice(&[7; 40]);
        junk.push(CompressionType::Zstd as u8);
        junk.extend_from_slice(&[0; 4]);
        assert!(read_block(junk, false).is_err());
    }

    #[test]
    fn damaged_blocks_are_errors_not_panics() {
        let mut out = Vec::new();
        write_block(&[b'x'; 1000], Compression::Lz4, &mut out);
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 1;
            assert!(read_block(bad, true).is_err(), "flip at {i} passed the checksum");
        }
        // Without verification, damage inside the compressed stream must still not panic,
        // and a lie about the raw length must not allocate it.
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] = bad[i].wrapping_add(0x55);
            let _ = read_block(bad, false);
        }
        let mut lie = Vec::new();
        put_varint(&mut lie, 1 << 40);
        lie.extend_from_slice(&[0; 8]);
        lie.push(CompressionType::Lz4 as u8);
        lie.extend_from_slice(&[0; 4]);
        assert!(read_block(lie, false).is_err());
        assert!(read_block(vec![1, 2, 3], true).is_err());
    }
}
