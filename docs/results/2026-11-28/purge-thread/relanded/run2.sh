#!/usr/bin/env bash
# Obsolete files deleted inline (sync, 78edd70, the code main had before cca9629) against the
# purge thread with turns at the pass (turns, cca9629): the same random loads, alternated ABBA.
set -u
cd "$(dirname "$0")"
for round in 1 2; do
  if [ $((round % 2)) = 1 ]; then order="turns sync"; else order="sync turns"; fi
  for b in $order; do
    for v in 32 512; do
      n=5000000; [ $v = 512 ] && n=1500000
      rm -rf db
      echo "== $b v$v round $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      ./shamba-$b bench --db db --num $n --key-size 32 --value-size $v --write-buffer-mb 1 \
        --target-file-mb 1 --level-base-mb 4 --read existing --reads 1000 > r2-$b-v$v-$round.txt 2>&1
      grep -E '^load |stall' r2-$b-v$v-$round.txt | head -3
    done
  done
done
rm -rf db
echo done
