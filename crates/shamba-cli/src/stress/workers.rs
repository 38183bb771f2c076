//! The worker threads: random operations on the database, each checked against the
//! expected state as it runs.
//!
//! Writes (puts, some with a deadline, deletes, batches of several keys, range deletes of
//! neighbouring keys, transactions, `expire` and `persist`) lock their keys in index order, mark the write pending in the expected state, write, then
//! record it as acknowledged; a `get`
//! holds its key's lock, so it must find exactly the acknowledged state. A range scan
//! locks nothing: it reads each key's slot before and after creating its iterator, and
//! holds a key whose slot did not change to its exact state, any other to what a write in
//! that window could have left (absent, or a value id no older than the one acknowledged
//! before and no newer than the last one started). A snapshot read locks its keys while
//! it takes the snapshot, writes to them (and sometimes flushes), then reads them through
//! the snapshot, by `get` and by a range scan, and must find their state at snapshot time.
//! Every read takes the wall-clock window it ran in, so a key whose put expires is held
//! to be found before its deadline and not after (`slot::Window`).
//!
//! Every operation runs under the database's read lock; the coordinator takes the write
//! lock to close, reopen and verify, so no operation spans a reopen.

use super::counters::{Counters, Event, Op};
use super::divergence::{Divergence, Divergences};
use super::expected::ExpectedState;
use super::expiry::{draw_deadline, time_of};
use super::slot::{Slot, Window, Write};
use super::spaces::{handles, merged_range, space_of, ScanError, Source};
use super::values::{index_of, key_of, value_of, Found};
use crate::admin::show;
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use shamba::{Db, Keyspace, Readable, WriteBatch, WriteOptions};
use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// What the workers and the coordinator share.
pub struct Shared {
    /// The open database; `None` while the coordinator reopens it.
    pub db: RwLock<Option<Db>>,
    /// The expected state.
    pub state: ExpectedState,
    /// Divergences found.
    pub divergences: Divergences,
    /// Operations run.
    pub counters: Counters,
    /// Set to end the run.
    pub stop: AtomicBool,
    /// The first engine error, which ends the run.
    pub failure: Mutex<Option<String>>,
    /// Fraction of writes that fsync the WAL.
    pub sync_fraction: f64,
}

