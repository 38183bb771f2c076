//! A sorted set in the collection encoding (`types`): two entries per member under the
//! key's fields prefix, kvrocks's layout.
//!
//! ```text
//! field 'm' ‖ member            → score (8 bytes, score::encode)
//! field 's' ‖ score ‖ member    → empty: the score index
//! ```
//!
//! The member entries answer ZSCORE with one get and walk members in byte order (ZSCAN,
//! the BYLEX forms, whose sets hold one score); the index walks members in score order
//! (ties by member, as Redis orders them), so a score range is one seek and a range scan,
//! either way. A rank costs a walk from the nearer end of the index: O(rank), since
//! nothing counts entries between two keys. The metadata's size is the member count.

use super::score;
use crate::store::Selected;
use crate::types::{self, field_key, fields_prefix, Kind, Meta};
use shamba::DbIterator;
use std::collections::HashMap;

const MEMBER: u8 = b'm';
const INDEX: u8 = b's';

fn member_field(member: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(1 + member.len());
    f.push(MEMBER);
    f.extend_from_slice(member);
    f
}

fn index_field(score: f64, member: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(9 + member.len());
    f.push(INDEX);
    f.extend_from_slice(&score::encode(score));
    f.extend_from_slice(member);
    f
}

/// The score of `member` in the set `meta` at `key`.
///
/// # Errors
///
/// As [`types::get_field`]; a corruption error for a stored score that is not 8 bytes.
pub(super) fn score_of(db: &Selected<'_>, key: &[u8], meta: &Meta, member: &[u8]) -> shamba::Result<Option<f64>> {
    match types::get_field(db, key, meta, &member_field(member))? {
        Some(v) => decode_score(&v).map(Some),
        None => Ok(None),
    }
}

/// The scores of `members` (one `multi_get`).
///
/// # Errors
///
/// As [`score_of`].
pub(super) fn scores_of(
    db: &Selected<'_>,
    key: &[u8],
    meta: &Meta,
    members: &[&[u8]],
) -> shamba::Result<Vec<Option<f64>>> {
    let fields: Vec<Vec<u8>> = members.iter().map(|m| member_field(m)).collect();
    types::get_fields(db, key, meta, fields.iter().map(Vec::as_slice))?
        .into_iter()
        .map(|v| v.map(|v| decode_score(&v)).transpose())
        .collect()
}

fn decode_score(v: &[u8]) -> shamba::Result<f64> {
    score::decode(v)
        .ok_or_else(|| shamba::Error::corruption("sorted set", None, "a score that is not 8 bytes".to_string()))
}

/// A walk over one part of a set's entries (`part`: the member entries or the index),
/// both ways, yielding each entry's field after `part`.
pub(super) struct Walk {
    it: Option<DbIterator>,
    strip: usize,
}

impl Walk {
    fn new(db: &Selected<'_>, key: &[u8], meta: &Meta, part: u8) -> Walk {
        let mut prefix = fields_prefix(key, meta.version);
        prefix.push(part);
        let strip = prefix.len();
        Walk { it: db.collections().map(|c| db.prefix_in(&c.fields, &prefix)), strip }
    }

    fn field_key(&self, key: &[u8], meta: &Meta, part: u8, rest: &[u8]) -> Vec<u8> {
        let mut f = vec![part];
        f.extend_from_slice(rest);
        field_key(key, meta.version, &f)
    }

    fn strip(&self, item: shamba::Result<(Vec<u8>, Vec<u8>)>) -> shamba::Result<(Vec<u8>, Vec<u8>)> {
        let (k, v) = item?;
        Ok((k.get(self.strip..).unwrap_or_default().to_vec(), v))
    }

    fn next(&mut self) -> Option<shamba::Result<(Vec<u8>, Vec<u8>)>> {
        let item = self.it.as_mut()?.next()?;
        Some(self.strip(item))
    }

    fn next_back(&mut self) -> Option<shamba::Result<(Vec<u8>, Vec<u8>)>> {
        let item = self.it.as_mut()?.next_back()?;
        Some(self.strip(item))
    }
}

/// The set's members in score order (`rev`: highest first), each with its score; `from`
/// starts the walk at that score (at or after it forward, at or before it backward).
pub(super) struct ByScore {
    walk: Walk,
    rev: bool,
}

impl ByScore {
    pub(super) fn new(db: &Selected<'_>, key: &[u8], meta: &Meta, rev: bool, from: Option<f64>) -> ByScore {
        let mut walk = Walk::new(db, key, meta, INDEX);
        if let Some(s) = from {
            let at = score::encode(s);
            if rev {
                // The last entry of score `s`: before the first of the next score up.
                let next = u64::from_be_bytes(at).saturating_add(1).to_be_bytes();
                let k = walk.field_key(key, meta, INDEX, &next);
                if let Some(it) = walk.it.as_mut() {
                    it.seek_for_prev(k);
                }
            } else {
                let k = walk.field_key(key, meta, INDEX, &at);
                if let Some(it) = walk.it.as_mut() {
                    it.seek(k);
                }
            }
        }
        ByScore { walk, rev }
    }
}

