//! The history of a randomized run's writes, and the check of the final state against it.
//!
//! Every write puts a value no other write puts (or deletes), on one of a few keys. A key's
//! final value must come from a write that may have taken effect (acknowledged, or not
//! answered) and that no acknowledged write on the key started after the end of: an
//! acknowledged write that started after another one ended is ordered after it by any
//! linearizable store. An unanswered write may take effect at any time after it started,
//! so it never ends. A refused write never takes effect.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::client::Outcome;
use crate::node::UserData;

/// One write of the run.
#[derive(Debug, Clone)]
pub struct Write {
    pub key: Vec<u8>,
    /// `None` for a delete.
    pub value: Option<Vec<u8>>,
    pub start: Instant,
    pub end: Instant,
    pub outcome: Outcome,
}

impl Write {
    fn may_have_applied(&self) -> bool {
        !matches!(self.outcome, Outcome::NotApplied)
    }

    fn acked(&self) -> bool {
        matches!(self.outcome, Outcome::Acked(_))
    }

    /// When the write took effect at the latest: its answer, or never for an unanswered one.
    fn effective_by(&self) -> Option<Instant> {
        self.acked().then_some(self.end)
    }
}

/// Check the final `data` (the default keyspace) against every write of the run; the
/// violations, one line each.
pub fn check(writes: &[Write], data: &UserData) -> Vec<String> {
    let mut by_key: BTreeMap<&[u8], Vec<&Write>> = BTreeMap::new();
    for w in writes {
        by_key.entry(&w.key).or_default().push(w);
    }
    let mut violations = Vec::new();
    for (keyspace, key) in data.keys() {
        if keyspace.is_some() || !by_key.contains_key(key.as_slice()) {
            violations.push(format!("{keyspace:?}/{} was never written", String::from_utf8_lossy(key)));
        }
    }
    for (key, writes) in by_key {
        let held = data.get(&(None, key.to_vec()));
        // Nothing acknowledged on the key started after `w` took effect.
        let not_overtaken = |w: &Write| match w.effective_by() {
            None => true,
            Some(end) => !writes.iter().any(|later| later.acked() && later.start > end),
        };
        let explained = match held {
            Some(value) => {
                writes.iter().any(|w| w.value.as_ref() == Some(value) && w.may_have_applied() && not_overtaken(w))
            }
            // The initial state (when nothing on the key was acknowledged) or a delete.
            None => {
                !writes.iter().any(|w| w.acked())
                    || writes.iter().any(|w| w.value.is_none() && w.may_have_applied() && not_overtaken(w))
            }
        };
        if !explained {
            let mut lines = format!(
                "{} holds {:?}, which no write explains; its writes:",
                String::from_utf8_lossy(key),
                held.map(|v| String::from_utf8_lossy(v).into_owned())
            );
            for w in writes {
                lines.push_str(&format!(
                    "\n    {:?} {:?}",
                    w.value.as_ref().map(|v| String::from_utf8_lossy(v).into_owned()),
                    w.outcome
                ));
            }
            violations.push(lines);
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use shamba_raft::Response;

    use super::*;

    fn write(value: Option<&str>, start: u64, end: u64, outcome: Outcome) -> Write {
        let t0 = Instant::now();
        Write {
            key: b"k".to_vec(),
            value: value.map(|v| v.as_bytes().to_vec()),
            start: t0 + Duration::from_millis(start),
            end: t0 + Duration::from_millis(end),
            outcome,
        }
    }

    fn held(value: Option<&str>) -> UserData {
        value.map(|v| ((None, b"k".to_vec()), v.as_bytes().to_vec())).into_iter().collect()
    }

    const ACK: fn() -> Outcome = || Outcome::Acked(Response::default());

    #[test]
    fn the_model_refuses_what_a_linearizable_store_cannot_hold() {
        let history = [write(Some("a"), 0, 10, ACK()), write(Some("b"), 20, 30, ACK())];
        assert!(check(&history, &held(Some("b"))).is_empty());
        assert_eq!(check(&history, &held(Some("a"))).len(), 1, "an overwritten value came back");
        assert_eq!(check(&history, &held(None)).len(), 1, "an acknowledged write was lost");

        // Overlapping writes may land in either order.
        let overlapping = [write(Some("a"), 0, 30, ACK()), write(Some("b"), 10, 20, ACK())];
        assert!(check(&overlapping, &held(Some("a"))).is_empty());
        assert!(check(&overlapping, &held(Some("b"))).is_empty());

        // An unanswered write may land at any time, a refused one never.
        let unanswered = [write(Some("a"), 0, 10, ACK()), write(Some("b"), 0, 5, Outcome::Unknown)];
        assert!(check(&unanswered, &held(Some("b"))).is_empty());
        let refused = [write(Some("a"), 0, 10, ACK()), write(Some("b"), 20, 30, Outcome::NotApplied)];
        assert_eq!(check(&refused, &held(Some("b"))).len(), 1);

        // A delete explains an absent key only if nothing acknowledged overtook it.
        let deleted = [write(Some("a"), 0, 10, ACK()), write(None, 20, 30, ACK())];
        assert!(check(&deleted, &held(None)).is_empty());
        let rewritten = [write(None, 0, 10, ACK()), write(Some("a"), 20, 30, ACK())];
        assert_eq!(check(&rewritten, &held(None)).len(), 1);
    }
}
