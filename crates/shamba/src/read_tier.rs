//! Reads that must not touch a file ([`ReadTier::CacheOnly`]).
//!
//! A point read or an iterator step made with that tier runs inside a [`Scope`], a mark
//! on its thread; the two places where table bytes come from storage (`TableFile`'s reads,
//! and the table cache opening a table) ask [`check`] first and answer
//! [`Error::WouldBlock`] inside one. A mark on the thread, rather than the option passed
//! down every call, keeps the check in those two places: every path to a file (data
//! blocks, index partitions and filter parts fetched through the block cache, a table
//! opened on first use, a batched read of several blocks) passes through them, and a path
//! added later does too. Every read of a lookup runs on the caller's thread.

use crate::error::{Error, Result};
use crate::options::ReadTier;
use std::cell::Cell;

thread_local! {
    /// Whether this thread is inside a cache-only read.
    static CACHE_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// A cache-only read in progress on this thread, if its tier says so; nesting keeps the
/// outer mark.
pub(crate) struct Scope {
    was: bool,
}

impl Scope {
    /// Enter a read of tier `tier`.
    #[inline]
    pub(crate) fn enter(tier: ReadTier) -> Scope {
        let was = CACHE_ONLY.get();
        if tier == ReadTier::CacheOnly && !was {
            CACHE_ONLY.set(true);
        }
        Scope { was }
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        CACHE_ONLY.set(self.was);
    }
}

/// `Err(WouldBlock(what))` inside a cache-only read: the caller was about to read a file.
#[inline]
pub(crate) fn check(what: &'static str) -> Result<()> {
    if CACHE_ONLY.get() {
        return Err(Error::WouldBlock(what));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cache_only_scope_refuses_and_leaving_it_restores_the_outer_state() {
        assert!(check("x").is_ok());
        {
            let _all = Scope::enter(ReadTier::All);
            assert!(check("x").is_ok());
        }
        {
            let _outer = Scope::enter(ReadTier::CacheOnly);
            assert!(check("a block").is_err_and(|e| e.is_would_block()));
            {
                let _inner = Scope::enter(ReadTier::All);
                assert!(check("x").is_err(), "an inner read of any tier stays cache-only");
            }
            assert!(check("x").is_err());
        }
        assert!(check("x").is_ok());
    }
}
