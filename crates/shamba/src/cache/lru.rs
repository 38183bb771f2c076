//! A slab of entries threaded on intrusive, index-linked LRU lists.
//!
//! Entries live in one `Vec` of slots and are linked by slot index, so moving an entry to
//! the head of a list, or from one list to another, is a handful of index writes and never
//! allocates. A slot belongs to at most one list at a time; freed slots are reused.
//!
//! Invariants (kept by every method, checked by the tests): a list's `head` has no `prev`,
//! its `tail` has no `next`, following `next` from `head` visits exactly `len` linked slots
//! and ends at `tail`.

/// "No slot": the end of a list.
const NIL: u32 = u32::MAX;

/// One slot: an entry (or nothing, when free) and its links.
struct Slot<T> {
    entry: Option<T>,
    prev: u32,
    next: u32,
}

/// The ends of one list. Head is the most recently used entry, tail the least.
#[derive(Debug)]
pub(super) struct LruList {
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for LruList {
    fn default() -> Self {
        LruList { head: NIL, tail: NIL, len: 0 }
    }
}

impl LruList {
    /// The least recently used slot, if any.
    pub(super) fn tail(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// Entries on the list.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

/// Slot storage for entries of type `T`.
pub(super) struct LruSlab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Default for LruSlab<T> {
    fn default() -> Self {
        LruSlab { slots: Vec::new(), free: Vec::new() }
    }
}

impl<T> LruSlab<T> {
    /// Store `entry` in a free slot (not on any list yet) and return its index; `None`
    /// (the entry dropped) when the slab already holds 2^32 - 1 entries, the most a `u32`
    /// index other than `NIL` can name.
    pub(super) fn alloc(&mut self, entry: T) -> Option<u32> {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = Slot { entry: Some(entry), prev: NIL, next: NIL };
            return Some(i);
        }
        let i = u32::try_from(self.slots.len()).ok().filter(|&i| i != NIL)?;
        self.slots.push(Slot { entry: Some(entry), prev: NIL, next: NIL });
        Some(i)
    }

    /// Take the entry out of slot `i` and free the slot. The slot must be unlinked.
    pub(super) fn release(&mut self, i: u32) -> Option<T> {
        let slot = &mut self.slots[i as usize];
        debug_assert!(slot.prev == NIL && slot.next == NIL, "released slot still linked");
        let entry = slot.entry.take();
        if entry.is_some() {
            self.free.push(i);
        }
        entry
    }

    /// The entry in slot `i`.
    pub(super) fn get(&self, i: u32) -> Option<&T> {
        self.slots.get(i as usize).and_then(|s| s.entry.as_ref())
    }

    /// The entry in slot `i`, mutably.
    pub(super) fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.slots.get_mut(i as usize).and_then(|s| s.entry.as_mut())
    }

    /// Link slot `i` at the head of `list`. The slot must be unlinked.
    pub(super) fn push_front(&mut self, list: &mut LruList, i: u32) {
        let old_head = list.head;
        {
            let slot = &mut self.slots[i as usize];
            slot.prev = NIL;
            slot.next = old_head;
        }
        if old_head != NIL {
            self.slots[old_head as usize].prev = i;
        } else {
            list.tail = i;
        }
        list.head = i;
        list.len += 1;
    }

    /// Unlink slot `i` from `list`, which must be the list it is on.
    pub(super) fn unlink(&mut self, list: &mut LruList, i: u32) {
        let (prev, next) = {
            let slot = &mut self.slots[i as usize];
            let links = (slot.prev, slot.next);
            slot.prev = NIL;
            slot.next = NIL;
            links
        };
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            list.head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        list.len -= 1;
    }

    /// Slots of `list` from head (most recent) to tail.
    #[cfg(test)]
    pub(super) fn order(&self, list: &LruList) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = list.head;
        while i != NIL {
            out.push(i);
            i = self.slots[i as usize].next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_unlink_and_reuse_keep_lists_consistent() {
        let mut slab = LruSlab::default();
        let mut a = LruList::default();
        let mut b = LruList::default();
        let x = slab.alloc("x").unwrap();
        let y = slab.alloc("y").unwrap();
        let z = slab.alloc("z").unwrap();
        for i in [x, y, z] {
            slab.push_front(&mut a, i);
        }
        assert_eq!(slab.order(&a), vec![z, y, x]);
        assert_eq!(a.tail(), Some(x));

        // Move the middle entry to the other list, then the tail.
        slab.unlink(&mut a, y);
        slab.push_front(&mut b, y);
        assert_eq!(slab.order(&a), vec![z, x]);
        assert_eq!(slab.order(&b), vec![y]);
        slab.unlink(&mut a, x);
        assert_eq!(a.tail(), Some(z));
        assert_eq!((a.len(), b.len()), (1, 1));

        // A freed slot is reused and starts unlinked.
        assert_eq!(slab.release(x), Some("x"));
        assert!(slab.get(x).is_none());
        let w = slab.alloc("w").unwrap();
        assert_eq!(w, x);
        slab.push_front(&mut a, w);
        assert_eq!(slab.order(&a), vec![w, z]);
        slab.unlink(&mut a, w);
        slab.unlink(&mut a, z);
        assert_eq!(a.tail(), None);
        assert!(slab.order(&a).is_empty());
    }
}
