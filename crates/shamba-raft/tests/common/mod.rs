//! What the restart and crash tests share: log entries to append and apply, and a full scan
//! of a store's state machine to compare.

#![allow(dead_code, reason = "each test binary uses the parts it needs")]

use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId, Membership};
use shamba::Readable;
use shamba_raft::{Command, NodeId, Op, Store, TypeConfig};
use std::collections::{BTreeMap, BTreeSet};

pub fn log_id(term: u64, index: u64) -> LogId<NodeId> {
    LogId::new(CommittedLeaderId::new(term, 1), index)
}

pub fn entry(term: u64, index: u64, command: Command) -> Entry<TypeConfig> {
    Entry { log_id: log_id(term, index), payload: EntryPayload::Normal(command) }
}

pub fn membership_entry(term: u64, index: u64, voters: &[NodeId]) -> Entry<TypeConfig> {
    let set: BTreeSet<NodeId> = voters.iter().copied().collect();
    Entry { log_id: log_id(term, index), payload: EntryPayload::Membership(Membership::new(vec![set], None)) }
}

pub fn put(keyspace: Option<&str>, key: &str, value: &str) -> Op {
    Op::Put { keyspace: keyspace.map(str::to_string), key: key.as_bytes().to_vec(), value: value.as_bytes().to_vec() }
}

pub fn delete(keyspace: Option<&str>, key: &str) -> Op {
    Op::Delete { keyspace: keyspace.map(str::to_string), key: key.as_bytes().to_vec() }
}

pub fn delete_range(keyspace: Option<&str>, start: &str, end: &str) -> Op {
    Op::DeleteRange {
        keyspace: keyspace.map(str::to_string),
        start: start.as_bytes().to_vec(),
        end: end.as_bytes().to_vec(),
    }
}

pub fn command(ops: Vec<Op>) -> Command {
    Command { ops }
}

/// Every non-empty user keyspace of the store, with all its pairs.
pub type Contents = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

pub fn contents(store: &Store) -> Contents {
    let mut all = Contents::new();
    for name in store.keyspace_names() {
        let ks = store.keyspace(Some(&name)).expect("keyspace");
        let pairs: BTreeMap<Vec<u8>, Vec<u8>> = ks.iter().map(|item| item.expect("scan")).collect();
        if !pairs.is_empty() {
            all.insert(name, pairs);
        }
    }
    all
}

/// The state machine a list of `(keyspace, key, value)` writes would leave.
pub fn expect(pairs: &[(&str, &str, &str)]) -> Contents {
    let mut all = Contents::new();
    for (ks, k, v) in pairs {
        all.entry(ks.to_string()).or_default().insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
    }
    all
}