impl Iterator for ByScore {
    type Item = shamba::Result<(f64, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = if self.rev { self.walk.next_back()? } else { self.walk.next()? };
        Some(item.and_then(|(field, _)| {
            let (s, member) = field.split_at_checked(8).ok_or_else(|| {
                shamba::Error::corruption("sorted set", None, "an index entry shorter than its score".to_string())
            })?;
            Ok((decode_score(s)?, member.to_vec()))
        }))
    }
}

/// The set's members in byte order (`rev`: last first), each with its score; `from`
/// starts the walk at that member (at or after it forward, at or before it backward).
pub(super) struct ByMember {
    walk: Walk,
    rev: bool,
}

impl ByMember {
    pub(super) fn new(db: &Selected<'_>, key: &[u8], meta: &Meta, rev: bool, from: Option<&[u8]>) -> ByMember {
        let mut walk = Walk::new(db, key, meta, MEMBER);
        if let Some(m) = from {
            let k = walk.field_key(key, meta, MEMBER, m);
            if let Some(it) = walk.it.as_mut() {
                if rev {
                    it.seek_for_prev(k);
                } else {
                    it.seek(k);
                }
            }
        }
        ByMember { walk, rev }
    }
}

impl Iterator for ByMember {
    type Item = shamba::Result<(Vec<u8>, f64)>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = if self.rev { self.walk.next_back()? } else { self.walk.next()? };
        Some(item.and_then(|(member, v)| Ok((member, decode_score(&v)?))))
    }
}

/// Every member of the set with its score, in score order.
///
/// # Errors
///
/// The first error of the walk.
pub(super) fn all(db: &Selected<'_>, key: &[u8], meta: &Meta) -> shamba::Result<Vec<(f64, Vec<u8>)>> {
    ByScore::new(db, key, meta, false, None).collect()
}

/// A sorted set being changed by one command (under its key's lock): its entries'
/// writes go to the command's batch, its size to the metadata. Members it wrote are
/// remembered, so a member named twice in one command sees its own first change.
pub(super) struct ZsetWrite<'a> {
    pub(super) w: types::Write<'a>,
    key: Vec<u8>,
    written: HashMap<Vec<u8>, Option<f64>>,
}

impl<'a> ZsetWrite<'a> {
    /// Open `key` for writing a sorted set: WRONGTYPE for another type.
    pub(super) fn open(db: &Selected<'a>, key: &[u8]) -> Result<ZsetWrite<'a>, crate::reply::Reply> {
        Ok(ZsetWrite { w: types::Write::open(db, key, Kind::ZSet)?, key: key.to_vec(), written: HashMap::new() })
    }

    /// A new sorted set at `key` written into `batch` (which deletes whatever `key` held):
    /// the STORE commands' destination.
    pub(super) fn fresh(
        db: &Selected<'a>,
        key: &[u8],
        batch: crate::store::Batch,
    ) -> Result<ZsetWrite<'a>, crate::reply::Reply> {
        let c = db.collections_or_create().map_err(super::engine_error)?;
        let w = types::Write { c, meta: Meta::new(Kind::ZSet), batch, created: true };
        Ok(ZsetWrite { w, key: key.to_vec(), written: HashMap::new() })
    }

    /// `member`'s score as this command sees it.
    ///
    /// # Errors
    ///
    /// As [`score_of`].
    pub(super) fn score(&self, db: &Selected<'_>, member: &[u8]) -> shamba::Result<Option<f64>> {
        if let Some(s) = self.written.get(member) {
            return Ok(*s);
        }
        if self.w.created {
            return Ok(None);
        }
        score_of(db, &self.key, &self.w.meta, member)
    }

    /// Set `member`'s score (its old one: `old`, as [`ZsetWrite::score`] answered).
    pub(super) fn set(&mut self, member: &[u8], old: Option<f64>, new: f64) {
        if let Some(old) = old {
            if score::encode(old) == score::encode(new) {
                return;
            }
            self.w.delete_field(&self.key, &index_field(old, member));
        } else {
            self.w.meta.size += 1;
        }
        self.w.put_field(&self.key, &member_field(member), &score::encode(new));
        self.w.put_field(&self.key, &index_field(new, member), b"");
        self.written.insert(member.to_vec(), Some(new));
    }

    /// Remove `member` (now at `old`).
    pub(super) fn remove(&mut self, member: &[u8], old: f64) {
        self.w.delete_field(&self.key, &member_field(member));
        self.w.delete_field(&self.key, &index_field(old, member));
        self.w.meta.size = self.w.meta.size.saturating_sub(1);
        self.written.insert(member.to_vec(), None);
    }

    /// The batch with the metadata written (the key deleted once no member is left).
    pub(super) fn finish(self) -> crate::store::Batch {
        self.w.finish(&self.key)
    }
}
