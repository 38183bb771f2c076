//! An open SST file as raw bytes: the one place where table bytes are read from storage.
//!
//! [`TableFile::read_raw`] pays the emulated device cost, reads, and counts the read by
//! block kind, so every block read of every table is charged and counted exactly once.
//! Block reads check the handle against the file before allocating, then the trailer.
//! Inside a cache-only read (`read_tier.rs`) every read here is refused before it starts.
//! A database's tables reach their files through its bounded cache of open files
//! (`file_handles.rs`), taking the handle per read; a table dump holds its one file open.

#![deny(clippy::indexing_slicing)]

use super::file_handles::FileHandles;
use super::format::{check_trailer, decompress, read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN};
use crate::error::{DecodeError, Error, Result};
use crate::io::{BatchRead, BlockKind, DeviceModel, IoStats, RandomRead};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of one SST, with the counters its reads are charged to.
pub(crate) struct TableFile {
    path: PathBuf,
    source: Source,
    len: u64,
    io: Arc<IoStats>,
    device: DeviceModel,
}

/// Where a table's reads find its open file.
enum Source {
    /// One file held open for the table's life (a dump, the table tests).
    Fixed(Arc<dyn RandomRead>),
    /// The database's bounded cache of open files, by table number.
    Cached { handles: Arc<FileHandles>, number: u64 },
}

impl TableFile {
    /// Wrap an open file, held open as long as this lives.
    pub(crate) fn new(path: PathBuf, file: Arc<dyn RandomRead>, io: Arc<IoStats>, device: DeviceModel) -> Self {
        let len = file.len();
        TableFile { path, source: Source::Fixed(file), len, io, device }
    }

    /// Table `number` at `path`, read through `handles` (which opens it now to learn its
    /// length, and again after closing it to make room for others).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be opened.
    pub(crate) fn cached(
        path: PathBuf,
        number: u64,
        handles: Arc<FileHandles>,
        io: Arc<IoStats>,
        device: DeviceModel,
    ) -> Result<Self> {
        let len = handles.get(number, &path)?.len();
        Ok(TableFile { path, source: Source::Cached { handles, number }, len, io, device })
    }

    /// The open file, for one read.
    fn handle(&self) -> Result<Arc<dyn RandomRead>> {
        match &self.source {
            Source::Fixed(file) => Ok(file.clone()),
            Source::Cached { handles, number } => handles.get(*number, &self.path),
        }
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// A corruption error in this file.
    pub(crate) fn corruption(&self, offset: u64, reason: impl Into<String>) -> Error {
        Error::corruption(&self.path, Some(offset), reason)
    }

    /// Read `len` bytes at `offset` from the device: charge, read, count.
    fn read_raw(&self, offset: u64, len: usize, kind: BlockKind) -> Result<Vec<u8>> {
        crate::read_tier::check("a table read")?;
        let end = offset.checked_add(len as u64).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(self.corruption(offset, format!("read of {len} bytes runs past the end of the file")));
        }
        self.device.charge();
        let mut buf = vec![0u8; len];
        self.handle()?.read_at(offset, &mut buf)?;
        self.io.record(kind, len as u64);
        Ok(buf)
    }

    /// A read of the block at `handle` for a batch ([`crate::io::read_batch`]): checked
    /// against the file and charged to the device now, counted when it is finished
    /// ([`TableFile::finish_batch_read`]). The emulated device charges each read in full,
    /// as if the batch's reads did not overlap: only real devices show the overlap.
    pub(crate) fn batch_read(&self, handle: BlockHandle, kind: BlockKind) -> Result<BatchRead> {
        crate::read_tier::check("a block read")?;
        let len = self.block_len(handle, kind)?;
        let file = self.handle()?;
        self.device.charge();
        Ok(BatchRead::new(file, handle.offset, len, BLOCK_TRAILER_LEN))
    }

    /// Count a batch's read of the block at `handle`, check its trailer and decompress it.
    pub(crate) fn finish_batch_read(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        read: &mut BatchRead,
        verify: bool,
    ) -> Result<Arc<[u8]>> {
        let bytes = read.take()?;
        self.io.record(kind, (bytes.head.len() + bytes.tail.len()) as u64);
        self.decode_split(handle, kind, bytes.head, &bytes.tail, verify)
    }

