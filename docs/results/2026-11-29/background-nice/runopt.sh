#!/bin/bash
# Sustained puts beside RocksDB with --background-low-priority (Shamba background_nice 19,
# RocksDB's two pools lowered in process). Usage: runopt.sh BIN TAG ROUNDS
cd "$(dirname "$0")"
BIN=$1; TAG=$2; ROUNDS=${3:-2}
for round in $(seq 1 $ROUNDS); do
  if [ $((round % 2)) = 0 ]; then E=rocksdb,shamba; else E=shamba,rocksdb; fi
  echo "$TAG-$round start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  rm -rf d; mkdir d
  ./$BIN --only sustained --engines $E --sustain-secs 60 --sustain-values 32,512 --background-low-priority --dir "$PWD/d" --json > s-$TAG-$round.json 2> s-$TAG-$round.err
  echo "$TAG-$round end $(date -u +%H:%M:%S) rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
done
rm -rf d
