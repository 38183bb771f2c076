//! The real file system.

use super::batch_read::DIRECT_ALIGN;
use super::{BatchTarget, DirLock, RandomRead, SequentialWrite, Storage};
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// An I/O error that names the file it happened on.
fn with_path(e: std::io::Error, path: &Path) -> Error {
    Error::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Files on a local file system, read with positional reads (`pread`) through the OS page
/// cache.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsStorage;

/// Like [`FsStorage`], but positional reads bypass the OS page cache (`O_DIRECT`), so a
/// block the engine's cache misses costs a real device read: the setting for measuring
/// real devices rather than emulating them. Writes and whole-file reads (WAL and manifest
/// replay) stay buffered.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectReadFsStorage;

struct FsRandom {
    file: File,
    len: u64,
    direct: bool,
}

impl FsRandom {
    /// An `O_DIRECT` read: read the aligned range covering `[offset, offset + buf.len())`
    /// into an aligned scratch buffer, then copy the asked part.
    fn read_direct(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = offset - offset % DIRECT_ALIGN;
        let end = (offset + buf.len() as u64).div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
        let span = (end - start) as usize;
        // Over-allocate and use the aligned window inside: no unsafe allocation needed.
        let mut scratch = vec![0u8; span + DIRECT_ALIGN as usize];
        let skew = scratch.as_ptr().align_offset(DIRECT_ALIGN as usize);
        let window = &mut scratch[skew..skew + span];
        let mut done = 0;
        while done < span {
            let n = self.file.read_at(&mut window[done..], start + done as u64)?;
            if n == 0 {
                break; // end of file: the tail of the last aligned block is short
            }
            done += n;
        }
        let from = (offset - start) as usize;
        if done < from + buf.len() {
            return Err(Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past end of file")));
        }
        buf.copy_from_slice(&window[from..from + buf.len()]);
        Ok(())
    }
}

impl RandomRead for FsRandom {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if self.direct {
            return self.read_direct(offset, buf);
        }
        self.file.read_exact_at(buf, offset)?;
        Ok(())
    }
    fn read_split_at(&self, offset: u64, head: &mut [u8], tail: &mut [u8]) -> Result<()> {
        if self.direct {
            // O_DIRECT wants aligned buffers: one aligned read, copied out.
            let mut both = vec![0u8; head.len() + tail.len()];
            self.read_direct(offset, &mut both)?;
            let (h, t) = both.split_at(head.len());
            head.copy_from_slice(h);
            tail.copy_from_slice(t);
            return Ok(());
        }
        preadv_exact(&self.file, offset, head, tail)
    }
    fn len(&self) -> u64 {
        self.len
    }
    fn batch_target(&self) -> Option<BatchTarget> {
        use std::os::fd::AsRawFd;
        Some(BatchTarget::new(self.file.as_raw_fd(), self.direct))
    }
}

struct FsWritable {
    out: BufWriter<File>,
    len: u64,
}

impl SequentialWrite for FsWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.out.write_all(data)?;
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()?;
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

fn open_random(path: &Path, direct: bool) -> Result<Arc<dyn RandomRead>> {
    let mut options = OpenOptions::new();
    options.read(true);
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_DIRECT);
    }
    let file = options.open(path).map_err(|e| with_path(e, path))?;
    let len = file.metadata().map_err(|e| with_path(e, path))?.len();
    Ok(Arc::new(FsRandom { file, len, direct }))
}

impl Storage for FsStorage {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        open_random(path, false)
    }

    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        let file =
            OpenOptions::new().write(true).create(true).truncate(true).open(path).map_err(|e| with_path(e, path))?;
        Ok(Box::new(FsWritable { out: BufWriter::with_capacity(64 * 1024, file), len: 0 }))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        fs::read(path).map_err(|e| with_path(e, path))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| with_path(e, from))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| with_path(e, path))
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        fs::remove_dir(dir).map_err(|e| with_path(e, dir))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        Ok(fs::create_dir_all(dir)?)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        File::open(dir)?.sync_all()?;
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        fs::hard_link(from, to).map_err(|e| with_path(e, from))
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        super::dir_lock::lock(path)
    }
}

impl Storage for DirectReadFsStorage {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        open_random(path, true)
    }
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        FsStorage.create(path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        FsStorage.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        FsStorage.rename(from, to)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        FsStorage.remove(path)
    }
    fn rename_dir(&self, from: &Path, to: &Path) -> Result<()> {
        FsStorage.rename_dir(from, to)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        FsStorage.remove_dir(dir)
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        FsStorage.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        FsStorage.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        FsStorage.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        FsStorage.exists(path)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        FsStorage.link(from, to)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        FsStorage.lock(path)
    }
}

