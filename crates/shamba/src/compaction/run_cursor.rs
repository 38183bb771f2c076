//! A cursor over one sorted run: the concatenation of its files, opened lazily.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::key::compare_internal_keys;
use crate::options::ReadOptions;
use crate::table::TableCache;
use crate::version::FileMeta;
use std::sync::Arc;

/// Walks the files of a run (disjoint, sorted) as one sequence.
pub(crate) struct RunCursor {
    files: Vec<Arc<FileMeta>>,
    tables: Arc<TableCache>,
    read: ReadOptions,
    index: usize,
    current: Option<Box<dyn Cursor>>,
}

impl RunCursor {
    /// A cursor over `files`, which must be sorted and disjoint.
    pub(crate) fn new(files: Vec<Arc<FileMeta>>, tables: Arc<TableCache>, read: ReadOptions) -> Self {
        RunCursor { files, tables, read, index: 0, current: None }
    }

    fn open(&mut self, index: usize) -> Result<()> {
        self.index = index;
        self.current = match self.files.get(index) {
            Some(f) => Some(self.tables.reader(f.number)?.cursor(&self.read)),
            None => None,
        };
        Ok(())
    }

    /// Move forward over exhausted files.
    fn skip_forward(&mut self) -> Result<()> {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if self.index + 1 >= self.files.len() {
                self.current = None;
                return Ok(());
            }
            self.open(self.index + 1)?;
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first()?;
            }
        }
        Ok(())
    }

    /// Move backward over exhausted files.
    fn skip_backward(&mut self) -> Result<()> {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if self.index == 0 {
                self.current = None;
                return Ok(());
            }
            self.open(self.index - 1)?;
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last()?;
            }
        }
        Ok(())
    }
}

impl Cursor for RunCursor {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.open(0)?;
        if let Some(c) = self.current.as_mut() {
            c.seek_to_first()?;
        }
        self.skip_forward()
    }

    fn seek_to_last(&mut self) -> Result<()> {
        if self.files.is_empty() {
            self.current = None;
            return Ok(());
        }
        self.open(self.files.len() - 1)?;
        if let Some(c) = self.current.as_mut() {
            c.seek_to_last()?;
        }
        self.skip_backward()
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        // The first file whose largest key is >= target holds the answer (or its successor).
        let i = self.files.partition_point(|f| compare_internal_keys(&f.largest, target).is_lt());
        if i >= self.files.len() {
            self.current = None;
            return Ok(());
        }
        self.open(i)?;
        if let Some(c) = self.current.as_mut() {
            c.seek(target)?;
        }
        self.skip_forward()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        // The last file whose smallest key is <= target.
        let i = self.files.partition_point(|f| compare_internal_keys(&f.smallest, target).is_le());
        if i == 0 {
            self.current = None;
            return Ok(());
        }
        self.open(i - 1)?;
        if let Some(c) = self.current.as_mut() {
            c.seek_for_prev(target)?;
        }
        self.skip_backward()
    }

    fn next(&mut self) -> Result<()> {
        if let Some(c) = self.current.as_mut() {
            c.next()?;
        }
        self.skip_forward()
    }

    fn prev(&mut self) -> Result<()> {
        if let Some(c) = self.current.as_mut() {
            c.prev()?;
        }
        self.skip_backward()
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map(|c| c.key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map(|c| c.value()).unwrap_or(&[])
    }
}
