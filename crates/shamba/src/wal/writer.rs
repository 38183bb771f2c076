//! Appending records to a log file.

#![deny(clippy::indexing_slicing)]

use super::format::{FragmentType, Header, BLOCK_SIZE, HEADER_SIZE};
use crate::error::Result;
use crate::io::SequentialWrite;

/// Appends records to a log file, splitting them into fragments that never cross a
/// 32 KiB block boundary.
pub(crate) struct LogWriter {
    file: Box<dyn SequentialWrite>,
    /// Bytes already used in the current block.
    block_offset: usize,
}

impl LogWriter {
    /// Start a log in a new, empty file. (If the file already holds bytes, writing
    /// continues at its block position, so the format stays aligned.)
    pub(crate) fn new(file: Box<dyn SequentialWrite>) -> Self {
        // The remainder is below BLOCK_SIZE, so it fits in usize on every platform.
        let block_offset = (file.len() % BLOCK_SIZE as u64) as usize;
        LogWriter { file, block_offset }
    }

    /// Append one record (it may be split into fragments across blocks). The bytes may
    /// stay buffered until [`flush`](Self::flush) or [`sync`](Self::sync).
    pub(crate) fn add_record(&mut self, record: &[u8]) -> Result<()> {
        let mut rest = record;
        let mut first = true;
        loop {
            let left_in_block = BLOCK_SIZE - self.block_offset;
            if left_in_block < HEADER_SIZE {
                // Too little room for a header: zero-fill the trailer and start a block.
                const ZEROS: [u8; HEADER_SIZE] = [0; HEADER_SIZE];
                let (zeros, _) = ZEROS.split_at(left_in_block.min(HEADER_SIZE));
                self.file.append(zeros)?;
                self.block_offset = 0;
                continue;
            }
            let room = left_in_block - HEADER_SIZE;
            let (chunk, tail) = rest.split_at(rest.len().min(room));
            let last = tail.is_empty();
            let kind = match (first, last) {
                (true, true) => FragmentType::Full,
                (true, false) => FragmentType::First,
                (false, false) => FragmentType::Middle,
                (false, true) => FragmentType::Last,
            };
            self.file.append(&Header::encode(kind, chunk))?;
            self.file.append(chunk)?;
            self.block_offset += HEADER_SIZE + chunk.len();
            rest = tail;
            first = false;
            if last {
                return Ok(());
            }
        }
    }

    /// Hand buffered bytes to the OS (survives a process crash).
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Make everything appended durable (survives a power loss).
    pub(crate) fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// Bytes written so far, headers and block trailers included.
    pub(crate) fn len(&self) -> u64 {
        self.file.len()
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// An in-memory file whose bytes the test can read while the writer owns it.
    #[derive(Clone, Default)]
    pub(crate) struct MemFile(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl SequentialWrite for MemFile {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            self.0.lock().unwrap().extend_from_slice(data);
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn len(&self) -> u64 {
            self.0.lock().unwrap().len() as u64
        }
    }

    /// The bytes of a log holding `records`.
    pub(crate) fn log_of(records: &[Vec<u8>]) -> Vec<u8> {
        let file = MemFile::default();
        let mut w = LogWriter::new(Box::new(file.clone()));
        for r in records {
            w.add_record(r).unwrap();
        }
        let bytes = file.0.lock().unwrap().clone();
        assert_eq!(w.len(), bytes.len() as u64);
        bytes
    }

    #[test]
    fn fragments_never_cross_a_block_boundary() {
        let bytes = log_of(&[vec![7u8; BLOCK_SIZE * 2 + 100], vec![], vec![1u8; 10]]);
        // Walk the fragments: each header must start and end inside one block.
        let mut pos = 0;
        let mut kinds = Vec::new();
        while pos < bytes.len() {
            let in_block = BLOCK_SIZE - pos % BLOCK_SIZE;
            if in_block < HEADER_SIZE {
                assert!(bytes[pos..pos + in_block].iter().all(|&b| b == 0));
                pos += in_block;
                continue;
            }
            let h = Header::parse(&bytes[pos..]).unwrap();
            assert!(HEADER_SIZE + h.len <= in_block);
            kinds.push(h.kind);
            pos += HEADER_SIZE + h.len;
        }
        assert_eq!(kinds, vec![2, 3, 4, 1, 1]);
    }

    #[test]
    fn a_block_with_exactly_a_header_of_room_gets_an_empty_fragment() {
        // Fill the first block up to 7 bytes before its end.
        let first = vec![0xAB; BLOCK_SIZE - 2 * HEADER_SIZE];
        let bytes = log_of(&[first, b"xyz".to_vec()]);
        let h = Header::parse(&bytes[BLOCK_SIZE - HEADER_SIZE..]).unwrap();
        assert_eq!((h.len, h.kind), (0, FragmentType::First as u8));
        assert_eq!(bytes.len(), BLOCK_SIZE + HEADER_SIZE + 3);
    }
}
