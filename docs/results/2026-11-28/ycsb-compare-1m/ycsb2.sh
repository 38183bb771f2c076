#!/bin/bash
# usage: ycsb.sh TAG ENGINE [extra args]; one process per engine, killed if its CPU time
# grows by under 0.2 s per 10 s for 240 s while it is not stopped by a quiet window.
tag=$1; eng=$2; shift 2
cd /work/wt/ycsb-runs
out=ycsb-$tag-$eng
echo "start $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)" > $out.log
nice -n 19 /work/wt/ycsb-bin/shamba-compare-shape --only ycsb --ycsb ${WL:-a,b,c,d,e,f} --ycsb-records 1000000 \
   --ycsb-ops ${OPS:-200000} --ycsb-fields 10 --engines $eng --dir /work/wt/ycsb-data/$tag-$eng "$@" > $out.txt 2> >(while IFS= read -r l; do echo "$(date -u +%H:%M:%S) $l"; done > $out.stderr) &
pid=$!
last=0; still=0
while kill -0 $pid 2>/dev/null; do
  sleep 10
  st=$(cat /proc/$pid/stat 2>/dev/null) || break
  state=$(echo "$st" | awk '{print $3}')
  cpu=$(echo "$st" | awk '{print $14+$15}')
  if [ "$state" = "T" ]; then continue; fi
  if [ $((cpu - last)) -lt 20 ]; then still=$((still+10)); else still=0; fi
  last=$cpu
  if [ $still -ge 240 ]; then
    echo "halted: under 0.2 s of CPU per 10 s in the last $still s at $(date -u +%H:%M:%S); killed" >> $out.log
    kill $pid; break
  fi
done
wait $pid; rc=$?
echo "end $(date -u +%H:%M:%S) rc=$rc load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $out.log
rm -rf /work/wt/ycsb-data/$tag-$eng
