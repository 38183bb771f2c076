//! An owned internal key that orders as internal keys do, for the skip list.

use crate::key::compare_internal_keys;
use std::cmp::Ordering;

/// An encoded internal key ordered by [`compare_internal_keys`] rather than bytewise.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrderedKey(pub(crate) Vec<u8>);

impl PartialEq for OrderedKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for OrderedKey {}

impl PartialOrd for OrderedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_internal_keys(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    #[test]
    fn orders_newest_version_first_not_bytewise() {
        let old = OrderedKey(internal_key(b"a", 1, ValueKind::Put));
        let new = OrderedKey(internal_key(b"a", 300, ValueKind::Put));
        // Bytewise, the little-endian trailer of seq 1 sorts after that of seq 300's.
        assert!(new < old);
        assert!(old < OrderedKey(internal_key(b"b", 0, ValueKind::Put)));
    }
}
