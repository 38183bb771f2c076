#!/usr/bin/env python3
"""off50.py TRACE TIDS: each client thread's times off the CPU longer than 50 us, from a
`perf script` of sched_switch/sched_wakeup: preempted (R) or asleep (S), what took the
CPU at the switch-out, and for sleeps who woke the thread and how long it then waited."""
import collections, re, sys
tids = set(int(x) for x in sys.argv[2].split(','))
ev = []
for line in open(sys.argv[1]):
    m = re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)', line)
    if m:
        ev.append((float(m.group(4)), m.group(1).strip(), int(m.group(2)), m.group(5), m.group(6)))
ev.sort()
out, woke = {}, {}
first = {}; last = {}
res = collections.defaultdict(list)
for t, comm, tid, name, tr in ev:
    if name.endswith('sched_switch'):
        pp = int(re.search(r'prev_pid=(\d+)', tr).group(1)); np_ = int(re.search(r'next_pid=(\d+)', tr).group(1))
        st = re.search(r'prev_state=(\S+)', tr).group(1); nc = re.search(r'next_comm=(.*?) next_pid', tr).group(1)
        if pp in tids:
            out[pp] = (t, st, nc); first.setdefault(pp, t); last[pp] = t
        if np_ in tids and np_ in out:
            t0, st0, nc0 = out.pop(np_); w = woke.pop(np_, None)
            res[st0[0]].append((t - t0, nc0, (t - w[0]) if w else None, w[1] if w else None))
    elif name.endswith('sched_wakeup'):
        p = int(re.search(r' pid=(\d+)', tr).group(1))
        if p in tids:
            woke[p] = (t, comm)
span = sum(last[k] - first[k] for k in first)
print('client thread-seconds traced: %.3f' % span)
for st, l in sorted(res.items()):
    big = [x for x in l if x[0] > 50e-6]
    print(st, 'switch-outs', len(l), 'off>50us', len(big), 'sum %.1f ms' % (sum(x[0] for x in big) * 1000),
          'off>1ms', sum(1 for x in big if x[0] > 1e-3))
    c = collections.Counter(re.sub(r'[\d/]+$', '', x[1]) for x in big)
    print('   took the cpu:', c.most_common(8))
    if st == 'S':
        print('   wakers:', collections.Counter(x[3] for x in big).most_common(6))
        lat = [x[2] for x in big if x[2] is not None]
        print('   wake->run >50us: %d of %d' % (sum(1 for x in lat if x > 50e-6), len(lat)))
    h = collections.Counter(min(int(x[0] * 1e6 // 100) * 100, 2000) for x in big)
    print('   lengths (us bucket: n):', sorted(h.items()))
