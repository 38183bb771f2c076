//! The keyspaces the stress tool spreads its keys over: runs of neighbouring keys take
//! turns among the default keyspace and two named ones, so batches and range deletes of
//! neighbouring keys span keyspaces (one WAL record each, all or nothing after a kill),
//! and every scan merges what the keyspaces hold in its range.

use super::values::index_of;
use shamba::{Db, DbIterator, Keyspace, Readable, Snapshot};
use std::error::Error;

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The keyspaces, by number.
pub const SPACES: [&str; 3] = ["default", "stress-a", "stress-b"];

/// Neighbouring keys per run of one keyspace.
const RUN: u32 = 16;

/// The keyspace number key `index` lives in.
pub fn space_of(index: u32) -> usize {
    ((index / RUN) % SPACES.len() as u32) as usize
}

/// A handle of every keyspace, in number order.
pub fn handles(db: &Db) -> Res<Vec<Keyspace>> {
    SPACES.iter().map(|name| db.keyspace(name).map_err(|e| format!("keyspace {name}: {e}").into())).collect()
}

/// Where a merged walk reads from: the database now, or a snapshot.
pub enum Source<'a> {
    Now,
    At(&'a Snapshot),
}

/// Key-value pairs, in a walk's order.
pub type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Why a merged walk stopped.
pub enum ScanError {
    /// A keyspace's walk was out of order or held another keyspace's key.
    Diverged(String),
    /// The engine failed.
    Engine(String),
}

/// The pairs of keys `lo..hi` of every keyspace, in the walk's order (backward: from the
/// top). Each keyspace's own walk must be in order and hold only its own keys.
pub fn merged_range(
    spaces: &[Keyspace],
    source: Source<'_>,
    lo: &[u8],
    hi: Option<&[u8]>,
    backward: bool,
) -> Result<Pairs, ScanError> {
    let mut all = Vec::new();
    for (number, ks) in spaces.iter().enumerate() {
        let range = (
            std::ops::Bound::Included(lo.to_vec()),
            hi.map_or(std::ops::Bound::Unbounded, |h| std::ops::Bound::Excluded(h.to_vec())),
        );
        let iter: DbIterator = match source {
            Source::Now => ks.range::<Vec<u8>, _>(range),
            Source::At(snap) => snap.keyspace(ks).range::<Vec<u8>, _>(range),
        };
        let items: Box<dyn Iterator<Item = _>> = if backward { Box::new(iter.rev()) } else { Box::new(iter) };
        let mut last: Option<Vec<u8>> = None;
        for item in items {
            let (key, value) =
                item.map_err(|e| ScanError::Engine(format!("scan of keyspace {}: {e}", SPACES[number])))?;
            if last.as_ref().is_some_and(|l| if backward { key >= *l } else { key <= *l }) {
                return Err(ScanError::Diverged(format!(
                    "keyspace {} returned {:?} out of order",
                    SPACES[number], key
                )));
            }
            if index_of(&key).is_some_and(|i| space_of(i) != number) {
                return Err(ScanError::Diverged(format!(
                    "keyspace {} returned {:?}, a key of another keyspace",
                    SPACES[number], key
                )));
            }
            last = Some(key.clone());
            all.push((key, value));
        }
    }
    all.sort_by(|a, b| if backward { b.0.cmp(&a.0) } else { a.0.cmp(&b.0) });
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbouring_keys_share_a_keyspace_in_runs_that_take_turns() {
        assert_eq!((space_of(0), space_of(15), space_of(16), space_of(32), space_of(48)), (0, 0, 1, 2, 0));
    }
}
