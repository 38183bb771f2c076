#!/bin/bash
# traced.sh LABEL ENGINE: one B run with a system-wide scheduler trace over its 2-thread phase
cd /tmp/yt
L=$1; E=$2
./one.sh $L ${BIN:-/work/scale/ytail/cmp-base} $E &
until grep -q "B 1 thread" $L.stderr 2>/dev/null; do sleep 0.02; done
perf record -q -a -k CLOCK_MONOTONIC -e sched:sched_switch -e sched:sched_wakeup -o $L.perf -- sleep 4 2>/dev/null
wait
perf script -i $L.perf > $L.sched 2>/dev/null
