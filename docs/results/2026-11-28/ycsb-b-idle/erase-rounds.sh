#!/bin/bash
# The block cache scanned once per obsolete-file pass (erase) against once per deleted
# table, twice (base); B only, three rounds ABBA-alternated, then a scheduler trace of each.
cd /tmp/yt
A=/work/scale/ytail/cmp-base; E=/work/scale/ytail/cmp-erase
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then
    ./one.sh e$r-base $A shamba; ./one.sh e$r-erase $E shamba
  else
    ./one.sh e$r-erase $E shamba; ./one.sh e$r-base $A shamba
  fi
done
echo done > erase-rounds.done
