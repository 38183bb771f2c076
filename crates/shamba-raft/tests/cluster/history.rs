//! The history of a randomized run's writes and reads, and the checks of the reads and of
//! the final state against it.
//!
//! Every write puts a value no other write puts (or deletes), on one of a few keys. A key's
//! final value must come from a write that may have taken effect (acknowledged, or not
//! answered) and that no acknowledged write on the key started after the end of: an
//! acknowledged write that started after another one ended is ordered after it by any
//! linearizable store. An unanswered write may take effect at any time after it started,
//! so it never ends. A refused write never takes effect.
//!
//! A read is checked the same way, against the writes that ended before it started: it
//! must return the value of a write that started before it ended and that no acknowledged
//! write overtook before the read started.

use std::collections::BTreeMap;
use std::time::Instant;

use shamba_raft::NodeId;

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

/// One linearizable read of the run that was answered.
#[derive(Debug, Clone)]
pub struct Read {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
    /// The node the read was sent to, and the one that answered it.
    pub via: NodeId,
    pub served_by: NodeId,
    pub start: Instant,
    pub end: Instant,
}

/// When a state of a key was in effect at the latest.
#[derive(Clone, Copy)]
enum InEffect {
    /// The initial state: no key.
    FromTheStart,
    /// An acknowledged write: by its answer.
    By(Instant),
    /// An unanswered write: it may take effect at any time.
    NotKnown,
}

/// The acknowledged writes of one key by the time they ended, to ask quickly whether one
/// started after a moment and ended before another.
struct Acked {
    ends: Vec<Instant>,
    /// `latest_start[i]`: the latest start among the writes of `ends[..=i]`.
    latest_start: Vec<Instant>,
}

impl Acked {
    fn of(writes: &[&Write]) -> Acked {
        let mut acked: Vec<_> = writes.iter().filter(|w| w.acked()).map(|w| (w.end, w.start)).collect();
        acked.sort();
        let mut latest_start: Vec<Instant> = Vec::with_capacity(acked.len());
        for (i, &(_, start)) in acked.iter().enumerate() {
            latest_start.push(if i == 0 { start } else { latest_start[i - 1].max(start) });
        }
        Acked { ends: acked.into_iter().map(|(end, _)| end).collect(), latest_start }
    }

    /// Whether an acknowledged write started after a state was in effect and ended before
    /// `before`.
    fn overtook(&self, state: InEffect, before: Instant) -> bool {
        let ended = self.ends.partition_point(|&end| end < before);
        match state {
            InEffect::FromTheStart => ended > 0,
            InEffect::By(t) => ended > 0 && self.latest_start[ended - 1] > t,
            InEffect::NotKnown => false,
        }
    }
}

/// A read no write explains, with what the history holds around it: the write of its value
/// and the acknowledged writes that ended before the read started, latest first (times in
/// ms from the read's start).
fn explain_read(r: &Read, writes: &[&Write], by_value: &BTreeMap<(&[u8], &[u8]), &Write>, t0: Instant) -> String {
    let ms = |t: Instant| {
        if t >= r.start {
            (t - r.start).as_secs_f64() * 1e3
        } else {
            -(r.start - t).as_secs_f64() * 1e3
        }
    };
    let show = |w: &Write| {
        format!(
            "{:?} [{:.1}, {:.1}] {:?}",
            w.value.as_ref().map(|v| String::from_utf8_lossy(v).into_owned()),
            ms(w.start),
            ms(w.end),
            w.outcome
        )
    };
    let mut text = format!(
        "a read at {:.3} s of {} via node {} served by node {} [0, {:.1}] returned {:?}, which no write explains",
        (r.start - t0).as_secs_f64(),
        String::from_utf8_lossy(&r.key),
        r.via,
        r.served_by,
        ms(r.end),
        r.value.as_ref().map(|v| String::from_utf8_lossy(v).into_owned())
    );
    if let Some(w) = r.value.as_ref().and_then(|v| by_value.get(&(r.key.as_slice(), v.as_slice()))) {
        text.push_str(&format!("\n    its write: {}", show(w)));
    }
    let mut before: Vec<&&Write> = writes.iter().filter(|w| w.acked() && w.end < r.start).collect();
    before.sort_by_key(|w| std::cmp::Reverse(w.end));
    for w in before.into_iter().take(3) {
        text.push_str(&format!("\n    acknowledged before it: {}", show(w)));
    }
    text
}

