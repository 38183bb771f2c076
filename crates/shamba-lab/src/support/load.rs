//! Loading a tree's keys: the ids, their order, the memtable that holds one flush of them,
//! and the settle after each flush that keeps two loads of the same keys the same tree.

use std::error::Error;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use shamba::{Db, WriteOptions};

use super::tree::TreeSpec;

/// Memtable bytes an entry takes beyond its key and value (the engine charges 80 and
/// encodes a sequence number and lengths; rounded up).
const MEMTABLE_ENTRY_OVERHEAD: u64 = 104;

/// Whether `keys` entries of `spec` fit one memtable, so no flush comes before the forced one.
pub(crate) fn fits_memtable(spec: &TreeSpec, keys: u64) -> bool {
    keys.saturating_mul(memtable_entry_bytes(spec.key_size, spec.value_size)) < spec.options.write_buffer_size as u64
}

/// Memtable bytes of one entry of `key_size` and `value_size` bytes, as the engine charges it.
fn memtable_entry_bytes(key_size: usize, value_size: usize) -> u64 {
    (key_size + value_size) as u64 + MEMTABLE_ENTRY_OVERHEAD
}

/// A write buffer that holds `keys` entries with room to spare, so a tree loaded with
/// `flush_every: Some(keys)` flushes only when told to. A memtable that fills half-way
/// through a flush's keys cuts them into several runs, and with tiered T = 2 the runs no
/// longer add up as a binary counter: 31 flushes of 2M keys made 3 levels, not 5.
pub fn write_buffer_for(keys: u64, key_size: usize, value_size: usize) -> usize {
    let bytes = keys.saturating_mul(memtable_entry_bytes(key_size, value_size)).saturating_mul(5) / 4;
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// The even ids `0, 2, .., 2(num-1)` in a random order.
pub fn shuffled_ids(num: u64, seed: u64) -> Vec<u64> {
    let mut ids: Vec<u64> = (0..num).map(|i| 2 * i).collect();
    ids.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    ids
}

/// Write keys `ids` (values derived from the ids) without the WAL: the experiments flush
/// before they measure, and a crash only loses a temporary database.
pub fn load_ids(db: &Db, ids: &[u64], key_size: usize, value_size: usize) -> Result<(), Box<dyn Error>> {
    let wo = WriteOptions { disable_wal: true, ..WriteOptions::default() };
    let shape =
        shamba_cli::bench::RecordShape { key_size, value_size, values: shamba_cli::bench::keys::Values::Alphabet };
    shamba_cli::bench::write_ids(db, ids, shape, 64, &wo, |_| ())?;
    Ok(())
}

/// Flush the memtable and wait until no compaction is due: every key is in an SST.
pub fn settle(db: &Db) -> Result<(), Box<dyn Error>> {
    db.flush()?;
    db.wait_for_compactions()?;
    Ok(())
}

/// Keys per flush of the trees whose variants are compared with each other (32 + 32 B
/// pairs: well under a 4 MiB memtable). Each flush is settled before the next write, so no
/// compaction races the load, and since files and levels are sized by data bytes, every
/// filter build of the same keys gets the same tree: variants differ in filters only.
pub const COMPARED_FLUSH_KEYS: u64 = 40_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::tree::Shape;

    #[test]
    fn only_flushes_that_fit_one_memtable_are_loaded_in_key_order() {
        // The memory trees' 40K-key flushes of 32 + 32 B overflow a 4 MiB memtable: sorted,
        // its own flush would cut them by key range and change the tree.
        let pressure = TreeSpec {
            num: 2_000_000,
            key_size: 32,
            value_size: 32,
            options: Shape::PRESSURE.options(),
            seed: 1,
            flush_every: Some(COMPARED_FLUSH_KEYS),
        };
        assert!(!fits_memtable(&pressure, COMPARED_FLUSH_KEYS));
        assert!(fits_memtable(&pressure, 4_000));
    }
}
