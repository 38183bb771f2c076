//! The database's keyspaces: every live tree in id order, the names of the dropped ones (a
//! batch naming one is refused by name), and the filter ledger every tree's filter pool
//! counts against.

use super::batch::KeyspaceId;
use super::tree::Tree;
use crate::error::{Error, Result};
use crate::manager::{FilterLedger, ResidencyCounters};
use parking_lot::RwLock;
use std::path::Path;
use std::sync::Arc;

#[derive(Default)]
struct TreeList {
    /// Every live keyspace's tree, in id order.
    live: Vec<Arc<Tree>>,
    /// Dropped keyspaces' ids and names (ids are never reused).
    dropped: Vec<(u32, String)>,
}

/// Every keyspace's tree.
pub(crate) struct Trees {
    list: RwLock<TreeList>,
    /// The cap on resident filter bytes every keyspace's filter pool counts against
    /// (`Options::filter_memory_budget`).
    pub ledger: Option<Arc<FilterLedger>>,
}

impl Trees {
    /// `trees` (recovered), sharing `ledger`.
    pub(crate) fn new(mut trees: Vec<Arc<Tree>>, ledger: Option<Arc<FilterLedger>>) -> Trees {
        trees.sort_by_key(|t| t.id);
        Trees { list: RwLock::new(TreeList { live: trees, dropped: Vec::new() }), ledger }
    }

    /// Every live keyspace's tree, in id order.
    pub(crate) fn all(&self) -> Vec<Arc<Tree>> {
        self.list.read().live.clone()
    }

    /// `f` of every live keyspace's tree, in id order, under the list's lock, without
    /// copying the list. `f` may take a tree's super version (no thread holds a super
    /// version's lock while it waits for this one) and must not add or drop a keyspace.
    pub(crate) fn with_live<T>(&self, f: impl FnOnce(&[Arc<Tree>]) -> T) -> T {
        f(&self.list.read().live)
    }

    /// The tree of keyspace `id`, if it is live.
    pub(crate) fn get(&self, id: u32) -> Option<Arc<Tree>> {
        self.list.read().live.iter().find(|t| t.id == id).cloned()
    }

    /// The tree of the keyspace named `name`, if it is live.
    pub(crate) fn named(&self, name: &str) -> Option<Arc<Tree>> {
        self.list.read().live.iter().find(|t| t.name == name).cloned()
    }

    /// A new keyspace's tree.
    pub(crate) fn add(&self, tree: Arc<Tree>) {
        let mut list = self.list.write();
        list.live.push(tree);
        list.live.sort_by_key(|t| t.id);
    }

    /// Keyspace `id` is dropped (its drop is logged): its handles fail from now on, and
    /// batches naming it are refused.
    pub(crate) fn remove(&self, tree: &Tree) {
        tree.mark_dropped();
        let mut list = self.list.write();
        list.live.retain(|t| t.id != tree.id);
        list.dropped.push((tree.id, tree.name.clone()));
    }

    /// Whether a batch may write to the keyspaces it names: each of database `db` (the
    /// one whose directory is `dir`) and live. The error names the first that is not.
    pub(crate) fn check_named(&self, named: &[KeyspaceId], db: u64, dir: &Path) -> Result<()> {
        if named.is_empty() {
            return Ok(());
        }
        let list = self.list.read();
        for ks in named {
            if ks.db != db {
                return Err(Error::InvalidArgument(format!(
                    "the batch writes to keyspace {} of another database than {} (or of one since closed)",
                    ks.id,
                    dir.display()
                )));
            }
            if !list.live.iter().any(|t| t.id == ks.id) {
                let name = list.dropped.iter().find(|(id, _)| *id == ks.id).map(|(_, name)| name.as_str());
                return Err(Error::InvalidArgument(match name {
                    Some(name) => format!("the batch writes to keyspace {name:?} (id {}), which was dropped", ks.id),
                    None => format!("the batch writes to keyspace {}, which this database does not have", ks.id),
                }));
            }
        }
        Ok(())
    }

    /// Filter parts held by the managers of every keyspace, with their loads and
    /// evictions: the peak is the database's (the ledger's) under a filter budget, else the
    /// sum of each pool's own peak (a bound on the database's).
    pub(crate) fn filter_residency(&self) -> ResidencyCounters {
        let mut total = ResidencyCounters::default();
        for tree in self.all() {
            let c = tree.manager.residency_counters();
            total.resident_bytes += c.resident_bytes;
            total.peak_bytes += c.peak_bytes;
            total.loads += c.loads;
            total.evictions += c.evictions;
        }
        if let Some(ledger) = &self.ledger {
            total.peak_bytes = ledger.peak();
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::super_version::SuperVersion;
    use crate::memtable::MemTable;
    use crate::options::Options;
    use crate::version::Version;

    fn tree(id: u32, name: &str) -> Arc<Tree> {
        let opts = Options::default();
        let sv = SuperVersion::new(
            Arc::new(MemTable::new(1)),
            Vec::new(),
            Arc::new(Version::new(opts.num_levels)),
            None,
            &opts,
        );
        Arc::new(Tree::new(id, name.into(), opts, sv, None))
    }

    fn message(r: Result<()>) -> String {
        match r {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_batch_naming_a_dropped_or_foreign_keyspace_is_refused_by_name() {
        let trees = Trees::new(vec![tree(2, "logs"), tree(0, "default"), tree(1, "users")], None);
        assert_eq!(trees.all().iter().map(|t| t.id).collect::<Vec<_>>(), [0, 1, 2]);
        let dir = Path::new("/db");
        let (users, logs) = (KeyspaceId { db: 7, id: 1 }, KeyspaceId { db: 7, id: 2 });
        assert!(trees.check_named(&[users, logs], 7, dir).is_ok());

        let users_tree = trees.named("users").unwrap();
        trees.remove(&users_tree);
        assert!(users_tree.is_dropped());
        assert!(trees.get(1).is_none() && trees.named("users").is_none());
        let m = message(trees.check_named(&[logs, users], 7, dir));
        assert!(m.contains("\"users\"") && m.contains("dropped"), "{m}");

        let m = message(trees.check_named(&[KeyspaceId { db: 8, id: 2 }], 7, dir));
        assert!(m.contains("another database") && m.contains("/db"), "{m}");
        let m = message(trees.check_named(&[KeyspaceId { db: 7, id: 9 }], 7, dir));
        assert!(m.contains("keyspace 9"), "{m}");

        trees.add(tree(3, "users"));
        assert_eq!(trees.named("users").map(|t| t.id), Some(3), "the name comes back as a new keyspace");
        assert!(trees.check_named(&[users], 7, dir).is_err(), "the old id stays dropped");
    }
}