/// Check every read against the writes; the violations, one line each.
/// `t0` is the start of the run, which the violations count time from.
pub fn check_reads(writes: &[Write], reads: &[Read], t0: Instant) -> Vec<String> {
    let mut by_key: BTreeMap<&[u8], Vec<&Write>> = BTreeMap::new();
    for w in writes {
        by_key.entry(&w.key).or_default().push(w);
    }
    let acked: BTreeMap<&[u8], Acked> = by_key.iter().map(|(k, ws)| (*k, Acked::of(ws))).collect();
    let by_value: BTreeMap<(&[u8], &[u8]), &Write> =
        writes.iter().filter_map(|w| Some(((w.key.as_slice(), w.value.as_deref()?), w))).collect();
    let none: Vec<&Write> = Vec::new();
    let mut violations = Vec::new();
    for r in reads {
        let Some(acked) = acked.get(r.key.as_slice()) else {
            if r.value.is_some() {
                violations
                    .push(format!("a read of the unwritten {} returned a value", String::from_utf8_lossy(&r.key)));
            }
            continue;
        };
        let explains = |w: &Write| {
            let state = w.effective_by().map_or(InEffect::NotKnown, InEffect::By);
            w.may_have_applied() && w.start < r.end && !acked.overtook(state, r.start)
        };
        let explained = match &r.value {
            Some(v) => by_value.get(&(r.key.as_slice(), v.as_slice())).is_some_and(|w| explains(w)),
            None => {
                !acked.overtook(InEffect::FromTheStart, r.start)
                    || by_key.get(r.key.as_slice()).unwrap_or(&none).iter().any(|w| w.value.is_none() && explains(w))
            }
        };
        if !explained {
            violations.push(explain_read(r, by_key.get(r.key.as_slice()).unwrap_or(&none), &by_value, t0));
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

    fn read(value: Option<&str>, start: u64, end: u64, t0: Instant) -> Read {
        Read {
            key: b"k".to_vec(),
            value: value.map(|v| v.as_bytes().to_vec()),
            via: 1,
            served_by: 1,
            start: t0 + Duration::from_millis(start),
            end: t0 + Duration::from_millis(end),
        }
    }

    #[test]
    fn a_read_must_see_every_write_acknowledged_before_it_started() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let w = |value: Option<&str>, start, end, outcome| Write {
            key: b"k".to_vec(),
            value: value.map(|v| v.as_bytes().to_vec()),
            start: at(start),
            end: at(end),
            outcome,
        };
        let history =
            [w(Some("a"), 10, 20, ACK()), w(Some("b"), 30, 40, ACK()), w(Some("c"), 50, 60, Outcome::Unknown)];
        let ok = |r: Read| check_reads(&history, &[r], t0).is_empty();
        assert!(ok(read(None, 0, 5, t0)), "before any write");
        assert!(ok(read(None, 0, 15, t0)), "overlapping the first write");
        assert!(!ok(read(None, 25, 26, t0)), "after the first write was acknowledged");
        assert!(ok(read(Some("a"), 25, 26, t0)));
        assert!(ok(read(Some("a"), 35, 45, t0)), "overlapping the second write");
        assert!(!ok(read(Some("a"), 45, 46, t0)), "the second write acknowledged before the read");
        assert!(!ok(read(Some("b"), 0, 25, t0)), "a value from the future");
        assert!(ok(read(Some("c"), 55, 56, t0)) && ok(read(Some("b"), 500, 501, t0)), "an unanswered write");
        assert!(!ok(read(Some("z"), 0, 100, t0)), "a value never written");
    }
}
