#!/bin/bash
# run.sh: old/new sustained rounds, alternating; each run beside RocksDB in the same process
cd /work/scale/sus
for round in 1 2; do
  for b in old new; do
    if [ $b = old ]; then BIN=/tmp/wtail/main-compare; else BIN=/work/scale/cmp-subc; fi
    if [ $round = 2 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
    echo "$b-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
    rm -rf d; mkdir d
    $BIN --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --dir /work/scale/sus/d --json > $b-$round.json 2> $b-$round.err
    echo "$b-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  done
done
rm -rf d
echo done >> runs.log
