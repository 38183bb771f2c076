"""Exception classes of the engine's errors, one per kind of ``shamba::Error``.

All derive from :class:`shamba.Error`; those that mean a bad value also derive from
``ValueError``, and an I/O failure from ``OSError`` (with ``errno`` when the system gave one).
"""


class Error(Exception):
    """An error from the Shamba engine."""


class IoError(Error, OSError):
    """The operating system reported an I/O failure (full disk, permission, device)."""


class CorruptionError(Error):
    """A file's bytes do not decode: bad checksum, length or magic, truncated.

    ``file``, ``offset`` (``None`` when unknown) and ``reason`` say where and what.
    """

    file = None
    offset = None
    reason = None


class InvalidOptionsError(Error, ValueError):
    """An option is out of range or inconsistent with another (checked at open)."""


class InvalidArgumentError(Error, ValueError):
    """An argument is unacceptable: a key or value over its size limit, a checkpoint
    directory that exists, a directory that holds no database."""


class LockedError(Error):
    """Another process, or another open ``Db`` here, holds the directory (``path``)."""

    path = None


class ClosedError(Error):
    """The database was closed (or the snapshot released)."""


class ReadOnlyError(Error):
    """A background error made the database read-only: writes fail until ``Db.resume()``
    succeeds or the database is reopened; reads go on. ``__cause__`` is that error."""


class ConflictError(Error):
    """A transaction's commit was refused: ``key`` (of ``keyspace``) was written by someone
    else after the transaction began, or that can no longer be ruled out (``reason`` says
    which). Nothing of the transaction was written; run it again (``Db.transact`` does)."""

    keyspace = None
    key = None
    reason = None


class InternalError(Error):
    """An invariant of the engine itself does not hold: a bug in Shamba, not in the input
    or the files. ``what`` names the invariant; please report it."""

    what = None


# Shown as ``shamba.LockedError`` (where users name them), not ``shamba._errors.LockedError``.
for _cls in (Error, IoError, CorruptionError, InvalidOptionsError, InvalidArgumentError, LockedError, ClosedError, ReadOnlyError, ConflictError, InternalError):
    _cls.__module__ = "shamba"
del _cls
