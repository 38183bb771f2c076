//! Whole-database verification against the expected state, while nothing writes: every
//! key by `get`, then one full scan (forward or backward), then the writes a kill cut off
//! are settled to what the database turned out to hold.
//!
//! What is checked:
//! - a key with no write in flight holds exactly its acknowledged state (value id, or
//!   absent): nothing acknowledged may be lost, sync or not, since the engine promises that
//!   an unsynced write survives a process crash (it is in the OS before it is acknowledged);
//!   a put with a deadline is found before it and not after (`slot::Window`);
//! - a key whose write was in flight holds its old state or the write's outcome, nothing
//!   else;
//! - a batch or transaction cut off by the kill landed on all of its keys or on none (keys
//!   whose old and new states both explain what was read say nothing either way);
//! - an `expire` or `persist` cut off by the kill left the old deadline or the new one, as
//!   the key's time to live tells;
//! - the full scan returns the keys `get` found, in order, with the same values, and no
//!   other key (but for keys whose deadline passed in between).

use super::divergence::{Divergence, Divergences};
use super::expected::ExpectedState;
use super::slot::{Slot, State, Window, SLACK_MS};
use super::spaces::{handles, merged_range, space_of, ScanError, Source};
use super::values::{index_of, key_of, Found};
use crate::admin::show;
use shamba::{Db, Keyspace, Readable, Ttl};
use std::collections::BTreeMap;
use std::error::Error;

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// What one verification saw.
#[derive(Debug, Default)]
pub struct Verified {
    /// Keys read by `get`.
    pub keys: u64,
    /// Pairs the full scan returned.
    pub scanned: u64,
    /// Keys whose write was cut off and is now settled.
    pub settled: u64,
    /// Of those, the writes that had landed.
    pub landed: u64,
}

/// The keys of one cut-off op, by whether its write landed on them.
#[derive(Default)]
struct CutOp {
    landed: Vec<u32>,
    lost: Vec<u32>,
}

/// Verify every key of `db`; settle cut-off writes in `state` if nothing diverged.
/// Engine errors are returned as errors; wrong contents are recorded in `out`.
pub fn verify_all(db: &Db, state: &ExpectedState, backward: bool, out: &Divergences) -> Res<Verified> {
    let mut seen = Verified::default();
    let before = out.count();
    let keys = state.keys();
    // What each key holds according to `get` (its expected state where `get` diverged).
    let mut holds: Vec<Option<u32>> = Vec::with_capacity(keys as usize);
    // The earliest deadline a held value may have: the scan may miss it past that.
    let mut vanish: Vec<Option<u64>> = Vec::with_capacity(keys as usize);
    // For a key with a write in flight: whether it landed, where what was read tells.
    let mut landed_on: Vec<Option<bool>> = vec![None; keys as usize];
    let mut cut: BTreeMap<u32, CutOp> = BTreeMap::new();
    let spaces = handles(db)?;
    for index in 0..keys {
        let slot = state.peek(index);
        let ks = &spaces[space_of(index)];
        let w = Window::open();
        let value = ks.get(key_of(index)).map_err(|e| format!("get of key {index} during verification: {e}"))?;
        let w = w.close();
        let found = Found::of(index, value.as_deref());
        seen.keys += 1;
        match found.as_state() {
            Some(s) if slot.allows(s, w) => {
                holds.push(s);
                let (by_last, by_pending) = (slot.allows_last(s, w), slot.allows_pending(s, w));
                let deadlines = [(by_last, slot.last_until), (by_pending, slot.pending_until)];
                vanish.push(deadlines.iter().filter(|(by, _)| *by).filter_map(|(_, d)| *d).min());
                let Some(p) = slot.pending else { continue };
                if p.outcome() != slot.value() {
                    let op = cut.entry(p.op()).or_default();
                    match (by_last, by_pending) {
                        (false, true) => op.landed.push(index),
                        (true, false) => op.lost.push(index),
                        _ => {}
                    }
                }
                // What was read tells, when only one of the two states explains it (an
                // `expire` in flight whose deadline has passed, on a key that had none:
                // absent says it landed); else, for an `expire` or `persist`, the time to
                // live does; else its op's other keys do (below).
                landed_on[index as usize] = if by_last != by_pending {
                    Some(by_pending)
                } else if p.outcome() != slot.value() {
                    None
                } else if slot.last_until != slot.pending_until {
                    deadline_landed(ks, index, &slot, s, out)?
                } else {
                    Some(true)
                };
            }
            _ => {
                out.record(Divergence::key(index, format!("get found {found}, expected {slot}, read within {w:?}")));
                holds.push(slot.value());
                vanish.push(None);
            }
        }
    }
    for (op, keys) in &cut {
        if !keys.landed.is_empty() && !keys.lost.is_empty() {
            out.record(Divergence::op(
                *op,
                format!("a batch cut off by the kill landed on keys {:?} but not on keys {:?}", keys.landed, keys.lost),
            ));
        }
    }
    seen.scanned = scan_matches(&spaces, &holds, &vanish, backward, out)?;
    // The files themselves: every block checksum, key order, the manifest's records.
    let report = db.verify().map_err(|e| format!("verify could not run: {e}"))?;
    for problem in report.problems() {
        out.record(Divergence::files(format!("Db::verify found damage: {problem}")));
    }
    if out.count() == before {
        for (index, holds) in (0..keys).zip(&holds) {
            let mut key = state.lock(index);
            let slot = key.slot();
            if let Some(p) = slot.pending {
                seen.settled += 1;
                // Where what was read could not tell, the other keys of its op do (a key
                // of an op no key could tell about: either choice reads the same).
                let landed = landed_on[index as usize]
                    .unwrap_or_else(|| cut.get(&p.op()).is_some_and(|op| !op.landed.is_empty()));
                seen.landed += u64::from(landed && slot.value() != *holds);
                key.set(if landed { slot.landed() } else { slot.unwound() })?;
            }
        }
    }
    Ok(seen)
}

