#!/usr/bin/env bash
# Smoke test of the experiments (CI runs it after the cargo steps): the `--quick` form of
# every experiment, end to end (load, measure, tables, CSV, SVG), on a release build of the
# lab binary, shamba-lab (a debug build is 10-50x slower at these). It checks that they run and write their
# files, not their numbers.
#
# Two lanes run side by side (this machine has two cores; a load is mostly one thread), and
# every run keeps its trees in one store (`exp --trees`), so an experiment whose trees an
# earlier one of its lane loaded reads them from there: memory-bound reads memory-pressure's,
# multi-get prefetch's, elastic elastic-seed's. `--all` is accepted and changes nothing (it
# used to add the six slowest, which now run always).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p shamba-lab
lab=target/release/shamba-lab
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$SECONDS
# Each lane's order matters only where one experiment reads another's trees.
lane1="prefetch multi-get headline elastic-seed elastic elastic-l0 hash-sharing mbf hash-cost hash-fpr units-fpr filter-share ribbon filter-latency lookup-breakdown"
lane2="memory-pressure memory-bound modules monkey sst-skew index-vs-filter ribbon-hybrid partitioned elastic-sweep elastic-load latency"
# The lanes run every experiment the registry lists (`shamba-lab list`), each once.
# shellcheck disable=SC2086 # the lanes are word lists
for e in $("$lab" list --names); do
    n=0
    for l in $lane1 $lane2; do [ "$l" = "$e" ] && n=$((n + 1)); done
    [ "$n" = 1 ] || { echo "experiment $e is in $n lanes, not 1" >&2; exit 1; }
done
[ "$(echo $lane1 $lane2 | wc -w)" = "$("$lab" list --names | wc -l)" ] || { echo "a lane names an experiment the registry does not list" >&2; exit 1; }

run_lane() {
    for e in "$@"; do
        local t=$SECONDS
        "$lab" exp "$e" --quick --trees "$out/trees" --out "$out/$e" > "$out/$e.txt" 2> "$out/$e.err" || {
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
"$lab" exp sst-skew --quick --distribution zipf-contiguous --zipf-theta 1.5 --out "$out/w" > "$out/w.txt"
grep -q "zipf-contiguous (theta 1.5" "$out/w.txt"
# `hash-sharing --num` runs seed 000's figures on its leveled shape (a tiny tree here).
"$lab" exp hash-sharing --quick --num 20000 --out "$out/hs" > "$out/hs.txt" 2> "$out/hs.err"
grep -q "Fig. 5b at the seed's shape" "$out/hs.txt"
echo "experiment smokes: $((SECONDS - start)) s"
