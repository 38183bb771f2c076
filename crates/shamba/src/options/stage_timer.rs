//! The stage clock of a lookup: where a profiled lookup spends its time.
//!
//! Profiling is a lab knob (`ReadLab::profile`). Without the `lab` feature a
//! [`StageTimer`] holds nothing and its [`start`](StageTimer::start) and
//! [`nanos_since`](StageTimer::nanos_since) are empty inlined functions: the production
//! lookup reads no clock and tests no flag. With the feature, each lookup turns it on or
//! off at its entry, and a stage costs a well-predicted branch when it is off and two
//! clock reads when it is on.

/// When a stage started: nothing without the `lab` feature (a zero-sized value), and
/// with it `None` when the lookup is not profiled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StageStart {
    #[cfg(feature = "lab")]
    at: Option<std::time::Instant>,
}

/// Whether a lookup times its stages (into `Stats::lookup_costs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StageTimer {
    #[cfg(feature = "lab")]
    on: bool,
}

impl StageTimer {
    /// A timer that times nothing: every lookup of a build without the `lab` feature.
    #[cfg(any(test, not(feature = "lab")))]
    pub(crate) const OFF: StageTimer = StageTimer {
        #[cfg(feature = "lab")]
        on: false,
    };

    /// A timer that times stages if `on`.
    #[cfg(feature = "lab")]
    #[inline(always)]
    pub(crate) fn new(on: bool) -> StageTimer {
        StageTimer { on }
    }

    /// Whether stages are timed.
    #[inline(always)]
    pub(crate) fn is_on(self) -> bool {
        #[cfg(feature = "lab")]
        return self.on;
        #[cfg(not(feature = "lab"))]
        false
    }

    /// Start timing a stage.
    #[inline(always)]
    pub(crate) fn start(self) -> StageStart {
        StageStart {
            #[cfg(feature = "lab")]
            at: self.on.then(std::time::Instant::now),
        }
    }

    /// Nanoseconds since `start` (0 when not timed).
    #[inline(always)]
    pub(crate) fn nanos_since(self, start: StageStart) -> u64 {
        #[cfg(feature = "lab")]
        return start.at.map_or(0, |at| at.elapsed().as_nanos() as u64);
        #[cfg(not(feature = "lab"))]
        {
            let StageStart {} = start;
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_off_timer_measures_nothing() {
        let t = StageTimer::OFF;
        assert!(!t.is_on());
        let start = t.start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(t.nanos_since(start), 0);
    }

    #[cfg(not(feature = "lab"))]
    #[test]
    fn without_the_lab_feature_a_timer_is_nothing() {
        assert_eq!(std::mem::size_of::<StageTimer>(), 0);
        assert_eq!(std::mem::size_of::<StageStart>(), 0);
    }

    #[cfg(feature = "lab")]
    #[test]
    fn an_on_timer_measures_the_stage() {
        let t = StageTimer::new(true);
        let start = t.start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(t.nanos_since(start) >= 2_000_000);
    }
}
