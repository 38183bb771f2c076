#!/usr/bin/env bash
# Run every cargo-fuzz target (fuzz/) for SECONDS each (default 60), one at a time, and
# print each target's executions and crashes. Needs cargo-fuzz (`cargo install
# cargo-fuzz`); runs on the stable toolchain through RUSTC_BOOTSTRAP=1.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# The committed corpus fuzz/corpus/<target>/ is read, never written: new inputs go to a
# scratch directory (merge them with `cargo fuzz cmin` if worth keeping). A crash, an
# allocation over the malloc limit, an input over the time limit or a leak stops that
# target and leaves its input in fuzz/artifacts/<target>/: fix the engine, then copy the
# input to fuzz/regressions/<target>/, where
# `cargo test -p shamba --features lab --test fuzz_corpora` replays it on stable.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
secs="${1:-60}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
printf '%-24s %14s %10s %s\n' target executions exec/s result
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t" "fuzz/regressions/$t"
  log="$scratch/$t.log"
  status=0
  cargo fuzz run "$t" "$scratch/$t" "fuzz/corpus/$t" "fuzz/regressions/$t" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)"
  if [ "$status" -eq 0 ]; then
    result="ok, 0 crashes"
  else
    failed=1
    artifact="$(grep -o 'Test unit written to [^ ]*' "$log" | tail -1 | sed 's/Test unit written to //')"
    result="CRASH (exit $status): ${artifact:-see $log}"
    cp "$log" "fuzz/artifacts/$t.log" 2>/dev/null || true
  fi
  printf '%-24s %14s %10s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
exit "$failed"