    /// Read and check the footer.
    pub(crate) fn read_footer(&self) -> Result<Footer> {
        let Some(at) = self.len.checked_sub(FOOTER_LEN as u64) else {
            return Err(self.corruption(0, format!("file of {} bytes is too short for a footer", self.len)));
        };
        let bytes = self.read_raw(at, FOOTER_LEN, BlockKind::Other)?;
        Footer::decode(&bytes).map_err(|e| e.in_file(&self.path, Some(at)))
    }

    /// Read one block, check its trailer, and decompress it. The handle must lie before the
    /// footer: anything else is corruption, detected before a byte is allocated.
    ///
    /// The stored bytes are read into the buffer the block cache will keep and the trailer
    /// apart ([`RandomRead::read_split_at`]): a block stored raw is never copied.
    pub(crate) fn read_block(&self, handle: BlockHandle, kind: BlockKind, verify: bool) -> Result<Arc<[u8]>> {
        crate::read_tier::check("a block read")?;
        let len = self.block_len(handle, kind)?;
        let stored_len = len - BLOCK_TRAILER_LEN;
        self.device.charge();
        // One allocation, written in place (a `Vec` turned into an `Arc` is copied).
        let mut stored: Arc<[u8]> = std::iter::repeat_n(0u8, stored_len).collect();
        let mut trailer = [0u8; BLOCK_TRAILER_LEN];
        let file = self.handle()?;
        let buf = Arc::get_mut(&mut stored).ok_or_else(|| self.corruption(handle.offset, "block buffer shared"))?;
        file.read_split_at(handle.offset, buf, &mut trailer)?;
        self.io.record(kind, len as u64);
        self.decode_split(handle, kind, stored, &trailer, verify)
    }

    /// Read blocks that lie one after another in the file (each starting where the one
    /// before it and its trailer end) with one read: one device charge, counted as one read
    /// of all their bytes. Each block's trailer is checked (its checksum when `verify`) and
    /// the block decompressed as [`TableFile::read_block`] does. `None`, with nothing read,
    /// when they do not lie together (the caller reads them one at a time).
    pub(crate) fn read_blocks_together(
        &self,
        handles: &[BlockHandle],
        kind: BlockKind,
        verify: bool,
    ) -> Result<Option<Vec<Arc<[u8]>>>> {
        let Some(first) = handles.first() else { return Ok(Some(Vec::new())) };
        let mut at_of = Vec::with_capacity(handles.len());
        let mut end = first.offset;
        for h in handles {
            if h.offset != end {
                return Ok(None);
            }
            let len = self.block_len(*h, kind)?;
            at_of.push((h.offset - first.offset, len));
            end += len as u64;
        }
        let span = usize::try_from(end - first.offset).map_err(|_| {
            self.corruption(first.offset, format!("{} blocks span {} bytes", kind.name(), end - first.offset))
        })?;
        let bytes = self.read_raw(first.offset, span, kind)?;
        handles
            .iter()
            .zip(at_of)
            .map(|(h, (at, len))| {
                let physical = usize::try_from(at)
                    .ok()
                    .and_then(|at| bytes.get(at..at.checked_add(len)?))
                    .ok_or_else(|| self.corruption(h.offset, format!("{} block outside its read", kind.name())))?;
                self.decode_block(*h, kind, physical.to_vec(), verify)
            })
            .collect::<Result<_>>()
            .map(Some)
    }

    /// Check a block read apart from its trailer, and decompress it: a block stored raw is
    /// `stored` itself.
    fn decode_split(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        stored: Arc<[u8]>,
        trailer: &[u8],
        verify: bool,
    ) -> Result<Arc<[u8]>> {
        let decoded = <&[u8; BLOCK_TRAILER_LEN]>::try_from(trailer)
            .map_err(|_| DecodeError::new(format!("trailer of {} bytes", trailer.len())))
            .and_then(|trailer| check_trailer(&stored, trailer, verify))
            .and_then(|ty| decompress(ty, &stored));
        match decoded.map_err(|e| self.corruption(handle.offset, format!("{} block: {e}", kind.name())))? {
            None => Ok(stored),
            Some(raw) => Ok(raw.into()),
        }
    }

