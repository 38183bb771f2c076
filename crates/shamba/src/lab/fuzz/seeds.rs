//! Seeds for every target, cut from the files of the base database: its tables' blocks,
//! footers and filter parts, its WAL and manifest and their records, and one no-op damage
//! per file for the whole-database target.

use super::base;
use super::Target;
use crate::filter::PartKind;
use crate::options::WalRecovery;
use crate::table::{
    bytewise, decode_filter_index, decode_top_level, read_block, Block, BlockHandle, Footer, BLOCK_TRAILER_LEN,
    FOOTER_LEN,
};
use crate::wal::read_log_report;
use std::path::Path;

/// Filter parts kept per kind: more add nothing but bytes.
const PARTS_PER_KIND: usize = 3;

/// The seeds of every target, as (target, input).
pub(super) fn seeds() -> Vec<(Target, Vec<u8>)> {
    let mut out = Vec::new();
    for (pick, table) in base::files_ending(".sst").enumerate() {
        table_seeds(pick as u8, table, &mut out);
    }
    let mut parts_seen = [0usize; 4];
    out.retain(|(target, _)| {
        let kind = match target {
            Target::FilterBlockedBloom => PartKind::BlockedBloom,
            Target::FilterStandardBloom => PartKind::StandardBloom,
            Target::FilterRibbon => PartKind::Ribbon,
            _ => return true,
        };
        let Some(seen) = parts_seen.get_mut(kind as usize) else { return false };
        *seen += 1;
        *seen <= PARTS_PER_KIND
    });
    for log in base::files_ending(".log").filter(|l| !l.is_empty()) {
        out.push((Target::Wal, [&[1u8][..], log].concat()));
        // The log's start behind a filler block (mode bit 1), straddling a block boundary.
        for gap in [3u8, 120] {
            out.push((Target::Wal, [&[3u8, gap][..], log.get(..2048).unwrap_or(log)].concat()));
        }
        for record in records(log) {
            out.push((Target::WriteBatch, record));
        }
    }
    for (_, manifest) in base::files().iter().filter(|(p, _)| p.to_string_lossy().contains("MANIFEST-")) {
        out.push((Target::Manifest, [&[1u8][..], manifest].concat()));
        for record in records(manifest) {
            out.push((Target::VersionEdit, record));
        }
    }
    for file in 0..base::files().len() as u8 {
        // A no-op XOR, and one flipped bit in a resealed log (or anywhere else).
        out.push((Target::OpenDb, vec![file, 1, 0, 0, 0, 0]));
        out.push((Target::OpenDb, vec![file, 5, 40, 0, 0, 0, 0x10]));
    }
    out
}

fn records(log: &[u8]) -> Vec<Vec<u8>> {
    read_log_report(log, Path::new("seed"), WalRecovery::TolerateTornTail)
        .map(|r| r.records.into_iter().map(|r| r.data).collect())
        .unwrap_or_default()
}

/// The stored form (contents and trailer) of the block at `h`.
fn physical(table: &[u8], h: BlockHandle) -> Option<Vec<u8>> {
    let start = usize::try_from(h.offset).ok()?;
    let end = start.checked_add(usize::try_from(h.size).ok()?)?.checked_add(BLOCK_TRAILER_LEN)?;
    table.get(start..end).map(<[u8]>::to_vec)
}

fn contents(table: &[u8], h: BlockHandle) -> Option<Vec<u8>> {
    read_block(physical(table, h)?, true).ok()
}

/// Seeds from base table `pick`: the modes address this table and its blocks.
fn table_seeds(pick: u8, table: &[u8], out: &mut Vec<(Target, Vec<u8>)>) {
    let Some(footer_bytes) = table.get(table.len().saturating_sub(FOOTER_LEN)..) else { return };
    let Ok(footer) = Footer::decode(footer_bytes) else { return };
    out.push((Target::SstFooter, [&[1 | pick << 1][..], footer_bytes].concat()));
    let with_mode = |mode: u8, bytes: &[u8]| [&[mode][..], bytes].concat();
    if let Some(p) = contents(table, footer.properties) {
        out.push((Target::SstProperties, with_mode(pick, &p)));
    }
    for (slot, h) in [(2u8, footer.metaindex), (3, footer.filter_index)] {
        if let Some(b) = contents(table, h) {
            out.push((Target::IndexBlock, with_mode(pick | slot << 3, &b)));
        }
    }
    let Some(index) = contents(table, footer.index) else { return };
    out.push((Target::IndexBlock, with_mode(pick, &index)));
    // The index blocks and filter parts: one set, or one per partition.
    let mut indexes = Vec::new();
    let mut parts = Vec::new();
    match Block::new(index.clone().into()).ok().map(decode_top_level) {
        Some(Ok(top)) if footer.format_version >= 2 => {
            for (_, p) in top {
                indexes.extend(contents(table, p.index));
                parts.extend(p.filter);
            }
        }
        _ => {
            indexes.push(index);
            let filter_index = contents(table, footer.filter_index).and_then(|b| Block::new(b.into()).ok());
            parts.extend(filter_index.and_then(|b| decode_filter_index(b).ok()).unwrap_or_default());
        }
    }
    for part in parts.into_iter().filter_map(|h| contents(table, h)) {
        let target = match part.get(1).copied() {
            Some(k) if k == PartKind::BlockedBloom as u8 => Target::FilterBlockedBloom,
            Some(k) if k == PartKind::StandardBloom as u8 => Target::FilterStandardBloom,
            _ => Target::FilterRibbon,
        };
        out.push((target, part));
    }
    for index in indexes.iter().take(2) {
        let Ok(block) = Block::new(index.clone().into()) else { continue };
        let mut c = block.cursor(bytewise);
        let _ = c.seek_to_first();
        // A few data blocks per index: their contents and their stored form.
        for _ in 0..3 {
            if !c.valid() {
                break;
            }
            if let Ok(h) = BlockHandle::decode_exact(c.value()) {
                out.extend(contents(table, h).map(|b| (Target::DataBlock, with_mode(0, &b))));
                out.extend(physical(table, h).map(|b| (Target::DataBlock, with_mode(1, &b))));
            }
            let _ = c.next();
        }
    }
}
