//! What [`Db::verify`](crate::Db::verify) found: the report and its problems.
//!
//! On the ground floor because each floor adds what it checks: a table's blocks
//! (`table/verify.rs`), a version's shape and its records of files (`version/verify.rs`),
//! the directory and the logs (`db/verify.rs`).

use std::fmt;
use std::path::{Path, PathBuf};

/// What a verification read and what it found wrong.
///
/// Verification keeps going after a problem: every table is checked, and inside a table
/// every block the damage leaves reachable, so one run lists all the damage it can see.
/// [`is_ok`](Self::is_ok) says whether there was any; [`problems`](Self::problems) says
/// where and what. Orphans (tables no version names) are listed apart: they waste space
/// but lose nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Tables checked (every table of the version, missing ones included).
    pub tables: u64,
    /// Blocks read and checksummed: data, index (and index partitions), every filter
    /// part, filter index, metaindex, properties, and each footer.
    pub blocks: u64,
    /// Bytes read from tables and logs.
    pub bytes: u64,
    /// Entries walked in data blocks.
    pub keys: u64,
    /// Write-ahead logs read (every log the database still needs).
    pub logs: u64,
    /// Records read from those logs.
    pub log_records: u64,
    pub(crate) problems: Vec<Problem>,
    pub(crate) orphans: Vec<PathBuf>,
}

impl VerifyReport {
    /// Whether nothing is damaged (orphans do not count).
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// Every problem found, table by table in version order, then the logs.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Table files in the directory that no version names and no write in progress owns:
    /// left behind by a crash, or copied in. Not damage: the database never reads them
    /// (and deletes them at its next open), but they take space.
    pub fn orphans(&self) -> &[PathBuf] {
        &self.orphans
    }

    /// Add the counts and findings of `other`.
    pub(crate) fn absorb(&mut self, other: VerifyReport) {
        self.tables += other.tables;
        self.blocks += other.blocks;
        self.bytes += other.bytes;
        self.keys += other.keys;
        self.logs += other.logs;
        self.log_records += other.log_records;
        self.problems.extend(other.problems);
        self.orphans.extend(other.orphans);
    }

    /// Record a problem.
    pub(crate) fn push(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// Record an orphan table.
    pub(crate) fn push_orphan(&mut self, path: PathBuf) {
        self.orphans.push(path);
    }
}

impl fmt::Display for VerifyReport {
    /// A summary line, then one line per problem and per orphan.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "checked {} tables ({} blocks, {} bytes, {} keys) and {} logs ({} records): {} problems, {} orphans",
            self.tables,
            self.blocks,
            self.bytes,
            self.keys,
            self.logs,
            self.log_records,
            self.problems.len(),
            self.orphans.len()
        )?;
        for p in &self.problems {
            writeln!(f, "problem: {p}")?;
        }
        for o in &self.orphans {
            writeln!(f, "orphan: {} (no version names it)", o.display())?;
        }
        Ok(())
    }
}

/// One thing wrong: where (file, and the block or record in it), and what was expected
/// there and found instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What kind of damage.
    pub kind: ProblemKind,
    /// The damaged file (for a level's shape, the file that breaks it).
    pub file: PathBuf,
    /// Byte offset of the block or record, when the problem is in one.
    pub offset: Option<u64>,
    /// Which part of the file: "data block 3", "footer", "index partition 1", "properties",
    /// "level 1", "manifest record", ...
    pub location: String,
    /// What should be there.
    pub expected: String,
    /// What is there.
    pub found: String,
}

impl Problem {
    /// A problem in `file`.
    pub(crate) fn new(
        kind: ProblemKind,
        file: &Path,
        offset: Option<u64>,
        location: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Problem {
        Problem {
            kind,
            file: file.to_path_buf(),
            offset,
            location: location.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for Problem {
    /// `file, location at offset N: kind: expected ...; found ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.file.display(), self.location)?;
        if let Some(offset) = self.offset {
            write!(f, " at offset {offset}")?;
        }
        write!(f, ": {}: expected {}; found {}", self.kind.name(), self.expected, self.found)
    }
}

/// The kinds of damage verification tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A block's, footer's or log record's checksum does not match its bytes.
    Checksum,
    /// Bytes that pass their checksum (or have none) but do not decode: a bad handle,
    /// magic, length or entry.
    Malformed,
    /// Keys out of order: inside a block, across blocks, between an index and its data,
    /// or across the files of a sorted run.
    KeyOrder,
    /// What a file holds differs from what its properties or the manifest record say
    /// (size, entries, smallest or largest key, block counts).
    Mismatch,
    /// A table the manifest names is not in the directory.
    Missing,
    /// A level's shape breaks what the tree guarantees (runs newest first, one file per
    /// level-0 run, one run per leveled level, a file number in two places).
    Shape,
    /// The device failed reading the file.
    Unreadable,
}

impl ProblemKind {
    /// A short lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Checksum => "checksum mismatch",
            ProblemKind::Malformed => "malformed",
            ProblemKind::KeyOrder => "key order",
            ProblemKind::Mismatch => "mismatch",
            ProblemKind::Missing => "missing",
            ProblemKind::Shape => "level shape",
            ProblemKind::Unreadable => "unreadable",
        }
    }
}

/// What a table file holds, as a walk of all its data found it: compared with the
/// manifest's record of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileContents {
    /// File size in bytes.
    pub size: u64,
    /// Entries in its data blocks.
    pub entries: u64,
    /// Its first internal key (empty for a table of no entries).
    pub smallest: Vec<u8>,
    /// Its last internal key.
    pub largest: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_ok_until_a_problem_and_orphans_do_not_count() {
        let mut r = VerifyReport::default();
        r.push_orphan("x/000009.sst".into());
        assert!(r.is_ok());
        r.push(Problem::new(ProblemKind::Checksum, Path::new("x/000007.sst"), Some(4096), "data block 1", "a", "b"));
        assert!(!r.is_ok());
        let text = r.to_string();
        assert!(text.contains("x/000007.sst, data block 1 at offset 4096: checksum mismatch: expected a; found b"));
        assert!(text.contains("orphan: x/000009.sst"), "{text}");
    }
}
