//! The atomics and the lock of the reader slots: std's and parking_lot's, or loom's when the
//! slot logic runs under the model checker (`RUSTFLAGS="--cfg loom"`, see `loom.rs`). A
//! build without `--cfg loom` compiles exactly the std and parking_lot types.

#[cfg(not(loom))]
pub(super) use parking_lot::{RwLock, RwLockWriteGuard};
#[cfg(not(loom))]
pub(super) use std::sync::atomic::{AtomicPtr, Ordering};

#[cfg(loom)]
pub(super) use loom::sync::atomic::{AtomicPtr, Ordering};
#[cfg(loom)]
pub(super) use loom_lock::{RwLock, RwLockWriteGuard};

/// The pointer in an atomic its owner holds exclusively (`AtomicPtr::get_mut`).
#[cfg(not(loom))]
#[inline]
pub(super) fn exclusive<T>(atomic: &mut AtomicPtr<T>) -> *mut T {
    *atomic.get_mut()
}

/// The pointer in an atomic its owner holds exclusively (loom's atomics have no `get_mut`).
#[cfg(loom)]
pub(super) fn exclusive<T>(atomic: &mut AtomicPtr<T>) -> *mut T {
    atomic.with_mut(|p| *p)
}

#[cfg(loom)]
mod loom_lock {
    use std::sync::PoisonError;

    /// loom's lock with parking_lot's face: no poisoning (a panic under the model fails the
    /// model anyway).
    pub(crate) struct RwLock<T>(loom::sync::RwLock<T>);

    pub(crate) type RwLockWriteGuard<'a, T> = loom::sync::RwLockWriteGuard<'a, T>;

    impl<T> RwLock<T> {
        pub(crate) fn new(value: T) -> Self {
            RwLock(loom::sync::RwLock::new(value))
        }

        pub(crate) fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
            self.0.read().unwrap_or_else(PoisonError::into_inner)
        }

        pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
            self.0.write().unwrap_or_else(PoisonError::into_inner)
        }
    }
}
