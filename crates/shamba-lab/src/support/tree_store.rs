//! `shamba-lab exp --trees DIR`: loaded trees kept in a directory and reused by later runs that
//! load the same tree, so a sequence of experiments (the smoke test of every quick form)
//! pays for each tree once: `memory-bound` reads `memory-pressure`'s trees, `multi-get`
//! `prefetch`'s.
//!
//! A tree is named by its [`TreeSpec`] (keys, sizes, seed, flush size and the options'
//! `Debug` text: shape, filter policy, lab options). Its tables are hard links (copies on
//! another file system) of the loaded tree's, which the engine never rewrites; the other
//! files are copies as they were after the load. A store outlives one build of shamba only
//! as long as the table format does: delete it after changing the engine.

use std::error::Error;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::support::tree::TreeSpec;

/// The directory `--trees` names, set once per process.
static STORE: OnceLock<PathBuf> = OnceLock::new();

/// Keep loaded trees in `dir` from now on (the first call wins).
pub fn keep_in(dir: PathBuf) {
    let _ = STORE.set(dir);
}

/// A stored tree, as found in or put into the store.
pub struct Entry {
    /// Its folder.
    dir: PathBuf,
    /// The spec's text, which must match (the folder name is only its hash).
    text: String,
}

/// The `Debug` text of `spec`: everything that makes one load differ from another.
fn spec_text(spec: &TreeSpec) -> String {
    format!("{spec:?}")
}

impl Entry {
    /// The store's entry for `spec`, if a store is set.
    pub fn of(spec: &TreeSpec) -> Option<Entry> {
        STORE.get().map(|root| Entry::in_store(root, spec))
    }

    /// The entry for `spec` in the store at `root`.
    pub fn in_store(root: &Path, spec: &TreeSpec) -> Entry {
        let text = spec_text(spec);
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        Entry { dir: root.join(format!("{:016x}", h.finish())), text }
    }

    fn tree_dir(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// Seconds the stored tree took to load, if this entry holds a complete tree of the
    /// same spec.
    pub fn load_seconds(&self) -> Option<f64> {
        let text = std::fs::read_to_string(self.dir.join("spec.txt")).ok()?;
        if text != self.text {
            return None;
        }
        std::fs::read_to_string(self.dir.join("load_seconds")).ok()?.trim().parse().ok()
    }

    /// Fill `dir` (empty) with the stored tree's files.
    pub fn copy_to(&self, dir: &Path) -> Result<(), Box<dyn Error>> {
        link_or_copy_all(&self.tree_dir(), dir)
    }

    /// Store the tree in `dir` (closed, as loaded), `load_seconds` to load. Written under a
    /// temporary name and renamed, so a run that stops half-way leaves no partial tree.
    pub fn put(&self, dir: &Path, load_seconds: f64) -> Result<(), Box<dyn Error>> {
        let parent = self.dir.parent().ok_or("tree store without a parent")?;
        std::fs::create_dir_all(parent)?;
        let tmp = tempfile::tempdir_in(parent)?;
        let tree = tmp.path().join("tree");
        std::fs::create_dir(&tree)?;
        link_or_copy_all(dir, &tree)?;
        std::fs::write(tmp.path().join("load_seconds"), format!("{load_seconds}"))?;
        std::fs::write(tmp.path().join("spec.txt"), &self.text)?;
        // A tree stored meanwhile by another run (of the same spec) stays: a run may be
        // copying it. The rename of a folder onto a non-empty one fails.
        if self.dir.exists() {
            return Ok(());
        }
        let tmp = tmp.keep();
        if std::fs::rename(&tmp, &self.dir).is_err() {
            std::fs::remove_dir_all(&tmp)?;
            if !self.dir.exists() {
                return Err(format!("tree store: could not keep {}", self.dir.display()).into());
            }
        }
        Ok(())
    }
}

/// Every file of `from` into `to`: tables hard-linked (the engine never rewrites a table),
/// the rest copied (reopening rewrites the manifest).
fn link_or_copy_all(from: &Path, to: &Path) -> Result<(), Box<dyn Error>> {
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let Some(name) = path.file_name() else { continue };
        if !path.is_file() {
            continue;
        }
        let target = to.join(name);
        let is_table = path.extension().is_some_and(|e| e == "sst");
        if !is_table || std::fs::hard_link(&path, &target).is_err() {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}
