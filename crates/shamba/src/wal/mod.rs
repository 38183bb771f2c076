//! The log format shared by the write-ahead log and the manifest (LevelDB's log format).
//!
//! A log is a sequence of 32 KiB blocks. A record is written as one or more *fragments*;
//! a fragment never crosses a block boundary, so a reader can always find the start of
//! the next fragment at the next block start, whatever damage came before.
//!
//! ```text
//! block     := fragment* trailer?
//! fragment  := crc: u32 LE | length: u16 LE | type: u8 | payload: [u8; length]
//! trailer   := 0..=6 zero bytes (a block's tail too short for a fragment header)
//! crc       := masked crc32c of (type ++ payload)
//! type      := 1 FULL | 2 FIRST | 3 MIDDLE | 4 LAST
//! ```
//!
//! A record that fits in the rest of the current block is one FULL fragment; a longer one
//! is a FIRST, any number of MIDDLEs and a LAST. An empty record is a FULL fragment with
//! no payload.
//!
//! Replay ([`read_log_report`]) distinguishes two kinds of damage. A *torn tail* is what a crash
//! leaves: the last fragment cut short or zero-filled, with nothing valid after it; it is
//! dropped silently, so recovery ends at the last whole record. Damage *followed by more
//! valid data* cannot come from a crash: it is [`Error::Corruption`](crate::Error) naming
//! the file and offset, unless [`WalRecovery::PointInTime`](crate::WalRecovery) asks to
//! stop replay there instead.
//!
//! The judgement follows LevelDB's reader: a fragment whose declared length runs past the
//! end of the file is taken for a torn tail, so damage to a length field in the file's last
//! block can drop the records after it silently. The search for valid data after damage
//! starts behind the damaged fragment, never inside its payload, so user bytes that happen
//! to look like a fragment cannot turn a crash into a corruption error.
//!
//! A log is never appended to after it was replayed: the engine starts a new file, so a
//! torn tail is always at the end of the file that holds it.

#![deny(clippy::indexing_slicing)]

mod format;
mod reader;
mod writer;

pub(crate) use reader::read_log_report;
pub(crate) use writer::LogWriter;
