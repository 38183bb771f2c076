#!/bin/bash
# Flushes that sync the retired logs (new, 1ef58b0) against flushes that skip that sync
# with one keyspace (skip): Shamba alone, 32 B values, alternated ABBA.
cd /work/scale/debt/skip
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="skip new"; else order="new skip"; fi
  for build in $order; do
    echo "$build-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
    rm -rf d; mkdir d
    ../cmp-$build --only sustained --engines shamba --sustain-secs 60 --sustain-values 32 --dir /work/scale/debt/skip/d --json > $build-$round.json 2> $build-$round.err
    echo "$build-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  done
done
rm -rf d
echo done >> runs.log
