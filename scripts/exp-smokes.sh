#!/usr/bin/env bash
# Smoke test of the experiments (CI runs it after the cargo steps): the `--quick` form of
# each experiment that finishes in seconds, end to end (load, measure, tables, CSV, SVG),
# on a release build of the CLI (a debug build is 10-50x slower at these). It checks that
# they run and write their files, not their numbers.
#
# Not here, their quick forms load 2M-key trees and take minutes each (run them by hand;
# docs/results/README.md lists what was run): memory-pressure, modules, monkey, headline,
# hash-sharing, prefetch, multi-get, elastic, ribbon, hash-fpr, units-fpr.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p shamba-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
for e in mbf hash-cost sst-skew index-vs-filter ribbon-hybrid partitioned filter-latency lookup-breakdown elastic-sweep latency; do
    t=$SECONDS
    target/release/shamba exp "$e" --quick --out "$out/$e" > "$out/$e.txt"
    ls "$out/$e"/*.csv > /dev/null
    echo "exp $e --quick: $((SECONDS - t)) s"
done
# The workload option reaches the experiments that draw lookups.
target/release/shamba exp sst-skew --quick --distribution zipf-contiguous --zipf-theta 1.5 --out "$out/w" > "$out/w.txt"
grep -q "zipf-contiguous (theta 1.5" "$out/w.txt"
echo "experiment smokes: $((SECONDS - start)) s"
