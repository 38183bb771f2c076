#!/bin/bash
# The size sweep's 2M and 20M points, Shamba (this build) and RocksDB, each engine and size
# in its own process, on a machine with nothing else of ours running.
cd "$(dirname "$0")"
for n in 2M 20M; do
  if [ $n = 2M ]; then order="shamba rocksdb"; else order="rocksdb shamba"; fi
  for e in $order; do
    echo "$n-$e start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
    rm -rf d; mkdir d
    ./cmp --sizes $n --engines $e --key-size 16 --value-size 32 --reads 200000 --dir "$PWD/d" --json > sizes-$n-$e.json 2> sizes-$n-$e.stderr
    echo "$n-$e end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  done
done
rm -rf d
echo done >> runs.log
