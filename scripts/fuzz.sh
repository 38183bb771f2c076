#!/usr/bin/env bash
# Run every cargo-fuzz target (fuzz/) for SECONDS each (default 60), one at a time, and
# print each target's executions and crashes. Needs cargo-fuzz (`cargo install
# cargo-fuzz`); runs on the stable toolchain through RUSTC_BOOTSTRAP=1.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 86400    # a campaign: 10^7 executions per target
#                                               # (or a day each, whichever comes first)
#   FUZZ_TIMEOUT=900 ...                        # an input's time limit (default 10 s)
#
# The committed corpus fuzz/corpus/<target>/ is read, never written: new inputs go to a
# scratch directory (merge them with `cargo fuzz cmin` if worth keeping). A crash, an
# allocation over the malloc limit, an input over the time limit or a leak stops that
# target and leaves its input in fuzz/artifacts/<target>/: fix the engine, then copy the
# input to fuzz/regressions/<target>/, where
# `cargo test -p shamba --features lab --test fuzz_corpora` replays it on stable (for
# `resp`, the server's target: `cargo test -p shamba-server --test fuzz_corpus`). With
# FUZZ_OUT=DIR the new inputs stay in DIR/<target>/ for `cargo fuzz cmin`.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
# AddressSanitizer's options for every target; ASAN_OPTIONS from the environment come after
# them and win (cargo-fuzz adds detect_odr_violation=0). The two below cost a large share
# of the slow targets' time and find nothing in this code:
# - detect_stack_use_after_return=0: every frame with a local array moved to a fake
#   stack, to catch a pointer used after its frame returned. Safe Rust cannot keep one
#   (the borrow checker refuses it), and no `unsafe` block of the engine or the server
#   takes a pointer into a frame that outlives the call it passes it to.
# - malloc_context_size=0: a stack walk and a stack-depot insert at every allocation and
#   free, to print where a block was allocated and freed in a use-after-free report. The
#   error is still caught and reported with its own stack; to see the other two, replay
#   the saved input with ASAN_OPTIONS=malloc_context_size=30.
export ASAN_OPTIONS="detect_stack_use_after_return=0:malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
secs="${1:-60}"
# Executions per target, -1 for no limit (the time limit alone).
runs="${FUZZ_RUNS:--1}"
# Seconds one input may run before it counts as a hang. libFuzzer measures it by the wall
# clock, so a campaign whose processes may be paused (SIGSTOP, a suspended VM) sets it
# above the longest pause: FUZZ_TIMEOUT=900.
timeout="${FUZZ_TIMEOUT:-10}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build
if [ -n "${FUZZ_OUT:-}" ]; then
  scratch="$FUZZ_OUT"
  mkdir -p "$scratch"
else
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
fi
failed=0
printf '%-24s %14s %10s %s\n' target executions exec/s result
# Per-target options. `open_db` and `resp` keep state across executions (a database's
# threads, caches and epochs; `resp`'s one server), so every execution ends with more
# allocations than frees and libFuzzer would run LeakSanitizer's whole-heap scan after
# each: most of their time. The WAL and batch decoders cost in proportion to their input
# and reach nothing more with inputs over 4 KiB (`wal`'s mode bit 1 puts short inputs
# across a block boundary), but their seeds are 40 KiB logs, which would set the limit.
target_opts() {
  case "$1" in
    open_db | resp) echo -detect_leaks=0 ;;
    wal | write_batch) echo -max_len=4096 ;;
  esac
}
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t" "fuzz/regressions/$t"
  log="$scratch/$t.log"
  status=0
  # shellcheck disable=SC2046 # the options are words
  cargo fuzz run "$t" "$scratch/$t" "fuzz/corpus/$t" "fuzz/regressions/$t" -- \
    -max_total_time="$secs" -runs="$runs" -timeout="$timeout" -rss_limit_mb=2048 -malloc_limit_mb=512 \
    $(target_opts "$t") -print_final_stats=1 >"$log" 2>&1 || status=$?
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
