"""Threads sharing one Db: writers and readers run together without errors or lost writes."""

import threading

import shamba

THREADS = 4
PER_THREAD = 2000


def test_threads_share_one_db(tmp_path):
    with shamba.Db(tmp_path / "db", write_buffer_size=64 << 10) as db:
        errors = []
        start = threading.Barrier(THREADS * 2)

        def writer(t):
            try:
                start.wait()
                for i in range(PER_THREAD):
                    db[b"t%d-%05d" % (t, i)] = b"%d" % i
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def reader(t):
            try:
                start.wait()
                seen = 0
                for i in range(PER_THREAD):
                    v = db.get(b"t%d-%05d" % (t, i))
                    assert v is None or v == b"%d" % i
                    seen += v is not None
                list(db.prefix(b"t%d-" % t))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(THREADS)]
        threads += [threading.Thread(target=reader, args=(t,)) for t in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for t in range(THREADS):
            keys = list(db.prefix(b"t%d-" % t))
            assert len(keys) == PER_THREAD
        assert db.stats()["background"]["flushes"] > 0  # small memtables: flushes ran meanwhile


def test_one_iterator_shared_by_threads_yields_each_key_once(tmp_path):
    with shamba.Db(tmp_path / "db") as db:
        for i in range(3000):
            db[b"%05d" % i] = b"v"
        it = db.keys()
        got = [[] for _ in range(THREADS)]

        def drain(t):
            for k in it:
                got[t].append(k)

        threads = [threading.Thread(target=drain, args=(t,)) for t in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        everything = sorted(k for g in got for k in g)
        assert everything == [b"%05d" % i for i in range(3000)]


def test_close_while_other_threads_read_ends_them_with_closed_error(tmp_path):
    db = shamba.Db(tmp_path / "db")
    db[b"k"] = b"v"
    outcomes = []
    started = threading.Barrier(THREADS + 1)

    def reader():
        started.wait()
        try:
            while True:
                assert db[b"k"] == b"v"
        except shamba.ClosedError:
            outcomes.append("closed")
        except Exception as e:  # noqa: BLE001 - reported below
            outcomes.append(e)

    threads = [threading.Thread(target=reader) for _ in range(THREADS)]
    for t in threads:
        t.start()
    started.wait()
    db.close()
    for t in threads:
        t.join()
    assert outcomes == ["closed"] * THREADS
