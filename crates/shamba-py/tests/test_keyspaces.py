"""Keyspaces: named trees in one database, written atomically together through one batch
and read at one moment through one snapshot."""

import pytest

import shamba


def test_a_keyspace_is_dict_like_and_apart_from_the_default_one(db):
    users = db.keyspace("users")
    assert users.name == "users"
    users[b"k"] = b"user"
    db[b"k"] = b"default"
    assert users[b"k"] == b"user"
    assert db[b"k"] == b"default"
    assert b"k" in users and b"nope" not in users
    with pytest.raises(KeyError):
        users[b"nope"]
    assert users.get(b"nope") is None
    assert users.get(b"nope", b"d") == b"d"
    users.put(b"a", b"1", sync=True)
    users.put(b"b", b"2")
    users.put(b"c", b"3")
    assert users.multi_get([b"c", b"nope", b"a"]) == [b"3", None, b"1"]
    assert list(users) == [b"a", b"b", b"c", b"k"]
    assert list(users.keys(reverse=True)) == [b"k", b"c", b"b", b"a"]
    assert list(users.values()) == [b"1", b"2", b"3", b"user"]
    assert list(users.items())[0] == (b"a", b"1")
    assert list(users.range(b"b", b"k")) == [(b"b", b"2"), (b"c", b"3")]
    assert list(users.prefix(b"k")) == [(b"k", b"user")]
    del users[b"a"]
    users.delete(b"b")
    assert list(users.keys()) == [b"c", b"k"]
    users.delete_range(b"c", b"d")
    assert list(users.keys()) == [b"k"]
    assert list(db.keys()) == [b"k"], "the default keyspace is untouched"
    with pytest.raises(TypeError, match="^key must be bytes"):
        users["k"]
    assert repr(users).startswith('<shamba.Keyspace "users" of ')


def test_the_default_keyspace_by_name_is_the_databases_own_keys(db):
    db[b"k"] = b"v"
    default = db.keyspace("default")
    assert default[b"k"] == b"v"
    default[b"j"] = b"w"
    assert db[b"j"] == b"w"
    assert db.keyspace_names() == ["default"]


def test_keyspace_names_and_drop(db):
    logs = db.keyspace("logs")
    db.keyspace("apps")
    logs[b"k"] = b"v"
    assert db.keyspace_names() == ["default", "apps", "logs"]
    db.drop_keyspace("logs")
    assert db.keyspace_names() == ["default", "apps"]
    with pytest.raises(shamba.InvalidArgumentError):
        logs[b"k"]
    with pytest.raises(shamba.InvalidArgumentError):
        logs.put(b"k", b"v")
    with pytest.raises(shamba.InvalidArgumentError):
        list(logs.items())  # its iterators too, on their first item
    with pytest.raises(shamba.InvalidArgumentError):
        db.drop_keyspace("logs")
    with pytest.raises(shamba.InvalidArgumentError):
        db.drop_keyspace("default")
    fresh = db.keyspace("logs")
    assert b"k" not in fresh, "a keyspace made again after a drop starts empty"


def test_a_batch_across_keyspaces_is_applied_at_once(db):
    a, b = db.keyspace("a"), db.keyspace("b")
    a[b"gone"] = b"x"
    batch = shamba.WriteBatch()
    batch.put(b"k", b"in-a", keyspace=a).put(b"k", b"in-b", keyspace=b).put(b"k", b"in-default")
    batch.delete(b"gone", keyspace=a)
    batch.delete_range(b"m", None, keyspace=b)
    b[b"m1"] = b"old"
    assert len(batch) == 5
    with db.snapshot() as before:
        db.write(batch)
        assert (a[b"k"], b[b"k"], db[b"k"]) == (b"in-a", b"in-b", b"in-default")
        assert b"gone" not in a
        assert b"m1" not in b, "the range delete went to b"
        # The snapshot taken before the write sees none of it, in any keyspace.
        assert before.get(b"k", keyspace=a) is None
        assert before.get(b"k", keyspace=b) is None
        assert before.get(b"k") is None
        assert before.get(b"gone", keyspace=a) == b"x"
    # And one taken after sees all of it.
    with db.snapshot() as after:
        assert after.multi_get([b"k", b"gone"], keyspace=a) == [b"in-a", None]
        assert after.get(b"k", keyspace=b) == b"in-b"


def test_a_snapshot_reads_every_keyspace_at_one_moment(db):
    a, b = db.keyspace("a"), db.keyspace("b")
    a[b"x1"] = b"a-old"
    a[b"\xff"] = b"a-ff"
    b[b"x1"] = b"b-old"
    with db.snapshot() as snap:
        a[b"x1"] = b"a-new"
        a[b"x2"] = b"a-new"
        b.delete(b"x1")
        db.compact()
        assert snap.get(b"x1", keyspace=a) == b"a-old"
        assert snap.get(b"x1", b"d", keyspace=b) == b"b-old"
        assert list(snap.items(keyspace=a)) == [(b"x1", b"a-old"), (b"\xff", b"a-ff")]
        assert list(snap.keys(reverse=True, keyspace=a)) == [b"\xff", b"x1"]
        assert list(snap.range(b"x", b"y", keyspace=a)) == [(b"x1", b"a-old")]
        assert list(snap.prefix(b"x", keyspace=a)) == [(b"x1", b"a-old")]
        assert list(snap.prefix(b"\xff", keyspace=a)) == [(b"\xff", b"a-ff")]
        assert list(snap.items(keyspace=b)) == [(b"x1", b"b-old")]
        assert list(snap.items()) == [], "the default keyspace was empty then"
    assert list(a.keys()) == [b"x1", b"x2", b"\xff"]
    assert list(b.keys()) == []


