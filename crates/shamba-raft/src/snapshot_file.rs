//! The snapshot file: streamed out and in, record by record, never whole in memory.
//!
//! ```text
//! "SHAMBASN"  magic, 8 bytes
//! 1           format version, 1 byte
//! u32 LE      length of the meta, then the meta (bincode: last log id, membership, id)
//! records:    1, u32 LE length, keyspace name   -- the pairs that follow are in it
//!             2, u32 LE length, key, u32 LE length, value
//! 0           the end, then u32 LE: CRC-32C of every byte before it, the end tag included
//! ```

use crate::error::corrupt;
use crate::types::{Node, NodeId};
use openraft::SnapshotMeta;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"SHAMBASN";
const VERSION: u8 = 1;
const TAG_END: u8 = 0;
const TAG_KEYSPACE: u8 = 1;
const TAG_PAIR: u8 = 2;
/// No field of a file this store wrote is longer (a value is at most 64 MiB by default):
/// a longer length is damage, refused before it is allocated.
const MAX_FIELD: u32 = 1 << 30;
const BUFFER: usize = 1 << 20;

/// The meta of a snapshot of this group.
pub(crate) type Meta = SnapshotMeta<NodeId, Node>;

/// Writes a snapshot file record by record, its checksum as it goes.
pub(crate) struct SnapshotWriter {
    out: BufWriter<File>,
    crc: u32,
}

impl SnapshotWriter {
    /// Start the file `file` (created empty by the caller) with its header.
    pub(crate) fn new(file: File, meta: &Meta) -> shamba::Result<SnapshotWriter> {
        let meta = crate::store::encode("snapshot meta", meta)?;
        let mut w = SnapshotWriter { out: BufWriter::with_capacity(BUFFER, file), crc: 0 };
        w.put(MAGIC)?;
        w.put(&[VERSION])?;
        w.field(&meta)?;
        Ok(w)
    }

    fn put(&mut self, bytes: &[u8]) -> shamba::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.out.write_all(bytes)?;
        Ok(())
    }

    fn field(&mut self, bytes: &[u8]) -> shamba::Result<()> {
        let len = u32::try_from(bytes.len())
            .ok()
            .filter(|&l| l <= MAX_FIELD)
            .ok_or_else(|| shamba::Error::InvalidArgument(format!("a snapshot field of {} bytes", bytes.len())))?;
        self.put(&len.to_le_bytes())?;
        self.put(bytes)
    }

    /// The pairs written next are in keyspace `name`.
    pub(crate) fn keyspace(&mut self, name: &str) -> shamba::Result<()> {
        self.put(&[TAG_KEYSPACE])?;
        self.field(name.as_bytes())
    }

    pub(crate) fn pair(&mut self, key: &[u8], value: &[u8]) -> shamba::Result<()> {
        self.put(&[TAG_PAIR])?;
        self.field(key)?;
        self.field(value)
    }

    /// End the file and make it durable.
    pub(crate) fn finish(mut self) -> shamba::Result<()> {
        self.put(&[TAG_END])?;
        let crc = self.crc;
        self.out.write_all(&crc.to_le_bytes())?;
        let file = self.out.into_inner().map_err(|e| shamba::Error::Io(e.into_error()))?;
        file.sync_all()?;
        Ok(())
    }
}

/// One record of a snapshot file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Record {
    Keyspace(String),
    Pair(Vec<u8>, Vec<u8>),
}

/// Reads a snapshot file record by record; the last `next` checks the checksum.
pub(crate) struct SnapshotReader {
    input: BufReader<File>,
    crc: u32,
    path: PathBuf,
    meta: Meta,
    done: bool,
}

impl SnapshotReader {
    /// Read the header of `file` (positioned at its start); `path` names it in errors.
    pub(crate) fn new(file: File, path: &Path) -> shamba::Result<SnapshotReader> {
        let mut r = SnapshotReader {
            input: BufReader::with_capacity(BUFFER, file),
            crc: 0,
            path: path.to_path_buf(),
            meta: Meta::default(),
            done: false,
        };
        let mut magic = [0u8; 8];
        r.take(&mut magic)?;
        if &magic != MAGIC {
            return Err(corrupt(path, "not a snapshot file (bad magic)"));
        }
        let mut version = [0u8; 1];
        r.take(&mut version)?;
        if version[0] != VERSION {
            return Err(corrupt(path, format!("snapshot format {}; this build reads {VERSION}", version[0])));
        }
        let meta = r.field()?;
        r.meta = crate::codec::decode(&meta).map_err(|e| corrupt(path, format!("snapshot meta: {e}")))?;
        Ok(r)
    }