    /// [`TableFile::read_block`] through a read-ahead window: served from `ahead` when it
    /// holds the block, else from one read of `ahead.size` bytes (at least the block, at
    /// most up to the footer) starting at the block. The block is counted as one read of
    /// its size either way; the device is charged once per window.
    pub(crate) fn read_block_ahead(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        verify: bool,
        ahead: &mut ReadAhead,
    ) -> Result<Arc<[u8]>> {
        crate::read_tier::check("a block read")?;
        let len = self.block_len(handle, kind)?;
        if ahead.get(handle.offset, len).is_none() {
            let body_end = self.len.saturating_sub(FOOTER_LEN as u64);
            let room = usize::try_from(body_end - handle.offset).unwrap_or(usize::MAX);
            let want = ahead.size.max(len).min(room);
            self.device.charge();
            ahead.bytes.resize(want, 0);
            ahead.offset = handle.offset;
            if let Err(e) = self.handle().and_then(|file| file.read_at(handle.offset, &mut ahead.bytes)) {
                ahead.bytes.clear();
                return Err(e);
            }
        }
        let physical = ahead.get(handle.offset, len).map(<[u8]>::to_vec).unwrap_or_default();
        self.io.record(kind, len as u64);
        self.decode_block(handle, kind, physical, verify)
    }

    /// Bytes of the block at `handle` with its trailer, checked to lie before the footer.
    fn block_len(&self, handle: BlockHandle, kind: BlockKind) -> Result<usize> {
        let body_end = self.len.saturating_sub(FOOTER_LEN as u64);
        let len = handle
            .end_with_trailer()
            .filter(|&end| end <= body_end)
            .and_then(|end| usize::try_from(end - handle.offset).ok());
        let Some(len) = len else {
            return Err(self.corruption(
                handle.offset,
                format!(
                    "{} block handle ({}, {}) outside the file's {body_end} block bytes",
                    kind.name(),
                    handle.offset,
                    handle.size
                ),
            ));
        };
        Ok(len)
    }

    /// Check a block's trailer and decompress it.
    fn decode_block(&self, handle: BlockHandle, kind: BlockKind, physical: Vec<u8>, verify: bool) -> Result<Arc<[u8]>> {
        let contents = read_block(physical, verify)
            .map_err(|e| self.corruption(handle.offset, format!("{} block: {e}", kind.name())))?;
        Ok(contents.into())
    }
}

/// A window of file bytes read ahead by a sequential reader (see
/// [`TableFile::read_block_ahead`]).
#[derive(Debug, Default)]
pub(crate) struct ReadAhead {
    /// Bytes to read at once.
    size: usize,
    /// File offset of `bytes[0]`.
    offset: u64,
    bytes: Vec<u8>,
}

impl ReadAhead {
    /// An empty window that reads `size` bytes at once.
    pub(crate) fn new(size: usize) -> Self {
        ReadAhead { size, offset: 0, bytes: Vec::new() }
    }

