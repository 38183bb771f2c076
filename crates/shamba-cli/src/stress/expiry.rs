//! Expiry in the mix: the deadlines puts are given (short enough that keys really expire
//! during a run and across kill cycles), and `expire` / `persist`, which keep a key's value
//! (so its value id) and change only its deadline.

use super::counters::Event;
use super::divergence::Divergence;
use super::slot::{now_ms, Window, Write};
use super::spaces::space_of;
use super::values::key_of;
use super::workers::Shared;
use rand::rngs::StdRng;
use rand::Rng;
use shamba::Keyspace;
use std::error::Error;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// A deadline from now, in milliseconds since the Unix epoch: half within 300 ms (gone
/// before the next few operations on the key), most of the rest within 3 s (gone within a
/// kill cycle or two), a few within 30 s (they outlive several cycles).
pub fn draw_deadline(rng: &mut StdRng) -> u64 {
    let ttl = match rng.gen_range(0..10) {
        0..5 => rng.gen_range(20..300),
        5..9 => rng.gen_range(300..3_000),
        _ => rng.gen_range(3_000..30_000),
    };
    now_ms() + ttl
}

/// A deadline in milliseconds since the Unix epoch as a time (whole milliseconds, so the
/// engine stores exactly this deadline).
pub fn time_of(deadline_ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(deadline_ms)
}

/// `expire` (with `expire`, to a drawn deadline) or `persist` key `index`, holding its lock:
/// the engine's answer (whether it found a value to change) must fit the key's expected
/// state at the time of the call, and the new deadline is recorded only when it did.
pub fn rewrite_deadline(spaces: &[Keyspace], s: &Shared, rng: &mut StdRng, index: u32, expire: bool) -> Res<()> {
    let mut key = s.state.lock(index);
    let before = key.slot();
    let ks = &spaces[space_of(index)];
    let to = expire.then(|| draw_deadline(rng));
    if let Some(id) = before.value() {
        // In flight: the same value with the new deadline; a kill may leave either.
        key.set(before.with_pending_until(Write::Put(id), to))?;
    }
    let name = if expire { "expire" } else { "persist" };
    let w = Window::open();
    let result = match to {
        Some(d) => ks.expire(key_of(index), super::expiry::time_of(d)),
        None => ks.persist(key_of(index)),
    };
    let w = w.close();
    let changed = match result {
        Ok(changed) => changed,
        Err(e) if e.is_conflict() => {
            s.counters.saw(Event::Conflict, 1);
            key.set(before)?;
            return Ok(());
        }
        // The slot stays pending: the change may or may not have landed.
        Err(e) => return Err(format!("{name} of key {index}: {e}").into()),
    };
    let live = before.value().is_some() && before.allows_last(before.value(), w);
    let gone = before.allows_last(None, w);
    // `persist` also answers false for a live key without a deadline.
    let unchanged_ok = gone || (!expire && before.last_until.is_none());
    if (changed && !live) || (!changed && !unchanged_ok) {
        s.diverged(Divergence::key(
            index,
            format!("{name} answered {changed}, but the key held {before} (called within {w:?})"),
        ));
    }
    key.set(if changed { key.slot().landed() } else { before })?;
    if changed && to.is_some() {
        s.counters.saw(Event::ExpiringWrite, 1);
    }
    Ok(())
}
