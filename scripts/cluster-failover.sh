#!/usr/bin/env bash
# Failover time of a three-process group on this machine: KILLS times, the leader is killed
# with SIGKILL and the time is taken from the kill to the first write acknowledged after it
# (SET retried through both survivors, which forward it to whichever leads), then the killed
# node is restarted and caught up before the next kill. Prints each time, then the median
# and the worst. Not part of CI (a minute or so).
#   scripts/cluster-failover.sh [SHAMBA_BIN] [KILLS] [HEARTBEAT_MS]
#       (default: target/release/shamba, built if missing; 20 kills; 100 ms heartbeats)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/shamba}
kills=${2:-20}
hb=${3:-100}
[ -x "$bin" ] || cargo build -q --release -p shamba-cli
command -v redis-cli >/dev/null || { echo "redis-cli is needed (Debian's redis-tools)"; exit 1; }

tmp=$(mktemp -d)
declare -A pid port raft
cleanup() {
  for n in 1 2 3; do [ -n "${pid[$n]:-}" ] && kill -9 "${pid[$n]}" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for n in 1 2 3; do port[$n]=$(free_port); raft[$n]=$(free_port); done
members="1=127.0.0.1:${raft[1]},2=127.0.0.1:${raft[2]},3=127.0.0.1:${raft[3]}"

start() {
  local n=$1 init=()
  [ "$n" == 1 ] && init=(--init "$members")
  "$bin" serve --db "$tmp/n$n" --bind "127.0.0.1:${port[$n]}" --node-id "$n" --heartbeat-ms "$hb" \
    --raft-bind "127.0.0.1:${raft[$n]}" "${init[@]}" >>"$tmp/out$n" 2>>"$tmp/err$n" &
  pid[$n]=$!
  for _ in $(seq 100); do redis-cli -p "${port[$n]}" PING >/dev/null 2>&1 && return; sleep 0.05; done
  echo "node $n did not start"; exit 1
}
info() { redis-cli -p "${port[$1]}" CLUSTER INFO 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }
leader() {
  for _ in $(seq 400); do
    for n in 1 2 3; do
      [ -n "${pid[$n]:-}" ] && [ "$(info "$n" role)" == leader ] && { echo "$n"; return; }
    done
    sleep 0.05
  done
  return 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

for n in 1 2 3; do start "$n"; done
times=()
for k in $(seq 1 "$kills"); do
  l=$(leader)
  # Every node applied the same: the restarted one has caught up.
  redis-cli -p "${port[$l]}" SET warm "$k" >/dev/null
  for _ in $(seq 200); do
    a=$(info 1 last_applied); b=$(info 2 last_applied); c=$(info 3 last_applied)
    [ "$a" == "$b" ] && [ "$b" == "$c" ] && break
    sleep 0.05
  done
  survivors=()
  for n in 1 2 3; do [ "$n" != "$l" ] && survivors+=("$n"); done
  t0=$(now_ms)
  { kill -9 "${pid[$l]}"; wait "${pid[$l]}" || true; } 2>/dev/null; pid[$l]=""
  i=0
  while :; do
    s=${survivors[$((i % 2))]}; i=$((i + 1))
    [ "$(redis-cli -p "${port[$s]}" SET "failover:$k" x 2>/dev/null)" == OK ] && break
    [ $(( $(now_ms) - t0 )) -gt 30000 ] && { echo "no write acknowledged 30 s after kill $k"; exit 1; }
  done
  ms=$(( $(now_ms) - t0 ))
  times+=("$ms")
  echo "kill $k: node $l, first acknowledged write after $ms ms"
  start "$l"
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
worst=$(echo "$sorted" | tail -1)
echo "failover over $kills kills (heartbeat $hb ms, elections after $((hb * 5))-$((hb * 10)) ms of silence): median $median ms, worst $worst ms"
