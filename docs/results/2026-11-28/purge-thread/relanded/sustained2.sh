#!/bin/bash
# Sustained puts of the purge thread with turns (cca9629) beside RocksDB, two rounds, the
# engine order reversed in the second.
cd "$(dirname "$0")"
for round in 1 2; do
  if [ $round = 2 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
  echo "turns-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> sustained2.log
  rm -rf d; mkdir d
  ./cmp-turns --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --dir "$PWD/d" --json > s-turns-$round.json 2> s-turns-$round.err
  echo "turns-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> sustained2.log
done
rm -rf d
echo done >> sustained2.log
