//! Sorted-set scores: their parsing as Redis does it (printing: `reply::format_double`), and their encoding as
//! 8 bytes whose byte order is numeric order, so the score index of a sorted set is a
//! range of ordered keys and ZRANGEBYSCORE one range scan.
//!
//! The encoding flips an IEEE 754 double's bits so unsigned big-endian comparison agrees
//! with `<` on numbers: a positive number gets its sign bit set, a negative one all its
//! bits inverted (larger magnitude, smaller key). `-inf` encodes lowest and `+inf` highest;
//! `-0` is stored as `0` (Redis treats them as one score); NaN is never stored (every
//! command refuses it first).

/// The 8 bytes of `score` in the index's order.
pub(super) fn encode(score: f64) -> [u8; 8] {
    // -0.0 == 0.0: one key for both.
    let score = if score == 0.0 { 0.0 } else { score };
    let bits = score.to_bits();
    let ordered = if bits >> 63 == 1 { !bits } else { bits | (1 << 63) };
    ordered.to_be_bytes()
}

/// The score `encode` made these bytes from; `None` when there are not 8 of them.
pub(super) fn decode(bytes: &[u8]) -> Option<f64> {
    let ordered = u64::from_be_bytes(bytes.try_into().ok()?);
    let bits = if ordered >> 63 == 1 { ordered & !(1 << 63) } else { !ordered };
    Some(f64::from_bits(bits))
}

/// A score argument as Redis reads one (`strtod` over the whole word): decimal or
/// exponent notation, `inf`/`+inf`/`-inf` (any case); `None` for NaN, spaces, or anything
/// else.
pub(super) fn parse(word: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(word).ok()?;
    if s.is_empty() || s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_is_numeric_order_from_minus_to_plus_infinity() {
        let scores = [
            f64::NEG_INFINITY,
            f64::MIN,
            -1e10,
            -1.5,
            -1.0,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            0.5,
            1.0,
            3.25,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        for pair in scores.windows(2) {
            assert!(encode(pair[0]) < encode(pair[1]), "{} before {}", pair[0], pair[1]);
        }
        for s in scores {
            assert_eq!(decode(&encode(s)), Some(s));
        }
    }

    #[test]
    fn minus_zero_is_zero() {
        assert_eq!(encode(-0.0), encode(0.0));
        assert_eq!(decode(&encode(-0.0)).map(f64::to_bits), Some(0.0f64.to_bits()));
        assert_eq!(decode(b"short"), None);
    }

    #[test]
    fn scores_parse_as_strtod_over_the_whole_word() {
        assert_eq!(parse(b"1.5"), Some(1.5));
        assert_eq!(parse(b"-3"), Some(-3.0));
        assert_eq!(parse(b"1e3"), Some(1000.0));
        assert_eq!(parse(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse(b"-INF"), Some(f64::NEG_INFINITY));
        assert_eq!(parse(b"inf"), Some(f64::INFINITY));
        for bad in [&b""[..], b"nan", b"NaN", b" 1", b"1 ", b"abc", b"1.5x", b"\xff"] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