/// Whether the `expire` or `persist` in flight on key `index` (whose value `get` found:
/// `value`) landed, by the key's time to live: its deadline is the old one or the new one.
/// `None` when both fit (or the key expired since, which either explains).
fn deadline_landed(ks: &Keyspace, index: u32, slot: &Slot, value: Option<u32>, out: &Divergences) -> Res<Option<bool>> {
    if value.is_none() {
        return Ok(None);
    }
    let w = Window::open();
    let ttl = ks.ttl(key_of(index)).map_err(|e| format!("ttl of key {index} during verification: {e}"))?;
    let w = w.close();
    // The deadline the engine holds, by what it said was left at some time in `w`.
    let fits = |until: Option<u64>| match (ttl, until) {
        (Ttl::Persistent, None) => true,
        (Ttl::Remaining(left), Some(d)) => {
            let left = left.as_millis() as u64;
            w.from + left <= d + SLACK_MS && d <= w.to + left + SLACK_MS
        }
        (Ttl::Absent, Some(d)) => w.to + SLACK_MS >= d,
        _ => false,
    };
    match (fits(slot.last_until), fits(slot.pending_until)) {
        (true, false) => Ok(Some(false)),
        (false, true) => Ok(Some(true)),
        (true, true) => Ok(None),
        (false, false) => {
            out.record(Divergence::key(
                index,
                format!("its time to live is {ttl:?} (read within {w:?}), expected {slot}"),
            ));
            Ok(None)
        }
    }
}

/// One full scan of `db` against what `get` found (where `get` diverged, the expected
/// state); a key whose value may have expired since (`vanish`: its earliest deadline) may
/// be missing. Returns the pairs it returned.
fn scan_matches(
    spaces: &[Keyspace],
    holds: &[Option<u32>],
    vanish: &[Option<u64>],
    backward: bool,
    out: &Divergences,
) -> Res<u64> {
    let direction = if backward { "backward" } else { "forward" };
    // Every keyspace walked whole, merged in key order.
    let merged = merged_range(spaces, Source::Now, b"", None, backward);
    // The walk is over when `merged_range` returns: a deadline before now may have hidden a key.
    let scan_end = super::slot::now_ms();
    let items = match merged {
        Ok(items) => items,
        Err(ScanError::Diverged(divergence)) => {
            out.record(Divergence::scan(format!("the full {direction} scan: {divergence}")));
            return Ok(0);
        }
        Err(ScanError::Engine(e)) => return Err(format!("full {direction} scan: {e}").into()),
    };
    // Indices in the walk's order; `next` is the next index the walk may return.
    let order: Box<dyn Fn(usize) -> usize> =
        if backward { Box::new(move |i| holds.len() - 1 - i) } else { Box::new(|i| i) };
    let mut next = 0usize;
    let mut pairs = 0u64;
    let missing_before = |upto: usize, next: &mut usize, out: &Divergences| {
        while *next < upto {
            let index = order(*next);
            let expired = vanish[index].is_some_and(|d| scan_end + SLACK_MS >= d);
            if let Some(id) = holds[index].filter(|_| !expired) {
                out.record(Divergence::key(
                    index as u32,
                    format!("the full {direction} scan skipped it, expected {}", State(Some(id))),
                ));
            }
            *next += 1;
        }
    };
    for (key, value) in items {
        pairs += 1;
        let Some(index) = index_of(&key).filter(|i| (*i as usize) < holds.len()) else {
            out.record(Divergence::scan(format!(
                "the full {direction} scan returned key {}, which the tool never wrote",
                show(&key)
            )));
            continue;
        };
        let position = order(index as usize);
        if position < next {
            out.record(Divergence::key(index, format!("the full {direction} scan returned it out of order")));
            continue;
        }
        missing_before(position, &mut next, out);
        next = position + 1;
        let found = Found::of(index, Some(&value));
        let expected = holds[index as usize];
        if found.as_state() != Some(expected) {
            out.record(Divergence::key(
                index,
                format!("the full {direction} scan found {found}, expected {}", State(expected)),
            ));
        }
    }
    missing_before(holds.len(), &mut next, out);
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::super::expiry::time_of;
    use super::super::slot::{now_ms, Write};
    use super::super::values::value_of;
    use super::*;

    #[test]
    fn an_expire_cut_off_and_since_past_its_deadline_is_settled_as_landed() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), shamba::Options::default()).unwrap();
        let state = ExpectedState::create(&dir.path().join("state"), 1, 1).unwrap();
        // Key 0 held value id 5 without a deadline; an `expire` to 30 ms from now was in
        // flight when the process died, and it landed.
        let deadline = now_ms() + 30;
        db.put_with_expiry(key_of(0), value_of(0, 5), time_of(deadline)).unwrap();
        let slot = Slot::settled(Some(Write::Put(5))).with_pending_until(Write::Put(5), Some(deadline));
        state.lock(0).set(slot).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(60));
        let out = Divergences::default();
        verify_all(&db, &state, false, &out).unwrap();
        assert_eq!(out.count(), 0);
        assert_eq!(state.peek(0), Slot::settled_until(Some(Write::Put(5)), Some(deadline)), "absent says it landed");
        verify_all(&db, &state, true, &out).unwrap();
        assert_eq!(out.count(), 0, "and the next verification agrees: {:?}", out.first());
    }
}
