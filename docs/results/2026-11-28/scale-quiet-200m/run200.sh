#!/bin/bash
# The size sweep's 200M point, Shamba then RocksDB, each its own process, nothing else of
# ours running; the same build and flags as the 2M-100M points (scale-quiet-100m.md).
cd "$(dirname "$0")"
for p in 200M-shamba 200M-rocksdb; do
  n=${p%%-*}; e=${p#*-}
  echo "$n-$e start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  rm -rf d; mkdir d
  ./cmp --sizes $n --engines $e --key-size 16 --value-size 32 --reads 200000 --dir "$PWD/d" --json > sizes-$n-$e.json 2> sizes-$n-$e.stderr
  echo "$n-$e end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
done
rm -rf d
echo done >> runs.log