    /// The meta the header holds.
    #[cfg(test)]
    pub(crate) fn meta(&self) -> &Meta {
        &self.meta
    }

    fn take(&mut self, buf: &mut [u8]) -> shamba::Result<()> {
        self.input.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => corrupt(&self.path, "the snapshot file ends early"),
            _ => shamba::Error::Io(e),
        })?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        Ok(())
    }

    fn field(&mut self) -> shamba::Result<Vec<u8>> {
        let mut len = [0u8; 4];
        self.take(&mut len)?;
        let len = u32::from_le_bytes(len);
        if len > MAX_FIELD {
            return Err(corrupt(&self.path, format!("a snapshot field of {len} bytes")));
        }
        let mut bytes = vec![0u8; len as usize];
        self.take(&mut bytes)?;
        Ok(bytes)
    }

    /// The next record, or `None` at the end once the checksum matched.
    pub(crate) fn next_record(&mut self) -> shamba::Result<Option<Record>> {
        if self.done {
            return Ok(None);
        }
        let mut tag = [0u8; 1];
        self.take(&mut tag)?;
        match tag[0] {
            TAG_KEYSPACE => {
                let name = self.field()?;
                let name = String::from_utf8(name).map_err(|_| corrupt(&self.path, "a keyspace name not in UTF-8"))?;
                Ok(Some(Record::Keyspace(name)))
            }
            TAG_PAIR => {
                let key = self.field()?;
                let value = self.field()?;
                Ok(Some(Record::Pair(key, value)))
            }
            TAG_END => {
                let computed = self.crc;
                let mut stored = [0u8; 4];
                self.take(&mut stored)?;
                if u32::from_le_bytes(stored) != computed {
                    return Err(corrupt(&self.path, "the snapshot's checksum does not match"));
                }
                let mut extra = [0u8; 1];
                if self.input.read(&mut extra)? != 0 {
                    return Err(corrupt(&self.path, "bytes after the snapshot's end"));
                }
                self.done = true;
                Ok(None)
            }
            t => Err(corrupt(&self.path, format!("unknown snapshot record tag {t}"))),
        }
    }

    /// Read to the end: whether the whole file is sound (its checksum matches).
    pub(crate) fn check(mut self) -> shamba::Result<Meta> {
        while self.next_record()?.is_some() {}
        Ok(self.meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::{LogId, StoredMembership};

    fn meta() -> Meta {
        Meta {
            last_log_id: Some(LogId::new(openraft::CommittedLeaderId::new(3, 1), 42)),
            last_membership: StoredMembership::default(),
            snapshot_id: "3-42-x".into(),
        }
    }

    fn write(path: &Path) {
        let mut w = SnapshotWriter::new(File::create(path).unwrap(), &meta()).unwrap();
        w.keyspace("default").unwrap();
        w.pair(b"a", b"1").unwrap();
        w.keyspace("users").unwrap();
        w.pair(b"u1", &[7u8; 300]).unwrap();
        w.finish().unwrap();
    }

    #[test]
    fn records_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.snap");
        write(&path);
        let mut r = SnapshotReader::new(File::open(&path).unwrap(), &path).unwrap();
        assert_eq!(r.meta(), &meta());
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec);
        }
        assert_eq!(
            got,
            vec![
                Record::Keyspace("default".into()),
                Record::Pair(b"a".to_vec(), b"1".to_vec()),
                Record::Keyspace("users".into()),
                Record::Pair(b"u1".to_vec(), vec![7u8; 300]),
            ]
        );
    }

    #[test]
    fn damage_anywhere_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.snap");
        write(&path);
        let good = std::fs::read(&path).unwrap();
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let result = SnapshotReader::new(File::open(&path).unwrap(), &path).and_then(SnapshotReader::check);
            assert!(result.is_err(), "a flipped bit at byte {at} went unnoticed");
        }
        for len in 0..good.len() {
            std::fs::write(&path, &good[..len]).unwrap();
            let result = SnapshotReader::new(File::open(&path).unwrap(), &path).and_then(SnapshotReader::check);
            assert!(result.is_err(), "a file cut at {len} bytes went unnoticed");
        }
    }
}
