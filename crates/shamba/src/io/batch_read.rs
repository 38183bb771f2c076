//! Reads of a batch in flight together: the data blocks of a `multi_get` round.
//!
//! A lookup's block read waits for the device; a batch's reads are independent, so they can
//! wait together. On files of the real file system they go to the kernel in one `io_uring`
//! submission (a ring per thread, made on first use) and are waited for together: an SSD
//! serves tens of reads in flight in about the time of a few, where one `pread` after another
//! pays each read's whole latency. A read the page cache holds gains nothing (the kernel
//! copies it at submission as `pread` would); a read from the device gains its overlap.
//!
//! Every other file (the in-memory and fault-injecting storages, a user's own [`Storage`]),
//! every read the ring cannot take or finish whole, and every thread where no ring can be
//! made (a kernel without `io_uring`, or a sandbox that forbids it) reads with
//! [`RandomRead::read_at`], one after another: same bytes, same errors, only slower.
//!
//! [`Storage`]: super::Storage

use super::RandomRead;
use crate::error::Result;
use io_uring::{opcode, types, IoUring};
use std::cell::RefCell;
use std::os::fd::RawFd;
use std::sync::Arc;

/// How a batch may reach a file without a call per read: its open descriptor, and whether
/// it was opened with `O_DIRECT` (offsets, lengths and buffers then aligned to 4 KiB).
/// Only the engine's own file storages give one
/// ([`RandomRead::batch_target`]).
#[derive(Debug, Clone, Copy)]
pub struct BatchTarget {
    fd: RawFd,
    direct: bool,
}

impl BatchTarget {
    /// The target of a file open for reading as `fd`, which must stay open while the
    /// `RandomRead` that returns it lives.
    pub(super) fn new(fd: RawFd, direct: bool) -> Self {
        BatchTarget { fd, direct }
    }
}

/// Alignment `O_DIRECT` asks of offsets, lengths and buffers (the logical block size of
/// common devices is 512 or 4096 bytes; 4096 satisfies both).
pub(super) const DIRECT_ALIGN: u64 = 4096;

/// Entries of each thread's ring: reads in flight at once (a larger batch goes in chunks).
const RING_DEPTH: u32 = 64;

/// One read of a batch: `len` bytes of `file` at `offset`, its bytes or its error once
/// [`read_batch`] returns.
pub(crate) struct BatchRead {
    file: Arc<dyn RandomRead>,
    offset: u64,
    len: usize,
    result: Option<Result<Vec<u8>>>,
}

impl BatchRead {
    /// A read of `len` bytes at `offset` (within the file: the caller checked).
    pub(crate) fn new(file: Arc<dyn RandomRead>, offset: u64, len: usize) -> Self {
        BatchRead { file, offset, len, result: None }
    }

    /// The bytes read, or the read's error.
    pub(crate) fn take(&mut self) -> Result<Vec<u8>> {
        self.result.take().unwrap_or_else(|| self.read_alone())
    }

    /// Read with `read_at`, one call.
    fn read_alone(&self) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; self.len];
        self.file.read_at(self.offset, &mut buf)?;
        Ok(buf)
    }
}

/// A read submitted to the ring: the aligned window it reads into, and where the asked
/// bytes sit in it.
struct InFlight {
    /// Index of the read in the batch.
    read: usize,
    /// The buffer the kernel writes, over-allocated so an aligned window fits inside.
    scratch: Vec<u8>,
    /// Start of the window in `scratch` (aligned for `O_DIRECT`).
    window: usize,
    /// Bytes the window asks for.
    span: usize,
    /// Offset of the asked bytes within the window.
    skip: usize,
}

thread_local! {
    /// Reads this thread's ring returned whole (for tests: that the ring was used).
    static RING_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// This thread's ring: made on first use; `Err(())` once making one failed, so a
    /// thread without `io_uring` asks once.
    static RING: RefCell<Option<std::result::Result<IoUring, ()>>> = const { RefCell::new(None) };
}

/// Fill every read of `reads`: those with a [`BatchTarget`] in flight together through
/// this thread's ring, the rest (and any the ring leaves short) with `read_at`.
pub(crate) fn read_batch(reads: &mut [BatchRead]) {
    let ringable: Vec<usize> = (0..reads.len()).filter(|&i| reads[i].file.batch_target().is_some()).collect();
    if ringable.len() > 1 {
        RING.with(|ring| {
            let mut ring = ring.borrow_mut();
            let slot = ring.get_or_insert_with(|| IoUring::new(RING_DEPTH).map_err(|_| ()));
            if let Ok(ring) = slot {
                for chunk in ringable.chunks(RING_DEPTH as usize) {
                    if !submit_and_wait(ring, reads, chunk) {
                        // Not used again on this thread.
                        *slot = Err(());
                        break;
                    }
                }
            }
        });
    }
    for read in reads.iter_mut().filter(|r| r.result.is_none()) {
        read.result = Some(read.read_alone());
    }
}

