#!/bin/bash
# Shamba alone, sustained 32 B and 512 B: subcompaction and output-sync threads at nice 19
# (SHAMBA_SIDE_NICE, a timer build) against the same build without, alternated ABBA.
cd "$(dirname "$0")"
for tag in side0-1 side19-1 side19-2 side0-2; do
  rm -rf d; mkdir d
  case $tag in side19*) export SHAMBA_SIDE_NICE=19;; *) unset SHAMBA_SIDE_NICE;; esac
  echo "$tag start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  ./cmp-side --only sustained --engines shamba --sustain-secs 60 --sustain-values 32,512 --dir "$PWD/d" --json > $tag.json 2> $tag.err
  echo "$tag end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
done
rm -rf d
