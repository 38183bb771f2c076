//! The fuzz targets' committed inputs, replayed on the stable compiler: every file under
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes through the same
//! `shamba::lab::fuzz` entry point the fuzzer calls, so a crash once found and fixed stays
//! fixed. A panic fails the test and names the file.

use shamba::lab::fuzz::Target;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Set by any panic of the process, the database's background threads' included (a
/// panic there does not reach `catch_unwind`; under the fuzzer it aborts).
static PANICKED: AtomicBool = AtomicBool::new(false);

fn watch_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.store(true, Ordering::SeqCst);
            default(info);
        }));
    });
}

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

fn replay(target: Target) -> usize {
    watch_panics();
    let mut ran = 0;
    for kind in ["corpus", "regressions"] {
        for file in inputs(&fuzz_dir().join(kind).join(target.name())) {
            let input = std::fs::read(&file).expect("read input");
            let outcome = std::panic::catch_unwind(|| target.run(&input));
            let panicked = outcome.is_err() || PANICKED.load(Ordering::SeqCst);
            assert!(!panicked, "{} panicked on {}", target.name(), file.display());
            ran += 1;
        }
    }
    ran
}

#[test]
fn every_target_has_a_committed_corpus_and_survives_it() {
    for target in Target::ALL {
        let ran = replay(target);
        assert!(ran > 0, "no inputs for {} under {}", target.name(), fuzz_dir().display());
    }
}

#[test]
fn every_corpus_directory_names_a_target() {
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind)) else { continue };
        for entry in entries {
            let name = entry.expect("dir entry").file_name().to_string_lossy().into_owned();
            // `resp` is the server's target, replayed by crates/shamba-server/tests/fuzz_corpus.rs.
            let known = name == "resp" || Target::ALL.iter().any(|t| t.name() == name);
            assert!(known, "fuzz/{kind}/{name} is no target");
        }
    }
}

#[test]
fn every_target_has_a_cargo_fuzz_binary() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for target in Target::ALL {
        assert!(manifest.contains(&format!("name = \"{}\"", target.name())), "no [[bin]] for {}", target.name());
        assert!(fuzz_dir().join("fuzz_targets").join(format!("{}.rs", target.name())).is_file());
    }
}
