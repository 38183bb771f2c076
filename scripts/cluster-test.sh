#!/usr/bin/env bash
# Three `shamba serve` processes as one Raft group on this machine, driven by Redis's own
# tools: writes through redis-cli (to the leader, and to a follower that forwards them) and
# redis-benchmark; the leader killed with SIGKILL while a client writes through a follower;
# every acknowledged key read back from both survivors once a new leader is elected; the
# killed node restarted from its directory and caught up; at the end every node stopped and
# its database scanned on its own: the three hold the same data. Installs Debian's
# redis-tools when redis-cli is missing. Run by CI after the cargo steps (a minute or so):
#   scripts/cluster-test.sh [SHAMBA_BIN]     (default: target/debug/shamba, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/shamba}
[ -x "$bin" ] || cargo build -q -p shamba-cli
if ! command -v redis-cli >/dev/null || ! command -v redis-benchmark >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-tools >/dev/null
fi

tmp=$(mktemp -d)
declare -A pid port raft
writer=""
cleanup() {
  for n in 1 2 3; do [ -n "${pid[$n]:-}" ] && kill -9 "${pid[$n]}" 2>/dev/null; done
  [ -n "$writer" ] && kill "$writer" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
passed=0; failed=0

check() {
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $name"; fi
}

# Free ports: bound then released by the kernel's choice.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for n in 1 2 3; do port[$n]=$(free_port); raft[$n]=$(free_port); done
members="1=127.0.0.1:${raft[1]},2=127.0.0.1:${raft[2]},3=127.0.0.1:${raft[3]}"

# start N: node N in $tmp/nN; node 1 initializes the group (ignored once it is).
start() {
  local n=$1 init=()
  [ "$n" == 1 ] && init=(--init "$members")
  "$bin" serve --db "$tmp/n$n" --bind "127.0.0.1:${port[$n]}" --node-id "$n" \
    --raft-bind "127.0.0.1:${raft[$n]}" "${init[@]}" >>"$tmp/out$n" 2>>"$tmp/err$n" &
  pid[$n]=$!
  for _ in $(seq 100); do redis-cli -p "${port[$n]}" PING >/dev/null 2>&1 && return; sleep 0.1; done
  cat "$tmp/err$n"; echo "node $n did not start"; exit 1
}

# info N FIELD: a field of node N's CLUSTER INFO.
info() { redis-cli -p "${port[$1]}" CLUSTER INFO 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }

# wait_leader NODES...: the id of the leader the given nodes agree on, once it says it leads.
wait_leader() {
  for _ in $(seq 200); do
    local l="" agree=1
    for n in "$@"; do
      local s; s=$(info "$n" leader_id)
      if [ -z "$l" ]; then l=$s; elif [ "$s" != "$l" ]; then agree=0; fi
    done
    if [ "$agree" == 1 ] && [[ "$l" =~ ^[0-9]+$ ]] && [ "$(info "$l" role)" == leader ]; then echo "$l"; return; fi
    sleep 0.1
  done
  echo "no leader among nodes $*" >&2; return 1
}

# caught_up N LEADER: node N has applied everything the leader has.
caught_up() {
  for _ in $(seq 300); do
    local a b; a=$(info "$1" last_applied); b=$(info "$2" last_applied)
    [ -n "$a" ] && [ "$a" == "$b" ] && return 0
    sleep 0.1
  done
  return 1
}

for n in 1 2 3; do start "$n"; done
leader=$(wait_leader 1 2 3)
follower=$(( leader % 3 + 1 ))
echo "leader: node $leader; writing through it and through node $follower"
check "three voters" bash -c "[ \"\$(redis-cli -p ${port[1]} CLUSTER INFO | tr -d '\r' | sed -n 's/^voters://p' | tr ',' '\n' | wc -l)\" == 3 ]"

# redis-cli: to the leader, then to a follower (forwarded), then read from every node.
check "SET on the leader" test "$(redis-cli -p "${port[$leader]}" SET a 1)" == OK
check "SET on a follower (forwarded)" test "$(redis-cli -p "${port[$follower]}" SET b 2)" == OK
check "INCR on a follower" test "$(redis-cli -p "${port[$follower]}" INCR a)" == 2
check "MSET and DEL" bash -c "[ \"\$(redis-cli -p ${port[$follower]} MSET c 3 d 4)\" == OK ] && [ \"\$(redis-cli -p ${port[$leader]} DEL c d nope)\" == 2 ]"
for n in 1 2 3; do
  check "node $n reads a=2 b=2" test "$(redis-cli -p "${port[$n]}" MGET a b | paste -sd' ' -)" == "2 2"
done
check "SELECT 1 is its own database on a follower" bash -c "[ \"\$(redis-cli -p ${port[$follower]} -n 1 SET a one)\" == OK ] && [ \"\$(redis-cli -p ${port[$leader]} -n 1 GET a)\" == one ] && [ \"\$(redis-cli -p ${port[$leader]} GET a)\" == 2 ]"
# Pipelined: 5000 SETs through a follower in one stream.
python3 - "$tmp/pipe.txt" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(5000):
        k, v = b"pipe:%d" % i, b"value-%d" % i
        f.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
EOF
redis-cli -p "${port[$follower]}" --pipe <"$tmp/pipe.txt" >"$tmp/pipe.out" 2>&1 || true
check "--pipe through a follower: every reply and no error" grep -q "errors: 0, replies: 5000" "$tmp/pipe.out"
# redis-benchmark against the leader (pipelined) and a follower (it exits at an error reply).
redis-benchmark -p "${port[$leader]}" -t set -n 10000 -c 20 -P 16 -r 100000 -q >"$tmp/bench1.out" 2>&1 || true
redis-benchmark -p "${port[$follower]}" -t set,get -n 2000 -c 10 -r 100000 -q >"$tmp/bench2.out" 2>&1 || true
tr '\r' '\n' <"$tmp/bench1.out" | grep "requests per second" | sed 's/^/leader:   /' || true
tr '\r' '\n' <"$tmp/bench2.out" | grep "requests per second" | sed 's/^/follower: /' || true
check "redis-benchmark on the leader completed" bash -c "tr '\r' '\n' <$tmp/bench1.out | grep -q 'requests per second' && ! grep -qi error $tmp/bench1.out"
check "redis-benchmark on a follower completed" bash -c "[ \"\$(tr '\r' '\n' <$tmp/bench2.out | grep -c 'requests per second')\" == 2 ] && ! grep -qi error $tmp/bench2.out"
keys_before=$(redis-cli -p "${port[$leader]}" DBSIZE)
check "the benchmark's keys are there" test "$keys_before" -gt 5000

# A client writes through the node that will survive as a follower; the leader is killed
# mid-stream. A key counts as acknowledged when its SET answered OK.
survivor=$follower
other=$(( 6 - leader - survivor ))
( for i in $(seq 1 600); do
    r=$(redis-cli -p "${port[$survivor]}" SET "w:$i" "$i" 2>/dev/null || true)
    [ "$r" == OK ] && echo "w:$i"
  done >"$tmp/acked" ) &
writer=$!
sleep 1
{ kill -9 "${pid[$leader]}"; wait "${pid[$leader]}" || true; } 2>/dev/null; pid[$leader]=""
killed=$leader
echo "killed node $killed (SIGKILL)"
new_leader=$(wait_leader "$survivor" "$other")
echo "new leader: node $new_leader"
check "a survivor leads" bash -c "[ $new_leader == $survivor ] || [ $new_leader == $other ]"
wait "$writer"; writer=""
acked=$(wc -l <"$tmp/acked")
echo "$acked of 600 writes acknowledged across the failover"
check "most writes acknowledged across the failover" test "$acked" -gt 300
for n in "$survivor" "$other"; do
  missing=0
  # Every acknowledged key, read back through node n (MGET in chunks of 100).
  while read -r chunk; do
    got=$(redis-cli -p "${port[$n]}" MGET $chunk | grep -c '^[0-9]' || true)
    want=$(wc -w <<<"$chunk")
    missing=$((missing + want - got))
  done < <(xargs -n 100 <"$tmp/acked")
  check "node $n reads every acknowledged key" test "$missing" -eq 0
  check "node $n still has every earlier key" test "$(redis-cli -p "${port[$n]}" DBSIZE)" -ge "$((keys_before + acked))"
done
check "writes go on after the failover" test "$(redis-cli -p "${port[$survivor]}" SET after-failover yes)" == OK

# The killed node restarts from its directory and catches up.
start "$killed"
check "the restarted node catches up" caught_up "$killed" "$new_leader"
check "the restarted node follows" test "$(info "$killed" leader_id)" == "$new_leader"
check "the restarted node reads the last write" test "$(redis-cli -p "${port[$killed]}" GET after-failover)" == yes

# Each node's own database: stopped (SIGTERM), then scanned without the server. Identical.
for n in 1 2 3; do kill -TERM "${pid[$n]}"; done
for n in 1 2 3; do wait "${pid[$n]}" || true; pid[$n]=""; done
for n in 1 2 3; do "$bin" scan --db "$tmp/n$n/db" >"$tmp/scan$n" 2>&1; done
check "node 1 and node 2 hold the same data" cmp -s "$tmp/scan1" "$tmp/scan2"
check "node 1 and node 3 hold the same data" cmp -s "$tmp/scan1" "$tmp/scan3"
check "the scans hold the acknowledged keys" bash -c "[ \$(grep -c '^w:' $tmp/scan1) -ge $acked ]"

echo "cluster-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
