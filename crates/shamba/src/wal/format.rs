//! Constants and checksums of the log format; see the [module docs](super).

#![deny(clippy::indexing_slicing)]

/// Bytes per block. Fragments never cross a block boundary.
pub(super) const BLOCK_SIZE: usize = 32 * 1024;

/// Bytes of a fragment header: crc (4), length (2), type (1).
pub(super) const HEADER_SIZE: usize = 7;

/// The kind of a fragment: where it sits in its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum FragmentType {
    /// The whole record.
    Full = 1,
    /// The first fragment of a record split over blocks.
    First = 2,
    /// A fragment in the middle of a split record.
    Middle = 3,
    /// The last fragment of a split record.
    Last = 4,
}

impl FragmentType {
    pub(crate) fn from_u8(b: u8) -> Option<FragmentType> {
        match b {
            1 => Some(FragmentType::Full),
            2 => Some(FragmentType::First),
            3 => Some(FragmentType::Middle),
            4 => Some(FragmentType::Last),
            _ => None,
        }
    }
}

/// Added to a rotated crc so that the crc of data which itself contains crcs (a log of
/// table checksums, say) does not collide with them; LevelDB's masking.
const MASK_DELTA: u32 = 0xa282_ead8;

/// The stored checksum of a fragment: masked crc32c of its type byte and payload.
pub(crate) fn fragment_crc(kind: u8, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload);
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// A parsed fragment header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub(crate) crc: u32,
    pub(crate) len: usize,
    pub(crate) kind: u8,
}

impl Header {
    /// Parse the first [`HEADER_SIZE`] bytes of `bytes`; `None` if there are fewer.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Header> {
        let h = bytes.get(..HEADER_SIZE)?;
        let (crc, rest) = h.split_first_chunk::<4>()?;
        let (len, rest) = rest.split_first_chunk::<2>()?;
        let kind = *rest.first()?;
        Some(Header { crc: u32::from_le_bytes(*crc), len: usize::from(u16::from_le_bytes(*len)), kind })
    }

    /// Encode a header for `payload` of type `kind`.
    pub(crate) fn encode(kind: FragmentType, payload: &[u8]) -> [u8; HEADER_SIZE] {
        let crc = fragment_crc(kind as u8, payload).to_le_bytes();
        // The writer never makes a fragment longer than a block, so the length fits.
        let len = (payload.len() as u16).to_le_bytes();
        [crc[0], crc[1], crc[2], crc[3], len[0], len[1], kind as u8]
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn header_encoding_parses_back() {
        let h = Header::encode(FragmentType::Middle, b"payload");
        let p = Header::parse(&h).unwrap();
        assert_eq!((p.len, p.kind), (7, FragmentType::Middle as u8));
        assert_eq!(p.crc, fragment_crc(3, b"payload"));
        assert!(Header::parse(&h[..6]).is_none());
    }

    #[test]
    fn masked_crc_differs_from_plain_crc() {
        assert_ne!(fragment_crc(1, b"x"), crc32c::crc32c(b"\x01x"));
    }
}