/// Submit the reads `chunk` names and wait for all of them; a read that comes back whole
/// gets its bytes, any other is left for `read_at`. Returns false when the ring failed:
/// every read it did not finish falls back, so a broken ring costs speed, never a result.
fn submit_and_wait(ring: &mut IoUring, reads: &mut [BatchRead], chunk: &[usize]) -> bool {
    let mut flights: Vec<InFlight> = Vec::with_capacity(chunk.len());
    for &i in chunk {
        let Some(target) = reads[i].file.batch_target() else { continue };
        let read = &reads[i];
        let (start, span, align) = if target.direct {
            let start = read.offset - read.offset % DIRECT_ALIGN;
            let end = (read.offset + read.len as u64).div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
            (start, (end - start) as usize, DIRECT_ALIGN as usize)
        } else {
            (read.offset, read.len, 1)
        };
        let Ok(len) = u32::try_from(span) else { continue };
        let scratch = vec![0u8; span + align];
        let window = scratch.as_ptr().align_offset(align);
        let skip = (read.offset - start) as usize;
        let entry = opcode::Read::new(types::Fd(target.fd), scratch.as_ptr().wrapping_add(window).cast_mut(), len)
            .offset(start)
            .build()
            .user_data(flights.len() as u64);
        // SAFETY: the entry points the kernel at `span` bytes of `scratch` from `window`
        // (inside it: `scratch` has `span + align` bytes and `window < align`), and at a
        // descriptor its `RandomRead` keeps open (`reads[i].file` lives through this call).
        // `scratch` moves into `flights` below, which moves its pointer, not its heap
        // buffer, and is not touched, resized or dropped until the kernel has completed
        // every entry submitted: either all completions are reaped below, or, if the ring
        // fails while entries may be in flight, the buffers are leaked, never freed.
        // Tested by `batch_reads_match_single_reads` (buffered and O_DIRECT).
        if unsafe { ring.submission().push(&entry) }.is_err() {
            break;
        }
        flights.push(InFlight { read: i, scratch, window, span, skip });
    }
    let mut pending = flights.len();
    let mut done: Vec<Option<i32>> = vec![None; flights.len()];
    while pending > 0 {
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            // A signal woke the wait (a profiler's, a Python handler's): wait again.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => {
                // Entries may still be in flight: their buffers must outlive them.
                std::mem::forget(flights);
                return false;
            }
        }
        for completion in ring.completion() {
            let Some(slot) = usize::try_from(completion.user_data()).ok().and_then(|f| done.get_mut(f)) else {
                continue;
            };
            if slot.is_none() {
                *slot = Some(completion.result());
                pending -= 1;
            }
        }
    }
    for (flight, result) in flights.into_iter().zip(done) {
        let read = &mut reads[flight.read];
        let whole = result.and_then(|n| usize::try_from(n).ok()).is_some_and(|n| n >= flight.skip + read.len);
        if whole && flight.span >= flight.skip + read.len {
            let at = flight.window + flight.skip;
            read.result = if at == 0 {
                // A buffered read filled the buffer from its start: it is the result.
                let mut bytes = flight.scratch;
                bytes.truncate(read.len);
                Some(Ok(bytes))
            } else {
                flight.scratch.get(at..at + read.len).map(|bytes| Ok(bytes.to_vec()))
            };
            RING_READS.set(RING_READS.get() + 1);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{DirectReadFsStorage, FsStorage, Storage};

    #[test]
    fn batch_reads_match_single_reads() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let paths: Vec<_> = (0..3).map(|i| dir.path().join(format!("{i}.sst"))).collect();
        for (i, p) in paths.iter().enumerate() {
            let mut w = FsStorage.create(p).unwrap();
            w.append(&data[i * 1000..]).unwrap();
            w.sync().unwrap();
        }
        let storages: [&dyn Storage; 2] = [&FsStorage, &DirectReadFsStorage];
        for storage in storages {
            let Ok(files) = paths.iter().map(|p| storage.open_read(p)).collect::<Result<Vec<_>>>() else {
                continue; // a file system that refuses O_DIRECT (tmpfs): nothing to check
            };
            // Unaligned offsets and lengths, two reads of one block, a read to the last byte,
            // more reads than the ring holds at once, and one past the end of its file.
            let mut asked: Vec<(usize, u64, usize)> = Vec::new();
            for k in 0..150u64 {
                let f = (k % 3) as usize;
                let len = 1 + (k as usize * 977) % 9000;
                let off = (k * 7919 * 13) % (files[f].len() - len as u64);
                asked.push((f, off, len));
            }
            asked.push((0, 4096, 4096));
            asked.push((0, 4096, 4096));
            asked.push((2, files[2].len() - 10, 10));
            asked.push((1, files[1].len() - 10, 11));
            let make =
                || asked.iter().map(|&(f, off, len)| BatchRead::new(files[f].clone(), off, len)).collect::<Vec<_>>();
            let mut batched = make();
            let before = RING_READS.get();
            read_batch(&mut batched);
            let by_ring = RING_READS.get() - before;
            if IoUring::new(2).is_ok() {
                assert!(by_ring >= 150, "{by_ring} reads went through the ring");
            } else {
                eprintln!("no io_uring here: only the fallback is checked");
            }
            // Not batched: `take` reads each with `read_at`.
            let mut alone = make();
            for (i, (b, a)) in batched.iter_mut().zip(alone.iter_mut()).enumerate() {
                let (f, off, len) = asked[i];
                match (b.take(), a.take()) {
                    (Ok(b), Ok(a)) => {
                        let start = f * 1000 + off as usize;
                        assert_eq!(b, a, "read {i}");
                        assert_eq!(b, &data[start..start + len], "read {i}");
                    }
                    (Err(_), Err(_)) => assert_eq!(i, asked.len() - 1, "only the read past the end fails"),
                    (b, a) => panic!("read {i}: batch {:?} alone {:?}", b.map(|v| v.len()), a.map(|v| v.len())),
                }
            }
        }
    }
}