    /// The `len` bytes at file offset `offset`, if the window holds all of them.
    fn get(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let start = usize::try_from(offset.checked_sub(self.offset)?).ok()?;
        self.bytes.get(start..start.checked_add(len)?)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::table::format::write_block;

    struct MemFile(Vec<u8>);
    impl RandomRead for MemFile {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            let src = self
                .0
                .get(offset as usize..offset as usize + buf.len())
                .ok_or_else(|| Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "short")))?;
            buf.copy_from_slice(src);
            Ok(())
        }
        fn len(&self) -> u64 {
            self.0.len() as u64
        }
    }

    #[test]
    fn reads_are_counted_by_kind_and_bad_handles_are_corruption() {
        let mut bytes = Vec::new();
        let (size, _) = write_block(b"hello", crate::options::Compression::None, &mut bytes);
        bytes.extend_from_slice(&[0u8; FOOTER_LEN]);
        let io = Arc::new(IoStats::default());
        let f = TableFile::new("t.sst".into(), Arc::new(MemFile(bytes)), io.clone(), DeviceModel::None);
        let good = BlockHandle { offset: 0, size };
        assert_eq!(&*f.read_block(good, BlockKind::Index, true).unwrap(), b"hello");
        assert_eq!(io.snapshot().reads_of(BlockKind::Index), 1);
        assert_eq!(io.snapshot().bytes_of(BlockKind::Index), size + 5);

        for bad in [
            BlockHandle { offset: 0, size: size - 1 },
            BlockHandle { offset: 1, size },
            BlockHandle { offset: u64::MAX - 2, size: 9 },
            BlockHandle { offset: 0, size: 1 << 60 },
        ] {
            let err = f.read_block(bad, BlockKind::Data, true).unwrap_err();
            assert!(err.is_corruption(), "{err}");
            assert!(err.to_string().contains("t.sst"), "{err}");
        }
        assert_eq!(io.snapshot().reads_of(BlockKind::Data), 1, "only the in-range bad handle was read");
        assert!(f.read_footer().unwrap_err().is_corruption());
    }

    /// Counts the reads that reach the file.
    struct CountingFile(MemFile, std::sync::atomic::AtomicUsize);
    impl RandomRead for CountingFile {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0.read_at(offset, buf)
        }
        fn len(&self) -> u64 {
            self.0.len()
        }
    }

    #[test]
    fn a_read_ahead_window_serves_following_blocks_without_reading_and_stops_at_the_footer() {
        let mut bytes = Vec::new();
        let mut handles = Vec::new();
        for i in 0..10u8 {
            let offset = bytes.len() as u64;
            let (size, _) = write_block(&[i; 100], crate::options::Compression::None, &mut bytes);
            handles.push(BlockHandle { offset, size });
        }
        bytes.extend_from_slice(&[0u8; FOOTER_LEN]);
        let file = Arc::new(CountingFile(MemFile(bytes), Default::default()));
        let io = Arc::new(IoStats::default());
        let f = TableFile::new("t.sst".into(), file.clone(), io.clone(), DeviceModel::None);
        let mut ahead = ReadAhead::new(4 * 105);
        for (i, &h) in handles.iter().enumerate() {
            assert_eq!(&*f.read_block_ahead(h, BlockKind::Data, true, &mut ahead).unwrap(), &[i as u8; 100][..]);
        }
        // 10 blocks of 105 bytes through windows of 4: three reads, none past the blocks.
        assert_eq!(file.1.load(std::sync::atomic::Ordering::Relaxed), 3);
        assert_eq!(io.snapshot().reads_of(BlockKind::Data), 10, "each block counted as a read");
        assert_eq!(io.snapshot().bytes_of(BlockKind::Data), 10 * 105);
        // Going back re-reads from there; a handle into the middle of a block fails its
        // trailer check.
        assert_eq!(&*f.read_block_ahead(handles[1], BlockKind::Data, true, &mut ahead).unwrap(), &[1u8; 100][..]);
        assert_eq!(file.1.load(std::sync::atomic::Ordering::Relaxed), 4);
        let bad = BlockHandle { offset: 5, size: 100 };
        assert!(f.read_block_ahead(bad, BlockKind::Data, true, &mut ahead).unwrap_err().is_corruption());
    }
    #[test]
    fn blocks_that_lie_together_are_one_read_and_each_is_checked() {
        let mut bytes = Vec::new();
        let mut handles = Vec::new();
        for i in 0..5u8 {
            let offset = bytes.len() as u64;
            let (size, _) = write_block(&vec![i; 50 + i as usize], crate::options::Compression::None, &mut bytes);
            handles.push(BlockHandle { offset, size });
        }
        bytes.extend_from_slice(&[0u8; FOOTER_LEN]);
        let file = Arc::new(CountingFile(MemFile(bytes.clone()), Default::default()));
        let io = Arc::new(IoStats::default());
        let f = TableFile::new("t.sst".into(), file.clone(), io.clone(), DeviceModel::None);
        let blocks = f.read_blocks_together(&handles[1..], BlockKind::Filter, true).unwrap().unwrap();
        assert_eq!(blocks.len(), 4);
        for (i, b) in blocks.iter().enumerate() {
            assert_eq!(&**b, &vec![i as u8 + 1; 51 + i][..], "block {}", i + 1);
        }
        let span: u64 = handles[1..].iter().map(|h| h.size + 5).sum();
        assert_eq!(file.1.load(std::sync::atomic::Ordering::Relaxed), 1, "one read reached the file");
        assert_eq!(io.snapshot().reads_of(BlockKind::Filter), 1, "counted as one read");
        assert_eq!(io.snapshot().bytes_of(BlockKind::Filter), span);
        assert!(f.read_blocks_together(&[], BlockKind::Filter, true).unwrap().unwrap().is_empty());

        // Blocks with a gap between them are left to the caller, before anything is read.
        assert!(f.read_blocks_together(&[handles[0], handles[2]], BlockKind::Filter, true).unwrap().is_none());
        assert_eq!(file.1.load(std::sync::atomic::Ordering::Relaxed), 1);

        // A damaged byte in the third block: corruption at that block's offset.
        let mut damaged = bytes;
        damaged[handles[2].offset as usize + 3] ^= 0x40;
        let f = TableFile::new("t.sst".into(), Arc::new(MemFile(damaged)), io, DeviceModel::None);
        let err = f.read_blocks_together(&handles, BlockKind::Filter, true).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        let text = err.to_string();
        assert!(text.contains("t.sst") && text.contains(&handles[2].offset.to_string()), "{text}");
    }
}
