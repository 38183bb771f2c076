"""Optimistic transactions: reads over their snapshot, commit at the end of a ``with``
block, rollback when it raises, ``ConflictError`` and ``Db.transact``."""

import threading

import pytest

import shamba


def test_a_transaction_reads_its_snapshot_with_its_own_writes(db):
    db[b"a"] = b"1"
    db[b"b"] = b"2"
    with db.transaction() as tx:
        db[b"a"] = b"later"
        tx[b"c"] = b"3"
        del tx[b"b"]
        assert tx[b"a"] == b"1"
        assert tx.get(b"b") is None
        assert tx.get(b"b", b"gone") == b"gone"
        assert tx.multi_get([b"a", b"b", b"c"]) == [b"1", None, b"3"]
        assert list(tx.items()) == [(b"a", b"1"), (b"c", b"3")]
        assert list(tx.keys(reverse=True)) == [b"c", b"a"]
        assert b"c" not in db
    assert list(db.items()) == [(b"a", b"later"), (b"c", b"3")]


def test_the_block_commits_and_an_exception_rolls_back(db):
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            tx.put(b"k", b"v")
            raise RuntimeError("abandon")
    assert b"k" not in db
    with db.transaction() as tx:
        tx.put(b"k", b"v")
        tx.delete_range(b"a", b"z")
        tx.put(b"m", b"after the range")
    assert list(db.items()) == [(b"m", b"after the range")]
    with pytest.raises(shamba.ClosedError):
        tx.get(b"k")


def test_a_conflict_raises_conflict_error_naming_the_key(db):
    db[b"k"] = b"0"
    tx = db.transaction()
    assert tx.get_for_update(b"k") == b"0"
    tx.put(b"other", b"x")
    db[b"k"] = b"1"
    with pytest.raises(shamba.ConflictError) as e:
        tx.commit()
    assert e.value.key == b"k" and e.value.keyspace == "default"
    assert isinstance(e.value, shamba.Error)
    assert b"other" not in db
    # The `with` form raises it at the end of the block.
    with pytest.raises(shamba.ConflictError):
        with db.transaction() as tx:
            tx[b"k"] = b"mine"
            db[b"k"] = b"theirs"
    assert db[b"k"] == b"theirs"


def test_keyspaces_in_a_transaction(db):
    users = db.keyspace("users")
    users[b"u1"] = b"ada"
    with db.transaction() as tx:
        assert tx.get_for_update(b"u1", keyspace=users) == b"ada"
        tx.put(b"u2", b"grace", keyspace=users)
        tx.delete(b"u1", keyspace=users)
        assert list(tx.items(keyspace=users)) == [(b"u2", b"grace")]
        assert tx.get(b"u2") is None
    assert list(users.items()) == [(b"u2", b"grace")]


def test_transact_reruns_on_conflict(db):
    db[b"n"] = b"0"
    runs = []

    def increment(tx):
        runs.append(1)
        n = int(tx.get_for_update(b"n"))
        if len(runs) == 1:
            db[b"n"] = b"10"
        tx[b"n"] = str(n + 1).encode()
        return n + 1

    assert db.transact(increment) == 11
    assert len(runs) == 2 and db[b"n"] == b"11"

    def always(tx):
        tx[b"n"] = b"x"
        db[b"n"] = b"someone else"

    with pytest.raises(shamba.ConflictError):
        db.transact(always, max_attempts=3)


def test_threads_incrementing_in_transactions_lose_nothing(db):
    db[b"n"] = b"0"

    def work():
        for _ in range(50):
            db.transact(lambda tx: tx.put(b"n", str(int(tx.get_for_update(b"n")) + 1).encode()), max_attempts=1000)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db[b"n"] == b"200"


def test_a_transaction_past_its_max_age_stops_reading_but_commits(db):
    import time

    db[b"k"] = b"v"
    tx = db.transaction(max_age=0.05)
    assert tx[b"k"] == b"v"
    tx[b"mine"] = b"1"
    time.sleep(0.08)
    with pytest.raises(shamba.ConflictError, match="max_age"):
        tx.get(b"k")
    assert tx[b"mine"] == b"1"
    tx.commit()
    assert db[b"mine"] == b"1"
    with pytest.raises(ValueError):
        db.transaction(max_age=-1)
    # No bound: as a snapshot.
    with db.transaction(max_age=None) as tx:
        assert tx[b"k"] == b"v"