impl Shared {
    fn fail(&self, e: &dyn std::fmt::Display) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e.to_string());
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Record a divergence and end the run.
    pub fn diverged(&self, d: Divergence) {
        self.divergences.record(d);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Run random operations until `shared.stop` is set.
pub fn work(shared: &Shared, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    while !shared.stop.load(Ordering::Relaxed) {
        let guard = shared.db.read().unwrap_or_else(|p| p.into_inner());
        let Some(db) = guard.as_ref() else {
            drop(guard);
            std::thread::yield_now();
            continue;
        };
        let result = one_op(db, shared, &mut rng);
        drop(guard);
        if let Err(e) = result {
            shared.fail(&e);
        }
    }
}

fn one_op(db: &Db, s: &Shared, rng: &mut StdRng) -> Res<()> {
    // Per 10,000: a full compaction rewrites the whole database, so it is rare; flushes
    // come on their own as memtables fill, a few more are asked for.
    let op = match rng.gen_range(0..10_000) {
        0..2_600 => Op::Put,
        2_600..3_000 => Op::ExpiringPut,
        3_000..3_700 => Op::Delete,
        3_700..4_500 => Op::Batch,
        4_500..4_600 => Op::DeleteRange,
        4_600..5_000 => Op::Transaction,
        5_000..5_150 => Op::Expire,
        5_150..5_250 => Op::Persist,
        5_250..7_300 => Op::Get,
        7_300..8_000 => Op::MultiGet,
        8_000..9_100 => Op::Scan,
        9_100..9_945 => Op::SnapshotRead,
        9_945..9_995 => Op::Flush,
        _ => Op::Compact,
    };
    let keys = s.state.keys();
    let spaces = handles(db)?;
    let sp = spaces.as_slice();
    match op {
        Op::Put | Op::Delete | Op::ExpiringPut => {
            let index = rng.gen_range(0..keys);
            let puts = if op == Op::Delete { 0.0 } else { 1.0 };
            write_keys(db, sp, s, rng, &[index], puts, if op == Op::ExpiringPut { 1.0 } else { 0.0 })?;
        }
        Op::Batch => {
            let indices = random_keys(rng, keys, 2, 8);
            write_keys(db, sp, s, rng, &indices, 0.8, 0.2)?;
        }
        Op::Transaction => {
            let indices = random_keys(rng, keys, 1, 4);
            super::transaction::read_modify_write(db, sp, s, rng, &indices)?
        }
        Op::Expire | Op::Persist => {
            let index = rng.gen_range(0..keys);
            super::expiry::rewrite_deadline(sp, s, rng, index, op == Op::Expire)?;
        }
        Op::DeleteRange => {
            // Up to 32 neighbouring keys: key names order as their indices.
            let lo = rng.gen_range(0..keys);
            let hi = lo.saturating_add(rng.gen_range(1..=32)).min(keys);
            delete_range(db, sp, s, rng, lo, hi)?;
        }
        Op::Get => get(sp, s, rng.gen_range(0..keys))?,
        Op::MultiGet => multi_get(sp, s, &random_keys(rng, keys, 2, 32))?,
        Op::Scan => scan(sp, s, rng)?,
        Op::SnapshotRead => snapshot_read(db, sp, s, rng)?,
        Op::Flush => db.flush().map_err(|e| format!("flush: {e}"))?,
        Op::Compact => db.compact().map_err(|e| format!("compact: {e}"))?,
    }
    s.counters.count(op);
    Ok(())
}

/// Delete the keys `lo..hi` with one range delete per keyspace, in one batch: each key's
/// slot says a delete by this op, pending then settled, as a batch of deletes would (all
/// or nothing after a kill, across keyspaces).
fn delete_range(db: &Db, spaces: &[Keyspace], s: &Shared, rng: &mut StdRng, lo: u32, hi: u32) -> Res<()> {
    let mut locks: Vec<_> = (lo..hi).map(|i| s.state.lock(i)).collect();
    let op = s.state.next_id()?;
    for key in &mut locks {
        let pending = key.slot().with_pending(Write::Delete(op));
        key.set(pending)?;
    }
    let mut batch = WriteBatch::new();
    for ks in spaces {
        batch.delete_range_in(ks, key_of(lo)..key_of(hi));
    }
    let sync = rng.gen_bool(s.sync_fraction);
    // On an error the slots stay pending: the write may or may not have landed.
    db.write_opt(batch, &WriteOptions { sync, ..WriteOptions::default() })
        .map_err(|e| format!("range delete op {op} of keys {lo}..{hi}: {e}"))?;
    for key in &mut locks {
        key.set(Slot::settled(Some(Write::Delete(op))))?;
    }
    Ok(())
}

/// Between `least` and `most` distinct keys (fewer if the key space is smaller), in index
/// order.
fn random_keys(rng: &mut StdRng, keys: u32, least: u32, most: u32) -> Vec<u32> {
    let n = rng.gen_range(least.min(keys)..=most.min(keys)) as usize;
    let mut v: Vec<u32> = sample(rng, keys as usize, n).into_iter().map(|i| i as u32).collect();
    v.sort_unstable();
    v
}

/// Write `indices` (in index order) in one database write, each key a put with
/// probability `put_fraction` (given a deadline with probability `ttl_fraction`), else a
/// delete: one key alone by `put`, `put_with_expiry` or `delete` (or a synced batch of
/// one), several as a batch.
pub fn write_keys(
    db: &Db,
    spaces: &[Keyspace],
    s: &Shared,
    rng: &mut StdRng,
    indices: &[u32],
    put_fraction: f64,
    ttl_fraction: f64,
) -> Res<()> {
    let mut locks: Vec<_> = indices.iter().map(|&i| s.state.lock(i)).collect();
    let op = s.state.next_id()?;
    let mut writes = Vec::with_capacity(locks.len());
    for key in &mut locks {
        let write = if rng.gen_bool(put_fraction) { Write::Put(op) } else { Write::Delete(op) };
        let until = (matches!(write, Write::Put(_)) && rng.gen_bool(ttl_fraction)).then(|| draw_deadline(rng));
        let pending = key.slot().with_pending_until(write, until);
        key.set(pending)?;
        writes.push((write, until));
    }
    let sync = rng.gen_bool(s.sync_fraction);
    let result = match (indices, writes.as_slice(), sync) {
        ([i], [(Write::Put(id), None)], false) => spaces[space_of(*i)].put(key_of(*i), value_of(*i, *id)),
        ([i], [(Write::Put(id), Some(d))], false) => {
            spaces[space_of(*i)].put_with_expiry(key_of(*i), value_of(*i, *id), time_of(*d))
        }
        ([i], [(Write::Delete(_), _)], false) => spaces[space_of(*i)].delete(key_of(*i)),
        _ => {
            let mut batch = WriteBatch::new();
            for (&i, (w, until)) in indices.iter().zip(&writes) {
                let ks = &spaces[space_of(i)];
                match (w, until) {
                    (Write::Put(id), None) => batch.put_in(ks, key_of(i), value_of(i, *id)),
                    (Write::Put(id), Some(d)) => batch.put_with_expiry_in(ks, key_of(i), value_of(i, *id), time_of(*d)),
                    (Write::Delete(_), _) => batch.delete_in(ks, key_of(i)),
                };
            }
            db.write_opt(batch, &WriteOptions { sync, ..WriteOptions::default() })
        }
    };
    // On an error the slots stay pending: the write may or may not have landed.
    result.map_err(|e| format!("write op {op} on keys {indices:?}: {e}"))?;
    let expiring = writes.iter().filter(|(_, until)| until.is_some()).count() as u64;
    s.counters.saw(Event::ExpiringWrite, expiring);
    for key in &mut locks {
        let landed = key.slot().landed();
        key.set(landed)?;
    }
    Ok(())
}

/// Check what a read of key `index` in window `w` found against its slot (the key locked
/// for the read's length); counts a put seen expired.
pub fn check_read(s: &Shared, index: u32, slot: Slot, found: &Found, w: Window, what: &str) {
    match found.as_state() {
        Some(state) if slot.allows(state, w) => {
            if state.is_none() && slot.value().is_some() && slot.pending.is_none() {
                s.counters.saw(Event::SeenExpired, 1);
            }
        }
        _ => s.diverged(Divergence::key(index, format!("{what} found {found}, expected {slot}, read within {w:?}"))),
    }
}

fn get(spaces: &[Keyspace], s: &Shared, index: u32) -> Res<()> {
    let key = s.state.lock(index);
    let w = Window::open();
    let value = spaces[space_of(index)].get(key_of(index)).map_err(|e| format!("get of key {index}: {e}"))?;
    let w = w.close();
    check_read(s, index, key.slot(), &Found::of(index, value.as_deref()), w, "get");
    Ok(())
}

/// Look `indices` (in index order, so locks are taken in the order writers take them) up
/// with one `multi_get` per keyspace, each answer checked as a get's is.
fn multi_get(spaces: &[Keyspace], s: &Shared, indices: &[u32]) -> Res<()> {
    let locks: Vec<_> = indices.iter().map(|&i| s.state.lock(i)).collect();
    for (space, ks) in spaces.iter().enumerate() {
        let mine: Vec<usize> = (0..indices.len()).filter(|&j| space_of(indices[j]) == space).collect();
        if mine.is_empty() {
            continue;
        }
        let keys: Vec<_> = mine.iter().map(|&j| key_of(indices[j])).collect();
        let w = Window::open();
        let values = ks.multi_get(&keys);
        let w = w.close();
        for (&j, value) in mine.iter().zip(values) {
            let index = indices[j];
            let value = value.map_err(|e| format!("multi_get of key {index} (of {indices:?}): {e}"))?;
            check_read(s, index, locks[j].slot(), &Found::of(index, value.as_deref()), w, "multi_get");
        }
    }
    Ok(())
}

/// What a scan that locks nothing, reading in window `w`, may find for a key whose slot
/// read `pre` before its iterator was made and `post` after.
fn scan_allows(pre: Slot, post: Slot, found: &Found, w: Window) -> bool {
    let Some(state) = found.as_state() else { return false };
    if pre == post && pre.pending.is_none() {
        return pre.allows(state, w);
    }
    match state {
        // A delete may have come and gone between the two reads.
        None => true,
        // Op ids grow with time for each key: nothing older than what was acknowledged
        // before, nothing newer than what was started after.
        Some(id) => id >= pre.last.map_or(0, Write::op) && id <= post.max_id(),
    }
}

fn scan(spaces: &[Keyspace], s: &Shared, rng: &mut StdRng) -> Res<()> {
    let keys = s.state.keys();
    let start = rng.gen_range(0..keys);
    let end = (start + rng.gen_range(1..=64)).min(keys);
    let backward = rng.gen_bool(0.5);
    let direction = if backward { "backward" } else { "forward" };
    let pre: Vec<Slot> = (start..end).map(|i| s.state.peek(i)).collect();
    // Each keyspace's iterator is made (fixing what it sees) and walked inside
    // `merged_range`; expiry is judged by the clock as each entry is read.
    let w = Window::open();
    let merged = merged_range(spaces, Source::Now, &key_of(start), Some(&key_of(end)), backward);
    let w = w.close();
    let post: Vec<Slot> = (start..end).map(|i| s.state.peek(i)).collect();
    let items = match merged {
        Ok(items) => items,
        Err(ScanError::Diverged(divergence)) => {
            s.diverged(Divergence::scan(format!("a {direction} scan of keys {start}..{end}: {divergence}")));
            return Ok(());
        }
        Err(ScanError::Engine(e)) => return Err(format!("{direction} scan of keys {start}..{end}: {e}").into()),
    };
    let mut returned = vec![false; (end - start) as usize];
    let mut last: Option<u32> = None;
    for (key, value) in items {
        let Some(index) = index_of(&key).filter(|i| (start..end).contains(i)) else {
            s.diverged(Divergence::scan(format!(
                "a {direction} scan of keys {start}..{end} returned key {}, outside its range",
                show(&key)
            )));
            return Ok(());
        };
        if last.is_some_and(|l| if backward { index >= l } else { index <= l }) {
            s.diverged(Divergence::key(index, format!("a {direction} scan returned it out of order")));
            return Ok(());
        }
        last = Some(index);
        let at = (index - start) as usize;
        returned[at] = true;
        let found = Found::of(index, Some(&value));
        if !scan_allows(pre[at], post[at], &found, w) {
            s.diverged(Divergence::key(
                index,
                format!("a {direction} scan found {found}; before the scan {}, after {}", pre[at], post[at]),
            ));
        }
    }
    for (at, seen) in returned.iter().enumerate() {
        if !seen && !scan_allows(pre[at], post[at], &Found::Absent, w) {
            s.diverged(Divergence::key(
                start + at as u32,
                format!("a {direction} scan skipped it; before and after the scan it held {}", pre[at]),
            ));
        }
    }
    Ok(())
}

fn snapshot_read(db: &Db, spaces: &[Keyspace], s: &Shared, rng: &mut StdRng) -> Res<()> {
    let keys = s.state.keys();
    let indices = random_keys(rng, keys, 1, 4);
    let (snap, then): (_, Vec<Slot>) = {
        let locks: Vec<_> = indices.iter().map(|&i| s.state.lock(i)).collect();
        let snap = db.snapshot();
        (snap, locks.iter().map(|k| k.slot()).collect())
    };
    // Move the keys on, so the snapshot has something to hide.
    for _ in 0..rng.gen_range(1..=3) {
        let subset: Vec<u32> = indices.iter().copied().filter(|_| rng.gen_bool(0.7)).collect();
        if !subset.is_empty() {
            write_keys(db, spaces, s, rng, &subset, 0.7, 0.2)?;
        }
    }
    if rng.gen_bool(0.1) {
        db.flush().map_err(|e| format!("flush: {e}"))?;
    }
    let seq = snap.sequence();
    for (&index, slot) in indices.iter().zip(&then) {
        let w = Window::open();
        let value = snap
            .keyspace(&spaces[space_of(index)])
            .get(key_of(index))
            .map_err(|e| format!("snapshot get of key {index}: {e}"))?;
        let w = w.close();
        let found = Found::of(index, value.as_deref());
        if !found.as_state().is_some_and(|f| slot.allows(f, w)) {
            s.diverged(Divergence::key(
                index,
                format!("a read through snapshot {seq} found {found}, expected {slot} (its state when the snapshot was taken)"),
            ));
        }
    }
    let (first, last) = (indices.first().copied().unwrap_or(0), indices.last().copied().unwrap_or(0));
    let mut seen = vec![None; indices.len()];
    let w = Window::open();
    let merged = merged_range(spaces, Source::At(&snap), &key_of(first), Some(&key_of(last + 1)), false);
    let w = w.close();
    let items = match merged {
        Ok(items) => items,
        Err(ScanError::Diverged(divergence)) => {
            s.diverged(Divergence::scan(format!(
                "a scan through snapshot {seq} of keys {first}..={last}: {divergence}"
            )));
            return Ok(());
        }
        Err(ScanError::Engine(e)) => return Err(format!("snapshot scan of keys {first}..={last}: {e}").into()),
    };
    for (key, value) in items {
        if let Some(at) = index_of(&key).and_then(|i| indices.binary_search(&i).ok()) {
            seen[at] = Some(Found::of(indices[at], Some(&value)));
        }
    }
    for ((&index, slot), found) in indices.iter().zip(&then).zip(seen) {
        let found = found.unwrap_or(Found::Absent);
        if !found.as_state().is_some_and(|f| slot.allows(f, w)) {
            s.diverged(Divergence::key(
                index,
                format!(
                    "a scan through snapshot {seq} found {found}, expected {} (its state when the snapshot was taken)",
                    slot
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_must_see_the_exact_state_of_a_key_no_write_touched() {
        let w = Window { from: 1_000, to: 1_010 };
        let quiet = Slot::settled(Some(Write::Put(10)));
        assert!(scan_allows(quiet, quiet, &Found::Value(10), w));
        assert!(!scan_allows(quiet, quiet, &Found::Absent, w), "an acknowledged value may not vanish");
        assert!(!scan_allows(quiet, quiet, &Found::Value(9), w), "nor turn into an older one");
        let deleted = Slot::settled(Some(Write::Delete(12)));
        assert!(!scan_allows(deleted, deleted, &Found::Value(10), w), "a delete may not be undone");
        assert!(!scan_allows(Slot::default(), Slot::default(), &Found::Value(3), w));
        let expired = Slot::settled_until(Some(Write::Put(10)), Some(900));
        assert!(scan_allows(expired, expired, &Found::Absent, w), "an expired put may vanish");
        assert!(!scan_allows(expired, expired, &Found::Value(10), w), "and must, past its deadline");
    }

    #[test]
    fn a_scan_racing_writes_may_see_any_state_between_its_two_reads_but_no_older_one() {
        let pre = Slot::settled(Some(Write::Put(10)));
        let post = Slot::settled(Some(Write::Put(20))).with_pending(Write::Put(25));
        let w = Window { from: 1_000, to: 1_010 };
        for ok in [Found::Value(10), Found::Value(15), Found::Value(25), Found::Absent] {
            assert!(scan_allows(pre, post, &ok, w), "{ok}");
        }
        for bad in [Found::Value(9), Found::Value(26), Found::Alien(b"x".to_vec())] {
            assert!(!scan_allows(pre, post, &bad, w), "{bad}");
        }
    }
}
