//! `shamba.Readable`: the dict-like reads of `Db`, `Keyspace` and `Snapshot`, written once.
//!
//! The three classes extend this one. It holds nothing: each read asks which of the three
//! `self` is, runs on that object's engine reader (`shamba::Readable`) with the interpreter
//! released, and turns the answer into Python data.

use crate::bytes_arg::{byte_keys, bytes_arg, opt_bytes_arg, values_list, BytesArg};
use crate::db::Db;
use crate::iter::{Iterator, Yields};
use crate::keyspace::Keyspace;
use crate::snapshot::Snapshot;
use crate::transaction::Transaction;
use crate::ttl_arg::ttl_answer;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shamba::Readable as _;
use std::ops::Bound as Edge;

/// What `Db`, `Keyspace`, `Snapshot` and `Transaction` read alike: `r[k]` (`KeyError` when absent),
/// `k in r`, `get`, `multi_get`, iteration over the keys, `keys`, `values`, `items`,
/// `range` and `prefix`, each in key order or reversed.
///
/// A database reads its own keys (the keyspace `"default"`), a keyspace its own, and a
/// snapshot one keyspace as of the moment it was taken (`Snapshot.keyspace(ks)` for
/// another one; its reads also take `keyspace=`), and a transaction its snapshot with its
/// own writes over it (`keyspace=` too). Not made directly.
#[pyclass(subclass, frozen, module = "shamba")]
pub(crate) struct Readable;

/// A range of keys, borrowed from the call's arguments.
pub(crate) type KeyRange<'a> = (Edge<&'a [u8]>, Edge<&'a [u8]>);

/// `(start, end)` as range bounds: `start` included, `end` excluded, `None` open.
pub(crate) fn bounds<'a>(start: &'a Option<BytesArg<'_>>, end: &'a Option<BytesArg<'_>>) -> KeyRange<'a> {
    (
        start.as_ref().map_or(Edge::Unbounded, |s| Edge::Included(s.as_ref())),
        end.as_ref().map_or(Edge::Unbounded, |e| Edge::Excluded(e.as_ref())),
    )
}

