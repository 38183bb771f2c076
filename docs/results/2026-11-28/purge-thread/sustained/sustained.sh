#!/bin/bash
# Sustained puts: obsolete files deleted inline (sync, 78edd70) against on a purge thread
# (purge), alternated ABBA, each beside RocksDB (the engine order alternated too).
cd "$(dirname "$0")"
for round in 1 2; do
  if [ $round = 1 ]; then order="purge sync"; else order="sync purge"; fi
  for build in $order; do
    if [ $round = 2 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
    echo "$build-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> sustained.log
    rm -rf d; mkdir d
    ./cmp-$build --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --dir "$PWD/d" --json > s-$build-$round.json 2> s-$build-$round.err
    echo "$build-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> sustained.log
  done
done
rm -rf d
echo done >> sustained.log
