#!/usr/bin/env bash
# Requests/s and p99 latency of SET, GET and MSET (redis-benchmark, 50 clients, -n N,
# -P 1 and -P 16, keys drawn from 100,000) against `shamba serve --sync everysec` and
# redis-server (appendonly yes, appendfsync everysec), one after the other, ROUNDS times
# (the machine's load changes: the rows alternate, each with `uptime`'s 1-minute load),
# then Shamba's figures over Redis's of the same round. Not part of CI. Prints Markdown.
#
#   scripts/redis-bench.sh [SHAMBA_BIN] [N]    (default: target/release/shamba, 100000)
#
# Environment:
#   PORT=7401       the port both servers listen on, in turn
#   ROUNDS=2        Shamba-then-Redis rounds
#   ALL_MODES=1     also `--sync never` and redis-server without persistence
#   LARGE_GB=2      instead: the larger-than-memory run. Shamba alone (Redis keeps its data
#                   in memory), GET and SET of 4 KiB values at -P 1 and -P 16 over keys
#                   drawn from a small set (in memory) and then from LARGE_GB GiB of keys
#                   loaded with random values, the server in a memory cgroup of
#                   LARGE_MEM_MB MiB (256; page cache included, so the files cannot stay
#                   in memory) with a CACHE_MB MiB block cache (64).
#
# redis-server: the one on PATH, else Debian's redis-check-rdb (the same binary, which acts
# as the server when called redis-server), else apt-get installs redis-tools (the client
# package: no system service is started). Each server runs with its own directory and port
# and is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/shamba}
n=${2:-100000}
port=${PORT:-7401}
rounds=${ROUNDS:-2}
[ -x "$bin" ] || cargo build -q --release -p shamba-cli
if ! command -v redis-benchmark >/dev/null || ! { command -v redis-server || command -v redis-check-rdb; } >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-tools >/dev/null
fi
tmp=$(mktemp -d)
redis=$(command -v redis-server || true)
if [ -z "$redis" ]; then ln -s "$(command -v redis-check-rdb)" "$tmp/redis-server"; redis=$tmp/redis-server; fi
pid=""
cgroup=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$cgroup" ] && rmdir "$cgroup" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_port() { for _ in $(seq 300); do redis-cli -p "$port" PING >/dev/null 2>&1 && return; sleep 0.1; done; echo "no server on $port" >&2; exit 1; }
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }
load() { cut -d' ' -f1 /proc/loadavg; }

# bench NAME TESTS P [ARGS...]: one redis-benchmark run, its CSV rows kept as
# "NAME TEST P rps p99" lines in $tmp/results.
bench() {
  local name=$1 tests=$2 p=$3; shift 3
  redis-benchmark -p "$port" -t "$tests" -n "$n" -P "$p" --csv "$@" 2>/dev/null | tr -d '\r' |
    awk -F, -v name="$name" -v p="$p" 'NR > 1 { gsub(/"/, ""); split($1, t, " "); print name, t[1], p, $2, $7 }' \
      >>"$tmp/results"
}

