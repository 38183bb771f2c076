#!/bin/bash
# prof.sh LABEL BIN: perf record -g of the whole machine over the B 2-thread phase
cd /tmp/yt
L=$1; BIN=$2
./one.sh $L $BIN shamba &
until grep -q "B 1 thread" $L.stderr 2>/dev/null; do sleep 0.02; done
perf record -q -a -g -F 4999 -o $L.prof -- sleep 3 2>/dev/null
wait
