#!/bin/bash
# bgnice.sh PID: renice every background thread of PID (Shamba's shamba-flush,
# shamba-compact, shamba-purge and the threads they start; RocksDB's rocksdb:* pool threads)
# to nice 19 as soon as it appears, until PID exits. Threads a reniced thread starts
# inherit its nice value.
P=$1
declare -A done
while [ -d /proc/$P ]; do
  for t in /proc/$P/task/*; do
    tid=${t##*/}
    [ -n "${done[$tid]}" ] && continue
    c=$(cat $t/comm 2>/dev/null) || continue
    case "$c" in
      shamba-*|rocksdb:*) renice -n 19 -p $tid >/dev/null 2>&1 && done[$tid]=1 && echo "$(date -u +%H:%M:%S.%N) $tid $c";;
    esac
  done
  sleep 0.05
done
