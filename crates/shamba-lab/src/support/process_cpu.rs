//! CPU seconds this process has used, all threads (background flushes and compactions
//! included): a cost that other work on a shared machine does not inflate, as it does wall
//! time. Linux only (`/proc/self/stat`); `None` elsewhere.

/// Clock ticks per second of `/proc`'s times (`USER_HZ`, 100 on Linux whatever the
/// kernel's own tick).
const USER_HZ: f64 = 100.0;

/// User plus system CPU seconds of this process so far.
pub(crate) fn process_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (user, system) = parse_stat(&text)?;
    Some((user + system) as f64 / USER_HZ)
}

/// utime and stime (fields 14 and 15, in ticks) of a `/proc/PID/stat` line. The command
/// name (field 2) is in parentheses and may hold spaces and parentheses itself, so fields
/// are counted from the last `)`.
fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user = fields.next()?.parse().ok()?;
    let system = fields.next()?.parse().ok()?;
    Some((user, system))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_read_after_a_command_name_with_spaces_and_parentheses() {
        let line = "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194304 500 0 0 0 731 42 0 0 20 0 3 0 100 0 0";
        assert_eq!(parse_stat(line), Some((731, 42)));
    }

    #[test]
    fn a_short_or_garbled_line_is_none() {
        assert_eq!(parse_stat("1234 (cmd) S 1 2"), None);
        assert_eq!(parse_stat("no parenthesis here"), None);
        assert_eq!(parse_stat("1 (c) S 1 1 1 0 -1 0 0 0 0 0 x 42"), None);
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        assert!(process_cpu_seconds().is_some_and(|s| s >= 0.0));
    }
}
