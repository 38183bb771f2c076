#!/usr/bin/env bash
# The kill -9 soak: `shamba stress --crash` for CYCLES kill cycles (default 1,000) on a
# fresh database. Each cycle runs the stress workload in a child, kills it with SIGKILL
# after 0.2-2 s, reopens the database and verifies every key against the expected state.
# Exits non-zero on the first divergence; the database and its expected-state file are
# kept for inspection then (and removed after a clean run).
#   scripts/crash-soak.sh [CYCLES] [THREADS] [-- more stress flags, e.g. --seed 7 --keys 50000]
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-1000}; threads=${2:-4}
shift $(( $# < 2 ? $# : 2 )); [[ ${1:-} == "--" ]] && shift
cargo build --release -q -p shamba-cli
dir=$(mktemp -d /tmp/shamba-crash-soak.XXXXXX)
if ./target/release/shamba stress --db "$dir/db" --crash --cycles "$cycles" --threads "$threads" "$@"; then
  rm -rf "$dir"
else
  echo "crash soak FAILED; database and expected state kept in $dir" >&2
  exit 1
fi