# row NAME TESTS ARGS...: the figures of NAME as a table row, "requests/s (p99 ms)" per cell.
cells() {
  local name=$1 tests=$2 row=""
  for p in 1 16; do
    for t in ${tests//,/ }; do
      row+=" $(awk -v n="$name" -v t="${t^^}" -v p="$p" '$1 == n && $2 == t && $3 == p { printf "%d (%s)", $4, $5 }' "$tmp/results") |"
    done
  done
  echo "$row"
}

# ratio A B TESTS: A's requests/s over B's, and the two p99s, per cell.
ratio() {
  local a=$1 b=$2 tests=$3 row=""
  for p in 1 16; do
    for t in ${tests//,/ }; do
      row+=" $(awk -v a="$a" -v b="$b" -v t="${t^^}" -v p="$p" '
        $2 == t && $3 == p && $1 == a { ra = $4; pa = $5 }
        $2 == t && $3 == p && $1 == b { rb = $4; pb = $5 }
        END { if (rb > 0) printf "%.2fx (p99 %s vs %s)", ra / rb, pa, pb }' "$tmp/results") |"
    done
  done
  echo "$row"
}

header() {
  local tests=$1 h="| server | load |" s="|---|---|"
  for p in 1 16; do for t in ${tests//,/ }; do h+=" ${t^^} -P$p |"; s+="---|"; done; done
  echo "$h"; echo "$s"
}

shamba() { # shamba NAME SYNC [serve flags...]
  local name=$1 sync=$2; shift 2
  rm -rf "$tmp/db"
  "$bin" serve --db "$tmp/db" --bind 127.0.0.1:"$port" --sync "$sync" "$@" >/dev/null 2>&1 & pid=$!
  wait_port
}

redis_server() { # redis_server aof|none
  rm -rf "$tmp/redis"; mkdir -p "$tmp/redis"
  local persist=(--appendonly no --save "")
  [ "$1" == aof ] && persist=(--appendonly yes --appendfsync everysec --save "")
  "$redis" --port "$port" --dir "$tmp/redis" "${persist[@]}" --daemonize no >/dev/null 2>&1 & pid=$!
  wait_port
}

if [ -z "${LARGE_GB:-}" ]; then
  tests=set,get,mset
  echo "Requests/s (p99 ms), 50 clients, $n requests per test; load: 1-minute load average before the row ($(nproc) cores)."
  echo
  header $tests
  for r in $(seq "$rounds"); do
    for server in shamba redis; do
      l=$(load)
      if [ $server == shamba ]; then name="shamba-everysec-$r"; shamba "$name" everysec; label="shamba serve --sync everysec"
      else name="redis-aof-$r"; redis_server aof; label="redis-server appendonly everysec"; fi
      started=$SECONDS
      for p in 1 16; do bench "$name" $tests $p -r 100000; done
      [ $server == shamba ] && redis-cli -p "$port" INFO 2>/dev/null | tr -d '\r' |
        awk -F: -v r="$r" -v s=$((SECONDS - started)) '$1 ~ /^(write_ops|write_groups|wal_syncs)$/ { v[$1] = $2 }
          END { printf "Shamba, round %s: %d keys written in %d WAL records (write groups), %d WAL syncs in %d s\n", r, v["write_ops"], v["write_groups"], v["wal_syncs"], s }' >>"$tmp/wal"
      stop
      echo "| $label (round $r) | $l |$(cells "$name" $tests)"
    done
  done
  if [ -n "${ALL_MODES:-}" ]; then
    l=$(load); shamba never never; for p in 1 16; do bench never $tests $p -r 100000; done; stop
    echo "| shamba serve --sync never | $l |$(cells never $tests)"
    l=$(load); redis_server none; for p in 1 16; do bench none $tests $p -r 100000; done; stop
    echo "| redis-server no persistence | $l |$(cells none $tests)"
  fi
  for r in $(seq "$rounds"); do
    echo "| Shamba / Redis, round $r | |$(ratio "shamba-everysec-$r" "redis-aof-$r" $tests)"
  done
  echo
  cat "$tmp/wal"
  exit 0
fi

# The larger-than-memory run.
tests=get,set
mem_mb=${LARGE_MEM_MB:-256}
cache_mb=${CACHE_MB:-64}
value=4096
keys=$((LARGE_GB * (1 << 30) / value))
small=10000
echo "Shamba alone, GET and SET of $value-byte values, requests/s (p99 ms), 50 clients, $n requests per test;"
echo "block cache $cache_mb MiB; large: $keys keys ($LARGE_GB GiB) loaded, the server's memory (page cache included) limited to $mem_mb MiB."
echo
header $tests
cg_root=/sys/fs/cgroup/memory
if [ -w "$cg_root" ]; then
  cgroup=$cg_root/shamba-bench-$$
  mkdir "$cgroup"
  echo $((mem_mb << 20)) >"$cgroup/memory.limit_in_bytes"
else
  echo "(no writable memory cgroup at $cg_root: the large run is not memory-limited, only the block cache is small)" >&2
fi
for set in small large; do
  rm -rf "$tmp/db"
  l=$(load)
  if [ $set == large ] && [ -n "$cgroup" ]; then
    sh -c "echo \$\$ > $cgroup/cgroup.procs; exec $bin serve --db $tmp/db --bind 127.0.0.1:$port --sync everysec --cache-mb $cache_mb" >/dev/null 2>&1 & pid=$!
  else
    "$bin" serve --db "$tmp/db" --bind 127.0.0.1:"$port" --sync everysec --cache-mb "$cache_mb" >/dev/null 2>&1 & pid=$!
  fi
  wait_port
  count=$small; [ $set == large ] && count=$keys
  # Random (incompressible) values under redis-benchmark's key names, pipelined.
  python3 - "$port" "$count" "$value" <<'EOF'
import os, socket, sys
port, count, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
batch, sent = 256, 0
while sent < count:
    k = min(batch, count - sent)
    out = bytearray()
    for i in range(sent, sent + k):
        key = b"key:%012d" % i
        out += b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, size, os.urandom(size))
    s.sendall(out)
    got = b""
    while got.count(b"\r\n") < k:
        got += s.recv(1 << 16)
    sent += k
EOF
  name="$set"
  for p in 1 16; do bench "$name" $tests $p -r "$count" -d $value; done
  stop
  echo "| shamba serve, $set keys ($count) | $l |$(cells "$name" $tests)"
done
echo "| large / small | |$(ratio large small $tests)"
