"""Time to live from Python: ``put(k, v, ttl=seconds)`` on a database, a keyspace and in a
batch, ``ttl(k)``, and keys that are gone for every read once their time is up."""

import time

import pytest

import shamba


def test_a_key_put_with_a_ttl_is_gone_once_its_time_is_up(db):
    db.put(b"short", b"1", ttl=0.2)
    db.put(b"long", b"2", ttl=3600)
    db.put(b"plain", b"3")
    assert db[b"short"] == b"1"
    assert 0 < db.ttl(b"short") <= 0.2
    assert 3599 < db.ttl(b"long") <= 3600
    assert db.ttl(b"plain") is None
    with pytest.raises(KeyError):
        db.ttl(b"absent")
    snap = db.snapshot()
    time.sleep(0.3)
    assert db.get(b"short") is None
    assert b"short" not in db
    assert db.multi_get([b"short", b"long"]) == [None, b"2"]
    assert list(db.keys()) == [b"long", b"plain"]
    assert list(db.keys(reverse=True)) == [b"plain", b"long"]
    assert snap.get(b"short") is None, "a snapshot read after the deadline does not see it"
    with pytest.raises(KeyError):
        db.ttl(b"short")


def test_ttl_in_a_keyspace_and_in_a_batch(db):
    ks = db.keyspace("sessions")
    ks.put(b"s1", b"token", ttl=0.2)
    batch = shamba.WriteBatch()
    batch.put(b"a", b"1", ttl=0.2).put(b"b", b"2", keyspace=ks, ttl=0.2).put(b"c", b"3")
    db.write(batch)
    assert ks.ttl(b"s1") > 0 and ks.ttl(b"b") > 0 and db.ttl(b"a") > 0
    assert db.snapshot().ttl(b"b", keyspace=ks) > 0
    time.sleep(0.3)
    assert list(ks.keys()) == []
    assert list(db.keys()) == [b"c"]


def test_ttl_survives_a_flush_a_compaction_and_a_reopen(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path) as db:
        db.put(b"k", b"v", ttl=3600)
        db.put(b"gone", b"v", ttl=0.1)
        db.flush()
        time.sleep(0.2)
        db.compact()
    with shamba.Db(path) as db:
        assert 3500 < db.ttl(b"k") <= 3600
        assert b"gone" not in db


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf")])
def test_a_bad_ttl_is_a_value_error(db, bad):
    with pytest.raises(ValueError):
        db.put(b"k", b"v", ttl=bad)


@pytest.mark.parametrize("bad", ["10", True, b"1"])
def test_a_ttl_of_the_wrong_type_is_a_type_error(db, bad):
    with pytest.raises(TypeError):
        db.put(b"k", b"v", ttl=bad)
    assert b"k" not in db


def test_expire_and_persist(db):
    ks = db.keyspace("k")
    db[b"a"] = b"1"
    ks[b"b"] = b"2"
    assert db.expire(b"a", 0.2) is True
    assert ks.expire(b"b", 3600) is True
    assert db.expire(b"absent", 1) is False
    assert 0 < db.ttl(b"a") <= 0.2
    assert ks.persist(b"b") is True
    assert ks.persist(b"b") is False
    assert ks.ttl(b"b") is None
    time.sleep(0.3)
    assert b"a" not in db
    assert ks[b"b"] == b"2"


def test_ttl_in_a_transaction(db):
    with db.transaction() as tx:
        tx.put(b"t", b"1", ttl=0.2)
        assert 0 < tx.ttl(b"t") <= 0.2
    assert 0 < db.ttl(b"t") <= 0.2
    time.sleep(0.3)
    assert b"t" not in db
