#!/bin/bash
# Sustained puts, Shamba with aligned and unaligned outputs alternated (one binary,
# --shamba-no-align-outputs), each beside RocksDB in the same process.
cd /work/scale/sus
for round in 1 2; do
  for mode in align no-align; do
    flag=""; [ $mode = no-align ] && flag=--shamba-no-align-outputs
    if [ $round = 2 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
    echo "$mode-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
    rm -rf d; mkdir d
    ./cmp --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --dir /work/scale/sus/d $flag --json > $mode-$round.json 2> $mode-$round.err
    echo "$mode-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  done
done
rm -rf d
echo done >> runs.log
