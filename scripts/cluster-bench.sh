#!/usr/bin/env bash
# Requests/s of SET (redis-benchmark, 50 clients, -n N random keys, -P 1 and -P 16) against
# a three-process group on this machine (through its leader, and through a follower that
# forwards), beside one `shamba serve` (--sync always: acknowledged once synced, as the
# group's writes are; and --sync everysec, the default), one after another. Not part of CI.
# Prints a Markdown table.
#   scripts/cluster-bench.sh [SHAMBA_BIN] [N]    (default: target/release/shamba, 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/shamba}
n=${2:-100000}
[ -x "$bin" ] || cargo build -q --release -p shamba-cli
command -v redis-benchmark >/dev/null || { echo "redis-benchmark is needed (Debian's redis-tools)"; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return; sleep 0.1; done; exit 1; }
stop_all() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; pids=(); }

# row NAME PORT: SET at -P 1, then at -P 16.
row() {
  local cells=""
  for p in 1 16; do
    out=$(redis-benchmark -p "$2" -t set -n "$n" -c 50 -P $p -r 1000000 -q 2>&1 | tr '\r' '\n' | grep "requests per second")
    cells+=" $(echo "$out" | awk '{for (i=1;i<=NF;i++) if ($i == "requests") print $(i-1)}' | cut -d. -f1) |"
  done
  echo "| $1 |$cells"
}

echo "| server | SET -P1 | SET -P16 |"
echo "|---|---|---|"
for sync in always everysec; do
  port=$(free_port)
  "$bin" serve --db "$tmp/single-$sync" --bind 127.0.0.1:$port --sync $sync >/dev/null 2>&1 & pids+=($!)
  wait_port $port; row "one shamba serve --sync $sync" $port; stop_all
done

declare -A port raft
for i in 1 2 3; do port[$i]=$(free_port); raft[$i]=$(free_port); done
members="1=127.0.0.1:${raft[1]},2=127.0.0.1:${raft[2]},3=127.0.0.1:${raft[3]}"
for i in 1 2 3; do
  init=(); [ $i == 1 ] && init=(--init "$members")
  "$bin" serve --db "$tmp/n$i" --bind 127.0.0.1:${port[$i]} --node-id $i --raft-bind 127.0.0.1:${raft[$i]} \
    "${init[@]}" >/dev/null 2>&1 & pids+=($!)
done
for i in 1 2 3; do wait_port ${port[$i]}; done
leader=""
for _ in $(seq 100); do
  for i in 1 2 3; do
    redis-cli -p ${port[$i]} CLUSTER INFO | tr -d '\r' | grep -q '^role:leader' && leader=$i
  done
  [ -n "$leader" ] && break; sleep 0.1
done
[ -n "$leader" ] || { echo "no leader"; exit 1; }
follower=$(( leader % 3 + 1 ))
row "3-node group, through the leader" ${port[$leader]}
row "3-node group, through a follower" ${port[$follower]}
stop_all
