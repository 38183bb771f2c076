"""Write batches and snapshots."""

import pytest

import shamba


def test_batch_applies_puts_and_deletes_in_order(db):
    db[b"gone"] = b"x"
    b = shamba.WriteBatch()
    b.put(b"a", b"1").put(b"b", b"2").delete(b"gone").put(b"a", b"3")
    assert len(b) == 4
    assert b"a" not in db  # nothing applied before write
    db.write(b)
    assert db[b"a"] == b"3"
    assert db[b"b"] == b"2"
    assert b"gone" not in db


def test_batch_is_kept_after_write_and_can_be_cleared(db):
    b = shamba.WriteBatch().put(b"k", b"v")
    db.write(b, sync=True)
    assert len(b) == 1
    b.clear()
    assert len(b) == 0
    db.write(b)  # an empty batch writes nothing
    assert db[b"k"] == b"v"


def test_batch_rejects_str(db):
    with pytest.raises(TypeError, match="^key must be bytes"):
        shamba.WriteBatch().put("k", b"v")


def test_snapshot_reads_as_of_its_moment(db):
    db[b"a"] = b"old"
    db[b"b"] = b"old"
    with db.snapshot() as snap:
        db[b"a"] = b"new"
        del db[b"b"]
        db[b"c"] = b"new"
        assert snap[b"a"] == b"old"
        assert snap.get(b"b") == b"old"
        assert snap.get(b"c") is None
        assert snap.get(b"c", b"d") == b"d"
        assert b"c" not in snap
        with pytest.raises(KeyError):
            snap[b"c"]
        assert list(snap.range()) == [(b"a", b"old"), (b"b", b"old")]
        assert list(snap.range(reverse=True)) == [(b"b", b"old"), (b"a", b"old")]
        assert list(snap.keys()) == [b"a", b"b"]
        assert [k for k, _ in snap.prefix(b"a")] == [b"a"]
        assert snap.sequence > 0
    assert db[b"a"] == b"new"


def test_snapshot_survives_flush_and_compaction(db):
    db[b"k"] = b"v1"
    snap = db.snapshot()
    db[b"k"] = b"v2"
    db.compact()
    assert snap[b"k"] == b"v1"
    assert db[b"k"] == b"v2"
    snap.release()


def test_released_snapshot_raises_closed_error(db):
    snap = db.snapshot()
    snap.release()
    snap.release()  # twice is fine
    with pytest.raises(shamba.ClosedError):
        snap.get(b"k")


def test_snapshot_reads_raise_closed_error_once_its_db_is_closed(tmp_path):
    db = shamba.Db(tmp_path / "db")
    db[b"k"] = b"v"
    snap = db.snapshot()
    db.close()
    with pytest.raises(shamba.ClosedError):
        snap.get(b"k")
    with pytest.raises(shamba.ClosedError):
        snap.range()  # not an empty iterator: the view is gone
    with pytest.raises(shamba.ClosedError):
        snap.prefix(b"k")


def test_an_iterator_made_before_close_runs_to_its_end(tmp_path):
    db = shamba.Db(tmp_path / "db")
    for i in range(100):
        db[b"%03d" % i] = b"v"
    db.flush()
    it = db.keys()
    assert next(it) == b"000"
    db.close()
    assert sum(1 for _ in it) == 99


def test_a_snapshot_multi_get_reads_its_moment(db):
    db[b"a"] = b"old"
    with db.snapshot() as snap:
        db[b"a"] = b"new"
        db[b"b"] = b"later"
        assert snap.multi_get([b"b", b"a"]) == [None, b"old"]
    assert db.multi_get([b"b", b"a"]) == [b"later", b"new"]
