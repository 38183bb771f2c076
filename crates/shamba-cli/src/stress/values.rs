//! The keys and values the stress tool writes: a key is its index in the key space, a
//! value is derived from (key index, value id), so a value read back is checked byte for
//! byte without the tool storing any value.
//!
//! Key: `k` and the index as 8 decimal digits, so byte order is index order.
//! Value: the value id (u32 LE), the key index (u32 LE), then filler bytes drawn from a
//! generator seeded by both; its length is drawn from the same generator (mostly short,
//! now and then a few KiB, so memtables fill and tables get multi-block values).

use std::fmt;

/// Keys of the largest key space: indices have 8 digits.
pub const MAX_KEYS: u32 = 100_000_000;

/// Bytes before the filler: value id and key index.
const HEADER: usize = 8;

/// The key of index `index`.
pub fn key_of(index: u32) -> Vec<u8> {
    format!("k{index:08}").into_bytes()
}

/// The index of a key the tool writes, or `None` for any other key.
pub fn index_of(key: &[u8]) -> Option<u32> {
    let digits = key.strip_prefix(b"k")?;
    if digits.len() != 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// SplitMix64: a small, well-mixed generator; the values only need to be reproducible.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The value the tool writes for key `index` with value id `id`.
pub fn value_of(index: u32, id: u32) -> Vec<u8> {
    let mut state = (u64::from(index) << 32) | u64::from(id);
    let draw = splitmix(&mut state);
    let len = if draw.is_multiple_of(32) {
        HEADER + (draw >> 8) as usize % 4000
    } else {
        HEADER + (draw >> 8) as usize % 120
    };
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&index.to_le_bytes());
    while v.len() < len {
        let word = splitmix(&mut state).to_le_bytes();
        let take = word.len().min(len - v.len());
        v.extend_from_slice(word.get(..take).unwrap_or_default());
    }
    v
}

/// What a read of one key returned, as the checker sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No value.
    Absent,
    /// The value the tool wrote with this id.
    Value(u32),
    /// Bytes the tool never wrote for this key.
    Alien(Vec<u8>),
}

impl Found {
    /// Classify the result of reading key `index`.
    pub fn of(index: u32, value: Option<&[u8]>) -> Found {
        let Some(v) = value else { return Found::Absent };
        let id = v.get(..4).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        match id {
            Some(id) if value_of(index, id) == v => Found::Value(id),
            _ => Found::Alien(v.to_vec()),
        }
    }

    /// The value id this stands for (`None` for absent), if it is one the tool wrote.
    pub fn as_state(&self) -> Option<Option<u32>> {
        match self {
            Found::Absent => Some(None),
            Found::Value(id) => Some(Some(*id)),
            Found::Alien(_) => None,
        }
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Absent => write!(f, "absent"),
            Found::Value(id) => write!(f, "value id {id}"),
            Found::Alien(bytes) => {
                let head: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
                write!(f, "a value the tool never wrote for this key ({} bytes, starting 0x{head})", bytes.len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_sort_by_index() {
        assert_eq!(index_of(&key_of(42)), Some(42));
        assert!(key_of(9) < key_of(10));
        assert_eq!(index_of(b"k1234567"), None);
        assert_eq!(index_of(b"apple"), None);
    }

    #[test]
    fn a_value_is_recognised_only_for_its_own_key_and_id() {
        let v = value_of(7, 99);
        assert_eq!(Found::of(7, Some(&v)), Found::Value(99));
        assert!(matches!(Found::of(8, Some(&v)), Found::Alien(_)));
        let mut bent = v.clone();
        if let Some(last) = bent.last_mut() {
            *last ^= 1;
        }
        assert!(matches!(Found::of(7, Some(&bent)), Found::Alien(_)));
        assert_eq!(Found::of(7, None), Found::Absent);
    }
}