/// Fill `head` then `tail` from `offset` of `file` with `preadv`, again after a short read
/// (from where it stopped) or a signal; the file ending first is `UnexpectedEof`.
fn preadv_exact(file: &File, offset: u64, head: &mut [u8], tail: &mut [u8]) -> Result<()> {
    use std::os::fd::AsRawFd;
    let (head_len, total) = (head.len(), head.len() + tail.len());
    let mut done = 0;
    while done < total {
        // The parts of the two buffers not yet filled.
        let (h, t) = if done < head_len {
            (&mut head[done..], &mut tail[..])
        } else {
            (&mut head[head_len..], &mut tail[done - head_len..])
        };
        let iov = [
            libc::iovec { iov_base: h.as_mut_ptr().cast(), iov_len: h.len() },
            libc::iovec { iov_base: t.as_mut_ptr().cast(), iov_len: t.len() },
        ];
        let at = libc::off_t::try_from(offset + done as u64)
            .map_err(|_| Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "read offset too large")))?;
        // SAFETY: both iovecs point at live, exclusively borrowed byte slices (`h`, `t`) of
        // exactly `iov_len` bytes, which outlive the call; the descriptor is `file`'s, open
        // for the call's duration. `preadv` writes at most `iov_len` bytes into each.
        // Exercised by `io::fs::tests::split_reads_fill_both_buffers_as_one_read`.
        let n = unsafe { libc::preadv(file.as_raw_fd(), iov.as_ptr(), 2, at) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::Io(e));
        }
        if n == 0 {
            return Err(Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past end of file")));
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_the_same_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("LOCK");
        let first = FsStorage.lock(&p).unwrap();
        assert!(matches!(FsStorage.lock(&p), Err(Error::Locked(_))));
        drop(first);
        assert!(FsStorage.lock(&p).is_ok());
    }

    #[test]
    fn direct_reads_return_the_same_bytes_at_unaligned_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut w = FsStorage.create(&p).unwrap();
        w.append(&data).unwrap();
        w.sync().unwrap();
        let r = match DirectReadFsStorage.open_read(&p) {
            Ok(r) => r,
            // Some file systems (tmpfs) refuse O_DIRECT; nothing to check there.
            Err(Error::Io(e)) if e.to_string().contains("Invalid argument") => return,
            Err(e) => panic!("{e}"),
        };
        for (off, len) in [(0usize, 10usize), (4095, 2), (5000, 9000), (19_990, 10), (1, 19_999)] {
            let mut buf = vec![0u8; len];
            r.read_at(off as u64, &mut buf).unwrap();
            assert_eq!(buf, &data[off..off + len], "offset {off} len {len}");
        }
        let mut past = [0u8; 11];
        assert!(r.read_at(19_990, &mut past).is_err());
    }

    #[test]
    fn written_bytes_read_back_positionally() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut w = FsStorage.create(&p).unwrap();
        w.append(b"hello world").unwrap();
        w.sync().unwrap();
        let r = FsStorage.open_read(&p).unwrap();
        let mut buf = [0u8; 5];
        r.read_at(6, &mut buf).unwrap();
        assert_eq!(&buf, b"world");
        assert!(r.read_at(8, &mut buf).is_err());
    }

    #[test]
    fn split_reads_fill_both_buffers_as_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = FsStorage.open_read(&path).unwrap();
        for (offset, head, tail) in [(0, 4096, 5), (123, 1, 0), (5000, 0, 7), (9000, 995, 5), (1, 9994, 5)] {
            let (mut h, mut t) = (vec![0u8; head], vec![0u8; tail]);
            file.read_split_at(offset as u64, &mut h, &mut t).unwrap();
            assert_eq!(h, bytes[offset..offset + head], "head at {offset}");
            assert_eq!(t, bytes[offset + head..offset + head + tail], "tail at {offset}");
        }
        let (mut h, mut t) = (vec![0u8; 995], vec![0u8; 6]);
        let err = file.read_split_at(9000, &mut h, &mut t).unwrap_err();
        assert!(matches!(err, Error::Io(ref e) if e.kind() == std::io::ErrorKind::UnexpectedEof), "{err}");
    }
}
