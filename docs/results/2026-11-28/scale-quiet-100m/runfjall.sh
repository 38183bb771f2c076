#!/bin/bash
# fjall's 100M point, in its own process, nothing else of ours running.
cd "$(dirname "$0")"
n=100M; e=fjall
echo "$n-$e start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
rm -rf d; mkdir d
./cmp --sizes $n --engines $e --key-size 16 --value-size 32 --reads 200000 --dir "$PWD/d" --json > sizes-$n-$e.json 2> sizes-$n-$e.stderr
echo "$n-$e end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
rm -rf d
echo done >> runs.log
