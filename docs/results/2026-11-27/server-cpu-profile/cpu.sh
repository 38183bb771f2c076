#!/usr/bin/env bash
# cpu.sh BIN LABEL [PERF]: server CPU us/request per test, from /proc/PID/stat around each run.
bin=$1; label=$2; perf=${3:-}
port=7413; n=${N:-300000}
d=$(mktemp -d /tmp/ssd.XXXX)
$bin serve --db $d/db --bind 127.0.0.1:$port --sync everysec >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do redis-cli -p $port PING >/dev/null 2>&1 && break; sleep 0.2; done
tk=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' /proc/$pid/stat; }
for spec in "set 1" "get 1" "mset 1" "set 16" "get 16" "mset 16"; do
  set -- $spec
  nn=$n; [ "$1" = mset ] && nn=$((n/4)); [ "$2" = 1 ] && nn=$((nn/3))
  if [ -n "$perf" ] && [ "$2" = 16 ]; then
    perf record -F 999 -g -p $pid -o perf-$label-$1.data -- sleep 1000 >/dev/null 2>&1 & ppid=$!
    sleep 0.5
  fi
  a=$(cpu); l=$(cut -d' ' -f1 /proc/loadavg)
  rps=$(redis-benchmark -p $port -t $1 -n $nn -P $2 -r 100000 --csv 2>/dev/null | tr -d '\r"' | awk -F, 'NR>1{print $2}')
  b=$(cpu)
  [ -n "$perf" ] && [ "$2" = 16 ] && { kill -INT $ppid; wait $ppid; }
  echo "$label $1 P$2 load=$l rps=$rps cpu_us_per_req=$(echo "($b-$a)*1000000/$tk/$nn" | bc -l | cut -c1-6)"
done
kill -TERM $pid; wait $pid; rm -rf $d
