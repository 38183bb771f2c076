//! Replaying a log file: whole records back, a torn tail dropped, other damage reported.

#![deny(clippy::indexing_slicing)]

use super::format::{fragment_crc, FragmentType, Header, BLOCK_SIZE, HEADER_SIZE};
use crate::error::{Error, Result};
use crate::options::WalRecovery;
use std::path::Path;

/// One whole record of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogRecord {
    /// File offset of the record's first fragment header.
    pub offset: u64,
    /// The record's bytes.
    pub data: Vec<u8>,
}

/// What replay left unread at the end of the file, from where, and why: a torn tail, or
/// (with [`WalRecovery::PointInTime`]) everything from the first damage on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DroppedTail {
    /// File offset of the first fragment that could not be used (for a record cut short,
    /// the offset of its first fragment).
    pub offset: u64,
    /// What was wrong there.
    pub reason: String,
    /// Whether valid data followed the damage. Only [`WalRecovery::PointInTime`] replays
    /// stop at such damage; the default mode reports it as an error instead.
    pub followed_by_data: bool,
}

/// Everything a replay found: the whole records and, if it stopped early, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LogReplay {
    /// Whole records in log order.
    pub records: Vec<LogRecord>,
    /// Bytes up to the end of the last whole record.
    pub valid_len: u64,
    /// Set when replay ignored bytes at the end of the file.
    pub dropped: Option<DroppedTail>,
}

/// Decode every whole record of a log file's bytes. A torn tail is dropped; other damage
/// is `Error::Corruption` naming `path` and the offset (or, with
/// [`WalRecovery::PointInTime`], the end of replay). The records only, for tests: replay
/// takes [`read_log_report`], to name a record's offset.
#[cfg(test)]
pub(crate) fn read_log(bytes: &[u8], path: &Path, mode: WalRecovery) -> Result<Vec<Vec<u8>>> {
    let replay = read_log_report(bytes, path, mode)?;
    Ok(replay.records.into_iter().map(|r| r.data).collect())
}

/// Like [`read_log`], but also says where each record starts and what, if anything, was
/// dropped at the end: what a caller needs to report a recovery or to name a record's
/// offset in an error of its own.
pub(crate) fn read_log_report(bytes: &[u8], path: &Path, mode: WalRecovery) -> Result<LogReplay> {
    let mut replay = LogReplay::default();
    // The record being assembled from FIRST/MIDDLE fragments: (offset, bytes so far).
    let mut pending: Option<(usize, Vec<u8>)> = None;
    let mut pos = 0;
    loop {
        let damage = match next_fragment(bytes, pos) {
            Step::End => {
                if let Some((start, _)) = pending {
                    // The rest of a split record never made it to disk: a torn tail.
                    replay.dropped = Some(torn(start, "record cut short at end of file", false));
                }
                return Ok(replay);
            }
            Step::Skip(next) => {
                pos = next;
                continue;
            }
            Step::Damage(damage) => damage,
            Step::Fragment { kind, payload, next } => match assemble(&mut pending, pos, kind, payload) {
                Ok(whole) => {
                    if let Some((start, data)) = whole {
                        replay.records.push(LogRecord { offset: start as u64, data });
                        replay.valid_len = next as u64;
                    }
                    pos = next;
                    continue;
                }
                Err(damage) => damage,
            },
        };
        let at = pending.as_ref().map_or(pos, |(start, _)| *start);
        let followed_by_data = damage.followed_by_data || valid_fragment_after(bytes, damage.scan_from, pos);
        if followed_by_data && mode == WalRecovery::TolerateTornTail {
            return Err(Error::corruption(path, Some(pos as u64), damage.reason));
        }
        replay.dropped = Some(torn(at, damage.reason, followed_by_data));
        return Ok(replay);
    }
}

