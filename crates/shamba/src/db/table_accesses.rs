//! `Db::table_accesses`: the default keyspace's filter manager's raw counts per table of its version
//! (opened to experiments through `lab::table_accesses`).

use super::Db;
use crate::manager::TableAccesses;

impl Db {
    /// Table-reaching lookups since open, and every table of the current version that a
    /// lookup reached, with what the manager counted for it (nothing under `Plain`).
    pub(crate) fn table_accesses(&self) -> (u64, Vec<TableAccesses>) {
        let sv = self.inner.default.super_version();
        let tables =
            sv.version.all_files().filter_map(|(level, f)| self.inner.default.manager.accesses_of(f, level)).collect();
        (self.inner.default.manager.lookups(), tables)
    }
}
