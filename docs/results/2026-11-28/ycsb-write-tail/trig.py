import re,sys,collections
tids=set(int(x) for x in sys.argv[2].split(','))
ev=[]
for line in open(sys.argv[1]):
    m=re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)',line)
    if m: ev.append((float(m.group(4)),m.group(1).strip(),int(m.group(2)),int(m.group(3)),m.group(5),m.group(6)))
ev.sort()
lastwake={}  # tid -> (t, wakee comm)
out={}
c=collections.Counter(); n=0
for t,comm,tid,cpu,name,tr in ev:
    if name.endswith('sched_wakeup') and tid in tids:
        lastwake[tid]=(t,re.search(r'comm=(.*?) pid',tr).group(1))
    if name.endswith('sched_switch'):
        pp=int(re.search(r'prev_pid=(\d+)',tr).group(1)); np_=int(re.search(r'next_pid=(\d+)',tr).group(1))
        st=re.search(r'prev_state=(\S+)',tr).group(1)
        if pp in tids and st.startswith('R'):
            out[pp]=(t, lastwake.get(pp))
        if np_ in tids and np_ in out:
            t0,w=out.pop(np_)
            if t-t0>0.001:
                n+=1
                if w and t0-w[0]<0.0001: c['self-woke '+re.sub(r'[\d/]+$','',w[1])+' just before']+=1
                else: c['no own wakeup just before']+=1
print(n); print(c.most_common())