/// Add a fragment to the record being assembled; a whole record comes back as
/// `(offset, bytes)`.
fn assemble(
    pending: &mut Option<(usize, Vec<u8>)>,
    pos: usize,
    kind: FragmentType,
    payload: &[u8],
) -> std::result::Result<Option<(usize, Vec<u8>)>, Damage> {
    match (kind, pending.take()) {
        (FragmentType::Full, None) => Ok(Some((pos, payload.to_vec()))),
        (FragmentType::First, None) => {
            *pending = Some((pos, payload.to_vec()));
            Ok(None)
        }
        (FragmentType::Middle, Some((start, mut data))) => {
            data.extend_from_slice(payload);
            *pending = Some((start, data));
            Ok(None)
        }
        (FragmentType::Last, Some((start, mut data))) => {
            data.extend_from_slice(payload);
            Ok(Some((start, data)))
        }
        // A checksummed fragment out of sequence is not something a crash leaves behind,
        // and valid data (this very fragment) follows the problem.
        (FragmentType::Full | FragmentType::First, Some(unfinished)) => {
            // Keep it so the dropped tail is reported from where that record began.
            *pending = Some(unfinished);
            Err(Damage::followed("record begins before the previous one ended"))
        }
        (FragmentType::Middle | FragmentType::Last, None) => {
            Err(Damage::followed("fragment continues a record that never began"))
        }
    }
}

fn torn(offset: usize, reason: &str, followed_by_data: bool) -> DroppedTail {
    DroppedTail { offset: offset as u64, reason: reason.to_string(), followed_by_data }
}

/// A fragment that cannot be used.
struct Damage {
    reason: &'static str,
    /// Where to start looking for valid data that would prove this is not a torn tail.
    scan_from: usize,
    /// Already known to be followed by valid data.
    followed_by_data: bool,
}

impl Damage {
    fn followed(reason: &'static str) -> Damage {
        Damage { reason, scan_from: usize::MAX, followed_by_data: true }
    }
}

/// What is at a position of the log.
enum Step<'a> {
    /// The end of the file.
    End,
    /// A block trailer: continue at the given offset.
    Skip(usize),
    /// A fragment with a valid checksum.
    Fragment { kind: FragmentType, payload: &'a [u8], next: usize },
    /// Something unusable.
    Damage(Damage),
}

fn block_end(pos: usize) -> usize {
    (pos / BLOCK_SIZE + 1).saturating_mul(BLOCK_SIZE)
}

fn next_fragment(bytes: &[u8], pos: usize) -> Step<'_> {
    if pos >= bytes.len() {
        return Step::End;
    }
    let block_end = block_end(pos);
    if block_end - pos < HEADER_SIZE {
        return Step::Skip(block_end);
    }
    let rest = bytes.get(pos..).unwrap_or_default();
    let damage = |reason, scan_from| Step::Damage(Damage { reason, scan_from, followed_by_data: false });
    let Some(header) = Header::parse(rest) else {
        return damage("fragment header cut short at end of file", pos + 1);
    };
    let Some(kind) = FragmentType::from_u8(header.kind) else {
        let reason =
            if rest.iter().take(HEADER_SIZE).all(|&b| b == 0) { "zeroed bytes" } else { "unknown fragment type" };
        return damage(reason, pos + 1);
    };
    let end = pos + HEADER_SIZE + header.len;
    if end > block_end {
        return damage("fragment length crosses a block boundary", pos + 1);
    }
    // From here on the length is plausible, so a crash can only have damaged the payload;
    // valid data, if any, starts after the fragment. Looking only there keeps user bytes
    // inside a payload that happen to look like a fragment from being taken for one.
    let Some(payload) = bytes.get(pos + HEADER_SIZE..end) else {
        return damage("fragment cut short at end of file", end);
    };
    if fragment_crc(header.kind, payload) != header.crc {
        return damage("fragment checksum mismatch", end);
    }
    Step::Fragment { kind, payload, next: end }
}

