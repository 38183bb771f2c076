#!/bin/bash
# The size sweep's 100M point (Shamba, then RocksDB), then fjall at 2M and 20M, each engine
# and size in its own process, nothing else of ours running. fjall at 100M follows if its
# 20M point says it fits.
cd "$(dirname "$0")"
for p in 100M-shamba 100M-rocksdb 2M-fjall 20M-fjall; do
  n=${p%%-*}; e=${p#*-}
  echo "$n-$e start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  rm -rf d; mkdir d
  ./cmp --sizes $n --engines $e --key-size 16 --value-size 32 --reads 200000 --dir "$PWD/d" --json > sizes-$n-$e.json 2> sizes-$n-$e.stderr
  echo "$n-$e end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
done
rm -rf d
echo done >> runs.log
