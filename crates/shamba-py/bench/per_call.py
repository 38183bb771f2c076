"""Per-call cost of the Python binding: `db[k] = v`, `db.get(k)` and `db[k]`, 1e5 calls each.

Run against a release build (`pip install ./crates/shamba-py`), beside the same sequence in
Rust (`cargo run --release -p shamba --example per_call`). Not part of CI.
"""

import sys
import tempfile
import time

import shamba

N = 100_000
KEYS = [b"key%012d" % ((i * 7919) % N) for i in range(N)]  # a fixed scrambled order
VALUE = b"v" * 100


def per_call_ns(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) / N * 1e9


def main():
    with tempfile.TemporaryDirectory() as d, shamba.Db(d) as db:
        rows = []

        def put():
            for k in KEYS:
                db[k] = VALUE

        def get():
            for k in KEYS:
                db.get(k)

        def getitem():
            for k in KEYS:
                db[k]

        def get_one():
            k = KEYS[0]
            for _ in KEYS:
                db.get(k)

        def loop_only():
            for k in KEYS:
                pass

        rows.append(("db[k] = v (memtable)", per_call_ns(put)))
        rows.append(("db.get(k) (memtable)", per_call_ns(get)))
        db.wait_for_compactions()
        get()  # warm the block cache
        rows.append(("db.get(k) (tables, cached)", per_call_ns(get)))
        rows.append(("db[k] (tables, cached)", per_call_ns(getitem)))
        rows.append(("db.get(k) (one key, tables)", per_call_ns(get_one)))
        rows.append(("bare loop", per_call_ns(loop_only)))
        for name, ns in rows:
            print(f"{name:30} {ns:8.0f} ns/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