/// Whether a valid fragment starts anywhere in `[from, end of from's block)` or at the
/// start of any later block. Every block of a well-formed log begins with a fragment, so
/// later blocks need only be probed at their start; this bounds the search to one block
/// of offsets plus one probe per block.
fn valid_fragment_after(bytes: &[u8], from: usize, damaged_at: usize) -> bool {
    let from = from.max(damaged_at + 1);
    let first_block_end = block_end(damaged_at);
    let same_block = (from..first_block_end.min(bytes.len())).any(|o| valid_fragment_at(bytes, o));
    same_block || (first_block_end..bytes.len()).step_by(BLOCK_SIZE).any(|o| valid_fragment_at(bytes, o))
}

fn valid_fragment_at(bytes: &[u8], pos: usize) -> bool {
    if block_end(pos) - pos < HEADER_SIZE {
        return false;
    }
    matches!(next_fragment(bytes, pos), Step::Fragment { .. })
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::super::writer::tests::log_of;
    use super::*;
    use proptest::prelude::*;

    fn path() -> &'static Path {
        Path::new("/db/000007.log")
    }

    fn records(sizes: &[usize]) -> Vec<Vec<u8>> {
        sizes.iter().enumerate().map(|(i, &n)| (0..n).map(|j| (i * 31 + j * 7) as u8).collect()).collect()
    }

    fn replay(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        read_log(bytes, path(), WalRecovery::TolerateTornTail)
    }

    #[test]
    fn records_of_every_size_round_trip_across_block_boundaries() {
        let sizes = [0, 1, 6, 7, 100, BLOCK_SIZE - 14, BLOCK_SIZE - 7, BLOCK_SIZE, 3 * BLOCK_SIZE + 5, 100_000, 0, 0];
        let recs = records(&sizes);
        let bytes = log_of(&recs);
        assert_eq!(replay(&bytes).unwrap(), recs);
    }

    #[test]
    fn every_truncation_recovers_exactly_a_prefix_of_whole_records() {
        let recs = records(&[10, 0, 3000, 40_000, 5, 32_000, 77, 1]);
        let bytes = log_of(&recs);
        let report = read_log_report(&bytes, path(), WalRecovery::TolerateTornTail).unwrap();
        for cut in 0..=bytes.len() {
            let got = replay(&bytes[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            // A record survives iff its last fragment is whole; a trailer may follow it.
            let whole = recs.iter().zip(&report.records).filter(|(_, r)| {
                let end = r.offset as usize + HEADER_SIZE + last_fragment_end(&bytes, r.offset as usize);
                end <= cut
            });
            let expect: Vec<Vec<u8>> = whole.map(|(d, _)| d.clone()).collect();
            assert_eq!(got, expect, "cut at {cut}");
        }
    }

    /// Bytes from `offset + HEADER_SIZE` to the end of the record starting at `offset`.
    fn last_fragment_end(bytes: &[u8], offset: usize) -> usize {
        let mut pos = offset;
        loop {
            if block_end(pos) - pos < HEADER_SIZE {
                pos = block_end(pos);
                continue;
            }
            let h = Header::parse(&bytes[pos..]).unwrap();
            pos += HEADER_SIZE + h.len;
            if h.kind == FragmentType::Full as u8 || h.kind == FragmentType::Last as u8 {
                return pos - offset - HEADER_SIZE;
            }
        }
    }

    #[test]
    fn zeroed_tail_left_by_a_crash_is_dropped() {
        let recs = records(&[100, 200, 50_000, 300]);
        let mut bytes = log_of(&recs);
        // The file grew but the last record's bytes never reached the disk.
        let last = read_log_report(&bytes, path(), WalRecovery::TolerateTornTail).unwrap().records[3].offset as usize;
        bytes[last..].fill(0);
        bytes.extend_from_slice(&[0; 2 * BLOCK_SIZE]);
        assert_eq!(replay(&bytes).unwrap(), recs[..3].to_vec());
        // Half the payload persisted, half not.
        let mut bytes = log_of(&recs);
        let n = bytes.len();
        bytes[n - 150..].fill(0);
        let report = read_log_report(&bytes, path(), WalRecovery::TolerateTornTail).unwrap();
        assert_eq!(report.records.len(), 3);
        let dropped = report.dropped.unwrap();
        assert_eq!((dropped.offset as usize, dropped.followed_by_data), (last, false));
    }

    #[test]
    fn a_flipped_byte_before_the_last_block_is_corruption_naming_the_file() {
        let recs = records(&[500, 20_000, 0, 9000, 70_000, 30, 12_000, 400]);
        let bytes = log_of(&recs);
        let last_block = (bytes.len() - 1) / BLOCK_SIZE * BLOCK_SIZE;
        for at in (0..last_block).step_by(97) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x40;
            match replay(&bad) {
                Err(Error::Corruption { file, offset: Some(_), .. }) => assert_eq!(file, path()),
                // Only a byte of a block trailer may change without consequence.
                Ok(got) => assert!(got == recs && BLOCK_SIZE - at % BLOCK_SIZE < HEADER_SIZE, "flip at {at}"),
                Err(e) => panic!("flip at {at}: {e}"),
            }
        }
    }

    #[test]
    fn point_in_time_keeps_the_records_before_middle_damage() {
        let recs = records(&[100, 100, 100, 100]);
        let mut bytes = log_of(&recs);
        bytes[HEADER_SIZE * 2 + 100 + 50] ^= 1; // inside the second record's payload
        assert!(replay(&bytes).unwrap_err().is_corruption());
        let report = read_log_report(&bytes, path(), WalRecovery::PointInTime).unwrap();
        assert_eq!(report.records.len(), 1);
        assert_eq!(report.valid_len, (HEADER_SIZE + 100) as u64);
        assert!(report.dropped.unwrap().followed_by_data);
    }

    #[test]
    fn fragments_out_of_sequence_are_corruption() {
        let mut bytes = log_of(&records(&[BLOCK_SIZE]));
        // Make the FIRST fragment a MIDDLE (with a fresh checksum): it continues nothing.
        let h = Header::parse(&bytes).unwrap();
        let fixed = Header::encode(FragmentType::Middle, &bytes[HEADER_SIZE..HEADER_SIZE + h.len]);
        bytes[..HEADER_SIZE].copy_from_slice(&fixed);
        let err = replay(&bytes).unwrap_err();
        assert!(matches!(err, Error::Corruption { offset: Some(0), .. }), "{err}");
    }

    #[test]
    fn a_payload_that_looks_like_a_log_does_not_turn_a_torn_tail_into_corruption() {
        let inner = log_of(&records(&[10, 20]));
        let mut payload = vec![0u8; 500];
        payload.extend_from_slice(&inner);
        let recs = vec![b"first".to_vec(), payload];
        let bytes = log_of(&recs);
        // Cut the last record inside the embedded log's bytes.
        assert_eq!(replay(&bytes[..bytes.len() - 3]).unwrap(), recs[..1].to_vec());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..3 * BLOCK_SIZE)) {
            let _ = read_log(&bytes, path(), WalRecovery::TolerateTornTail);
            let _ = read_log(&bytes, path(), WalRecovery::PointInTime);
        }

        #[test]
        fn records_round_trip(recs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40_000), 0..8)) {
            prop_assert_eq!(replay(&log_of(&recs)).unwrap(), recs);
        }

        #[test]
        fn damaged_logs_stay_a_prefix_or_an_error(
            recs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..5000), 1..8),
            at in any::<prop::sample::Index>(),
            xor in 1u8..,
        ) {
            let mut bytes = log_of(&recs);
            let i = at.index(bytes.len());
            bytes[i] ^= xor;
            for mode in [WalRecovery::TolerateTornTail, WalRecovery::PointInTime] {
                if let Ok(got) = read_log(&bytes, path(), mode) {
                    // A flip may drop records (torn tail, point in time) but never invent or alter one.
                    prop_assert!(got.len() <= recs.len());
                    prop_assert_eq!(&got[..], &recs[..got.len()]);
                }
            }
        }
    }
}
