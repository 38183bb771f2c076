//! Bytes the process wrote and bytes a database holds on disk: engine-neutral write
//! figures, the same for an engine that counts its own writes and for one that does not.

use std::path::Path;

/// Bytes this process has passed to `write`-family system calls so far (`wchar` in
/// `/proc/self/io`, every thread: WAL appends, flushes and compactions alike), or `None`
/// where the file cannot be read.
pub fn process_written_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines().find_map(|l| l.strip_prefix("wchar:")).and_then(|v| v.trim().parse().ok())
}

/// Total size of the regular files under `dir`, recursively (0 for a missing directory).
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn written_bytes_grow_by_what_a_write_writes() {
        let dir = tempfile::tempdir().unwrap();
        let before = process_written_bytes().unwrap();
        let mut f = std::fs::File::create(dir.path().join("a")).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        let after = process_written_bytes().unwrap();
        // Other test threads may write too: at least our bytes.
        assert!(after - before >= 100_000, "{before} -> {after}");
    }

    #[test]
    fn dir_bytes_sums_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 1000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 234]).unwrap();
        assert_eq!(dir_bytes(dir.path()), 1234);
        assert_eq!(dir_bytes(&dir.path().join("missing")), 0);
    }
}
