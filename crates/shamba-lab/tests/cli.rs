//! The `shamba-lab` binary end to end: its list of experiments, one quick experiment with its
//! files, and the lab's bench with the knobs `shamba bench` does not take.

use std::process::Command;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shamba-lab"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = lab().args(args).output().expect("run shamba-lab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn list_names_every_experiment_once_and_exp_accepts_exactly_those() {
    let (code, out, err) = run(&["list", "--names"]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out.lines().collect();
    assert!(names.len() >= 20, "{names:?}");
    for (i, name) in names.iter().enumerate() {
        assert!(!names[..i].contains(name), "{name} twice");
    }
    for name in ["headline", "hash-sharing", "memory-pressure", "elastic", "ribbon-hybrid", "multi-get"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    // The table form has one row per name, the name first.
    let (_, table, _) = run(&["list"]);
    let firsts: Vec<&str> = table.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(firsts, names);
    // exp offers the same names and refuses any other.
    let (code, _, err) = run(&["exp", "no-such-experiment"]);
    assert_eq!(code, 2, "{err}");
    for name in &names {
        assert!(err.contains(name), "exp does not offer {name}: {err}");
    }
}

#[test]
fn a_quick_experiment_prints_its_table_as_json_and_writes_its_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("mbf");
    let (code, out, err) = run(&["exp", "mbf", "--quick", "--json", "--out", out_dir.to_str().expect("utf8 path")]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert!(v.to_string().contains("FP %"), "{v}");
    let files: Vec<String> = std::fs::read_dir(&out_dir)
        .expect("output directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().any(|f| f.ends_with(".csv")), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with(".svg")), "{files:?}");
}

#[test]
fn lab_bench_takes_the_lab_knobs_and_reports_them() {
    let (code, out, err) = run(&[
        "bench",
        "--num",
        "3000",
        "--reads",
        "2000",
        "--write-buffer-mb",
        "0.1",
        "--read",
        "existing,missing",
        "--device",
        "nvm",
        "--no-share-hash",
        "--no-prefetch",
        "--profile",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let config = &v["config"];
    assert_eq!(config["device"], "nvm");
    assert_eq!(config["share_hash"], false);
    assert_eq!(config["prefetch"], false);
    assert_eq!(config["profile"], true);
    let phases = v["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 3, "load + two read phases");
    assert_eq!(phases[1]["found"], 2000, "every existing key is found");
    assert_eq!(phases[2]["found"], 0, "no missing key is found");
    // The stage clocks ran: the read phases carry a time per stage.
    assert!(phases[1]["stage_ns_per_op"]["filter"].is_number(), "{}", phases[1]);
}

#[test]
fn lab_bench_refuses_an_unknown_device() {
    let (code, _, err) = run(&["bench", "--num", "100", "--reads", "10", "--device", "floppy"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown device \"floppy\""), "{err}");
}
