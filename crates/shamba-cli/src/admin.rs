//! Admin commands: put, get, delete, scan, inspect, sst, verify.

use shamba::{Db, Keyspace, Options, Readable};
use std::error::Error;
use std::path::Path;

type CliResult = Result<(), Box<dyn Error>>;

/// Print a key or value: as text when printable, else as hex.
pub fn show(bytes: &[u8]) -> String {
    if !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{hex}")
    }
}

/// Parse a key given on the command line: `0x...` is hex, anything else is taken as is.
pub fn parse_bytes(s: &str) -> Result<Vec<u8>, Box<dyn Error>> {
    match s.strip_prefix("0x") {
        Some(hex) if hex.len() % 2 == 0 => {
            (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| e.into())).collect()
        }
        _ => Ok(s.as_bytes().to_vec()),
    }
}

fn open_existing(db: &Path) -> Result<Db, Box<dyn Error>> {
    Ok(Db::open(db, Options { create_if_missing: false, ..Options::default() })?)
}

/// The keyspace `name` of `db`, which must exist: reading or deleting in a misspelt
/// keyspace should fail, not create it.
fn existing_keyspace(db: &Db, name: &str) -> Result<Keyspace, Box<dyn Error>> {
    let names = db.keyspace_names();
    if !names.iter().any(|n| n == name) {
        return Err(format!("no keyspace is named {name:?} (keyspaces: {})", names.join(", ")).into());
    }
    Ok(db.keyspace(name)?)
}

pub fn put(db: &Path, keyspace: &str, key: &str, value: &str) -> CliResult {
    let db = Db::open(db, Options::default())?;
    db.keyspace(keyspace)?.put(parse_bytes(key)?, parse_bytes(value)?)?;
    Ok(db.close()?)
}

pub fn get(db: &Path, keyspace: &str, key: &str) -> CliResult {
    let db = open_existing(db)?;
    match existing_keyspace(&db, keyspace)?.get(parse_bytes(key)?)? {
        Some(v) => println!("{}", show(&v)),
        None => {
            eprintln!("not found");
            std::process::exit(2);
        }
    }
    Ok(db.close()?)
}

pub fn delete(db: &Path, keyspace: &str, key: &str) -> CliResult {
    let db = open_existing(db)?;
    existing_keyspace(&db, keyspace)?.delete(parse_bytes(key)?)?;
    Ok(db.close()?)
}

pub fn compact(db: &Path) -> CliResult {
    let db = open_existing(db)?;
    let before = db.files().len();
    let started = std::time::Instant::now();
    db.compact()?;
    let seconds = started.elapsed().as_secs_f64();
    let live = db.files().len();
    let on_disk = std::fs::read_dir(db.path())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "sst"))
        .count();
    println!("compacted {before} tables into {live} in {seconds:.1} s; table files in the directory: {on_disk}");
    Ok(db.close()?)
}

pub fn checkpoint(db: &Path, out: &Path) -> CliResult {
    let db = open_existing(db)?;
    db.checkpoint(out)?;
    println!("checkpoint of {} written to {}", db.path().display(), out.display());
    Ok(db.close()?)
}

pub fn scan(
    db: &Path,
    keyspace: &str,
    from: Option<&str>,
    to: Option<&str>,
    limit: Option<usize>,
    reverse: bool,
) -> CliResult {
    use std::ops::Bound;
    let db = open_existing(db)?;
    let ks = existing_keyspace(&db, keyspace)?;
    let lo = match from {
        Some(f) => Bound::Included(parse_bytes(f)?),
        None => Bound::Unbounded,
    };
    let hi = match to {
        Some(t) => Bound::Excluded(parse_bytes(t)?),
        None => Bound::Unbounded,
    };
    let it = ks.range::<Vec<u8>, _>((lo, hi));
    let it: Box<dyn Iterator<Item = _>> = if reverse { Box::new(it.rev()) } else { Box::new(it) };
    for kv in it.take(limit.unwrap_or(usize::MAX)) {
        let (k, v) = kv?;
        println!("{}\t{}", show(&k), show(&v));
    }
    Ok(db.close()?)
}

