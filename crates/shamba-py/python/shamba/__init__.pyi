"""Type stubs of the ``shamba`` package (the classes are defined in Rust, ``shamba._shamba``)."""

import os
import pathlib
from typing import Any, Callable, Dict, Iterable, Iterator as _Iterator, List, Optional, Tuple, TypeVar, Union, overload

from ._errors import (
    ClosedError as ClosedError,
    ConflictError as ConflictError,
    CorruptionError as CorruptionError,
    Error as Error,
    InvalidArgumentError as InvalidArgumentError,
    InternalError as InternalError,
    InvalidOptionsError as InvalidOptionsError,
    IoError as IoError,
    LockedError as LockedError,
    ReadOnlyError as ReadOnlyError,
)

BytesLike = Union[bytes, bytearray, memoryview]
_T = TypeVar("_T")
_Y = TypeVar("_Y", bytes, Tuple[bytes, bytes])

class Iterator(_Iterator[_Y]):
    """An iterator over a consistent view (later writes are not seen), forward or reversed."""

    def __iter__(self) -> "Iterator[_Y]": ...
    def __next__(self) -> _Y: ...
    def seek(self, key: BytesLike) -> None:
        """Restart at the first key >= ``key`` (reversed: the last key <= ``key``)."""

class WriteBatch:
    """Puts and deletes that ``Db.write`` applies atomically, in order; each in the
    ``keyspace`` it names (default: the database's own keys), all at once across them."""

    def __init__(self) -> None: ...
    def put(
        self,
        key: BytesLike,
        value: BytesLike,
        *,
        keyspace: Optional["Keyspace"] = None,
        ttl: Optional[float] = None,
    ) -> "WriteBatch": ...
    def delete(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> "WriteBatch": ...
    def delete_range(
        self,
        start: Optional[BytesLike] = None,
        end: Optional[BytesLike] = None,
        *,
        keyspace: Optional["Keyspace"] = None,
    ) -> "WriteBatch": ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

class Readable:
    """The reads ``Db``, ``Keyspace`` and ``Snapshot`` share, dict-like over ``bytes``: a
    database reads its own keys, a keyspace its own, a snapshot one keyspace as of its
    moment. Not made directly."""

    @overload
    def get(self, key: BytesLike) -> Optional[bytes]: ...
    @overload
    def get(self, key: BytesLike, default: _T) -> Union[bytes, _T]: ...
    def multi_get(self, keys: Iterable[BytesLike]) -> List[Optional[bytes]]: ...
    def ttl(self, key: BytesLike) -> Optional[float]:
        """Seconds left before ``key`` expires, ``None`` if its value does not expire;
        ``KeyError`` when it is absent or expired."""
    def __getitem__(self, key: BytesLike) -> bytes: ...
    def __contains__(self, key: object) -> bool: ...
    def __iter__(self) -> Iterator[bytes]: ...
    def range(
        self, start: Optional[BytesLike] = None, end: Optional[BytesLike] = None, reverse: bool = False
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def prefix(self, prefix: BytesLike, reverse: bool = False) -> Iterator[Tuple[bytes, bytes]]: ...
    def keys(self, reverse: bool = False) -> Iterator[bytes]: ...
    def values(self, reverse: bool = False) -> Iterator[bytes]: ...
    def items(self, reverse: bool = False) -> Iterator[Tuple[bytes, bytes]]: ...

class Snapshot(Readable):
    """A read view as of ``Db.snapshot()`` of every keyspace at once: ``keyspace(ks)`` is
    the snapshot of keyspace ``ks`` at the same moment, and reads also take ``keyspace=``
    (default: the snapshot's own keyspace, the database's own keys for ``Db.snapshot()``);
    reads after ``release()`` raise ``ClosedError``."""

    @property
    def sequence(self) -> int: ...
    def keyspace(self, keyspace: "Keyspace") -> "Snapshot":
        """The snapshot of ``keyspace`` at this moment; releasing either releases both."""
    @overload
    def get(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> Optional[bytes]: ...
    @overload
    def get(self, key: BytesLike, default: _T, *, keyspace: Optional["Keyspace"] = None) -> Union[bytes, _T]: ...
    def multi_get(
        self, keys: Iterable[BytesLike], *, keyspace: Optional["Keyspace"] = None
    ) -> List[Optional[bytes]]: ...
    def ttl(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> Optional[float]: ...
    def range(
        self,
        start: Optional[BytesLike] = None,
        end: Optional[BytesLike] = None,
        reverse: bool = False,
        *,
        keyspace: Optional["Keyspace"] = None,
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def prefix(
        self, prefix: BytesLike, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def keys(self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None) -> Iterator[bytes]: ...
    def values(self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None) -> Iterator[bytes]: ...
    def items(
        self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def release(self) -> None: ...
    def __enter__(self) -> "Snapshot": ...
    def __exit__(self, *exc: Any) -> bool: ...

class Transaction(Readable):
    """An optimistic transaction (``Db.transaction()``): reads as of its start with its own
    writes over them (reads also take ``keyspace=``), writes buffered until ``commit()``;
    ``with db.transaction() as tx:`` commits at the end of the block, rolls back if it
    raises. ``ConflictError`` at commit when a key it wrote or read with ``get_for_update``
    was written by someone else since it began."""

    @property
    def sequence(self) -> int: ...
    @overload
    def get(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> Optional[bytes]: ...
    @overload
    def get(self, key: BytesLike, default: _T, *, keyspace: Optional["Keyspace"] = None) -> Union[bytes, _T]: ...
    def multi_get(
        self, keys: Iterable[BytesLike], *, keyspace: Optional["Keyspace"] = None
    ) -> List[Optional[bytes]]: ...
    def range(
        self,
        start: Optional[BytesLike] = None,
        end: Optional[BytesLike] = None,
        reverse: bool = False,
        *,
        keyspace: Optional["Keyspace"] = None,
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def prefix(
        self, prefix: BytesLike, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def keys(self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None) -> Iterator[bytes]: ...
    def values(self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None) -> Iterator[bytes]: ...
    def items(
        self, reverse: bool = False, *, keyspace: Optional["Keyspace"] = None
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    @overload
    def get_for_update(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> Optional[bytes]: ...
    @overload
    def get_for_update(
        self, key: BytesLike, default: _T, *, keyspace: Optional["Keyspace"] = None
    ) -> Union[bytes, _T]: ...
    def put(
        self, key: BytesLike, value: BytesLike, *, keyspace: Optional["Keyspace"] = None, ttl: Optional[float] = None
    ) -> None: ...
    def __setitem__(self, key: BytesLike, value: BytesLike) -> None: ...
    def delete(self, key: BytesLike, *, keyspace: Optional["Keyspace"] = None) -> None: ...
    def __delitem__(self, key: BytesLike) -> None: ...
    def delete_range(
        self,
        start: Optional[BytesLike] = None,
        end: Optional[BytesLike] = None,
        *,
        keyspace: Optional["Keyspace"] = None,
    ) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def __enter__(self) -> "Transaction": ...
    def __exit__(self, *exc: Any) -> bool: ...

class Keyspace(Readable):
    """A named keyspace of a database (``Db.keyspace(name)``), dict-like over ``bytes`` as
    ``Db`` is; ``InvalidArgumentError`` once dropped, ``ClosedError`` once its database is
    closed."""

    @property
    def name(self) -> str: ...
    def __setitem__(self, key: BytesLike, value: BytesLike) -> None: ...
    def __delitem__(self, key: BytesLike) -> None: ...
    def put(
        self, key: BytesLike, value: BytesLike, sync: Optional[bool] = None, *, ttl: Optional[float] = None
    ) -> None: ...
    def expire(self, key: BytesLike, ttl: float) -> bool:
        """Make ``key`` expire ``ttl`` seconds from now, keeping its value; whether it was there."""
    def persist(self, key: BytesLike) -> bool:
        """Make ``key`` live forever; whether it had a deadline to remove."""
    def delete(self, key: BytesLike, sync: Optional[bool] = None) -> None: ...
    def delete_range(
        self, start: Optional[BytesLike] = None, end: Optional[BytesLike] = None, sync: Optional[bool] = None
    ) -> None: ...
    def compact(self) -> None: ...
    def stats(self) -> Dict[str, Any]:
        """As ``Db.stats()``, with this keyspace's levels, memtables and lookup counters."""

class Db(Readable):
    """An open database, dict-like over ``bytes`` (its reads are ``Readable``'s).

    Keyword options (unknown ones raise ``TypeError``; bad values ``TypeError`` or
    ``ValueError``): ``create_if_missing``, ``error_if_exists``, ``bits_per_key``,
    ``layout`` ("whole", "modules-eq", "modules-prop", "units"), ``parts``,
    ``first_bits_per_key``, ``ribbon_from_level``, ``monkey``, ``policy`` ("plain",
    "no-last-level", "shamba", "shamba-p", "shamba-f", "shamba-odds", "elastic"),
    ``elastic_budget_mb``, ``life_time``, ``read_rest_together`` (SHaMBa policies: a probe
    that must read a filter part reads later ones with it, in one read, as many as make a
    further read unlikely),
    ``cache_mb``, ``cache_pct``,
    ``cache_index_and_filter``, ``pinned_metadata_limit`` (bytes of index and filter blocks
    pinned in memory, all tables together; a table past it keeps them in the block cache),
    ``filter_memory_budget`` (bytes of filters held in memory
    across all tables; None: unbounded), ``partition``, ``compression`` ("none", "lz4"),
    ``compaction_style`` ("leveled", "tiered"), ``write_buffer_size``, ``target_file_size``,
    ``block_size``, ``max_open_files``, ``paranoid_file_checks``, ``background_nice`` (0-19,
    added to the compaction threads' nice value: merges yield to the caller's threads),
    ``sync``, ``keyspaces``
    (``{name: {tree options}}``: keyspaces' own options, over the database's).
    """

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        *,
        create_if_missing: bool = True,
        error_if_exists: bool = False,
        bits_per_key: float = 10.0,
        layout: str = "whole",
        parts: int = 2,
        first_bits_per_key: float = 2.0,
        ribbon_from_level: Optional[int] = None,
        monkey: bool = False,
        policy: str = "plain",
        elastic_budget_mb: float = 8.0,
        life_time: int = 1000,
        read_rest_together: bool = False,
        cache_mb: float = 32.0,
        cache_pct: Optional[float] = None,
        cache_index_and_filter: bool = False,
        pinned_metadata_limit: int = ...,
        filter_memory_budget: Optional[int] = None,
        partition: bool = False,
        compression: str = "none",
        compaction_style: str = "leveled",
        write_buffer_size: int = 8 << 20,
        target_file_size: int = 8 << 20,
        block_size: int = 4096,
        max_open_files: int = ...,
        paranoid_file_checks: bool = False,
        background_nice: int = 0,
        sync: bool = False,
        keyspaces: Optional[Dict[str, Dict[str, Any]]] = None,
    ) -> None: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    def __setitem__(self, key: BytesLike, value: BytesLike) -> None: ...
    def __delitem__(self, key: BytesLike) -> None: ...
    def put(
        self, key: BytesLike, value: BytesLike, sync: Optional[bool] = None, *, ttl: Optional[float] = None
    ) -> None: ...
    def expire(self, key: BytesLike, ttl: float) -> bool:
        """Make ``key`` expire ``ttl`` seconds from now, keeping its value; whether it was there."""
    def persist(self, key: BytesLike) -> bool:
        """Make ``key`` live forever; whether it had a deadline to remove."""
    def delete(self, key: BytesLike, sync: Optional[bool] = None) -> None: ...
    def delete_range(
        self, start: Optional[BytesLike] = None, end: Optional[BytesLike] = None, sync: Optional[bool] = None
    ) -> None: ...
    def write(self, batch: WriteBatch, sync: Optional[bool] = None) -> None: ...
    def keyspace(self, name: str, **options: Any) -> Keyspace:
        """The keyspace ``name``, created if missing; ``options`` are the tree options of
        ``Db()`` (``bits_per_key``, ``layout``, ``parts``, ``first_bits_per_key``,
        ``ribbon_from_level``, ``monkey``, ``policy``, ``elastic_budget_mb``, ``life_time``,
        ``read_rest_together``, ``compression``, ``compaction_style``, ``block_size``) over
        the database's."""
    def drop_keyspace(self, name: str) -> None: ...
    def keyspace_names(self) -> List[str]: ...
    def snapshot(self) -> Snapshot: ...
    def transaction(self, *, sync: Optional[bool] = None, max_age: Optional[float] = 60.0) -> Transaction: ...
    def transact(
        self,
        f: "Callable[[Transaction], _T]",
        *,
        max_attempts: int = 16,
        sync: Optional[bool] = None,
        max_age: Optional[float] = 60.0,
    ) -> _T: ...
    def checkpoint(self, path: Union[str, "os.PathLike[str]"]) -> None: ...
    def flush(self) -> None: ...
    def compact(self) -> None: ...
    def wait_for_compactions(self) -> None: ...
    def resume(self) -> None: ...
    def stats(self) -> Dict[str, Any]:
        """Counters and tree shape: ``io``, ``cache``, ``levels``, ``lookups``, ``writes``,
        ``background``, ``stalls``, ``memory`` (nested dicts and lists of plain values)."""
    def verify(self) -> Dict[str, Any]:
        """``ok``, counts, ``problems`` (list of dicts) and ``orphans`` (list of paths)."""
    def close(self) -> None: ...
    def __enter__(self) -> "Db": ...
    def __exit__(self, *exc: Any) -> bool: ...

__all__: List[str]
