//! One key's expected state: the write that made its current state, and the write in
//! flight.
//!
//! A slot is one `u64` in the expected-state file, two 32-bit writes:
//!
//! | bits | field |
//! |---|---|
//! | 0..31 | op id of the last acknowledged write (0: never written) |
//! | 31 | that write was a delete |
//! | 32..63 | op id of the write in flight (0: none) |
//! | 63 | the write in flight is a delete |
//!
//! A write sets its key's pending write before it calls the database and moves it to the
//! last write once the database acknowledged. After a kill the database may hold the last
//! write's outcome or the pending write's, nothing else. Op ids are unique, so every write
//! changes its slot: a slot read twice unchanged, with nothing in flight, means no write
//! happened in between.

use std::fmt;

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

/// A key's expected state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    /// The last acknowledged write; `None`: never written.
    pub last: Option<Write>,
    /// The write in flight.
    pub pending: Option<Write>,
}

impl Slot {
    /// The acknowledged state: a value id, or `None` for absent.
    pub fn value(&self) -> Option<u32> {
        self.last.and_then(Write::outcome)
    }

    /// This slot with `write` in flight.
    pub fn with_pending(self, write: Write) -> Slot {
        Slot { last: self.last, pending: Some(write) }
    }

    /// A key whose last write, `write`, was acknowledged.
    pub fn settled(write: Option<Write>) -> Slot {
        Slot { last: write, pending: None }
    }

    /// Whether the database may hold `state` (a value id, or `None` for absent).
    pub fn allows(&self, state: Option<u32>) -> bool {
        state == self.value() || self.pending.is_some_and(|p| p.outcome() == state)
    }

    /// The largest op id this slot mentions.
    pub fn max_id(&self) -> u32 {
        self.last.map_or(0, Write::op).max(self.pending.map_or(0, Write::op))
    }

    /// The file encoding.
    pub fn encode(self) -> u64 {
        u64::from(Write::encode(self.last)) | (u64::from(Write::encode(self.pending)) << 32)
    }

    /// Decode a slot, or say why it is not one the tool writes.
    pub fn decode(raw: u64) -> Result<Slot, String> {
        Ok(Slot { last: Write::decode(raw as u32)?, pending: Write::decode((raw >> 32) as u32)? })
    }
}

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

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", State(self.value()))?;
        if let Some(p) = self.pending {
            write!(f, " or, had write op {} landed, {}", p.op(), State(p.outcome()))?;
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
        ] {
            assert_eq!(Slot::decode(slot.encode()), Ok(slot));
        }
        assert!(Slot::decode(u64::from(DELETE_FLAG)).is_err());
    }

    #[test]
    fn a_pending_write_allows_the_old_or_the_new_state_only() {
        let s = Slot::settled(Some(Write::Put(4))).with_pending(Write::Delete(7));
        assert!(s.allows(Some(4)) && s.allows(None));
        assert!(!s.allows(Some(7)) && !s.allows(Some(3)));
        assert!(!Slot::settled(Some(Write::Put(4))).allows(None));
    }
}
