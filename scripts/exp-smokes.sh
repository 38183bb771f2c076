#!/usr/bin/env bash
# Smoke test of the experiments (CI runs it after the cargo steps): the `--quick` form of
# every experiment, end to end (load, measure, tables, CSV, SVG), on a release build of the
# CLI (a debug build is 10-50x slower at these). It checks that they run and write their
# files, not their numbers.
#
# Two lanes run side by side (this machine has two cores; a load is mostly one thread), and
# every run keeps its trees in one store (`exp --trees`), so an experiment whose trees an
# earlier one of its lane loaded reads them from there: memory-bound reads memory-pressure's,
# multi-get prefetch's, elastic elastic-seed's. `--all` is accepted and changes nothing (it
# used to add the six slowest, which now run always).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p shamba-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
# Each lane's order matters only where one experiment reads another's trees.
lane1="prefetch multi-get headline elastic-seed elastic hash-sharing mbf hash-cost hash-fpr units-fpr ribbon filter-latency lookup-breakdown"
lane2="memory-pressure memory-bound modules monkey sst-skew index-vs-filter ribbon-hybrid partitioned elastic-sweep latency"

run_lane() {
    for e in "$@"; do
        local t=$SECONDS
        target/release/shamba exp "$e" --quick --trees "$out/trees" --out "$out/$e" > "$out/$e.txt" 2> "$out/$e.err" || {
            echo "exp $e --quick failed:" >&2
            tail -n 20 "$out/$e.err" >&2
            return 1
        }
        ls "$out/$e"/*.csv > /dev/null
        echo "exp $e --quick: $((SECONDS - t)) s"
    done
}

# shellcheck disable=SC2086 # the lanes are word lists
run_lane $lane1 &
pid1=$!
# shellcheck disable=SC2086
run_lane $lane2 &
pid2=$!
status=0
wait "$pid1" || status=1
wait "$pid2" || status=1
[ "$status" = 0 ] || exit 1
# The workload option reaches the experiments that draw lookups.
target/release/shamba exp sst-skew --quick --distribution zipf-contiguous --zipf-theta 1.5 --out "$out/w" > "$out/w.txt"
grep -q "zipf-contiguous (theta 1.5" "$out/w.txt"
# `hash-sharing --num` runs seed 000's figures on its leveled shape (a tiny tree here).
target/release/shamba exp hash-sharing --quick --num 20000 --out "$out/hs" > "$out/hs.txt" 2> "$out/hs.err"
grep -q "Fig. 5b at the seed's shape" "$out/hs.txt"
echo "experiment smokes: $((SECONDS - start)) s"
