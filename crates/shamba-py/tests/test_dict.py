"""The dict-like surface: item access, membership, get with a default, delete."""

import pytest

import shamba


def test_set_then_get_returns_the_bytes(db):
    db[b"apple"] = b"red"
    assert db[b"apple"] == b"red"
    assert db.get(b"apple") == b"red"
    assert isinstance(db[b"apple"], bytes)


def test_missing_key_raises_key_error_naming_it(db):
    with pytest.raises(KeyError) as e:
        db[b"nope"]
    assert e.value.args == (b"nope",)


def test_get_returns_default_when_absent(db):
    assert db.get(b"nope") is None
    assert db.get(b"nope", b"dflt") == b"dflt"
    sentinel = object()
    assert db.get(b"nope", sentinel) is sentinel


def test_contains_tells_present_from_absent(db):
    db.put(b"k", b"v")
    assert b"k" in db
    assert b"other" not in db


def test_overwrite_keeps_the_last_value(db):
    db[b"k"] = b"1"
    db[b"k"] = b"2"
    assert db[b"k"] == b"2"


def test_del_removes_and_del_of_absent_key_is_blind(db):
    db[b"k"] = b"v"
    del db[b"k"]
    assert b"k" not in db
    with pytest.raises(KeyError):
        db[b"k"]
    # An LSM delete is a blind tombstone: deleting what is not there is no error.
    del db[b"never-written"]
    db.delete(b"never-written")


def test_empty_value_is_a_value_not_absence(db):
    db[b"k"] = b""
    assert b"k" in db
    assert db[b"k"] == b""


def test_bytearray_and_memoryview_are_accepted_and_copied(db):
    key = bytearray(b"key")
    db[key] = memoryview(b"value")
    key[0] = ord("X")  # changing the caller's buffer afterwards changes nothing stored
    assert db[b"key"] == b"value"
    assert db[memoryview(b"key")] == b"value"


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda db: db.put("k", b"v"), "key"),
        (lambda db: db.put(b"k", "v"), "value"),
        (lambda db: db.get("k"), "key"),
        (lambda db: db.__setitem__(b"k", 5), "value"),
        (lambda db: db.delete(1), "key"),
        (lambda db: "k" in db, "key"),
        (lambda db: db.range(start="a"), "start"),
        (lambda db: db.range(end="z"), "end"),
        (lambda db: db.prefix("p"), "prefix"),
    ],
)
def test_str_or_int_is_a_type_error_naming_the_argument(db, call, argument):
    with pytest.raises(TypeError, match=f"^{argument} must be bytes"):
        call(db)


def test_binary_keys_with_zero_bytes_round_trip(db):
    k = bytes(range(256))
    db[k] = k[::-1]
    assert db[k] == k[::-1]


def test_a_key_over_the_size_limit_is_an_invalid_argument_error(db):
    with pytest.raises(shamba.InvalidArgumentError) as e:
        db[b"k" * (64 * 1024 + 1)] = b"v"
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value, shamba.Error)


def test_delete_range_removes_a_half_open_range_with_one_call(db):
    for i in range(100):
        db[b"k%03d" % i] = b"v"
    db.delete_range(b"k010", b"k090")
    assert list(db.keys()) == [b"k%03d" % i for i in list(range(10)) + list(range(90, 100))]
    db.delete_range(start=b"k095")
    assert b"k094" in db and b"k095" not in db
    db.write(shamba.WriteBatch().delete_range(end=b"k005").put(b"k001", b"back"))
    assert list(db.keys())[:2] == [b"k001", b"k005"]
    with pytest.raises(TypeError):
        db.delete_range("k0", b"k1")


def test_multi_get_returns_values_in_key_order_with_none_for_absent(db):
    db[b"a"] = b"1"
    db[b"c"] = b"3"
    assert db.multi_get([b"c", b"b", b"a", b"c"]) == [b"3", None, b"1", b"3"]
    assert db.multi_get(iter([])) == []
    with pytest.raises(TypeError):
        db.multi_get([b"a", "b"])
