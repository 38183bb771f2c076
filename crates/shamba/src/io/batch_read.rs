//! Reads of a batch in flight together: the data blocks of a `multi_get` round.
//!
//! A lookup's block read waits for the device; a batch's reads are independent, so they can
//! wait together. On files of the real file system they go to the kernel in one `io_uring`
//! submission (a ring per thread, made on first use) and are waited for together: an SSD
//! serves tens of reads in flight in about the time of a few, where one `pread` after another
//! pays each read's whole latency. A read the page cache holds gains nothing (the kernel
//! copies it at submission as `pread` would); a read from the device gains its overlap.
//! Each read lands where it stays: its head (a block's stored bytes) in the `Arc` the block
//! cache keeps, its tail (the trailer) apart, by one `readv` entry on a buffered file; an
//! `O_DIRECT` file reads an aligned window, copied out.
//!
//! Every other file (the in-memory and fault-injecting storages, a user's own [`Storage`]),
//! every read the ring cannot take or finish whole, and every thread where no ring can be
//! made (a kernel without `io_uring`, or a sandbox that forbids it) reads with
//! [`RandomRead::read_split_at`], one after another: same bytes, same errors, only slower.
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

/// One read of a batch: `len` bytes of `file` at `offset`, the last `tail` of them apart,
/// its bytes or its error once [`read_batch`] returns.
pub(crate) struct BatchRead {
    file: Arc<dyn RandomRead>,
    offset: u64,
    len: usize,
    tail: usize,
    result: Option<Result<SplitBytes>>,
}

/// The bytes of a read: the head in the `Arc` that will keep them (a block's stored bytes,
/// for the block cache), the tail (its trailer) apart.
pub(crate) struct SplitBytes {
    pub(crate) head: Arc<[u8]>,
    pub(crate) tail: Vec<u8>,
}

impl SplitBytes {
    /// Zeroed buffers for `len` bytes, the last `tail` of them apart.
    fn zeroed(len: usize, tail: usize) -> Self {
        let head_len = len.saturating_sub(tail);
        // One allocation written in place (a `Vec` turned into an `Arc` is copied).
        SplitBytes { head: std::iter::repeat_n(0u8, head_len).collect(), tail: vec![0u8; len - head_len] }
    }
}

impl BatchRead {
    /// A read of `len` bytes at `offset` (within the file: the caller checked), its last
    /// `tail` bytes into a buffer of their own.
    pub(crate) fn new(file: Arc<dyn RandomRead>, offset: u64, len: usize, tail: usize) -> Self {
        BatchRead { file, offset, len, tail, result: None }
    }

    /// The bytes read, or the read's error.
    pub(crate) fn take(&mut self) -> Result<SplitBytes> {
        self.result.take().unwrap_or_else(|| self.read_alone())
    }

    /// Read with `read_split_at`, one call.
    fn read_alone(&self) -> Result<SplitBytes> {
        let mut bytes = SplitBytes::zeroed(self.len, self.tail);
        let head = Arc::get_mut(&mut bytes.head).ok_or_else(shared_buffer)?;
        self.file.read_split_at(self.offset, head, &mut bytes.tail)?;
        Ok(bytes)
    }
}

/// A fresh buffer found shared: cannot happen (it was made one line before), an error
/// rather than a panic all the same.
fn shared_buffer() -> crate::Error {
    crate::Error::Io(std::io::Error::other("batch read buffer shared"))
}

/// A read submitted to the ring, with the buffers the kernel writes.
struct InFlight {
    /// Index of the read in the batch.
    read: usize,
    buffers: Buffers,
}

/// Where the kernel writes a read's bytes.
enum Buffers {
    /// Straight into the read's head and tail (a buffered file: `readv`, no copy after).
    Split {
        bytes: SplitBytes,
        /// The two buffers as the kernel sees them (boxed: their address must not move).
        #[expect(dead_code, reason = "held, not read: the kernel reads it until the read completes")]
        iov: Box<[libc::iovec; 2]>,
    },
    /// An aligned window in a scratch buffer (`O_DIRECT`), copied out after.
    Aligned {
        /// Over-allocated so an aligned window fits inside.
        scratch: Vec<u8>,
        /// Start of the window in `scratch`.
        window: usize,
        /// Bytes the window asks for.
        span: usize,
        /// Offset of the asked bytes within the window.
        skip: usize,
    },
}

