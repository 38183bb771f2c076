#!/usr/bin/env bash
# Smoke test of the experiments (CI runs it after the cargo steps): the `--quick` form of
# each experiment that finishes within about a minute, end to end (load, measure, tables,
# CSV, SVG), on a release build of the CLI (a debug build is 10-50x slower at these). It
# checks that they run and write their files, not their numbers.
#
# `scripts/exp-smokes.sh --all` also runs the six whose quick forms take 1.5-5 minutes
# each here (they load 2M- to 31M-key trees; together ~16 minutes, which would put CI near
# its 30-minute limit): headline, elastic, memory-pressure, memory-bound, prefetch,
# multi-get.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p shamba-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
quick="mbf hash-cost hash-fpr units-fpr ribbon sst-skew index-vs-filter ribbon-hybrid partitioned filter-latency lookup-breakdown elastic-sweep latency monkey elastic-seed hash-sharing modules"
if [ "${1:-}" = "--all" ]; then
    quick="$quick headline elastic memory-pressure memory-bound prefetch multi-get"
fi
for e in $quick; do
    t=$SECONDS
    target/release/shamba exp "$e" --quick --out "$out/$e" > "$out/$e.txt"
    ls "$out/$e"/*.csv > /dev/null
    echo "exp $e --quick: $((SECONDS - t)) s"
done
# The workload option reaches the experiments that draw lookups.
target/release/shamba exp sst-skew --quick --distribution zipf-contiguous --zipf-theta 1.5 --out "$out/w" > "$out/w.txt"
grep -q "zipf-contiguous (theta 1.5" "$out/w.txt"
echo "experiment smokes: $((SECONDS - start)) s"