pub fn inspect(db: &Path, files: bool) -> CliResult {
    let db = open_existing(db)?;
    let s = db.stats();
    println!("database {}", db.path().display());
    println!("last sequence {}, keyspaces: {}", s.last_sequence, db.keyspace_names().join(", "));
    for name in db.keyspace_names() {
        inspect_keyspace(&db.keyspace(&name)?, files);
    }
    println!();
    println!("device reads since open:");
    for kind in shamba::BlockKind::ALL {
        println!("  {:<7}{:>10} reads {:>14} bytes", kind.name(), s.io.reads_of(kind), s.io.bytes_of(kind));
    }
    println!("block cache: {} / {} bytes", s.cache_usage, s.cache_capacity);
    println!("{}", cache_entries_table(&s));
    println!("open table files: {} / {}", s.open_table_files, s.max_open_table_files);
    println!(
        "pinned index and filter bytes: {} (limit {}; {} tables keep theirs in the block cache)",
        s.pinned_table_bytes, s.pinned_metadata_limit, s.tables_metadata_in_cache
    );
    Ok(db.close()?)
}

/// One keyspace's memtables and levels, and with `files` its table files.
fn inspect_keyspace(ks: &Keyspace, files: bool) {
    let s = ks.stats();
    println!();
    println!(
        "keyspace {}: memtable {} B, frozen memtables {}, range tombstones {}",
        ks.name(),
        s.memtable_bytes,
        s.immutable_memtables,
        s.range_tombstones
    );
    println!(
        "{:<6}{:>7}{:>6}{:>14}{:>12}{:>13}{:>12}{:>10}",
        "level", "files", "runs", "bytes", "entries", "filter B", "index B", "bits/key"
    );
    for (i, l) in s.levels.iter().enumerate() {
        if l.files == 0 {
            continue;
        }
        let bpk = if l.entries > 0 { l.filter_bytes as f64 * 8.0 / l.entries as f64 } else { 0.0 };
        println!(
            "L{:<5}{:>7}{:>6}{:>14}{:>12}{:>13}{:>12}{:>10.2}",
            i, l.files, l.runs, l.bytes, l.entries, l.filter_bytes, l.index_bytes, bpk
        );
    }
    if !files {
        return;
    }
    println!(
        "{:<6}{:>8}{:>8}{:>12}{:>10}{:>10}{:>10}{:>8}  key range",
        "level", "file", "run", "bytes", "entries", "filter B", "beta", "alpha"
    );
    for f in ks.files() {
        // Persisted statistics: lookups reaching the file per table-reaching lookup
        // (beta) and the fraction of them that found their key (alpha).
        let (beta, alpha) = match f.stats {
            Some(r) => (format!("{:.4}", r.beta_rate()), format!("{:.3}", r.alpha())),
            None => ("-".into(), "-".into()),
        };
        println!(
            "L{:<5}{:>8}{:>8}{:>12}{:>10}{:>10}{:>10}{:>8}  {} .. {}",
            f.level,
            f.number,
            f.run,
            f.size,
            f.entries,
            f.filter_bytes,
            beta,
            alpha,
            show(&f.smallest_key),
            show(&f.largest_key)
        );
    }
}

/// The block cache's entries by block kind (RocksDB's block-cache entry statistics):
/// blocks, bytes and share of the capacity, with hits and misses since open.
pub fn cache_entries_table(s: &shamba::Stats) -> String {
    let mut out = format!("  {:<7}{:>10}{:>14}{:>9}{:>12}{:>12}", "kind", "blocks", "bytes", "share", "hits", "misses");
    for ((kind, (blocks, bytes, share)), c) in shamba::BlockKind::ALL.into_iter().zip(s.cache_entries()).zip(s.cache) {
        out.push_str(&format!(
            "\n  {:<7}{:>10}{:>14}{:>8.1}%{:>12}{:>12}",
            kind.name(),
            blocks,
            bytes,
            100.0 * share,
            c.hits,
            c.misses
        ));
    }
    out
}

pub fn sst(path: &Path, max_entries: usize) -> CliResult {
    print!("{}", shamba::sst::dump_table(&shamba::storage::FsStorage, path, max_entries)?);
    Ok(())
}

/// Check the database without opening it for writing (`Db::verify_dir`): print what was
/// read and every problem and orphan. Exits 0 when nothing is damaged, 1 on damage
/// (including a manifest that does not decode, so nothing else can be checked), 2 when
/// the check cannot run (no database, the database is open elsewhere, an I/O error).
pub fn verify(db: &Path) -> CliResult {
    match Db::verify_dir(db, Options::default()) {
        Ok(report) => {
            print!("{report}");
            if report.is_ok() {
                println!("ok");
                Ok(())
            } else {
                println!("damaged: {} problems", report.problems().len());
                std::process::exit(1);
            }
        }
        Err(e) if e.is_corruption() => {
            println!("damaged: the database cannot be read: {e}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: cannot verify: {e}");
            std::process::exit(2);
        }
    }
}
