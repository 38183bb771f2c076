"""Iterators: keys, values, items, range and prefix, forward and reversed."""

import pytest

KEYS = [b"a", b"b", b"c", b"d", b"e"]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db[k] = k.upper()
    return db


def test_iterating_the_db_yields_keys_in_order(filled):
    assert list(filled) == KEYS


def test_keys_values_items_both_ways(filled):
    assert list(filled.keys()) == KEYS
    assert list(filled.keys(reverse=True)) == KEYS[::-1]
    assert list(filled.values()) == [k.upper() for k in KEYS]
    assert list(filled.values(reverse=True)) == [k.upper() for k in KEYS[::-1]]
    assert list(filled.items()) == [(k, k.upper()) for k in KEYS]
    assert list(filled.items(reverse=True)) == [(k, k.upper()) for k in KEYS[::-1]]


def test_they_are_iterators_not_lists(filled):
    it = filled.keys()
    assert iter(it) is it
    assert next(it) == b"a"
    assert next(it) == b"b"
    assert not isinstance(it, list)


def test_range_includes_start_and_excludes_end(filled):
    assert [k for k, _ in filled.range(b"b", b"d")] == [b"b", b"c"]
    assert [k for k, _ in filled.range(b"b", b"d", reverse=True)] == [b"c", b"b"]
    assert [k for k, _ in filled.range(start=b"c")] == [b"c", b"d", b"e"]
    assert [k for k, _ in filled.range(end=b"c")] == [b"a", b"b"]
    assert [k for k, _ in filled.range(end=b"c", reverse=True)] == [b"b", b"a"]
    assert list(filled.range(b"x", b"z")) == []


def test_prefix_yields_only_matching_keys_both_ways(db):
    for k in [b"user:1", b"user:2", b"user:3", b"userx", b"video:1"]:
        db[k] = b"v"
    assert [k for k, _ in db.prefix(b"user:")] == [b"user:1", b"user:2", b"user:3"]
    assert [k for k, _ in db.prefix(b"user:", reverse=True)] == [b"user:3", b"user:2", b"user:1"]
    assert list(db.prefix(b"none:")) == []


def test_seek_restarts_the_walk(filled):
    it = filled.keys()
    it.seek(b"c")
    assert list(it) == [b"c", b"d", b"e"]
    back = filled.keys(reverse=True)
    back.seek(b"bb")
    assert list(back) == [b"b", b"a"]


def test_an_iterator_does_not_see_later_writes(filled):
    it = filled.keys()
    assert next(it) == b"a"
    filled[b"bb"] = b"new"
    del filled[b"e"]
    assert list(it) == [b"b", b"c", b"d", b"e"]


def test_deleted_keys_are_not_yielded(filled):
    del filled[b"c"]
    assert list(filled) == [b"a", b"b", b"d", b"e"]


def test_iteration_spans_memtable_and_tables(db):
    for i in range(0, 200, 2):
        db[b"%04d" % i] = b"t"
    db.flush()
    for i in range(1, 200, 2):
        db[b"%04d" % i] = b"m"
    keys = list(db.keys())
    assert keys == [b"%04d" % i for i in range(200)]
    assert list(db.keys(reverse=True)) == keys[::-1]
