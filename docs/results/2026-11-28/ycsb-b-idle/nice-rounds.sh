#!/bin/bash
# Three rounds: each engine with its background threads at the default priority and at
# nice 19, order alternated between rounds.
cd /tmp/yt
B=/work/scale/ytail/cmp-base
for r in 1 2 3; do
  if [ $r = 2 ]; then
    ./onenice.sh n$r-rocksdb-nice $B rocksdb; ./one.sh n$r-rocksdb $B rocksdb
    ./onenice.sh n$r-shamba-nice $B shamba; ./one.sh n$r-shamba $B shamba
  else
    ./one.sh n$r-shamba $B shamba; ./onenice.sh n$r-shamba-nice $B shamba
    ./one.sh n$r-rocksdb $B rocksdb; ./onenice.sh n$r-rocksdb-nice $B rocksdb
  fi
done
echo done > nice-rounds.done