def test_a_snapshot_of_a_keyspace_reads_it_at_the_same_moment(db):
    a = db.keyspace("a")
    a[b"k"] = b"a-old"
    db[b"k"] = b"default-old"
    with db.snapshot() as snap:
        then = snap.keyspace(a)
        a[b"k"] = b"a-new"
        a[b"l"] = b"a-new"
        db[b"k"] = b"default-new"
        assert then.sequence == snap.sequence
        assert then[b"k"] == b"a-old" and b"l" not in then
        assert then.get(b"l", b"d") == b"d"
        assert then.multi_get([b"k", b"l"]) == [b"a-old", None]
        assert list(then) == [b"k"]
        assert list(then.values()) == [b"a-old"]
        assert list(then.items(reverse=True)) == [(b"k", b"a-old")]
        assert snap[b"k"] == b"default-old", "the snapshot it was made from still reads its own keyspace"
        assert then.get(b"k", keyspace=db.keyspace("default")) == b"default-old", "keyspace= still wins"
    with pytest.raises(shamba.ClosedError):
        then[b"k"]


def test_every_reader_is_readable_and_only_a_snapshot_takes_keyspace(db):
    ks = db.keyspace("a")
    with db.snapshot() as snap:
        for reader in (db, ks, snap, snap.keyspace(ks)):
            assert isinstance(reader, shamba.Readable)
    with pytest.raises(TypeError, match="snapshot"):
        db.get(b"k", keyspace=ks)
    with pytest.raises(TypeError, match="snapshot"):
        ks.items(keyspace=ks)


def test_a_keyspace_of_another_database_is_refused(tmp_path):
    with shamba.Db(tmp_path / "one") as one, shamba.Db(tmp_path / "two") as two:
        theirs = two.keyspace("t")
        theirs[b"k"] = b"v"
        one.keyspace("t")
        with one.snapshot() as snap:
            with pytest.raises(shamba.InvalidArgumentError, match="another database"):
                snap.get(b"k", keyspace=theirs)
            with pytest.raises(shamba.InvalidArgumentError, match="another database"):
                snap.range(keyspace=theirs)
            with pytest.raises(shamba.InvalidArgumentError, match="another database"):
                snap.keyspace(theirs)
        with pytest.raises(shamba.InvalidArgumentError):
            one.write(shamba.WriteBatch().put(b"k", b"v", keyspace=theirs))
        with pytest.raises(TypeError):
            shamba.WriteBatch().put(b"k", b"v", keyspace="t")


def test_keyspaces_survive_a_reopen_and_closing_the_database_closes_them(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path, write_buffer_size=1 << 16) as db:
        a = db.keyspace("a")
        for i in range(2000):
            a[b"k%05d" % i] = b"a%d" % i
        db.keyspace("b")[b"only-in-log"] = b"b"
        db.flush()
        a[b"after-flush"] = b"yes"
        db.keyspace("dropped")[b"k"] = b"v"
        db.drop_keyspace("dropped")
    with pytest.raises(shamba.ClosedError):
        a[b"k00001"]
    with shamba.Db(path) as db:
        assert db.keyspace_names() == ["default", "a", "b"]
        a = db.keyspace("a")
        assert a[b"k01999"] == b"a1999"
        assert a[b"after-flush"] == b"yes"
        assert sum(1 for _ in a) == 2001
        assert db.keyspace("b")[b"only-in-log"] == b"b"
        assert list(db.keys()) == []


def test_keyspace_options_shape_its_own_tree(tmp_path):
    path = tmp_path / "db"
    with shamba.Db(path, bits_per_key=10) as db:
        tiered = db.keyspace("t", compaction_style="tiered", bits_per_key=4, layout="modules-eq", parts=2)
        for i in range(500):
            tiered[b"%05d" % i] = b"v"
        tiered.compact()
        levels = [l for l in tiered.stats()["levels"] if l["files"] > 0]
        assert levels, "its tables are in its own levels"
        assert not any(l["files"] for l in db.stats()["levels"]), "the default keyspace has none"
        bits = sum(l["filter_bytes"] for l in levels) * 8 / sum(l["entries"] for l in levels)
        assert bits < 7, f"built at 4 bits per key, not the database's 10: {bits}"
        # The same options again name the same keyspace; others are refused.
        db.keyspace("t", compaction_style="tiered", bits_per_key=4, layout="modules-eq", parts=2)
        with pytest.raises(shamba.InvalidOptionsError):
            db.keyspace("t", bits_per_key=12)
        with pytest.raises(TypeError, match="'write_buffer_size'"):
            db.keyspace("u", write_buffer_size=1)
        with pytest.raises(ValueError, match="layout must be one of"):
            db.keyspace("u", layout="nope")
    # At open, `keyspaces=` gives a keyspace its options for this process.
    with shamba.Db(path, keyspaces={"t": {"compaction_style": "tiered", "bits_per_key": 4}}) as db:
        t = db.keyspace("t")
        assert t[b"00042"] == b"v"
    with pytest.raises(TypeError, match="keyspaces"):
        shamba.Db(path, keyspaces=["t"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'cache_mb'"):
        shamba.Db(path, keyspaces={"t": {"cache_mb": 1}})