/// The engine reader behind one Python object, for one read.
enum Reader<'a> {
    Db(&'a shamba::Db),
    Keyspace(&'a shamba::Keyspace),
    Snapshot(shamba::Snapshot),
    Transaction(&'a shamba::Transaction),
    TxKeyspace(shamba::TxKeyspace<'a>),
}

/// `$body` with `$r` bound to the reader, whichever it is (each arm its own type).
macro_rules! on_reader {
    ($reader:expr, $r:ident => $body:expr) => {
        match $reader {
            Reader::Db($r) => $body,
            Reader::Keyspace($r) => $body,
            Reader::Snapshot($r) => $body,
            Reader::Transaction($r) => $body,
            Reader::TxKeyspace($r) => $body,
        }
    };
}

impl Reader<'_> {
    fn get(&self, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        on_reader!(self, r => r.get(key))
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> Vec<shamba::Result<Option<Vec<u8>>>> {
        on_reader!(self, r => r.multi_get(keys))
    }

    fn ttl(&self, key: &[u8]) -> shamba::Result<shamba::Ttl> {
        on_reader!(self, r => r.ttl(key))
    }

    fn range(&self, range: KeyRange<'_>) -> shamba::DbIterator {
        on_reader!(self, r => r.range::<&[u8], _>(range))
    }

    fn prefix(&self, prefix: &[u8]) -> shamba::DbIterator {
        on_reader!(self, r => r.prefix(prefix))
    }
}

impl Readable {
    /// Run `f` on the reader of `slf` (of `keyspace`, for a snapshot given one) with the
    /// interpreter released.
    fn read<T: Send>(
        slf: &Bound<'_, Self>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        f: impl FnOnce(&Reader<'_>) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        let py = slf.py();
        let any = slf.as_any();
        let only_snapshots = || PyTypeError::new_err("keyspace= is a snapshot's: read the keyspace itself");
        if let Ok(db) = any.cast::<Db>() {
            if keyspace.is_some() {
                return Err(only_snapshots());
            }
            return db.get().with(py, |db| f(&Reader::Db(db)));
        }
        if let Ok(ks) = any.cast::<Keyspace>() {
            if keyspace.is_some() {
                return Err(only_snapshots());
            }
            return ks.get().with(py, |ks, _| f(&Reader::Keyspace(ks)));
        }
        if let Ok(snap) = any.cast::<Snapshot>() {
            let snap = snap.get();
            let ks = snap.keyspace_of(py, keyspace)?;
            return snap.with(py, |s| f(&Reader::Snapshot(snap.reader(s, ks.as_ref()))));
        }
        if let Ok(tx) = any.cast::<Transaction>() {
            return tx.get().with(py, keyspace, |tx, ks| match ks {
                Some(ks) => f(&Reader::TxKeyspace(tx.keyspace(ks))),
                None => f(&Reader::Transaction(tx)),
            });
        }
        Err(PyTypeError::new_err("a Readable is a Db, a Keyspace, a Snapshot or a Transaction"))
    }

    fn lookup(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<Vec<u8>>> {
        let k = bytes_arg(key, "key")?;
        Self::read(slf, keyspace, |r| r.get(k.as_ref()))
    }

    /// An iterator over every key (`None`) or `range` of the reader.
    fn iterate(
        slf: &Bound<'_, Self>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        range: Option<KeyRange<'_>>,
        reverse: bool,
        yields: Yields,
    ) -> PyResult<Iterator> {
        let range = range.unwrap_or((Edge::Unbounded, Edge::Unbounded));
        let it = Self::read(slf, keyspace, |r| Ok(r.range(range)))?;
        Ok(Iterator::new(it, reverse, yields))
    }
}

#[pymethods]
impl Readable {
    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default=None, *, keyspace=None))]
    fn get(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        Ok(match Self::lookup(slf, key, keyspace)? {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// The values of `keys` (a list or other iterable of bytes) at one moment, as a list in
    /// their order, `None` where a key is absent: one batched lookup.
    #[pyo3(signature = (keys, *, keyspace=None))]
    fn multi_get(
        slf: &Bound<'_, Self>,
        keys: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Vec<Option<Py<PyBytes>>>> {
        let keys = byte_keys(keys)?;
        let values = Self::read(slf, keyspace, |r| r.multi_get(&keys).into_iter().collect::<shamba::Result<Vec<_>>>())?;
        Ok(values_list(slf.py(), values))
    }

    /// Seconds left before `key` expires (a `float`), or `None` when its value does not
    /// expire; `KeyError` when it is absent (or expired).
    #[pyo3(signature = (key, *, keyspace=None))]
    fn ttl(
        slf: &Bound<'_, Self>,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Py<PyAny>> {
        let k = bytes_arg(key, "key")?;
        let ttl = Self::read(slf, keyspace, |r| r.ttl(k.as_ref()))?;
        ttl_answer(slf.py(), ttl, key)
    }

    fn __getitem__<'py>(slf: &Bound<'py, Self>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        match Self::lookup(slf, key, None)? {
            Some(v) => Ok(PyBytes::new(slf.py(), &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(Self::lookup(slf, key, None)?.is_some())
    }

    /// `(key, value)` pairs with `start <= key < end` (`None`: unbounded), in key order,
    /// or in reverse key order with `reverse=True`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, keyspace=None))]
    fn range(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Iterator> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        Self::iterate(slf, keyspace, Some(bounds(&s, &e)), reverse, Yields::Items)
    }

    /// `(key, value)` pairs whose keys start with `prefix`, in key order (or reversed).
    #[pyo3(signature = (prefix, reverse=false, *, keyspace=None))]
    fn prefix(
        slf: &Bound<'_, Self>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Iterator> {
        let p = bytes_arg(prefix, "prefix")?;
        let it = Self::read(slf, keyspace, |r| Ok(r.prefix(p.as_ref())))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// Every key, in key order (or reversed).
    #[pyo3(signature = (reverse=false, *, keyspace=None))]
    fn keys(slf: &Bound<'_, Self>, reverse: bool, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<Iterator> {
        Self::iterate(slf, keyspace, None, reverse, Yields::Keys)
    }

    /// Every value, in key order (or reversed).
    #[pyo3(signature = (reverse=false, *, keyspace=None))]
    fn values(slf: &Bound<'_, Self>, reverse: bool, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<Iterator> {
        Self::iterate(slf, keyspace, None, reverse, Yields::Values)
    }

    /// Every `(key, value)` pair, in key order (or reversed).
    #[pyo3(signature = (reverse=false, *, keyspace=None))]
    fn items(slf: &Bound<'_, Self>, reverse: bool, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<Iterator> {
        Self::iterate(slf, keyspace, None, reverse, Yields::Items)
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Iterator> {
        Self::iterate(slf, None, None, false, Yields::Keys)
    }
}
