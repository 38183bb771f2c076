#!/usr/bin/env python3
"""oncpu.py TRACE: CPU ms per thread name over a `perf script` of sched_switch (all CPUs)."""
import collections, re, sys
on = {}; tot = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+).*next_comm=(.*?) next_pid=(\d+)', line)
    if not m:
        continue
    t = float(m.group(4)); cpu = m.group(3)
    if cpu in on:
        name, ts = on[cpu]; tot[name] += t - ts
    on[cpu] = (re.sub(r'[\d/]+$', '', m.group(7)), t)
print(', '.join('%s %.1f' % (k, v * 1000) for k, v in tot.most_common(14)))
