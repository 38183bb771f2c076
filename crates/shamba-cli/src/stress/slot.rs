//! One key's expected state: the write that made its current state, and the write in
//! flight, each with the deadline its put was given (if it expires).
//!
//! A slot is three `u64`s in the expected-state file: two 32-bit writes, then the two
//! deadlines (milliseconds since the Unix epoch, 0 for none):
//!
//! | bits | field |
//! |---|---|
//! | 0..31 | op id of the last acknowledged write (0: never written) |
//! | 31 | that write was a delete |
//! | 32..63 | op id of the write in flight (0: none) |
//! | 63 | the write in flight is a delete |
//! | 64..127 | deadline of the last acknowledged write |
//! | 128..191 | deadline of the write in flight |
//!
//! A write sets its key's pending write before it calls the database and moves it to the
//! last write once the database acknowledged. After a kill the database may hold the last
//! write's outcome or the pending write's, nothing else. Op ids are unique, so every write
//! changes its value id or its deadline: a slot read twice unchanged, with nothing in
//! flight, means no write happened in between. (`expire` and `persist` keep a key's value,
//! so its value id, and change only its deadline.)
//!
//! A put that expires is found by a read made before its deadline and not by one made at
//! or after it; the reader knows only the window its read ran in (`Window`), so a read
//! whose window holds the deadline may find either, and a few milliseconds of slack
//! (`SLACK_MS`) on both sides absorb the rounding of clock reads to milliseconds.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds of slack around a deadline: a read this close to it may find either state.
pub const SLACK_MS: u64 = 5;

/// The wall-clock time now, in milliseconds since the Unix epoch (the engine's default
/// clock, `SystemClock`, reads the same).
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// The wall-clock window a read ran in, in milliseconds since the Unix epoch: taken just
/// before it started and just after it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: u64,
    pub to: u64,
}

impl Window {
    /// A window that starts now; `close` ends it.
    pub fn open() -> Window {
        let now = now_ms();
        Window { from: now, to: now }
    }

    /// The window, ended now.
    pub fn close(self) -> Window {
        Window { from: self.from, to: now_ms().max(self.from) }
    }
}

/// Op ids (and so value ids) fit in 31 bits, next to the delete flag.
pub const MAX_OP_ID: u32 = (1 << 31) - 1;

const DELETE_FLAG: u32 = 1 << 31;

/// One write to a key, by op id (a put's value id is its op id; every key of one batch
/// carries the batch's op id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Sets the key to value id `.0`.
    Put(u32),
    /// Deletes the key; `.0` is the op id.
    Delete(u32),
}

impl Write {
    /// The op this write belongs to.
    pub fn op(self) -> u32 {
        match self {
            Write::Put(op) | Write::Delete(op) => op,
        }
    }

    /// The key's state once the write landed: a value id, or `None` for absent.
    pub fn outcome(self) -> Option<u32> {
        match self {
            Write::Put(id) => Some(id),
            Write::Delete(_) => None,
        }
    }

    fn encode(write: Option<Write>) -> u32 {
        match write {
            None => 0,
            Some(Write::Put(op)) => op,
            Some(Write::Delete(op)) => op | DELETE_FLAG,
        }
    }

    fn decode(raw: u32) -> Result<Option<Write>, String> {
        match (raw & MAX_OP_ID, raw & DELETE_FLAG != 0) {
            (0, false) => Ok(None),
            (0, true) => Err("a delete without an op id".to_string()),
            (op, false) => Ok(Some(Write::Put(op))),
            (op, true) => Ok(Some(Write::Delete(op))),
        }
    }
}

/// Whether a read in window `w` may find `state` (a value id, or `None` for absent) when
/// the key's last write was `write` with deadline `until`.
pub fn may_read(write: Option<Write>, until: Option<u64>, state: Option<u32>, w: Window) -> bool {
    match (write.and_then(Write::outcome), until) {
        (None, _) => state.is_none(),
        (Some(id), None) => state == Some(id),
        (Some(id), Some(d)) => match state {
            Some(found) => found == id && w.from < d + SLACK_MS,
            None => w.to + SLACK_MS >= d,
        },
    }
}

