//! Transactions in the mix: a read-modify-write of one to four keys (spread over the
//! keyspaces), under the keys' locks as a batch is.
//!
//! Each transaction reads its keys with `get_for_update` (they must hold their acknowledged
//! state), now and then has one of them written outside it after its snapshot (its reads
//! must still find the snapshot's state, and its commit must be refused with a conflict),
//! writes them (puts, some with a deadline, and deletes; it must read its own writes),
//! then commits, or on purpose rolls back (nothing of it may appear). Only a committed
//! transaction changes the expected state: its keys are pending across the commit, so a
//! kill there leaves them all old or all new, as for a batch. A conflict writes nothing,
//! and is counted, not a divergence: the transaction is dropped.

use super::counters::Event;
use super::divergence::Divergence;
use super::expiry::{draw_deadline, time_of};
use super::slot::{Slot, Window, Write};
use super::spaces::space_of;
use super::values::{key_of, value_of, Found};
use super::workers::{check_read, Shared};
use rand::rngs::StdRng;
use rand::Rng;
use shamba::{Db, Keyspace, Readable, TransactionOptions};
use std::error::Error;

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// Chance that a key of the transaction is written outside it after its snapshot.
const INTERFERE: f64 = 0.1;
/// Chance that a transaction is rolled back instead of committed.
const ROLL_BACK: f64 = 0.1;

/// Run one transaction over `indices` (in index order, so locks are taken in the order
/// every writer takes them).
pub fn read_modify_write(db: &Db, spaces: &[Keyspace], s: &Shared, rng: &mut StdRng, indices: &[u32]) -> Res<()> {
    let mut locks: Vec<_> = indices.iter().map(|&i| s.state.lock(i)).collect();
    let ks = |i: u32| &spaces[space_of(i)];
    let tx = db.transaction_with(TransactionOptions { sync: rng.gen_bool(s.sync_fraction), ..Default::default() });
    let w = Window::open();
    let mut read = Vec::with_capacity(indices.len());
    for &i in indices {
        let v = tx.keyspace(ks(i)).get_for_update(key_of(i)).map_err(|e| format!("get_for_update of key {i}: {e}"))?;
        read.push(Found::of(i, v.as_deref()));
    }
    let w = w.close();
    for ((&i, key), found) in indices.iter().zip(&locks).zip(&read) {
        check_read(s, i, key.slot(), found, w, "a transaction's get_for_update");
    }
    let at_snapshot: Vec<Slot> = locks.iter().map(|k| k.slot()).collect();
    // A write from outside, after the snapshot, to one of its keys.
    let interfered = if rng.gen_bool(INTERFERE) {
        let j = rng.gen_range(0..indices.len());
        let i = indices[j];
        let op = s.state.next_id()?;
        let pending = locks[j].slot().with_pending(Write::Put(op));
        locks[j].set(pending)?;
        ks(i).put(key_of(i), value_of(i, op)).map_err(|e| format!("put op {op} on key {i}: {e}"))?;
        let landed = locks[j].slot().landed();
        locks[j].set(landed)?;
        let w = Window::open();
        let v = tx.keyspace(ks(i)).get(key_of(i)).map_err(|e| format!("transaction get of key {i}: {e}"))?;
        let w = w.close();
        let found = Found::of(i, v.as_deref());
        if !found.as_state().is_some_and(|f| at_snapshot[j].allows(f, w)) {
            s.diverged(Divergence::key(
                i,
                format!(
                    "a transaction read {found} after op {op} wrote the key outside it; its snapshot held {}",
                    at_snapshot[j]
                ),
            ));
        }
        Some((i, op))
    } else {
        None
    };
    // Its writes, and its reads of them.
    let op = s.state.next_id()?;
    let mut writes = Vec::with_capacity(indices.len());
    for &i in indices {
        let txks = tx.keyspace(ks(i));
        let (write, until) = match rng.gen_range(0..10) {
            0..2 => (Write::Delete(op), None),
            2..4 => (Write::Put(op), Some(draw_deadline(rng))),
            _ => (Write::Put(op), None),
        };
        let done = match (write, until) {
            (Write::Put(id), None) => txks.put(key_of(i), value_of(i, id)),
            (Write::Put(id), Some(d)) => txks.put_with_expiry(key_of(i), value_of(i, id), time_of(d)),
            (Write::Delete(_), _) => txks.delete(key_of(i)),
        };
        done.map_err(|e| format!("transaction write op {op} on key {i}: {e}"))?;
        writes.push((write, until));
    }
    for (&i, &(write, until)) in indices.iter().zip(&writes) {
        let w = Window::open();
        let v = tx.keyspace(ks(i)).get(key_of(i)).map_err(|e| format!("transaction get of key {i}: {e}"))?;
        let w = w.close();
        let found = Found::of(i, v.as_deref());
        let own = Slot::settled_until(Some(write), until);
        if !found.as_state().is_some_and(|f| own.allows(f, w)) {
            s.diverged(Divergence::key(i, format!("a transaction read {found} back from its own write {own}")));
        }
    }
    if rng.gen_bool(ROLL_BACK) {
        tx.rollback();
        s.counters.saw(Event::RolledBack, 1);
        // Nothing of it may appear: each key holds what it held before.
        for (&i, key) in indices.iter().zip(&locks) {
            let w = Window::open();
            let v = ks(i).get(key_of(i)).map_err(|e| format!("get of key {i}: {e}"))?;
            let w = w.close();
            check_read(s, i, key.slot(), &Found::of(i, v.as_deref()), w, "a get after a transaction rolled back");
        }
        return Ok(());
    }
    for (key, &(write, until)) in locks.iter_mut().zip(&writes) {
        let pending = key.slot().with_pending_until(write, until);
        key.set(pending)?;
    }
    match tx.commit() {
        Ok(()) => {
            s.counters.saw(Event::Committed, 1);
            s.counters.saw(Event::ExpiringWrite, writes.iter().filter(|(_, u)| u.is_some()).count() as u64);
            if let Some((i, other)) = interfered {
                s.diverged(Divergence::op(
                    op,
                    format!("a transaction committed though op {other} wrote its key {i} after its snapshot"),
                ));
            }
            for key in &mut locks {
                let landed = key.slot().landed();
                key.set(landed)?;
            }
        }
        Err(e) if e.is_conflict() => {
            // Nothing of it was written.
            s.counters.saw(Event::Conflict, 1);
            for key in &mut locks {
                let unwound = key.slot().unwound();
                key.set(unwound)?;
            }
        }
        // The slots stay pending: the commit may or may not have landed.
        Err(e) => return Err(format!("commit of transaction op {op} on keys {indices:?}: {e}").into()),
    }
    Ok(())
}
