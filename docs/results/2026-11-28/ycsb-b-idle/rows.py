#!/usr/bin/env python3
"""Print each run's B rows (1 and 2 client threads) from the shamba-compare outputs named
on the command line: ops/s, client CPU us/op, read p50/p99/p99.9, update p50/p99/p99.9, max."""
import re
import sys

for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"== YCSB, 1000 B records, (\d) client", line)
        if not m:
            continue
        read, update = lines[i + 2].split(), lines[i + 3].split()
        print(f"{path:<22} {m.group(1)}t ops/s {read[2]:>7} cpu {read[3]:>6}  read {read[6]}/{read[7]}/{read[8]}"
              f"  update {update[1]}/{update[2]}/{update[3]}  max {update[4]}")
