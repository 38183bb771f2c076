//! Failed accepts, reported without flooding the log. An accept fails mostly when the
//! process is out of descriptors; the listener stays and the accept is retried after a
//! short wait, and while it keeps failing one line a second says so and how often.

use std::time::{Duration, Instant};

/// Wait before accepting again after a failure.
pub(crate) const RETRY_AFTER: Duration = Duration::from_millis(10);

/// Least time between two lines about failed accepts.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// Failures seen since the last line about them.
#[derive(Debug, Default)]
pub(crate) struct AcceptFailures {
    last_report: Option<Instant>,
    unreported: u64,
}

impl AcceptFailures {
    /// An accept failed with `error` while `connected` clients were served: the line to log
    /// now, if one is due.
    pub(crate) fn failed(&mut self, error: &std::io::Error, connected: usize, now: Instant) -> Option<String> {
        self.unreported += 1;
        if self.last_report.is_some_and(|t| now.duration_since(t) < REPORT_EVERY) {
            return None;
        }
        let line = if self.unreported == 1 {
            format!("accept failed: {error} ({connected} clients connected; retrying)")
        } else {
            format!(
                "accept failed {} times in the last second: {error} ({connected} clients connected; retrying)",
                self.unreported
            )
        };
        self.last_report = Some(now);
        self.unreported = 0;
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_second_says_how_many_accepts_failed() {
        let mut f = AcceptFailures::default();
        let e = std::io::Error::from_raw_os_error(24);
        let t0 = Instant::now();
        let first = f.failed(&e, 7, t0).unwrap();
        assert!(first.starts_with("accept failed: ") && first.contains("7 clients connected"), "{first}");
        for i in 1..100 {
            assert_eq!(f.failed(&e, 7, t0 + Duration::from_millis(i)), None);
        }
        let next = f.failed(&e, 7, t0 + Duration::from_secs(1)).unwrap();
        assert!(next.starts_with("accept failed 100 times in the last second"), "{next}");
    }
}