/// A key's expected state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    /// The last acknowledged write; `None`: never written.
    pub last: Option<Write>,
    /// The write in flight.
    pub pending: Option<Write>,
    /// The deadline of the last write's put (ms since the Unix epoch); `None`: it does not
    /// expire.
    pub last_until: Option<u64>,
    /// The deadline of the write in flight's put.
    pub pending_until: Option<u64>,
}

impl Slot {
    /// The acknowledged value id (whether or not it expired since), or `None` for absent.
    pub fn value(&self) -> Option<u32> {
        self.last.and_then(Write::outcome)
    }

    /// This slot with `write` in flight.
    pub fn with_pending(self, write: Write) -> Slot {
        self.with_pending_until(write, None)
    }

    /// This slot with `write` in flight, its put expiring at `until`.
    pub fn with_pending_until(self, write: Write, until: Option<u64>) -> Slot {
        Slot { pending: Some(write), pending_until: until, ..self }
    }

    /// A key whose last write, `write`, was acknowledged.
    pub fn settled(write: Option<Write>) -> Slot {
        Slot::settled_until(write, None)
    }

    /// A key whose last write, `write`, expiring at `until`, was acknowledged.
    pub fn settled_until(write: Option<Write>, until: Option<u64>) -> Slot {
        Slot { last: write, pending: None, last_until: until, pending_until: None }
    }

    /// The slot with its write in flight dropped (it did not happen).
    pub fn unwound(self) -> Slot {
        Slot::settled_until(self.last, self.last_until)
    }

    /// The slot with its write in flight acknowledged (itself if none is).
    pub fn landed(self) -> Slot {
        match self.pending {
            Some(p) => Slot::settled_until(Some(p), self.pending_until),
            None => self,
        }
    }

    /// Whether a read in window `w` may find `state` (a value id, or `None` for absent):
    /// the acknowledged state or the one the write in flight leaves, each live or expired
    /// as its deadline and the window allow.
    pub fn allows(&self, state: Option<u32>, w: Window) -> bool {
        self.allows_last(state, w) || self.allows_pending(state, w)
    }

    /// Whether the acknowledged state alone explains `state` read in `w`.
    pub fn allows_last(&self, state: Option<u32>, w: Window) -> bool {
        may_read(self.last, self.last_until, state, w)
    }

    /// Whether the write in flight, had it landed, explains `state` read in `w`.
    pub fn allows_pending(&self, state: Option<u32>, w: Window) -> bool {
        self.pending.is_some_and(|p| may_read(Some(p), self.pending_until, state, w))
    }

    /// The largest op id this slot mentions.
    pub fn max_id(&self) -> u32 {
        self.last.map_or(0, Write::op).max(self.pending.map_or(0, Write::op))
    }

    /// The file encoding.
    pub fn encode(self) -> [u8; SLOT_BYTES] {
        let word = u64::from(Write::encode(self.last)) | (u64::from(Write::encode(self.pending)) << 32);
        let mut out = [0u8; SLOT_BYTES];
        for (at, v) in [word, self.last_until.unwrap_or(0), self.pending_until.unwrap_or(0)].into_iter().enumerate() {
            if let Some(dst) = out.get_mut(8 * at..8 * at + 8) {
                dst.copy_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Decode a slot, or say why it is not one the tool writes.
    pub fn decode(raw: &[u8; SLOT_BYTES]) -> Result<Slot, String> {
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(raw.get(8 * at..8 * at + 8).unwrap_or(&[0; 8]));
            u64::from_le_bytes(b)
        };
        let deadline = |v: u64| (v != 0).then_some(v);
        let slot = Slot {
            last: Write::decode(word(0) as u32)?,
            pending: Write::decode((word(0) >> 32) as u32)?,
            last_until: deadline(word(1)),
            pending_until: deadline(word(2)),
        };
        if slot.last_until.is_some() && slot.value().is_none()
            || slot.pending_until.is_some() && slot.pending.and_then(Write::outcome).is_none()
        {
            return Err("a deadline on a write that is not a put".to_string());
        }
        Ok(slot)
    }
}

/// Bytes of one slot in the file.
pub const SLOT_BYTES: usize = 24;

/// A key state as text: "absent" or "value id N".
pub struct State(pub Option<u32>);

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => write!(f, "absent"),
            Some(id) => write!(f, "value id {id}"),
        }
    }
}

