//! `maxclients` fitted to the process's limit on open descriptors, as Redis fits it: each
//! client costs a descriptor (a subscriber two, see `input_probe`), and the database, the
//! listeners and the log need some of their own. At start the soft limit is raised as far
//! as the hard limit allows; when even that is too few, `maxclients` is lowered to what
//! fits and the reason is logged, so the clients over it are refused with Redis's
//! "max number of clients reached" instead of the server running out of descriptors.

/// Descriptors kept for the server's own use beyond those open at start (Redis keeps 32).
pub(crate) const RESERVED: u64 = 32;

/// What fitting decided: the `maxclients` to use and, when it was lowered, why.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fitted {
    pub(crate) maxclients: usize,
    pub(crate) lowered: Option<String>,
}

/// `maxclients` for a process whose descriptor limit is `limit` (after any raise) with
/// `in_use` descriptors open already.
pub(crate) fn fit(maxclients: usize, limit: u64, in_use: u64) -> Fitted {
    let reserved = in_use.saturating_add(RESERVED);
    let need = (maxclients as u64).saturating_add(reserved);
    if limit >= need {
        return Fitted { maxclients, lowered: None };
    }
    let allowed = usize::try_from(limit.saturating_sub(reserved)).unwrap_or(usize::MAX).max(1);
    let lowered = format!(
        "maxclients {maxclients} needs {need} open files ({reserved} kept for the server); the limit is {limit}: \
         maxclients lowered to {allowed} (raise 'ulimit -n' for more)"
    );
    Fitted { maxclients: allowed, lowered: Some(lowered) }
}

/// Raise the soft descriptor limit towards what `maxclients` needs (never above the hard
/// limit) and fit `maxclients` to the result. Where the limit cannot be read, `maxclients`
/// is kept.
pub(crate) fn fit_to_process(maxclients: usize) -> Fitted {
    let in_use = open_descriptors();
    let need = (maxclients as u64).saturating_add(in_use).saturating_add(RESERVED);
    let Some(limit) = raise_soft_limit(need) else {
        return Fitted { maxclients, lowered: None };
    };
    fit(maxclients, limit, in_use)
}

/// Descriptors open in this process now (0 where `/proc` is missing).
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64)
}

/// Raise the soft limit on open descriptors to `want` or the hard limit, whichever is
/// lower (never lowering it); the soft limit in force afterwards.
fn raise_soft_limit(want: u64) -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid, writable rlimit for the call (exercised by
    // `descriptor_limit::tests::the_process_limit_is_read_and_never_lowered`).
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let current = lim.rlim_cur;
    let target = want.min(lim.rlim_max);
    if target <= current {
        return Some(current);
    }
    let raised = libc::rlimit { rlim_cur: target, rlim_max: lim.rlim_max };
    // SAFETY: `raised` is a valid rlimit read for the call; its soft limit is at most the
    // hard one (exercised by `descriptor_limit::tests::the_process_limit_is_read_and_never_lowered`).
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        Some(target)
    } else {
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maxclients_is_kept_when_it_fits_and_lowered_with_a_reason_when_not() {
        assert_eq!(fit(10_000, 1_048_576, 20), Fitted { maxclients: 10_000, lowered: None });
        assert_eq!(fit(10_000, 10_052, 20), Fitted { maxclients: 10_000, lowered: None });
        let f = fit(10_000, 64, 12);
        assert_eq!(f.maxclients, 20, "64 - 12 open - 32 kept");
        let why = f.lowered.unwrap();
        assert!(why.contains("maxclients lowered to 20") && why.contains("the limit is 64"), "{why}");
        assert_eq!(fit(10_000, 30, 12).maxclients, 1, "at least one client");
    }

    #[test]
    fn the_process_limit_is_read_and_never_lowered() {
        let mut before = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: a valid, writable rlimit (exercised by this test,
        // `descriptor_limit::tests::the_process_limit_is_read_and_never_lowered`).
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut before) }, 0);
        let got = raise_soft_limit(1).unwrap();
        assert_eq!(got, before.rlim_cur, "asking for less keeps the limit");
        let f = fit_to_process(1);
        assert_eq!(f.maxclients, 1);
        assert!(open_descriptors() > 0);
    }
}
