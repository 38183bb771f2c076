import re,sys,collections
tids=set(int(x) for x in sys.argv[2].split(','))
ev=[]
for line in open(sys.argv[1]):
    m=re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)',line)
    if m: ev.append((float(m.group(4)),m.group(1).strip(),int(m.group(2)),m.group(5),m.group(6)))
ev.sort()
out={}; woke={}
res=collections.defaultdict(list)
for t,comm,tid,name,tr in ev:
    if name.endswith('sched_switch'):
        pp=int(re.search(r'prev_pid=(\d+)',tr).group(1)); np_=int(re.search(r'next_pid=(\d+)',tr).group(1))
        st=re.search(r'prev_state=(\S+)',tr).group(1); nc=re.search(r'next_comm=(.*?) next_pid',tr).group(1)
        if pp in tids: out[pp]=(t,st,nc)
        if np_ in tids and np_ in out:
            t0,st0,nc0=out.pop(np_); d=t-t0
            w=woke.pop(np_,None)
            res[st0[0]].append((d, nc0, (t-w[0]) if w else None, w[1] if w else None))
    elif name.endswith('sched_wakeup'):
        p=int(re.search(r' pid=(\d+)',tr).group(1))
        if p in tids: woke[p]=(t,comm)
for st,l in res.items():
    big=[x for x in l if x[0]>0.001]
    print(st,'switch-outs',len(l),'off>1ms',len(big),'sum off>1ms %.1f ms'%(sum(x[0] for x in big)*1000))
    c=collections.Counter(re.sub(r'[\d/]+$','',x[1]) for x in big); print('   took the cpu:',c.most_common(8))
    if st=='S':
        lat=[x[2] for x in big if x[2] is not None]
        print('   wake->run latency of those: n=%d, >1ms: %d'%(len(lat),sum(1 for x in lat if x>0.001)), 'wakers',collections.Counter(x[3] for x in big).most_common(5))
