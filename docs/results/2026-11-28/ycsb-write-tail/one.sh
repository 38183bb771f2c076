#!/bin/bash
# one.sh LABEL BINARY ENGINE
cd /tmp/wtail/m
L=$1; BIN=$2; E=$3
rm -rf /tmp/wtail/m/d-$L; mkdir -p /tmp/wtail/m/d-$L
echo "start $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)" > $L.log
( while true; do echo "$(date -u +%H:%M:%S) $(grep procs_running /proc/stat) $(cut -d' ' -f1 /proc/loadavg)"; sleep 1; done ) > $L.runq &
S=$!
nice -n 19 $BIN --only ycsb --ycsb b,a --ycsb-records 1000000 --ycsb-ops 200000 --ycsb-fields 10 --engines $E --dir /tmp/wtail/m/d-$L > $L.txt 2> $L.stderr
echo "end $(date -u +%H:%M:%S) rc=$? load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $L.log
kill $S
rm -rf /tmp/wtail/m/d-$L
