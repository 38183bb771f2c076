//! The binary's allocator: the system's, with a per-thread count of live heap bytes and
//! their peak while a measurement is armed, so `exp ribbon-hybrid` can report a filter's
//! construction memory (seed 004: temporary bytes per key while a filter is built).
//!
//! Unarmed, an allocation costs one thread-local flag read more than the system's. The
//! counters are the calling thread's own: a measurement sees what its thread allocates and
//! frees, not other threads' allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, metered.
pub struct Meter;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn note(delta: i64) {
    // `try_with`: during thread teardown the slots may be gone; those bytes go uncounted.
    let _ = ARMED.try_with(|armed| {
        if armed.get() {
            let _ = LIVE.try_with(|live| {
                let now = live.get() + delta;
                live.set(now);
                let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
            });
        }
    });
}

// SAFETY: every call forwards to `System` with the caller's layout and pointer unchanged,
// so `System`'s guarantees are this allocator's; the counting touches only const-initialised
// thread-locals, which never allocate. Exercised by `tests::peak_counts_a_vector_built_and_freed`
// and by every allocation of the binary.
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System::alloc`'s. Exercised by `tests::peak_counts_a_vector_built_and_freed`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as i64));
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        // Exercised by `tests::peak_counts_a_vector_built_and_freed`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`. Exercised by `tests::peak_counts_a_vector_built_and_freed`
        // (its zeroed vector).
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as i64);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller's contract is `System`'s.
        // Exercised by `tests::growing_a_vector_counts_its_reallocations`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Run `f` and return its result with the peak of this thread's live heap bytes above
/// where they stood when it began (what `f` held at its fullest, its result included).
pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, u64) {
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    ARMED.with(|a| a.set(true));
    let r = f();
    ARMED.with(|a| a.set(false));
    (r, PEAK.with(Cell::get).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_counts_a_vector_built_and_freed() {
        let (len, peak) = peak_during(|| {
            // black_box: a release build would otherwise drop the unused allocation.
            let scratch = std::hint::black_box(vec![1u8; 1 << 20]);
            let kept = std::hint::black_box(vec![2u8; 1000]);
            drop(scratch);
            kept.len()
        });
        assert_eq!(len, 1000);
        assert!(((1 << 20) + 1000..(1 << 20) + 4096).contains(&peak), "{peak}");
        // Unarmed, nothing is counted.
        let _v = vec![0u8; 1 << 16];
        assert_eq!(peak_during(|| ()).1, 0);
    }

    #[test]
    fn growing_a_vector_counts_its_reallocations() {
        let (len, peak) = peak_during(|| {
            let mut grown = Vec::with_capacity(1);
            for i in 0..100_000u32 {
                grown.push(std::hint::black_box(i as u8));
            }
            std::hint::black_box(&grown).len()
        });
        assert_eq!(len, 100_000);
        // Doubling from one byte: the last capacity (131,072 bytes) is live at the end, and
        // each growth counts only the bytes it adds, so the peak is that capacity.
        assert!((100_000..=2 * 131_072).contains(&peak), "{peak}");
    }
}
