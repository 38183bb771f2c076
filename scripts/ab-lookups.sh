#!/usr/bin/env bash
# Alternate two `shamba` binaries (old, new) on one database, one and two reader threads:
# the side-by-side lookup comparison of a change (the machine drifts 10-30% run to run, so
# only alternated pairs compare). Build the database once with either binary:
#   shamba bench --db /tmp/ab-db --num 2000000 --reads 1000
# then: scripts/ab-lookups.sh OLD_BIN NEW_BIN [DB] [KIND missing|existing] [ROUNDS] [READS]
# Prints one line per run: kind, round, threads, binary, ops/s, load average.
set -euo pipefail
old=$1; new=$2; db=${3:-/tmp/ab-db}; kind=${4:-missing}; rounds=${5:-4}; reads=${6:-3000000}
num=${NUM:-2000000}  # the key count the database was loaded with
for r in $(seq 1 "$rounds"); do
  for t in 1 2; do
    for b in "$old" "$new"; do
      ops=$("$b" bench --db "$db" --num "$num" --no-load --reads "$reads" --read "$kind" --threads "$t" 2>&1 \
        | awk -v k="read-$kind" '$1 == k {print $4}')
      echo "$kind r$r t$t $(basename "$b") $ops $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
