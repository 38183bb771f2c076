//! Commands of two clients racing on one key: a string command and a collection write on a
//! new key make one of the two types, and the other answers WRONGTYPE.

mod common;

use common::{run, server};
use shamba_server::{Reply, Session};
use std::sync::{Arc, Barrier};

fn wrong_type(r: &Reply) -> bool {
    matches!(r, Reply::Error(e) if e.starts_with("WRONGTYPE"))
}

#[test]
fn a_string_command_and_a_collection_write_on_a_new_key_never_both_succeed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    // The database holds a collection, so string commands check the key's type.
    assert_eq!(run(&srv, &mut Session::new(1), "SADD other m"), Reply::Int(1));
    const ROUNDS: usize = 3000;
    let start = Arc::new(Barrier::new(2));
    let racer = |line: &'static str| {
        let (srv, start) = (srv.clone(), start.clone());
        std::thread::spawn(move || {
            let s = &mut Session::new(2);
            (0..ROUNDS)
                .map(|i| {
                    start.wait();
                    run(&srv, s, &line.replace("KEY", &format!("k{i}")))
                })
                .collect::<Vec<Reply>>()
        })
    };
    let hashes = racer("HSET KEY f v");
    let counters = racer("INCR KEY");
    let (hashes, counters) = (hashes.join().expect("HSET"), counters.join().expect("INCR"));
    let s = &mut Session::new(3);
    for (i, (h, c)) in hashes.iter().zip(&counters).enumerate() {
        let key = format!("k{i}");
        let kind = run(&srv, s, &format!("TYPE {key}"));
        match (h, c) {
            (Reply::Int(1), c) if wrong_type(c) => assert_eq!(kind, Reply::Simple("hash".into()), "{key}"),
            (h, Reply::Int(1)) if wrong_type(h) => assert_eq!(kind, Reply::Simple("string".into()), "{key}"),
            _ => panic!("{key}: HSET answered {h:?} and INCR {c:?}; the key is a {kind:?}"),
        }
    }
}
