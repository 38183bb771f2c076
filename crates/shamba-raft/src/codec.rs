//! How the storage writes its records: log keys in index order, values tagged with a format
//! version so a later release can read what an earlier one wrote.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The keyspace of the Raft log: one entry per key, keyed by its index.
pub(crate) const LOG_KEYSPACE: &str = "raft_log";
/// The keyspace of the vote, the committed and purged log ids, the state machine's last
/// applied log id with its membership, the current snapshot and the install marker.
pub(crate) const META_KEYSPACE: &str = "raft_meta";

/// `raft_meta` keys.
pub(crate) const VOTE: &[u8] = b"vote";
pub(crate) const COMMITTED: &[u8] = b"committed";
pub(crate) const LAST_PURGED: &[u8] = b"last_purged";
/// The state machine's `(last_applied, membership)`, written with every applied batch.
pub(crate) const APPLIED: &[u8] = b"applied";
/// The snapshot `get_current_snapshot` returns: its file name and meta.
pub(crate) const CURRENT_SNAPSHOT: &[u8] = b"snapshot";
/// Present while a snapshot is being installed: the kept file to redo it from.
pub(crate) const INSTALLING: &[u8] = b"installing";

/// The version byte that starts every value this release writes.
const FORMAT_VERSION: u8 = 1;

/// The key of the log entry at `index`: big-endian, so keys sort as indexes do.
pub(crate) fn log_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

/// The index a log key names.
pub(crate) fn log_index(key: &[u8]) -> Result<u64, String> {
    let bytes: [u8; 8] = key.try_into().map_err(|_| format!("a log key of {} bytes, not 8", key.len()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// A value: the format version, then bincode.
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    let mut out = vec![FORMAT_VERSION];
    bincode::serialize_into(&mut out, value).map_err(|e| format!("encoding: {e}"))?;
    Ok(out)
}

/// The value [`encode`] wrote.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    match bytes.split_first() {
        Some((&FORMAT_VERSION, rest)) => bincode::deserialize(rest).map_err(|e| format!("decoding: {e}")),
        Some((v, _)) => Err(format!("a value of format version {v}; this build reads {FORMAT_VERSION}")),
        None => Err("an empty value".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keys_sort_as_indexes() {
        let mut keys: Vec<[u8; 8]> = [300u64, 2, 1 << 40, 0, 255, 256].iter().map(|&i| log_key(i)).collect();
        keys.sort();
        let back: Vec<u64> = keys.iter().map(|k| log_index(k).unwrap()).collect();
        assert_eq!(back, vec![0, 2, 255, 256, 300, 1 << 40]);
        assert!(log_index(b"short").is_err());
    }

    #[test]
    fn values_carry_their_version() {
        let v = encode(&(7u64, "x".to_string())).unwrap();
        assert_eq!(v[0], FORMAT_VERSION);
        assert_eq!(decode::<(u64, String)>(&v).unwrap(), (7, "x".to_string()));
        let mut future = v.clone();
        future[0] = 9;
        assert!(decode::<(u64, String)>(&future).unwrap_err().contains("version 9"));
        assert!(decode::<u64>(&[]).is_err());
    }
}
