#!/bin/bash
# Sustained puts: the build that sums the compaction debt on every write (old, 3c4e942)
# against the build under test (new: the debt once per version; in sustained/ also the
# sync thread, 1ef58b0), alternated, each beside RocksDB. Rounds 3 and 4 (sustained/) ran
# the same loop with `for round in 3 4` and RocksDB first in round 4.
cd /work/scale/debt
for round in 1 2; do
  for build in new old; do
    if [ $round = 2 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
    echo "$build-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
    rm -rf d; mkdir d
    ./cmp-$build --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --dir /work/scale/debt/d --json > $build-$round.json 2> $build-$round.err
    echo "$build-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  done
done
rm -rf d
echo done >> runs.log
