//! Builds the contents of one block: prefix-compressed entries and restart points.
//!
//! Layout (see `docs/format.md`):
//!
//! ```text
//! entry*   : shared varint32 | unshared varint32 | value_len varint32
//!            | key[shared..] (unshared bytes) | value (value_len bytes)
//! restarts : u32 LE offset of each restart entry, ascending
//! count    : u32 LE number of restarts (at least 1)
//! ```
//!
//! Every `restart_interval`-th entry is a restart point: it stores its whole key
//! (`shared = 0`), so a reader can binary-search the restart array and decode forward from
//! any restart without the entries before it.

use super::coding::put_varint;

/// Accumulates sorted entries into one block.
#[derive(Debug)]
pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    entries: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// A builder with a restart point every `restart_interval` entries (at least 1).
    pub(crate) fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            entries: 0,
            last_key: Vec::new(),
        }
    }

    /// Append an entry. Keys must arrive in the block's order (the caller checks); the
    /// block must stay under 4 GiB (the caller bounds key and value sizes).
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else {
            self.last_key.iter().zip(key).take_while(|(a, b)| a == b).count()
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// Bytes the block will have when finished now.
    pub(crate) fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Whether no entry was added since the last finish.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The finished contents; the builder is reset for the next block.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts.clear();
        self.restarts.push(0);
        self.since_restart = 0;
        self.entries = 0;
        self.last_key.clear();
        out
    }
}
