#!/bin/bash
cd /work/wt/ycsb-runs
tag=$1; shift
for e in "$@"; do ./ycsb.sh $tag $e; done
