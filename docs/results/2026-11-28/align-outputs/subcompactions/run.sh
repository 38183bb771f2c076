#!/usr/bin/env bash
# One merge thread against two: the same 5M-key random load, alternated.
set -u
cd "$(dirname "$0")"
for round in 1 2; do
  for n in 1 2; do
    rm -rf db
    echo "== subcompactions $n round $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./shamba bench --db db --num 5000000 --key-size 32 --value-size 32 --write-buffer-mb 1 \
      --target-file-mb 1 --level-base-mb 4 --read existing --reads 1000 --max-subcompactions $n > sub$n-$round.txt 2>&1
    grep -E 'load  |tree:|  L[0-2]' sub$n-$round.txt
  done
done
rm -rf db
