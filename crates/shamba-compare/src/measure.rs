//! Process memory (peak RSS per engine) and progress bars.
//!
//! Peak RSS is a per-process number (`VmHWM`). To give each engine its own peak, the
//! high-water mark is reset (`echo 5 > /proc/self/clear_refs`, Linux >= 4.0) and freed
//! heap returned to the OS (`malloc_trim`) before the engine opens; the engine's peak is
//! `VmHWM` when it finishes, and its growth is that peak minus the RSS at the reset.
//! Memory the allocator keeps from an earlier engine is still counted in the baseline.

use indicatif::{ProgressBar, ProgressStyle};

/// RSS in bytes at the start of an engine's window, and where the peak was reset.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct RssWindow {
    /// `VmRSS` right after the reset.
    pub baseline_bytes: u64,
    /// False if `/proc/self/clear_refs` could not be written: the peak then covers the
    /// whole process run so far.
    pub reset_ok: bool,
}

/// A field of `/proc/self/status` in bytes (the file says kB).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 =
        line.trim_start_matches(field).trim_start_matches(':').trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Current resident set size.
pub fn rss_bytes() -> u64 {
    status_bytes("VmRSS").unwrap_or(0)
}

/// Peak resident set size since the last reset.
pub fn peak_rss_bytes() -> u64 {
    status_bytes("VmHWM").unwrap_or(0)
}

/// `struct timespec` of 64-bit Linux.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `CLOCK_THREAD_CPUTIME_ID` on Linux.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

extern "C" {
    fn malloc_trim(pad: usize) -> i32;
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// CPU seconds (user + system) the calling thread has used. On a loaded machine this is
/// steadier than wall time: it leaves out the time the thread waited for a core. It does
/// not include the engines' background threads.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec with the C layout, and the clock id is a
    // Linux constant. Exercised by `thread_cpu_time_advances_with_work`.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Return free heap to the OS and reset the peak RSS to the current RSS.
pub fn start_window() -> RssWindow {
    // SAFETY: glibc's malloc_trim takes a padding size and only releases free memory (it
    // takes the allocator's own lock). Exercised by `a_window_starts_at_the_current_rss`.
    unsafe {
        malloc_trim(0);
    }
    let reset_ok = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    RssWindow { baseline_bytes: rss_bytes(), reset_ok }
}

/// A progress bar of `len` steps for one phase (drawn on stderr, hidden when it is not a
/// terminal).
pub fn progress(len: u64, engine: &str, phase: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{prefix:>20} {msg:<28} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(engine.to_string());
    pb.set_message(phase.to_string());
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_advances_with_work() {
        let a = thread_cpu_seconds();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_seconds() > a);
    }

    #[test]
    fn a_window_starts_at_the_current_rss() {
        let window = start_window();
        assert!(window.baseline_bytes > 0);
    }

    #[test]
    fn rss_is_read_from_proc() {
        assert!(rss_bytes() > 0);
        assert!(peak_rss_bytes() >= rss_bytes() / 2);
    }
}