/// A deadline as text: milliseconds since the Unix epoch, and how far from now.
pub struct Until(pub u64);

impl fmt::Display for Until {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let now = now_ms();
        match self.0.cmp(&now) {
            std::cmp::Ordering::Greater => write!(f, "{} ms (in {} ms)", self.0, self.0 - now),
            _ => write!(f, "{} ms ({} ms ago)", self.0, now - self.0),
        }
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", State(self.value()))?;
        if let Some(d) = self.last_until {
            write!(f, " until {}", Until(d))?;
        }
        if let Some(p) = self.pending {
            write!(f, " or, had write op {} landed, {}", p.op(), State(p.outcome()))?;
            if let Some(d) = self.pending_until {
                write!(f, " until {}", Until(d))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_shape_round_trips_through_its_encoding() {
        for slot in [
            Slot::default(),
            Slot::settled(Some(Write::Put(MAX_OP_ID))),
            Slot::settled(Some(Write::Delete(5))),
            Slot::settled(Some(Write::Put(3))).with_pending(Write::Put(MAX_OP_ID)),
            Slot::default().with_pending(Write::Delete(9)),
            Slot::settled_until(Some(Write::Put(3)), Some(1_000)).with_pending_until(Write::Put(3), Some(2_000)),
        ] {
            assert_eq!(Slot::decode(&slot.encode()), Ok(slot));
        }
        let mut delete = [0u8; SLOT_BYTES];
        delete[..4].copy_from_slice(&DELETE_FLAG.to_le_bytes());
        assert!(Slot::decode(&delete).is_err());
        let mut deadline_on_nothing = [0u8; SLOT_BYTES];
        deadline_on_nothing[8] = 1;
        assert!(Slot::decode(&deadline_on_nothing).is_err());
    }

    #[test]
    fn a_pending_write_allows_the_old_or_the_new_state_only() {
        let w = Window::open().close();
        let s = Slot::settled(Some(Write::Put(4))).with_pending(Write::Delete(7));
        assert!(s.allows(Some(4), w) && s.allows(None, w));
        assert!(!s.allows(Some(7), w) && !s.allows(Some(3), w));
        assert!(!Slot::settled(Some(Write::Put(4))).allows(None, w));
    }

    #[test]
    fn settling_keeps_the_deadline_of_the_write_that_won() {
        let s = Slot::settled_until(Some(Write::Put(3)), Some(1_000)).with_pending_until(Write::Put(3), None);
        assert_eq!(s.landed(), Slot::settled_until(Some(Write::Put(3)), None), "a persist that landed");
        assert_eq!(s.unwound(), Slot::settled_until(Some(Write::Put(3)), Some(1_000)), "one that did not");
        let quiet = Slot::settled_until(Some(Write::Put(3)), Some(1_000));
        assert_eq!(quiet.landed(), quiet);
    }

    #[test]
    fn an_expiring_put_is_found_before_its_deadline_and_not_after_with_slack_between() {
        let s = Slot::settled_until(Some(Write::Put(4)), Some(1_000));
        let at = |from, to| Window { from, to };
        assert!(s.allows(Some(4), at(900, 950)) && !s.allows(None, at(900, 950)), "well before: found only");
        assert!(s.allows(None, at(1_100, 1_200)) && !s.allows(Some(4), at(1_100, 1_200)), "well after: gone only");
        assert!(s.allows(Some(4), at(990, 1_001)) && s.allows(None, at(990, 1_001)), "across it: either");
        assert!(s.allows(None, at(998, 998)), "within the slack: either");
    }
}
