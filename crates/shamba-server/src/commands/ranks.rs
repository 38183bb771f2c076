//! Redis's index arithmetic for lists and ranks: negative indexes count from the end
//! (-1 the last), ranges are inclusive and clamped to the collection (LRANGE, LTRIM,
//! ZRANGE, ZREMRANGEBYRANK), single indexes are not (LINDEX, LSET).

/// The inclusive positions `start..=stop` select in a collection of `len`, clamped;
/// `None` when they select nothing.
pub(super) fn clamp_range(start: i64, stop: i64, len: u64) -> Option<(u64, u64)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let start = if start < 0 { len.saturating_add(start).max(0) } else { start };
    let stop = if stop < 0 { len.saturating_add(stop) } else { stop };
    if start > stop || start >= len || stop < 0 {
        return None;
    }
    Some((start as u64, stop.min(len - 1) as u64))
}

/// The position `index` names in a collection of `len`; `None` when outside it.
pub(super) fn position(index: i64, len: u64) -> Option<u64> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let i = if index < 0 { len.saturating_add(index) } else { index };
    (0..len).contains(&i).then_some(i as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_clamp_as_lrange_does() {
        assert_eq!(clamp_range(0, -1, 5), Some((0, 4)));
        assert_eq!(clamp_range(-100, 100, 5), Some((0, 4)));
        assert_eq!(clamp_range(1, 2, 5), Some((1, 2)));
        assert_eq!(clamp_range(-2, -1, 5), Some((3, 4)));
        assert_eq!(clamp_range(3, 1, 5), None);
        assert_eq!(clamp_range(5, 10, 5), None);
        assert_eq!(clamp_range(0, -6, 5), None, "stop before the first");
        assert_eq!(clamp_range(-10, -6, 5), None);
        assert_eq!(clamp_range(0, 0, 0), None);
        assert_eq!(clamp_range(i64::MIN, i64::MAX, 3), Some((0, 2)));
    }

    #[test]
    fn single_indexes_are_not_clamped() {
        assert_eq!(position(0, 3), Some(0));
        assert_eq!(position(-1, 3), Some(2));
        assert_eq!(position(-3, 3), Some(0));
        assert_eq!(position(-4, 3), None);
        assert_eq!(position(3, 3), None);
        assert_eq!(position(i64::MIN, 3), None);
        assert_eq!(position(0, 0), None);
    }
}
