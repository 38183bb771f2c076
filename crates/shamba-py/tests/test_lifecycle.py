"""Open, close, reopen, checkpoint, flush and compaction, stats and verify."""

import threading

import pytest

import shamba


def test_reopen_finds_what_was_written(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path) as db:
        for i in range(1000):
            db[b"k%04d" % i] = b"v%d" % i
        db.flush()
        db[b"in-log-only"] = b"x"
        del db[b"k0000"]
    with shamba.Db(str(path)) as db:
        assert db[b"k0999"] == b"v999"
        assert db[b"in-log-only"] == b"x"
        assert b"k0000" not in db
        assert sum(1 for _ in db) == 1000


def test_use_after_close_raises_closed_error(tmp_path):
    db = shamba.Db(tmp_path / "db")
    db[b"k"] = b"v"
    db.close()
    assert db.closed
    for call in [
        lambda: db[b"k"],
        lambda: db.get(b"k"),
        lambda: db.put(b"k", b"v"),
        lambda: db.keys(),
        lambda: db.snapshot(),
        lambda: db.flush(),
        lambda: db.stats(),
        lambda: iter(db),
    ]:
        with pytest.raises(shamba.ClosedError):
            call()
    db.close()  # closing again does nothing


def test_with_block_closes_even_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with shamba.Db(tmp_path / "db") as db:
            raise RuntimeError("boom")
    assert db.closed
    # the directory lock is released: it opens again
    shamba.Db(tmp_path / "db").close()


def test_second_open_of_one_directory_raises_locked_error(tmp_path):
    with shamba.Db(tmp_path / "db"):
        with pytest.raises(shamba.LockedError) as e:
            shamba.Db(tmp_path / "db")
        assert isinstance(e.value, shamba.Error)
        assert e.value.path is not None


def test_missing_database_without_create_is_invalid_argument(tmp_path):
    with pytest.raises(shamba.InvalidArgumentError):
        shamba.Db(tmp_path / "nothing", create_if_missing=False)


def test_checkpoint_is_a_database_of_its_own(tmp_path, db):
    db[b"k"] = b"v1"
    db.checkpoint(tmp_path / "backup")
    db[b"k"] = b"v2"
    with shamba.Db(tmp_path / "backup") as backup:
        assert backup[b"k"] == b"v1"
    with pytest.raises(shamba.InvalidArgumentError):
        db.checkpoint(tmp_path / "backup")  # exists


def test_stats_are_plain_python_data(db):
    for i in range(500):
        db[b"%05d" % i] = b"v" * 50
    db.flush()
    for i in range(0, 1000, 10):
        db.get(b"%05d" % i)
    s = db.stats()

    def plain(x):
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, list):
            return all(plain(v) for v in x)
        return x is None or isinstance(x, (int, float, str, bool))

    assert plain(s)
    assert set(s["io"]) == {"data", "index", "filter", "other"}
    assert s["lookups"]["gets"] == 100
    assert s["writes"]["ops"] == 500
    assert s["background"]["flushes"] >= 1
    assert "pending_compaction_bytes" in s["background"]
    assert sum(level["files"] for level in s["levels"]) >= 1
    assert sum(level["entries"] for level in s["levels"]) == 500
    # what the flushes wrote is what level 0 took in
    assert s["levels"][0]["bytes_written"] == s["background"]["flush_bytes"] > 0
    # lookups of the 50 absent keys reach the tables and meet their filters
    assert s["lookups"]["table_hits"] + s["lookups"]["filter_negatives"] + s["lookups"]["filter_false_positives"] > 0
    assert s["cache"]["capacity"] == 32 << 20
    assert set(s["cache"]["kinds"]["data"]) == {"hits", "misses", "bytes_inserted", "bytes_resident", "entries_resident"}


def test_compact_leaves_one_run_with_every_key(db):
    for round_ in range(3):
        for i in range(300):
            db[b"%04d" % i] = b"r%d" % round_
        db.flush()
    db.compact()
    levels = db.stats()["levels"]
    assert sum(level["runs"] for level in levels) == 1
    assert sum(level["entries"] for level in levels) == 300
    assert db[b"0000"] == b"r2"


def test_verify_reports_a_healthy_database(db):
    db[b"k"] = b"v"
    db.flush()
    r = db.verify()
    assert r["ok"] is True
    assert r["tables"] == 1
    assert r["problems"] == []
    assert r["orphans"] == []


def test_a_damaged_table_raises_corruption_error_and_verify_names_it(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path, cache_mb=0) as db:
        for i in range(2000):
            db[b"%06d" % i] = b"value-%d" % i
        db.flush()
    [sst] = list(path.glob("*.sst"))
    data = bytearray(sst.read_bytes())
    for off in range(100, 2000):  # inside the first data blocks
        data[off] ^= 0xFF
    sst.write_bytes(bytes(data))
    with shamba.Db(path, cache_mb=0) as db:
        with pytest.raises(shamba.CorruptionError) as e:
            db[b"000001"]
        assert sst.name in str(e.value.file)
        assert isinstance(e.value, shamba.Error)
        with pytest.raises(shamba.CorruptionError):
            list(db.keys())
        r = db.verify()
        assert r["ok"] is False
        assert any(sst.name in p["file"] for p in r["problems"])


def test_resume_on_a_healthy_database_is_a_no_op(db):
    db.resume()
    db[b"k"] = b"v"
    assert db[b"k"] == b"v"


def test_close_waits_for_no_one_and_other_threads_then_see_closed(tmp_path):
    db = shamba.Db(tmp_path / "db")
    db.close()
    errors = []

    def reader():
        try:
            db.get(b"k")
        except shamba.ClosedError as e:
            errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    t.join()
    assert len(errors) == 1