impl Buffers {
    /// Bytes the kernel must return for the read to be whole.
    fn wanted(&self, len: usize) -> usize {
        match self {
            Buffers::Split { .. } => len,
            Buffers::Aligned { skip, .. } => skip + len,
        }
    }

    /// The read's bytes, once the kernel returned them whole.
    fn into_bytes(self, len: usize, tail: usize) -> Option<SplitBytes> {
        match self {
            Buffers::Split { bytes, .. } => Some(bytes),
            Buffers::Aligned { scratch, window, span, skip } => {
                let asked = scratch.get(window + skip..window + skip + len).filter(|_| span >= skip + len)?;
                let mut bytes = SplitBytes::zeroed(len, tail);
                let (head, rest) = asked.split_at(bytes.head.len());
                Arc::get_mut(&mut bytes.head)?.copy_from_slice(head);
                bytes.tail.copy_from_slice(rest);
                Some(bytes)
            }
        }
    }
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
        let user_data = flights.len() as u64;
        let (entry, buffers) = if target.direct {
            let start = read.offset - read.offset % DIRECT_ALIGN;
            let end = (read.offset + read.len as u64).div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
            let span = (end - start) as usize;
            let Ok(len) = u32::try_from(span) else { continue };
            let scratch = vec![0u8; span + DIRECT_ALIGN as usize];
            let window = scratch.as_ptr().align_offset(DIRECT_ALIGN as usize);
            let skip = (read.offset - start) as usize;
            let entry = opcode::Read::new(types::Fd(target.fd), scratch.as_ptr().wrapping_add(window).cast_mut(), len)
                .offset(start)
                .build()
                .user_data(user_data);
            (entry, Buffers::Aligned { scratch, window, span, skip })
        } else {
            let mut bytes = SplitBytes::zeroed(read.len, read.tail);
            let Some(head) = Arc::get_mut(&mut bytes.head) else { continue };
            let iov = Box::new([
                libc::iovec { iov_base: head.as_mut_ptr().cast(), iov_len: head.len() },
                libc::iovec { iov_base: bytes.tail.as_mut_ptr().cast(), iov_len: bytes.tail.len() },
            ]);
            let entry = opcode::Readv::new(types::Fd(target.fd), iov.as_ptr(), 2)
                .offset(read.offset)
                .build()
                .user_data(user_data);
            (entry, Buffers::Split { bytes, iov })
        };
        // SAFETY: the entry points the kernel at buffers owned by `buffers`: an aligned
        // `span`-byte window inside `scratch` (which has `span + DIRECT_ALIGN` bytes, and
        // `window < DIRECT_ALIGN`), or the two iovecs in the boxed array, which describe
        // the heap buffers of the head `Arc` (unique: just made) and the tail `Vec`, each
        // of its own length; and at a descriptor its `RandomRead` keeps open
        // (`reads[i].file` lives through this call). `buffers` moves into `flights` below,
        // which moves its pointers, not the heap buffers or the boxed iovecs, and none of
        // them is touched, resized or dropped until the kernel has completed every entry
        // submitted: either all completions are reaped below, or, if the ring fails while
        // entries may be in flight, the buffers are leaked, never freed. Exercised by
        // `io::batch_read::tests::batch_reads_match_single_reads` (buffered and O_DIRECT).
        if unsafe { ring.submission().push(&entry) }.is_err() {
            break;
        }
        flights.push(InFlight { read: i, buffers });
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
        let whole = result.and_then(|n| usize::try_from(n).ok()).is_some_and(|n| n >= flight.buffers.wanted(read.len));
        if whole {
            if let Some(bytes) = flight.buffers.into_bytes(read.len, read.tail) {
                read.result = Some(Ok(bytes));
                RING_READS.set(RING_READS.get() + 1);
            }
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
            // Each read's last few bytes apart (a block's trailer), none for some.
            let make = || {
                asked
                    .iter()
                    .enumerate()
                    .map(|(i, &(f, off, len))| BatchRead::new(files[f].clone(), off, len, (i % 7).min(len)))
                    .collect::<Vec<_>>()
            };
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
                let whole = |r: Result<SplitBytes>| {
                    r.map(|bytes| {
                        assert_eq!(bytes.tail.len(), (i % 7).min(len), "read {i}: the tail apart");
                        [&bytes.head[..], &bytes.tail[..]].concat()
                    })
                };
                match (whole(b.take()), whole(a.take())) {
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
