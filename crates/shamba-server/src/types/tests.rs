use super::*;
use crate::durability::SyncMode;
use crate::store::{Selected, Store};
use shamba::{Db, Options, Readable};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    (dir, Store::new(db, SyncMode::Never, 4).unwrap())
}

/// Write `fields` into the hash at `key` as a command would.
fn hset(db: &Selected<'_>, key: &[u8], pairs: &[(&[u8], &[u8])]) {
    let mut w = Write::open(db, key, Kind::Hash).unwrap();
    let old = get_fields(db, key, &w.meta, pairs.iter().map(|(f, _)| *f)).unwrap();
    for ((f, v), was) in pairs.iter().zip(old) {
        w.put_field(key, f, v);
        w.meta.size += u64::from(was.is_none());
    }
    db.write(w.finish(key)).unwrap();
}

fn all_fields(db: &Selected<'_>, key: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    match live_meta(db, key).unwrap() {
        Some(m) => fields(db, key, &m, None).collect::<shamba::Result<_>>().unwrap(),
        None => Vec::new(),
    }
}

/// Every entry of the fields keyspace, whatever its version.
fn raw_field_count(db: &Selected<'_>) -> usize {
    db.collections().map_or(0, |c| c.fields.iter().count())
}

#[test]
fn a_database_of_strings_only_never_gets_collection_keyspaces() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    db.put(b"s", b"v").unwrap();
    assert_eq!(lookup(&db, b"s").unwrap(), Entry::String);
    assert_eq!(lookup(&db, b"nope").unwrap(), Entry::Absent);
    assert!(db.collections().is_none());
    assert_eq!(store.db().keyspace_names(), ["default"]);
}

#[test]
fn a_hash_is_metadata_plus_one_entry_per_field_read_back_in_order() {
    let (_dir, store) = store();
    let db = store.select(1).unwrap().unwrap();
    hset(&db, b"h", &[(b"b", b"2"), (b"a", b"1")]);
    hset(&db, b"h", &[(b"a", b"one"), (b"c", b"3")]);
    let Entry::Collection(meta) = lookup(&db, b"h").unwrap() else { panic!("a collection") };
    assert_eq!((meta.kind, meta.size, meta.deadline_ms), (Kind::Hash, 3, None));
    assert_eq!(lookup(&db, b"h").unwrap().type_name(), "hash");
    let want: Vec<(Vec<u8>, Vec<u8>)> = [("a", "one"), ("b", "2"), ("c", "3")]
        .iter()
        .map(|(f, v)| (f.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    assert_eq!(all_fields(&db, b"h"), want);
    assert_eq!(get_field(&db, b"h", &meta, b"b").unwrap().as_deref(), Some(&b"2"[..]));
    // Resuming after a field skips it.
    let after: Vec<_> = fields(&db, b"h", &meta, Some(b"a")).map(|r| r.unwrap().0).collect();
    assert_eq!(after, [b"b".to_vec(), b"c".to_vec()]);
    let c = db.collections().unwrap();
    assert_eq!(c.meta.name(), "db1.meta");
    assert_eq!(c.meta.get(b"h").unwrap().unwrap().first(), Some(&FORMAT_VERSION));
    assert_eq!(raw_field_count(&db), 3);
}

#[test]
fn other_types_are_the_wrong_type() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    db.put(b"s", b"v").unwrap();
    assert_eq!(Write::open(&db, b"s", Kind::Hash).err(), Some(wrong_type()));
    assert_eq!(collection(&db, b"s", Kind::Set).err(), Some(wrong_type()));
    hset(&db, b"h", &[(b"f", b"v")]);
    assert_eq!(collection(&db, b"h", Kind::Set).err(), Some(wrong_type()));
    assert!(collection(&db, b"h", Kind::Hash).unwrap().is_some());
    assert_eq!(collection(&db, b"none", Kind::Hash), Ok(None));
    assert_eq!(absent_string(&db, b"h"), wrong_type());
    assert_eq!(absent_string(&db, b"none"), crate::reply::Reply::Null);
}

#[test]
fn a_string_put_replaces_a_collection_and_its_fields_in_one_batch() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    hset(&db, b"k", &[(b"f", b"v"), (b"g", b"w")]);
    hset(&db, b"other", &[(b"f", b"v")]);
    db.put(b"k", b"now a string").unwrap();
    assert_eq!(lookup(&db, b"k").unwrap(), Entry::String);
    assert_eq!(raw_field_count(&db), 1, "only the other hash's field is left");
}

#[test]
fn an_expired_collection_reads_as_absent_and_leaks_nothing_into_the_next() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    hset(&db, b"h", &[(b"old", b"1")]);
    let c = db.collections().unwrap();
    let mut meta = live_meta(&db, b"h").unwrap().unwrap();
    meta.deadline_ms = Some(1);
    let mut b = db.batch();
    put_meta(&mut b, c, b"h", &meta);
    db.write(b).unwrap();
    assert_eq!(lookup(&db, b"h").unwrap(), Entry::Absent);
    assert!(stored_meta(&db, c, b"h").unwrap().is_some(), "still stored until the key is written");

    hset(&db, b"h", &[(b"new", b"2")]);
    let fresh = live_meta(&db, b"h").unwrap().unwrap();
    assert!(fresh.version > meta.version);
    assert_eq!(fresh.size, 1);
    assert_eq!(all_fields(&db, b"h"), [(b"new".to_vec(), b"2".to_vec())]);
    assert_eq!(raw_field_count(&db), 1, "the expired hash's field was deleted with it");
}

#[test]
fn deleting_a_collection_is_its_metadata_and_one_range() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    hset(&db, b"h", &[(b"a", b"1"), (b"b", b"2")]);
    hset(&db, b"h2", &[(b"a", b"1")]);
    let mut b = db.batch();
    assert!(delete_collection(&db, &mut b, b"h").unwrap());
    assert_eq!(b.len(), 2);
    db.write(b).unwrap();
    assert_eq!(lookup(&db, b"h").unwrap(), Entry::Absent);
    assert_eq!(raw_field_count(&db), 1);
    let mut b = db.batch();
    assert!(!delete_collection(&db, &mut b, b"h").unwrap(), "nothing left to delete");
    assert!(b.is_empty());
}

#[test]
fn a_collection_emptied_by_a_write_is_deleted() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    hset(&db, b"h", &[(b"a", b"1")]);
    let mut w = Write::open(&db, b"h", Kind::Hash).unwrap();
    w.delete_field(b"h", b"a");
    w.meta.size -= 1;
    db.write(w.finish(b"h")).unwrap();
    assert_eq!(lookup(&db, b"h").unwrap(), Entry::Absent);
    assert_eq!(raw_field_count(&db), 0);
}

#[test]
fn flushdb_takes_the_collections_too() {
    let (_dir, store) = store();
    let db = store.select(0).unwrap().unwrap();
    hset(&db, b"h", &[(b"a", b"1")]);
    db.put(b"s", b"v").unwrap();
    let mut b = db.batch();
    db.delete_all(&mut b);
    db.write(b).unwrap();
    assert_eq!(lookup(&db, b"h").unwrap(), Entry::Absent);
    assert_eq!(lookup(&db, b"s").unwrap(), Entry::Absent);
    assert_eq!(raw_field_count(&db), 0);
}
