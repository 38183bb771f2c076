//! CLUSTER: a node's view of its group (INFO) and the membership changes (ADDNODE, PROMOTE,
//! REMOVE), which run on the leader (a follower forwards them).

use super::{arg, is, printable, Args};
use crate::reply::Reply;
use crate::session::Ctx;
use shamba_raft::NodeId;
use std::collections::BTreeSet;

/// Whether CLUSTER with these arguments changes the membership (and so must run on the
/// leader).
pub(crate) fn changes_membership(args: &Args) -> bool {
    let sub = arg(args, 1);
    ["ADDNODE", "PROMOTE", "REMOVE"].iter().any(|s| is(sub, s))
}

fn node_ids(words: &Args) -> Option<BTreeSet<NodeId>> {
    if words.is_empty() {
        return None;
    }
    words.iter().map(|w| std::str::from_utf8(w).ok()?.parse().ok()).collect()
}

/// CLUSTER INFO | ADDNODE id raft-addr | PROMOTE id... | REMOVE id...
pub(super) fn cluster(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(node) = ctx.server.store.cluster() else {
        return Reply::err("this server is not a cluster node (start it with --node-id)");
    };
    let sub = arg(args, 1);
    let done = |r: Result<(), crate::ClusterError>| r.map_or_else(|e| Reply::Error(e.to_string()), |()| Reply::OK);
    if is(sub, "INFO") && args.len() == 2 {
        let mut text = String::new();
        for (k, v) in node.info() {
            text.push_str(&format!("{k}:{v}\r\n"));
        }
        Reply::Text(text)
    } else if is(sub, "ADDNODE") && args.len() == 4 {
        match std::str::from_utf8(arg(args, 2)).ok().and_then(|s| s.parse::<NodeId>().ok()) {
            Some(id) => done(node.add_learner(id, &String::from_utf8_lossy(arg(args, 3)))),
            None => Reply::err("node id is not an integer"),
        }
    } else if is(sub, "PROMOTE") || is(sub, "REMOVE") {
        let Some(ids) = node_ids(args.get(2..).unwrap_or_default()) else {
            return Reply::err(format!("CLUSTER {} takes node ids", printable(sub).to_uppercase()));
        };
        done(if is(sub, "PROMOTE") { node.promote(ids) } else { node.remove(ids) })
    } else {
        Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}' (CLUSTER INFO | ADDNODE id raft-addr | PROMOTE id... | REMOVE id...)",
            printable(sub)
        ))
    }
}
