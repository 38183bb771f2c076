//! Tables end to end: build, open, look up, walk, count, and survive damage.
//!
//! `round_trip.rs`: lookups and cursors against the input; `services.rs`: I/O accounting,
//! cache use, the table cache, threads and the dump; `damage.rs`: flipped and truncated
//! files; `partitioned.rs`: partitioned index and filters against unpartitioned tables,
//! cache priorities and the filter manager's entry points. The fixtures below are shared.

mod damage;
mod partitioned;
mod round_trip;
mod services;

use super::file::TableFile;
use super::*;
use crate::cursor::Cursor;
use crate::filter::{build_filter_parts, Digest};
use crate::io::{FsStorage, Storage};
use crate::key::{compare_internal_keys, internal_key, parse_internal_key, seek_key, MAX_SEQ};
use crate::options::ReadOptions;

pub(super) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// One table's lookup as the tests make it: [`TableReader::get_at_spot`] at the spot
/// [`TableReader::locate`] finds (a database lookup also prefetches and plans first).
impl TableReader {
    /// The newest version of the seek key's user key, probing every filter part.
    pub(super) fn get(&self, seek: &[u8], digest: &Digest, ro: &ReadOptions) -> crate::error::Result<TableGet> {
        self.get_planned(seek, digest, ro, ProbePlan::ALL).map(|(got, _)| got)
    }

    /// [`get`](Self::get), probing only the filter parts `plan` allows.
    pub(super) fn get_planned(
        &self,
        seek: &[u8],
        digest: &Digest,
        ro: &ReadOptions,
        plan: ProbePlan<'_>,
    ) -> crate::error::Result<(TableGet, ProbeOutcome)> {
        self.get_at_spot(&self.locate(seek), seek, digest, ro, plan)
    }
}

/// For each target: `c` and the model `m` seek to it and agree (key and value), then step
/// the same way (`true` = next) and agree after each step, then `seek_for_prev` to it and
/// agree. `what` names the case in failures.
pub(super) fn agrees_with_model(
    c: &mut dyn Cursor,
    m: &mut crate::cursor::VecCursor,
    targets: &[Vec<u8>],
    steps: &[bool],
    what: &str,
) {
    for t in targets {
        c.seek(t).unwrap();
        m.seek(t).unwrap();
        assert_eq!((c.valid(), c.key(), c.value()), (m.valid(), m.key(), m.value()), "{what}: seek {t:?}");
        for &next in steps {
            if !m.valid() {
                break;
            }
            if next {
                c.next().unwrap();
                m.next().unwrap();
            } else {
                c.prev().unwrap();
                m.prev().unwrap();
            }
            assert_eq!((c.valid(), c.key()), (m.valid(), m.key()), "{what}: steps after {t:?}");
        }
        c.seek_for_prev(t).unwrap();
        m.seek_for_prev(t).unwrap();
        assert_eq!((c.valid(), c.key(), c.value()), (m.valid(), m.key(), m.value()), "{what}: seek_for_prev {t:?}");
    }
}

/// `users` user keys, each with 1..=4 versions (newest first), about a fifth deletes.
pub(super) fn versioned_entries(users: usize) -> Entries {
    let mut out = Vec::new();
    let mut seq = 10 * users as u64 + 100;
    for i in 0..users {
        let uk = format!("user{:06}", i * 3);
        for v in 0..1 + (i * 7) % 4 {
            let kind = if (i + v) % 5 == 1 { ValueKind::Delete } else { ValueKind::Put };
            let value = match kind {
                ValueKind::Put | ValueKind::PutExpiring => format!("v{i}.{v}:").repeat(1 + i % 5).into_bytes(),
                ValueKind::Delete => Vec::new(),
            };
            out.push((internal_key(uk.as_bytes(), seq - (v as u64) * 3, kind), value));
        }
        seq -= 1;
    }
    out.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    out
}

