//! The `resp` fuzz target's committed inputs, replayed on the stable compiler: every file
//! under `fuzz/corpus/resp/` and `fuzz/regressions/resp/` goes through the same
//! `shamba_server::fuzz::fuzz_request_on` the fuzzer calls, so a crash once found and fixed
//! stays fixed. A panic fails the test and names the file.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; none if it does not exist.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

#[test]
fn the_resp_corpus_and_regressions_run_without_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = shamba_server::fuzz::server_in(&dir.path().join("db")).expect("open");
    let mut ran = 0;
    for kind in ["corpus", "regressions"] {
        for file in inputs(&fuzz_dir().join(kind).join("resp")) {
            let input = std::fs::read(&file).expect("read input");
            let run = || shamba_server::fuzz::fuzz_request_on(&server, &input);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
            assert!(outcome.is_ok(), "resp panicked on {}", file.display());
            ran += 1;
        }
    }
    assert!(ran > 0, "no inputs under {}", fuzz_dir().join("corpus/resp").display());
}

#[test]
fn the_resp_target_has_a_cargo_fuzz_binary() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    assert!(manifest.contains("name = \"resp\""), "no [[bin]] for resp");
    let target = std::fs::read_to_string(fuzz_dir().join("fuzz_targets/resp.rs")).expect("resp.rs");
    assert!(target.contains("shamba_server::fuzz::fuzz_request"));
}
