//! Per-call cost of `Db::put` and `Db::get`, 1e5 calls each: the Rust side of
//! `crates/shamba-py/bench/per_call.py` (the same keys, values and order), so the Python
//! binding's overhead can be read off beside it.
//!
//! `cargo run --release -p shamba --example per_call`

use shamba::Readable;
use std::time::Instant;

const N: usize = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let keys: Vec<Vec<u8>> = (0..N).map(|i| format!("key{:012}", (i * 7919) % N).into_bytes()).collect();
    let value = vec![b'v'; 100];
    let dir = tempfile::tempdir()?;
    let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    let per_call = |f: &mut dyn FnMut() -> shamba::Result<()>| -> shamba::Result<f64> {
        let t = Instant::now();
        f()?;
        Ok(t.elapsed().as_nanos() as f64 / N as f64)
    };
    let put = per_call(&mut || keys.iter().try_for_each(|k| db.put(k, &value)))?;
    let mut get = || keys.iter().try_for_each(|k| db.get(k).map(|v| assert!(v.is_some())));
    let get_mem = per_call(&mut get)?;
    db.wait_for_compactions()?;
    get()?;
    let get_tables = per_call(&mut get)?;
    let get_one = per_call(&mut || (0..N).try_for_each(|_| db.get(&keys[0]).map(|v| assert!(v.is_some()))))?;
    println!("{:30} {put:8.0} ns/call", "put (memtable)");
    println!("{:30} {get_mem:8.0} ns/call", "get (memtable)");
    println!("{:30} {get_tables:8.0} ns/call", "get (tables, cached)");
    println!("{:30} {get_one:8.0} ns/call", "get (one key, tables)");
    db.close()?;
    Ok(())
}
