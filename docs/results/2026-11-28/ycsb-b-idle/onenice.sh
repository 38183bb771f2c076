#!/bin/bash
# onenice.sh LABEL BINARY ENGINE [WORKLOADS]: one.sh with the engine's background threads at nice 19
cd /tmp/yt
L=$1; BIN=$2; E=$3; W=${4:-b}
rm -rf /tmp/yt/d-$L; mkdir -p /tmp/yt/d-$L
echo "start $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)" > $L.log
$BIN --only ycsb --ycsb $W --ycsb-records 1000000 --ycsb-ops 200000 --ycsb-fields 10 --engines $E --dir /tmp/yt/d-$L > $L.txt 2> $L.stderr &
P=$!
./bgnice.sh $P > $L.niced &
wait $P
echo "end $(date -u +%H:%M:%S) rc=$? load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $L.log
wait
rm -rf /tmp/yt/d-$L
