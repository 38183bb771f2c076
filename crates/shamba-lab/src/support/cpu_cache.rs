//! The CPU caches of this machine as Linux reports them (`/sys/devices/system/cpu/cpu0/cache`),
//! for the experiments whose premise is a working set larger than the last-level cache:
//! they say what the cache is where they ran rather than what it was where they were sized.

/// One cache level as sysfs describes it.
#[derive(Debug, Clone, PartialEq)]
struct CacheLevel {
    level: u32,
    kind: String,
    bytes: u64,
}

/// The caches of CPU 0, in sysfs's order; empty where sysfs does not say (not Linux, a
/// sandbox without it).
fn caches() -> Vec<CacheLevel> {
    let root = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    let mut found: Vec<(String, CacheLevel)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| {
            let read = |name: &str| std::fs::read_to_string(e.path().join(name)).ok();
            let level = read("level")?.trim().parse().ok()?;
            let bytes = parse_size(&read("size")?)?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                CacheLevel { level, kind: read("type")?.trim().to_owned(), bytes },
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, c)| c).collect()
}

/// A sysfs cache size: `48K`, `2048K`, `266240K`, `32M`.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let mult = match unit.trim() {
        "" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Bytes of the last-level cache (the highest level holding data), if sysfs says.
pub(crate) fn last_level_bytes() -> Option<u64> {
    caches().into_iter().filter(|c| c.kind != "Instruction").max_by_key(|c| c.level).map(|c| c.bytes)
}

/// A note comparing `working_set` bytes (what the experiment needs out of the CPU caches)
/// with this machine's last-level cache.
pub(crate) fn working_set_note(what: &str, working_set: u64) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    match last_level_bytes() {
        Some(llc) if working_set > llc => format!(
            "{what}: {:.1} MiB, larger than this machine's last-level cache ({:.1} MiB, sysfs)",
            mib(working_set),
            mib(llc)
        ),
        Some(llc) => format!(
            "{what}: {:.1} MiB, NOT larger than this machine's last-level cache ({:.1} MiB, sysfs): the DRAM misses the experiment is about are fewer here than where it was sized, so the gain it measures is smaller",
            mib(working_set),
            mib(llc)
        ),
        None => format!("{what}: {:.1} MiB (this machine's last-level cache: not reported)", mib(working_set)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse_with_their_units() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("266240K"), Some(266_240 << 10));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn the_note_says_which_side_of_the_cache_the_working_set_is() {
        let note = working_set_note("filters", u64::MAX / 2);
        match last_level_bytes() {
            Some(_) => assert!(note.contains("larger than this machine's last-level cache") && !note.contains("NOT")),
            None => assert!(note.contains("not reported")),
        }
        if last_level_bytes().is_some() {
            assert!(working_set_note("filters", 1).contains("NOT larger"));
        }
    }
}
