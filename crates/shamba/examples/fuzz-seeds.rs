//! Write the fuzz targets' seed corpora: `cargo run -p shamba --example fuzz-seeds [DIR]`
//! (default: `fuzz/corpus` of the repository). Each target's seeds go to `DIR/<target>/`,
//! named by a hash of their bytes, cut from a small database built in memory
//! (`shamba::lab::fuzz::seeds`). Run it again after a change of a file format.

use shamba::lab::filter::Digest;
use shamba::lab::fuzz::seeds;
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"));
    let mut written = 0;
    for (target, input) in seeds() {
        let dir = out.join(target.name());
        std::fs::create_dir_all(&dir)?;
        let digest = Digest::of(&input);
        std::fs::write(dir.join(format!("seed-{:016x}", digest.h1)), &input)?;
        written += 1;
    }
    println!("wrote {written} seeds under {}", out.display());
    Ok(())
}
