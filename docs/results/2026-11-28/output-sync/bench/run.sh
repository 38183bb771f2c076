#!/usr/bin/env bash
# The debt summed per write (old, 1d4d589) against once per version plus fewer
# allocations per put (new): the same random loads, alternated ABBA.
set -u
cd "$(dirname "$0")"
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="new old"; else order="old new"; fi
  for b in $order; do
    for v in 32 512; do
      n=5000000; [ $v = 512 ] && n=1500000
      rm -rf db
      echo "== $b v$v round $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
      ./shamba-$b bench --db db --num $n --key-size 32 --value-size $v --write-buffer-mb 1 \
        --target-file-mb 1 --level-base-mb 4 --read existing --reads 1000 > $b-v$v-$round.txt 2>&1
      grep -E '^load |stall' $b-v$v-$round.txt | head -3
    done
  done
done
rm -rf db
echo done
