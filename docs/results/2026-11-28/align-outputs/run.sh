#!/usr/bin/env bash
# Output alignment A/B in one binary: the same 5M-key random load, alternated.
set -u
cd "$(dirname "$0")"
for round in 1 2; do
  for mode in align no-align; do
    flag=""; [ "$mode" = no-align ] && flag="--no-align-outputs"
    rm -rf db-$mode
    echo "== $mode $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    ./shamba bench --db db-$mode --num 5000000 --key-size 32 --value-size 32 --write-buffer-mb 1 \
      --target-file-mb 1 --level-base-mb 4 --read existing --reads 1000 $flag > $mode-$round.txt 2>&1
    grep -E 'load|tree:|  L[0-9]' $mode-$round.txt
  done
done
rm -rf db-align db-no-align