/// The filter parts a table gets in these tests: the real filter's when it builds any;
/// until the filters land (the stub builds none), two opaque parts the stub accepts, so
/// the storage, caching and checking of parts is exercised either way.
pub(super) fn parts_for_tests(spec: &crate::filter::FilterSpec, digests: &[Digest], version: u8) -> Vec<Vec<u8>> {
    let real = crate::filter::build_filter_parts_with_version(spec, digests, version);
    if !real.is_empty() {
        return real;
    }
    vec![vec![0xAB; 96], vec![0xCD; 40]]
}

pub(super) struct Fixture {
    _dir: tempfile::TempDir,
    pub(super) path: PathBuf,
    pub(super) entries: Entries,
    pub(super) summary: TableSummary,
}

pub(super) fn opts(block_size: usize, compression: Compression) -> TableOptions {
    TableOptions {
        block_size,
        restart_interval: 4,
        compression,
        filter: crate::filter::FilterSpec::Bloom { bits_per_key: 10.0 },
        ..TableOptions::default()
    }
}

pub(super) fn build(entries: Entries, opts: TableOptions) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(dir.path(), 7);
    let mut b = TableBuilder::new(FsStorage.create(&path).unwrap(), opts).with_filter_builder(parts_for_tests);
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.entries(), entries.len() as u64);
    let summary = b.finish().unwrap();
    Fixture { _dir: dir, path, entries, summary }
}

pub(super) fn ctx(cache_bytes: usize, cache_meta: bool) -> TableContext {
    TableContext {
        cache: Arc::new(crate::cache::BlockCache::new(cache_bytes, 0.5)),
        io: Arc::new(IoStats::default()),
        device: DeviceModel::None,
        cache_index_and_filter_blocks: cache_meta,
        digest_version: Some(crate::filter::DIGEST_VERSION),
        pool_filters: false,
        metadata: crate::table::MetadataBudget::new(u64::MAX),
    }
}

pub(super) fn open(path: &Path, ctx: TableContext) -> crate::error::Result<Arc<TableReader>> {
    let file = TableFile::new(path.to_path_buf(), FsStorage.open_read(path)?, ctx.io.clone(), ctx.device);
    Ok(Arc::new(TableReader::open(file, 7, ctx)?))
}

/// The model answer: newest version of `uk` with seq <= `snapshot`.
pub(super) fn model_get(entries: &Entries, uk: &[u8], snapshot: SeqNo) -> Option<(SeqNo, ValueKind, Vec<u8>)> {
    entries.iter().find_map(|(k, v)| {
        let p = parse_internal_key(k).unwrap();
        (p.user_key == uk && p.seq <= snapshot).then(|| (p.seq, p.kind, v.clone()))
    })
}

pub(super) fn walk_forward(c: &mut dyn Cursor) -> crate::error::Result<Entries> {
    let mut out = Vec::new();
    c.seek_to_first()?;
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.next()?;
    }
    Ok(out)
}

pub(super) fn walk_backward(c: &mut dyn Cursor) -> crate::error::Result<Entries> {
    let mut out = Vec::new();
    c.seek_to_last()?;
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.prev()?;
    }
    out.reverse();
    Ok(out)
}

pub(super) fn check_gets(reader: &TableReader, entries: &Entries) {
    let ro = ReadOptions::default();
    let mut users: Vec<Vec<u8>> = entries.iter().map(|(k, _)| crate::key::user_key(k).to_vec()).collect();
    users.dedup();
    for uk in &users {
        let digest = Digest::of(uk);
        let seqs: Vec<SeqNo> = entries
            .iter()
            .filter_map(|(k, _)| parse_internal_key(k).filter(|p| p.user_key == uk.as_slice()).map(|p| p.seq))
            .collect();
        let mut snapshots = vec![MAX_SEQ, 0];
        for s in seqs {
            snapshots.extend([s, s - 1, s + 1]);
        }
        for snap in snapshots {
            let got = reader.get(&seek_key(uk, snap), &digest, &ro).unwrap();
            let want = match model_get(entries, uk, snap) {
                Some((seq, kind, value)) => TableGet::Found { seq, kind, value },
                None => TableGet::NotFound,
            };
            assert_eq!(got, want, "user key {:?} at snapshot {snap}", String::from_utf8_lossy(uk));
        }
    }
}
