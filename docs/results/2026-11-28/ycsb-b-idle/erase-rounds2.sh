#!/bin/bash
# The block cache scanned once per obsolete-file pass (erase) against once per deleted
# table, twice (base); B only, three rounds ABBA-alternated, then a scheduler trace of each.
cd /tmp/yt
A=/work/scale/ytail/cmp-head; E=/work/scale/ytail/cmp-erase2
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then
    ./one.sh f$r-head $A shamba; ./one.sh f$r-erase $E shamba
  else
    ./one.sh f$r-erase $E shamba; ./one.sh f$r-head $A shamba
  fi
done
echo done > erase-rounds2.done
