"""Shamba: an LSM-tree key-value store built around its read path.

>>> import shamba, tempfile
>>> with shamba.Db(tempfile.mkdtemp()) as db:
...     db[b"apple"] = b"red"
...     db[b"apple"]
b'red'

See ``Db`` for the dict-like API (``Db.keyspace(name)`` for named keyspaces, ``Keyspace``;
``Readable`` for the reads a database, a keyspace, a snapshot and a transaction share;
``Db.transaction()`` and ``Db.transact(fn)`` for optimistic transactions), ``Db.stats()`` for
the engine's counters as plain data, and the exception classes under ``Error`` for what can
go wrong.
"""

from ._errors import (
    ClosedError,
    ConflictError,
    CorruptionError,
    Error,
    InternalError,
    InvalidArgumentError,
    InvalidOptionsError,
    IoError,
    LockedError,
    ReadOnlyError,
)
from ._shamba import Db, Iterator, Keyspace, Readable, Snapshot, Transaction, WriteBatch

__all__ = [
    "Readable",
    "Db",
    "Keyspace",
    "WriteBatch",
    "Snapshot",
    "Transaction",
    "Iterator",
    "Error",
    "IoError",
    "CorruptionError",
    "InvalidOptionsError",
    "InvalidArgumentError",
    "LockedError",
    "ClosedError",
    "ReadOnlyError",
    "ConflictError",
    "InternalError",
]
